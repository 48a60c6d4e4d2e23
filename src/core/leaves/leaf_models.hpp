// Leaf models of the online regression tree: mean, linear (RMSProp) and adaptive (the C++ side
// of streamforest/tree_kinds/leaf_models.py; the Bayesian leaves are leaves/bayes.hpp).
//
// - mean: the weighted mean of the targets that reached the leaf;
// - linear: a linear model of the *standardised residual* of the leaf mean on inputs
//   standardised per leaf as in FIMT, ``x' = (x - mean_x) / (3 sd_x)``, trained by RMSProp:
//   ``y_hat = mean_y + sd_y (b + sum_j w_j x'_j)``; when the leaf's spread moves, the
//   coefficients are rescaled by ``sd_old / sd_new``.  Missing values (NaN, beyond HUGE_X) and
//   nominal features contribute 0;
// - adaptive: whichever of the two has the smaller faded absolute error at the leaf.
// On a split the children inherit the parent's model, rescaled to the same function.
//
// Invariant: ``nfeat <= `` the feature columns of the leaf fields and of ``x`` (checked by
// the bindings for rows, by the arena's layout for the fields).
#pragma once

#include <cmath>
#include <limits>

#include "common/stats.hpp"
#include "leaves/bayes.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::leaves {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

inline constexpr double HUGE_X = 1e100;       // beyond it, a feature value is missing here
inline constexpr double MAX_LEARN_Z = 1e50;   // learning clips a standardised input to it
inline constexpr double MAX_INHERIT_RATIO = 5.0;

struct MeanSd {
  double mean, sd;
};

inline MeanSd target_mean_sd(const TreeRef& st, i64 leaf) {
  Mat<double> s = st.lf_stat();
  double w = s(leaf, tree::S_W);
  if (w <= 0.0) return {0.0, 0.0};
  double mean = s(leaf, tree::S_HI) + s(leaf, tree::S_LO);
  double m2 = s(leaf, tree::S_M2);
  return {mean, m2 > 0.0 ? std::sqrt(m2 / w) : 0.0};
}

/// FIMT standardisation of feature ``j`` at ``leaf``; 0 for missing (NaN or beyond HUGE_X),
/// nominal or unknown spread.
inline double standardised(const TreeRef& st, i64 leaf, i64 j, double x) {
  if (!(std::fabs(x) <= HUGE_X) || st.ft_nominal()[j]) return 0.0;
  Cube<double> lx = st.lf_x();
  double w = lx(leaf, j, tree::S_W);
  double m2 = lx(leaf, j, tree::S_M2);
  if (w <= 0.0 || m2 <= 0.0) return 0.0;
  return (x - (lx(leaf, j, tree::S_HI) + lx(leaf, j, tree::S_LO))) / (3.0 * std::sqrt(m2 / w));
}

/// ``b + sum_j w_j x'_j`` (the standardised residual) at ``leaf`` for row ``x``.
inline double linear_raw(const TreeRef& st, i64 leaf, Row x, i64 nfeat) {
  Mat<double> c = st.lf_coef();
  double z = c(leaf, 0);
  for (i64 j = 0; j < nfeat; ++j)
    if (c(leaf, j + 1) != 0.0) z += c(leaf, j + 1) * standardised(st, leaf, j, x[j]);
  return z;
}

/// The leaf's prediction for row ``x``.
inline double predict_leaf(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat) {
  i64 lm = prm.leaf_model();
  if (lm == tree::LEAF_BAYES) {
    if (st.kind.has.bayes) return bayes_predict(st, leaf, x, nfeat);
    return std::numeric_limits<double>::quiet_NaN();
  }
  MeanSd ms = target_mean_sd(st, leaf);
  if (lm == tree::LEAF_MEAN || ms.sd == 0.0) return ms.mean;
  Mat<double> err = st.lf_err();
  if (lm == tree::LEAF_ADAPTIVE && err(leaf, 1) >= err(leaf, 0)) return ms.mean;
  return ms.mean + ms.sd * linear_raw(st, leaf, x, nfeat);
}

/// Features whose standardised inputs a prequential step keeps from its prediction for its
/// learning (``predict_leaf_keeping``); a tree of more features standardises them twice.
inline constexpr i64 KEEP_MAX = 64;

/// ``predict_leaf`` that also keeps, in ``zs[:nfeat]``, the leaf's standardised inputs of
/// ``x`` (every feature's, ``standardised``) for ``learn_leaf_model`` of the same row at the
/// same leaf next, unchanged meanwhile; returns whether it kept them (a linear or adaptive
/// leaf of positive spread: the leaves that standardise when learning).  The prediction is
/// ``predict_leaf``'s (the same operations on the same operands).
inline double predict_leaf_keeping(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat,
                                   double* zs, bool& kept) {
  kept = false;
  i64 lm = prm.leaf_model();
  if ((lm != tree::LEAF_LINEAR && lm != tree::LEAF_ADAPTIVE) || nfeat > KEEP_MAX)
    return predict_leaf(st, prm, leaf, x, nfeat);
  MeanSd ms = target_mean_sd(st, leaf);
  if (!(ms.sd > 0.0)) return predict_leaf(st, prm, leaf, x, nfeat);
  for (i64 j = 0; j < nfeat; ++j) zs[j] = standardised(st, leaf, j, x[j]);
  kept = true;
  Mat<double> err = st.lf_err();
  if (lm == tree::LEAF_ADAPTIVE && err(leaf, 1) >= err(leaf, 0)) return ms.mean;
  Mat<double> c = st.lf_coef();
  double z = c(leaf, 0);
  for (i64 j = 0; j < nfeat; ++j)
    if (c(leaf, j + 1) != 0.0) z += c(leaf, j + 1) * zs[j];
  return ms.mean + ms.sd * z;
}

/// The leaf's target spread once ``(y, w)`` has entered its statistic.
inline double spread_after(const TreeRef& st, i64 leaf, double y, double w) {
  Mat<double> s = st.lf_stat();
  stats::Stat u = stats::welford_update(s(leaf, tree::S_W), s(leaf, tree::S_HI),
                                        s(leaf, tree::S_LO), s(leaf, tree::S_M2), y, w);
  return u.m2 > 0.0 && u.w > 0.0 ? std::sqrt(u.m2 / u.w) : 0.0;
}

/// Add ``(x_j, w)`` to each numeric feature's statistic at ``leaf`` (missing values skipped):
/// welford_update written out so that the step ``w / (w_j + w)`` is divided once for features
/// of equal weights (the same operations on the same operands).
inline void feature_stats(const TreeRef& st, i64 leaf, Row x, double w, i64 nfeat) {
  Cube<double> s = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  double w_prev = -1.0;
  double w_new = 0.0;
  double step = 0.0;
  for (i64 j = 0; j < nfeat; ++j) {
    double xj = x[j];
    if (std::fabs(xj) <= HUGE_X && !nominal[j]) {  // (not missing: NaN fails it)
      double wj = s(leaf, j, 0);
      if (wj != w_prev) {
        w_prev = wj;
        w_new = wj + w;
        step = w / w_new;
      }
      double hi = s(leaf, j, 1);
      double lo = s(leaf, j, 2);
      double d = (xj - hi) - lo;
      stats::Pair p = stats::add_to_mean(hi, lo, d * step);
      hi = p.hi;
      lo = p.lo;
      s(leaf, j, 0) = w_new;
      s(leaf, j, 1) = hi;
      s(leaf, j, 2) = lo;
      s(leaf, j, 3) = s(leaf, j, 3) + w * d * ((xj - hi) - lo);
    }
  }
}

/// Update the leaf's model(s) with ``(x, y, w)`` (the target statistic is updated by the
/// caller, after); ``zs``: the standardised inputs ``predict_leaf_keeping`` kept for this row
/// at this leaf, or null.
inline void learn_leaf_model(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y,
                             double w, i64 nfeat, const double* zs = nullptr) {
  i64 lm = prm.leaf_model();
  if (lm == tree::LEAF_BAYES) {
    if (st.kind.has.bayes) bayes_learn(st, prm, leaf, x, y, w, nfeat);
    return;
  }
  if (lm == tree::LEAF_MEAN) return;
  MeanSd ms = target_mean_sd(st, leaf);
  double mean = ms.mean, sd = ms.sd;
  if (sd > 0.0) {
    // standardise each feature once (kept in the scratch column ft_linear[:, 0])
    Mat<double> xs_ = st.ft_linear();
    Mat<double> c = st.lf_coef();
    double z = c(leaf, 0);
    for (i64 j = 0; j < nfeat; ++j) {
      double zj = zs != nullptr ? zs[j] : standardised(st, leaf, j, x[j]);
      xs_(j, 0) = py_min(py_max(zj, -MAX_LEARN_Z), MAX_LEARN_Z);
      if (c(leaf, j + 1) != 0.0) z += c(leaf, j + 1) * xs_(j, 0);
    }
    if (lm == tree::LEAF_ADAPTIVE) {
      Mat<double> err = st.lf_err();
      double f = prm.fading();
      err(leaf, 0) = f * err(leaf, 0) + w * std::fabs(y - mean);
      err(leaf, 1) = f * err(leaf, 1) + w * std::fabs(y - (mean + sd * z));
    }
    double e = z - (y - mean) / sd;  // gradient of 0.5 e^2 w.r.t. the raw output
    double coef_decay = prm.coef_decay();
    if (coef_decay != 1.0)  // ABORF (thesis Alg. 6.2): previous steps fade
      for (i64 j = 0; j < nfeat + 1; ++j) c(leaf, j) *= coef_decay;
    Mat<double> g = st.lf_rmsprop();
    double dec = prm.rms_decay();
    double lr = prm.lr();
    double eps = prm.rms_eps();
    g(leaf, 0) = dec * g(leaf, 0) + (1.0 - dec) * e * e;
    c(leaf, 0) -= lr * w * e / std::sqrt(g(leaf, 0) + eps);
    for (i64 j = 0; j < nfeat; ++j) {
      double xs = xs_(j, 0);
      if (xs != 0.0) {
        double gj = e * xs;
        g(leaf, j + 1) = dec * g(leaf, j + 1) + (1.0 - dec) * gj * gj;
        c(leaf, j + 1) -= lr * w * gj / std::sqrt(g(leaf, j + 1) + eps);
      }
    }
    // the example is about to enter the target statistic: keep the learnt function
    // ``sd * (b + sum_j w_j x'_j)`` as it is when the spread moves
    double sd_new = spread_after(st, leaf, y, w);
    if (sd_new > 0.0 && sd_new != sd) {
      double r = sd / sd_new;
      for (i64 j = 0; j < nfeat + 1; ++j) c(leaf, j) *= r;
    }
  }
  // feature statistics: the normaliser of the linear model
  feature_stats(st, leaf, x, w, nfeat);
}

/// Copy the parent's model state into ``child`` (whose target statistic is set), rescaled so
/// that the child's linear function is the parent's at split time (a child whose spread is
/// below 1 / MAX_INHERIT_RATIO of the parent's starts with a zero model).
void inherit_linear(const TreeRef& st, i64 parent, i64 child, double p_mean, double p_sd);

struct Folded {
  double a;
  bool linear;
};

/// The leaf's model folded into ``y = a + sum_j ft_linear[j, 0] (x_j - ft_linear[j, 1])``
/// (``linear`` false: the prediction is ``a`` for every row).
Folded fold_leaf_model(const TreeRef& st, ParamRef prm, i64 leaf, i64 nfeat);

/// A folded leaf model's prediction for ``x``.
inline double folded_predict(const TreeRef& st, double a, Row x, i64 nfeat) {
  Mat<double> fl = st.ft_linear();
  double z = a;
  for (i64 j = 0; j < nfeat; ++j) {
    double b = fl(j, 0);
    if (b != 0.0) {
      double xj = x[j];
      if (std::fabs(xj) <= HUGE_X) z += b * (xj - fl(j, 1));  // (not missing: NaN fails it)
    }
  }
  return z;
}

}  // namespace sf::leaves
