// Bindings of single steps and constants of the trees, for the tests that check them against
// their definitions (the thesis' algorithms, numpy): they read and write what the passes do.
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <vector>

#include "bindings/arena.hpp"
#include "leaves/bayes.hpp"
#include "leaves/class_leaves.hpp"
#include "rules/class_split.hpp"
#include "tree/classification.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::bind {

namespace {

/// Tree ``t`` of ``A``, a classification tree the core runs.
tree::TreeRef classification_tree(const tree::Arena& A, i64 t, i64 row_width) {
  tree::TreeRef st = runnable_tree(A, t, row_width);
  if (!st.kind.classification) throw nb::value_error("not a classification tree");
  return st;
}

}  // namespace

void bind_tree_checks(nb::module_& m) {
  m.attr("VAR_FLOOR") = leaves::VAR_FLOOR;
  m.attr("NIG_MIN_W") = leaves::NIG_MIN_W;
  m.attr("XLX_N") = rules::XLX_N;

  m.def("page_hinkley_01_scan", [](nb::handle A_, i64 t, i64 node, Array<const double> errors,
                                   Array<i8> out) {
    tree::Arena A = arena_of(A_);
    tree::TreeRef st = classification_tree(A, t, -1);
    Mat<double> det = st.nd_detector();
    if (node < 0 || node >= det.rows() || det.cols() < tree::N_NODE_PH_CLS)
      throw nb::index_error("node outside the tree's detectors");
    auto e = vec(errors, "errors");
    auto o = vec(out, "out");
    need_items(o.size(), e.size(), "out");
    tree::ParamRef prm = tree::params_at(A, t);
    nb::gil_scoped_release release;
    for (i64 i = 0; i < e.size(); ++i) {
      bool fired = tree::classification::page_hinkley_01(st, prm, node, e[i]);
      o[i] = fired ? 1 : 0;
      if (fired)
        for (i64 c = 0; c < det.cols(); ++c) det(node, c) = 0.0;  // a fresh detector
    }
  }, nb::arg("A"), nb::arg("t"), nb::arg("node"), nb::arg("errors"), nb::arg("out").noconvert(),
     "``out[i]``: whether split node ``node``'s detector of tree ``t`` (the thesis' Algorithm "
     "5.2 on 0/1 errors) fired at error ``i`` (restarted after each alarm).");

  m.def("mcnemar_verdict", &tree::classification::mcnemar_verdict, nb::arg("b"), nb::arg("c"),
        nb::arg("seen"), nb::arg("period"), nb::arg("crit"),
        "What a node does with its alternate: 1 adopt, -1 discard, 0 wait.");

  m.def("naive_bayes_classes", [](nb::handle A_, i64 t, Array<const double> X, Array<i64> out) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    tree::TreeRef st = classification_tree(A, t, x.cols());
    auto o = mat(out, "out");
    if (o.rows() < x.rows() || o.cols() < 2) throw nb::value_error("out: (rows, 2) expected");
    const i64 nfeat = st.ints()[tree::I_NFEAT];
    if (x.cols() < nfeat) throw nb::value_error("X: fewer columns than the tree's features");
    nb::gil_scoped_release release;
    Mat<double> cw = st.lf_class_weights();
    for (i64 i = 0; i < x.rows(); ++i) {
      tree::Row row(x.data + i * x.cols(), x.cols());
      i64 leaf = st.nd_leaf()[tree::route(st, row)];
      double total = 0.0;
      for (i64 k = 0; k < cw.cols(); ++k) total += cw(leaf, k);
      o(i, 0) = leaves::nb_class_fast(st, leaf, row, nfeat, total);
      o(i, 1) = leaves::nb_class(st, leaf, row, nfeat, total, 0);
    }
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("out").noconvert(),
     "Per row of ``X``: the naive Bayes class of its leaf of tree ``t`` by the certified fast "
     "path (-1: not certified) and by the per-feature loop.");

  m.def("xlx", &rules::xlx, nb::arg("v"), "``v log2 v`` (0 for ``v <= 0``), from the table "
        "for whole ``v < XLX_N``.");
  m.def("xlx_table", [] {
    const double* t = rules::xlx_table();
    return std::vector<double>(t, t + rules::XLX_N);
  }, "The table of ``i log2 i``, ``0 <= i < XLX_N``.");
}

}  // namespace sf::bind
