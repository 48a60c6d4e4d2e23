// Bindings of the drift detectors (streamforest/drift.py's entry points).
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
}

}  // namespace sf::bind
