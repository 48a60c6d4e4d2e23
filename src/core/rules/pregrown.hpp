// ABORF's pre-grown trees (Seah's thesis, ch. 6) and the evidence weights of trees and
// leaves: the C++ side of streamforest/tree_kinds/pregrown.py.
//
// OWNER: the `pregrown` helper fills this unit (its SplitRule, its kernels).  What the shared
// kernels call of it is declared here; rules/pregrown.cpp holds placeholders until then.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::rules {

/// Algorithm 6.3 for an example ``(y, w)`` that reached ``leaf`` (``pred`` the tree's
/// prediction before learning it): the tree's evidence learns the row.
void evidence_update(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, double y, double w,
                     double pred, i64 nfeat);

/// The mean of the tree predictions ``p`` weighted by the softmax of the trees' log evidence
/// weights read from arena ``A``.
double weighted_mean_at(const tree::Arena& A, Vec<const double> p);

}  // namespace sf::rules
