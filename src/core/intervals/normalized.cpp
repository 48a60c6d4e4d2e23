// NormalizedConformal's pass (see normalized.hpp).
#include "intervals/normalized.hpp"

#include <limits>

#include "common/numeric.hpp"
#include "intervals/arith.hpp"
#include "intervals/scores.hpp"

namespace sf::intervals {

namespace {
inline constexpr double INF = std::numeric_limits<double>::infinity();
}  // namespace

double scale_of(double spread, double mean, double offset, bool normalize) {
  if (!normalize || !(mean > 0.0)) return 1.0;
  return py_div(spread, mean) + offset;
}

double weighted_half_width(Vec<const double> ss, Vec<const i64> order, i64 size, i64 head,
                           i64 cap, double rho, double alpha) {
  if (size == 0) return INF;
  double tot = 1.0 + py_div(1.0 - numba_ipow(rho, size), 1.0 - rho);
  double need = (1.0 - alpha) * tot - 1e-12;
  double c = 0.0;
  for (i64 k = 0; k < size; ++k) {
    i64 age = pymod(head - 1 - order[k], cap);
    c += numba_ipow(rho, age);
    if (c >= need) return ss[k];
  }
  return size >= cap ? ss[size - 1] : INF;
}

double score_rank(Vec<const double> ss, i64 size, double v) {
  i64 lo = searchsorted_left(ss, size, v);
  i64 hi = searchsorted_right(ss, size, v);
  return py_div(0.5 * static_cast<double>(lo + hi) + 0.5, static_cast<double>(size) + 1.0);
}

i64 normalized_pass(i64 size, Vec<i64> ring, Vec<double> score, Vec<i64> order, Vec<i64> pos,
                    Vec<double> ss, Vec<double> cspread, Vec<double> level, i64 span,
                    Vec<const double> yhat, Vec<const double> spread, Vec<const double> y,
                    bool learn, bool normalize, double offset, Vec<const double> alphas,
                    Mat<double> half, Vec<double> guard, Vec<const i8> flagged) {
  i64 c = ring[1];
  i64 A = alphas.size();
  double tot = 0.0;
  for (i64 k = 0; k < size; ++k) tot += cspread[order[k]];
  double lev = level[0];
  double cnt = level[1];
  for (i64 i = 0; i < y.size(); ++i) {
    double mean = size > 0 ? py_div(tot, static_cast<double>(size)) : 0.0;
    double g = scale_of(spread[i], mean, offset, normalize);
    double sc = span > 0 ? g * lev : g;
    bool alarm = guard[0] > 0.0 && guard[1] > GUARD_H;
    for (i64 a = 0; a < A; ++a) {
      double q = sorted_half_width(ss, size, alphas[a]);
      if (alarm)
        q = py_max(q, weighted_half_width(const_view(ss), const_view(order), size, ring[0], c,
                                          GUARD_RHO, alphas[a]));
      half(i, a) = std::isfinite(q) ? q * sc : q;
    }
    if (!learn) continue;
    double r = std::fabs(y[i] - yhat[i]);
    if (span > 0 && cnt < static_cast<double>(LEVEL_WARMUP)) {  // a young level: it includes
      double w = py_min(cnt, static_cast<double>(span));        // the row's residual
      sc = py_div(g * (lev * w + r), w + 1.0);
    }
    double v;
    if (sc > 0.0) {
      v = py_div(r, sc);
    } else {
      v = r == 0.0 ? 0.0 : INF;
    }
    if (guard[0] > 0.0 && size >= GUARD_MIN)
      guard[1] = py_max(0.0, guard[1] + score_rank(const_view(ss), size, v) - 0.5 - GUARD_K);
    i64 s = ring[0];
    ring[0] = pymod(s + 1, c);
    if (pos[s] >= 0) {
      tot -= cspread[s];
      score[s] = v;
      ss_update(order, pos, ss, size, v, s);
    } else {
      score[s] = v;
      ss_insert(order, pos, ss, size, v, s);
      size += 1;
    }
    cspread[s] = spread[i];
    tot += spread[i];
    if (span > 0 && !(flagged.size() > 0 && flagged[i] != 0)) {
      cnt += 1.0;
      lev += py_div(r - lev, py_min(cnt, static_cast<double>(span)));
    }
  }
  level[0] = lev;
  level[1] = cnt;
  return size;
}

void tree_spread(Mat<const double> P, Vec<double> out) {
  i64 T = P.rows(), n = P.cols();
  for (i64 i = 0; i < n; ++i) {
    double m = 0.0;
    for (i64 t = 0; t < T; ++t) m += P(t, i);
    m = py_div(m, static_cast<double>(T));
    double v = 0.0;
    for (i64 t = 0; t < T; ++t) {
      double d = P(t, i) - m;
      v += d * d;
    }
    out[i] = std::sqrt(py_div(v, static_cast<double>(T)));
  }
}

double tree_mean(Vec<const double> P) {
  double s = 0.0;
  for (i64 t = 0; t < P.size(); ++t) s += P[t];
  return py_div(s, static_cast<double>(P.size()));
}

}  // namespace sf::intervals
