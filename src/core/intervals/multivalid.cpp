// Multivalid conformal intervals: the pass and the threshold (see multivalid.hpp).
#include "intervals/multivalid.hpp"

#include <cmath>
#include <limits>

#include "common/numeric.hpp"
#include "common/rng.hpp"
#include "intervals/groups.hpp"

namespace sf::intervals {

namespace {

inline constexpr double INF = std::numeric_limits<double>::infinity();
inline constexpr double NUISANCE = 1000.0;  // the paper's r: just below a bucket's edge

/// ``log(sum_S exp(sign a))`` and ``sum_S exp(sign a)`` of the row's cells at bucket b.
struct Side {
  double log_sum;
  double sum;
};

double weight(double count) {
  double l = std::log2(count + 2.0);
  return 1.0 / std::sqrt((count + 1.0) * (l * l));
}

/// The over- and under-coverage sums of bucket b (log-sum-exp, largest exponent first).
void sides(Vec<const i64> cells, i64 r, i64 b, double eta, Cube<double> v, Cube<double> n,
           Side& over, Side& under) {
  double top = -INF, bottom = INF;
  for (i64 k = -1; k < cells.size(); ++k) {
    i64 c = k < 0 ? 0 : cells[k];
    if (c <= 0 && k >= 0) continue;
    double a = eta * v(r, b, c) * weight(n(r, b, c));
    top = py_max(top, a);
    bottom = py_min(bottom, a);
  }
  double so = 0.0, su = 0.0;
  for (i64 k = -1; k < cells.size(); ++k) {
    i64 c = k < 0 ? 0 : cells[k];
    if (c <= 0 && k >= 0) continue;
    double a = eta * v(r, b, c) * weight(n(r, b, c));
    so += std::exp(a - top);
    su += std::exp(-a + bottom);
  }
  over.log_sum = top + std::log(so);
  under.log_sum = -bottom + std::log(su);
  over.sum = std::exp(over.log_sum);
  under.sum = std::exp(under.log_sum);
}

double uniform(i64 seed, i64 position) {
  u64 z = rng::mix64(static_cast<u64>(seed) * rng::GOLDEN + static_cast<u64>(position));
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace

double mvp_threshold(Vec<const i64> cells, i64 r, double eta, double draw, Cube<double> v,
                     Cube<double> n) {
  i64 B = v.n1;
  double B_d = static_cast<double>(B);
  bool all_negative = true;
  Side prev_over{0.0, 0.0}, prev_under{0.0, 0.0};
  double prev = 0.0;
  for (i64 b = 0; b < B; ++b) {
    Side over{}, under{};
    sides(cells, r, b, eta, v, n, over, under);
    double cmp = over.log_sum - under.log_sum;
    if (cmp > 0.0) all_negative = false;
    if (b != 0 && ((cmp >= 0.0 && prev <= 0.0) || (cmp <= 0.0 && prev >= 0.0))) {
      double c_prev = std::fabs(prev_over.sum - prev_under.sum);
      double c_curr = std::fabs(over.sum - under.sum);
      double z = c_prev + c_curr;
      double p_prev = z == 0.0 ? 1.0 : c_curr / z;
      double edge = static_cast<double>(b) / B_d;
      return draw <= p_prev ? edge - 1.0 / (NUISANCE * B_d) : edge;
    }
    prev = cmp;
    prev_over = over;
    prev_under = under;
  }
  return all_negative ? 1.0 : 0.0;
}

void mvp_pass(Mat<const i64> ids, Vec<const double> lo, Vec<const double> hi,
              Vec<const double> y, bool learn, Vec<const double> alphas, double eta, i64 seed,
              i64 start, Cube<double> v, Cube<double> n, Mat<double> out_lo,
              Mat<double> out_hi) {
  i64 rows = lo.size();
  i64 R = alphas.size();
  i64 B = v.n1;
  double B_d = static_cast<double>(B);
  for (i64 i = 0; i < rows; ++i) {
    Vec<const i64> cells = ids.row(i);
    bool finite = std::isfinite(lo[i]) && std::isfinite(hi[i]);
    double m = 0.5 * (lo[i] + hi[i]);
    double h = 0.5 * (hi[i] - lo[i]);
    double s = learn ? group_score(lo[i], hi[i], y[i]) : 0.0;
    for (i64 r = 0; r < R; ++r) {
      double draw = uniform(seed, (start + i) * R + r);
      double tau = mvp_threshold(cells, r, eta, draw, v, n);
      double t = tau >= 1.0 ? INF : tau / (1.0 - tau);
      if (!finite || t == INF) {
        out_lo(i, r) = -INF;
        out_hi(i, r) = INF;
      } else {
        out_lo(i, r) = m - t * h;
        out_hi(i, r) = m + t * h;
      }
      if (!learn || !finite) continue;
      double miss = s > t ? 1.0 : 0.0;
      i64 b = py_min(static_cast<i64>(tau * B_d + 0.5 / NUISANCE), B - 1);
      for (i64 k = -1; k < cells.size(); ++k) {
        i64 c = k < 0 ? 0 : cells[k];
        if (c <= 0 && k >= 0) continue;
        v(r, b, c) += alphas[r] - miss;
        n(r, b, c) += 1.0;
      }
    }
  }
}

}  // namespace sf::intervals
