// The prequential evaluator's block metrics (``accumulate``, read by streamforest/metrics.py): rows
// are added into blocks of ``step`` consecutive rows, each block a row of additive sums (the
// point part, then ``K`` columns per level), so totals and windows are sums of blocks.  The
// carried state is the prequential mean of the targets and their running range.
//
// Invariants the bindings check: ``step >= 1``, ``first_row >= 0``, a block row for every row
// added, ``POINT + K * A`` columns, four carried values.
#pragma once

#include "common/views.hpp"

namespace sf::metrics {

// block columns: point part, then K columns per alpha
inline constexpr i64 N = 0, SAE = 1, SSE = 2, YMEAN = 3, YM2 = 4, YMIN = 5, YMAX = 6, BAE = 7,
                     BSE = 8;
inline constexpr i64 POINT = 9;
inline constexpr i64 MISS = 0, BELOW = 1, WSUM = 2, NINF = 3, BETA = 4, WRUN = 5;
inline constexpr i64 K = 6;
// carried state: rows seen, mean of targets, running min and max
inline constexpr i64 C_N = 0, C_MEAN = 1, C_MIN = 2, C_MAX = 3;

/// Add rows ``first_row ..`` (targets ``y``, predictions ``pred``, intervals ``lo`` / ``hi``
/// of shape (n, A)) to ``blocks`` (row ``b`` holds rows ``[b * step, (b + 1) * step)``),
/// updating the carried prequential state.
void accumulate(Vec<const double> y, Vec<const double> pred, Mat<const double> lo,
                Mat<const double> hi, i64 first_row, i64 step, Mat<double> blocks,
                Vec<double> carry);

}  // namespace sf::metrics
