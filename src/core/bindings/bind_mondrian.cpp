// Bindings of the aggregated Mondrian forests' passes (same names and arguments as the
// Python side calls them).  Every shape, count and index a pass will use is checked
// here first: the records' width against the rows' features and the classes, the class index
// of every row learnt, room for the two nodes of a split, the trees of a forest one per row of
// each array.  The links inside the trees are the layout's invariants (layout.hpp), checked
// when a forest is loaded (streamforest/mondrian/state.py ``check``).
#include <string>

#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "mondrian/amf.hpp"

namespace sf::bind {

namespace {

namespace mf = sf::mondrian;

/// The parameters (a float64 array of ``N_PARAMS`` entries, the class count an integer >= 0).
mf::Params params_from(Array<const double>& params) {
  auto p = vec(params, "params");
  if (p.size() < mf::N_PARAMS) fail("params: fewer than N_PARAMS entries");
  double classes = p[mf::P_CLASSES];
  if (!(classes >= 0.0 && classes <= 1e9 && classes == static_cast<double>(to_i64(classes))))
    fail("params: the class count is not an integer >= 0");
  return mf::params_of(p);
}

/// Class probabilities divide by ``n + d K``: the Dirichlet prior must be > 0.
void need_prior(const mf::Params& p) {
  if (!(p.dirichlet > 0.0)) fail("params: the Dirichlet prior must be > 0");
}

i64 n_trees_of(i64 T) {
  if (T < 1) fail("nodes: no tree");
  return T;
}

void need_tree(i64 t, i64 T) {
  if (t < 0 || t >= T) throw nb::index_error("tree index outside the forest");
}

/// Records of ``nodes`` (``(T, C, R)``) hold the value columns and the boxes of ``P`` features.
void need_width(i64 C, i64 R, const mf::Params& p, i64 P) {
  if (C < 1) fail("nodes: no room for a root");
  if (R != p.box_at() + 2 * P)
    fail("nodes: records of " + std::to_string(R) + " columns, not VALUE + max(K, 1) + 2 P = " +
         std::to_string(p.box_at() + 2 * P) + " for the rows' " + std::to_string(P) +
         " features");
}

/// ``meta`` ``(T, 2)``, ``rng`` ``(T, 1)``, ``extension`` and ``saved`` ``(T, >= P)``; every
/// tree's node count within its room.
void need_learning(const Cube<double>& nodes, const Mat<i64>& meta, const Mat<u64>& rng,
                   const Mat<double>& extension, const Mat<double>& saved, i64 P) {
  i64 T = nodes.n0;
  if (meta.rows() != T || meta.cols() < 2) fail("meta: not (n_trees, 2)");
  if (rng.rows() != T || rng.cols() < 1) fail("rng: not (n_trees, 1)");
  if (extension.rows() != T || extension.cols() < P || saved.rows() != T || saved.cols() < P)
    fail("extension, saved: not (n_trees, n_features)");
  for (i64 t = 0; t < T; ++t) {
    i64 used = meta(t, mf::N_NODES);
    if (used < 1 || used > nodes.n1) fail("meta: a tree's node count outside its room");
  }
}

/// Target ``y`` of a classifier is a class index (when some tree learns it).
void need_class(const mf::Params& p, double y) {
  if (p.classes == 0) return;
  i64 k = to_i64(y);
  if (!(static_cast<double>(k) == y && k >= 0 && k < p.classes))
    fail("y: a target that is not a class index of the trees (0 <= y < K)");
}

}  // namespace

void bind_mondrian(nb::module_& m) {
  m.attr("LEFT") = mf::LEFT;
  m.attr("RIGHT") = mf::RIGHT;
  m.attr("FEATURE") = mf::FEATURE;
  m.attr("THRESHOLD") = mf::THRESHOLD;
  m.attr("COUNT") = mf::COUNT;
  m.attr("MIX") = mf::MIX;
  m.attr("PARENT") = mf::PARENT;
  m.attr("TIME") = mf::TIME;
  m.attr("SPLIT_TIME") = mf::SPLIT_TIME;
  m.attr("LOG_WEIGHT") = mf::LOG_WEIGHT;
  m.attr("LOG_TREE") = mf::LOG_TREE;
  m.attr("LEFT_TREE") = mf::LEFT_TREE;
  m.attr("RIGHT_TREE") = mf::RIGHT_TREE;
  m.attr("VALUE") = mf::VALUE;
  m.attr("N_NODES") = mf::N_NODES;
  m.attr("N_SEEN") = mf::N_SEEN;
  m.attr("P_STEP") = mf::P_STEP;
  m.attr("P_AGGREGATE") = mf::P_AGGREGATE;
  m.attr("P_DIRICHLET") = mf::P_DIRICHLET;
  m.attr("P_SPLIT_PURE") = mf::P_SPLIT_PURE;
  m.attr("P_MAX_NODES") = mf::P_MAX_NODES;
  m.attr("P_CLASSES") = mf::P_CLASSES;
  m.attr("N_PARAMS") = mf::N_PARAMS;

  m.def("learn_rows", [](Array<double> nodes, Array<i64> meta, Array<u64> rng,
                         Array<double> extension, Array<double> saved,
                         Array<const double> params, i64 t, Array<const double> X,
                         Array<const double> y, Array<const double> W, i64 start, bool predict,
                         Array<double> P) {
    auto nd = cube(nodes, "nodes");
    auto mt = mat(meta, "meta");
    auto rg = mat(rng, "rng");
    auto ex = mat(extension, "extension");
    auto sv = mat(saved, "saved");
    auto p = params_from(params);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto w = mat(W, "W");
    auto out = mat(P, "P");
    i64 T = n_trees_of(nd.n0);
    need_tree(t, T);
    need_width(nd.n1, nd.n2, p, x.cols());
    need_learning(nd, mt, rg, ex, sv, x.cols());
    i64 n = x.rows();
    if (start < 0) fail("start: a negative row");
    need_items(yv.size(), n, "y");
    if (w.rows() <= t || w.cols() < n) fail("W: no weight of the tree for each row");
    if (predict && (out.rows() <= t || out.cols() < n)) fail("P: no room for each prediction");
    if (p.classes > 0) need_prior(p);
    for (i64 i = start; i < n; ++i)
      if (w(t, i) > 0.0) need_class(p, yv[i]);
    nb::gil_scoped_release release;
    return mf::learn_rows(nd, mt, rg, ex, sv, p, t, x, yv, w, start, predict, out);
  }, nb::arg("nodes").noconvert(), nb::arg("meta").noconvert(), nb::arg("rng").noconvert(),
     nb::arg("extension").noconvert(), nb::arg("saved").noconvert(), nb::arg("params"),
     nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("W"), nb::arg("start"),
     nb::arg("predict"), nb::arg("P").noconvert(),
     "Tree ``t`` learns rows ``start..`` of ``X`` with weights ``W[t]`` (predicting each into "
     "``P[t]`` first when ``predict``); returns the row it stopped before (``n``: done, else "
     "the tree may lack room for two nodes).");

  m.def("predict_rows", [](Array<const double> nodes, Array<const double> params, i64 t,
                           Array<const double> X, Array<double> P) {
    auto nd = cube(nodes, "nodes");
    auto p = params_from(params);
    auto x = mat(X, "X");
    auto out = mat(P, "P");
    need_tree(t, n_trees_of(nd.n0));
    need_width(nd.n1, nd.n2, p, x.cols());
    if (out.rows() <= t || out.cols() < x.rows()) fail("P: no room for each prediction");
    nb::gil_scoped_release release;
    mf::predict_rows(nd, p, t, x, out);
  }, nb::arg("nodes"), nb::arg("params"), nb::arg("t"), nb::arg("X"), nb::arg("P").noconvert(),
     "``P[t, i]``: tree ``t``'s prediction of a regression target for each row of ``X``.");

  m.def("predict_class_rows", [](Array<const double> nodes, Array<const double> params, i64 t,
                                 Array<const double> X, Array<double> P) {
    auto nd = cube(nodes, "nodes");
    auto p = params_from(params);
    auto x = mat(X, "X");
    auto out = cube(P, "P");
    need_tree(t, n_trees_of(nd.n0));
    need_width(nd.n1, nd.n2, p, x.cols());
    need_prior(p);
    if (out.n0 <= t || out.n1 < x.rows()) fail("P: no room for each row's probabilities");
    if (out.n2 > py_max(p.classes, i64{1})) fail("P: more classes than the trees hold");
    nb::gil_scoped_release release;
    mf::predict_class_rows(nd, p, t, x, out);
  }, nb::arg("nodes"), nb::arg("params"), nb::arg("t"), nb::arg("X"), nb::arg("P").noconvert(),
     "``P[t, i]``: tree ``t``'s class probabilities for each row of ``X`` (``P`` ``(T, n, K)``).");

  m.def("apply_rows", [](Array<const double> nodes, i64 t, Array<const double> X,
                         Array<i64> out) {
    auto nd = cube(nodes, "nodes");
    auto x = mat(X, "X");
    auto o = vec(out, "out");
    need_tree(t, n_trees_of(nd.n0));
    if (nd.n1 < 1 || nd.n2 < mf::VALUE + 1) fail("nodes: not Mondrian node records");
    need_items(o.size(), x.rows(), "out");
    // (no parameters to tie the records to the rows' features: every split feature of the tree
    // must be a column of X)
    for (i64 v = 0; v < nd.n1; ++v) {
      if (!(nd(t, v, mf::LEFT) >= 0.0)) continue;
      i64 f = to_i64(nd(t, v, mf::FEATURE));
      if (f < -1 || f >= x.cols() || x.cols() == 0) fail("X: fewer columns than the trees split");
    }
    nb::gil_scoped_release release;
    mf::apply_rows(nd, t, x, o);
  }, nb::arg("nodes"), nb::arg("t"), nb::arg("X"), nb::arg("out").noconvert(),
     "``out[i]``: the leaf of tree ``t`` that row ``i`` of ``X`` reaches.");

  m.def("learn_one", [](Array<double> nodes, Array<i64> meta, Array<u64> rng,
                        Array<double> extension, Array<double> saved, Array<const double> params,
                        Array<const i8> nominal, Array<const double> row, Array<double> clean,
                        double y, Array<const double> weights, bool predict, double shift,
                        Array<double> out) {
    auto nd = cube(nodes, "nodes");
    auto mt = mat(meta, "meta");
    auto rg = mat(rng, "rng");
    auto ex = mat(extension, "extension");
    auto sv = mat(saved, "saved");
    auto p = params_from(params);
    auto nom = vec(nominal, "nominal");
    auto r = vec(row, "row");
    auto c = vec(clean, "clean");
    auto wt = vec(weights, "weights");
    auto o = vec(out, "out");
    i64 T = n_trees_of(nd.n0);
    i64 P = py_min(nom.size(), c.size());
    need_width(nd.n1, nd.n2, p, P);
    need_learning(nd, mt, rg, ex, sv, P);
    need_items(wt.size(), T, "weights");
    if (predict) need_items(o.size(), T, "out");
    bool learns = false;
    for (i64 t = 0; t < T; ++t) {
      if (!(wt[t] > 0.0)) continue;
      learns = true;
      i64 used = mt(t, mf::N_NODES);
      bool may_split = p.max_nodes <= 0.0 || static_cast<double>(used + 2) <= p.max_nodes;
      if (may_split && used + 2 > nd.n1) fail("nodes: a tree lacks room for a split");
    }
    if (learns && p.classes > 0) {
      need_prior(p);
      need_class(p, y);
    }
    nb::gil_scoped_release release;
    return mf::learn_one(nd, mt, rg, ex, sv, p, nom, r, c, y, wt, predict, shift, o);
  }, nb::arg("nodes").noconvert(), nb::arg("meta").noconvert(), nb::arg("rng").noconvert(),
     nb::arg("extension").noconvert(), nb::arg("saved").noconvert(), nb::arg("params"),
     nb::arg("nominal"), nb::arg("row"), nb::arg("clean").noconvert(), nb::arg("y"),
     nb::arg("weights"), nb::arg("predict"), nb::arg("shift"), nb::arg("out").noconvert(),
     "Every tree learns ``row`` (cleaned into ``clean``) and ``y`` with weight ``weights[t]`` "
     "(predicting it into ``out[t]`` first, plus ``shift``, when ``predict``), in tree order; "
     "returns the most nodes a tree holds now.");

  m.def("predict_one", [](Array<const double> nodes, Array<const double> params,
                          Array<const i8> nominal, Array<const double> row, Array<double> clean,
                          double shift, Array<double> out) {
    auto nd = cube(nodes, "nodes");
    auto p = params_from(params);
    auto nom = vec(nominal, "nominal");
    auto r = vec(row, "row");
    auto c = vec(clean, "clean");
    auto o = vec(out, "out");
    i64 T = n_trees_of(nd.n0);
    need_width(nd.n1, nd.n2, p, py_min(nom.size(), c.size()));
    need_items(o.size(), T, "out");
    nb::gil_scoped_release release;
    return mf::predict_one(nd, p, nom, r, c, shift, o);
  }, nb::arg("nodes"), nb::arg("params"), nb::arg("nominal"), nb::arg("row"),
     nb::arg("clean").noconvert(), nb::arg("shift"), nb::arg("out").noconvert(),
     "Each tree's prediction for ``row``, plus ``shift``, into ``out[t]``; returns their mean.");

  m.def("predict_proba_one", [](Array<const double> nodes, Array<const double> params,
                                Array<const i8> nominal, Array<const double> row,
                                Array<double> clean, Array<double> scratch, Array<double> mean) {
    auto nd = cube(nodes, "nodes");
    auto p = params_from(params);
    auto nom = vec(nominal, "nominal");
    auto r = vec(row, "row");
    auto c = vec(clean, "clean");
    auto s = vec(scratch, "scratch");
    auto mn = vec(mean, "mean");
    n_trees_of(nd.n0);
    need_width(nd.n1, nd.n2, p, py_min(nom.size(), c.size()));
    need_prior(p);
    if (s.size() < mn.size()) fail("scratch: fewer classes than mean");
    if (s.size() > py_max(p.classes, i64{1})) fail("scratch: more classes than the trees hold");
    nb::gil_scoped_release release;
    return mf::predict_proba_one(nd, p, nom, r, c, s, mn);
  }, nb::arg("nodes"), nb::arg("params"), nb::arg("nominal"), nb::arg("row"),
     nb::arg("clean").noconvert(), nb::arg("scratch").noconvert(), nb::arg("mean").noconvert(),
     "The mean of the trees' class probabilities for ``row`` into ``mean``; returns the most "
     "probable class (the first on ties).");

  m.def("mean_probabilities", [](Array<const double> P, Array<double> mean, Array<i64> best) {
    auto pt = cube(P, "P");
    auto mn = mat(mean, "mean");
    auto b = vec(best, "best");
    if (pt.n0 < 1) fail("P: no tree");
    if (mn.rows() < pt.n1 || mn.cols() < pt.n2) fail("mean: smaller than (n, K)");
    need_items(b.size(), pt.n1, "best");
    nb::gil_scoped_release release;
    mf::mean_probabilities(pt, mn, b);
  }, nb::arg("P"), nb::arg("mean").noconvert(), nb::arg("best").noconvert(),
     "``mean[i]``: the mean over the trees of ``P[:, i]`` (``(T, n, K)``), summed in tree "
     "order; ``best[i]`` its most probable class (the first on ties).");

  m.def("clean_rows", [](Array<const i8> nominal, Array<double> X) {
    auto nom = vec(nominal, "nominal");
    auto x = mat(X, "X");
    nb::gil_scoped_release release;
    mf::clean_rows(nom, x);
  }, nb::arg("nominal"), nb::arg("X").noconvert(),
     "Rows of ``X`` with the unseen categories of nominal features (codes < 0) as NaN, in "
     "place.");
}

}  // namespace sf::bind
