// Bindings of OnlineQRF's passes (called by streamforest/intervals/quantile_forest.py).
// Every shape, count and stored index a kernel will use is checked here, before it runs: the
// trees (a kind this core runs, with leaf sketches), the records' level rows and item offsets,
// the scratch arrays' sizes.
#include <string>

#include "bindings/arena.hpp"
#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "bindings/zero_division.hpp"
#include "engine/handle.hpp"
#include "intervals/quantile.hpp"
#include "sketch/kll.hpp"

namespace sf::bind {

namespace {

namespace iv = sf::intervals;
using sketch::LV_N;
using sketch::LV_WIDTH;
using sketch::MAX_LEVELS;

/// Tree ``t`` as the passes take it (runnable_tree) and a regression tree with leaf sketches:
/// a level row of LV_WIDTH items and a row of items per leaf slot.
tree::TreeRef sketch_tree(const tree::Arena& A, i64 t, i64 row_width) {
  tree::TreeRef st = runnable_tree(A, t, row_width);
  if (st.kind.classification || !st.kind.has.sketch)
    fail("tree " + std::to_string(t) + ": a regression tree without leaf sketches");
  Mat<i64> lv = st.lf_sketch_levels();
  if (lv.cols() != LV_WIDTH || lv.rows() != st.lf_sketch().rows() ||
      lv.rows() < st.lf_node().size())
    fail("tree " + std::to_string(t) + ": leaf sketches of another layout than this core's");
  return st;
}

/// Every tree of ``A`` (sketch_tree); returns the items of a leaf sketch row summed over them.
i64 sketch_trees(const tree::Arena& A, i64 row_width) {
  i64 items = 0;
  for (i64 t = 0; t < A.n_trees(); ++t) items += sketch_tree(A, t, row_width).lf_sketch().cols();
  return items;
}

/// The record ``(bufs, goff, glv)`` and ``mask`` of rows ``r0..r1``: well-formed level rows
/// (``1 <= H <= MAX_LEVELS``, boundaries ascending) and, for the sketches the query reads
/// (masked, with weight), their items inside ``bufs``.
void need_record(Mat<const double> bufs, Mat<const i64> goff, Cube<const i64> glv,
                 Mat<const i8> mask, i64 r0, i64 r1) {
  const i64 T = glv.n0;
  need(r0 >= 0 && r0 <= r1, "r0, r1: not a range of rows");
  need(glv.n2 == LV_WIDTH, "glv: level rows of another width than LV_WIDTH");
  need(glv.n1 >= r1, "glv: fewer rows than r1");
  need(goff.rows() >= T && goff.cols() >= r1, "goff: fewer (trees, rows) than glv's");
  need(mask.rows() >= T && mask.cols() >= r1, "mask: fewer (trees, rows) than glv's");
  need(bufs.rows() >= T, "bufs: fewer rows than trees");
  for (i64 t = 0; t < T; ++t) {
    for (i64 i = r0; i < r1; ++i) {
      i64 H = glv(t, i, 0);
      if (H < 1 || H > MAX_LEVELS) fail("glv: a level count outside [1, MAX_LEVELS]");
      if (glv(t, i, 1) < 0) fail("glv: a negative level boundary");
      for (i64 h = 0; h < H; ++h)
        if (glv(t, i, h + 2) < glv(t, i, h + 1)) fail("glv: level boundaries not ascending");
      if (!(mask(t, i) && glv(t, i, LV_N) > 0)) continue;
      i64 off = goff(t, i);
      if (off < 0 || off > bufs.cols() || glv(t, i, H + 1) - glv(t, i, 1) > bufs.cols() - off)
        fail("goff, glv: a sketch's items outside bufs");
    }
  }
}

/// The views of the scratch handle ``Q``: query_one's ``leaves`` to ``sw``, in that order.
iv::QueryScratch scratch_of(Vec<const i64> Q) {
  need(Q.size() == 18, "Q: not a handle of query_one's nine scratch arrays");
  return {engine::h1<i64>(Q, 0),     engine::h1<i64>(Q, 2),     engine::h1<i64>(Q, 4),
          engine::h1<double>(Q, 6),  engine::h1<i64>(Q, 8),     engine::h1<double>(Q, 10),
          engine::h1<i64>(Q, 12),    engine::h1<double>(Q, 14), engine::h1<double>(Q, 16)};
}

/// query_one's scratch sizes.
void need_scratch(const iv::QueryScratch& s, i64 T, i64 items, bool sorted) {
  const i64 R = T * (LV_WIDTH - 3);
  need_len(s.leaves, T, "leaves");
  need_len(s.rs, R, "rs");
  need_len(s.re, R, "re");
  need_len(s.rw, R, "rw");
  need_len(s.heap, R, "heap");
  need_len(s.hv, R, "hv");
  need_len(s.cur, R, "cur");
  if (sorted) {
    need_len(s.sv, items, "sv");
    need_len(s.sw, items, "sw");
  }
}

/// The outputs of query_one (``interval``: interval_one's reads too).
void need_outputs(Vec<const double> qs, Vec<const double> masses, Vec<double> out_q,
                  Vec<double> out_lo, Vec<double> out_hi, bool interval) {
  need_len(out_q, qs.size(), "out_q");
  need_len(out_lo, masses.size(), "out_lo");
  need_len(out_hi, masses.size(), "out_hi");
  if (!interval) return;
  if (qs.size()) {
    need_len(out_q, 2, "out_q");
  } else {
    need_len(out_lo, 1, "out_lo");
    need_len(out_hi, 1, "out_hi");
  }
}

Vec<const i64> handle_of(nb::handle obj, const char* name) {
  i64 n;
  const i64* p = detail::buffer_of<i64>(obj, 1, false, &n, name);
  return Vec<const i64>(p, n);
}

/// The arena and row of an engine handle, its trees checked (sketch_trees); ``items``: the
/// items of a leaf sketch row summed over the trees.
struct HandleArena {
  tree::Arena A;
  Vec<const double> x;
  i64 items;
};

HandleArena engine_arena(nb::handle H_) {
  Vec<const i64> h = handle_of(H_, "H");
  need(h.size() == engine::H_SIZE, "H: not an engine handle");
  engine::EngineViews v = engine::engine_views(h);
  const tree::Arena& A = v.A;
  i64 T = A.lay.n0;
  need(A.fa.n0 == T && A.ia.n0 == T && A.ba.n0 == T && A.pa.n0 == T,
       "H: malformed tree arena (a row per tree in every array)");
  need(A.lay.n1 == SF_TREE_N_FIELDS && A.lay.n2 == 4 && A.pa.n1 == SF_TREE_N_PARAMS,
       "H: tree arena of another layout than this core's fields and parameters");
  return {A, v.x, sketch_trees(A, v.x.size())};
}

/// The level arrays of handle ``P`` (``qs``, ``masses``, ``out_q``, ``out_lo``, ``out_hi``).
struct Levels {
  Vec<const double> qs;
  Vec<const double> masses;
  Vec<double> out_q;
  Vec<double> out_lo;
  Vec<double> out_hi;
};

Levels levels_of(nb::handle P_) {
  Vec<const i64> p = handle_of(P_, "P");
  need(p.size() == 10, "P: not a handle of five level arrays");
  return {engine::h1<const double>(p, 0), engine::h1<const double>(p, 2),
          engine::h1<double>(p, 4), engine::h1<double>(p, 6), engine::h1<double>(p, 8)};
}

/// The level arrays of a per-row query given as arrays (``levels_of``: packed in a handle).
Levels levels_from(Array<const double>& qs, Array<const double>& masses, Array<double>& out_q,
                   Array<double>& out_lo, Array<double>& out_hi) {
  return {vec(qs, "qs"), vec(masses, "masses"), vec(out_q, "out_q"), vec(out_lo, "out_lo"),
          vec(out_hi, "out_hi")};
}

/// The scratch of handle ``Q_`` for a per-row query of engine ``e`` at levels ``l``, every
/// size the query will use checked (``interval``: one level's bounds).
iv::QueryScratch checked_query(const HandleArena& e, nb::handle Q_, const Levels& l,
                               bool interval) {
  iv::QueryScratch s = scratch_of(handle_of(Q_, "Q"));
  need_scratch(s, e.A.n_trees(), e.items, l.masses.size() > 0);
  need_outputs(l.qs, l.masses, l.out_q, l.out_lo, l.out_hi, interval);
  return s;
}

}  // namespace

void bind_quantile(nb::module_& m) {
  register_zero_division();
  m.def("sketch_tree_pass", [](nb::handle A_, i64 t, Array<const double> X,
                               Array<const double> y, Array<const double> w, i64 start,
                               bool learn, Array<double> P, Array<double> gbuf, Array<i64> gpos,
                               Array<i64> goff, Array<i64> glv) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto wv = vec(w, "w");
    auto p = vec(P, "P");
    auto gb = vec(gbuf, "gbuf");
    auto gp = vec(gpos, "gpos");
    auto go = vec(goff, "goff");
    auto gl = mat(glv, "glv");
    sketch_tree(A, t, x.cols());
    const i64 n = x.rows();
    need(start >= 0, "start: negative");
    if (learn) {
      need_len(yv, n, "y");
      need_len(wv, n, "w");
    }
    need_len(p, n, "P");
    need_len(go, n, "goff");
    need(gl.rows() >= n && gl.cols() == LV_WIDTH, "glv: fewer rows than X's, or not LV_WIDTH wide");
    need(gp.size() >= 1 && gp[0] >= 0 && gp[0] <= gb.size(), "gpos: not a position in gbuf");
    nb::gil_scoped_release release;
    return iv::sketch_tree_pass(A, t, x, yv, wv, start, learn, p, gb, gp, go, gl);
  }, nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("w"), nb::arg("start"),
     nb::arg("learn"), nb::arg("P").noconvert(), nb::arg("gbuf").noconvert(),
     nb::arg("gpos").noconvert(), nb::arg("goff").noconvert(), nb::arg("glv").noconvert(),
     "Tree ``t``: its prediction of each row into ``P`` and a copy of the leaf sketch the row "
     "reaches (items into ``gbuf`` at ``goff[i]``, level row ``glv[i]``), taken before learning "
     "the row (when ``learn``); the row it stopped before.");
  m.def("mixture_query", [](Array<const double> bufs, Array<const i64> goff,
                            Array<const i64> glv, Array<const i8> mask, bool meinshausen,
                            Array<const double> qs, Array<const double> masses,
                            Array<double> out_q, Array<double> out_lo, Array<double> out_hi,
                            i64 r0, i64 r1) {
    auto b = mat(bufs, "bufs");
    auto go = mat(goff, "goff");
    auto gl = cube(glv, "glv");
    auto mk = mat(mask, "mask");
    auto q = vec(qs, "qs");
    auto ms = vec(masses, "masses");
    auto oq = mat(out_q, "out_q");
    auto ol = mat(out_lo, "out_lo");
    auto oh = mat(out_hi, "out_hi");
    need_record(b, go, gl, mk, r0, r1);
    if (q.size()) need(oq.rows() >= r1 && oq.cols() >= q.size(), "out_q: fewer (rows, qs)");
    if (ms.size())
      need(ol.rows() >= r1 && ol.cols() >= ms.size() && oh.rows() >= r1 &&
               oh.cols() >= ms.size(), "out_lo, out_hi: fewer (rows, masses)");
    nb::gil_scoped_release release;
    iv::mixture_query(b, go, gl, mk, meinshausen, q, ms, oq, ol, oh, r0, r1);
  }, nb::arg("bufs"), nb::arg("goff"), nb::arg("glv"), nb::arg("mask"), nb::arg("meinshausen"),
     nb::arg("qs"), nb::arg("masses"), nb::arg("out_q").noconvert(),
     nb::arg("out_lo").noconvert(), nb::arg("out_hi").noconvert(), nb::arg("r0"), nb::arg("r1"),
     "For rows ``r0..r1``: quantiles ``qs`` and highest-density intervals of the masses of the "
     "mixture of the trees' leaf-sketch copies ``(bufs, goff, glv)`` in ``mask``.");
  m.def("query_one", [](nb::handle A_, Array<const double> x, bool meinshausen,
                        Array<const double> qs, Array<const double> masses, Array<double> out_q,
                        Array<double> out_lo, Array<double> out_hi, Array<i64> leaves,
                        Array<i64> rs, Array<i64> re, Array<double> rw, Array<i64> heap,
                        Array<double> hv, Array<i64> cur, Array<double> sv, Array<double> sw) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto q = vec(qs, "qs");
    auto ms = vec(masses, "masses");
    auto oq = vec(out_q, "out_q");
    auto ol = vec(out_lo, "out_lo");
    auto oh = vec(out_hi, "out_hi");
    iv::QueryScratch s{vec(leaves, "leaves"), vec(rs, "rs"), vec(re, "re"), vec(rw, "rw"),
                       vec(heap, "heap"),     vec(hv, "hv"), vec(cur, "cur"), vec(sv, "sv"),
                       vec(sw, "sw")};
    i64 items = sketch_trees(A, xv.size());
    need_scratch(s, A.n_trees(), items, ms.size() > 0);
    need_outputs(q, ms, oq, ol, oh, false);
    nb::gil_scoped_release release;
    iv::query_one(A, xv, meinshausen, q, ms, oq, ol, oh, s);
  }, nb::arg("A"), nb::arg("x"), nb::arg("meinshausen"), nb::arg("qs"), nb::arg("masses"),
     nb::arg("out_q").noconvert(), nb::arg("out_lo").noconvert(), nb::arg("out_hi").noconvert(),
     nb::arg("leaves").noconvert(), nb::arg("rs").noconvert(), nb::arg("re").noconvert(),
     nb::arg("rw").noconvert(), nb::arg("heap").noconvert(), nb::arg("hv").noconvert(),
     nb::arg("cur").noconvert(), nb::arg("sv").noconvert(), nb::arg("sw").noconvert(),
     "For one row ``x``: quantiles ``qs`` and highest-density intervals of the masses of the "
     "mixture of the trees' leaf sketches, read in place (the rest: scratch).");
  m.def("query_one_h", [](nb::handle H_, nb::handle Q_, bool meinshausen,
                          Array<const double> qs, Array<const double> masses,
                          Array<double> out_q, Array<double> out_lo, Array<double> out_hi) {
    HandleArena e = engine_arena(H_);
    Levels l = levels_from(qs, masses, out_q, out_lo, out_hi);
    iv::QueryScratch s = checked_query(e, Q_, l, false);
    nb::gil_scoped_release release;
    iv::query_one(e.A, e.x, meinshausen, l.qs, l.masses, l.out_q, l.out_lo, l.out_hi, s);
  }, nb::arg("H"), nb::arg("Q"), nb::arg("meinshausen"), nb::arg("qs"),
     nb::arg("masses"), nb::arg("out_q").noconvert(), nb::arg("out_lo").noconvert(),
     nb::arg("out_hi").noconvert(),
     "``query_one`` of an engine handle ``H`` (its arena and row) and a handle ``Q`` of the "
     "scratch arrays (``kind``: unused, read per tree).");
  m.def("interval_one_h", [](nb::handle H_, nb::handle Q_, bool meinshausen,
                             Array<const double> qs, Array<const double> masses,
                             Array<double> out_q, Array<double> out_lo, Array<double> out_hi) {
    HandleArena e = engine_arena(H_);
    Levels l = levels_from(qs, masses, out_q, out_lo, out_hi);
    iv::QueryScratch s = checked_query(e, Q_, l, true);
    std::pair<double, double> r;
    {
      nb::gil_scoped_release release;
      r = iv::interval_one(e.A, e.x, meinshausen, l.qs, l.masses, l.out_q, l.out_lo, l.out_hi,
                           s);
    }
    return nb::make_tuple(r.first, r.second);
  }, nb::arg("H"), nb::arg("Q"), nb::arg("meinshausen"), nb::arg("qs"),
     nb::arg("masses"), nb::arg("out_q").noconvert(), nb::arg("out_lo").noconvert(),
     nb::arg("out_hi").noconvert(),
     "``(lower, upper)`` of one level: ``query_one_h`` with two quantiles (equal-tailed) or "
     "one mass (highest-density), a missing bound made infinite.");
  m.def("interval_one_hp", [](nb::handle H_, nb::handle Q_, nb::handle P_,
                              bool meinshausen) {
    HandleArena e = engine_arena(H_);
    Levels l = levels_of(P_);
    iv::QueryScratch s = checked_query(e, Q_, l, true);
    std::pair<double, double> r;
    {
      nb::gil_scoped_release release;
      r = iv::interval_one(e.A, e.x, meinshausen, l.qs, l.masses, l.out_q, l.out_lo, l.out_hi,
                           s);
    }
    return nb::make_tuple(r.first, r.second);
  }, nb::arg("H"), nb::arg("Q"), nb::arg("P"), nb::arg("meinshausen"),
     "``interval_one_h`` with the arrays of its level packed in a third handle ``P`` (``qs``, "
     "``masses``, ``out_q``, ``out_lo``, ``out_hi``).");
}

}  // namespace sf::bind
