// Group-conditional calibration: the windows' pass (see groups.hpp).
#include "intervals/groups.hpp"

#include <cmath>
#include <limits>

#include "common/numeric.hpp"
#include "intervals/scores.hpp"

namespace sf::intervals {

namespace {
inline constexpr double INF = std::numeric_limits<double>::infinity();
}  // namespace

double group_score(double lo, double hi, double y) {
  if (!(std::isfinite(lo) && std::isfinite(hi))) return INF;
  double m = 0.5 * (lo + hi);
  double h = 0.5 * (hi - lo);
  double r = std::fabs(y - m);
  if (h > 0.0) return r / h;
  return r == 0.0 ? 0.0 : INF;
}

double group_threshold(Vec<const i64> cells, double alpha, Mat<const i64> meta,
                       Mat<const double> ss) {
  double pool = sorted_half_width(ss.row(0), meta(0, 1), alpha);
  bool any = false;
  double q = -INF;
  for (i64 f = 0; f < cells.size(); ++f) {
    i64 c = cells[f];
    double qf = pool;
    if (c > 0) {
      double own = sorted_half_width(ss.row(c), meta(c, 1), alpha);
      if (own != INF) qf = own;  // (a young group borrows the pool's)
    }
    q = any ? py_max(q, qf) : qf;
    any = true;
  }
  return any ? q : pool;
}

void group_push(i64 c, double v, Mat<i64> meta, Mat<i64> order, Mat<i64> pos, Mat<double> ss) {
  i64 W = ss.cols();
  i64 s = meta(c, 0);
  i64 n = meta(c, 1);
  meta(c, 0) = pymod(s + 1, W);
  Vec<i64> o = order.row(c);
  Vec<i64> p = pos.row(c);
  Vec<double> v_ss = ss.row(c);
  if (p[s] >= 0) {
    ss_update(o, p, v_ss, n, v, s);
  } else {
    meta(c, 1) = ss_insert(o, p, v_ss, n, v, s);
  }
}

void group_pass(Mat<const i64> ids, Vec<const double> lo, Vec<const double> hi,
                Vec<const double> y, bool learn, Vec<const double> alphas, Mat<i64> meta,
                Mat<i64> order, Mat<i64> pos, Mat<double> ss, Mat<double> out_lo,
                Mat<double> out_hi) {
  i64 n = lo.size();
  i64 A = alphas.size();
  Mat<const i64> cmeta(meta.data, meta.rows(), meta.cols());
  Mat<const double> css(ss.data, ss.rows(), ss.cols());
  for (i64 i = 0; i < n; ++i) {
    Vec<const i64> cells = ids.row(i);
    bool finite = std::isfinite(lo[i]) && std::isfinite(hi[i]);
    double m = 0.5 * (lo[i] + hi[i]);
    double h = 0.5 * (hi[i] - lo[i]);
    for (i64 a = 0; a < A; ++a) {
      double q = group_threshold(cells, alphas[a], cmeta, css);
      if (!finite || q == INF) {
        out_lo(i, a) = -INF;
        out_hi(i, a) = INF;
      } else {
        double half = q * h;
        out_lo(i, a) = m - half;
        out_hi(i, a) = m + half;
      }
    }
    if (!learn) continue;
    double v = group_score(lo[i], hi[i], y[i]);
    group_push(0, v, meta, order, pos, ss);
    for (i64 f = 0; f < cells.size(); ++f)
      if (cells[f] > 0) group_push(cells[f], v, meta, order, pos, ss);
  }
}

void group_set_pass(Mat<const i64> ids, Vec<const double> scores, Vec<const bool> use,
                    Vec<const double> alphas, Mat<i64> meta, Mat<i64> order, Mat<i64> pos,
                    Mat<double> ss, Mat<double> thr) {
  i64 n = scores.size();
  i64 A = thr.cols();
  Mat<const i64> cmeta(meta.data, meta.rows(), meta.cols());
  Mat<const double> css(ss.data, ss.rows(), ss.cols());
  for (i64 i = 0; i < n; ++i) {
    Vec<const i64> cells = ids.row(i);
    for (i64 a = 0; a < A; ++a) thr(i, a) = group_threshold(cells, alphas[a], cmeta, css);
    if (!use[i]) continue;
    group_push(0, scores[i], meta, order, pos, ss);
    for (i64 f = 0; f < cells.size(); ++f)
      if (cells[f] > 0) group_push(cells[f], scores[i], meta, order, pos, ss);
  }
}

}  // namespace sf::intervals
