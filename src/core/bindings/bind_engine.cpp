// Bindings of the forest engine's passes (streamforest/engine/kernels.py's entry points).
#include "bindings/arrays.hpp"
#include "engine/bagging.hpp"

namespace sf::bind {

void bind_engine(nb::module_& m) {
  m.attr("AGG_MEAN") = engine::AGG_MEAN;
  m.attr("AGG_MEDIAN") = engine::AGG_MEDIAN;
  m.attr("AGG_WEIGHTED") = engine::AGG_WEIGHTED;
  m.def("draw_weights", [](Array<u64> frng, double lam, Array<const double> w, Array<double> out) {
    auto o = mat(out, "out");
    auto wv = vec(w, "w");
    if (frng.ndim() != 1 || frng.shape(0) < 1) throw nb::value_error("frng: a 1-d uint64 state");
    if (o.cols() < wv.size()) throw nb::value_error("out: fewer columns than rows of w");
    u64& state = frng.data()[0];
    nb::gil_scoped_release release;
    engine::draw_weights(state, lam, wv, o);
  }, nb::arg("frng").noconvert(), nb::arg("lam"), nb::arg("w"), nb::arg("out").noconvert(),
     "``out[t, i]``: bagging weight of row i for tree t, drawn row by row, tree by tree.");
  m.def("mean_columns", [](Array<const double> P, Array<double> out) {
    auto p = mat(P, "P");
    auto o = vec(out, "out");
    if (o.size() < p.cols()) throw nb::value_error("out: fewer items than columns of P");
    if (p.rows() == 0) throw nb::value_error("P: no tree");
    nb::gil_scoped_release release;
    engine::mean_columns(Mat<const double>(p.data, p.n0, p.n1), o);
  }, nb::arg("P"), nb::arg("out").noconvert(),
     "``out[i]``: the mean of ``P[:, i]``, summed over the trees in order.");
}

}  // namespace sf::bind
