// The method pass of NormalizedConformal:
// prequential, spread-normalised conformal scores in a FIFO calibration ring kept sorted
// (scores.hpp), a running level of the absolute residuals, and the drift guard.
//
// Invariants the bindings check before a pass: the ring ``[head, capacity]`` has
// ``0 <= head < capacity`` and ``capacity`` at most the sizes of the ring's arrays; the sorted
// set of ``size <= capacity`` members is consistent (scores.hpp).
#pragma once

#include <cmath>

#include "common/views.hpp"

namespace sf::intervals {

/// While the error level has seen fewer rows than this, a learnt row's score is scaled by the
/// level including its own residual.
inline constexpr i64 LEVEL_WARMUP = 20;
/// The drift guard: a one-sided CUSUM ``S = max(0, S + u - 1/2 - GUARD_K)`` on the rank ``u``
/// of each learnt row's score among the calibration scores; while ``S > GUARD_H`` the
/// half-width's quantile is the larger of the plain one and a recency-weighted one (weights
/// ``GUARD_RHO ** age``).  ``GUARD_MIN`` calibration scores are needed before ``S`` moves.
inline constexpr double GUARD_K = 0.05;
inline constexpr double GUARD_H = 5.0;
inline constexpr double GUARD_RHO = 0.99;
inline constexpr i64 GUARD_MIN = 20;

/// The scale of a score: ``spread / mean + offset`` when normalising (1 while ``mean`` is not
/// positive), else 1.
double scale_of(double spread, double mean, double offset, bool normalize);

/// The weighted conformal quantile of the sorted scores ``ss[:size]`` (``order[k]`` the ring
/// slot of the k-th smallest, the slot written last ``head - 1``): the smallest score ``s``
/// with ``sum(w_i, s_i <= s) / (sum(w_i) + 1) >= 1 - alpha``, ``w_i = rho ** age_i``; when none
/// reaches it ``inf`` while the ring is not full, the largest score once it is.
double weighted_half_width(Vec<const double> ss, Vec<const i64> order, i64 size, i64 head,
                           i64 cap, double rho, double alpha);

/// The mid-rank of ``v`` among the sorted scores ``ss[:size]``, in (0, 1).
double score_rank(Vec<const double> ss, i64 size, double v);

/// Rows in order: ``half(i, a)`` the conformal half-width at ``alphas[a]`` of the calibration
/// scores before row i, times the row's scale (``level[0]`` the running level of the absolute
/// residuals, ``level[1]`` its count; :func:`scale_of` of ``spread[i]``); then, when ``learn``,
/// row i enters the ring with its scaled score and the level learns the residual, unless the
/// label guard set the row aside (``flagged[i] != 0``; ``flagged`` empty: none was): its score
/// enters the ring (the model did miss it, and the ring forgets it ``capacity`` rows later) but
/// the level does not learn its residual (which would keep every later score small for tens of
/// thousands of rows).  ``guard = [on, S]`` (the drift guard).  Returns the new size.
i64 normalized_pass(i64 size, Vec<i64> ring, Vec<double> score, Vec<i64> order, Vec<i64> pos,
                    Vec<double> ss, Vec<double> cspread, Vec<double> level, i64 span,
                    Vec<const double> yhat, Vec<const double> spread, Vec<const double> y,
                    bool learn, bool normalize, double offset, Vec<const double> alphas,
                    Mat<double> half, Vec<double> guard, Vec<const i8> flagged);

/// ``out[i]``: the standard deviation of the trees' predictions ``P(:, i)``.
void tree_spread(Mat<const double> P, Vec<double> out);

/// The mean of the trees' predictions ``P`` (one row), summed in order.
double tree_mean(Vec<const double> P);

}  // namespace sf::intervals
