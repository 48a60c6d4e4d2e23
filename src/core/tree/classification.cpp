// The classification task of a tree (see classification.hpp).
#include "tree/classification.hpp"

#include <cmath>
#include <stdexcept>

#include "leaves/class_leaves.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::tree::classification {

using leaves::Votes;

namespace {

/// Learn ``(x, y, w)`` at leaf ``node`` (``mc``, ``nb``: the leaf's votes for ``x``).
void learn_class_row(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                     i64 mc, i64 nb) {
  i64 nfeat = st.ints()[I_NFEAT];
  i64 leaf = st.nd_leaf()[node];
  leaves::observe_leaf(st, prm, leaf, x, y, w, nfeat, mc, nb);
  if (st.lf_active()[leaf] == 0) return;
  st.kind.rule->class_learn_at_leaf(st, prm, leaf, x, y, w, nfeat);
}

/// ``adapt_class`` (kinds with alternate subtrees; the others never adapt).
bool adapts_class(const TreeRef& st, ParamRef, Row, double, double, i64) {
  if (st.kind.has.alternates) throw std::logic_error("classification alternates: not ported yet");
  return false;
}

/// The tree's step for a row routed to leaf node ``node`` (the tree unchanged since), whose
/// votes there are ``mc``, ``nb`` (``nb < 0``: not computed): the class predicted before
/// learning; learns ``(x, y, w)`` when ``w > 0``.
i64 learn_class_step_at(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                        i64 mc, i64 nb) {
  i64 leaf = st.nd_leaf()[node];
  Vec<i64> ints = st.ints();
  if (nb < 0) {
    Votes v = leaves::leaf_votes(st, prm, leaf, x, ints[I_NFEAT]);
    mc = v.mc;
    nb = v.nb;
  }
  i64 pred = leaves::choose(st, prm, leaf, mc, nb);
  ints[I_NSEEN] += 1;
  if (w > 0.0) {
    if (!(prm.alt_lambda() > 0.0 && st.nd_feat()[0] >= 0 && adapts_class(st, prm, x, y, w, pred)))
      learn_class_row(st, prm, node, x, y, w, mc, nb);
  }
  return pred;
}

}  // namespace

bool learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w) {
  learn_class_step_at(st, prm, route(st, x), x, y, w, -1, -1);
  return false;
}

Step learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                        Mat<double> M, i64 t) {
  Vec<i64> ints = st.ints();
  if (w <= 0.0) {
    ints[I_NSEEN] += 1;
    return {0.0, false};
  }
  i64 node, mc, nb;
  if (t < M.cols() && M(1, t) == static_cast<double>(ints[I_NSEEN])) {  // routed, voted before
    node = to_i64(M(0, t));
    mc = to_i64(M(2, t));
    nb = to_i64(M(3, t));
  } else {
    node = route(st, x);
    mc = -1;
    nb = -1;
  }
  i64 k = learn_class_step_at(st, prm, node, x, y, w, mc, nb);
  return {static_cast<double>(k), false};
}

void predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out, i64 i) {
  i64 node = route(st, x);
  leaves::leaf_proba(st, prm, st.nd_leaf()[node], x, st.ints()[I_NFEAT], out.row(i));
}

void remember(Mat<double> M, i64 t, const TreeRef& st, i64 node, i64 mc, i64 nb) {
  M(0, t) = static_cast<double>(node);
  M(1, t) = static_cast<double>(st.ints()[I_NSEEN]);
  M(2, t) = static_cast<double>(mc);
  M(3, t) = static_cast<double>(nb);
}

void init_task_fields(const TreeRef& st) { leaves::init_root_class(st); }

}  // namespace sf::tree::classification
