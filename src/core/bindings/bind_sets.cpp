// Bindings of ConformalClassifier's kernels:
// same names and argument orders; shapes, counts and the calibration state checked first.
#include <string>

#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "bindings/zero_division.hpp"
#include "sets/conformal.hpp"

namespace sf::bind {

namespace {

/// ``state = [m, pos]`` of a calibration set of capacity ``C`` whose sorted scores ``srt``
/// hold ``srt_len`` items.
void need_state(Vec<const i64> state, i64 C, i64 srt_len) {
  need(state.size() >= 2, "state: expected [m, pos]");
  need(state[0] >= 0 && state[0] <= C && state[0] <= srt_len, "state: a count outside the set");
  need(state[1] >= 0 && state[1] < C, "state: a ring position outside the set");
}

}  // namespace

void bind_sets(nb::module_& m) {
  register_zero_division();
  m.attr("LAC") = sets::LAC;
  m.attr("APS") = sets::APS;
  m.attr("RAPS") = sets::RAPS;
  m.def("row_uniforms", [](i64 seed, i64 start, Array<double> out) {
    auto o = vec(out, "out");
    nb::gil_scoped_release release;
    sets::row_uniforms(seed, start, o);
  }, nb::arg("seed"), nb::arg("start"), nb::arg("out").noconvert(),
     "``out[i]``: a uniform in [0, 1) of ``seed`` and the row's position ``start + i``.");
  m.def(
      "class_scores",
      [](Array<const double> P, Array<const double> U, Array<const i64> known, i64 kind,
         double penalty, i64 k_reg, Array<double> out) {
        auto p = mat(P, "P");
        auto u = vec(U, "U");
        auto kn = vec(known, "known");
        auto o = mat(out, "out");
        i64 n = p.rows(), K = p.cols();
        need(u.size() >= n && kn.size() >= n, "U, known: fewer items than rows of P");
        need(o.rows() >= n && o.cols() >= K + 1, "out: expected (n, K + 1) at least");
        for (i64 i = 0; i < n; ++i)
          need(kn[i] >= 0 && kn[i] <= K, "known: a count outside the columns of P");
        nb::gil_scoped_release release;
        sets::class_scores(p, u, kn, kind, penalty, k_reg, o);
      },
      nb::arg("P"), nb::arg("U"), nb::arg("known"), nb::arg("kind"), nb::arg("penalty"),
      nb::arg("k_reg"), nb::arg("out").noconvert(),
      "Conformity score (LAC, APS, RAPS) of every class of every row; ``out[:, K]`` the score "
      "of a label not among the row's known columns.");
  m.def("thresholds", [](Array<const double> srt, Array<const i64> state,
                         Array<const double> levels, Array<double> out) {
    auto s = vec(srt, "srt");
    auto st = vec(state, "state");
    auto lv = vec(levels, "levels");
    auto o = vec(out, "out");
    need(st.size() >= 1 && st[0] <= s.size(), "state: a count beyond srt");
    need(o.size() >= lv.size(), "out: fewer items than levels");
    sets::thresholds(s, st, lv, o);
  }, nb::arg("srt"), nb::arg("state"), nb::arg("levels"), nb::arg("out").noconvert(),
     "``out[l]``: the current threshold at ``levels[l]``.");
  m.def(
      "calibration_pass",
      [](Array<const double> scores, Array<const bool> use, Array<const double> levels,
         Array<double> ring, Array<double> srt, Array<i64> state, Array<double> thr) {
        auto sc = vec(scores, "scores");
        auto us = vec(use, "use");
        auto lv = vec(levels, "levels");
        auto rg = vec(ring, "ring");
        auto sr = vec(srt, "srt");
        auto st = vec(state, "state");
        auto th = mat(thr, "thr");
        i64 n = sc.size(), C = rg.size();
        need(C >= 1, "ring: a calibration set of capacity at least 1");
        need(sr.size() >= C, "srt: shorter than the ring");
        need_state(Vec<const i64>(st.data, st.n), C, sr.size());
        need(us.size() >= n, "use: fewer items than scores");
        need(th.rows() >= n || th.cols() == 0, "thr: fewer rows than scores");
        need(lv.size() >= th.cols(), "levels: fewer than the columns of thr");
        nb::gil_scoped_release release;
        sets::calibration_pass(sc, us, lv, rg, sr, st, th);
      },
      nb::arg("scores"), nb::arg("use"), nb::arg("levels"), nb::arg("ring").noconvert(),
      nb::arg("srt").noconvert(), nb::arg("state").noconvert(), nb::arg("thr").noconvert(),
      "Each row's thresholds at ``levels`` from the calibration set before it, then its score "
      "joins the set if ``use[i]``.");
}

}  // namespace sf::bind
