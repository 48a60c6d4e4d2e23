// Bindings of the shared kernels: the generator, the running statistics, sorting, the label
// guard.
#include <nanobind/stl/tuple.h>

#include "arrays.hpp"
#include "common/label_guard.hpp"
#include "common/rng.hpp"
#include "common/sorting.hpp"
#include "common/stats.hpp"

namespace sf::bind {

namespace {

nb::tuple as_tuple(const stats::Stat& s) { return nb::make_tuple(s.w, s.hi, s.lo, s.m2); }

u64& state_of(Array<u64>& state) {
  if (state.ndim() != 1 || state.shape(0) < 1)
    throw nb::value_error("state: expected a 1-d uint64 array of at least one item");
  return state.data()[0];
}

}  // namespace

void bind_common(nb::module_& m) {
  m.def("mix64", &rng::mix64, nb::arg("z"));
  m.def("next_u64", [](Array<u64> state) { return rng::next_u64(state_of(state)); },
        nb::arg("state").noconvert());
  m.def("next_float", [](Array<u64> state) { return rng::next_float(state_of(state)); },
        nb::arg("state").noconvert());
  m.def("next_below", [](Array<u64> state, i64 n) {
    if (n < 1) throw nb::value_error("next_below: n must be >= 1");
    return rng::next_below(state_of(state), n);
  }, nb::arg("state").noconvert(), nb::arg("n"));

  m.def("welford_update", [](double w, double hi, double lo, double m2, double x, double wx) {
    return as_tuple(stats::welford_update(w, hi, lo, m2, x, wx));
  });
  m.def("chan_merge", [](double wa, double ha, double la, double m2a, double wb, double hb,
                         double lb, double m2b) {
    return as_tuple(stats::chan_merge(wa, ha, la, m2a, wb, hb, lb, m2b));
  });
  m.def("chan_subtract", [](double wab, double hab, double lab, double m2ab, double wb,
                            double hb, double lb, double m2b) {
    return as_tuple(stats::chan_subtract(wab, hab, lab, m2ab, wb, hb, lb, m2b));
  });
  m.def("stats_of", [](Array<const double> values, Array<const double> weights) {
    auto v = vec(values, "values");
    auto w = vec(weights, "weights");
    if (w.size() != 0 && w.size() < v.size())
      throw nb::value_error("stats_of: fewer weights than values");
    stats::Stat s;
    {
      nb::gil_scoped_release release;
      s = stats::stats_of(v, w);
    }
    return as_tuple(s);
  }, nb::arg("values"), nb::arg("weights"));

  m.def("argsort_into", [](Array<const double> values, i64 n, Array<i64> out) {
    auto v = vec(values, "values");
    auto o = vec(out, "out");
    need_items(v.size(), n, "values");
    need_items(o.size(), n, "out");
    nb::gil_scoped_release release;
    sorting::argsort_into(v, n, o);
  }, nb::arg("values"), nb::arg("n"), nb::arg("out").noconvert());
  m.def("sort_into", [](Array<double> values, i64 n) {
    auto v = vec(values, "values");
    need_items(v.size(), n, "values");
    nb::gil_scoped_release release;
    sorting::sort_into(v, n);
  }, nb::arg("values").noconvert(), nb::arg("n"));

  m.attr("GUARD_SIZE") = guard::GUARD_SIZE;
  m.attr("GUARD_WARMUP") = guard::GUARD_WARMUP;
  m.attr("GUARD_WIDTHS") = guard::GUARD_WIDTHS;
  m.attr("GUARD_RELAX") = guard::GUARD_RELAX;
  m.attr("GUARD_FLAGGED") = guard::G_FLAGGED;
  m.def("guard_label", [](Array<double> state, double y, double w) {
    auto s = vec(state, "state");
    need_items(s.size(), guard::GUARD_SIZE, "state");
    return guard::guard_label(s, y, w);  // (a handful of operations: the GIL is kept)
  }, nb::arg("state").noconvert(), nb::arg("y"), nb::arg("w"));
  m.def("guard_peek", [](Array<const double> state, double y, double w) {
    auto s = vec(state, "state");
    need_items(s.size(), guard::GUARD_SIZE, "state");
    return guard::guard_peek(s, y, w);  // (a handful of operations: the GIL is kept)
  }, nb::arg("state"), nb::arg("y"), nb::arg("w"));
  m.def("guard_labels", [](Array<double> state, Array<const double> y, Array<const double> w,
                           Array<double> y_out, Array<i8> flagged) {
    auto s = vec(state, "state");
    auto yv = vec(y, "y");
    auto wv = vec(w, "w");
    auto yo = vec(y_out, "y_out");
    auto fl = vec(flagged, "flagged");
    need_items(s.size(), guard::GUARD_SIZE, "state");
    need_items(wv.size(), yv.size(), "w");
    need_items(yo.size(), yv.size(), "y_out");
    need_items(fl.size(), yv.size(), "flagged");
    nb::gil_scoped_release release;
    return guard::guard_labels(s, yv, wv, yo, fl);
  }, nb::arg("state").noconvert(), nb::arg("y"), nb::arg("w"), nb::arg("y_out").noconvert(),
     nb::arg("flagged").noconvert());
}

}  // namespace sf::bind
