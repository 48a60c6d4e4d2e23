// ABORF's Bayesian leaves (see bayes.hpp).
#include "leaves/bayes.hpp"

#include <math.h>  // lgamma_r: std::lgamma sets the global signgam

#include "common/numeric.hpp"
#include "common/stats.hpp"
#include "leaves/leaf_models.hpp"

namespace sf::leaves {

using namespace tree;

namespace {

inline constexpr double PI = 3.141592653589793;  // np.pi

struct Pair {
  double hi, lo;
};

/// The leaf's running target mean ``m_y`` as its pair ``(hi, lo)`` (``(0, 0)`` when empty).
inline Pair centre(const TreeRef& st, i64 leaf) {
  Mat<double> s = st.lf_stat();
  if (s(leaf, S_W) <= 0.0) return {0.0, 0.0};
  return {s(leaf, S_HI), s(leaf, S_LO)};
}

/// ``u = L^-1 A[:P, col]`` in place (``L`` the lower Cholesky factor in ``A[:P, :P]``); returns
/// ``|u|^2``.
inline double forward_solve(Mat<double> A, i64 P, i64 col) {
  double uu = 0.0;
  for (i64 i = 0; i < P; ++i) {
    double v = A(i, col);
    for (i64 k = 0; k < i; ++k) v -= A(i, k) * A(k, col);
    v /= A(i, i);
    A(i, col) = v;
    uu += v * v;
  }
  return uu;
}

/// Move column ``k`` of every row in the scatter by ``r``: ``M <- E M E^T`` with ``E = I + r
/// e_k e_1^T`` (the intercept is column 1).
inline void nig_shift(Cube<double> M, i64 leaf, i64 k, double r, i64 n) {
  for (i64 i = 0; i < n; ++i) M(leaf, k, i) += r * M(leaf, 1, i);
  for (i64 i = 0; i < n; ++i) M(leaf, i, k) += r * M(leaf, i, 1);
}

inline double log_gamma(double x) {
  int sign = 0;
  return lgamma_r(x, &sign);
}

}  // namespace

double bayes_predict(const TreeRef& st, i64 leaf, Row x, i64 nfeat) {
  Mat<double> c = st.lf_coef();
  Cube<double> lx = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  double z = c(leaf, 0);
  for (i64 j = 0; j < nfeat; ++j) {
    double b = c(leaf, j + 1);
    if (b != 0.0) {  // 0 for a feature without spread (exactly, see nig_solve)
      double xj = x[j];
      if (std::fabs(xj) <= HUGE_X) {  // (not missing: NaN fails it)
        Coords co = nig_coords(lx, nominal, leaf, j);
        z += b * ((xj - co.mean) * co.isd);
      }
    }
  }
  Pair m = centre(st, leaf);
  return m.hi + (m.lo + z);
}

double bayes_fold(const TreeRef& st, i64 leaf, i64 nfeat) {
  Mat<double> c = st.lf_coef();
  Mat<double> fl = st.ft_linear();
  Cube<double> lx = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    Coords co = nig_coords(lx, nominal, leaf, j);
    fl(j, 0) = c(leaf, j + 1) * co.isd;
    fl(j, 1) = co.mean;
  }
  Pair m = centre(st, leaf);
  return m.hi + (m.lo + c(leaf, 0));
}

NIG nig_solve(const TreeRef& st, ParamRef prm, i64 leaf, i64 nfeat) {
  Cube<double> M = st.lf_bayes();
  Mat<double> A = st.ft_bayes();
  Mat<double> fl = st.ft_linear();
  const i64 kr = A.cols() - 3;
  const i64 P = nfeat + 1;
  const double c = prm.nig_c();
  const double n = M(leaf, 1, 1);
  Cube<double> lx = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    Coords co = nig_coords(lx, nominal, leaf, j);
    fl(j, 0) = co.isd;
    fl(j, 1) = co.mean;
  }
  A(0, 0) = n + c;
  A(0, kr) = M(leaf, 0, 1);
  for (i64 j = 0; j < nfeat; ++j) {
    const i64 i = j + 1;
    double isd = fl(j, 0);
    if (isd == 0.0) {  // z_j = 0: a row of the prior only
      for (i64 k = 0; k < i; ++k) A(i, k) = 0.0;
      A(i, i) = c;
      A(i, kr) = 0.0;
      continue;
    }
    A(i, 0) = M(leaf, 1, 2 + j) * isd;
    A(i, kr) = M(leaf, 0, 2 + j) * isd;
    for (i64 k = 0; k < j + 1; ++k) A(i, k + 1) = M(leaf, 2 + j, 2 + k) * isd * fl(k, 0);
    A(i, i) += c;
  }
  // Cholesky factorisation in place (Lambda = L L^T, L in the lower triangle)
  for (i64 i = 0; i < P; ++i) {
    for (i64 k = 0; k < i + 1; ++k) {
      double v = A(i, k);
      for (i64 m = 0; m < k; ++m) v -= A(i, m) * A(k, m);
      if (i == k) {
        A(i, i) = v > 0.0 ? std::sqrt(v) : std::sqrt(c);  // (c I bounds it below)
      } else {
        A(i, k) = v / A(k, k);
      }
    }
  }
  // beta = Lambda^-1 r: L u = r, then L^T beta = u; beta^T Lambda beta = |u|^2
  double uu = forward_solve(A, P, kr);
  for (i64 i = P - 1; i > -1; --i) {
    double v = A(i, kr);
    for (i64 k = i + 1; k < P; ++k) v -= A(k, i) * A(k, kr);
    A(i, kr) = v / A(i, i);
  }
  double a = prm.nig_a0() + 0.5 * n;
  double b = prm.nig_b0() + 0.5 * py_max(M(leaf, 0, 0) - uu, 0.0);
  return {a, b};
}

double nig_log_predictive(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, i64 nfeat) {
  NIG ab = nig_solve(st, prm, leaf, nfeat);
  Mat<double> A = st.ft_bayes();
  Mat<double> fl = st.ft_linear();
  const i64 kr = A.cols() - 3;
  const i64 kz = kr + 1;
  const i64 P = nfeat + 1;
  A(0, kz) = 1.0;
  for (i64 j = 0; j < nfeat; ++j) {
    double xj = x[j];
    double isd = fl(j, 0);
    A(j + 1, kz) = isd != 0.0 && std::fabs(xj) <= HUGE_X ? (xj - fl(j, 1)) * isd : 0.0;
  }
  double m = 0.0;
  for (i64 i = 0; i < P; ++i) m += A(i, kr) * A(i, kz);
  double q = forward_solve(A, P, kz);  // |L^-1 (1, z)|^2
  double nu = 2.0 * ab.a;
  double s2 = ab.b / ab.a * (1.0 + q);
  Pair ctr = centre(st, leaf);
  double e = ((y - ctr.hi) - ctr.lo) - m;
  return log_gamma(0.5 * (nu + 1.0)) - log_gamma(0.5 * nu) - 0.5 * std::log(nu * PI * s2) -
         0.5 * (nu + 1.0) * std::log1p(e * e / (nu * s2));
}

void bayes_learn(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                 i64 nfeat) {
  Mat<double> ts = st.lf_stat();
  if (prm.ev_fade() > 0.0)
    st.lf_evidence()(leaf, LEV_TERM) =
        ts(leaf, S_W) > 0.0 ? nig_log_predictive(st, prm, leaf, x, y, nfeat) : 0.0;
  Cube<double> M = st.lf_bayes();
  const i64 n_m = nfeat + 2;
  // the target's mean after the row, as the caller's statistic will have it (same operands)
  stats::Stat t1 = stats::welford_update(ts(leaf, 0), ts(leaf, 1), ts(leaf, 2), ts(leaf, 3), y, w);
  const double hi1 = t1.hi, lo1 = t1.lo;
  if (ts(leaf, S_W) > 0.0) {  // (an empty leaf's scatter is 0: nothing to move)
    double r = (ts(leaf, S_HI) - hi1) + (ts(leaf, S_LO) - lo1);
    if (r != 0.0) nig_shift(M, leaf, 0, r, n_m);
  }
  Cube<double> s = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    double xj = x[j];
    if (std::fabs(xj) <= HUGE_X && !nominal[j]) {  // (not missing: NaN fails it)
      double w0 = s(leaf, j, 0), hi0 = s(leaf, j, 1), lo0 = s(leaf, j, 2);
      stats::Stat u = stats::welford_update(w0, hi0, lo0, s(leaf, j, 3), xj, w);
      s(leaf, j, 0) = u.w;
      s(leaf, j, 1) = u.hi;
      s(leaf, j, 2) = u.lo;
      s(leaf, j, 3) = u.m2;
      if (w0 > 0.0) {  // (its first value here: the rows before sit at it)
        double r = (hi0 - s(leaf, j, 1)) + (lo0 - s(leaf, j, 2));
        if (r != 0.0) nig_shift(M, leaf, 2 + j, r, n_m);
      }
    }
  }
  Mat<double> A = st.ft_bayes();
  const i64 kv = A.cols() - 1;
  A(0, kv) = (y - hi1) - lo1;
  A(1, kv) = 1.0;
  for (i64 j = 0; j < nfeat; ++j) {
    double xj = x[j];
    double v = 0.0;  // nominal, or missing: at the leaf's mean
    if (std::fabs(xj) <= HUGE_X && !nominal[j]) v = (xj - s(leaf, j, 1)) - s(leaf, j, 2);
    A(j + 2, kv) = v;
  }
  const double g = prm.nig_decay();
  for (i64 i = 0; i < n_m; ++i) {
    double wi = w * A(i, kv);
    for (i64 k = 0; k < i + 1; ++k) {
      double v = g * M(leaf, i, k) + wi * A(k, kv);
      M(leaf, i, k) = v;
      M(leaf, k, i) = v;
    }
  }
  NIG ab = nig_solve(st, prm, leaf, nfeat);
  const i64 kr = A.cols() - 3;
  Mat<double> coef = st.lf_coef();
  for (i64 i = 0; i < nfeat + 1; ++i) coef(leaf, i) = A(i, kr);
  Mat<double> err = st.lf_err();
  err(leaf, 0) = ab.a;
  err(leaf, 1) = ab.b;
}

}  // namespace sf::leaves
