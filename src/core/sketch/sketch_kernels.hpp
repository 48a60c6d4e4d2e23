// The compiled part of KLLSketch (streamforest/sketches/sketch.py): batched updates
// into a sketch's row (compaction, the unit-weight fast path), merges and quantile queries over
// a row.  A KLLSketch is row 0 of its arrays ``items`` ``(1, cap)`` and ``lv`` ``(1, LV_WIDTH)``
// (the layout and invariants of kll.hpp) with a capacity table ``capt``, a generator state
// ``rng`` and ``bounds`` ``[min, max]`` of the values seen.
//
// Every entry point gives the sketch, item for item and draw for draw, that one
// ``kll_update(..., v, w, ...)`` per value gives (the Python kernels' guarantee, kept: the same
// operations in the same order).
#pragma once

#include "common/views.hpp"
#include "sketch/kll.hpp"

namespace sf::sketch {

/// a run of at most this many values with a zero in it is inserted value by value; longer runs
/// are sorted and merged in at once
inline constexpr i64 UNIT_BATCH_MIN = 32;
/// values level 0 may hold unsorted (the largest network)
inline constexpr i64 UNSORTED_MAX = 32;

/// ``kll_update`` of sketch row 0 with each value and its weight, in order.
void update_many(Mat<double> items, Mat<i64> lv, Vec<const double> values,
                 Vec<const i64> weights, Mat<i64> capt, u64& rng);

/// Add ``values`` (weight 1 each) to sketch row 0 and widen ``bounds`` (min, max); false, and
/// nothing added, if one of them is not finite.
bool update_unit(Mat<double> items, Mat<i64> lv, Vec<const double> values, Mat<i64> capt,
                 u64& rng, Vec<double> bounds);

/// Insert every retained item of the other sketch (row 0 of ``o_items``, ``o_lv``) at its own
/// level into sketch row 0, and widen ``bounds`` to ``o_bounds``.
void merge_sketch(Mat<double> items, Mat<i64> lv, Vec<double> bounds, Mat<const double> o_items,
                  Mat<const i64> o_lv, Vec<const double> o_bounds, Mat<i64> capt, u64& rng);

/// ``out[i]``: the inclusive ``qs[i]``-quantile of sketch row 0 (NaN if empty).
void quantiles(Mat<double> items, Mat<i64> lv, Vec<const double> qs, Vec<double> out);

/// The retained items of sketch row 0 ascending (``values``) and their cumulative weights;
/// returns the count.
i64 sorted_view(Mat<double> items, Mat<i64> lv, Vec<double> values, Vec<double> cumulative);

}  // namespace sf::sketch
