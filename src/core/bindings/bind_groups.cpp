// Bindings of the group-conditional calibration (intervals/groups.hpp): the windows' pass and
// its single steps.  Every shape, cell index and touched window is checked before a kernel runs.
#include <cmath>
#include <string>
#include <vector>

#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "intervals/groups.hpp"
#include "intervals/multivalid.hpp"

namespace sf::bind {

namespace {

namespace iv = sf::intervals;

/// The windows' arrays: ``meta (cells, 2)``, ``order``, ``pos``, ``ss`` ``(cells, W)``, at
/// least one cell (the pool) and ``W >= 1``.
void need_windows(Mat<i64> meta, Mat<i64> order, Mat<i64> pos, Mat<double> ss) {
  need(meta.cols() == 2, "meta: expected (cells, 2)");
  i64 C = meta.rows();
  i64 W = ss.cols();
  need(C >= 1 && W >= 1, "windows: at least the pool's cell and one slot");
  need(order.rows() == C && pos.rows() == C && ss.rows() == C,
       "windows: meta, order, pos and ss must have one row per cell");
  need(order.cols() == W && pos.cols() == W, "windows: order, pos and ss of one width");
}

/// Cell ``c``'s window is consistent: head inside the slots, a sorted set of its size.
void need_window(Mat<i64> meta, Mat<i64> order, Mat<i64> pos, i64 c) {
  i64 W = order.cols();
  i64 head = meta(c, 0), size = meta(c, 1);
  need(head >= 0 && head < W, "window: a head outside its slots");
  need(size >= 0 && size <= W, "window: a size outside [0, slots]");
  Vec<i64> o = order.row(c);
  Vec<i64> p = pos.row(c);
  for (i64 k = 0; k < size; ++k) {
    i64 s = o[k];
    need(s >= 0 && s < W && p[s] == k, "window: order and positions disagree");
  }
  i64 held = 0;
  for (i64 s = 0; s < W; ++s) {
    need(p[s] >= -1 && p[s] < size, "window: a position outside its size");
    held += p[s] >= 0 ? 1 : 0;
  }
  need(held == size, "window: positions of more slots than its size");
}

/// Every cell of ``ids`` is -1 or a cell; every window the rows reach (and the pool's) checked.
void need_cells(Mat<const i64> ids, Mat<i64> meta, Mat<i64> order, Mat<i64> pos) {
  i64 C = meta.rows();
  std::vector<char> seen(static_cast<size_t>(C), 0);
  seen[0] = 1;
  need_window(meta, order, pos, 0);
  for (i64 i = 0; i < ids.rows(); ++i) {
    for (i64 f = 0; f < ids.cols(); ++f) {
      i64 c = ids(i, f);
      if (c < -1 || c >= C) fail("ids: a cell outside the windows (-1: none)");
      if (c < 0 || seen[static_cast<size_t>(c)]) continue;
      seen[static_cast<size_t>(c)] = 1;
      need_window(meta, order, pos, c);
    }
  }
}

}  // namespace

void bind_groups(nb::module_& m) {
  m.def(
      "group_pass",
      [](Array<const i64> ids, Array<const double> lo, Array<const double> hi,
         Array<const double> y, bool learn, Array<const double> alphas, Array<i64> meta,
         Array<i64> order, Array<i64> pos, Array<double> ss, Array<double> out_lo,
         Array<double> out_hi) {
        auto idv = mat(ids, "ids");
        auto lv = vec(lo, "lo");
        auto hv = vec(hi, "hi");
        auto yv = vec(y, "y");
        auto al = vec(alphas, "alphas");
        auto mt = mat(meta, "meta");
        auto ov = mat(order, "order");
        auto pv = mat(pos, "pos");
        auto sv = mat(ss, "ss");
        auto ol = mat(out_lo, "out_lo");
        auto oh = mat(out_hi, "out_hi");
        i64 n = lv.size();
        need(hv.size() == n && yv.size() == n && idv.rows() == n,
             "lo, hi, y and ids: one item (row) per row");
        need(ol.rows() == n && oh.rows() == n && ol.cols() == al.size() &&
                 oh.cols() == al.size(),
             "out_lo, out_hi: expected (rows, levels)");
        for (i64 a = 0; a < al.size(); ++a)
          need(al[a] > 0.0 && al[a] < 1.0, "alphas: a level outside (0, 1)");
        need_windows(mt, ov, pv, sv);
        need_cells(idv, mt, ov, pv);
        nb::gil_scoped_release release;
        iv::group_pass(idv, lv, hv, yv, learn, al, mt, ov, pv, sv, ol, oh);
      },
      nb::arg("ids"), nb::arg("lo"), nb::arg("hi"), nb::arg("y"), nb::arg("learn"),
      nb::arg("alphas"), nb::arg("meta").noconvert(), nb::arg("order").noconvert(),
      nb::arg("pos").noconvert(), nb::arg("ss").noconvert(), nb::arg("out_lo").noconvert(),
      nb::arg("out_hi").noconvert(),
      "Rows in order: each row's interval at every level from its groups' windows (a young "
      "group borrowing the pool's quantile; several families: the largest threshold), then, "
      "when learning, its score into the pool and its groups.");
  m.def(
      "group_set_pass",
      [](Array<const i64> ids, Array<const double> scores, Array<const bool> use,
         Array<const double> alphas, Array<i64> meta, Array<i64> order, Array<i64> pos,
         Array<double> ss, Array<double> thr) {
        auto idv = mat(ids, "ids");
        auto sc = vec(scores, "scores");
        auto us = vec(use, "use");
        auto al = vec(alphas, "alphas");
        auto mt = mat(meta, "meta");
        auto ov = mat(order, "order");
        auto pv = mat(pos, "pos");
        auto sv = mat(ss, "ss");
        auto th = mat(thr, "thr");
        i64 n = sc.size();
        need(us.size() == n && idv.rows() == n, "scores, use and ids: one item (row) per row");
        need(th.rows() == n && th.cols() == al.size(), "thr: expected (rows, levels)");
        for (i64 a = 0; a < al.size(); ++a)
          need(al[a] > 0.0 && al[a] < 1.0, "alphas: a level outside (0, 1)");
        need_windows(mt, ov, pv, sv);
        need_cells(idv, mt, ov, pv);
        nb::gil_scoped_release release;
        iv::group_set_pass(idv, sc, us, al, mt, ov, pv, sv, th);
      },
      nb::arg("ids"), nb::arg("scores"), nb::arg("use"), nb::arg("alphas"),
      nb::arg("meta").noconvert(), nb::arg("order").noconvert(), nb::arg("pos").noconvert(),
      nb::arg("ss").noconvert(), nb::arg("thr").noconvert(),
      "Prediction sets: each row's threshold at every level from its groups' windows (the "
      "rule of group_pass on the conformity scores themselves), then, for a row with a score "
      "(use), its score into the pool and its groups.");
  m.def(
      "mvp_pass",
      [](Array<const i64> ids, Array<const double> lo, Array<const double> hi,
         Array<const double> y, bool learn, Array<const double> alphas, double eta, i64 seed,
         i64 start, Array<double> v, Array<double> n, Array<double> out_lo,
         Array<double> out_hi) {
        auto idv = mat(ids, "ids");
        auto lv = vec(lo, "lo");
        auto hv = vec(hi, "hi");
        auto yv = vec(y, "y");
        auto al = vec(alphas, "alphas");
        auto vv = cube(v, "v");
        auto nv = cube(n, "n");
        auto ol = mat(out_lo, "out_lo");
        auto oh = mat(out_hi, "out_hi");
        i64 rows = lv.size(), R = al.size();
        need(hv.size() == rows && yv.size() == rows && idv.rows() == rows,
             "lo, hi, y and ids: one item (row) per row");
        need(ol.rows() == rows && oh.rows() == rows && ol.cols() == R && oh.cols() == R,
             "out_lo, out_hi: expected (rows, levels)");
        for (i64 a = 0; a < R; ++a)
          need(al[a] > 0.0 && al[a] < 1.0, "alphas: a level outside (0, 1)");
        need(vv.n0 == R && nv.n0 == R && vv.n1 >= 1 && nv.n1 == vv.n1 && vv.n2 >= 1 &&
                 nv.n2 == vv.n2,
             "v, n: expected (levels, buckets, cells), buckets and cells >= 1");
        need(std::isfinite(eta) && eta > 0.0, "eta: expected a finite number > 0");
        for (i64 i = 0; i < rows; ++i)
          for (i64 f = 0; f < idv.cols(); ++f)
            if (idv(i, f) < -1 || idv(i, f) >= vv.n2) fail("ids: a cell outside the state");
        nb::gil_scoped_release release;
        iv::mvp_pass(idv, lv, hv, yv, learn, al, eta, seed, start, vv, nv, ol, oh);
      },
      nb::arg("ids"), nb::arg("lo"), nb::arg("hi"), nb::arg("y"), nb::arg("learn"),
      nb::arg("alphas"), nb::arg("eta"), nb::arg("seed"), nb::arg("start"),
      nb::arg("v").noconvert(), nb::arg("n").noconvert(), nb::arg("out_lo").noconvert(),
      nb::arg("out_hi").noconvert(),
      "Multivalid (MVP) intervals of the rows in order at every tracked level, each row's miss "
      "then updating its bucket in each of its groups (and the marginal cell 0).");
  m.def("group_score", &iv::group_score, nb::arg("lo"), nb::arg("hi"), nb::arg("y"),
        "A row's score on its base interval: |y - m| / h (inf: the base was not finite).");
}

}  // namespace sf::bind
