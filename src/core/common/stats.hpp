// Weighted running mean and variance that can be updated, merged and subtracted: the
// statistic ``(w, hi, lo, m2)`` (total weight, the mean as the unevaluated sum ``hi + lo``, the
// weighted sum of squared deviations; streamforest/stats.py's RunningStats is its Python face,
// and its docstring says why the mean is compensated).
#pragma once

#include "views.hpp"

namespace sf::stats {

struct Stat {
  double w = 0.0, hi = 0.0, lo = 0.0, m2 = 0.0;
};

struct Pair {
  double hi, lo;
};

/// ``(hi + lo) + inc`` as a renormalised pair, exact up to the rounding of ``inc`` itself.
inline Pair add_to_mean(double hi, double lo, double inc) {
  double s = hi + inc;
  double bb = s - hi;
  double err = (hi - (s - bb)) + (inc - bb);  // two-sum: s + err == hi + inc exactly
  lo = lo + err;
  double t = s + lo;
  lo = lo - (t - s);
  return {t, lo};
}

/// Add value ``x`` with weight ``wx`` (> 0) to the statistic.
inline Stat welford_update(double w, double hi, double lo, double m2, double x, double wx) {
  double w_new = w + wx;
  double d = (x - hi) - lo;
  Pair p = add_to_mean(hi, lo, d * (wx / w_new));
  double m2_new = m2 + wx * d * ((x - p.hi) - p.lo);
  return {w_new, p.hi, p.lo, m2_new};
}

/// Statistic of the union of two disjoint samples A and B.
inline Stat chan_merge(double wa, double ha, double la, double m2a, double wb, double hb,
                       double lb, double m2b) {
  if (wb <= 0.0) return {wa, ha, la, m2a};
  if (wa <= 0.0) return {wb, hb, lb, m2b};
  double w = wa + wb;
  double delta = (hb - ha) + (lb - la);
  Pair p = add_to_mean(ha, la, delta * (wb / w));
  double m2 = m2a + m2b + delta * delta * (wa * wb / w);
  return {w, p.hi, p.lo, m2};
}

/// Statistic of A, given those of A u B and of its part B (a remaining weight at or below
/// ``1e-12 * wab`` is rounding residue: the empty statistic; a negative m2 is clamped to 0).
inline Stat chan_subtract(double wab, double hab, double lab, double m2ab, double wb,
                          double hb, double lb, double m2b) {
  double wa = wab - wb;
  if (wa <= 1e-12 * wab || wa <= 0.0) return {0.0, 0.0, 0.0, 0.0};
  if (wb <= 0.0) return {wab, hab, lab, m2ab};
  double dab = (hab - hb) + (lab - lb);
  Pair p = add_to_mean(hab, lab, dab * (wb / wa));
  double delta = (hb - p.hi) + (lb - p.lo);
  double m2a = m2ab - m2b - delta * delta * (wa * wb / wab);
  if (m2a < 0.0) m2a = 0.0;
  return {wa, p.hi, p.lo, m2a};
}

/// Statistic of ``values`` with ``weights`` (empty: unit weights); weights <= 0 skipped.
inline Stat stats_of(Vec<const double> values, Vec<const double> weights) {
  Stat s;
  bool unit = weights.size() == 0;
  for (i64 i = 0; i < values.size(); ++i) {
    double wi = unit ? 1.0 : weights[i];
    if (wi > 0.0) s = welford_update(s.w, s.hi, s.lo, s.m2, values[i], wi);
  }
  return s;
}

}  // namespace sf::stats
