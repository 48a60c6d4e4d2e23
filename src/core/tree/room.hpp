// A tree's memory (ported from the numba-era streamforest/tree_kinds/room.py): the observer bin
// budget (deactivating and reactivating leaves), freezing at the leaf cap, and whether the state
// has room for the next row.
//
// Invariant: a pass learns a row only after ``room`` said yes (a split, an alternate and the
// observers' bins of the row then fit in the arrays as they are); Python grows the arrays when
// it said no (engine/tree_lifecycle.py ``make_room``, the same counts).
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree {

/// Stop observing at ``leaf`` (its bins freed) for the memory budget.
void deactivate(const TreeRef& st, i64 leaf);

/// Deactivate the least promising active leaves until ``need`` bins (or 1/8 of the pool) are
/// free; false if that is impossible.
bool enforce_bin_budget(const TreeRef& st, i64 need);

/// After a split freed bins: the most promising leaf deactivated for lack of bins observes
/// again when a quarter of a full pool is free.
void reactivate(const TreeRef& st, ParamRef prm);

/// ``max_leaves`` reached: every observer freed, no more splits.
void freeze(const TreeRef& st);

/// Whether the observers have a bin free for each feature (may free the bins of the least
/// promising leaves under the budget): the observers rule's ``bin_room``.
bool observer_bin_room(const TreeRef& st, ParamRef prm, i64 nfeat);

/// The default ``bin_room``: no bins needed.
bool no_bins_needed(const TreeRef& st, ParamRef prm, i64 nfeat);

/// The default ``room``: a tree that grows has room for a split (nodes, leaf slots, category
/// room) and for the rule's statistics of one row.
bool room_growing(const TreeRef& st, ParamRef prm);

/// True if one more example can be learnt without growing any array (the rule's ``room``).
inline bool room(const TreeRef& st, ParamRef prm) { return st.kind.rule->room(st, prm); }

}  // namespace sf::tree
