// The evaluator's block metrics (see blocks.hpp).
#include "metrics/blocks.hpp"

#include <cmath>

#include "common/numeric.hpp"
#include "intervals/arith.hpp"

namespace sf::metrics {

void accumulate(Vec<const double> y, Vec<const double> pred, Mat<const double> lo,
                Mat<const double> hi, i64 first_row, i64 step, Mat<double> blocks,
                Vec<double> carry) {
  i64 n = y.size();
  i64 A = lo.cols();
  for (i64 i = 0; i < n; ++i) {
    i64 b = floordiv(first_row + i, step);
    Vec<double> row = blocks.row(b);
    double t = y[i];
    double e = t - pred[i];
    // baseline: mean of the targets before this one (0 before any)
    double be = t - carry[C_MEAN];
    carry[C_N] += 1.0;
    carry[C_MEAN] += py_div(be, carry[C_N]);
    if (t < carry[C_MIN]) carry[C_MIN] = t;
    if (t > carry[C_MAX]) carry[C_MAX] = t;
    double run_range = carry[C_MAX] - carry[C_MIN];
    // block statistics
    row[N] += 1.0;
    row[SAE] += std::fabs(e);
    row[SSE] += e * e;
    double d = t - row[YMEAN];
    row[YMEAN] += py_div(d, row[N]);
    row[YM2] += d * (t - row[YMEAN]);
    if (row[N] == 1.0 || t < row[YMIN]) row[YMIN] = t;
    if (row[N] == 1.0 || t > row[YMAX]) row[YMAX] = t;
    row[BAE] += std::fabs(be);
    row[BSE] += be * be;
    for (i64 a = 0; a < A; ++a) {
      i64 c = POINT + K * a;
      double low = lo(i, a);
      double up = hi(i, a);
      double width = up - low;
      if (t < low) {
        row[c + MISS] += 1.0;
        row[c + BELOW] += 1.0;
        row[c + BETA] += low - t;
      } else if (t > up) {
        row[c + MISS] += 1.0;
        row[c + BETA] += t - up;
      }
      if (std::isfinite(width)) {
        row[c + WSUM] += width;
        if (run_range > 0.0) {
          row[c + WRUN] += py_div(width, run_range);
        } else if (width > 0.0) {
          row[c + WRUN] += 1.0;
        }
      } else {
        row[c + NINF] += 1.0;
        row[c + WRUN] += 1.0;
      }
    }
  }
}

}  // namespace sf::metrics
