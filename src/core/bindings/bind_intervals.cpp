// Bindings of the interval methods' kernels that do not touch the trees (the sorted scores, the
// controllers, NormalizedConformal's and ConformalQRF's passes; those on the trees are in
// bind_intervals_trees.cpp).  Every shape, count and stored index a kernel will use is checked
// here, before it runs.
#include <nanobind/stl/optional.h>

#include <optional>
#include <string>

#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "bindings/zero_division.hpp"
#include "intervals/arith.hpp"
#include "intervals/controllers.hpp"
#include "intervals/cqr.hpp"
#include "intervals/normalized.hpp"
#include "intervals/online.hpp"
#include "intervals/scores.hpp"

namespace sf::bind {

void bind_intervals_trees(nb::module_& m);  // bind_intervals_trees.cpp: the kernels on the trees

namespace {

namespace iv = sf::intervals;

/// ``idx[:count]`` are indices into something of ``bound`` items.
void need_indices(Vec<const i64> idx, i64 count, i64 bound, const char* name) {
  for (i64 k = 0; k < count; ++k)
    if (idx[k] < 0 || idx[k] >= bound) fail(std::string(name) + ": an index out of range");
}

/// The ring ``[head, capacity]``: returns the capacity (>= 1, at most ``room``).
i64 need_ring(Vec<const i64> ring, i64 room) {
  need(ring.size() >= 2, "ring: expected [head, capacity]");
  i64 c = ring[1];
  need(c >= 1 && c <= room, "ring: a capacity outside the calibration arrays");
  need(ring[0] >= 0 && ring[0] < c, "ring: a head outside the capacity");
  return c;
}

/// A consistent sorted set of ``size`` members among ``c`` slots (scores.hpp's invariants).
void need_sorted_set(Vec<const i64> order, Vec<const i64> pos, i64 size, i64 c) {
  need(size >= 0 && size <= c, "size: outside [0, capacity]");
  need(order.size() >= c && pos.size() >= c, "sorted set: arrays shorter than the capacity");
  for (i64 k = 0; k < size; ++k) {
    i64 s = order[k];
    need(s >= 0 && s < c && pos[s] == k, "sorted set: order and positions disagree");
  }
  i64 held = 0;
  for (i64 s = 0; s < c; ++s) held += pos[s] >= 0 ? 1 : 0;
  need(held == size, "sorted set: positions of more slots than its size");
}

/// The rows' common arrays of the controllers' passes.
void need_rows(i64 n, i64 R, Mat<const double> blo_, Mat<const double> bhi_, i64 base_cols,
               Vec<const double> pred, Vec<const i8> mode, Cube<double> rec, i64 rec_width,
               Vec<const bool> learns, Vec<const i64> order, Mat<double> out_lo,
               Mat<double> out_hi, Vec<double> own_lo, Vec<double> own_hi) {
  need_shape(blo_, n, base_cols, "blo");
  need_shape(bhi_, n, base_cols, "bhi");
  need_len(pred, n, "pred");
  need_len(mode, n, "mode");
  need_shape(rec, n, R, rec_width, "rec");
  need_len(learns, R, "learns");
  need_len(own_lo, R, "own_lo");
  need_len(own_hi, R, "own_hi");
  need_shape(out_lo, n, 0, "out_lo");
  need_shape(out_hi, n, 0, "out_hi");
  i64 levels = py_min(py_min(own_lo.size(), own_hi.size()), py_min(out_lo.cols(), out_hi.cols()));
  need_indices(order, order.size(), levels, "order");
}

template <class T>
Vec<const T> cv(Vec<T> v) {
  return const_view(v);
}

}  // namespace

void bind_intervals(nb::module_& m) {
  register_zero_division();
  m.attr("LAG_GAIN") = iv::LAG_GAIN;
  m.attr("LEVEL_WARMUP") = iv::LEVEL_WARMUP;
  m.attr("GUARD_K") = iv::GUARD_K;
  m.attr("GUARD_H") = iv::GUARD_H;
  m.attr("GUARD_RHO") = iv::GUARD_RHO;
  m.attr("GUARD_MIN") = iv::GUARD_MIN;
  m.attr("SFOGD") = iv::SFOGD;
  m.attr("SAOCP") = iv::SAOCP;
  m.attr("DTACI") = iv::DTACI;
  m.attr("AGACI") = iv::AGACI;
  m.attr("NEXCP") = iv::NEXCP;
  m.attr("N_SCALARS") = iv::N_SCALARS;
  m.attr("TH") = iv::TH;
  m.attr("GSQ") = iv::GSQ;
  m.attr("SMAX") = iv::SMAX;
  m.attr("STEPS") = iv::STEPS;
  m.attr("CALN") = iv::CALN;
  m.attr("CALPOS") = iv::CALPOS;
  m.attr("CLOCK") = iv::CLOCK;
  m.attr("CORR") = iv::CORR;
  m.attr("A_LEVEL") = iv::A_LEVEL;
  m.attr("N_SAOCP_FIELDS") = iv::N_SAOCP_FIELDS;
  m.attr("N_AGACI_FIELDS") = iv::N_AGACI_FIELDS;

  // --- sorted scores ---------------------------------------------------------------------------
  m.def("ss_insert", [](Array<i64> order, Array<i64> pos, Array<double> ss, i64 n, double v,
                        i64 s) {
    auto o = vec(order, "order");
    auto p = vec(pos, "pos");
    auto sv = vec(ss, "ss");
    need(n >= 0 && n < o.size() && n < sv.size(), "n: no room to insert");
    need(s >= 0 && s < p.size(), "s: a slot outside pos");
    need_indices(cv(o), n, p.size(), "order");
    nb::gil_scoped_release release;
    return iv::ss_insert(o, p, sv, n, v, s);
  }, nb::arg("order").noconvert(), nb::arg("pos").noconvert(), nb::arg("ss").noconvert(),
     nb::arg("n"), nb::arg("v"), nb::arg("s"),
     "Insert score ``v`` of slot ``s`` into the sorted set of ``n``; returns ``n + 1``.");
  m.def("ss_update", [](Array<i64> order, Array<i64> pos, Array<double> ss, i64 n, double v,
                        i64 s) {
    auto o = vec(order, "order");
    auto p = vec(pos, "pos");
    auto sv = vec(ss, "ss");
    need(n >= 0 && n <= o.size() && n <= sv.size(), "n: more than the arrays hold");
    need(s >= 0 && s < p.size(), "s: a slot outside pos");
    need(p[s] >= 0 && p[s] < py_min(o.size(), sv.size()), "pos[s]: not a rank of the set");
    need_indices(cv(o), n, p.size(), "order");
    nb::gil_scoped_release release;
    iv::ss_update(o, p, sv, n, v, s);
  }, nb::arg("order").noconvert(), nb::arg("pos").noconvert(), nb::arg("ss").noconvert(),
     nb::arg("n"), nb::arg("v"), nb::arg("s"),
     "Slot ``s`` (held) gets the new score ``v``, moved to its place in the sorted set.");
  m.def("conformal_rank", &iv::conformal_rank, nb::arg("n"), nb::arg("alpha"),
        "``ceil((n + 1)(1 - alpha))``: the rank of the half-width among ``n`` scores.");
  m.def("sorted_half_width", [](Array<const double> ss, i64 n, double alpha) {
    auto sv = vec(ss, "ss");
    need_items(sv.size(), n, "ss");
    nb::gil_scoped_release release;
    return iv::sorted_half_width(sv, n, alpha);
  }, nb::arg("ss"), nb::arg("n"), nb::arg("alpha"),
     "The conformal-rank-th smallest of the sorted scores ``ss[:n]`` (inf beyond ``n``).");
  m.def("ring_slots", [](Array<i64> ring, Array<const double> W, Array<i64> slots) {
    auto rg = vec(ring, "ring");
    auto w = mat(W, "W");
    auto sl = vec(slots, "slots");
    need(rg.size() >= 2 && rg[1] >= 1, "ring: expected [head, capacity >= 1]");
    need_len(sl, w.cols(), "slots");
    nb::gil_scoped_release release;
    iv::ring_slots(rg, w, sl);
  }, nb::arg("ring").noconvert(), nb::arg("W"), nb::arg("slots").noconvert(),
     "Slot of each row that enters the calibration set (out of bag for some tree), else -1.");

  // --- ACI and PID -----------------------------------------------------------------------------
  m.def("lag_step", &iv::lag_step, nb::arg("step"), nb::arg("lag"), nb::arg("cap"));
  m.def(
      "aci_pass",
      [](Array<const double> blo, Array<const double> bhi, Array<const double> pred,
         Array<const double> y, Array<const i8> mode, Array<double> rec, Array<const i64> lad_idx,
         Array<const double> lad_logit, Array<const double> alphas, Array<const bool> learns,
         double gamma, Array<double> alpha_t, Array<i64> steps, Array<const i64> order,
         Array<double> out_lo, Array<double> out_hi, Array<double> own_lo,
         Array<double> own_hi) {
        auto bl = mat(blo, "blo");
        auto bh = mat(bhi, "bhi");
        auto yv = vec(y, "y");
        auto rc = cube(rec, "rec");
        auto li = mat(lad_idx, "lad_idx");
        auto ll = mat(lad_logit, "lad_logit");
        auto al = vec(alphas, "alphas");
        auto at = vec(alpha_t, "alpha_t");
        auto st = vec(steps, "steps");
        auto ol = mat(out_lo, "out_lo");
        auto oh = mat(out_hi, "out_hi");
        auto wl = vec(own_lo, "own_lo");
        auto wh = vec(own_hi, "own_hi");
        auto ov = vec(order, "order");
        auto lv = vec(learns, "learns");
        auto pv = vec(pred, "pred");
        auto mv = vec(mode, "mode");
        i64 n = yv.size(), R = al.size(), K = li.cols();
        need_rows(n, R, bl, bh, 0, pv, mv, rc, 3, lv, ov, ol, oh, wl, wh);
        need(K >= 2, "lad_idx: a ladder of at least two levels");
        need_shape(li, R, K, "lad_idx");
        need_shape(ll, R, K, "lad_logit");
        i64 cols = py_min(bl.cols(), bh.cols());
        for (i64 r = 0; r < R; ++r) need_indices(li.row(r), K, cols, "lad_idx");
        need_len(at, R, "alpha_t");
        need_len(st, R, "steps");
        nb::gil_scoped_release release;
        iv::aci_pass(bl, bh, pv, yv, mv, rc, li, ll, al, lv, gamma, at, st, ov, ol, oh, wl, wh);
      },
      nb::arg("blo"), nb::arg("bhi"), nb::arg("pred"), nb::arg("y"), nb::arg("mode"),
      nb::arg("rec").noconvert(), nb::arg("lad_idx"), nb::arg("lad_logit"), nb::arg("alphas"),
      nb::arg("learns"), nb::arg("gamma"), nb::arg("alpha_t").noconvert(),
      nb::arg("steps").noconvert(), nb::arg("order"), nb::arg("out_lo").noconvert(),
      nb::arg("out_hi").noconvert(), nb::arg("own_lo").noconvert(),
      nb::arg("own_hi").noconvert(),
      "ACI (Gibbs & Candes 2021) over the base intervals at the union ladder's levels.");
  m.def(
      "pid_pass",
      [](Array<const double> blo, Array<const double> bhi, Array<const double> pred,
         Array<const double> y, Array<const i8> mode, Array<double> rec,
         Array<const double> alphas, Array<const bool> learns, double lr, double ki, double csat,
         Array<double> p, Array<double> isum, Array<i64> steps, Array<double> win,
         Array<i64> win_n, Array<i64> win_pos, Array<const i64> order, Array<double> out_lo,
         Array<double> out_hi, Array<double> own_lo, Array<double> own_hi) {
        auto bl = mat(blo, "blo");
        auto bh = mat(bhi, "bhi");
        auto yv = vec(y, "y");
        auto rc = cube(rec, "rec");
        auto al = vec(alphas, "alphas");
        auto pp = vec(p, "p");
        auto is = vec(isum, "isum");
        auto st = vec(steps, "steps");
        auto wn = mat(win, "win");
        auto wc = vec(win_n, "win_n");
        auto wp = vec(win_pos, "win_pos");
        auto ol = mat(out_lo, "out_lo");
        auto oh = mat(out_hi, "out_hi");
        auto wl = vec(own_lo, "own_lo");
        auto wh = vec(own_hi, "own_hi");
        auto ov = vec(order, "order");
        auto lv = vec(learns, "learns");
        auto pv = vec(pred, "pred");
        auto mv = vec(mode, "mode");
        i64 n = yv.size(), R = al.size(), W = wn.cols();
        need_rows(n, R, bl, bh, R, pv, mv, rc, 4, lv, ov, ol, oh, wl, wh);
        need_len(pp, R, "p");
        need_len(is, R, "isum");
        need_len(st, R, "steps");
        need(W >= 1, "win: a window of at least one score");
        need_shape(wn, R, 1, "win");
        need_len(wc, R, "win_n");
        need_len(wp, R, "win_pos");
        for (i64 r = 0; r < R; ++r)
          need(wc[r] >= 0 && wc[r] <= W && wp[r] >= 0 && wp[r] < W,
               "win_n / win_pos: outside the window");
        nb::gil_scoped_release release;
        iv::pid_pass(bl, bh, pv, yv, mv, rc, al, lv, lr, ki, csat, pp, is, st, wn, wc, wp, ov,
                     ol, oh, wl, wh);
      },
      nb::arg("blo"), nb::arg("bhi"), nb::arg("pred"), nb::arg("y"), nb::arg("mode"),
      nb::arg("rec").noconvert(), nb::arg("alphas"), nb::arg("learns"), nb::arg("lr"),
      nb::arg("ki"), nb::arg("csat"), nb::arg("p").noconvert(), nb::arg("isum").noconvert(),
      nb::arg("steps").noconvert(), nb::arg("win").noconvert(), nb::arg("win_n").noconvert(),
      nb::arg("win_pos").noconvert(), nb::arg("order"), nb::arg("out_lo").noconvert(),
      nb::arg("out_hi").noconvert(), nb::arg("own_lo").noconvert(),
      nb::arg("own_hi").noconvert(),
      "Conformal PID control (quantile tracking plus a saturating integrator).");

  // --- the online methods ----------------------------------------------------------------------
  m.def(
      "online_pass",
      [](i64 method, bool scaled, double floor, double theta0, Array<const double> blo,
         Array<const double> bhi, Array<const double> pred, Array<const double> y,
         Array<const i8> mode, Array<double> rec, Array<const double> alphas,
         Array<const bool> learns, Array<const double> gammas, Array<const double> eta,
         double sigma, double gamma, double lifetime, double scale, double rho, bool clip,
         Array<double> st, Array<double> cal, Array<double> ex, Array<const i64> order,
         Array<double> out_lo, Array<double> out_hi, Array<double> own_lo, Array<double> own_hi,
         Array<double> buf, Array<double> probs) {
        auto bl = mat(blo, "blo");
        auto bh = mat(bhi, "bhi");
        auto yv = vec(y, "y");
        auto rc = cube(rec, "rec");
        auto al = vec(alphas, "alphas");
        auto gv = vec(gammas, "gammas");
        auto ev = vec(eta, "eta");
        auto sv = mat(st, "st");
        auto cl = mat(cal, "cal");
        auto xv = cube(ex, "ex");
        auto ol = mat(out_lo, "out_lo");
        auto oh = mat(out_hi, "out_hi");
        auto wl = vec(own_lo, "own_lo");
        auto wh = vec(own_hi, "own_hi");
        auto bf = vec(buf, "buf");
        auto pb = mat(probs, "probs");
        auto ov = vec(order, "order");
        auto lv = vec(learns, "learns");
        auto pv = vec(pred, "pred");
        auto mv = vec(mode, "mode");
        i64 n = yv.size(), R = al.size(), K = gv.size(), W = cl.cols();
        bool saocp = method == iv::SAOCP, dtaci = method == iv::DTACI;
        bool agaci = !saocp && !dtaci && method != iv::SFOGD && method != iv::NEXCP;
        i64 width = dtaci ? 4 + 2 * K : (agaci ? 5 + K : 5);
        need_rows(n, R, bl, bh, R, pv, mv, rc, width, lv, ov, ol, oh, wl, wh);
        need_shape(sv, R, iv::N_SCALARS, "st");
        need(W >= 1, "cal: a window of at least one score");
        need_shape(cl, R, W, "cal");
        need_len(bf, W, "buf");
        need_shape(pb, 2, K, "probs");
        if (saocp) need_shape(xv, R, 1, iv::N_SAOCP_FIELDS, "ex");
        if (dtaci) need_shape(xv, R, K, 2, "ex");
        if (agaci) need_shape(xv, R, K, iv::N_AGACI_FIELDS, "ex");
        if (dtaci) need_len(ev, R, "eta");
        for (i64 r = 0; r < R; ++r) {
          i64 held = to_i64(sv(r, iv::CALN)), next = to_i64(sv(r, iv::CALPOS));
          need(held >= 0 && held <= W && next >= 0 && next < W,
               "st: a window count or position outside cal");
          // (a clock in (-1, 1) would never halve to an odd number: SAOCP's clocks start at 1)
          if (saocp) need(!(sv(r, iv::CLOCK) < 1.0), "st: an SAOCP clock below 1");
        }
        nb::gil_scoped_release release;
        iv::online_pass(method, scaled, floor, theta0, bl, bh, pv, yv, mv, rc, al, lv, gv, ev,
                        sigma, gamma, lifetime, scale, rho, clip, sv, cl, xv, ov, ol, oh, wl, wh,
                        bf, pb);
      },
      nb::arg("method"), nb::arg("scaled"), nb::arg("floor"), nb::arg("theta0"), nb::arg("blo"),
      nb::arg("bhi"), nb::arg("pred"), nb::arg("y"), nb::arg("mode"), nb::arg("rec").noconvert(),
      nb::arg("alphas"), nb::arg("learns"), nb::arg("gammas"), nb::arg("eta"), nb::arg("sigma"),
      nb::arg("gamma"), nb::arg("lifetime"), nb::arg("scale"), nb::arg("rho"), nb::arg("clip"),
      nb::arg("st").noconvert(), nb::arg("cal").noconvert(), nb::arg("ex").noconvert(),
      nb::arg("order"), nb::arg("out_lo").noconvert(), nb::arg("out_hi").noconvert(),
      nb::arg("own_lo").noconvert(), nb::arg("own_hi").noconvert(), nb::arg("buf").noconvert(),
      nb::arg("probs").noconvert(),
      "SF-OGD, SAOCP, DtACI, AgACI or NExCP (``method``) over the base intervals, rows in order.");

  // --- NormalizedConformal ---------------------------------------------------------------------
  m.def("scale_of", &iv::scale_of, nb::arg("spread"), nb::arg("mean"), nb::arg("offset"),
        nb::arg("normalize"));
  m.def("weighted_half_width", [](Array<const double> ss, Array<const i64> order, i64 size,
                                  i64 head, i64 cap, double rho, double alpha) {
    auto sv = vec(ss, "ss");
    auto ov = vec(order, "order");
    need_items(sv.size(), size, "ss");
    need_items(ov.size(), size, "order");
    need(cap >= 1 || size == 0, "cap: at least 1");
    nb::gil_scoped_release release;
    return iv::weighted_half_width(sv, ov, size, head, cap, rho, alpha);
  }, nb::arg("ss"), nb::arg("order"), nb::arg("size"), nb::arg("head"), nb::arg("cap"),
     nb::arg("rho"), nb::arg("alpha"),
     "The recency-weighted conformal quantile of the sorted scores ``ss[:size]``.");
  m.def("score_rank", [](Array<const double> ss, i64 size, double v) {
    auto sv = vec(ss, "ss");
    need_items(sv.size(), size, "ss");
    return iv::score_rank(sv, size, v);
  }, nb::arg("ss"), nb::arg("size"), nb::arg("v"));
  m.def(
      "normalized_pass",
      [](i64 size, Array<i64> ring, Array<double> score, Array<i64> order, Array<i64> pos,
         Array<double> ss, Array<double> cspread, Array<double> level, i64 span,
         Array<const double> yhat, Array<const double> spread, Array<const double> y, bool learn,
         bool normalize, double offset, Array<const double> alphas, Array<double> half,
         Array<double> guard, std::optional<Array<const i8>> flagged) {
        auto rg = vec(ring, "ring");
        auto sc = vec(score, "score");
        auto ov = vec(order, "order");
        auto ps = vec(pos, "pos");
        auto sv = vec(ss, "ss");
        auto cs = vec(cspread, "cspread");
        auto lv = vec(level, "level");
        auto yh = vec(yhat, "yhat");
        auto sp = vec(spread, "spread");
        auto yv = vec(y, "y");
        auto al = vec(alphas, "alphas");
        auto hf = mat(half, "half");
        auto gd = vec(guard, "guard");
        i64 room = py_min(py_min(py_min(sc.size(), ov.size()), py_min(ps.size(), sv.size())),
                          cs.size());
        i64 c = need_ring(cv(rg), room);
        need_sorted_set(cv(ov), cv(ps), size, c);
        need_len(lv, 2, "level");
        need_len(gd, 2, "guard");
        i64 n = yv.size();
        need_len(yh, n, "yhat");
        need_len(sp, n, "spread");
        need_shape(hf, n, al.size(), "half");
        Vec<const i8> fl;
        if (flagged) {
          fl = vec(*flagged, "flagged");
          need_len(fl, n, "flagged");
        }
        nb::gil_scoped_release release;
        return iv::normalized_pass(size, rg, sc, ov, ps, sv, cs, lv, span, yh, sp, yv, learn,
                                   normalize, offset, al, hf, gd, fl);
      },
      nb::arg("size"), nb::arg("ring").noconvert(), nb::arg("score").noconvert(),
      nb::arg("order").noconvert(), nb::arg("pos").noconvert(), nb::arg("ss").noconvert(),
      nb::arg("cspread").noconvert(), nb::arg("level").noconvert(), nb::arg("span"),
      nb::arg("yhat"), nb::arg("spread"), nb::arg("y"), nb::arg("learn"), nb::arg("normalize"),
      nb::arg("offset"), nb::arg("alphas"), nb::arg("half").noconvert(),
      nb::arg("guard").noconvert(), nb::arg("flagged") = nb::none(),
      "NormalizedConformal's pass: half-widths before each row, then the row enters the ring "
      "(the level skips the rows ``flagged`` by the label guard); returns the new size.");
  m.def("tree_spread", [](Array<const double> P, Array<double> out) {
    auto p = mat(P, "P");
    auto o = vec(out, "out");
    need_len(o, p.cols(), "out");
    nb::gil_scoped_release release;
    iv::tree_spread(p, o);
  }, nb::arg("P"), nb::arg("out").noconvert(),
     "``out[i]``: the standard deviation of the trees' predictions ``P[:, i]``.");
  m.def("tree_mean", [](Array<const double> P) { return iv::tree_mean(vec(P, "P")); },
        nb::arg("P"), "The mean of the trees' predictions ``P`` (one row), summed in order.");

  // --- ConformalQRF ----------------------------------------------------------------------------
  m.def(
      "cqr_levels_pass",
      [](i64 size, Array<i64> ring, Array<double> cscore, Array<i64> order, Array<i64> pos,
         Array<double> ss, Array<const double> base_lo, Array<const double> base_hi,
         Array<const double> oob_lo, Array<const double> oob_hi, Array<const double> W,
         Array<const double> y, bool learn, Array<const double> alphas, double aci_gamma,
         Array<double> alpha_t, Array<double> half, Array<const double> req,
         Array<const i64> req_base, Array<double> req_half) {
        auto rg = vec(ring, "ring");
        auto cs = mat(cscore, "cscore");
        auto ov = mat(order, "order");
        auto ps = mat(pos, "pos");
        auto sv = mat(ss, "ss");
        auto bl = mat(base_lo, "base_lo");
        auto bh = mat(base_hi, "base_hi");
        auto obl = mat(oob_lo, "oob_lo");
        auto obh = mat(oob_hi, "oob_hi");
        auto wv = mat(W, "W");
        auto yv = vec(y, "y");
        auto al = vec(alphas, "alphas");
        auto at = vec(alpha_t, "alpha_t");
        auto hf = mat(half, "half");
        auto rq = vec(req, "req");
        auto rb = vec(req_base, "req_base");
        auto rh = mat(req_half, "req_half");
        i64 n = yv.size(), A = al.size(), R = rq.size();
        need_shape(cs, A, 0, "cscore");
        need_shape(ov, A, 0, "order");
        need_shape(ps, A, 0, "pos");
        need_shape(sv, A, 0, "ss");
        i64 room = py_min(py_min(cs.cols(), ov.cols()), py_min(ps.cols(), sv.cols()));
        i64 c = need_ring(cv(rg), room);
        need(size >= 0 && size <= c, "size: outside [0, capacity]");
        for (i64 a = 0; a < A; ++a) need_sorted_set(cv(ov.row(a)), cv(ps.row(a)), size, c);
        need_len(at, A, "alpha_t");
        need_shape(hf, n, A, "half");
        need_len(rb, R, "req_base");
        need_indices(rb, R, A, "req_base");
        need_shape(rh, n, R, "req_half");
        if (learn) {
          need(A >= 1, "alphas: learning needs a calibrated level");
          need_shape(bl, n, A, "base_lo");
          need_shape(bh, n, A, "base_hi");
          need_shape(obl, n, A, "oob_lo");
          need_shape(obh, n, A, "oob_hi");
          need_shape(wv, 0, n, "W");
        }
        nb::gil_scoped_release release;
        return iv::cqr_levels_pass(size, rg, cs, ov, ps, sv, bl, bh, obl, obh, wv, yv, learn, al,
                                   aci_gamma, at, hf, rq, rb, rh);
      },
      nb::arg("size"), nb::arg("ring").noconvert(), nb::arg("cscore").noconvert(),
      nb::arg("order").noconvert(), nb::arg("pos").noconvert(), nb::arg("ss").noconvert(),
      nb::arg("base_lo"), nb::arg("base_hi"), nb::arg("oob_lo"), nb::arg("oob_hi"), nb::arg("W"),
      nb::arg("y"), nb::arg("learn"), nb::arg("alphas"), nb::arg("aci_gamma"),
      nb::arg("alpha_t").noconvert(), nb::arg("half").noconvert(), nb::arg("req"),
      nb::arg("req_base"), nb::arg("req_half").noconvert(),
      "ConformalQRF's pass: out-of-bag CQR scores per calibrated level (optionally with ACI); "
      "returns the new size.");

  // --- the kernels on the forest's trees (CPApproximate, CPExact, GaussianInterval) ------------
  bind_intervals_trees(m);
}

}  // namespace sf::bind
