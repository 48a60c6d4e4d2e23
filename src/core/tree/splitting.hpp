// Splitting a leaf (ported from the numba-era streamforest/tree_kinds/splitting.py): the observers
// rule's split attempt (the Hoeffding bound's test on the observers' best cuts), the split
// itself, and the children's start every rule shares (``grow_children``).  The extremely
// randomised split's attempt is its own unit's (rules/extra).
//
// Invariant: a leaf's statistic is that of the examples routed to it since its parent was
// created: the children start with the exact sides of what the parent observed (what it had
// itself inherited cannot be split without stored examples); examples the rule did not see
// (a missing value of the split feature) go with the heavier side, as routing sends them.
#pragma once

#include "common/stats.hpp"
#include "tree/split_rule.hpp"

namespace sf::tree {

/// The Hoeffding bound's test on the observers' best cuts of ``leaf``: split (or freeze the
/// tree at ``max_leaves``) when the best feature's variance reduction beats the runner-up's.
void attempt_observer_split(const TreeRef& st, ParamRef prm, i64 leaf);

/// Split ``leaf`` on feature ``f`` at its observer's best cut.
void split(const TreeRef& st, ParamRef prm, i64 leaf, i64 f);

/// Turn ``leaf``'s node into a split on feature ``f`` (threshold or categories already set)
/// with two new leaves holding the sides' target statistics.
void grow_children(const TreeRef& st, ParamRef prm, i64 leaf, i64 f, stats::Stat l,
                   stats::Stat r);

}  // namespace sf::tree
