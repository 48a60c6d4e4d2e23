// Online conformal controllers over the intervals of a base model: adaptive conformal inference
// (ACI) and conformal PID control, rows in order (the modes and the stale-feedback cap are
// described in streamforest/intervals/_controllers.py).
//
// Both take the base model's intervals for the rows (computed before the base learnt each row)
// and, per tracked level ``r``, produce the wrapper's own interval, the reported (nested)
// interval and, when learning, update the level's controller with the error of its own
// interval.  An empty set is carried as ``(+inf, -inf)`` while nesting and reported as the
// point ``(pred, pred)``.
//
// Each row has a ``mode``: 0 serve (own interval from the current state, written to ``rec``),
// 1 serve then learn (prequential), 2 learn from ``rec``, the record of the interval served for
// the row earlier (``[own_lo, own_hi, base_lo, base_hi, ..., served_at]`` per level), 3 skip.
// ``served_at`` is the level's count of learnt rows when the row was served, so a label knows
// its lag; every step on a served miss is capped at ``lag_step`` (``LAG_GAIN / (1 + lag)`` per
// unit of the level: stale feedback makes a fixed step a delayed integrator that overshoots).
//
// Invariants the bindings check: every index below is inside its view (``rec`` has a slot
// ``LAG = rec.n2 - 1`` past the method's fields, ``order`` holds level indices, the ladders'
// columns are columns of the base intervals, the PID windows' counts and positions are inside
// them).
#pragma once

#include <cmath>
#include <limits>

#include "common/numeric.hpp"
#include "common/views.hpp"
#include "intervals/arith.hpp"

namespace sf::intervals {

/// The staleness cap of the steps on served misses: 1 / e.
inline constexpr double LAG_GAIN = 1.0 / 2.718281828459045;
/// ACI's ladder around a level: ``expit(logit(a) + LADDER_STEP * k)``, ``k`` in -8 .. 4.
inline constexpr double LADDER_STEP = 0.3;

/// ``step`` capped at ``cap / (1 + lag)`` for a label learnt ``lag`` rows after its row was
/// served (``lag >= 0`` or NaN: the divisor is never 0).
inline double lag_step(double step, double lag, double cap) {
  return py_min(step, cap / (1.0 + lag));
}

namespace detail {

inline constexpr double INF = std::numeric_limits<double>::infinity();

/// ``log(a / (1 - a))`` for ``0 < a < 1``.
inline double logit(double a) { return std::log(a / (1.0 - a)); }

/// Endpoint at weight ``w`` between ``a`` (w = 0) and ``b`` (w = 1): linear when both are
/// finite, else the outer one (``low``: the smaller) unless ``w`` is 0.
inline double blend(double a, double b, double w, bool low) {
  if (w == 0.0) return a;
  if (std::isfinite(a) && std::isfinite(b)) return a + w * (b - a);
  return low ? py_min(a, b) : py_max(a, b);
}

/// Row i's reported intervals: level ``order[k]`` (ascending levels) gets the hull of its own
/// interval and those of every larger level; an empty hull is reported as ``(pred, pred)``.
inline void nest(Vec<const i64> order, Vec<const double> own_lo, Vec<const double> own_hi,
                 Vec<const double> pred, Mat<double> out_lo, Mat<double> out_hi, i64 i) {
  i64 R = order.size();
  double lo = INF;
  double hi = -INF;
  for (i64 k = R - 1; k >= 0; --k) {
    i64 r = order[k];
    lo = py_min(lo, own_lo[r]);
    hi = py_max(hi, own_hi[r]);
    if (lo > hi) {
      out_lo(i, r) = pred[i];
      out_hi(i, r) = pred[i];
    } else {
      out_lo(i, r) = lo;
      out_hi(i, r) = hi;
    }
  }
}

/// The miss of an interval served for ``y`` (an empty one always misses).
inline bool missed(double lo, double hi, double y) { return lo > hi || !(lo <= y && y <= hi); }

}  // namespace detail

/// ACI (Gibbs & Candes 2021).  ``blo/bhi(i, j)``: the base interval of row i at the j-th level
/// of the union ladder; level r's ladder is ``lad_idx.row(r)`` (columns, ascending levels) at
/// logits ``lad_logit.row(r)``.  Level r's own interval at ``alpha_t[r]``: the whole line at
/// ``alpha_t <= 0``, empty at ``alpha_t >= 1``, else the base interval interpolated between the
/// two ladder levels around ``alpha_t`` (linearly in logit).  When learning and ``learns[r]``:
/// ``alpha_t[r] += lag_step(gamma, lag, LAG_GAIN) * (alphas[r] - err)``; a row served an
/// infinite interval while ``0 < alpha_t < 1`` teaches nothing.
void aci_pass(Mat<const double> blo, Mat<const double> bhi, Vec<const double> pred,
              Vec<const double> y, Vec<const i8> mode, Cube<double> rec, Mat<const i64> lad_idx,
              Mat<const double> lad_logit, Vec<const double> alphas, Vec<const bool> learns,
              double gamma, Vec<double> alpha_t, Vec<i64> steps, Vec<const i64> order,
              Mat<double> out_lo, Mat<double> out_hi, Vec<double> own_lo, Vec<double> own_hi);

/// Conformal PID control (Angelopoulos, Candes & Tibshirani 2023): quantile tracking plus a
/// saturating integrator, no scorecaster.  ``blo/bhi(i, r)``: the base interval of row i at
/// ``alphas[r]``; own interval ``[lo - q, hi + q]``, ``q = p + I`` (both gains proportional to
/// the range of the level's last ``win.cols()`` scores).  A row whose base interval is not
/// finite leaves the level's state alone.
void pid_pass(Mat<const double> blo, Mat<const double> bhi, Vec<const double> pred,
              Vec<const double> y, Vec<const i8> mode, Cube<double> rec,
              Vec<const double> alphas, Vec<const bool> learns, double lr, double ki, double csat,
              Vec<double> p, Vec<double> isum, Vec<i64> steps, Mat<double> win, Vec<i64> win_n,
              Vec<i64> win_pos, Vec<const i64> order, Mat<double> out_lo, Mat<double> out_hi,
              Vec<double> own_lo, Vec<double> own_hi);

}  // namespace sf::intervals
