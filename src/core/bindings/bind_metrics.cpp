// Bindings of the prequential evaluator's block metrics (``accumulate``, called by
// streamforest/metrics.py and evaluate.py): every block a row will be added to checked
// first.
#include "bindings/arrays.hpp"
#include "bindings/zero_division.hpp"
#include "common/numeric.hpp"
#include "metrics/blocks.hpp"

namespace sf::bind {

void bind_metrics(nb::module_& m) {
  register_zero_division();
  m.attr("POINT") = metrics::POINT;
  m.attr("K") = metrics::K;
  m.def(
      "accumulate",
      [](Array<const double> y, Array<const double> pred, Array<const double> lo,
         Array<const double> hi, i64 first_row, i64 step, Array<double> blocks,
         Array<double> carry) {
        auto yv = vec(y, "y");
        auto pv = vec(pred, "pred");
        auto l = mat(lo, "lo");
        auto h = mat(hi, "hi");
        auto b = mat(blocks, "blocks");
        auto c = vec(carry, "carry");
        i64 n = yv.size(), A = l.cols();
        if (pv.size() < n || l.rows() < n || h.rows() < n || h.cols() < A)
          throw nb::value_error("pred, lo, hi: fewer rows (or levels) than y");
        if (c.size() < 4) throw nb::value_error("carry: expected four values");
        if (step < 1) throw nb::value_error("step: at least 1");
        if (first_row < 0) throw nb::value_error("first_row: at least 0");
        if (b.cols() < metrics::POINT + metrics::K * A)
          throw nb::value_error("blocks: fewer columns than the levels need");
        if (n > 0 && floordiv(first_row + (n - 1), step) >= b.rows())
          throw nb::value_error("blocks: no block for the last row");
        nb::gil_scoped_release release;
        metrics::accumulate(yv, pv, l, h, first_row, step, b, c);
      },
      nb::arg("y"), nb::arg("pred"), nb::arg("lo"), nb::arg("hi"), nb::arg("first_row"),
      nb::arg("step"), nb::arg("blocks").noconvert(), nb::arg("carry").noconvert(),
      "Add rows ``first_row ..`` to the blocks of ``step`` rows, updating the carried state.");
}

}  // namespace sf::bind
