// The forest engine's passes over an arena (ported from the numba-era
// streamforest/engine/kernels.py; bagging and the mean of the trees' columns are
// engine/bagging.hpp).
//
// Every pass takes the forest's arena and works on tree ``t`` through ``state_at`` /
// ``params_at``.  Batch passes run tree-major: the bagging weights of a chunk are drawn first
// (row by row, tree by tree), then each tree runs through the chunk; a pass returns the row it
// stopped before (room, or a drift signal) and the engine calls again.  The per-example passes
// (``learn_one``, ``predict_one``) run every tree for one row, drawing the weights in the same
// order, so learning row by row gives exactly the batch result.  A per-example prediction
// leaves each tree's leaf node, rows seen and prediction in a memo ``M`` ((4, n_trees));
// ``learn_one`` given it learns a tree whose row count has not changed at that leaf (a memo of
// width 0: none).  Background trees live in a second arena of the same shape, each drawing its
// weights from its own generator.
//
// Invariant (checked by the bindings): every tree the pass touches exists (its ``ints`` holds
// N_INTS items), its kind is one this core runs, and rows have at least its features.
#pragma once

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::engine {

inline constexpr i64 DONE = -1;     // a per-example pass learnt the row
inline constexpr i64 DRIFTED = -2;  // ... and some tree's drift detector signalled
inline constexpr i64 FRESH = -1;    // learn_one's t0 for a new row

using tree::Arena;

i64 learn_rows(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
               Mat<const double> W, i64 start);
i64 predict_learn_rows(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                       Mat<const double> W, i64 start, Mat<double> P);
i64 predict_learn_rows_lw(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                          Mat<const double> W, i64 start, Mat<double> P, Mat<double> LW);
/// Tree ``t``'s answers for the rows of ``X`` into ``out`` (``(n, 1)`` values, or ``(n, K)``
/// class probabilities).
void predict_rows(const Arena& A, i64 t, Mat<const double> X, Mat<double> out);
void apply_rows(const Arena& A, i64 t, Mat<const double> X, Vec<i64> out);
i64 background_rows(const Arena& B, i64 t, Mat<const double> X, Vec<const double> y,
                    Vec<const double> w, i64 start);
void draw_background(u64& brng, double lam, Vec<const double> w, Vec<double> out, i64 start,
                     i64 stop);
void init_tree(const Arena& A, i64 t);
void rebuild_hash_at(const Arena& A, i64 t);
bool lacks_room(const Arena& A, i64 t);

void predict_trees_memo(const Arena& A, Vec<const double> x, Vec<double> P, Mat<double> M);
i64 learn_one(const Arena& A, u64& frng, double lam, Vec<const double> x, double y, double w,
              Vec<double> wt, Vec<double> P, Vec<i8> drifted, i64 t0, Mat<double> M);
i64 learn_background_one(const Arena& B, Vec<const i8> on, Mat<u64> brng, double lam,
                         Vec<const double> x, double y, double w, Vec<double> bw, i64 t0);
/// Mean, median (sorting ``P``) or the evidence-weighted mean of the trees' predictions.
double aggregate_at(const Arena& A, Vec<double> P, i64 agg);
void predict_trees(const Arena& A, Vec<const double> x, Vec<double> P);
double predict_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P, Mat<double> M);

/// ``out[i]``: the mean of ``P(:, i)`` weighted by the softmax of ``LW(:, min(i, LW.cols() -
/// 1))`` (the arithmetic of ``aggregate_at``; ``LW`` may have one column, for every row).
void weighted_columns(Mat<const double> LW, Mat<const double> P, Vec<double> out);
/// Each tree's log evidence weight, into ``out``.
void tree_log_weights(const Arena& A, Vec<double> out);

}  // namespace sf::engine
