// A Mondrian node's reading and statistics: routing a row, the tree's prediction (aggregated
// up the path), a node learning a target and its aggregation weights.
//
// Predicting routes a row to its leaf and averages up the path: from the leaf's prediction
// ``p``, each ancestor ``v`` gives ``p = a(v) p_v + (1 - a(v)) p`` (``a`` the node's mixing
// weight ``MIX``).  A node's prediction is the targets' mean (regression) or the
// Krichevsky-Trofimov (Dirichlet ``d``) class probabilities ``(n_k + d) / (n + d K)``.  A node
// that learns a row loses ``step * w * loss`` of log weight (the loss of its prediction before
// the row), and ``mix_up`` is the context-tree-weighting step
// ``log W(v) = log((exp(log w(v)) + exp(log W(left) + log W(right))) / 2)``.
//
// ``nodes`` here is one tree's records ``(C, R)``; a missing value (NaN) at a split goes to the
// child that has seen more weight (left on ties).
#pragma once

#include <cmath>
#include <limits>

#include "mondrian/layout.hpp"

namespace sf::mondrian {

// --- reading a row ------------------------------------------------------------------------------
/// The child of split node ``v`` that row ``x`` goes to.
inline i64 child_of(Mat<const double> nodes, i64 v, Vec<const double> x) {
  i64 left = to_i64(nodes(v, LEFT));
  i64 right = to_i64(nodes(v, RIGHT));
  double xv = x[wrap(to_i64(nodes(v, FEATURE)), x.size())];
  if (xv != xv)  // missing: the child that has seen more
    return nodes(left, COUNT) >= nodes(right, COUNT) ? left : right;
  return xv <= nodes(v, THRESHOLD) ? left : right;
}

/// The leaf that row ``x`` reaches.
inline i64 leaf_of(Mat<const double> nodes, Vec<const double> x) {
  i64 v = 0;
  while (nodes(v, LEFT) >= 0.0) v = child_of(nodes, v, x);
  return v;
}

/// ``out``: row ``x`` with the unseen categories of nominal features (codes < 0) as NaN and the
/// features it lacks as NaN; returns ``out`` cut to the features the trees know.  (``x`` may be
/// ``out`` itself.)
inline Vec<const double> clean_row(Vec<const i8> nominal, Vec<const double> x, Vec<double> out) {
  i64 P = py_min(nominal.size(), out.size());
  for (i64 j = 0; j < P; ++j) {
    double v = j < x.size() ? x[j] : std::numeric_limits<double>::quiet_NaN();
    out[j] = nominal[j] != 0 && v < 0.0 ? std::numeric_limits<double>::quiet_NaN() : v;
  }
  return Vec<const double>(out.data, P);
}

// --- predictions --------------------------------------------------------------------------------
/// The tree's prediction of a regression target for row ``x`` (0 while it is empty).
inline double predict_value(Mat<const double> nodes, const Params& params, Vec<const double> x) {
  i64 v = leaf_of(nodes, x);
  double p = nodes(v, VALUE);
  if (!params.aggregate) return p;
  while (v != 0) {
    v = to_i64(nodes(v, PARENT));
    double a = nodes(v, MIX);
    p = a * nodes(v, VALUE) + (1.0 - a) * p;
  }
  return p;
}

/// The tree's class probabilities for row ``x`` into ``out`` (``K`` entries): each node's
/// Dirichlet-smoothed class frequencies, aggregated up the path (uniform while it is empty).
inline void predict_classes(Mat<const double> nodes, const Params& params, Vec<const double> x,
                            Vec<double> out) {
  i64 K = out.size();
  double dK = params.dirichlet * static_cast<double>(K);
  double d = params.dirichlet;
  i64 v = leaf_of(nodes, x);
  double den = nodes(v, COUNT) + dK;
  for (i64 k = 0; k < K; ++k) out[k] = (nodes(v, VALUE + k) + d) / den;
  if (!params.aggregate) return;
  while (v != 0) {
    v = to_i64(nodes(v, PARENT));
    double a = nodes(v, MIX);
    den = nodes(v, COUNT) + dK;
    for (i64 k = 0; k < K; ++k) out[k] = a * ((nodes(v, VALUE + k) + d) / den) + (1.0 - a) * out[k];
  }
}

// --- statistics ---------------------------------------------------------------------------------
/// The loss of node ``v``'s prediction (before learning ``y``).
inline double node_loss(Mat<const double> nodes, const Params& params, i64 v, double y) {
  i64 K = params.classes;
  if (K == 0) {
    double r = nodes(v, VALUE) - y;
    return 0.5 * r * r;
  }
  double d = params.dirichlet;
  return -std::log((nodes(v, VALUE + to_i64(y)) + d) /
                   (nodes(v, COUNT) + d * static_cast<double>(K)));
}

/// Node ``v`` learns target ``y`` with weight ``w``: its log weight loses the loss of its
/// prediction (when ``weigh`` and aggregating; else it made none), then its statistics take it.
inline void take_stats(Mat<double> nodes, const Params& params, i64 v, double y, double w,
                       bool weigh) {
  if (weigh && params.aggregate)
    nodes(v, LOG_WEIGHT) -= params.step * w * node_loss(cview(nodes), params, v, y);
  double n = nodes(v, COUNT) + w;
  nodes(v, COUNT) = n;
  if (params.classes == 0) {
    double m = nodes(v, VALUE);
    nodes(v, VALUE) = m + w * (y - m) / n;
  } else {
    nodes(v, VALUE + to_i64(y)) += w;
  }
}

/// Whether every example of node ``v`` (none included) has class ``y``.
inline bool is_pure(Mat<const double> nodes, i64 v, double y) {
  return nodes(v, VALUE + to_i64(y)) >= nodes(v, COUNT);
}

/// Node ``v``'s subtree weight and mixing weight from its own and its children's.
inline void mix_up(Mat<double> nodes, i64 v) {
  double own = nodes(v, LOG_WEIGHT);
  double below = nodes(v, LEFT_TREE) + nodes(v, RIGHT_TREE);
  if (own > below) {
    double e = std::exp(below - own);
    nodes(v, LOG_TREE) = own + std::log1p(e) - LOG2;
    nodes(v, MIX) = 1.0 / (1.0 + e);
  } else {
    double e = std::exp(own - below);
    nodes(v, LOG_TREE) = below + std::log1p(e) - LOG2;
    nodes(v, MIX) = e / (1.0 + e);
  }
}

}  // namespace sf::mondrian
