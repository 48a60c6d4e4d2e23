// Online bagging weights and the forest's aggregation of its trees' predictions (what every
// forest shares, Hoeffding and Mondrian alike).
//
// Online bagging (Oza 2005): tree t learns row i with weight ``k * w_i``, ``k ~ Poisson(lam)``
// by Knuth's multiplication method (exact for the small rates used here); ``lam = 0`` means no
// bagging (weight ``w_i``).  Draws are made row by row, tree by tree, from the forest's
// generator, so the result does not depend on how a stream is cut into chunks.
#pragma once

#include <cmath>

#include "common/rng.hpp"
#include "common/views.hpp"

namespace sf::engine {

inline constexpr i64 AGG_MEAN = 0;
inline constexpr i64 AGG_MEDIAN = 1;
inline constexpr i64 AGG_WEIGHTED = 2;  // by the trees' evidence weights (ABORF)

/// A Poisson draw of rate ``lam`` whose ``limit = exp(-lam)`` is given (Knuth's method: the
/// number of uniforms whose product stays above it).
inline i64 poisson_below(u64& rng_state, double limit) {
  i64 k = 0;
  double p = rng::next_float(rng_state);
  while (p > limit) {
    k += 1;
    p *= rng::next_float(rng_state);
  }
  return k;
}

/// A Poisson(lam) draw (Knuth's method: the number of uniforms whose product stays above
/// exp(-lam)).
inline i64 poisson(u64& rng_state, double lam) { return poisson_below(rng_state, std::exp(-lam)); }

/// Weight of one (row, tree): ``Poisson(lam) * w``, or ``w`` without bagging (``lam = 0``).
inline double bagging_weight(u64& rng_state, double lam, double w) {
  if (lam > 0.0) return static_cast<double>(poisson(rng_state, lam)) * w;
  return w;
}

/// ``out(t, i)``: bagging weight of row i for tree t, drawn row by row, tree by tree.
/// (``bagging_weight``'s draws, ``exp(-lam)`` worked out once: a call of the math library
/// cost about as much as the draw.)
inline void draw_weights(u64& rng_state, double lam, Vec<const double> w, Mat<double> out) {
  if (!(lam > 0.0)) {
    for (i64 i = 0; i < w.size(); ++i)
      for (i64 t = 0; t < out.rows(); ++t) out(t, i) = bagging_weight(rng_state, lam, w[i]);
    return;
  }
  const double limit = std::exp(-lam);
  for (i64 i = 0; i < w.size(); ++i)
    for (i64 t = 0; t < out.rows(); ++t)
      out(t, i) = static_cast<double>(poisson_below(rng_state, limit)) * w[i];
}

/// Mean (AGG_MEAN) or median (AGG_MEDIAN, sorting ``P`` in place) of ``P``.
inline double aggregate(Vec<double> P, i64 agg) {
  i64 T = P.size();
  if (agg == AGG_MEDIAN) {
    for (i64 i = 1; i < T; ++i) {  // insertion sort: a forest has few trees
      double v = P[i];
      i64 j = i - 1;
      while (j >= 0 && P[j] > v) {
        P[j + 1] = P[j];
        j -= 1;
      }
      P[j + 1] = v;
    }
    i64 h = T / 2;
    return T % 2 == 1 ? P[h] : (P[h - 1] + P[h]) / 2.0;
  }
  double s = 0.0;
  for (i64 t = 0; t < T; ++t) s += P[t];
  return s / static_cast<double>(T);
}

/// ``out[i]``: the mean of ``P(:, i)``, summed over the trees in order (the arithmetic of
/// ``aggregate``, so that a one-row batch gives what the per-example call gives).
inline void mean_columns(Mat<const double> P, Vec<double> out) {
  i64 T = P.rows(), n = P.cols();
  for (i64 i = 0; i < n; ++i) out[i] = 0.0;
  for (i64 t = 0; t < T; ++t)
    for (i64 i = 0; i < n; ++i) out[i] += P(t, i);
  for (i64 i = 0; i < n; ++i) out[i] /= static_cast<double>(T);
}

}  // namespace sf::engine
