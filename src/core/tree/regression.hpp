// The regression task of a tree (ported from the numba-era streamforest/tree_kinds/regression.py):
// how a Hoeffding (FIMT-style) regression tree learns and predicts a row.
//
// A row is routed to its leaf, predicted there (when asked, or for a drift detector, the
// alternate subtrees or the evidence weights), learnt (``learn_at``: when its weight is
// positive), and the tree's drift detector judges the prediction.  The task's interface (see
// tree/passes.hpp): ``learn_one_row``, ``learn_one_row_memo``, ``predict_one_row_into``,
// ``remember``; the steps the interval methods build on: ``learn_at``, ``learn_step``,
// ``predict_row``, ``route_predict``.
//
// Invariant: ``st.ints()[I_NSEEN]`` counts every row given to learning, so a memo (leaf node,
// rows seen, prediction) of a row is valid exactly while that count is unchanged.
#pragma once

#include "drift/page_hinkley.hpp"
#include "leaves/leaf_models.hpp"
#include "rules/pregrown.hpp"
#include "tree/alternates.hpp"
#include "tree/leaf_learning.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::tree {

/// The tree's drift detector on its prequential absolute error (alternates.py's
/// ``drift_step``): on a signal, sets ``I_DRIFT`` to it and returns true.
inline bool drift_step(const TreeRef& st, ParamRef prm, double y, double pred) {
  i64 s = drift::page_hinkley_update(st.drift_detector(), y, pred, prm.drift_delta(),
                                     prm.drift_lambda(), prm.drift_min());
  if (s != 0) {
    st.ints()[I_DRIFT] = s;
    return true;
  }
  return false;
}

/// ``adapt`` (kinds with alternate subtrees; the others never adapt).
inline bool adapts(const TreeRef& st, ParamRef prm, Row x, double y, double w, double pred) {
  return st.kind.has.alternates ? adapt(st, prm, x, y, w, pred) : false;
}

/// A row's standardised inputs at its leaf, kept from its prediction for its learning (see
/// leaves::predict_leaf_keeping): ``on`` when ``z[:nfeat]`` holds them.
struct Kept {
  bool on = false;
  double z[leaves::KEEP_MAX];
};

/// Learn ``(x, y, w)`` at leaf ``node`` (where ``x`` routes; ``pred`` the tree's prediction
/// for it, made before; ``kept``: what that prediction kept, see ``predict_to_learn``, or
/// null).  Returns whether the tree's own detector fired.
inline bool learn_at(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                     double pred, const Kept* kept = nullptr) {
  Vec<i64> ints = st.ints();
  ints[I_NSEEN] += 1;
  if (w > 0.0) {
    if (!(prm.alt_lambda() > 0.0 && st.nd_feat()[0] >= 0 && adapts(st, prm, x, y, w, pred)))
      learn_row(st, prm, node, x, y, w, kept != nullptr && kept->on ? kept->z : nullptr);
    if (prm.ev_fade() > 0.0 && st.kind.has.evidence)
      rules::evidence_update(st, prm, st.nd_leaf()[node], y, w, pred, ints[I_NFEAT]);
    st.kind.rule->after_learning(st, x, ints[I_NFEAT]);
  }
  if (prm.drift_lambda() > 0.0) return drift_step(st, prm, y, pred);
  return false;
}

/// The prediction at leaf ``node`` of row ``x``, which ``learn_at`` learns next with weight
/// ``w``: ``predict_leaf``'s, keeping in ``kept`` the leaf's standardised inputs of ``x`` for
/// its learning when the row is learnt at that leaf (weight > 0, no alternate subtrees that
/// might learn it elsewhere), so that they are worked out once.
inline double predict_to_learn(const TreeRef& st, ParamRef prm, i64 node, Row x, double w,
                               Kept& kept) {
  i64 leaf = st.nd_leaf()[node];
  i64 nfeat = st.ints()[I_NFEAT];
  kept.on = false;
  if (w > 0.0 && !(prm.alt_lambda() > 0.0))
    return leaves::predict_leaf_keeping(st, prm, leaf, x, nfeat, kept.z, kept.on);
  return leaves::predict_leaf(st, prm, leaf, x, nfeat);
}

/// The tree's step for one example (room checked): route, predict (when ``predict`` or for a
/// detector), learn.  Returns ``(prediction, drift detected)``.
inline Step learn_step(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                       bool predict) {
  i64 node = route(st, x);
  double pred = 0.0;
  Kept kept;
  if (predict || prm.drift_lambda() > 0.0 || prm.alt_lambda() > 0.0 || prm.ev_fade() > 0.0)
    pred = predict_to_learn(st, prm, node, x, w, kept);
  bool d = learn_at(st, prm, node, x, y, w, pred, &kept);
  return {pred, d};
}

/// The tree's prediction for row ``x``.
inline double predict_row(const TreeRef& st, ParamRef prm, Row x) {
  i64 node = route(st, x);
  return leaves::predict_leaf(st, prm, st.nd_leaf()[node], x, st.ints()[I_NFEAT]);
}

struct NodePred {
  i64 node;
  double pred;
};

/// ``(leaf node, prediction)`` of row ``x``: what ``learn_at`` takes.
inline NodePred route_predict(const TreeRef& st, ParamRef prm, Row x) {
  i64 node = route(st, x);
  return {node, leaves::predict_leaf(st, prm, st.nd_leaf()[node], x, st.ints()[I_NFEAT])};
}

// --- the task's interface (see tree/passes.hpp) ----------------------------------------------

/// Learn one row (room checked) in a batch pass: whether the drift detector fired.
inline bool learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w) {
  return learn_step(st, prm, x, y, w, false).drifted;
}

/// Learn one row in a per-example pass: ``(prediction made before learning, drifted)``, at the
/// leaf and with the prediction column ``t`` of the memo ``M`` holds when the tree has not
/// changed since.
inline Step learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                               Mat<double> M, i64 t) {
  if (t < M.cols() && M(1, t) == static_cast<double>(st.ints()[I_NSEEN])) {
    double p = M(2, t);
    return {p, learn_at(st, prm, to_i64(M(0, t)), x, y, w, p)};
  }
  return learn_step(st, prm, x, y, w, true);
}

/// ``out(i, 0)``: the tree's prediction for row ``x``.
inline void predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out, i64 i) {
  out(i, 0) = predict_row(st, prm, x);
}

/// Keep tree ``t``'s leaf node and prediction of a row in the memo ``M``.
inline void remember(Mat<double> M, i64 t, const TreeRef& st, i64 node, double pred) {
  M(0, t) = static_cast<double>(node);
  M(1, t) = static_cast<double>(st.ints()[I_NSEEN]);
  M(2, t) = pred;
}

}  // namespace sf::tree
