// ConformalQRF's pass (see cqr.hpp).
#include "intervals/cqr.hpp"

#include <cmath>

#include "common/numeric.hpp"
#include "intervals/scores.hpp"

namespace sf::intervals {

i64 cqr_levels_pass(i64 size, Vec<i64> ring, Mat<double> cscore, Mat<i64> order, Mat<i64> pos,
                    Mat<double> ss, Mat<const double> base_lo, Mat<const double> base_hi,
                    Mat<const double> oob_lo, Mat<const double> oob_hi, Mat<const double> W,
                    Vec<const double> y, bool learn, Vec<const double> alphas, double aci_gamma,
                    Vec<double> alpha_t, Mat<double> half, Vec<const double> req,
                    Vec<const i64> req_base, Mat<double> req_half) {
  i64 A = alphas.size();
  i64 R = req.size();
  i64 c = ring[1];
  for (i64 i = 0; i < y.size(); ++i) {
    for (i64 a = 0; a < A; ++a) half(i, a) = sorted_half_width(ss.row(a), size, alpha_t[a]);
    for (i64 r = 0; r < R; ++r) {
      i64 b = req_base[r];
      req_half(i, r) = sorted_half_width(ss.row(b), size, req[r] + alpha_t[b] - alphas[b]);
    }
    if (!learn) continue;
    if (aci_gamma > 0.0) {
      for (i64 a = 0; a < A; ++a) {
        double lo = base_lo(i, a) - half(i, a);
        double hi = base_hi(i, a) + half(i, a);
        double err = (lo <= y[i] && y[i] <= hi) ? 0.0 : 1.0;
        alpha_t[a] += aci_gamma * (alphas[a] - err);
      }
    }
    bool oob = false;
    for (i64 t = 0; t < W.rows(); ++t)
      if (W(t, i) == 0.0) oob = true;
    if (!oob || std::isnan(oob_lo(i, 0))) continue;
    i64 s = ring[0];
    ring[0] = pymod(s + 1, c);
    bool evict = pos(0, s) >= 0;
    for (i64 a = 0; a < A; ++a) {
      cscore(a, s) = py_max(oob_lo(i, a) - y[i], y[i] - oob_hi(i, a));
      if (evict) {  // the new member replaces the evicted one in the sorted order
        ss_update(order.row(a), pos.row(a), ss.row(a), size, cscore(a, s), s);
      } else {
        ss_insert(order.row(a), pos.row(a), ss.row(a), size, cscore(a, s), s);
      }
    }
    if (!evict) size += 1;
  }
  return size;
}

}  // namespace sf::intervals
