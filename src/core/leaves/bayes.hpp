// ABORF's Bayesian leaves (thesis §6.2.1-6.2.2): conjugate linear regression with a
// normal-inverse-gamma prior, the ``bayes_*`` functions of
// streamforest/tree_kinds/leaf_models.py.
//
// OWNER: the `pregrown` helper fills this unit.  What the leaf models call of it is declared
// here; leaves/bayes.cpp holds placeholders until then.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::leaves {

/// The posterior mean of ``x`` at Bayesian ``leaf``.
double bayes_predict(const tree::TreeRef& st, i64 leaf, tree::Row x, i64 nfeat);

/// ``fold_leaf_model`` of a Bayesian leaf (its intercept; slopes into ``ft_linear``).
double bayes_fold(const tree::TreeRef& st, i64 leaf, i64 nfeat);

/// Learn ``(x, y, w)`` at a Bayesian leaf.
void bayes_learn(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x, double y,
                 double w, i64 nfeat);

}  // namespace sf::leaves
