// The two-stage extremely randomised split of ATSER (Seah's thesis, ch. 4): the C++ side of
// streamforest/tree_kinds/extra_split.py.
//
// OWNER: the `extra` helper fills this unit (its SplitRule, its kernels).  What the shared
// kernels call of it is declared here; rules/extra.cpp holds placeholders until then.
#pragma once

namespace sf::rules {

/// The fixed random side of category ``code`` (a float code, -1 for unseen) under a
/// candidate's (or split node's) ``salt``.
bool cat_goes_left(double salt, double code);

}  // namespace sf::rules
