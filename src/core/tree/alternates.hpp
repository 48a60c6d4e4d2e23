// Drift adaptation inside a tree: each split node's Page-Hinkley detector, alternate subtrees
// started at a drift, adopted when they do better, discarded otherwise (ATSER, Seah's thesis
// ch. 4): ported from the numba-era streamforest/tree_kinds/alternates.py.  (The tree's own drift
// detector step, alternates.py's ``drift_step``, is tree/regression.hpp's.)
//
// A split node ``n`` of the main tree either feeds its detector (``nd_detector[n]``) with the
// tree's absolute error on the rows routed through it, or has an alternate subtree
// ``nd_alt[n]`` that learns those rows, compared with the node's own subtree by faded squared
// errors (``nd_alt_compare[n]``).  Classification trees judge their own way (their unit) but
// start, adopt and discard alternates with the functions here.
//
// Invariants: ``nd_alt[n] >= 0`` only at split nodes of the main tree, and the alternate's
// nodes have ``nd_isalt == 1`` (0 once adopted); ``ints[I_NALTS]`` counts the live alternates;
// a tree kind with alternates has ``nd_detector`` / ``nd_alt_compare`` columns (its
// allocation), and room for an alternate's new leaf was checked before the row (``room``).
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree {

/// Node ``n``'s detector fired: grow an alternate subtree for it, from an empty leaf (none when
/// the tree is frozen or at ``max_leaves``; the detector restarts either way).
void start_alternate(const TreeRef& st, ParamRef prm, i64 n);

/// Node ``n``'s alternate replaces its subtree (which is freed).
void adopt_alternate(const TreeRef& st, i64 n);

/// Node ``n``'s alternate is freed and its detector restarts.
void discard_alternate(const TreeRef& st, i64 n);

/// Change detection and adaptation along the path of ``x`` (kinds with alternate subtrees;
/// ``pred`` the tree's prediction, made at the leaf): true when an adoption took the example's
/// leaf away (the adopted subtree has learnt it).
bool adapt(const TreeRef& st, ParamRef prm, Row x, double y, double w, double pred);

/// What a kind without alternate subtrees does instead of ``adapt``: nothing.
inline bool never_adapts(const TreeRef&, ParamRef, Row, double, double, double) { return false; }

}  // namespace sf::tree
