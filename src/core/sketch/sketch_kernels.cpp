// KLLSketch's kernels (see sketch_kernels.hpp).
#include "sketch/sketch_kernels.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "common/numeric.hpp"
#include "common/rng.hpp"
#include "common/sorting.hpp"
#include "sketch/sort_network.hpp"

namespace sf::sketch {

namespace {

/// kll.hpp's compress of one sketch (its row ``it`` and level row ``lv``): the same level
/// compacted with the same random draw, to the same items.  The level above's items below the
/// first kept one, like the levels below, move as one block (no comparisons).
void compress_row(Vec<double> it, Vec<i64> lv, Mat<i64> capt, u64& rng) {
  i64 H = lv[LV_H];
  i64 h = 0;
  while (h < H - 1) {
    if (lv[h + 2] - lv[h + 1] >= level_capacity(capt, H, H - h - 1)) break;
    h += 1;
  }
  if (h == H - 1) {
    if (H >= MAX_LEVELS) levels_exhausted();  // numba: returns, and its caller loops forever
    lv[H + 2] = it.size();  // kll._add_level
    lv[LV_H] = H + 1;
  }
  i64 raw_beg = lv[h + 1];
  i64 raw_end = lv[h + 2];
  i64 above_end = lv[h + 3];
  i64 raw_pop = raw_end - raw_beg;
  i64 odd = raw_pop & 1;
  double odd_item = it[raw_beg];
  i64 adj_beg = raw_beg + odd;
  i64 half = (raw_pop - odd) / 2;
  i64 off = static_cast<i64>(rng::next_u64(rng) & 1u);
  for (i64 i = 0; i < half; ++i) it[adj_beg + i] = it[adj_beg + 2 * i + off];
  // merge the kept half with the level above into [adj_beg + half, above_end); ties: the kept
  // item first
  i64 a = adj_beg;
  i64 a_end = adj_beg + half;
  i64 d = adj_beg + half;
  i64 b = raw_end;
  if (half > 0) {
    double x = it[a];
    i64 lo = raw_end;
    i64 hi = above_end;
    while (lo < hi) {  // the level above's items below the first kept one
      i64 mid = (lo + hi) >> 1;
      if (it[mid] < x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (i64 j = raw_end; j < lo; ++j) {
      it[d] = it[j];
      d += 1;
    }
    b = lo;
  }
  while (a < a_end && b < above_end) {
    double x = it[a];
    double y = it[b];
    if (x <= y) {
      it[d] = x;
      a += 1;
    } else {
      it[d] = y;
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

using Scratch = std::array<double, UNSORTED_MAX>;

/// Sort the ``u`` unsorted items at the front of level 0 (``1 <= u <= UNSORTED_MAX``, no zero
/// and no NaN among them) into the sorted rest of the level: a sorting network (scratch ``x``,
/// padded with +inf), then a merge.
void settle(Vec<double> it, Vec<i64> lv, i64 u, Scratch& x) {
  i64 first = lv[1];
  i64 e0 = lv[2];
  for (i64 t = 0; t < UNSORTED_MAX; ++t)
    x[static_cast<size_t>(t)] = t < u ? it[first + t] : std::numeric_limits<double>::infinity();
  if (u <= 16) {
    sort16(x);
  } else {
    sort32(x);
  }
  i64 a = 0;
  i64 b = first + u;
  i64 d = first;
  while (a < u && b < e0) {  // d never overtakes b
    double p = x[static_cast<size_t>(a)];
    double q = it[b];
    if (p < q) {
      it[d] = p;
      a += 1;
    } else {
      it[d] = q;
      b += 1;
    }
    d += 1;
  }
  while (a < u) {
    it[d] = x[static_cast<size_t>(a)];
    a += 1;
    d += 1;
  }
}

/// Add each of ``values`` (finite) with weight 1, in order, to one sketch (rows ``it``, ``lv``):
/// the same sketch, item for item and draw for draw, as one ``kll_update(..., v, 1, ...)`` per
/// value (see _sketch_kernels._insert_unit_row for how).
void insert_unit_row(Vec<double> it, Vec<i64> lv, Vec<const double> values, Mat<i64> capt,
                     u64& rng) {
  i64 n = values.size();
  i64 cap = it.size();
  std::vector<double> tmp;
  Scratch x{};
  i64 u = 0;  // unsorted items at the front of level 0
  i64 i = 0;
  while (i < n) {
    i64 H = lv[LV_H];
    i64 free = lv[1] - (cap - capt(1, H));
    if (free <= 0) {
      if (u > 0 && (H == 1 || lv[2] - lv[1] >= level_capacity(capt, H, H - 1))) {
        settle(it, lv, u, x);  // level 0 is the one compacted
        u = 0;
      }
      compress_row(it, lv, capt, rng);
      continue;
    }
    i64 m = py_min(free, n - i);
    i64 s0 = lv[1];
    if (m <= UNSORTED_MAX) {
      bool zero = false;
      for (i64 j = 0; j < m; ++j) zero |= values[i + j] == 0.0;
      if (!zero) {  // to the front of level 0, unsorted
        if (u + m > UNSORTED_MAX) {
          settle(it, lv, u, x);
          u = 0;
        }
        for (i64 j = 0; j < m; ++j) it[s0 - m + j] = values[i + j];
        u += m;
        lv[1] = s0 - m;
        lv[LV_N] += m;
        i += m;
        continue;
      }
    }
    if (u > 0) {
      settle(it, lv, u, x);
      u = 0;
    }
    i64 e0 = lv[2];
    if (m <= UNIT_BATCH_MIN) {
      i64 first = s0;
      for (i64 j = 0; j < m; ++j) {
        double v = values[i + j];
        i64 p = first;
        while (p < e0 && it[p] <= v) {  // the items at or below v move down one
          it[p - 1] = it[p];
          p += 1;
        }
        it[p - 1] = v;
        first -= 1;
      }
    } else {
      if (static_cast<i64>(tmp.size()) < m) tmp.assign(static_cast<size_t>(cap), 0.0);
      Vec<double> t(tmp.data(), static_cast<i64>(tmp.size()));
      i64 zeros = 0;
      for (i64 j = 0; j < m; ++j) {
        double v = values[i + j];
        t[j] = v;
        if (v == 0.0) zeros += 1;
      }
      sorting::sort_into(t, m);
      if (zeros > 1) {  // -0.0 and 0.0 tie: in the order they came, as insertions leave them
        i64 z = 0;
        while (t[z] != 0.0) z += 1;
        for (i64 j = 0; j < m; ++j) {
          double v = values[i + j];
          if (v == 0.0) {
            t[z] = v;
            z += 1;
          }
        }
      }
      i64 a = 0;
      i64 b = s0;
      i64 d = s0 - m;
      while (a < m && b < e0) {  // merge into [s0 - m, e0): d never overtakes b
        if (t[a] < it[b]) {  // ties: the level's item first, as an insertion does
          it[d] = t[a];
          a += 1;
        } else {
          it[d] = it[b];
          b += 1;
        }
        d += 1;
      }
      while (a < m) {
        it[d] = t[a];
        a += 1;
        d += 1;
      }
    }
    lv[1] = s0 - m;
    lv[LV_N] += m;
    i += m;
  }
  if (u > 0) settle(it, lv, u, x);
}

/// Insert every retained item of the other sketch (rows ``o_it``, ``o_lv``) at its own level
/// (weight preserved) into this one (rows ``it``, ``lv``): the same sketch as one
/// ``insert_level`` per item, level by level, the items that fit before the next compaction
/// going in at once.
void merge_into(Vec<double> it, Vec<i64> lv, Vec<const double> o_it, Vec<const i64> o_lv,
                Mat<i64> capt, u64& rng) {
  i64 cap = it.size();
  for (i64 h = 0; h < o_lv[LV_H]; ++h) {
    i64 i = o_lv[h + 1];
    i64 end = o_lv[h + 2];
    while (i < end) {
      while (lv[LV_H] <= h) {  // kll._add_level
        lv[lv[LV_H] + 2] = cap;
        lv[LV_H] += 1;
      }
      i64 free = lv[1] - (cap - capt(1, lv[LV_H]));
      if (free <= 0) {
        compress_row(it, lv, capt, rng);
        continue;
      }
      i64 m = py_min(free, end - i);
      i64 sh = lv[h + 1];
      i64 eh = lv[h + 2];
      double x = o_it[i];
      i64 lo = sh;
      i64 hi = eh;
      while (lo < hi) {  // the first item of level h above the run's first (ties: the level's
        i64 mid = (lo + hi) >> 1;  // item first, as an insertion does)
        if (it[mid] <= x) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      for (i64 j = lv[1]; j < lo; ++j) it[j - m] = it[j];  // the levels below h, level h to lo
      for (i64 g = 0; g < h; ++g) lv[g + 1] -= m;
      i64 a = i;
      i64 b = lo;
      i64 d = lo - m;
      while (a < i + m && b < eh) {
        if (o_it[a] < it[b]) {
          it[d] = o_it[a];
          a += 1;
        } else {
          it[d] = it[b];
          b += 1;
        }
        d += 1;
      }
      while (a < i + m) {
        it[d] = o_it[a];
        a += 1;
        d += 1;
      }
      lv[h + 1] = sh - m;
      lv[LV_N] += m << h;
      i += m;
    }
  }
}

}  // namespace

void update_many(Mat<double> items, Mat<i64> lv, Vec<const double> values,
                 Vec<const i64> weights, Mat<i64> capt, u64& rng) {
  for (i64 i = 0; i < values.size(); ++i) kll_update(items, lv, 0, values[i], weights[i], capt, rng);
}

bool update_unit(Mat<double> items, Mat<i64> lv, Vec<const double> values, Mat<i64> capt,
                 u64& rng, Vec<double> bounds) {
  double lo = bounds[0];
  double hi = bounds[1];
  for (i64 i = 0; i < values.size(); ++i) {
    double v = values[i];
    if (!std::isfinite(v)) return false;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  insert_unit_row(items.row(0), lv.row(0), values, capt, rng);
  bounds[0] = lo;
  bounds[1] = hi;
  return true;
}

void merge_sketch(Mat<double> items, Mat<i64> lv, Vec<double> bounds, Mat<const double> o_items,
                  Mat<const i64> o_lv, Vec<const double> o_bounds, Mat<i64> capt, u64& rng) {
  merge_into(items.row(0), lv.row(0), o_items.row(0), o_lv.row(0), capt, rng);
  bounds[0] = py_min(bounds[0], o_bounds[0]);
  bounds[1] = py_max(bounds[1], o_bounds[1]);
}

void quantiles(Mat<double> items, Mat<i64> lv, Vec<const double> qs, Vec<double> out) {
  i64 cap = items.cols();
  std::vector<double> buf(static_cast<size_t>(cap)), rw(MAX_LEVELS), hv(MAX_LEVELS);
  std::vector<i64> rs(MAX_LEVELS), re(MAX_LEVELS), cur(MAX_LEVELS);
  Vec<double> vbuf(buf.data(), cap), vrw(rw.data(), MAX_LEVELS), vhv(hv.data(), MAX_LEVELS);
  Vec<i64> vrs(rs.data(), MAX_LEVELS), vre(re.data(), MAX_LEVELS), vcur(cur.data(), MAX_LEVELS);
  i64 nr = add_runs(items, lv, 0, 1.0, vbuf, 0, vrs, vre, vrw, 0).second;
  double total = static_cast<double>(lv(0, LV_N));
  for (i64 i = 0; i < qs.size(); ++i)
    out[i] = runs_quantile(vbuf, vrs, vre, vrw, nr, total, qs[i], vhv, vcur);
}

i64 sorted_view(Mat<double> items, Mat<i64> lv, Vec<double> values, Vec<double> cumulative) {
  i64 cap = items.cols();
  std::vector<double> buf(static_cast<size_t>(cap)), rw(MAX_LEVELS);
  std::vector<i64> rs(MAX_LEVELS), re(MAX_LEVELS), heap(MAX_LEVELS), cur(MAX_LEVELS);
  Vec<double> vbuf(buf.data(), cap), vrw(rw.data(), MAX_LEVELS);
  Vec<i64> vrs(rs.data(), MAX_LEVELS), vre(re.data(), MAX_LEVELS), vheap(heap.data(), MAX_LEVELS),
      vcur(cur.data(), MAX_LEVELS);
  i64 nr = add_runs(items, lv, 0, 1.0, vbuf, 0, vrs, vre, vrw, 0).second;
  i64 m = runs_sorted(vbuf, vrs, vre, vrw, nr, vheap, vcur, values, cumulative);
  double total = 0.0;
  for (i64 i = 0; i < m; ++i) {
    total += cumulative[i];
    cumulative[i] = total;
  }
  return m;
}

}  // namespace sf::sketch
