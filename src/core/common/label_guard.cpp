// The label guard (see label_guard.hpp).
#include "common/label_guard.hpp"

#include <cmath>

namespace sf::guard {

namespace {

/// The margin ``f`` of a state (at least GUARD_WIDTHS).
inline double margin_of(double stored) { return stored > GUARD_WIDTHS ? stored : GUARD_WIDTHS; }

}  // namespace

double guard_peek(Vec<const double> state, double y, double w) {
  if (!(w > 0.0) || !std::isfinite(y)) return y;
  double n = state[G_COUNT];
  double lo = state[G_LO];
  double hi = state[G_HI];
  if (!(n >= static_cast<double>(GUARD_WARMUP) && hi > lo)) return y;  // (NaN: not armed)
  double m = margin_of(state[G_MARGIN]) * (hi - lo);  // (inf for a huge range: no flag)
  if (y < lo - m || y > hi + m) return y < lo ? lo : hi;
  return y;
}

double guard_label(Vec<double> state, double y, double w) {
  if (!(w > 0.0) || !std::isfinite(y)) return y;  // (not the guard's)
  double learnt = guard_peek(Vec<const double>(state.data, state.size()), y, w);
  double n = state[G_COUNT];
  state[G_COUNT] = n + 1.0;
  if (!(n > 0.0)) {  // the first label
    state[G_LO] = y;
    state[G_HI] = y;
    return y;
  }
  double f = margin_of(state[G_MARGIN]);
  if (flagged(learnt, y)) {
    state[G_MARGIN] = f < GUARD_MAX_MARGIN * 0.5 ? f * 2.0 : GUARD_MAX_MARGIN;
    state[G_FLAGGED] += 1.0;
    return learnt;
  }
  if (y < state[G_LO]) state[G_LO] = y;
  if (y > state[G_HI]) state[G_HI] = y;
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
