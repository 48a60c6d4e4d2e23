// GaussianInterval's passes (see gaussian.hpp).
#include "intervals/gaussian.hpp"

#include <cmath>
#include <limits>

#include "engine/passes.hpp"
#include "intervals/arith.hpp"
#include "leaves/leaf_models.hpp"
#include "tree/passes.hpp"
#include "tree/regression.hpp"
#include "tree/structure.hpp"

namespace sf::intervals {

namespace {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

/// Variance of the targets that reached ``leaf`` (their weighted M2 / weight); with
/// ``residual``, an adaptive leaf that predicts with its linear model scales it by the squared
/// ratio of the linear model's faded absolute error to the mean model's.
double leaf_variance(const TreeRef& st, ParamRef prm, i64 leaf, bool residual) {
  Mat<double> s = st.lf_stat();
  double w = s(leaf, tree::S_W);
  if (w <= 0.0) return 0.0;
  double v = s(leaf, tree::S_M2) / w;
  if (residual && prm.leaf_model() == tree::LEAF_ADAPTIVE) {
    Mat<double> err = st.lf_err();
    double e_mean = err(leaf, 0);
    double e_lin = err(leaf, 1);
    if (0.0 < e_lin && e_lin < e_mean) {  // the leaf predicts with its linear model
      double r = e_lin / e_mean;
      v *= r * r;
    }
  }
  return v;
}

}  // namespace

i64 gaussian_tree_pass(const tree::Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                       Vec<const double> w, i64 start, bool learn, bool residual, Vec<double> P,
                       Vec<double> V, Vec<double> N) {
  TreeRef st = tree::state_at(A, t);
  ParamRef prm = tree::params_at(A, t);
  const i64 nfeat = st.ints()[tree::I_NFEAT];
  Vec<i64> nd_leaf = st.nd_leaf();
  Mat<double> stat = st.lf_stat();
  for (i64 i = start; i < X.rows(); ++i) {
    if (learn && tree::needs_step(prm, w[i]) && !tree::has_room(st, prm)) return i;
    Row x = X.row(i);
    i64 node = tree::route(st, x);
    i64 leaf = nd_leaf[node];
    P[i] = leaves::predict_leaf(st, prm, leaf, x, nfeat);
    V[i] = leaf_variance(st, prm, leaf, residual);
    N[i] = stat(leaf, tree::S_W);
    if (learn && tree::learn_at(st, prm, node, x, y[i], w[i], P[i])) return i + 1;
  }
  return X.rows();
}

void gaussian_pass(Mat<const double> P, Mat<const double> V, Mat<const double> N,
                   Vec<const double> y, bool learn, double min_weight, i64 mode, double fading,
                   Vec<const double> z, Vec<double> scale, Vec<double> mean, Mat<double> lo,
                   Mat<double> hi) {
  const i64 T = P.rows(), n = P.cols();
  const i64 A = z.size();
  const double inf = std::numeric_limits<double>::infinity();
  for (i64 i = 0; i < n; ++i) {
    double m = 0.0;
    for (i64 t = 0; t < T; ++t) m += P(t, i);
    m = py_div(m, static_cast<double>(T));
    double b = 0.0;
    for (i64 t = 0; t < T; ++t) {
      double d = P(t, i) - m;
      b += d * d;
    }
    b = py_div(b, static_cast<double>(T));
    mean[i] = m;
    double var = b;
    if (mode != TREES) {
      i64 k = 0;
      double s = 0.0;
      for (i64 t = 0; t < T; ++t) {
        if (N(t, i) >= min_weight) {
          s += V(t, i);
          k += 1;
        }
      }
      var = k > 0 ? py_div(s, static_cast<double>(k)) + b
                  : std::numeric_limits<double>::quiet_NaN();
    }
    double shape = var;
    if (mode == CALIBRATED && scale[1] > 0.0) var = py_div(var * scale[0], scale[1]);
    if (std::isnan(var)) {
      for (i64 a = 0; a < A; ++a) {
        lo(i, a) = -inf;
        hi(i, a) = inf;
      }
    } else {
      double sd = std::sqrt(var);
      for (i64 a = 0; a < A; ++a) {
        lo(i, a) = m - z[a] * sd;
        hi(i, a) = m + z[a] * sd;
      }
    }
    if (learn && mode == CALIBRATED && shape > 0.0 && !std::isnan(y[i])) {  // (NaN shape: no)
      double r = y[i] - m;
      scale[0] = fading * scale[0] + py_div(r * r, shape);
      scale[1] = fading * scale[1] + 1.0;
    }
  }
}

void gaussian_trees_one(const tree::Arena& A, Vec<const double> x, bool residual, Mat<double> P,
                        Mat<double> V, Mat<double> N) {
  for (i64 t = 0; t < A.n_trees(); ++t) {
    TreeRef st = tree::state_at(A, t);
    ParamRef prm = tree::params_at(A, t);
    i64 node = tree::route(st, x);
    i64 leaf = st.nd_leaf()[node];
    P(t, 0) = leaves::predict_leaf(st, prm, leaf, x, st.ints()[tree::I_NFEAT]);
    V(t, 0) = leaf_variance(st, prm, leaf, residual);
    N(t, 0) = st.lf_stat()(leaf, tree::S_W);
  }
}

namespace {
template <class T>
Mat<const T> cm(Mat<T> m) {
  return Mat<const T>(m.data, m.n0, m.n1);
}
}  // namespace

double gaussian_predict_one(const tree::Arena& A, Vec<const double> x, bool residual,
                            Mat<double> P, Mat<double> V, Mat<double> N, double min_weight,
                            i64 mode, Vec<const double> z, Vec<double> scale, Vec<double> mean,
                            Mat<double> lo, Mat<double> hi) {
  gaussian_trees_one(A, x, residual, P, V, N);
  gaussian_pass(cm(P), cm(V), cm(N), const_view(mean), false, min_weight, mode, 1.0, z, scale,
                mean, lo, hi);
  return mean[0];
}

i64 gaussian_learn_one(const tree::Arena& A, u64& frng, double lam, Vec<const double> x,
                       double y, double w, Vec<double> wt, Vec<double> Pt, Vec<i8> drifted,
                       i64 t0, Mat<double> M, bool residual, Mat<double> P, Mat<double> V,
                       Mat<double> N, double min_weight, i64 mode, double fading,
                       Vec<const double> z0, Vec<double> scale, Vec<double> mean, Mat<double> lo,
                       Mat<double> hi, Vec<double> yb) {
  if (t0 == engine::FRESH) gaussian_trees_one(A, x, residual, P, V, N);
  i64 status = engine::learn_one(A, frng, lam, x, y, w, wt, Pt, drifted, t0, M);
  if (status >= 0) return status;
  yb[0] = y;
  gaussian_pass(cm(P), cm(V), cm(N), const_view(yb), true, min_weight, mode, fading, z0, scale,
                mean, lo, hi);
  return status;
}

}  // namespace sf::intervals
