// The Gaussian baseline GaussianInterval over the forest's trees: each tree's prediction for a row and the spread
// of the targets in the leaf the row reaches, both read before the tree learns the row (so the
// chunked pass gives exactly the row-by-row, prequential result), then the interval
// ``mean +- z * sd`` of the forest's predictive variance.
//
// Invariants the bindings check: the trees are regression trees the core runs, rows hold their
// features, and every output holds the rows and levels a pass writes.
#pragma once

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::intervals {

/// The variance modes of ``gaussian_pass``.
inline constexpr i64 TREES = 0;
inline constexpr i64 MIXTURE = 1;
inline constexpr i64 CALIBRATED = 2;

/// Tree ``t``: ``P[i]`` its prediction for row i, ``V[i]`` the variance of the targets in the
/// leaf row i reaches (scaled by the linear model's squared error ratio with ``residual``),
/// ``N[i]`` that leaf's weight of targets, all taken before learning row i (with weight
/// ``w[i]``, when ``learn``).  Stops before a row when the tree lacks room, after a row that
/// made its drift detector fire; returns that row (``X.rows()``: all).
i64 gaussian_tree_pass(const tree::Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                       Vec<const double> w, i64 start, bool learn, bool residual, Vec<double> P,
                       Vec<double> V, Vec<double> N);

/// Rows in order: the mean of the trees' predictions ``P(:, i)``, their variance ``b``, the mean
/// leaf variance ``v`` of the trees whose leaf weighs at least ``min_weight``, the variance of the
/// mode (``TREES``: ``b``; ``MIXTURE``: ``v + b``; ``CALIBRATED``: ``kappa (v + b)``,
/// ``kappa = scale[0] / scale[1]``), the interval ``mean +- z[a] sd`` (``(-inf, inf)`` when the
/// variance is unknown); when ``learn`` (``CALIBRATED``) the row then moves ``scale``, unless its
/// ``y`` is NaN (a row the label guard set aside: a label is never NaN otherwise).
void gaussian_pass(Mat<const double> P, Mat<const double> V, Mat<const double> N,
                   Vec<const double> y, bool learn, double min_weight, i64 mode, double fading,
                   Vec<const double> z, Vec<double> scale, Vec<double> mean, Mat<double> lo,
                   Mat<double> hi);

/// For row ``x``, every tree's prediction, leaf variance and leaf weight into column 0 of ``P``,
/// ``V``, ``N`` (as ``gaussian_tree_pass`` takes them).
void gaussian_trees_one(const tree::Arena& A, Vec<const double> x, bool residual, Mat<double> P,
                        Mat<double> V, Mat<double> N);

/// The interval of row ``x`` at the levels of ``z`` (into row 0 of ``lo``, ``hi``); returns the
/// forest's mean prediction.
double gaussian_predict_one(const tree::Arena& A, Vec<const double> x, bool residual,
                            Mat<double> P, Mat<double> V, Mat<double> N, double min_weight,
                            i64 mode, Vec<const double> z, Vec<double> scale, Vec<double> mean,
                            Mat<double> lo, Mat<double> hi);

/// The engine's per-example step for GaussianInterval: the trees' predictions and leaf
/// variances read before they learn the row (``t0 == FRESH``), the trees learn it
/// (engine::learn_one), then the calibration scale follows.  Returns the status.
i64 gaussian_learn_one(const tree::Arena& A, u64& frng, double lam, Vec<const double> x,
                       double y, double w, Vec<double> wt, Vec<double> Pt, Vec<i8> drifted,
                       i64 t0, Mat<double> M, bool residual, Mat<double> P, Mat<double> V,
                       Mat<double> N, double min_weight, i64 mode, double fading,
                       Vec<const double> z0, Vec<double> scale, Vec<double> mean, Mat<double> lo,
                       Mat<double> hi, Vec<double> yb);

}  // namespace sf::intervals
