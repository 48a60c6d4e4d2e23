// Bindings of the drift detectors' scans (tests and benchmarks).
#include "bindings/arrays.hpp"
#include "drift/page_hinkley.hpp"

namespace sf::bind {

void bind_drift(nb::module_& m) {
  m.attr("N_PH") = drift::N_PH;
  m.attr("N_SPH") = drift::N_SPH;
  m.attr("N_PHN") = drift::N_PHN;
  m.def("page_hinkley_scan", [](Array<double> state, Array<const double> y,
                                Array<const double> pred, double alpha, double lam, i64 warmup,
                                Array<i64> out) {
    auto s = vec(state, "state");
    auto yv = vec(y, "y");
    auto p = vec(pred, "pred");
    auto o = vec(out, "out");
    if (s.size() < drift::N_PH) throw nb::value_error("state: fewer items than N_PH");
    if (p.size() < yv.size() || o.size() < yv.size())
      throw nb::value_error("pred, out: fewer items than y");
    nb::gil_scoped_release release;
    drift::page_hinkley_scan(s, yv, p, alpha, lam, warmup, o);
  }, nb::arg("state").noconvert(), nb::arg("y"), nb::arg("pred"), nb::arg("alpha"),
     nb::arg("lam"), nb::arg("warmup"), nb::arg("out").noconvert(),
     "``out[i]``: the Page-Hinkley signal after row ``i``.");
  m.def("page_hinkley_standardised_scan", [](Array<double> state, Array<const double> e,
                                             double delta, double lam, double min_n,
                                             Array<i8> out) {
    auto s = vec(state, "state");
    auto ev = vec(e, "e");
    auto o = vec(out, "out");
    if (s.size() < drift::N_SPH) throw nb::value_error("state: fewer items than N_SPH");
    if (o.size() < ev.size()) throw nb::value_error("out: fewer items than e");
    nb::gil_scoped_release release;
    drift::page_hinkley_standardised_scan(s, ev, delta, lam, min_n, o);
  }, nb::arg("state").noconvert(), nb::arg("e"), nb::arg("delta"), nb::arg("lam"),
     nb::arg("min_n"), nb::arg("out").noconvert(),
     "``out[i]``: whether the standardised Page-Hinkley test fired after value ``i``.");
  m.def("page_hinkley_row_scan", [](Array<double> state, Array<const i64> rows,
                                    Array<const double> e, double alpha, double lam,
                                    Array<i8> out) {
    auto s = mat(state, "state");
    auto r = vec(rows, "rows");
    auto ev = vec(e, "e");
    auto o = vec(out, "out");
    if (s.cols() < drift::N_PHN) throw nb::value_error("state: fewer columns than N_PHN");
    if (r.size() < ev.size() || o.size() < ev.size())
      throw nb::value_error("rows, out: fewer items than e");
    for (i64 i = 0; i < ev.size(); ++i)
      if (r[i] < 0 || r[i] >= s.rows()) throw nb::index_error("rows: outside the state");
    nb::gil_scoped_release release;
    drift::page_hinkley_row_scan(s, r, ev, alpha, lam, o);
  }, nb::arg("state").noconvert(), nb::arg("rows"), nb::arg("e"), nb::arg("alpha"),
     nb::arg("lam"), nb::arg("out").noconvert(),
     "``out[i]``: whether the detector of row ``rows[i]`` fired on error ``e[i]``.");
}

}  // namespace sf::bind
