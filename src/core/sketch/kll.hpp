// KLL quantile sketch (Karnin, Lang & Liberty 2016) for use inside learning loops (its layout
// and capacity tables are made in streamforest/sketches/kll.py).
//
// Layout (Apache DataSketches' ``kll_sketch``): a sketch is one row of an items array
// (``items``, float64, ``cap`` items) and one row of a level array (``lv``, int64,
// ``LV_WIDTH`` items).  ``lv`` holds ``[H, start_0, ..., start_MAXL, n]``: ``H`` levels
// (``1 <= H <= MAX_LEVELS``), level ``h`` (items of weight ``2**h``) is
// ``items[start_h : start_{h+1})``, sorted ascending; level 0 sits next to the free space at the
// front (``[0, start_0)``) and the top level ends at the end of the row (``start_H == cap``);
// ``n`` (``lv[LV_N]``) is the total weight.  Many sketches share one pair of 2-d arrays (a tree's
// leaves: one row each), so the kernels take the arrays and a row index ``r`` as the Python ones
// do (overloads over one row's views are given too).
//
// Capacity table ``capt`` (int64, ``MAX_LEVELS + 1`` columns): either kll.capacity_table's two
// rows (row 0: the capacity of the level at depth ``d`` below the top, ``max(8, round(k * (2/3)
// ** d))``; row 1: ``capt(1, H)`` the total capacity of ``H`` levels) or
// kll.leaf_capacity_table's ``MAX_LEVELS + 2`` rows (rows 0, 1 the same, row ``1 + H``: the
// capacity at depth ``d`` of a sketch with ``H`` levels).  Invariants the kernels rely on (the
// bindings check them for arrays from Python): every level capacity is at least 2,
// ``capt(1, H)`` is the sum of the ``H`` level capacities, and ``cap >= capt(1, H)`` for every
// ``H <= MAX_LEVELS``; ``start_0 <= ... <= start_H == cap``.  When the row's live capacity
// ``capt(1, H)`` is full, the lowest level at or over its capacity is compacted (halved with a
// random phase drawn from ``rng``, an odd item staying behind) into the level above, which is
// created when needed.  A sketch that would need more than MAX_LEVELS levels (a total weight of
// about ``8 * 2**MAX_LEVELS``), or a weight of ``2**MAX_LEVELS`` or more in one update, throws
// ``std::domain_error`` (the numba kernels would loop forever or write past the level row).
//
// Queries work over sorted *runs* (a sketch's levels, or the levels of many sketches): ``buf``
// holds the items, run ``k`` is ``buf[rs[k] : re[k])`` ascending with item weight ``rw[k]``.
// The inclusive rule of DataSketches: the ``q``-quantile is the smallest item whose cumulative
// weight reaches ``q`` times the total.  Read-only inputs (``buf``, ``items`` of append_runs,
// shortest_interval's ``v``, ``w``) may be any view type indexable by ``i64`` (``Vec<double>``
// or ``Vec<const double>``).
#pragma once

#include <limits>
#include <stdexcept>
#include <utility>

#include "common/numeric.hpp"
#include "common/rng.hpp"
#include "common/views.hpp"

namespace sf::sketch {

inline constexpr i64 MAX_LEVELS = 32;
inline constexpr i64 MIN_WIDTH = 8;
inline constexpr i64 LV_H = 0;                // index of the level count in an lv row
inline constexpr i64 LV_N = MAX_LEVELS + 2;   // index of the total weight
inline constexpr i64 LV_WIDTH = MAX_LEVELS + 3;
inline constexpr i64 SCAN_RUNS = 16;  // up to this many runs a scan of their heads beats a heap

/// Capacity of the level at depth ``d`` (0: the top) of a sketch with ``H`` levels.
inline i64 level_capacity(Mat<i64> capt, i64 H, i64 d) {
  if (capt.rows() == 2) return capt(0, d);
  return capt(H + 1, d);
}

[[noreturn]] inline void levels_exhausted() {
  throw std::domain_error("KLL sketch: more than MAX_LEVELS (32) levels needed");
}

// ------------------------------------------------------------------------------------------------
// one sketch: a row of items ``it`` and its level row ``lv``

/// An empty sketch (one empty level).
inline void kll_reset(Vec<double> it, Vec<i64> lv) {
  i64 cap = it.size();
  lv[LV_H] = 1;
  lv[1] = cap;
  lv[2] = cap;
  lv[LV_N] = 0;
}

/// Total weight.
inline i64 kll_n(Vec<i64> lv) { return lv[LV_N]; }

/// Items retained.
inline i64 kll_retained(Vec<double> it, Vec<i64> lv) { return it.size() - lv[1]; }

namespace detail {

inline void add_level(Vec<double> it, Vec<i64> lv) {
  i64 h = lv[LV_H];
  lv[h + 2] = it.size();  // the new top level starts (and ends) at the row's end
  lv[LV_H] = h + 1;
}

/// kll._compress: compact the lowest level at or over its capacity into the level above.
inline void compress(Vec<double> it, Vec<i64> lv, Mat<i64> capt, u64& rng) {
  i64 H = lv[LV_H];
  i64 h = 0;
  while (h < H - 1) {
    if (lv[h + 2] - lv[h + 1] >= level_capacity(capt, H, H - h - 1)) break;
    h += 1;
  }
  if (h == H - 1) {
    if (H >= MAX_LEVELS) levels_exhausted();  // numba: returns, and its caller loops forever
    add_level(it, lv);
  }
  i64 raw_beg = lv[h + 1];
  i64 raw_end = lv[h + 2];
  i64 above_end = lv[h + 3];
  i64 raw_pop = raw_end - raw_beg;
  i64 odd = raw_pop & 1;
  double odd_item = it[raw_beg];
  i64 adj_beg = raw_beg + odd;
  i64 half = (raw_pop - odd) / 2;  // (non-negative: // and / agree)
  i64 off = static_cast<i64>(rng::next_u64(rng) & 1u);
  for (i64 i = 0; i < half; ++i) it[adj_beg + i] = it[adj_beg + 2 * i + off];
  // merge the kept half with the level above into [adj_beg + half, above_end)
  i64 a = adj_beg;
  i64 a_end = adj_beg + half;
  i64 b = raw_end;
  i64 d = adj_beg + half;
  while (a < a_end && b < above_end) {
    if (it[a] <= it[b]) {
      it[d] = it[a];
      a += 1;
    } else {
      it[d] = it[b];
      b += 1;
    }
    d += 1;
  }
  while (a < a_end) {
    it[d] = it[a];
    a += 1;
    d += 1;
  }
  lv[h + 2] = adj_beg + half;
  i64 new_beg = adj_beg + half;
  if (odd) {
    new_beg -= 1;
    it[new_beg] = odd_item;
  }
  i64 shift = new_beg - raw_beg;
  lv[h + 1] = new_beg;
  if (h > 0 && shift > 0) {
    i64 lo = lv[1];
    for (i64 i = raw_beg - 1; i > lo - 1; --i) it[i + shift] = it[i];
    for (i64 g = 0; g < h; ++g) lv[g + 1] += shift;
  }
}

/// kll._insert_level: insert ``v`` at level ``h`` (after that level's items ``<= v``).
inline void insert_level(Vec<double> it, Vec<i64> lv, i64 h, double v, Mat<i64> capt,
                         u64& rng) {
  while (lv[LV_H] <= h) add_level(it, lv);
  i64 cap = it.size();
  while (lv[1] - (cap - capt(1, lv[LV_H])) <= 0) compress(it, lv, capt, rng);
  // position: after the items <= v of level h (upper bound)
  i64 lo = lv[h + 1];
  i64 hi = lv[h + 2];
  while (lo < hi) {
    i64 mid = (lo + hi) >> 1;
    if (it[mid] <= v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  i64 first = lv[1];
  for (i64 i = first; i < lo; ++i) it[i - 1] = it[i];
  it[lo - 1] = v;
  for (i64 g = 0; g < h + 1; ++g) lv[g + 1] -= 1;
  lv[LV_N] += i64{1} << h;
}

}  // namespace detail

/// Add value ``v`` with integer weight ``w`` (one insertion at level ``j`` per set bit ``j`` of
/// ``w``; nothing for ``w <= 0``).  Throws ``std::domain_error``, the sketch unchanged, for
/// ``w >= 2**MAX_LEVELS``.
inline void kll_update(Vec<double> it, Vec<i64> lv, double v, i64 w, Mat<i64> capt, u64& rng) {
  if (w >= (i64{1} << MAX_LEVELS)) levels_exhausted();
  i64 j = 0;
  while (w > 0) {
    if (w & 1) detail::insert_level(it, lv, j, v, capt, rng);
    w >>= 1;
    j += 1;
  }
}

// the same over shared arrays and a row index (the Python signatures)

/// Sketch row ``r`` empty.
inline void kll_reset(Mat<double> items, Mat<i64> lv, i64 r) { kll_reset(items.row(r), lv.row(r)); }

/// Sketch row ``dst`` a copy of row ``src``.
inline void kll_copy(Mat<double> items, Mat<i64> lv, i64 src, i64 dst) {
  i64 cap = items.cols();
  for (i64 i = lv(src, 1); i < cap; ++i) items(dst, i) = items(src, i);
  for (i64 j = 0; j < LV_WIDTH; ++j) lv(dst, j) = lv(src, j);
}

inline i64 kll_n(Mat<i64> lv, i64 r) { return lv(r, LV_N); }

inline i64 kll_retained(Mat<double> items, Mat<i64> lv, i64 r) { return items.cols() - lv(r, 1); }

/// Add ``v`` with integer weight ``w`` to sketch row ``r``; see the row overload.
inline void kll_update(Mat<double> items, Mat<i64> lv, i64 r, double v, i64 w, Mat<i64> capt,
                       u64& rng) {
  kll_update(items.row(r), lv.row(r), v, w, capt, rng);
}

// ------------------------------------------------------------------------------------------------
// queries over sorted runs (one sketch, or the union of several)

/// Append the levels of one sketch (level row ``lv``) as runs read in place: level h is
/// ``[start + lv[h + 1], start + lv[h + 2])`` of the array holding the sketch's items
/// (``start``: that array's index of the sketch row's item 0), each item weighing
/// ``mult * 2**h``; empty levels are skipped.  Returns the new ``nruns``.
inline i64 level_runs(Vec<i64> lv, i64 start, double mult, Vec<i64> rs, Vec<i64> re,
                      Vec<double> rw, i64 nruns) {
  for (i64 h = 0; h < lv[LV_H]; ++h) {
    i64 s = lv[h + 1];
    i64 e = lv[h + 2];
    if (e <= s) continue;
    rs[nruns] = start + s;
    re[nruns] = start + e;
    rw[nruns] = mult * static_cast<double>(i64{1} << h);
    nruns += 1;
  }
  return nruns;
}

/// Append the levels of one sketch (level row ``lv``; its items in ``items`` from ``off``) as
/// runs of ``buf`` (values copied from ``nbuf`` on), each item of level h weighing
/// ``mult * 2**h``.  Returns ``(nbuf, nruns)``.
template <class Items>
inline std::pair<i64, i64> append_runs(Items items, i64 off, Vec<i64> lv, double mult,
                                       Vec<double> buf, i64 nbuf, Vec<i64> rs, Vec<i64> re,
                                       Vec<double> rw, i64 nruns) {
  i64 a = lv[1];  // the levels are contiguous: level 0 starts there, the top one ends the row
  i64 b = lv[lv[LV_H] + 1];
  for (i64 i = a; i < b; ++i) buf[nbuf + i - a] = items[off + i];
  i64 nb = nbuf + py_max(b - a, i64{0});
  return {nb, level_runs(lv, nbuf - a, mult, rs, re, rw, nruns)};
}

/// Append sketch row ``r``'s levels as runs of ``buf``; see append_runs.
inline std::pair<i64, i64> add_runs(Mat<double> items, Mat<i64> lv, i64 r, double mult,
                                    Vec<double> buf, i64 nbuf, Vec<i64> rs, Vec<i64> re,
                                    Vec<double> rw, i64 nruns) {
  return append_runs(items.row(r), 0, lv.row(r), mult, buf, nbuf, rs, re, rw, nruns);
}

namespace detail {

/// ``a`` is picked over ``b`` by the scan (``a < b`` walking up, ``a > b`` walking down).
template <bool Low>
inline bool before(double a, double b) {
  return Low ? a < b : a > b;
}

/// The head the Python scan picks: ``best = 0; bv = hv[0]; for k: if hv[k] < bv (> walking
/// down): best, bv = k, hv[k]``, i.e. the first of the smallest (largest) heads, NaN heads
/// never picked, and ``0`` when ``hv[0]`` is NaN.  Found in two passes whose comparisons do not
/// wait on each other (the scan's chain of dependent selects costs a comparison's latency per
/// head): the extreme value over four independent lanes, then the first head equal to it
/// (``-0.0 == 0.0``, as the scan's strict comparison leaves the first zero).
template <bool Low>
inline i64 scan_pick(Vec<double> hv, i64 n) {
  double m0 = hv[0], m1 = hv[0], m2 = hv[0], m3 = hv[0];
  i64 k = 1;
  for (; k + 3 < n; k += 4) {
    double a = hv[k], b = hv[k + 1], c = hv[k + 2], d = hv[k + 3];
    m0 = before<Low>(a, m0) ? a : m0;
    m1 = before<Low>(b, m1) ? b : m1;
    m2 = before<Low>(c, m2) ? c : m2;
    m3 = before<Low>(d, m3) ? d : m3;
  }
  for (; k < n; ++k) {
    double a = hv[k];
    m0 = before<Low>(a, m0) ? a : m0;
  }
  m0 = before<Low>(m1, m0) ? m1 : m0;
  m2 = before<Low>(m3, m2) ? m3 : m2;
  m0 = before<Low>(m2, m0) ? m2 : m0;
  if (m0 != m0) return 0;  // hv[0] is NaN: nothing compares before it
  i64 best = 0;  // (m0 is one of the heads: found)
  while (best < n - 1 && !(hv[best] == m0)) best += 1;
  return best;
}

}  // namespace detail

/// Inclusive ``q``-quantile of the weighted union of sorted runs (non-empty runs; NaN if there
/// are none or ``total <= 0``).  Walks from the low end for ``q <= 0.5`` and from the high end
/// otherwise, picking the next item by a scan of the runs' heads (``hv``, ``cur``: ``nruns``
/// scratch each; ties go to the lower run).
template <class Buf>
inline double runs_quantile(Buf buf, Vec<i64> rs, Vec<i64> re, Vec<double> rw, i64 nruns,
                            double total, double q, Vec<double> hv, Vec<i64> cur) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (nruns == 0 || total <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  double target = q * total;
  double v = std::numeric_limits<double>::quiet_NaN();
  if (q <= 0.5) {
    for (i64 k = 0; k < nruns; ++k) {
      cur[k] = rs[k];
      hv[k] = buf[rs[k]];
    }
    double cum = 0.0;
    while (true) {
      i64 best = detail::scan_pick<true>(hv, nruns);
      double bv = hv[best];
      if (bv == inf) return v;
      v = bv;
      cum += rw[best];
      if (cum >= target) return v;
      cur[best] += 1;
      hv[best] = cur[best] < re[best] ? buf[cur[best]] : inf;
    }
  }
  double rest = total - target;
  for (i64 k = 0; k < nruns; ++k) {
    cur[k] = re[k] - 1;
    hv[k] = buf[re[k] - 1];
  }
  double above = 0.0;
  while (true) {
    i64 best = detail::scan_pick<false>(hv, nruns);
    double bv = hv[best];
    if (bv == -inf) return v;
    v = bv;
    above += rw[best];
    if (above > rest) return v;
    cur[best] -= 1;
    hv[best] = cur[best] >= rs[best] ? buf[cur[best]] : -inf;
  }
}

namespace detail {

/// Sift heap node ``i`` down: node ``j`` holds run ``heap[j]``'s head as key ``hv[j]``; a node
/// comes before another by key, then by the lower run index (the scan's order).
inline void head_down(Vec<double> hv, Vec<i64> heap, i64 hn, i64 i) {
  double key = hv[i];
  i64 run = heap[i];
  while (true) {
    i64 c = 2 * i + 1;
    if (c >= hn) break;
    if (c + 1 < hn && (hv[c + 1] < hv[c] || (hv[c + 1] == hv[c] && heap[c + 1] < heap[c])))
      c += 1;
    if (hv[c] < key || (hv[c] == key && heap[c] < run)) {
      hv[i] = hv[c];
      heap[i] = heap[c];
      i = c;
    } else {
      break;
    }
  }
  hv[i] = key;
  heap[i] = run;
}

/// Min-heap on ``sign * buf[cur[run]]``: sift node ``i`` down.
template <class Buf>
inline void sift_down(Vec<i64> heap, i64 hn, Vec<i64> cur, Buf buf, i64 i, double sign) {
  while (true) {
    i64 c = 2 * i + 1;
    if (c >= hn) return;
    if (c + 1 < hn && sign * buf[cur[heap[c + 1]]] < sign * buf[cur[heap[c]]]) c += 1;
    if (sign * buf[cur[heap[c]]] < sign * buf[cur[heap[i]]]) {
      i64 t = heap[c];
      heap[c] = heap[i];
      heap[i] = t;
      i = c;
    } else {
      return;
    }
  }
}

}  // namespace detail

/// runs_quantile of many runs (non-empty): the next item is taken from a heap of the runs'
/// heads in the very order of the scan (ties to the lower run), so the result is the same bit
/// for bit; up to SCAN_RUNS runs it is the scan.  ``hv``, ``heap``, ``cur``: ``nruns`` scratch.
template <class Buf>
inline double runs_quantile_many(Buf buf, Vec<i64> rs, Vec<i64> re, Vec<double> rw, i64 nruns,
                                 double total, double q, Vec<double> hv, Vec<i64> cur,
                                 Vec<i64> heap) {
  if (nruns <= SCAN_RUNS) return runs_quantile(buf, rs, re, rw, nruns, total, q, hv, cur);
  if (total <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  double target = q * total;
  bool low = q <= 0.5;
  double sign = low ? 1.0 : -1.0;
  i64 step = low ? 1 : -1;
  for (i64 k = 0; k < nruns; ++k) {
    cur[k] = low ? rs[k] : re[k] - 1;
    hv[k] = sign * buf[cur[k]];
    heap[k] = k;
  }
  i64 hn = nruns;
  for (i64 i = hn / 2 - 1; i > -1; --i) detail::head_down(hv, heap, hn, i);
  double rest = total - target;
  double acc = 0.0;
  double v = std::numeric_limits<double>::quiet_NaN();
  while (hn > 0) {
    i64 best = heap[0];
    v = sign * hv[0];  // (negation is exact: the head's value)
    acc += rw[best];
    if (low ? (acc >= target) : (acc > rest)) return v;
    i64 c = cur[best] + step;
    cur[best] = c;
    if (rs[best] <= c && c < re[best]) {
      hv[0] = sign * buf[c];
    } else {
      hn -= 1;
      hv[0] = hv[hn];
      heap[0] = heap[hn];
    }
    detail::head_down(hv, heap, hn, 0);
  }
  return v;
}

/// Merge the runs (empty ones allowed) into ascending ``out_v`` with weights ``out_w``; returns
/// the count.  ``heap``, ``cur``: ``nruns`` scratch each.
template <class Buf>
inline i64 runs_sorted(Buf buf, Vec<i64> rs, Vec<i64> re, Vec<double> rw, i64 nruns,
                       Vec<i64> heap, Vec<i64> cur, Vec<double> out_v, Vec<double> out_w) {
  i64 hn = 0;
  for (i64 k = 0; k < nruns; ++k) {
    if (re[k] > rs[k]) {
      cur[k] = rs[k];
      heap[hn] = k;
      hn += 1;
    }
  }
  for (i64 i = hn / 2 - 1; i > -1; --i) detail::sift_down(heap, hn, cur, buf, i, 1.0);
  i64 m = 0;
  while (hn > 0) {
    i64 k = heap[0];
    out_v[m] = buf[cur[k]];
    out_w[m] = rw[k];
    m += 1;
    cur[k] += 1;
    if (cur[k] >= re[k]) {
      hn -= 1;
      heap[0] = heap[hn];
    }
    detail::sift_down(heap, hn, cur, buf, 0, 1.0);
  }
  return m;
}

/// Highest-density interval of a discrete distribution (``v[:m]`` ascending, weights
/// ``w[:m]``): the shortest ``[v[i], v[j]]`` holding at least ``mass`` of the total weight
/// (HDI-Forest, Algorithm 1: a two-pointer scan).  Ties in width go to the leftmost;
/// ``(nan, nan)`` if empty.  A ``mass`` at or below 0 (or NaN) reads ``v``'s last item (of
/// the whole view, as numba's ``v[-1]``): callers give masses in (0, 1].
template <class V, class W>
inline std::pair<double, double> shortest_interval(V v, W w, i64 m, double mass) {
  if (m == 0) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan};
  }
  double total = 0.0;
  for (i64 i = 0; i < m; ++i) total += w[i];
  double need = mass * total * (1.0 - 1e-12);
  double best_lo = v[0];
  double best_hi = v[m - 1];
  double best = best_hi - best_lo;
  i64 j = 0;
  double acc = 0.0;
  for (i64 i = 0; i < m; ++i) {
    while (j < m && acc < need) {
      acc += w[j];
      j += 1;
    }
    if (acc < need) break;
    i64 last = j > 0 ? j - 1 : v.size() - 1;  // numba's v[-1] (need <= 0 or NaN only)
    double width = v[last] - v[i];
    if (width < best) {
      best = width;
      best_lo = v[i];
      best_hi = v[last];
    }
    acc -= w[i];
  }
  return {best_lo, best_hi};
}

}  // namespace sf::sketch
