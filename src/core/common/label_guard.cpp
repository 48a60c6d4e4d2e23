// The label guard (see label_guard.hpp).
#include "common/label_guard.hpp"

#include <cmath>

namespace sf::guard {

double guard_label(Vec<double> state, double y, double w) {
  if (!(w > 0.0) || !std::isfinite(y)) return y;
  double n = state[G_COUNT];
  double lo = state[G_LO];
  double hi = state[G_HI];
  state[G_COUNT] = n + 1.0;
  if (!(n > 0.0)) {  // the first label
    state[G_LO] = y;
    state[G_HI] = y;
    return y;
  }
  double f = state[G_MARGIN] > GUARD_WIDTHS ? state[G_MARGIN] : GUARD_WIDTHS;
  if (n >= static_cast<double>(GUARD_WARMUP) && hi > lo) {
    double m = f * (hi - lo);  // (inf for a huge range: nothing is flagged)
    if (y < lo - m || y > hi + m) {
      state[G_MARGIN] = f < GUARD_MAX_MARGIN * 0.5 ? f * 2.0 : GUARD_MAX_MARGIN;
      state[G_FLAGGED] += 1.0;
      return y < lo ? lo : hi;
    }
  }
  if (y < lo) state[G_LO] = y;
  if (y > hi) state[G_HI] = y;
  double relaxed = f * (1.0 - 1.0 / GUARD_RELAX);
  state[G_MARGIN] = relaxed > GUARD_WIDTHS ? relaxed : GUARD_WIDTHS;
  return y;
}

i64 guard_labels(Vec<double> state, Vec<const double> y, Vec<const double> w, Vec<double> y_out,
                 Vec<i8> flags) {
  i64 k = 0;
  for (i64 i = 0; i < y.size(); ++i) {
    double v = y[i];
    double out = guard_label(state, v, w[i]);
    bool f = flagged(out, v);
    y_out[i] = out;
    flags[i] = f ? 1 : 0;
    k += f ? 1 : 0;
  }
  return k;
}

}  // namespace sf::guard
