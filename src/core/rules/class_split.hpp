// What the classification split rules share (the Gaussian split of VFDT, rules/gauss, and the
// extremely randomised split of ACTSER, rules/extra_classes): the information gain of a split
// from class weights, the Hoeffding bound on it, the class-index statistic of a side and the
// children's start (the C++ side of the shared part of streamforest/tree_kinds/
// class_splitting.py).
//
// ``xlx(v) = v log2 v`` reads a table for whole ``v < XLX_N`` (class weights are whole numbers
// with unit sample weights and Poisson bagging): the table holds the values ``v * log2(v)``
// gives, bit for bit, so it changes no result.
#pragma once

#include <cmath>

#include "common/numeric.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::rules {

inline constexpr i64 XLX_N = 4096;

/// ``i log2 i`` for ``0 <= i < XLX_N`` (0 for 0).
const double* xlx_table();

/// ``v log2 v`` (0 for ``v <= 0``).
inline double xlx(double v) {
  if (0.0 <= v && v < static_cast<double>(XLX_N)) {
    i64 i = to_i64(v);
    if (static_cast<double>(i) == v) return xlx_table()[i];
  }
  return v > 0.0 ? v * std::log2(v) : 0.0;
}

/// Information gain of a split from the side weights and the sums ``sum c log2 c`` of the
/// class weights of the parent (``P = L + R``) and of each side.
inline double gain(double pw, double lw, double rw, double sp, double sl, double sr) {
  return (xlx(pw) - xlx(lw) - xlx(rw) - sp + sl + sr) / pw;
}

/// The Hoeffding bound ``eps`` on information gains at ``leaf``: ``R = log2(classes seen)``
/// (at least 1), ``n`` the weight the leaf observed itself.
inline double bound(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf) {
  Mat<double> cw = st.lf_class_weights();
  i64 n_seen = 0;
  for (i64 k = 0; k < cw.cols(); ++k)
    if (cw(leaf, k) > 0.0) n_seen += 1;
  double r = std::log2(static_cast<double>(py_max(n_seen, i64{2})));
  double n = st.lf_stat()(leaf, tree::S_W) - st.lf_inherited()(leaf, tree::S_W);
  return std::sqrt(r * r * std::log(1.0 / prm.delta()) / (2.0 * n));
}

struct SideStat {
  double w, mean, m2;
};

/// ``(w, mean, m2)`` of the class index from ``w``, ``sum k c_k`` and ``sum k^2 c_k``.
inline SideStat side_stat(double w, double s1, double s2) {
  if (w <= 0.0) return {0.0, 0.0, 0.0};
  double m = s1 / w;
  return {w, m, py_max(0.0, s2 - w * m * m)};
}

/// The children of split node ``node`` (leaf slots ``left``, ``right``) start with empty
/// naive Bayes statistics; the node's detector starts now.
void children_start(const tree::TreeRef& st, i64 node, i64 left, i64 right);

}  // namespace sf::rules
