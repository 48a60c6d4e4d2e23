// Bindings of the forest engine's passes (called by streamforest/engine/core.py and its
// neighbours).
#include <string>

#include "bindings/arena.hpp"
#include "bindings/arrays.hpp"
#include "engine/bagging.hpp"
#include "engine/class_votes.hpp"
#include "engine/handle.hpp"
#include "engine/passes.hpp"

namespace sf::bind {

namespace {

using engine::EngineViews;

[[noreturn]] void bad(const std::string& what) { throw nb::value_error(what.c_str()); }

/// The rows of a batch pass: ``X`` (n, p), ``y`` (n,), the checks of tree ``t``.
void need_rows(const tree::Arena& A, i64 t, Mat<const double> X, i64 y_size) {
  runnable_tree(A, t, X.cols());
  if (y_size < X.rows()) bad("y: fewer items than rows of X");
}

/// ``W``: a row per tree of ``A`` and a column per row of ``X``.
void need_weights(const tree::Arena& A, Mat<const double> W, i64 n, const char* name) {
  if (W.rows() < A.n_trees()) bad(std::string(name) + ": fewer rows than trees");
  if (W.cols() < n) bad(std::string(name) + ": fewer columns than rows of X");
}

void need_out(const tree::Arena& A, Mat<double> P, i64 n, const char* name) {
  if (P.rows() < A.n_trees()) bad(std::string(name) + ": fewer rows than trees");
  if (P.cols() < n) bad(std::string(name) + ": fewer columns than rows of X");
}

u64& state_of(Array<u64>& a, const char* name) {
  if (a.ndim() != 1 || a.shape(0) < 1) bad(std::string(name) + ": a 1-d uint64 state");
  return a.data()[0];
}

// --- classification trees (checks of what their passes index with) -------------------------

/// The classes of tree ``t`` (0 for a regression tree).
i64 classes_of(const tree::Arena& A, i64 t) {
  tree::TreeRef st = tree::state_at(A, t);
  return st.kind.classification ? st.lf_class_weights().cols() : 0;
}

/// A label ``y`` a classification tree ``t`` learns is one of its class indices.
void need_class_index(const tree::Arena& A, i64 t, double y) {
  if (!tree::state_at(A, t).kind.classification) return;
  i64 K = classes_of(A, t);
  if (!(y >= 0.0 && y < static_cast<double>(K)))
    bad("y: " + std::to_string(y) + " is not a class index of tree " + std::to_string(t) +
        " (" + std::to_string(K) + " classes)");
}

/// The labels of the rows ``start..`` tree ``t`` learns (weight ``w[i] > 0``).
void need_class_indices(const tree::Arena& A, i64 t, Vec<const double> y, Vec<const double> w,
                        i64 start, i64 n) {
  if (!tree::state_at(A, t).kind.classification) return;
  for (i64 i = start; i < n; ++i)
    if (w[i] > 0.0) need_class_index(A, t, y[i]);
}

/// Tree ``t``'s answers fit in ``cols`` columns (one value, or its class probabilities).
void need_answer_width(const tree::Arena& A, i64 t, i64 cols) {
  i64 K = classes_of(A, t);
  if (K > cols || (K == 0 && cols < 1))
    bad("P: " + std::to_string(cols) + " columns for the answers of tree " + std::to_string(t));
}

/// A prequential pass of a regression tree's values.
void need_regression_tree(const tree::Arena& A, i64 t) {
  if (tree::state_at(A, t).kind.classification)
    bad("tree " + std::to_string(t) + ": a classification tree has no prequential values");
}

/// Passes of regression trees' values: no classification tree in ``A``.
void need_regression_trees(const tree::Arena& A) {
  for (i64 t = 0; t < A.n_trees(); ++t) need_regression_tree(A, t);
}

/// Every tree of ``A`` is a classification tree of at most ``K`` classes.
void need_classifiers(const tree::Arena& A, i64 K) {
  for (i64 t = 0; t < A.n_trees(); ++t) {
    if (!tree::state_at(A, t).kind.classification)
      bad("tree " + std::to_string(t) + " is not a classification tree");
    if (classes_of(A, t) > K) bad("PT: fewer class columns than tree " + std::to_string(t) + "'s");
  }
}

/// The memo ``M`` a per-example pass reads (``t < M.cols()``) and writes (``writes``: every
/// tree's column): 4 rows (a classification tree's column holds its two votes).
void need_memo(Mat<double> M, i64 T, bool writes, const char* name) {
  if ((M.cols() > 0 || writes) && M.rows() < 4) bad(std::string(name) + ": fewer than 4 rows");
  if (writes && M.cols() < T) bad(std::string(name) + ": fewer columns than trees");
}

/// The views of an engine handle, every shape a pass indexes with checked.
EngineViews checked_views(nb::handle H) {
  i64 n;
  const i64* p = detail::buffer_of<i64>(H, 1, false, &n, "H");
  Vec<const i64> h(p, n);
  if (h.size() != engine::H_SIZE) bad("H: not an engine handle");
  EngineViews v = engine::engine_views(h);
  const tree::Arena& A = v.A;
  i64 T = A.lay.n0;
  if (A.fa.n0 != T || A.ia.n0 != T || A.ba.n0 != T || A.pa.n0 != T)
    bad("H: malformed tree arena (a row per tree in every array)");
  if (A.lay.n1 != SF_TREE_N_FIELDS || A.lay.n2 != 4 || A.pa.n1 != SF_TREE_N_PARAMS)
    bad("H: tree arena of another layout than this core's fields and parameters");
  if (v.frng.size() < 1) bad("H: no generator state");
  if (v.wt.size() < T || v.P.size() < T || v.drifted.size() < T)
    bad("H: scratch arrays shorter than the trees");
  need_memo(v.M, T, true, "H memo");
  need_memo(v.M0, T, false, "H empty memo");
  runnable_trees(A, v.x.size());
  return v;
}

}  // namespace

void bind_engine(nb::module_& m) {
  m.attr("AGG_MEAN") = engine::AGG_MEAN;
  m.attr("AGG_MEDIAN") = engine::AGG_MEDIAN;
  m.attr("AGG_WEIGHTED") = engine::AGG_WEIGHTED;
  m.attr("DONE") = engine::DONE;
  m.attr("DRIFTED") = engine::DRIFTED;
  m.attr("FRESH") = engine::FRESH;
  m.attr("H_SIZE") = engine::H_SIZE;
  m.attr("H_ROW") = engine::H_ROW;
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

  // --- batch passes of one tree ------------------------------------------------------------
  m.def("learn_rows", [](nb::handle A_, i64 t, Array<const double> X, Array<const double> y,
                         Array<const double> W, i64 start) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto w = mat(W, "W");
    need_rows(A, t, x, yv.size());
    need_weights(A, w, x.rows(), "W");
    if (start < 0) bad("start: negative");
    need_class_indices(A, t, yv, w.row(t), start, x.rows());
    nb::gil_scoped_release release;
    return engine::learn_rows(A, t, x, yv, w, start);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("W"), nb::arg("start"),
     "Tree ``t`` learns rows ``start..`` of ``X`` with weights ``W[t]``; the row it stopped "
     "before.");
  m.def("predict_learn_rows", [](nb::handle A_, i64 t, Array<const double> X,
                                 Array<const double> y, Array<const double> W, i64 start,
                                 Array<double> P) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto w = mat(W, "W");
    auto p = mat(P, "P");
    need_rows(A, t, x, yv.size());
    need_weights(A, w, x.rows(), "W");
    need_out(A, p, x.rows(), "P");
    if (start < 0) bad("start: negative");
    need_regression_tree(A, t);
    nb::gil_scoped_release release;
    return engine::predict_learn_rows(A, t, x, yv, w, start, p);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("W"), nb::arg("start"),
     nb::arg("P").noconvert(),
     "Tree ``t`` predicts each row (into ``P[t]``), then learns it with weight ``W[t]``.");
  m.def("predict_learn_rows_lw", [](nb::handle A_, i64 t, Array<const double> X,
                                    Array<const double> y, Array<const double> W, i64 start,
                                    Array<double> P, Array<double> LW) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto w = mat(W, "W");
    auto p = mat(P, "P");
    auto lw = mat(LW, "LW");
    need_rows(A, t, x, yv.size());
    need_weights(A, w, x.rows(), "W");
    need_out(A, p, x.rows(), "P");
    need_out(A, lw, x.rows(), "LW");
    if (start < 0) bad("start: negative");
    need_regression_tree(A, t);
    nb::gil_scoped_release release;
    return engine::predict_learn_rows_lw(A, t, x, yv, w, start, p, lw);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("W"), nb::arg("start"),
     nb::arg("P").noconvert(), nb::arg("LW").noconvert(),
     "``predict_learn_rows`` that also records tree t's log weight before each row in "
     "``LW[t]``.");
  m.def("predict_rows", [](nb::handle A_, i64 t, Array<const double> X, Array<double> P) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    runnable_tree(A, t, x.cols());
    Mat<double> out;
    if (P.ndim() == 2) {
      auto p = mat(P, "P");
      need_out(A, p, x.rows(), "P");
      need_answer_width(A, t, 1);
      out = Mat<double>(p.row(t).data, x.rows(), 1);
    } else {
      auto p = cube(P, "P");
      if (p.n0 < A.n_trees() || p.n1 < x.rows()) bad("P: fewer trees or rows than needed");
      need_answer_width(A, t, p.n2);
      out = Mat<double>(p.mat(t).data, x.rows(), p.n2);
    }
    nb::gil_scoped_release release;
    engine::predict_rows(A, t, x, out);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("P").noconvert(),
     "Tree ``t``'s predictions for the rows of ``X``, into ``P[t]``.");
  m.def("apply_rows", [](nb::handle A_, i64 t, Array<const double> X, Array<i64> out) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto o = vec(out, "out");
    runnable_tree(A, t, x.cols());
    if (o.size() < x.rows()) bad("out: fewer items than rows of X");
    nb::gil_scoped_release release;
    engine::apply_rows(A, t, x, o);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("out").noconvert(),
     "Leaf node of tree ``t`` reached by each row of ``X``.");
  m.def("background_rows", [](nb::handle B_, i64 t, Array<const double> X, Array<const double> y,
                              Array<const double> w, i64 start) {
    tree::Arena B = arena_of(B_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto wv = vec(w, "w");
    need_rows(B, t, x, yv.size());
    if (wv.size() < x.rows()) bad("w: fewer items than rows of X");
    if (start < 0) bad("start: negative");
    need_class_indices(B, t, yv, wv, start, x.rows());
    nb::gil_scoped_release release;
    return engine::background_rows(B, t, x, yv, wv, start);
  }, nb::arg("B"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("w"), nb::arg("start"),
     "Background tree ``t`` learns rows ``start..`` of ``X`` with the weights ``w``.");
  m.def("draw_background", [](Array<u64> brng, double lam, Array<const double> w,
                              Array<double> out, i64 start, i64 stop) {
    u64& s = state_of(brng, "brng");
    auto wv = vec(w, "w");
    auto o = vec(out, "out");
    if (start < 0) bad("start: negative");
    if (stop > wv.size() || stop > o.size()) bad("stop: past the end of w or out");
    nb::gil_scoped_release release;
    engine::draw_background(s, lam, wv, o, start, stop);
  }, nb::arg("brng").noconvert(), nb::arg("lam"), nb::arg("w"), nb::arg("out").noconvert(),
     nb::arg("start"), nb::arg("stop"),
     "``out[i]``, ``start <= i < stop``: a background tree's bagging weights of rows i.");
  m.def("init_tree", [](nb::handle A_, i64 t) {
    tree::Arena A = arena_of(A_);
    runnable_tree(A, t, -1);
    nb::gil_scoped_release release;
    engine::init_tree(A, t);
  }, nb::arg("A"), nb::arg("t"), "A new tree in row ``t``: its root leaf.");
  m.def("rebuild_hash_at", [](nb::handle A_, i64 t) {
    tree::Arena A = arena_of(A_);
    runnable_tree(A, t, -1);
    nb::gil_scoped_release release;
    engine::rebuild_hash_at(A, t);
  }, nb::arg("A"), nb::arg("t"),
     "Re-insert every live observer bin of tree ``t`` into its hash table.");
  m.def("lacks_room", [](nb::handle A_, i64 t) {
    tree::Arena A = arena_of(A_);
    runnable_tree(A, t, -1);
    nb::gil_scoped_release release;
    return engine::lacks_room(A, t);
  }, nb::arg("A"), nb::arg("t"));

  // --- one example through every tree ------------------------------------------------------
  m.def("predict_trees_memo", [](nb::handle A_, Array<const double> x, Array<double> P,
                                 Array<double> M) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto p = vec(P, "P");
    auto mm = mat(M, "M");
    runnable_trees(A, xv.size());
    need_regression_trees(A);
    if (p.size() < A.n_trees()) bad("P: fewer items than trees");
    need_memo(mm, A.n_trees(), true, "M");
    nb::gil_scoped_release release;
    engine::predict_trees_memo(A, xv, p, mm);
  }, nb::arg("A"), nb::arg("x"), nb::arg("P").noconvert(), nb::arg("M").noconvert());
  m.def("learn_one", [](nb::handle A_, Array<u64> frng, double lam, Array<const double> x,
                        double y, double w, Array<double> wt, Array<double> P,
                        Array<i8> drifted, i64 t0, Array<double> M) {
    tree::Arena A = arena_of(A_);
    u64& s = state_of(frng, "frng");
    auto xv = vec(x, "x");
    auto wtv = vec(wt, "wt");
    auto p = vec(P, "P");
    auto d = vec(drifted, "drifted");
    auto mm = mat(M, "M");
    i64 T = A.n_trees();
    runnable_trees(A, xv.size());
    if (wtv.size() < T || p.size() < T || d.size() < T) bad("wt, P, drifted: one item per tree");
    need_memo(mm, T, false, "M");
    if (t0 < engine::FRESH) bad("t0: FRESH or a tree index");
    if (w > 0.0)
      for (i64 t = 0; t < T; ++t) need_class_index(A, t, y);
    nb::gil_scoped_release release;
    return engine::learn_one(A, s, lam, xv, y, w, wtv, p, d, t0, mm);
  }, nb::arg("A"), nb::arg("frng").noconvert(), nb::arg("lam"), nb::arg("x"), nb::arg("y"),
     nb::arg("w"), nb::arg("wt").noconvert(), nb::arg("P").noconvert(),
     nb::arg("drifted").noconvert(), nb::arg("t0"), nb::arg("M").noconvert(),
     "Every tree learns ``(x, y)``: DONE, DRIFTED, or the index of a tree that lacks room.");
  m.def("learn_background_one", [](nb::handle B_, Array<const i8> on, Array<u64> brng,
                                   double lam, Array<const double> x, double y, double w,
                                   Array<double> bw, i64 t0) {
    tree::Arena B = arena_of(B_);
    auto onv = vec(on, "on");
    auto rng = mat(brng, "brng");
    auto xv = vec(x, "x");
    auto b = vec(bw, "bw");
    i64 T = onv.size();
    if (T > B.n_trees() || rng.rows() < T || rng.cols() < 1 || b.size() < T)
      bad("on, brng, bw: one item per background tree");
    for (i64 t = 0; t < T; ++t) {
      if (!onv[t]) continue;
      runnable_tree(B, t, xv.size());
      if (w > 0.0) need_class_index(B, t, y);
    }
    if (t0 < engine::FRESH) bad("t0: FRESH or a tree index");
    nb::gil_scoped_release release;
    return engine::learn_background_one(B, onv, rng, lam, xv, y, w, b, t0);
  }, nb::arg("B"), nb::arg("on"), nb::arg("brng").noconvert(), nb::arg("lam"), nb::arg("x"),
     nb::arg("y"), nb::arg("w"), nb::arg("bw").noconvert(), nb::arg("t0"),
     "Every background tree (``on[t]``) learns ``(x, y)`` with its own bagging weight.");
  m.def("predict_trees", [](nb::handle A_, Array<const double> x, Array<double> P) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto p = vec(P, "P");
    runnable_trees(A, xv.size());
    need_regression_trees(A);
    if (p.size() < A.n_trees()) bad("P: fewer items than trees");
    nb::gil_scoped_release release;
    engine::predict_trees(A, xv, p);
  }, nb::arg("A"), nb::arg("x"), nb::arg("P").noconvert(),
     "Every tree's prediction for row ``x``, into ``P``.");
  m.def("weighted_columns", [](Array<const double> LW, Array<const double> P,
                               Array<double> out) {
    auto lw = mat(LW, "LW");
    auto p = mat(P, "P");
    auto o = vec(out, "out");
    if (lw.rows() != p.rows()) bad("LW: not a row per tree of P");
    if (o.size() < p.cols()) bad("out: fewer items than columns of P");
    if (p.cols() > 0 && (p.rows() == 0 || lw.cols() == 0)) bad("LW, P: no tree, or no weight");
    nb::gil_scoped_release release;
    engine::weighted_columns(lw, p, o);
  }, nb::arg("LW"), nb::arg("P"), nb::arg("out").noconvert(),
     "``out[i]``: the mean of ``P[:, i]`` weighted by the softmax of ``LW[:, min(i, "
     "LW.shape[1] - 1)]``.");
  m.def("tree_log_weights", [](nb::handle A_, Array<double> out) {
    tree::Arena A = arena_of(A_);
    auto o = vec(out, "out");
    if (o.size() < A.n_trees()) bad("out: fewer items than trees");
    runnable_trees(A, -1);
    nb::gil_scoped_release release;
    engine::tree_log_weights(A, o);
  }, nb::arg("A"), nb::arg("out").noconvert(), "Each tree's log evidence weight, into ``out``.");
  m.def("predict_one", [](nb::handle A_, Array<const double> x, i64 agg, Array<double> P,
                          Array<double> M) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto p = vec(P, "P");
    auto mm = mat(M, "M");
    runnable_trees(A, xv.size());
    need_regression_trees(A);
    if (p.size() < A.n_trees() || p.size() == 0) bad("P: fewer items than trees");
    need_memo(mm, A.n_trees(), true, "M");
    nb::gil_scoped_release release;
    return engine::predict_one(A, xv, agg, p, mm);
  }, nb::arg("A"), nb::arg("x"), nb::arg("agg"), nb::arg("P").noconvert(),
     nb::arg("M").noconvert(),
     "The forest's prediction for row ``x`` (tree predictions left in ``P``, memo in ``M``).");

  // --- the per-example passes through a handle (streamforest/engine/handle.py) -------------
  m.def("learn_one_h", [](nb::handle H_, double lam, double y, double w, i64 t0,
                          bool memo) {
    EngineViews v = checked_views(H_);
    if (t0 < engine::FRESH) bad("t0: FRESH or a tree index");
    if (w > 0.0)
      for (i64 t = 0; t < v.A.n_trees(); ++t) need_class_index(v.A, t, y);
    nb::gil_scoped_release release;
    return engine::learn_one(v.A, v.frng[0], lam, v.x, y, w, v.wt, v.P, v.drifted, t0,
                             memo ? v.M : v.M0);
  }, nb::arg("H"), nb::arg("lam"), nb::arg("y"), nb::arg("w"), nb::arg("t0"),
     nb::arg("memo"), "``learn_one`` of the handle's arrays (``kind``: unused, read per tree).");
  m.def("predict_one_h", [](nb::handle H_, i64 agg) {
    EngineViews v = checked_views(H_);
    if (v.P.size() == 0) bad("H: no tree");
    need_regression_trees(v.A);
    nb::gil_scoped_release release;
    return engine::predict_one(v.A, v.x, agg, v.P, v.M);
  }, nb::arg("H"), nb::arg("agg"),
     "``predict_one`` of the handle's arrays (``kind``: unused, read per tree).");

  // --- a classifier forest's answer (engine/class_votes.hpp) ----------------------
  m.def("vote_rows", [](Array<const double> PT, Array<double> mean, Array<double> votes,
                        Array<i64> cls) {
    Cube<const double> pt = cube(PT, "PT");
    auto mn = mat(mean, "mean");
    auto vt = vec(votes, "votes");
    auto c = vec(cls, "cls");
    if (mn.rows() < pt.n1 || c.size() < pt.n1) bad("mean, cls: fewer rows than PT's");
    if (pt.n1 > 0 && (mn.cols() < pt.n2 || vt.size() < py_max(pt.n2, i64{1})))
      bad("mean, votes: fewer columns than PT's classes");
    nb::gil_scoped_release release;
    engine::vote_rows(pt, mn, vt, c);
  }, nb::arg("PT"), nb::arg("mean").noconvert(), nb::arg("votes").noconvert(),
     nb::arg("cls").noconvert(),
     "For each row ``i`` of the trees' probabilities ``PT`` ``(T, n, K)``: ``mean[i]`` the mean "
     "probabilities, ``cls[i]`` the majority class (``votes``: ``(K,)`` scratch).");
  m.def("predict_proba_one", [](nb::handle A_, Array<const double> x, Array<double> PT,
                                Array<double> mean, Array<double> votes, Array<double> M) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto pt = cube(PT, "PT");
    auto mn = vec(mean, "mean");
    auto vt = vec(votes, "votes");
    auto mm = mat(M, "M");
    runnable_trees(A, xv.size());
    need_classifiers(A, pt.n2);
    if (pt.n0 < A.n_trees() || pt.n1 < 1) bad("PT: fewer than (trees, 1) rows");
    if (mn.size() < pt.n2 || vt.size() < py_max(pt.n2, i64{1}))
      bad("mean, votes: fewer items than PT's classes");
    need_memo(mm, A.n_trees(), true, "M");
    nb::gil_scoped_release release;
    return engine::predict_proba_one(A, xv, pt, mn, vt, mm);
  }, nb::arg("A"), nb::arg("x"), nb::arg("PT").noconvert(), nb::arg("mean").noconvert(),
     nb::arg("votes").noconvert(), nb::arg("M").noconvert(),
     "The forest's answer for row ``x``: the mean class probabilities into ``mean``, the "
     "majority class returned; each tree's leaf node, rows seen and votes into the memo ``M``.");
}

}  // namespace sf::bind
