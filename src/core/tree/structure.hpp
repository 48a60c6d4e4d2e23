// A tree's structure (ported from the numba-era streamforest/tree_kinds/structure.py): routing a
// row to its leaf, the node and leaf pools, a leaf's creation and the freeing of nodes, leaves and
// subtrees (every tree kind's; a split rule changes routing and the root through its parts).
//
// Invariants: a node is a leaf iff ``nd_feat < 0``, and then ``nd_leaf`` is its leaf slot and
// ``lf_node`` of that slot is the node; free nodes are linked through ``nd_left`` from
// ``ints[I_NODE_FREE]``, free leaf slots stacked in ``lf_free[:ints[I_LEAF_NFREE]]``.  A
// nominal split's categories are sorted in ``cats[nd_cat_off:]``: ``nd_cat_len`` sent left,
// then ``nd_cat_right`` sent right (a negative ``nd_cat_len``: the extremely randomised
// split's salted sides).
#pragma once

#include <cmath>
#include <limits>

#include "rules/extra.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::tree {

inline bool in_cats(Vec<double> cats, i64 off, i64 n, double v) {
  i64 lo = off;
  i64 hi = off + n;
  while (lo < hi) {
    i64 mid = (lo + hi) / 2;  // (both >= 0)
    if (cats[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < off + n && cats[lo] == v;
}

/// The node arrays an axis-aligned test reads, taken once per routed row.
struct AxisTests {
  Vec<i64> feat, left, right, cat_off, cat_len, cat_right;
  Vec<double> thr, cats;
  Vec<i8> miss_left, nominal;

  explicit AxisTests(const TreeRef& st)
      : feat(st.nd_feat()), left(st.nd_left()), right(st.nd_right()), cat_off(st.nd_cat_off()),
        cat_len(st.nd_cat_len()), cat_right(st.nd_cat_right()), thr(st.nd_thr()),
        cats(st.cats()), miss_left(st.nd_miss_left()), nominal(st.ft_nominal()) {}
};

/// The child of split node ``node`` that row ``x`` goes to: a test of one feature.
inline i64 child_axis(const AxisTests& nd, i64 node, Row x) {
  i64 f = nd.feat[node];
  double v = f < x.size() ? x[f] : std::numeric_limits<double>::quiet_NaN();
  bool go_left;
  if (is_nan(v)) {
    go_left = nd.miss_left[node] == 1;
  } else if (nd.nominal[f]) {
    i64 off = nd.cat_off[node];
    i64 nl = nd.cat_len[node];
    if (nl < 0) {  // an extremely randomised split: every category on a random side
      go_left = rules::cat_goes_left(nd.thr[node], v);
    } else if (in_cats(nd.cats, off, nl, v)) {
      go_left = true;
    } else if (in_cats(nd.cats, off + nl, nd.cat_right[node], v)) {
      go_left = false;
    } else {  // a category this split never saw
      go_left = nd.miss_left[node] == 1;
    }
  } else {
    go_left = v <= nd.thr[node];
  }
  return go_left ? nd.left[node] : nd.right[node];
}

/// ``child_axis`` of tree ``st`` (the default ``child``).
inline i64 child_axis(const TreeRef& st, i64 node, Row x) {
  return child_axis(AxisTests(st), node, x);
}

/// The default ``route_from``: axis-aligned tests down from ``node``.
i64 route_axis(const TreeRef& st, i64 node, Row x);

/// Node id of the leaf that row ``x`` reaches from ``node`` (the rule's ``route_from``).
inline i64 route_from(const TreeRef& st, i64 node, Row x) {
  return st.kind.rule->route_from(st, node, x);
}

/// Node id of the leaf that row ``x`` reaches.
inline i64 route(const TreeRef& st, Row x) { return route_from(st, 0, x); }

/// The child of split node ``node`` that ``x`` goes to (the rule's ``child``).
inline i64 child(const TreeRef& st, i64 node, Row x) { return st.kind.rule->child(st, node, x); }

/// A node id: from the free list (nodes of discarded subtrees), else the next unused.
i64 new_node(const TreeRef& st);

/// A leaf slot: from the free stack, else the next unused.
i64 new_leaf_slot(const TreeRef& st);

/// Feature mask of a new leaf: all features, or a random subspace of ``max_features``.
void choose_features(const TreeRef& st, ParamRef prm, i64 leaf);

/// Key scale of each observer of ``leaf``: ``10**d`` (TE-BST), ``1 / radius`` (QO; the radius
/// from the parent's spread under ``qo_sigma > 0``).
void set_scale(const TreeRef& st, ParamRef prm, i64 leaf, Vec<double> spread);

/// ``leaf`` becomes the leaf of ``node`` at ``depth``.
void init_leaf(const TreeRef& st, ParamRef prm, i64 leaf, i64 node, i64 depth,
               Vec<double> spread);

/// A new tree: one empty root leaf, or the rule's whole tree (the rule's ``init_root``).
inline void init_root(const TreeRef& st, ParamRef prm) { st.kind.rule->init_root(st, prm); }

/// The default ``init_root``: a new tree's one empty root leaf.
void init_root_leaf(const TreeRef& st, ParamRef prm);

void free_leaf(const TreeRef& st, i64 leaf);
void free_node(const TreeRef& st, i64 node);

/// Free the nodes and leaves of the subtree at ``root`` (and of their alternates).
void free_subtree(const TreeRef& st, i64 root);

}  // namespace sf::tree
