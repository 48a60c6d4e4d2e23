// Drift adaptation inside a tree: each split node's Page-Hinkley detector, alternate subtrees
// started at a drift, adopted when they do better, discarded otherwise (ATSER, Seah's thesis
// ch. 4): the C++ side of streamforest/tree_kinds/alternates.py.
//
// OWNER: the `alternates` helper fills this unit.  What the shared kernels call of it is
// declared here; tree/alternates.cpp holds placeholders until then.  (The tree's own drift
// detector step, alternates.py's ``drift_step``, is tree/regression.hpp's.)
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree {

/// Change detection and adaptation along the path of ``x`` (kinds with alternate subtrees):
/// true when an adoption took the example's leaf away (the adopted subtree has learnt it).
bool adapt(const TreeRef& st, ParamRef prm, Row x, double y, double w, double pred);

}  // namespace sf::tree
