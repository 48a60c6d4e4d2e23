// Compiled passes of the batch leaf-weight forests (HDIForestRegressor and
// QuantileForestRegressor, streamforest/batch/hdi_forest.py).
//
// A fitted forest is held as padded arrays, one row per tree: ``left``, ``right`` (child node
// ids, ``-1`` at a leaf), ``feature``, ``threshold`` and ``value`` (the node's mean target).
// The training targets are stored per tree sorted by (leaf, target) and the trees' blocks
// concatenated, so the targets of one leaf are a contiguous ascending run
// ``buf[start(t, leaf) : stop(t, leaf))``.  The conditional distribution at ``x``
// (Meinshausen 2006) gives every training row the weight
// ``(1/T) sum_t [leaf_t(x) = leaf_t(x_i)] / |leaf_t(x)|``: one run per tree with the item weight
// ``1 / (T |leaf|)``, read by the KLL sketches' run queries (sketch/kll.hpp).
//
// Invariants (the bindings check them): node ids and features read while walking a tree are
// inside the arrays (forest_apply checks each as it walks: a child outside the tree, a feature
// outside ``X`` or a walk longer than the tree throws ``std::invalid_argument``); every leaf a
// row reaches holding data has ``0 <= start < stop <= buf.size()``.
#pragma once

#include <stdexcept>
#include <vector>

#include "common/numeric.hpp"
#include "common/views.hpp"
#include "sketch/kll.hpp"

namespace sf::batch {

/// ``out(i, t)``: the leaf of tree ``t`` that row ``X.row(i)`` reaches (``x[f] <= c`` goes
/// left).
inline void forest_apply(Mat<const i64> left, Mat<const i64> right, Mat<const i64> feature,
                         Mat<const double> threshold, Mat<const double> X, Mat<i64> out) {
  i64 T = left.rows();
  i64 W = left.cols();
  i64 F = X.cols();
  for (i64 i = 0; i < X.rows(); ++i) {
    for (i64 t = 0; t < T; ++t) {
      i64 node = 0;
      i64 steps = 0;
      while (left(t, node) >= 0) {
        i64 f = feature(t, node);
        if (f < 0 || f >= F) throw std::invalid_argument("forest_apply: a feature outside X");
        if (X(i, f) <= threshold(t, node)) {
          node = left(t, node);
        } else {
          node = right(t, node);
        }
        steps += 1;
        if (node < 0 || node >= W || steps >= W)
          throw std::invalid_argument("forest_apply: a child outside its tree (or a cycle)");
      }
      out(i, t) = node;
    }
  }
}

/// ``out[i]``: the mean over trees of the value of the leaves ``leaves.row(i)``.
inline void forest_mean(Mat<const double> value, Mat<const i64> leaves, Vec<double> out) {
  i64 T = leaves.cols();
  for (i64 i = 0; i < leaves.rows(); ++i) {
    double s = 0.0;
    for (i64 t = 0; t < T; ++t) s += value(t, leaves(i, t));
    out[i] = s / static_cast<double>(T);
  }
}

/// For every row ``i`` of ``leaves`` (its leaf in each tree): the quantiles ``qs`` (into
/// ``out_q.row(i)``) and the highest-density intervals of the masses ``masses`` (into
/// ``out_lo.row(i)``, ``out_hi.row(i)``) of the Meinshausen-weighted training targets of its
/// leaves.
inline void leaf_mixture_query(Vec<const double> buf, Mat<const i64> start, Mat<const i64> stop,
                               Mat<const i64> leaves, Vec<const double> qs,
                               Vec<const double> masses, Mat<double> out_q, Mat<double> out_lo,
                               Mat<double> out_hi) {
  i64 T = leaves.cols();
  i64 cap = 0;
  for (i64 t = 0; t < T; ++t)
    for (i64 j = 0; j < start.cols(); ++j) cap = py_max(cap, stop(t, j) - start(t, j));
  auto n = [](i64 k) { return static_cast<size_t>(k); };
  std::vector<i64> rs(n(T)), re(n(T)), heap(n(T)), cur(n(T));
  std::vector<double> rw(n(T)), hv(n(T));
  i64 ns = masses.size() ? T * cap : 0;
  std::vector<double> sv(n(ns)), sw(n(ns));
  Vec<i64> vrs(rs.data(), T), vre(re.data(), T), vheap(heap.data(), T), vcur(cur.data(), T);
  Vec<double> vrw(rw.data(), T), vhv(hv.data(), T), vsv(sv.data(), ns), vsw(sw.data(), ns);
  for (i64 i = 0; i < leaves.rows(); ++i) {
    i64 nr = 0;
    for (i64 t = 0; t < T; ++t) {
      i64 leaf = leaves(i, t);
      if (stop(t, leaf) > start(t, leaf)) {
        vrs[nr] = start(t, leaf);
        vre[nr] = stop(t, leaf);
        nr += 1;
      }
    }
    double total = 0.0;
    for (i64 r = 0; r < nr; ++r) {  // every tree holding data weighs 1 / (trees holding data)
      vrw[r] = 1.0 / static_cast<double>((vre[r] - vrs[r]) * nr);
      total += vrw[r] * static_cast<double>(vre[r] - vrs[r]);
    }
    for (i64 k = 0; k < qs.size(); ++k)
      out_q(i, k) = sketch::runs_quantile_many(buf, vrs, vre, vrw, nr, total, qs[k], vhv, vcur,
                                               vheap);
    if (masses.size()) {
      i64 m = sketch::runs_sorted(buf, vrs, vre, vrw, nr, vheap, vcur, vsv, vsw);
      for (i64 k = 0; k < masses.size(); ++k) {
        auto iv = sketch::shortest_interval(vsv, vsw, m, masses[k]);
        out_lo(i, k) = iv.first;
        out_hi(i, k) = iv.second;
      }
    }
  }
}

}  // namespace sf::batch
