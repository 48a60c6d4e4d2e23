// ABORF's Bayesian leaves (thesis §6.2.1-6.2.2): conjugate linear regression with a
// normal-inverse-gamma prior, the ``bayes_*`` / ``nig_*`` functions of the
// numba-era streamforest/tree_kinds/leaf_models.py.
//
// A leaf models ``y - m_y = (1, z) . beta + eps`` on its inputs standardised per leaf, ``z_j =
// (x_j - mean_j) / sd_j`` (0 for a nominal feature, one without spread at the leaf, one whose
// values there weigh less than NIG_MIN_W, or a missing value), prior ``beta | sigma^2 ~ N(0,
// sigma^2 / c I)``, ``sigma^2 ~ IG(a_0, b_0)``, each example's likelihood faded by ``gamma^age``
// (``nig_decay``) and raised to its weight.  The leaf keeps the faded weighted scatter of ``v =
// (y - m_y, 1, x - m_x)`` about its current means (``lf_bayes[leaf]``, ``(Pc + 2)^2``; the
// stored rows moved with the means as they change) and solves its posterior after each example
// by a Cholesky factorisation in the scratch ``ft_bayes`` (``(Pc + 2, Pc + 4)``: the factor in
// its first ``nfeat + 1`` columns, then ``beta``, the predictive's ``(1, z)``, the new row):
// ``beta`` into ``lf_coef``, ``(a, b)`` into ``lf_err``.  It predicts the posterior mean ``m_y +
// (1, z) . beta``; with the tree's evidence on, before learning a row it leaves the log density
// of its posterior predictive (Student t) in ``lf_evidence[leaf, LEV_TERM]``.
//
// Invariants: only trees of a kind with Bayesian leaves (``kind.has.bayes``, pre-grown trees)
// take these steps, and their fields are allocated for them (``lf_bayes``, ``ft_bayes`` above;
// ``nfeat <= Pc``); the scatter is symmetric.
#pragma once

#include <cmath>

#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::leaves {

inline constexpr double NIG_SD_RTOL = 1e-7;  // a feature's sd below this times |mean|: no spread
inline constexpr double NIG_MIN_W = 5.0;     // the weight of a feature's values before it counts

struct Coords {
  double mean, isd;
};

/// ``(mean, 1 / sd)`` of feature ``j`` at ``leaf``; ``1 / sd`` is 0 (``z_j = 0``) for a nominal
/// feature, one without spread at the leaf (an ``sd`` below NIG_SD_RTOL times the mean's
/// magnitude is rounding), or one whose values at the leaf weigh less than NIG_MIN_W.
inline Coords nig_coords(Cube<double> lx, Vec<i8> nominal, i64 leaf, i64 j) {
  if (nominal[j]) return {0.0, 0.0};
  double w = lx(leaf, j, tree::S_W);
  double m2 = lx(leaf, j, tree::S_M2);
  if (w < NIG_MIN_W || m2 <= 0.0) return {0.0, 0.0};
  double mean = lx(leaf, j, tree::S_HI) + lx(leaf, j, tree::S_LO);
  double sd = std::sqrt(m2 / w);
  if (sd <= NIG_SD_RTOL * std::fabs(mean)) return {0.0, 0.0};
  return {mean, 1.0 / sd};
}

inline Coords nig_coords(const tree::TreeRef& st, i64 leaf, i64 j) {
  return nig_coords(st.lf_x(), st.ft_nominal(), leaf, j);
}

struct NIG {
  double a, b;
};

/// The leaf's posterior in its current standardised coordinates from its scatter: ``Lambda``
/// factorised in place in ``ft_bayes[:P, :P]`` (lower Cholesky factor, ``P = nfeat + 1``),
/// ``beta`` in column ``ft_bayes.cols() - 3``, each feature's ``(1 / sd, mean)`` in
/// ``ft_linear``.  Returns ``(a, b)``.
NIG nig_solve(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, i64 nfeat);

/// Log density at ``y`` of the leaf's posterior predictive for ``x`` (before it learns them):
/// Student t, ``2 a`` degrees of freedom, location ``m_y + (1, z) . beta``, squared scale ``b /
/// a (1 + (1, z)^T Lambda^-1 (1, z))``.
double nig_log_predictive(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x,
                          double y, i64 nfeat);

/// The posterior mean of ``x`` at Bayesian ``leaf``.
double bayes_predict(const tree::TreeRef& st, i64 leaf, tree::Row x, i64 nfeat);

/// ``fold_leaf_model`` of a Bayesian leaf (its intercept; slopes into ``ft_linear``).
double bayes_fold(const tree::TreeRef& st, i64 leaf, i64 nfeat);

/// Learn ``(x, y, w)`` at a Bayesian leaf.
void bayes_learn(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x, double y,
                 double w, i64 nfeat);

}  // namespace sf::leaves
