// Bindings of the interval methods' kernels that work on the forest's trees
// (called by streamforest/intervals/conformal.py and gaussian.py), in the submodule
// ``_core.intervals`` (bind_intervals.cpp calls ``bind_intervals_trees``).
// Every shape, count and stored index a kernel will use is checked here, before it runs; a
// ``kind`` argument (the numba kernels' tree kind) is taken and unused: the core reads each
// tree's kind from its parameters.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "bindings/arena.hpp"
#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "bindings/engine_handle.hpp"
#include "engine/passes.hpp"
#include "intervals/arith.hpp"
#include "intervals/conformal.hpp"
#include "intervals/gaussian.hpp"
#include "tree/state.hpp"

namespace sf::bind {

namespace detail {
template <>
struct BufferFormat<std::int32_t> {  // (CPExact's event rows and members)
  static bool is(const char* f) { return f[0] == 'i' && f[1] == 0; }
};
}  // namespace detail

namespace {

namespace iv = sf::intervals;
using iv::i32;

template <class T>
Vec<const T> cv(Vec<T> v) {
  return Vec<const T>(v.data, v.n);
}

template <class T>
Mat<const T> cm(Mat<T> m) {
  return Mat<const T>(m.data, m.n0, m.n1);
}

/// Every tree of ``A`` runs on rows of ``width`` columns and is a regression tree.
void need_regression_forest(const tree::Arena& A, i64 width) {
  for (i64 t = 0; t < A.n_trees(); ++t)
    if (runnable_tree(A, t, width).kind.classification)
      fail("tree " + std::to_string(t) + ": a classification tree");
}

/// Tree ``t`` of ``A`` runs on rows of ``width`` columns and is a regression tree.
tree::TreeRef need_regression_tree(const tree::Arena& A, i64 t, i64 width) {
  tree::TreeRef st = runnable_tree(A, t, width);
  if (st.kind.classification) fail("tree " + std::to_string(t) + ": a classification tree");
  return st;
}

struct Range {
  i64 lo, hi;  // the smallest and the largest item (lo > hi: none)
};

/// The smallest and largest of ``v[start:n]``: a scan the compiler vectorises, as the checks of
/// per-example calls run over whole calibration sets.
Range range_of(Vec<const i64> v, i64 start, i64 n) {
  i64 lo = std::numeric_limits<i64>::max(), hi = std::numeric_limits<i64>::min();
  for (i64 k = start; k < n; ++k) {
    lo = v[k] < lo ? v[k] : lo;
    hi = v[k] > hi ? v[k] : hi;
  }
  return {lo, hi};
}

/// Whether every ``v[k]``, ``start <= k < n``, lies in ``[lo, hi)``.
bool all_in(Vec<const i64> v, i64 start, i64 n, i64 lo, i64 hi) {
  Range r = range_of(v, start, n);
  return r.lo > r.hi || (r.lo >= lo && r.hi < hi);
}

/// ``slots[i]``, ``start <= i < n``: a calibration slot of ``c`` or -1.
void need_slots(Vec<const i64> slots, i64 start, i64 n, i64 c) {
  if (!all_in(slots, start, n, -1, c)) fail("slots: a slot outside the calibration set");
}

/// The method pass's calibration set: ``size`` members, the slots with a rank (``pos >= 0``).
/// (The pass reads only which slots are held and rebuilds the sorted order: the ranks' values
/// and ``order`` are not read.)
void need_held(Vec<const i64> pos, i64 size, i64 c) {
  need(size >= 0 && size <= c, "size: outside [0, capacity]");
  i64 held = 0;
  for (i64 s = 0; s < c; ++s) held += pos[s] >= 0 ? 1 : 0;
  need(held == size, "sorted set: a size other than its held slots");
}

/// The calibration arrays ``(ring, cy, coob, cpred, csum, ccnt, score, order, pos, ss, cx)`` of
/// CPApproximate's per-example learning: every array holds the ring's capacity ``c`` slots,
/// ``T`` tree columns and rows of ``width`` features; ``size`` members, the rank of the ring's
/// next slot among them (or room for one more).  (The slots the sorted order moves are checked
/// where it moves them: conformal.hpp.)
void need_calibration(const iv::Calibration& C, i64 T, i64 width, i64 size) {
  need(C.ring.size() >= 2, "ring: expected [head, capacity]");
  i64 c = C.ring[1];
  need(c >= 1, "ring: a capacity below 1");
  need(C.ring[0] >= 0 && C.ring[0] < c, "ring: a head outside the capacity");
  need_len(C.cy, c, "cal_y");
  need_shape(C.coob, c, T, "cal_oob");
  need_shape(C.cpred, c, T, "cal_pred");
  need_len(C.csum, c, "cal_sum");
  need_len(C.ccnt, c, "cal_cnt");
  need_len(C.score, c, "cal_score");
  need_len(C.order, c, "cal_order");
  need_len(C.pos, c, "cal_pos");
  need_len(C.ss, c, "cal_sorted");
  need_shape(C.cx, c, width, "cal_x");
  need(size >= 0 && size <= c, "size: outside [0, capacity]");
  i64 p = C.pos[C.ring[0]];  // the slot a row enters next: its rank, or -1 and room to insert
  need(p >= -1 && p < size, "cal_pos: a rank outside the set");
  need(p >= 0 || size < c, "size: a full set without the ring's next slot");
}

/// The calibration handle ``C`` (CPApproximate._calibration_handle): its entries.
Vec<const i64> calibration_handle(nb::handle C_) {
  i64 n;
  const i64* p = detail::buffer_of<i64>(C_, 1, false, &n, "C");
  if (n != iv::C_SIZE) fail("C: not a calibration handle");
  return Vec<const i64>(p, n);
}

/// The sorted scores of a calibration handle, ``size`` of them held.
Vec<const double> handle_scores(nb::handle C_, i64 size) {
  Vec<const i64> C = calibration_handle(C_);
  Vec<const double> ss = engine::h1<const double>(C, 20);
  need(size >= 0 && size <= ss.size(), "size: outside the sorted scores");
  return ss;
}

/// A 1-d (``bvec``) or 2-d (``bmat``) float64 / int64 / int8 array argument read through the
/// buffer protocol (bindings/arena.hpp): C-contiguous, of the exact item type, writeable unless
/// ``T`` is const.  The per-example calls take a dozen arrays, and a general ndarray conversion
/// of each cost as much as the trees' work.
template <class T>
Vec<T> bvec(nb::handle h, const char* name) {
  i64 n;
  T* p = detail::buffer_of<std::remove_const_t<T>>(h, 1, !std::is_const_v<T>, &n, name);
  return Vec<T>(p, n);
}

template <class T>
Mat<T> bmat(nb::handle h, const char* name) {
  i64 sh[2];
  T* p = detail::buffer_of<std::remove_const_t<T>>(h, 2, !std::is_const_v<T>, sh, name);
  return Mat<T>(p, sh[0], sh[1]);
}

u64& state_of(Array<u64>& a) {
  if (a.ndim() != 1 || a.shape(0) < 1) fail("frng: a 1-d uint64 state");
  return a.data()[0];
}

/// The per-example engine arguments: arena, row, scratch one item per tree, the memo.
void need_one(const tree::Arena& A, Vec<const double> x, Vec<double> wt, Vec<double> P,
              Vec<i8> drifted, i64 t0, Mat<double> M) {
  i64 T = A.n_trees();
  need_regression_forest(A, x.size());
  if (wt.size() < T || P.size() < T || drifted.size() < T)
    fail("wt, P, drifted: one item per tree");
  if ((M.cols() > 0) && M.rows() < 4) fail("M: fewer than 4 rows");
  if (t0 < engine::FRESH) fail("t0: FRESH or a tree index");
}

/// An event buffer: ``ev_t``, ``ev_s``, ``ev_v`` of one capacity, ``ev_n[0]`` events in it.
i64 need_event_buffer(Vec<i32> ev_t, Vec<i32> ev_s, Vec<double> ev_v, Vec<i64> ev_n) {
  i64 cap = ev_t.size();
  need_len(ev_s, cap, "ev_s");
  need_len(ev_v, cap, "ev_v");
  need_len(ev_n, 1, "ev_n");
  need(ev_n[0] >= 0 && ev_n[0] <= cap, "ev_n: outside the event buffer");
  return cap;
}

}  // namespace

void bind_intervals_trees(nb::module_& m) {
  m.attr("TOP_MARGIN") = iv::TOP_MARGIN;
  m.attr("C_SIZE") = iv::C_SIZE;
  m.attr("TREES") = iv::TREES;
  m.attr("MIXTURE") = iv::MIXTURE;
  m.attr("CALIBRATED") = iv::CALIBRATED;

  // --- _conformal_kernels.py: the method pass -----------------------------------------------
  m.def(
      "conformal_pass",
      [](i64 size, nb::handle cy, nb::handle coob, nb::handle cpred, nb::handle csum,
         nb::handle ccnt, nb::handle score, nb::handle order, nb::handle pos, nb::handle ss,
         nb::handle P, nb::handle W, nb::handle y, nb::handle slots, nb::handle ev_t,
         nb::handle ev_s, nb::handle ev_v, nb::handle ev_n, nb::handle alphas, nb::handle half) {
        auto cyv = bvec<double>(cy, "cy");
        auto co = bmat<i8>(coob, "coob");
        auto cp = bmat<double>(cpred, "cpred");
        auto cs = bvec<double>(csum, "csum");
        auto cc = bvec<i64>(ccnt, "ccnt");
        auto sc = bvec<double>(score, "score");
        auto ov = bvec<i64>(order, "order");
        auto ps = bvec<i64>(pos, "pos");
        auto sv = bvec<double>(ss, "ss");
        auto p = bmat<const double>(P, "P");
        auto w = bmat<const double>(W, "W");
        auto yv = bvec<const double>(y, "y");
        auto sl = bvec<const i64>(slots, "slots");
        auto en = bvec<const i64>(ev_n, "ev_n");
        auto al = bvec<const double>(alphas, "alphas");
        auto hf = bmat<double>(half, "half");
        const i64 c = cyv.size(), T = p.rows(), n = p.cols();
        need_shape(co, c, T, "coob");
        need_shape(cp, c, T, "cpred");
        need_len(cs, c, "csum");
        need_len(cc, c, "ccnt");
        need_len(sc, c, "score");
        need_len(ov, c, "order");
        need_len(ps, c, "pos");
        need_len(sv, c, "ss");
        need_held(cv(ps), size, c);
        need_shape(w, T, n, "W");
        need_len(yv, n, "y");
        need_len(sl, n, "slots");
        need_slots(sl, 0, n, c);
        need_shape(hf, n, al.size(), "half");
        iv::Events ev;
        need(ev_t.is_none() == ev_s.is_none() && ev_t.is_none() == ev_v.is_none(),
             "ev_t, ev_s, ev_v: all arrays or all None");
        if (!ev_t.is_none()) {
          ev.present = true;
          ev.ev_t = bmat<const i32>(ev_t, "ev_t");
          ev.ev_s = bmat<const i32>(ev_s, "ev_s");
          ev.ev_v = bmat<const double>(ev_v, "ev_v");
          ev.ev_n = en;
          i64 cap = ev.ev_t.cols();
          need_shape(ev.ev_t, T, 0, "ev_t");
          need_shape(ev.ev_s, T, cap, "ev_s");
          need_shape(ev.ev_v, T, cap, "ev_v");
          need_len(en, T, "ev_n");
          for (i64 t = 0; t < T; ++t) {
            need(en[t] >= 0 && en[t] <= cap, "ev_n: outside the event buffers");
            for (i64 k = 0; k < en[t]; ++k)
              if (ev.ev_s(t, k) < 0 || ev.ev_s(t, k) >= c)
                fail("ev_s: a member outside the calibration set");
          }
        }
        nb::gil_scoped_release release;
        return iv::conformal_pass(size, cyv, co, cp, cs, cc, sc, ov, ps, sv, p, w, yv, sl, ev, al,
                                  hf);
      },
      nb::arg("size"), nb::arg("cy"), nb::arg("coob"), nb::arg("cpred"), nb::arg("csum"),
      nb::arg("ccnt"), nb::arg("score"), nb::arg("order"), nb::arg("pos"), nb::arg("ss"),
      nb::arg("P"), nb::arg("W"), nb::arg("y"), nb::arg("slots"), nb::arg("ev_t").none(),
      nb::arg("ev_s").none(), nb::arg("ev_v").none(), nb::arg("ev_n"), nb::arg("alphas"),
      nb::arg("half"),
      "Rows in order: the half-widths from the calibration scores before the row, then the row "
      "enters the calibration set and the trees' refresh events (``None``: none) apply; returns "
      "the new size.");
  m.def("copy_entrants", [](Array<const i64> slots, Array<const double> X, Array<double> cx) {
    auto sl = vec(slots, "slots");
    auto x = mat(X, "X");
    auto c = mat(cx, "cx");
    need_len(sl, x.rows(), "slots");
    need_slots(sl, 0, x.rows(), c.rows());
    need_shape(c, 0, x.cols(), "cx");
    nb::gil_scoped_release release;
    iv::copy_entrants(sl, x, c);
  }, nb::arg("slots"), nb::arg("X"), nb::arg("cx").noconvert(),
     "The features of the rows that entered the calibration set, into their slots of ``cx``.");

  // --- _conformal_kernels.py: CPExact's tree pass ------------------------------------------
  m.def(
      "exact_tree_pass",
      [](nb::handle A_, i64 t, nb::handle X, nb::handle y, nb::handle w, nb::handle slots,
         i64 g0, i64 start, nb::handle P, nb::handle cx, nb::handle cleaf, nb::handle cnext,
         nb::handle cprev, nb::handle cbirth, nb::handle ccur, nb::handle ev_t,
         nb::handle ev_s, nb::handle ev_v, nb::handle ev_n) {
        tree::Arena A = arena_of(A_);
        auto x = bmat<const double>(X, "X");
        auto yv = bvec<const double>(y, "y");
        auto wv = bvec<const double>(w, "w");
        auto sl = bvec<const i64>(slots, "slots");
        auto p = bvec<double>(P, "P");
        auto c_x = bmat<const double>(cx, "cx");
        auto lf = bvec<i64>(cleaf, "cleaf");
        auto nx = bvec<i64>(cnext, "cnext");
        auto pv = bvec<i64>(cprev, "cprev");
        auto bi = bvec<i64>(cbirth, "cbirth");
        auto cu = bvec<double>(ccur, "ccur");
        auto et = bvec<i32>(ev_t, "ev_t");
        auto es = bvec<i32>(ev_s, "ev_s");
        auto evv = bvec<double>(ev_v, "ev_v");
        auto en = bvec<i64>(ev_n, "ev_n");
        const i64 n = x.rows(), c = c_x.rows();
        need_regression_tree(A, t, x.cols());
        need_regression_tree(A, t, c_x.cols());
        need_len(yv, n, "y");
        need_len(wv, n, "w");
        need_len(sl, n, "slots");
        need_len(p, n, "P");
        need(start >= 0, "start: negative");
        need(g0 >= 0, "g0: negative");
        need_slots(sl, start, n, c);
        need_len(lf, c, "cleaf");
        need_len(nx, c, "cnext");
        need_len(pv, c, "cprev");
        need_len(bi, c, "cbirth");
        need_len(cu, c, "ccur");
        // (the member lists' links are checked where the pass follows them: conformal.hpp)
        need_event_buffer(et, es, evv, en);
        nb::gil_scoped_release release;
        return iv::exact_tree_pass(A, t, x, yv, wv, sl, g0, start, p, c_x, lf, nx, pv, bi, cu,
                                   et, es, evv, en);
      },
      nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("w"), nb::arg("slots"),
      nb::arg("g0"), nb::arg("start"), nb::arg("P"), nb::arg("cx"), nb::arg("cleaf"),
      nb::arg("cnext"), nb::arg("cprev"), nb::arg("cbirth"), nb::arg("ccur"), nb::arg("ev_t"),
      nb::arg("ev_s"), nb::arg("ev_v"), nb::arg("ev_n"),
      "Tree ``t`` through rows ``start..`` (predictions into ``P``, then learning), keeping its "
      "out-of-bag predictions of the calibration members current (events appended); returns "
      "the row it stopped before (or after, on a drift signal).");
  m.def("exact_tree_reset", [](i64 i, Array<i64> cleaf, Array<i32> ev_t, Array<i32> ev_s,
                               Array<double> ev_v, Array<i64> ev_n) {
    auto lf = vec(cleaf, "cleaf");
    auto et = vec(ev_t, "ev_t");
    auto es = vec(ev_s, "ev_s");
    auto evv = vec(ev_v, "ev_v");
    auto en = vec(ev_n, "ev_n");
    i64 cap = need_event_buffer(et, es, evv, en);
    i64 linked = 0;
    for (i64 k = 0; k < lf.size(); ++k) linked += lf[k] >= 0 ? 1 : 0;
    need(linked <= cap - en[0], "ev_t: no room for an event per linked member");
    nb::gil_scoped_release release;
    iv::exact_tree_reset(i, lf, et, es, evv, en);
  }, nb::arg("i"), nb::arg("cleaf").noconvert(), nb::arg("ev_t").noconvert(),
     nb::arg("ev_s").noconvert(), nb::arg("ev_v").noconvert(), nb::arg("ev_n").noconvert(),
     "Tree t was replaced after row ``i``: the members it was out of bag for drop it (events "
     "of value NaN) and are unlinked.");

  // --- _conformal_kernels.py: one row (CPApproximate's per-example API) ----------------------
  m.def(
      "cp_learn_one",
      [](nb::handle A_, Array<u64> frng, double lam, Array<const double> x, double y, double w,
         Array<double> wt, Array<double> P, Array<i8> drifted, i64 t0, Array<double> M,
         Array<i64> ring, Array<double> cy, Array<i8> coob, Array<double> cpred,
         Array<double> csum, Array<i64> ccnt, Array<double> score, Array<i64> order,
         Array<i64> pos, Array<double> ss, Array<double> cx, i64 size) {
        tree::Arena A = arena_of(A_);
        u64& s = state_of(frng);
        auto xv = vec(x, "x");
        auto wtv = vec(wt, "wt");
        auto p = vec(P, "P");
        auto d = vec(drifted, "drifted");
        auto mm = mat(M, "M");
        need_one(A, xv, wtv, p, d, t0, mm);
        iv::Calibration C{vec(ring, "ring"),   vec(cy, "cy"),       mat(coob, "coob"),
                          mat(cpred, "cpred"), vec(csum, "csum"),   vec(ccnt, "ccnt"),
                          vec(score, "score"), vec(order, "order"), vec(pos, "pos"),
                          vec(ss, "ss"),       mat(cx, "cx")};
        need_calibration(C, p.size(), xv.size(), size);
        iv::LearnResult r;
        {
          nb::gil_scoped_release release;
          r = iv::cp_learn_one(A, s, lam, xv, y, w, wtv, p, d, t0, mm, C, size);
        }
        return nb::make_tuple(r.status, r.size);
      },
      nb::arg("A"), nb::arg("frng").noconvert(), nb::arg("lam"), nb::arg("x"), nb::arg("y"),
      nb::arg("w"), nb::arg("wt").noconvert(), nb::arg("P").noconvert(),
      nb::arg("drifted").noconvert(), nb::arg("t0"), nb::arg("M").noconvert(),
      nb::arg("ring").noconvert(), nb::arg("cy").noconvert(), nb::arg("coob").noconvert(),
      nb::arg("cpred").noconvert(), nb::arg("csum").noconvert(), nb::arg("ccnt").noconvert(),
      nb::arg("score").noconvert(), nb::arg("order").noconvert(), nb::arg("pos").noconvert(),
      nb::arg("ss").noconvert(), nb::arg("cx").noconvert(), nb::arg("size"),
      "CPApproximate, one example: every tree learns ``(x, y)``; a row out of bag for some tree "
      "enters the calibration set.  Returns ``(status, size)``.");
  m.def(
      "cp_learn_one_h",
      [](nb::handle H_, nb::handle C_, double lam, double y, double w, i64 t0,
         bool memo, i64 size) {
        engine::EngineViews v = checked_engine_views(H_, true);
        if (t0 < engine::FRESH) fail("t0: FRESH or a tree index");
        iv::Calibration C = iv::calibration_views(calibration_handle(C_));
        need_calibration(C, v.P.size(), v.x.size(), size);
        iv::LearnResult r;
        {
          nb::gil_scoped_release release;
          r = iv::cp_learn_one(v.A, v.frng[0], lam, v.x, y, w, v.wt, v.P, v.drifted, t0,
                               memo ? v.M : v.M0, C, size);
        }
        return nb::make_tuple(r.status, r.size);
      },
      nb::arg("H"), nb::arg("C"), nb::arg("lam"), nb::arg("y"),
      nb::arg("w"), nb::arg("t0"), nb::arg("memo"), nb::arg("size"),
      "``cp_learn_one`` of an engine handle ``H`` and a calibration handle ``C``.");
  m.def(
      "cp_predict_one",
      [](nb::handle A_, Array<const double> x, i64 agg, Array<double> P, Array<double> M,
         Array<const double> ss, i64 size, Array<const double> alphas, Array<double> lo,
         Array<double> hi) {
        tree::Arena A = arena_of(A_);
        auto xv = vec(x, "x");
        auto p = vec(P, "P");
        auto mm = mat(M, "M");
        auto sv = vec(ss, "ss");
        auto al = vec(alphas, "alphas");
        auto l = vec(lo, "lo");
        auto h = vec(hi, "hi");
        need_regression_forest(A, xv.size());
        need(p.size() >= A.n_trees() && p.size() > 0, "P: fewer items than trees");
        need_shape(mm, 4, A.n_trees(), "M");
        need(size >= 0 && size <= sv.size(), "size: outside the sorted scores");
        need_len(l, al.size(), "lo");
        need_len(h, al.size(), "hi");
        nb::gil_scoped_release release;
        return iv::cp_predict_one(A, xv, agg, p, mm, sv, size, al, l, h);
      },
      nb::arg("A"), nb::arg("x"), nb::arg("agg"), nb::arg("P").noconvert(),
      nb::arg("M").noconvert(), nb::arg("ss"), nb::arg("size"), nb::arg("alphas"),
      nb::arg("lo").noconvert(), nb::arg("hi").noconvert(),
      "The forest's prediction for row ``x`` and its conformal interval at each level (into "
      "``lo``, ``hi``); the trees' leaves and predictions also into the memo ``M``.");
  m.def(
      "cp_predict_one_h",
      [](nb::handle H_, nb::handle C_, i64 agg, i64 size,
         Array<const double> alphas, Array<double> lo, Array<double> hi) {
        engine::EngineViews v = checked_engine_views(H_, true);
        Vec<const double> sv = handle_scores(C_, size);
        auto al = vec(alphas, "alphas");
        auto l = vec(lo, "lo");
        auto h = vec(hi, "hi");
        need_len(l, al.size(), "lo");
        need_len(h, al.size(), "hi");
        nb::gil_scoped_release release;
        return iv::cp_predict_one(v.A, v.x, agg, v.P, v.M, sv, size, al, l, h);
      },
      nb::arg("H"), nb::arg("C"), nb::arg("agg"), nb::arg("size"),
      nb::arg("alphas"), nb::arg("lo").noconvert(), nb::arg("hi").noconvert(),
      "``cp_predict_one`` of an engine handle ``H`` and a calibration handle ``C``.");
  m.def(
      "cp_interval_one_h",
      [](nb::handle H_, nb::handle C_, i64 agg, i64 size, double alpha) {
        engine::EngineViews v = checked_engine_views(H_, true);
        Vec<const double> sv = handle_scores(C_, size);
        iv::Interval r;
        {
          nb::gil_scoped_release release;
          r = iv::cp_interval_one(v.A, v.x, agg, v.P, v.M, sv, size, alpha);
        }
        return nb::make_tuple(r.lo, r.hi);
      },
      nb::arg("H"), nb::arg("C"), nb::arg("agg"), nb::arg("size"),
      nb::arg("alpha"),
      "``(lower, upper)`` of ``cp_predict_one_h`` at one level ``alpha``.");

  // --- _gaussian_kernels.py ------------------------------------------------------------------
  m.def(
      "gaussian_tree_pass",
      [](nb::handle A_, i64 t, Array<const double> X, Array<const double> y,
         Array<const double> w, i64 start, bool learn, bool residual, Array<double> P,
         Array<double> V, Array<double> N) {
        tree::Arena A = arena_of(A_);
        auto x = mat(X, "X");
        auto yv = vec(y, "y");
        auto wv = vec(w, "w");
        auto p = vec(P, "P");
        auto vv = vec(V, "V");
        auto nv = vec(N, "N");
        const i64 n = x.rows();
        need_regression_tree(A, t, x.cols());
        need_len(yv, n, "y");
        need_len(wv, n, "w");
        need_len(p, n, "P");
        need_len(vv, n, "V");
        need_len(nv, n, "N");
        need(start >= 0, "start: negative");
        nb::gil_scoped_release release;
        return iv::gaussian_tree_pass(A, t, x, yv, wv, start, learn, residual, p, vv, nv);
      },
      nb::arg("A"), nb::arg("t"), nb::arg("X"), nb::arg("y"), nb::arg("w"), nb::arg("start"),
      nb::arg("learn"), nb::arg("residual"), nb::arg("P").noconvert(), nb::arg("V").noconvert(),
      nb::arg("N").noconvert(),
      "Tree ``t``: each row's prediction, leaf variance and leaf weight, read before the row is "
      "learnt (when ``learn``); returns the row it stopped before (or after a drift signal).");
  m.def(
      "gaussian_pass",
      [](Array<const double> P, Array<const double> V, Array<const double> N,
         Array<const double> y, bool learn, double min_weight, i64 mode, double fading,
         Array<const double> z, Array<double> scale, Array<double> mean, Array<double> lo,
         Array<double> hi) {
        auto p = mat(P, "P");
        auto vv = mat(V, "V");
        auto nv = mat(N, "N");
        auto yv = vec(y, "y");
        auto zv = vec(z, "z");
        auto sc = vec(scale, "scale");
        auto mn = vec(mean, "mean");
        auto l = mat(lo, "lo");
        auto h = mat(hi, "hi");
        const i64 T = p.rows(), n = p.cols();
        need_shape(vv, T, n, "V");
        need_shape(nv, T, n, "N");
        if (learn) need_len(yv, n, "y");
        need_len(sc, 2, "scale");
        need_len(mn, n, "mean");
        need_shape(l, n, zv.size(), "lo");
        need_shape(h, n, zv.size(), "hi");
        nb::gil_scoped_release release;
        iv::gaussian_pass(p, vv, nv, yv, learn, min_weight, mode, fading, zv, sc, mn, l, h);
      },
      nb::arg("P"), nb::arg("V"), nb::arg("N"), nb::arg("y"), nb::arg("learn"),
      nb::arg("min_weight"), nb::arg("mode"), nb::arg("fading"), nb::arg("z"),
      nb::arg("scale").noconvert(), nb::arg("mean").noconvert(), nb::arg("lo").noconvert(),
      nb::arg("hi").noconvert(),
      "Rows in order: the forest's mean, its variance (TREES, MIXTURE or CALIBRATED) and the "
      "interval ``mean +- z sd``; when ``learn`` (CALIBRATED) the row then moves ``scale``.");
  m.def(
      "gaussian_trees_one",
      [](nb::handle A_, Array<const double> x, bool residual, Array<double> P, Array<double> V,
         Array<double> N) {
        tree::Arena A = arena_of(A_);
        auto xv = vec(x, "x");
        auto p = mat(P, "P");
        auto vv = mat(V, "V");
        auto nv = mat(N, "N");
        need_regression_forest(A, xv.size());
        need_shape(p, A.n_trees(), 1, "P");
        need_shape(vv, A.n_trees(), 1, "V");
        need_shape(nv, A.n_trees(), 1, "N");
        nb::gil_scoped_release release;
        iv::gaussian_trees_one(A, xv, residual, p, vv, nv);
      },
      nb::arg("A"), nb::arg("x"), nb::arg("residual"), nb::arg("P").noconvert(),
      nb::arg("V").noconvert(), nb::arg("N").noconvert(),
      "For row ``x``, every tree's prediction, leaf variance and leaf weight into column 0 of "
      "``P``, ``V``, ``N``.");
  m.def(
      "gaussian_predict_one",
      [](nb::handle A_, nb::handle x, bool residual, nb::handle P, nb::handle V, nb::handle N,
         double min_weight, i64 mode, nb::handle z, nb::handle scale, nb::handle mean,
         nb::handle lo, nb::handle hi) {
        tree::Arena A = arena_of(A_);
        auto xv = bvec<const double>(x, "x");
        auto p = bmat<double>(P, "P");
        auto vv = bmat<double>(V, "V");
        auto nv = bmat<double>(N, "N");
        auto zv = bvec<const double>(z, "z");
        auto sc = bvec<double>(scale, "scale");
        auto mn = bvec<double>(mean, "mean");
        auto l = bmat<double>(lo, "lo");
        auto h = bmat<double>(hi, "hi");
        const i64 T = A.n_trees(), n = p.cols();
        need_regression_forest(A, xv.size());
        need(p.rows() == T, "P: not a row per tree");  // (its rows are the pass's trees)
        need_shape(p, T, 1, "P");
        need_shape(vv, T, n, "V");
        need_shape(nv, T, n, "N");
        need_len(sc, 2, "scale");
        need_len(mn, n, "mean");
        need_shape(l, n, zv.size(), "lo");
        need_shape(h, n, zv.size(), "hi");
        nb::gil_scoped_release release;
        return iv::gaussian_predict_one(A, xv, residual, p, vv, nv, min_weight, mode, zv, sc, mn,
                                        l, h);
      },
      nb::arg("A"), nb::arg("x"), nb::arg("residual"), nb::arg("P"), nb::arg("V"), nb::arg("N"),
      nb::arg("min_weight"), nb::arg("mode"), nb::arg("z"), nb::arg("scale"), nb::arg("mean"),
      nb::arg("lo"), nb::arg("hi"),
      "The interval of row ``x`` at the levels of ``z`` (into row 0 of ``lo``, ``hi``); returns "
      "the forest's mean prediction.");
  m.def(
      "gaussian_learn_one",
      [](nb::handle A_, Array<u64> frng, double lam, nb::handle x, double y, double w,
         nb::handle wt, nb::handle Pt_, nb::handle drifted, i64 t0, nb::handle M, bool residual,
         nb::handle P, nb::handle V, nb::handle N, double min_weight, i64 mode, double fading,
         nb::handle z0, nb::handle scale, nb::handle mean, nb::handle lo, nb::handle hi,
         nb::handle yb) {
        tree::Arena A = arena_of(A_);
        u64& s = state_of(frng);
        auto xv = bvec<const double>(x, "x");
        auto wtv = bvec<double>(wt, "wt");
        auto pt = bvec<double>(Pt_, "Pt");
        auto d = bvec<i8>(drifted, "drifted");
        auto mm = bmat<double>(M, "M");
        auto p = bmat<double>(P, "P");
        auto vv = bmat<double>(V, "V");
        auto nv = bmat<double>(N, "N");
        auto zv = bvec<const double>(z0, "z0");
        auto sc = bvec<double>(scale, "scale");
        auto mn = bvec<double>(mean, "mean");
        auto l = bmat<double>(lo, "lo");
        auto h = bmat<double>(hi, "hi");
        auto ybv = bvec<double>(yb, "yb");
        const i64 T = A.n_trees(), n = p.cols();
        need_one(A, xv, wtv, pt, d, t0, mm);
        need(p.rows() == T, "P: not a row per tree");
        need_shape(p, T, 1, "P");
        need_shape(vv, T, n, "V");
        need_shape(nv, T, n, "N");
        need_len(sc, 2, "scale");
        need_len(mn, n, "mean");
        need_len(ybv, py_max(n, i64{1}), "yb");
        need_shape(l, n, zv.size(), "lo");
        need_shape(h, n, zv.size(), "hi");
        i64 status;
        {
          nb::gil_scoped_release release;
          status = iv::gaussian_learn_one(A, s, lam, xv, y, w, wtv, pt, d, t0, mm, residual, p,
                                          vv, nv, min_weight, mode, fading, zv, sc, mn, l, h,
                                          ybv);
        }
        return nb::make_tuple(status, nb::borrow(Pt_));
      },
      nb::arg("A"), nb::arg("frng").noconvert(), nb::arg("lam"), nb::arg("x"), nb::arg("y"),
      nb::arg("w"), nb::arg("wt"), nb::arg("Pt"), nb::arg("drifted"), nb::arg("t0"), nb::arg("M"),
      nb::arg("residual"), nb::arg("P"), nb::arg("V"), nb::arg("N"), nb::arg("min_weight"),
      nb::arg("mode"), nb::arg("fading"), nb::arg("z0"), nb::arg("scale"), nb::arg("mean"),
      nb::arg("lo"), nb::arg("hi"), nb::arg("yb"),
      "GaussianInterval's per-example step: the trees' predictions and leaf variances before "
      "they learn the row, the trees learn it, then the scale follows.  Returns ``(status, "
      "Pt)``.");
}

}  // namespace sf::bind
