// Bindings of the batch leaf-weight forests' passes.
#include <string>

#include "batch/kernels.hpp"
#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"

namespace sf::bind {

namespace {

template <class A, class B>
void same_shape(const Mat<A>& a, const Mat<B>& b, const char* name) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    fail(std::string(name) + ": not the shape of the forest's other arrays");
}

/// Every leaf id of ``leaves`` (rows of trees' leaves) inside ``[0, width)``, and a tree for
/// each of its columns.
void need_leaves(Mat<const i64> leaves, i64 trees, i64 width) {
  if (leaves.cols() > trees) fail("leaves: more trees than the forest has");
  for (i64 i = 0; i < leaves.rows(); ++i)
    for (i64 t = 0; t < leaves.cols(); ++t)
      if (leaves(i, t) < 0 || leaves(i, t) >= width) fail("leaves: a node outside its tree");
}

}  // namespace

void bind_batch(nb::module_& m) {
  m.def("forest_apply", [](Array<const i64> left, Array<const i64> right,
                           Array<const i64> feature, Array<const double> threshold,
                           Array<const double> X, Array<i64> out) {
    auto l = mat(left, "left"), r = mat(right, "right"), f = mat(feature, "feature");
    auto c = mat(threshold, "threshold");
    auto x = mat(X, "X");
    auto o = mat(out, "out");
    same_shape(l, r, "right");
    same_shape(l, f, "feature");
    same_shape(l, c, "threshold");
    if (o.rows() < x.rows() || o.cols() < l.rows()) fail("out: fewer rows or columns than needed");
    if (l.cols() < 1 && l.rows() > 0 && x.rows() > 0) fail("left: trees without a node");
    nb::gil_scoped_release release;
    batch::forest_apply(l, r, f, c, x, o);
  }, nb::arg("left"), nb::arg("right"), nb::arg("feature"), nb::arg("threshold"), nb::arg("X"),
     nb::arg("out").noconvert(),
     "``out[i, t]``: the leaf of tree ``t`` that row ``X[i]`` reaches (``x[f] <= c`` goes left).");

  m.def("forest_mean", [](Array<const double> value, Array<const i64> leaves, Array<double> out) {
    auto v = mat(value, "value");
    auto lv = mat(leaves, "leaves");
    auto o = vec(out, "out");
    need_leaves(lv, v.rows(), v.cols());
    need_items(o.size(), lv.rows(), "out");
    if (lv.cols() == 0 && lv.rows() > 0) fail("leaves: no tree");
    nb::gil_scoped_release release;
    batch::forest_mean(v, lv, o);
  }, nb::arg("value"), nb::arg("leaves"), nb::arg("out").noconvert(),
     "``out[i]``: the mean over trees of the value of the leaves ``leaves[i]``.");

  m.def("leaf_mixture_query", [](Array<const double> buf, Array<const i64> start,
                                 Array<const i64> stop, Array<const i64> leaves,
                                 Array<const double> qs, Array<const double> masses,
                                 Array<double> out_q, Array<double> out_lo,
                                 Array<double> out_hi) {
    auto b = vec(buf, "buf");
    auto s = mat(start, "start"), e = mat(stop, "stop");
    auto lv = mat(leaves, "leaves");
    auto q = vec(qs, "qs"), ms = vec(masses, "masses");
    auto oq = mat(out_q, "out_q"), olo = mat(out_lo, "out_lo"), ohi = mat(out_hi, "out_hi");
    same_shape(s, e, "stop");
    need_leaves(lv, s.rows(), s.cols());
    for (i64 t = 0; t < lv.cols(); ++t)
      for (i64 j = 0; j < s.cols(); ++j)
        if (e(t, j) > s(t, j) && (s(t, j) < 0 || e(t, j) > b.size()))
          fail("start, stop: a leaf's targets outside buf");
    i64 n = lv.rows();
    if (q.size() > 0 && (oq.rows() < n || oq.cols() < q.size()))
      fail("out_q: fewer rows or columns than needed");
    if (ms.size() > 0 && (olo.rows() < n || olo.cols() < ms.size() || ohi.rows() < n ||
                          ohi.cols() < ms.size()))
      fail("out_lo, out_hi: fewer rows or columns than needed");
    nb::gil_scoped_release release;
    batch::leaf_mixture_query(b, s, e, lv, q, ms, oq, olo, ohi);
  }, nb::arg("buf"), nb::arg("start"), nb::arg("stop"), nb::arg("leaves"), nb::arg("qs"),
     nb::arg("masses"), nb::arg("out_q").noconvert(), nb::arg("out_lo").noconvert(),
     nb::arg("out_hi").noconvert(),
     "Quantiles ``qs`` and highest-density intervals of ``masses`` of the Meinshausen-weighted "
     "training targets of each row's leaves.");
}

}  // namespace sf::bind
