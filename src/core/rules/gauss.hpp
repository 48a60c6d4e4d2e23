// The Gaussian split rule of VFDT (River's GaussianSplitter): ported from the ``SPLIT_GAUSS`` part
// of the numba-era streamforest/tree_kinds/class_splitting.py and of classification.py's
// ``_gauss_class_learns`` (the rule's line in the rules' table is ``gauss_rule`` below).
//
// The rule keeps no statistics of its own: it splits from the naive Bayes statistics of the
// leaf (leaves/class_leaves.hpp).  Every grace period of weight at an impure leaf it scores,
// per feature it may split on, ten thresholds evenly spaced between the smallest and largest
// value seen at the leaf (``lf_range``) by the information gain of the class weights each side
// would get under the per-class Gaussians (``lf_class_stats``), and each category of a nominal
// feature sent left against the rest (``lf_nominal_class_weights``); it splits on the best when
// ``IG(best) - IG(second) > eps`` or ``eps < tau`` (or freezes the tree at ``max_leaves``).
// Children start with the class weights of their side and empty naive Bayes statistics.
//
// Invariant: a nominal split lists the category sent left, then the categories seen at the
// leaf sent right (sorted), in ``cats``; a category unseen there goes as a missing value.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::rules {

/// The Gaussian split rule (classification only): what its line in the rules' table names.
const tree::SplitRule& gauss_rule();

struct FeatureSplit {
  double gain;  // -1: none
  double arg;   // the threshold, or the category code sent left (NaN: none)
};

/// ``(IG, threshold or category code)`` of the best split of feature ``j`` at ``leaf``.
FeatureSplit best_of_feature(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, i64 j,
                             i64 K);

/// The split attempt of ``leaf`` (see above).
void attempt_gauss(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf);

/// Split ``leaf`` on feature ``f`` at threshold (or category) ``arg``.
void split_gauss(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, i64 f, double arg);

/// The rule's part of learning a row at an active leaf: the split attempt, every grace period
/// of weight at an impure leaf (``class_learn_at_leaf``).
void gauss_class_learns(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x,
                        double y, double w, i64 nfeat);

}  // namespace sf::rules
