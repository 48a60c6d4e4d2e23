// A tree's passes over rows, for every tree kind and both tasks: the loops the engine runs (the
// ported from the numba-era streamforest/tree_kinds/kernels.py).
//
// What a tree does with one row depends on its task: the task unit (tree/regression.hpp or
// tree/classification.hpp) gives the same four functions, and the loops here call them through
// a branch on the tree's kind:
// - ``learn_one_row(st, prm, x, y, w)``: learn a row (room checked) in a batch pass; whether
//   the tree's drift detector fired (the pass stops after that row);
// - ``learn_one_row_memo(st, prm, x, y, w, M, t)``: learn a row in a per-example pass, using
//   column ``t`` of a memo ``M`` (leaf node, rows seen, the task's prediction) while the tree
//   is unchanged; returns ``(prediction made before learning, drifted)``;
// - ``predict_one_row_into(st, prm, x, out, i)``: the tree's answer for a row into
//   ``out.row(i)`` (a value: one column; or class probabilities);
// - ``init_task_fields(st)``: what a new root leaf needs for the task.
//
// A pass that needs more room than the tree has returns the index of the example it stopped
// *before*; Python grows the arrays and calls again from there.
#pragma once

#include "tree/classification.hpp"
#include "tree/regression.hpp"
#include "tree/room.hpp"

namespace sf::tree {

inline bool task_learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w) {
  if (st.kind.classification) return classification::learn_one_row(st, prm, x, y, w);
  return learn_one_row(st, prm, x, y, w);
}

inline Step task_learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                                    Mat<double> M, i64 t) {
  if (st.kind.classification) return classification::learn_one_row_memo(st, prm, x, y, w, M, t);
  return learn_one_row_memo(st, prm, x, y, w, M, t);
}

inline void task_predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out,
                                      i64 i) {
  if (st.kind.classification) {
    classification::predict_one_row_into(st, prm, x, out, i);
    return;
  }
  predict_one_row_into(st, prm, x, out, i);
}

inline void init_task_fields(const TreeRef& st) {
  if (st.kind.classification) classification::init_task_fields(st);
}

/// Whether an example of weight ``w`` changes the tree beyond its row count.
inline bool needs_step(ParamRef prm, double w) { return w > 0.0 || prm.drift_lambda() > 0.0; }

/// True if one more example can be learnt without growing any array (may free observer bins
/// under the memory budget).
inline bool has_room(const TreeRef& st, ParamRef prm) { return room(st, prm); }

/// Rows the tree was given to learn (weight-0 rows included).
inline i64 rows_seen(const TreeRef& st) { return st.ints()[I_NSEEN]; }

/// Learn rows ``start..`` of ``X``; returns the row it stopped before (``X.rows()``: all).
i64 learn_batch(const TreeRef& st, ParamRef prm, Mat<const double> X, Vec<const double> y,
                Vec<const double> w, i64 start);

/// ``out.row(i)``: the tree's answer for row ``i``.
void predict_batch(const TreeRef& st, ParamRef prm, Mat<const double> X, Mat<double> out);

/// Leaf node id reached by each row.
void apply_batch(const TreeRef& st, Mat<const double> X, Vec<i64> out);

/// Prequential loop of a regression tree: ``out[i]`` the prediction for row i made before
/// learning it.
i64 predict_learn_batch(const TreeRef& st, ParamRef prm, Mat<const double> X,
                        Vec<const double> y, Vec<const double> w, i64 start, Vec<double> out);

/// ``predict_learn_batch`` that also records the tree's log evidence weight before each row.
i64 predict_learn_batch_lw(const TreeRef& st, ParamRef prm, Mat<const double> X,
                           Vec<const double> y, Vec<const double> w, i64 start, Vec<double> out,
                           Vec<double> lw);

}  // namespace sf::tree
