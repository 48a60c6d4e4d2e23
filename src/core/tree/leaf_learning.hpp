// Learning a row at its leaf (ported from the numba-era streamforest/tree_kinds/leaf_learning.py):
// the leaf's model, statistics and sketch, then what its split rule keeps (the rule's
// ``learn_at_leaf``: observers, candidates ...) when the leaf is active, which tries a split every
// grace period.  The rules' own parts are their units' (rules/observers.cpp ...).
#pragma once

#include "common/stats.hpp"
#include "leaves/leaf_models.hpp"
#include "tree/leaf_sketch.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::tree {

/// What the tree's split rule does with a row its active leaf learnt.
inline void split_rule_learns(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y,
                              double w, i64 nfeat) {
  st.kind.rule->learn_at_leaf(st, prm, leaf, x, y, w, nfeat);
}

/// Learn ``(x, y, w)`` at the leaf ``node`` that ``x`` routes to (``zs``: its standardised
/// inputs kept from its prediction, see leaves::predict_leaf_keeping, or null).
inline void learn_row(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                      const double* zs = nullptr) {
  i64 nfeat = st.ints()[I_NFEAT];
  i64 leaf = st.nd_leaf()[node];
  leaves::learn_leaf_model(st, prm, leaf, x, y, w, nfeat, zs);
  Mat<double> s = st.lf_stat();
  stats::Stat u = stats::welford_update(s(leaf, 0), s(leaf, 1), s(leaf, 2), s(leaf, 3), y, w);
  s(leaf, 0) = u.w;
  s(leaf, 1) = u.hi;
  s(leaf, 2) = u.lo;
  s(leaf, 3) = u.m2;
  sketch_learn(st, prm, leaf, y, w);
  if (st.lf_active()[leaf] == 0) return;
  split_rule_learns(st, prm, leaf, x, y, w, nfeat);
}

}  // namespace sf::tree
