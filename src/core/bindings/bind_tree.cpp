// Bindings of the trees: the field and parameter tables the Python side must agree with, the
// state's constants, which tree kinds the core runs, and the trees' queries.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings/arena.hpp"
#include "leaves/leaf_models.hpp"
#include "rules/extra.hpp"
#include "rules/observers.hpp"
#include "tree/state.hpp"
#include "tree/tree_ref.hpp"

namespace sf::bind {

namespace {

/// Tree ``t`` for a query of a regression tree's observers or leaf model (a classification
/// tree has neither: its leaves' per-feature regression fields have no columns).
tree::TreeRef regression_tree(const tree::Arena& A, i64 t, i64 row_width) {
  tree::TreeRef st = runnable_tree(A, t, row_width);
  if (st.kind.classification)
    throw nb::value_error(("tree " + std::to_string(t) +
                           ": a classification tree has no observers or leaf models").c_str());
  return st;
}

}  // namespace

void bind_tree(nb::module_& m) {
  std::vector<std::tuple<std::string, std::string, int>> fields;
#define SF_FIELD_ROW(k, name, which, T, V, nd) fields.emplace_back(#name, #which, nd);
  SF_TREE_FIELDS(SF_FIELD_ROW)
#undef SF_FIELD_ROW
  std::vector<std::tuple<std::string, std::string>> params;
#define SF_PARAM_ROW(i, name, T) params.emplace_back(#name, #T);
  SF_TREE_PARAMS(SF_PARAM_ROW)
#undef SF_PARAM_ROW
  m.attr("FIELDS") = nb::cast(fields);
  m.attr("PARAMS") = nb::cast(params);

  nb::dict consts;
#define SF_CONST(name) consts[#name] = tree::name;
  SF_CONST(I_NNODES) SF_CONST(I_NLEAVES) SF_CONST(I_LEAF_HW) SF_CONST(I_LEAF_NFREE)
  SF_CONST(I_BINS_LIVE) SF_CONST(I_BIN_HW) SF_CONST(I_BIN_FREE) SF_CONST(I_CAT_USED)
  SF_CONST(I_NSPLITS) SF_CONST(I_NDEACT) SF_CONST(I_NFEAT) SF_CONST(I_MAXCAT) SF_CONST(I_FROZEN)
  SF_CONST(I_NATTEMPTS) SF_CONST(I_LAST_SPLIT_LEAF) SF_CONST(I_NSEEN) SF_CONST(I_DRIFT)
  SF_CONST(I_NODE_FREE) SF_CONST(I_NODE_NFREE) SF_CONST(I_NALTS) SF_CONST(I_ALT_STARTED)
  SF_CONST(I_ALT_SWAPPED) SF_CONST(I_ALT_DISCARDED) SF_CONST(N_INTS)
  SF_CONST(PH_N) SF_CONST(PH_EBAR) SF_CONST(PH_SUM) SF_CONST(PH_MIN) SF_CONST(PH_SD0)
  SF_CONST(N_NODE_PH) SF_CONST(CPH_N) SF_CONST(CPH_Q) SF_CONST(CPH_SD) SF_CONST(CPH_DBAR)
  SF_CONST(CPH_SUM) SF_CONST(CPH_MIN) SF_CONST(N_NODE_PH_CLS) SF_CONST(MC_B) SF_CONST(MC_C)
  SF_CONST(MC_SEEN) SF_CONST(Q_ORG) SF_CONST(Q_ALT) SF_CONST(Q_SEEN) SF_CONST(Q_MEAN)
  SF_CONST(Q_COUNT) SF_CONST(N_NODE_Q)
  SF_CONST(LEAF_MEAN) SF_CONST(LEAF_LINEAR) SF_CONST(LEAF_ADAPTIVE) SF_CONST(LEAF_MC)
  SF_CONST(LEAF_NB) SF_CONST(LEAF_NBA) SF_CONST(LEAF_BAYES) SF_CONST(TASK_REGRESSION)
  SF_CONST(TASK_CLASSIFICATION) SF_CONST(OBS_EBST) SF_CONST(OBS_TEBST) SF_CONST(OBS_QO)
  SF_CONST(SPLIT_OBSERVERS) SF_CONST(SPLIT_EXTRA) SF_CONST(SPLIT_PREGROWN) SF_CONST(SPLIT_GAUSS)
  SF_CONST(XC_THR) SF_CONST(XC_LW) SF_CONST(XC_LHI) SF_CONST(XC_LLO) SF_CONST(XC_LM2)
  SF_CONST(XC_RW) SF_CONST(XC_RHI) SF_CONST(XC_RLO) SF_CONST(XC_RM2) SF_CONST(N_XC)
  SF_CONST(XB_Y) SF_CONST(XB_W) SF_CONST(NODE_AXIS) SF_CONST(NODE_SALT) SF_CONST(NODE_PROJ)
  SF_CONST(MM_MIN) SF_CONST(MM_MAX) SF_CONST(MM_INV) SF_CONST(N_MM) SF_CONST(LEV_N)
  SF_CONST(LEV_SSE) SF_CONST(LEV_TERM) SF_CONST(N_LEV) SF_CONST(EV_ERR) SF_CONST(EV_LOGB)
  SF_CONST(EV_LOGW) SF_CONST(N_EV) SF_CONST(S_W) SF_CONST(S_HI) SF_CONST(S_LO) SF_CONST(S_M2)
  SF_CONST(B_KEY) SF_CONST(B_W) SF_CONST(B_HI) SF_CONST(B_LO) SF_CONST(B_M2) SF_CONST(B_XSUM)
  SF_CONST(B_XMIN) SF_CONST(B_XMAX) SF_CONST(B_LEAF) SF_CONST(B_FEAT) SF_CONST(B_NEXT)
  SF_CONST(N_BIN_COLS)
#undef SF_CONST
  m.attr("CONSTANTS") = consts;

  m.def("supports", [](const std::string& rule, bool classification, bool sketch,
                       bool alternates, bool evidence, bool bayes) {
    tree::Kind k;
    k.rule = tree::split_rule_named(rule.c_str());
    k.classification = classification;
    k.has = tree::Components{sketch, alternates, evidence, bayes};
    if (k.rule != nullptr) {
      const tree::Components& w = k.rule->compiled_with;
      k.has = tree::Components{sketch || w.sketch, alternates || w.alternates,
                               evidence || w.evidence, bayes || w.bayes};
    }
    return tree::runs(k);
  }, nb::arg("rule"), nb::arg("classification"), nb::arg("sketch"), nb::arg("alternates"),
     nb::arg("evidence"), nb::arg("bayes"),
     "Whether the compiled core runs trees of this kind (the fields of a Python ``TreeKind``; "
     "the others run on the numba kernels).");
  m.def("rules", [] {
    nb::list out;
    for (i64 code = 0; code < 64; ++code) {
      const tree::SplitRule* r = tree::split_rule(code);
      if (r == nullptr) continue;
      nb::dict d;
      d["name"] = r->name;
      d["code"] = r->code;
      d["observer_bins"] = r->observer_bins;
      d["grown_before_data"] = r->grown_before_data;
      d["buffers_examples"] = r->buffers_examples;
      d["value_ranges"] = r->value_ranges;
      d["classification"] = r->class_learn_at_leaf != nullptr;
      nb::list with;
      if (r->compiled_with.sketch) with.append("sketch");
      if (r->compiled_with.alternates) with.append("alternates");
      if (r->compiled_with.evidence) with.append("evidence");
      if (r->compiled_with.bayes) with.append("bayes");
      d["compiled_with"] = nb::tuple(with);
      out.append(d);
    }
    return out;
  }, "The core's split rules (its rules' table, src/core/tree/split_rules.cpp): for each a "
     "dict of its ``name`` and ``code``, what its trees hold (``observer_bins``, "
     "``grown_before_data``, ``buffers_examples``, ``value_ranges``), whether it has a "
     "classification part, and the components it always runs with (``compiled_with``).");

  m.def("leaf_best_cut", [](nb::handle A_, i64 t, i64 leaf, i64 j, double min_branch) {
    tree::Arena A = arena_of(A_);
    tree::TreeRef st = regression_tree(A, t, -1);
    if (leaf < 0 || leaf >= st.lf_node().size()) throw nb::index_error("leaf slot outside");
    if (j < 0 || j >= st.ints()[tree::I_NFEAT]) throw nb::index_error("feature outside");
    nb::gil_scoped_release release;
    rules::Cut c = rules::leaf_best_cut(st, leaf, j, min_branch);
    return std::make_tuple(c.vr, c.k);
  }, nb::arg("A"), nb::arg("t"), nb::arg("leaf"), nb::arg("j"), nb::arg("min_branch"),
     "``(variance reduction, bins)`` of the best cut of feature ``j``'s observer at leaf slot "
     "``leaf`` of tree ``t``.");
  m.def("cat_goes_left", &rules::cat_goes_left, nb::arg("salt"), nb::arg("code"),
        "The fixed random side of category ``code`` (a float code, -1 for unseen) under an "
        "extremely randomised candidate's (or split node's) ``salt``.");

  m.def("fold_leaf_model", [](nb::handle A_, i64 t, i64 leaf) {
    tree::Arena A = arena_of(A_);
    tree::TreeRef st = regression_tree(A, t, -1);
    if (leaf < 0 || leaf >= st.lf_node().size()) throw nb::index_error("leaf slot outside");
    nb::gil_scoped_release release;
    leaves::Folded f = leaves::fold_leaf_model(st, tree::params_at(A, t), leaf,
                                               st.ints()[tree::I_NFEAT]);
    return std::make_tuple(f.a, f.linear);
  }, nb::arg("A"), nb::arg("t"), nb::arg("leaf"),
     "``(a, linear)``: leaf slot ``leaf``'s model of tree ``t`` folded into "
     "``a + sum_j ft_linear[j, 0] (x_j - ft_linear[j, 1])`` (tests and inspection).");
  m.def("folded_predict", [](nb::handle A_, i64 t, double a, Array<const double> x) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    tree::TreeRef st = regression_tree(A, t, xv.size());
    nb::gil_scoped_release release;
    return leaves::folded_predict(st, a, xv, st.ints()[tree::I_NFEAT]);
  }, nb::arg("A"), nb::arg("t"), nb::arg("a"), nb::arg("x"),
     "The prediction for ``x`` of the leaf model tree ``t``'s ``fold_leaf_model`` left "
     "(tests and inspection).");
}

}  // namespace sf::bind
