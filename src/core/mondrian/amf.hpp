// Aggregated Mondrian forests' passes (AMFRegressor, AMFClassifier): a tree learning a row, and the batch and per-example entry points over a forest's arrays (layout.hpp).
//
// Learning a row (the paper's Algorithm 1 with the weights' update of its Algorithm 2) walks
// down from the root; at each node ``v`` with range extension ``E > 0`` (split.hpp) a split
// time ``tau_v + Exp(E)`` is drawn, and when ``v`` is a leaf or the time comes before its
// children's birth, ``v`` splits and the walk stops at the new leaf.  Every node passed learns
// the row (node.hpp ``take_stats``); a new leaf's weight starts at 0.  Then, leaf to root,
// each node's subtree and mixing weights are recomputed (``mix_up``).
//
// Random draws come from each tree's own SplitMix64 state, in this order, for each node where
// a split is considered: the uniform of the exponential time; when it splits, the uniform
// choosing the feature, then the threshold's.  Trees are independent: a pass runs one tree
// (tree-major), a per-example call runs them in order, and both give the same trees.  Rows of
// weight 0 change nothing (not ``w > 0``: out of bag).
//
// Rows the kernels read are cleaned (``clean_row``): nominal features' unseen categories
// (codes < 0) are NaN.  Every entry point's arrays are checked by its binding before it runs
// (shapes, the record width ``VALUE + max(K, 1) + 2 P`` of the rows' ``P`` features, class
// indices of the rows learnt, room for a split).
#pragma once

#include "mondrian/layout.hpp"

namespace sf::mondrian {

/// Tree ``nodes`` (its records ``(C, R)``, ``meta`` and generator rows) learns row ``(x, y)``
/// with weight ``w``; the caller made room for two more nodes (or the tree is at its limit).
void learn_tree(Mat<double> nodes, Vec<i64> meta, u64& rng, Vec<double> extension,
                Vec<double> saved, const Params& params, Vec<const double> x, double y, double w);

/// Tree ``t`` learns rows ``start..`` of ``X`` with weights ``W[t]`` (predicting each into
/// ``P[t]`` first when ``predict``); returns the row it stopped before: ``n`` when done, else a
/// row before which the tree may lack room for two nodes.
i64 learn_rows(Cube<double> nodes, Mat<i64> meta, Mat<u64> rng, Mat<double> extension,
               Mat<double> saved, const Params& params, i64 t, Mat<const double> X,
               Vec<const double> y, Mat<const double> W, i64 start, bool predict, Mat<double> P);

/// ``P[t, i]``: tree ``t``'s prediction of a regression target for each row of ``X``.
void predict_rows(Cube<const double> nodes, const Params& params, i64 t, Mat<const double> X,
                  Mat<double> P);

/// ``P[t, i]``: tree ``t``'s class probabilities for each row of ``X`` (``P`` ``(T, n, K)``).
void predict_class_rows(Cube<const double> nodes, const Params& params, i64 t,
                        Mat<const double> X, Cube<double> P);

/// ``out[i]``: the leaf of tree ``t`` that row ``i`` of ``X`` reaches.
void apply_rows(Cube<const double> nodes, i64 t, Mat<const double> X, Vec<i64> out);

/// Every tree learns ``row`` (cleaned into ``clean`` first) and target ``y`` with weight
/// ``weights[t]`` (predicting it into ``out[t]`` first, plus ``shift``, when ``predict``), in
/// tree order.  Returns the most nodes a tree holds now.
i64 learn_one(Cube<double> nodes, Mat<i64> meta, Mat<u64> rng, Mat<double> extension,
              Mat<double> saved, const Params& params, Vec<const i8> nominal,
              Vec<const double> row, Vec<double> clean, double y, Vec<const double> weights,
              bool predict, double shift, Vec<double> out);

/// Each tree's prediction of a regression target for ``row``, plus ``shift``, into ``out[t]``;
/// returns their mean (summed in tree order).
double predict_one(Cube<const double> nodes, const Params& params, Vec<const i8> nominal,
                   Vec<const double> row, Vec<double> clean, double shift, Vec<double> out);

/// The mean of the trees' class probabilities for ``row`` into ``mean`` (``scratch``: one
/// tree's); returns the most probable class (the first on ties).
i64 predict_proba_one(Cube<const double> nodes, const Params& params, Vec<const i8> nominal,
                      Vec<const double> row, Vec<double> clean, Vec<double> scratch,
                      Vec<double> mean);

/// ``mean[i]``: the mean over the trees of ``P[:, i]`` (``(T, n, K)``), summed in tree order;
/// ``best[i]`` its most probable class (the first on ties).
void mean_probabilities(Cube<const double> P, Mat<double> mean, Vec<i64> best);

/// Rows of ``X`` with the unseen categories of nominal features (codes < 0) as NaN, in place.
void clean_rows(Vec<const i8> nominal, Mat<double> X);

}  // namespace sf::mondrian
