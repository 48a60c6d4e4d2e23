// ABORF's pre-grown trees (Seah's thesis, ch. 6, §6.2.1, Algorithms 6.1-6.3) and the evidence
// weights of trees and leaves: the C++ side of streamforest/tree_kinds/pregrown.py.
//
// A split rule (``SPLIT_PREGROWN``, ``pregrown_rule``): the tree is a balanced binary tree of
// depth ``Q`` (``max_depth``) built when it is created, before any data, in heap order (node
// k's children are ``2k + 1`` and ``2k + 2``; leaf slot ``s`` is node ``2**Q - 1 + s``); its
// structure never changes.  ``M`` (``mc_points``) Monte Carlo points uniform in ``[0, 1]^D``
// go down level by level; each split node gets their centre of mass (a node no point reaches
// takes its parent's) and one split through it: a random projection (``oblique``), a random
// numeric feature, or a nominal feature whose categories go to a side hashed from the node's
// salt.  Rows are routed by their values min-max scaled with the ranges of the rows learnt so
// far (``ft_minmax``, extended *after* a row is learnt, ``update_scaling``); a missing value or
// an unknown range takes the node centre's coordinate.
//
// Evidence (Algorithm 6.3, ``evidence_update``): the tree's log weight ``(-e_T + log b_T) /
// |leaves|`` (Bayesian leaves: ``-e_T / |leaves|``, ``e_T`` the faded sum of the log predictive
// densities); the forest's prediction is the mean of the trees' weighted by the softmax of the
// log weights, summed as ``p_0 + sum_t w_t (p_t - p_0)`` (``weighted_mean``).
//
// Invariants: a pre-grown tree's fields hold the whole tree (``2**(Q+1) - 1`` nodes, ``2**Q``
// leaves; ``build_pregrown`` checks them and refuses otherwise); a split node's kind is in
// ``nd_cat_len`` (NODE_AXIS, NODE_SALT, NODE_PROJ); every leaf is inactive (no observers).
#pragma once

#include <cmath>

#include "common/numeric.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::rules {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

inline constexpr i64 MAX_DEPTH = 16;
inline constexpr i64 SALT_RANGE = i64{1} << 52;
inline constexpr double TINY = 1e-300;  // floor of a leaf's faded squared error

/// The split rule of pre-grown trees: what its line in the rules' table (tree/split_rules.cpp)
/// names.
const tree::SplitRule& pregrown_rule();

/// The ``(m, d)`` Monte Carlo points ``pts``, uniform in ``[0, 1]^d``, drawn row by row from
/// ``rng``: the first draws of a pre-grown tree's generator.
void draw_points(u64& rng, Mat<double> pts);

/// Grow the balanced tree of depth ``prm.max_depth()`` (the rule's ``init_root``).  Throws
/// ``std::invalid_argument`` when the tree's fields cannot hold it.
void build_pregrown(const TreeRef& st, ParamRef prm);

/// The child of split node ``node`` that row ``x`` goes to (the rule's ``child``).
i64 child_pregrown(const TreeRef& st, i64 node, Row x);

/// Node id of the leaf that ``x`` reaches from ``node`` (the rule's ``route_from``).
i64 route_pregrown(const TreeRef& st, i64 node, Row x);

/// Extend each numeric feature's range with row ``x`` (after the tree learnt it; the rule's
/// ``after_learning``): a missing value (NaN, or beyond HUGE_X) extends nothing.
void update_scaling(const TreeRef& st, Row x, i64 nfeat);

/// A pre-grown tree never needs room (the rule's ``room``).
bool room_pregrown(const TreeRef& st, ParamRef prm);

/// Algorithm 6.3 for an example ``(y, w)`` that reached ``leaf`` (``pred`` the tree's
/// prediction before learning it): the tree's evidence learns the row.
void evidence_update(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, double y, double w,
                     double pred, i64 nfeat);

/// Tree ``t``'s log evidence weight (``0`` for a tree without evidence).
inline double log_weight(const tree::Arena& A, i64 t) {
  TreeRef st;  // (only the fields' rows: its kind is not needed)
  st.fa = A.fa.data + t * A.fa.n1;
  st.ia = A.ia.data + t * A.ia.n1;
  st.ba = A.ba.data + t * A.ba.n1;
  st.lay = A.lay.data + t * A.lay.n1 * A.lay.n2;
  return st.evidence()[tree::EV_LOGW];
}

/// Each tree's log evidence weight, into ``out``.
void log_weights(const tree::Arena& A, Vec<double> out);

/// ``sum_t w_t p_t`` with ``w = softmax(lw)`` over ``T`` trees (``lw(t)``, ``p(t)``: the
/// ``t``-th log weight and prediction), summed as ``p_0 + sum_t w_t (p_t - p_0)``: equal
/// predictions give exactly that value, and an offset common to them cancels before the
/// weights multiply.
template <class LW, class P>
inline double weighted_mean(i64 T, LW lw, P p) {
  double top = lw(0);
  for (i64 t = 1; t < T; ++t) top = py_max(top, lw(t));
  double ref = p(0);
  double num = 0.0;
  double den = 0.0;
  for (i64 t = 0; t < T; ++t) {
    double a = std::exp(lw(t) - top);
    num += a * (p(t) - ref);
    den += a;
  }
  return ref + num / den;
}

/// The mean of the tree predictions ``p`` weighted by the softmax of the trees' log evidence
/// weights read from arena ``A`` (NaN for an arena without trees).
double weighted_mean_at(const tree::Arena& A, Vec<const double> p);

}  // namespace sf::rules
