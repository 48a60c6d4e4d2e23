// Bindings of the KLL sketches (KLLSketch's entry points, the runs queries, and the row kernels
// for the tests).
//
// A sketch from Python is checked before a kernel runs: the capacity table is one of
// kll.capacity_table's or kll.leaf_capacity_table's shape and keeps their invariants (level
// capacities at least 2, row 1 their sums), the items row is wide enough for it, and the level
// row is a sketch (1 to MAX_LEVELS levels, boundaries non-decreasing up to the row's end).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include <array>
#include <string>

#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "sketch/kll.hpp"
#include "sketch/sketch_kernels.hpp"
#include "sketch/sort_network.hpp"

namespace sf::bind {

namespace {

using namespace sf::sketch;

u64& state_of(Array<u64>& rng) {
  if (rng.ndim() != 1 || rng.shape(0) < 1) fail("rng: expected a 1-d uint64 state");
  return rng.data()[0];
}

/// The capacity table, checked; ``need``: the items a row must hold for it.
Mat<i64> capacity_of(Array<i64>& capt, i64& need) {
  auto c = mat(capt, "capt");
  if (c.cols() != MAX_LEVELS + 1 || (c.rows() != 2 && c.rows() != MAX_LEVELS + 2))
    fail("capt: expected a KLL capacity table, (2 or MAX_LEVELS + 2, MAX_LEVELS + 1)");
  if (c(1, 0) != 0) fail("capt: the capacity of no level must be 0");
  need = 0;
  for (i64 H = 1; H <= MAX_LEVELS; ++H) {
    i64 sum = 0;
    for (i64 d = 0; d < H; ++d) {
      i64 cd = level_capacity(c, H, d);
      if (cd < 2 || cd > (i64{1} << 40)) fail("capt: a level capacity outside [2, 2**40]");
      sum += cd;
    }
    if (c(1, H) != sum) fail("capt: row 1 is not the sum of the level capacities");
    need = py_max(need, sum);
  }
  return c;
}

/// Check that ``lv`` (a level row of a row of ``cap`` items) describes a sketch.
template <class L>
void need_sketch(L lv, i64 cap, const char* name) {
  i64 H = lv[LV_H];
  if (H < 1 || H > MAX_LEVELS) fail(std::string(name) + ": not a KLL sketch (level count)");
  if (lv[1] < 0 || lv[H + 1] != cap || lv[LV_N] < 0)
    fail(std::string(name) + ": not a KLL sketch of this row (level boundaries)");
  for (i64 h = 0; h < H; ++h)
    if (lv[h + 1] > lv[h + 2]) fail(std::string(name) + ": not a KLL sketch (level order)");
}

template <class T>
Mat<T> levels_of(Array<T>& lv, const char* name) {
  auto m = mat(lv, name);
  if (m.cols() != LV_WIDTH) fail(std::string(name) + ": expected LV_WIDTH (35) columns");
  return m;
}

void need_row(i64 r, i64 rows, const char* name) {
  if (r < 0 || r >= rows) throw nb::index_error((std::string(name) + ": row outside").c_str());
}

/// Sketch row ``r`` of ``items`` / ``lv``, checked against the capacity ``need``.
template <class I, class L>
void need_sketch_row(Mat<I> items, Mat<L> lv, i64 r, i64 need, const char* name) {
  need_row(r, items.rows(), name);
  need_row(r, lv.rows(), name);
  if (items.cols() < need) fail(std::string(name) + ": a row narrower than the capacity table");
  need_sketch(lv.row(r), items.cols(), name);
}

/// The runs ``[rs[k], re[k])`` of ``buf`` (``k < nruns``) lie in it (non-empty ones, or all
/// when ``nonempty``); scratch arrays hold ``nruns``.  Returns the items of all runs.
i64 need_runs(i64 size, Vec<i64> rs, Vec<i64> re, Vec<double> rw, i64 nruns, bool nonempty) {
  if (nruns < 0 || nruns > rs.size() || nruns > re.size() || nruns > rw.size())
    fail("nruns: more runs than rs, re or rw hold");
  i64 items = 0;
  for (i64 k = 0; k < nruns; ++k) {
    if (re[k] > rs[k]) {
      if (rs[k] < 0 || re[k] > size) fail("a run outside buf");
      items += re[k] - rs[k];
    } else if (nonempty) {
      fail("an empty run (the quantile walks take non-empty runs)");
    }
  }
  return items;
}

void need_scratch(i64 nruns, i64 size, const char* name) {
  if (size < nruns) fail(std::string(name) + ": scratch smaller than nruns");
}

template <size_t N>
void sort_net(Array<double>& x) {
  auto v = vec(x, "x");
  need_items(v.size(), static_cast<i64>(N), "x");
  std::array<double, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = v[static_cast<i64>(i)];
  if constexpr (N == 16) {
    sort16(a);
  } else {
    sort32(a);
  }
  for (size_t i = 0; i < N; ++i) v[static_cast<i64>(i)] = a[i];
}

}  // namespace

void bind_sketch(nb::module_& m) {
  m.attr("MAX_LEVELS") = MAX_LEVELS;
  m.attr("MIN_WIDTH") = MIN_WIDTH;
  m.attr("LV_H") = LV_H;
  m.attr("LV_N") = LV_N;
  m.attr("LV_WIDTH") = LV_WIDTH;
  m.attr("SCAN_RUNS") = SCAN_RUNS;
  m.attr("UNIT_BATCH_MIN") = UNIT_BATCH_MIN;
  m.attr("UNSORTED_MAX") = UNSORTED_MAX;

  // --- KLLSketch's entry points (sketch row 0) ------------------------------------------------
  m.def("update_many", [](Array<double> items, Array<i64> lv, Array<const double> values,
                          Array<const i64> weights, Array<i64> capt, Array<u64> rng) {
    i64 need = 0;
    auto c = capacity_of(capt, need);
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, 0, need, "sketch");
    auto v = vec(values, "values");
    auto w = vec(weights, "weights");
    need_items(w.size(), v.size(), "weights");
    for (i64 i = 0; i < v.size(); ++i)
      if (w[i] >= (i64{1} << MAX_LEVELS)) fail("weights: a weight of 2**32 or more");
    u64& state = state_of(rng);
    nb::gil_scoped_release release;
    update_many(it, l, v, w, c, state);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("values"),
     nb::arg("weights"), nb::arg("capt").noconvert(), nb::arg("rng").noconvert(),
     "``kll_update`` of sketch row 0 with each value and its (integer) weight, in order.");

  m.def("update_unit", [](Array<double> items, Array<i64> lv, Array<const double> values,
                          Array<i64> capt, Array<u64> rng, Array<double> bounds) {
    i64 need = 0;
    auto c = capacity_of(capt, need);
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, 0, need, "sketch");
    auto v = vec(values, "values");
    auto b = vec(bounds, "bounds");
    need_items(b.size(), 2, "bounds");
    u64& state = state_of(rng);
    nb::gil_scoped_release release;
    return update_unit(it, l, v, c, state, b);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("values"),
     nb::arg("capt").noconvert(), nb::arg("rng").noconvert(), nb::arg("bounds").noconvert(),
     "Add ``values`` (weight 1 each) to sketch row 0 and widen ``bounds`` (min, max); False, "
     "and nothing added, if one of them is not finite.");

  m.def("merge_sketch", [](Array<double> items, Array<i64> lv, Array<double> bounds,
                           Array<const double> o_items, Array<const i64> o_lv,
                           Array<const double> o_bounds, Array<i64> capt, Array<u64> rng) {
    i64 need = 0;
    auto c = capacity_of(capt, need);
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, 0, need, "sketch");
    auto oit = mat(o_items, "o_items");
    auto ol = levels_of(o_lv, "o_lv");
    need_row(0, oit.rows(), "other sketch");
    need_row(0, ol.rows(), "other sketch");
    need_sketch(ol.row(0), oit.cols(), "other sketch");
    auto b = vec(bounds, "bounds");
    auto ob = vec(o_bounds, "o_bounds");
    need_items(b.size(), 2, "bounds");
    need_items(ob.size(), 2, "o_bounds");
    if (ob.data == b.data || oit.data == it.data || ol.data == l.data)
      fail("merge_sketch: a sketch merged into itself");
    u64& state = state_of(rng);
    nb::gil_scoped_release release;
    merge_sketch(it, l, b, oit, ol, ob, c, state);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("bounds").noconvert(),
     nb::arg("o_items"), nb::arg("o_lv"), nb::arg("o_bounds"), nb::arg("capt").noconvert(),
     nb::arg("rng").noconvert(),
     "Insert every retained item of the other sketch (row 0) at its own level into sketch "
     "row 0, and widen ``bounds`` to ``o_bounds``.");

  m.def("quantiles", [](Array<double> items, Array<i64> lv, Array<const double> qs,
                        Array<double> out) {
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, 0, 0, "sketch");
    auto q = vec(qs, "qs");
    auto o = vec(out, "out");
    need_items(o.size(), q.size(), "out");
    nb::gil_scoped_release release;
    quantiles(it, l, q, o);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("qs"),
     nb::arg("out").noconvert(), "``out[i]``: the inclusive ``qs[i]``-quantile of sketch row 0.");

  m.def("sorted_view", [](Array<double> items, Array<i64> lv, Array<double> values,
                          Array<double> cumulative) {
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, 0, 0, "sketch");
    auto v = vec(values, "values");
    auto cu = vec(cumulative, "cumulative");
    i64 retained = it.cols() - l(0, 1);
    need_items(v.size(), retained, "values");
    need_items(cu.size(), retained, "cumulative");
    nb::gil_scoped_release release;
    return sorted_view(it, l, v, cu);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("values").noconvert(),
     nb::arg("cumulative").noconvert(),
     "The retained items ascending (``values``) and their cumulative weights; returns the count.");

  m.def("kll_retained", [](Array<double> items, Array<i64> lv, i64 r) {
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, r, 0, "sketch");
    nb::gil_scoped_release release;
    return kll_retained(it, l, r);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("r"));

  // --- one sketch row of shared arrays (the trees' leaf sketches) -----------------------------
  m.def("kll_update", [](Array<double> items, Array<i64> lv, i64 r, double v, i64 w,
                         Array<i64> capt, Array<u64> rng) {
    i64 need = 0;
    auto c = capacity_of(capt, need);
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, r, need, "sketch");
    if (w >= (i64{1} << MAX_LEVELS)) fail("w: a weight of 2**32 or more");
    u64& state = state_of(rng);
    nb::gil_scoped_release release;
    kll_update(it, l, r, v, w, c, state);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("r"), nb::arg("v"),
     nb::arg("w"), nb::arg("capt").noconvert(), nb::arg("rng").noconvert(),
     "Add ``v`` with integer weight ``w`` to sketch row ``r``.");
  m.def("kll_reset", [](Array<double> items, Array<i64> lv, i64 r) {
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_row(r, it.rows(), "sketch");
    need_row(r, l.rows(), "sketch");
    nb::gil_scoped_release release;
    kll_reset(it, l, r);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("r"));
  m.def("kll_copy", [](Array<double> items, Array<i64> lv, i64 src, i64 dst) {
    auto it = mat(items, "items");
    auto l = levels_of(lv, "lv");
    need_sketch_row(it, l, src, 0, "source sketch");
    need_row(dst, it.rows(), "destination sketch");
    need_row(dst, l.rows(), "destination sketch");
    nb::gil_scoped_release release;
    kll_copy(it, l, src, dst);
  }, nb::arg("items").noconvert(), nb::arg("lv").noconvert(), nb::arg("src"), nb::arg("dst"));
  m.def("kll_n", [](Array<i64> lv, i64 r) {
    auto l = levels_of(lv, "lv");
    need_row(r, l.rows(), "sketch");
    return kll_n(l, r);
  }, nb::arg("lv"), nb::arg("r"));

  // --- queries over sorted runs ----------------------------------------------------------------
  m.def("runs_quantile", [](Array<const double> buf, Array<i64> rs, Array<i64> re,
                            Array<double> rw, i64 nruns, double total, double q,
                            Array<double> hv, Array<i64> cur) {
    auto b = vec(buf, "buf");
    auto vrs = vec(rs, "rs"), vre = vec(re, "re"), vcur = vec(cur, "cur");
    auto vrw = vec(rw, "rw"), vhv = vec(hv, "hv");
    need_runs(b.size(), vrs, vre, vrw, nruns, true);
    need_scratch(nruns, vhv.size(), "hv");
    need_scratch(nruns, vcur.size(), "cur");
    nb::gil_scoped_release release;
    return runs_quantile(b, vrs, vre, vrw, nruns, total, q, vhv, vcur);
  }, nb::arg("buf"), nb::arg("rs"), nb::arg("re"), nb::arg("rw"), nb::arg("nruns"),
     nb::arg("total"), nb::arg("q"), nb::arg("hv").noconvert(), nb::arg("cur").noconvert(),
     "Inclusive ``q``-quantile of the weighted union of sorted runs (NaN if empty).");
  m.def("runs_quantile_many", [](Array<const double> buf, Array<i64> rs, Array<i64> re,
                                 Array<double> rw, i64 nruns, double total, double q,
                                 Array<double> hv, Array<i64> cur, Array<i64> heap) {
    auto b = vec(buf, "buf");
    auto vrs = vec(rs, "rs"), vre = vec(re, "re"), vcur = vec(cur, "cur");
    auto vheap = vec(heap, "heap");
    auto vrw = vec(rw, "rw"), vhv = vec(hv, "hv");
    need_runs(b.size(), vrs, vre, vrw, nruns, true);
    need_scratch(nruns, vhv.size(), "hv");
    need_scratch(nruns, vcur.size(), "cur");
    need_scratch(nruns, vheap.size(), "heap");
    nb::gil_scoped_release release;
    return runs_quantile_many(b, vrs, vre, vrw, nruns, total, q, vhv, vcur, vheap);
  }, nb::arg("buf"), nb::arg("rs"), nb::arg("re"), nb::arg("rw"), nb::arg("nruns"),
     nb::arg("total"), nb::arg("q"), nb::arg("hv").noconvert(), nb::arg("cur").noconvert(),
     nb::arg("heap").noconvert(),
     "runs_quantile of many runs, from a heap of their heads (the same result bit for bit).");
  m.def("runs_sorted", [](Array<const double> buf, Array<i64> rs, Array<i64> re,
                          Array<double> rw, i64 nruns, Array<i64> heap, Array<i64> cur,
                          Array<double> out_v, Array<double> out_w) {
    auto b = vec(buf, "buf");
    auto vrs = vec(rs, "rs"), vre = vec(re, "re"), vcur = vec(cur, "cur");
    auto vheap = vec(heap, "heap");
    auto vrw = vec(rw, "rw"), ov = vec(out_v, "out_v"), ow = vec(out_w, "out_w");
    i64 n = need_runs(b.size(), vrs, vre, vrw, nruns, false);
    need_scratch(nruns, vheap.size(), "heap");
    need_scratch(nruns, vcur.size(), "cur");
    need_items(ov.size(), n, "out_v");
    need_items(ow.size(), n, "out_w");
    nb::gil_scoped_release release;
    return runs_sorted(b, vrs, vre, vrw, nruns, vheap, vcur, ov, ow);
  }, nb::arg("buf"), nb::arg("rs"), nb::arg("re"), nb::arg("rw"), nb::arg("nruns"),
     nb::arg("heap").noconvert(), nb::arg("cur").noconvert(), nb::arg("out_v").noconvert(),
     nb::arg("out_w").noconvert(),
     "Merge the runs into ascending ``out_v`` with weights ``out_w``; returns the count.");
  m.def("shortest_interval", [](Array<const double> v, Array<const double> w, i64 count,
                                double mass) {
    auto vv = vec(v, "v"), vw = vec(w, "w");
    if (count < 0) fail("m: a negative count");
    need_items(vv.size(), count, "v");
    need_items(vw.size(), count, "w");
    nb::gil_scoped_release release;
    return shortest_interval(vv, vw, count, mass);
  }, nb::arg("v"), nb::arg("w"), nb::arg("m"), nb::arg("mass"),
     "The shortest ``(v[i], v[j])`` holding at least ``mass`` of the weight ``w[:m]``.");

  m.def("sort16", [](Array<double> x) { sort_net<16>(x); }, nb::arg("x").noconvert(),
        "Sort ``x[:16]`` in place by the sorting network of the sketches' level 0.");
  m.def("sort32", [](Array<double> x) { sort_net<32>(x); }, nb::arg("x").noconvert(),
        "Sort ``x[:32]`` in place by the sorting network of the sketches' level 0.");
}

}  // namespace sf::bind
