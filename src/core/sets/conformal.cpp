// ConformalClassifier's kernels (see conformal.hpp).
#include "sets/conformal.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "common/numeric.hpp"
#include "common/rng.hpp"
#include "common/sorting.hpp"
#include "intervals/scores.hpp"

namespace sf::sets {

namespace {

/// The conformal threshold at level ``alpha`` of ``m`` sorted scores: the
/// ``ceil((m + 1)(1 - alpha))``-th smallest, ``+inf`` if that exceeds ``m``.
double quantile(Vec<const double> srt, i64 m, double alpha) {
  i64 k = to_i64(std::ceil(static_cast<double>(m + 1) * (1.0 - alpha) - 1e-9));
  if (k < 1) k = 1;
  if (k > m) return std::numeric_limits<double>::infinity();
  return srt[k - 1];
}

void push(Vec<double> ring, Vec<double> srt, Vec<i64> state, double s) {
  i64 C = ring.size();
  i64 m = state[0];
  i64 pos = state[1];
  if (m == C) {  // full: the oldest score leaves
    double old = ring[pos];
    i64 j = intervals::searchsorted_left(srt, m, old);
    for (i64 k = j; k < m - 1; ++k) srt[k] = srt[k + 1];
    m -= 1;
  }
  i64 j = intervals::searchsorted_right(srt, m, s);
  for (i64 k = m; k > j; --k) srt[k] = srt[k - 1];
  srt[j] = s;
  ring[pos] = s;
  state[0] = m + 1;
  state[1] = pymod(pos + 1, C);
}

}  // namespace

void row_uniforms(i64 seed, i64 start, Vec<double> out) {
  u64 s = static_cast<u64>(seed) * rng::GOLDEN;
  for (i64 i = 0; i < out.size(); ++i) {
    // (start + i: int64 arithmetic in numba; wrapping here, where numba's would overflow)
    u64 z = rng::mix64(s + (static_cast<u64>(start) + static_cast<u64>(i)));
    out[i] = static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  }
}

void class_scores(Mat<const double> P, Vec<const double> U, Vec<const i64> known, i64 kind,
                  double penalty, i64 k_reg, Mat<double> out) {
  i64 n = P.rows(), K = P.cols();
  std::vector<double> negated(static_cast<size_t>(K));
  std::vector<i64> order(static_cast<size_t>(K));
  Vec<double> neg(negated.data(), K);
  Vec<i64> ord(order.data(), K);
  for (i64 i = 0; i < n; ++i) {
    i64 kn = known[i];
    for (i64 k = 0; k < kn; ++k) neg[k] = -P(i, k);
    sorting::argsort_into(neg, kn, ord);  // by decreasing probability, ties by column
    double cum = 0.0;
    for (i64 r = 0; r < kn; ++r) {
      i64 k = ord[r];
      double p = P(i, k);
      if (kind == LAC) {
        out(i, k) = 1.0 - p;
      } else {
        double s = cum + U[i] * p;
        if (kind == RAPS) s += penalty * static_cast<double>(py_max(i64{0}, r + 1 - k_reg));
        out(i, k) = s;
      }
      cum += p;
    }
    for (i64 k = kn; k < K; ++k)
      out(i, k) = std::numeric_limits<double>::quiet_NaN();  // not a column yet: in no set
    if (kind == LAC) {
      out(i, K) = 1.0;
    } else if (kind == APS) {
      out(i, K) = cum;
    } else {
      out(i, K) = cum + penalty * static_cast<double>(py_max(i64{0}, kn + 1 - k_reg));
    }
  }
}

void thresholds(Vec<const double> srt, Vec<const i64> state, Vec<const double> levels,
                Vec<double> out) {
  for (i64 j = 0; j < levels.size(); ++j) out[j] = quantile(srt, state[0], levels[j]);
}

void calibration_pass(Vec<const double> scores, Vec<const bool> use, Vec<const double> levels,
                      Vec<double> ring, Vec<double> srt, Vec<i64> state, Mat<double> thr) {
  for (i64 i = 0; i < scores.size(); ++i) {
    for (i64 j = 0; j < thr.cols(); ++j)
      thr(i, j) = quantile(Vec<const double>(srt.data, srt.n), state[0], levels[j]);
    if (use[i]) push(ring, srt, state, scores[i]);
  }
}

}  // namespace sf::sets
