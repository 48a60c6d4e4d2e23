// Multivalid conformal intervals (MVP: Bastani, Gupta, Jung, Noarov, Ramalingam and Roth 2022,
// "Practical adversarial multivalid conformal prediction"): thresholds calibrated in every
// group of every family at once, and conditional on the threshold itself, on any sequence.
//
// Scores are those of groups.hpp (``s = |y - m| / h`` on the base method's interval at the
// reference level), mapped to [0, 1) by ``u = s / (1 + s)``; the threshold space [0, 1] is cut
// into ``B`` buckets.  Per tracked level ``r``, bucket ``b`` and cell ``c`` (cell 0: every row,
// the marginal group; cells 1..: the groups, as in groups.hpp) the state keeps
// ``v(r, b, c)``, the sum of ``alpha - miss`` over the rows of that cell whose threshold fell
// in that bucket, and ``n(r, b, c)`` their count.
//
// A row's threshold at level r, over its cells S (cell 0 and its groups): with
// ``w = 1 / sqrt((n + 1) log2(n + 2)^2)`` and ``a = eta w v`` per cell (the sum normalised by
// the cell's count, as the authors' code), ``C_b = sum_S exp(a) - sum_S exp(-a)`` (the paper's
// C, positive: over-covered there, so lower).  The authors' code also weighs each cell's terms
// by ``w``; not here: a cell's vote is then about ``bias / log2(n)^2`` (``bias`` its mean of
// ``alpha - miss``), so a cell-bucket seen once (one early miss, bias -0.9) outvoted a cell of
// 4,000 rows over-covered by 0.03 (6.6 standard errors) about 900 to 1, and kept the quietest
// groups over-covered (benchmarks/group_coverage.py: a group 0.022 off, now within 0.01).  The
// buckets are scanned upwards; at the first sign change between ``C_{b-1}`` and ``C_b`` the
// threshold is ``b / B - 1 / (R B)`` with probability ``|C_b| / (|C_{b-1}| + |C_b|)`` (1 when
// both are 0), else ``b / B`` (``R`` = 1000, the paper's nuisance parameter); without a sign
// change it is 1 (every C negative: the whole line) or 0.  The draw is a uniform of the row's
// stream position and the seed (SplitMix64), so predicting a row then learning it serve and
// learn the same threshold.  The interval is ``m +- t h`` with ``t = tau / (1 - tau)``.
//
// Learning a row (only when its base interval is finite: a row the base could not bound
// teaches nothing) adds ``alpha - miss`` and 1 to its bucket's ``v`` and ``n`` in each of its
// cells.  The state grows with the buckets and cells, not with the rows (no window).
//
// Invariants the binding checks: every cell index of ``ids`` is -1 (none) or below the cells
// of ``v`` and ``n``, whose shapes are ``(levels, B, cells)``.
#pragma once

#include "common/views.hpp"

namespace sf::intervals {

/// Rows in order, each tracked level: the interval before the row, then (``learn``) the row's
/// miss updates its cells.  ``start``: the stream position of the first row (the draws').
void mvp_pass(Mat<const i64> ids, Vec<const double> lo, Vec<const double> hi,
              Vec<const double> y, bool learn, Vec<const double> alphas, double eta, i64 seed,
              i64 start, Cube<double> v, Cube<double> n, Mat<double> out_lo,
              Mat<double> out_hi);

/// The threshold (in [0, 1]) at level ``r`` of a row of cells ``cells`` (cell 0 always
/// counted, -1 entries skipped), with the uniform ``draw``.
double mvp_threshold(Vec<const i64> cells, i64 r, double eta, double draw, Cube<double> v,
                     Cube<double> n);

}  // namespace sf::intervals
