// Sorted calibration scores shared by the conformal methods:
// a FIFO ring of calibration slots whose scores are kept sorted, and the conformal rank of a
// half-width.
//
// The sorted set over ``n`` held slots: ``order[k]`` the slot of the k-th smallest score,
// ``ss[k]`` that score (contiguous, for fast scans), ``pos[slot]`` its rank (-1: an empty slot).
// Invariants (kept by ss_insert / ss_update, checked by the bindings before a pass): ``ss[:n]``
// ascending, ``pos[order[k]] == k`` for ``k < n``, exactly ``n`` slots with ``pos >= 0``, and
// ``n`` below the views' sizes when a slot is inserted.
//
// Every function has the Python kernel's name and argument order and does its operations in
// its order (the later ports of the tree-based conformal kernels include this header).
#pragma once

#include <cmath>
#include <limits>

#include "common/numeric.hpp"
#include "common/views.hpp"

namespace sf::intervals {

/// The slot a sorted set's ``order`` names, as the moves below use it: trusted by default; a
/// caller whose ``order`` comes from outside (a loaded file) passes a check that throws for a
/// slot outside the set (conformal.cpp's ``held_slot``).
struct TrustedSlot {
  i64 operator()(i64 s, i64 /*capacity*/) const { return s; }
};

/// Insert score ``v`` of slot ``s`` into the sorted set of ``n`` (after the equal scores);
/// returns ``n + 1``.
template <class Slot = TrustedSlot>
inline i64 ss_insert(Vec<i64> order, Vec<i64> pos, Vec<double> ss, i64 n, double v, i64 s,
                     Slot slot = {}) {
  i64 lo = 0;
  i64 hi = n;
  while (lo < hi) {
    i64 mid = (lo + hi) >> 1;
    if (ss[mid] <= v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (i64 k = n; k > lo; --k) {
    order[k] = order[k - 1];
    ss[k] = ss[k - 1];
    pos[slot(order[k], pos.size())] = k;
  }
  order[lo] = s;
  ss[lo] = v;
  pos[s] = lo;
  return n + 1;
}

/// Slot ``s`` (held) gets the new score ``v``: moved to its place in the sorted set of ``n``.
template <class Slot = TrustedSlot>
inline void ss_update(Vec<i64> order, Vec<i64> pos, Vec<double> ss, i64 n, double v, i64 s,
                      Slot slot = {}) {
  i64 p = pos[s];
  while (p > 0 && ss[p - 1] > v) {
    order[p] = order[p - 1];
    ss[p] = ss[p - 1];
    pos[slot(order[p], pos.size())] = p;
    p -= 1;
  }
  while (p < n - 1 && ss[p + 1] < v) {
    order[p] = order[p + 1];
    ss[p] = ss[p + 1];
    pos[slot(order[p], pos.size())] = p;
    p += 1;
  }
  order[p] = s;
  ss[p] = v;
  pos[s] = p;
}

/// ``ceil((n + 1)(1 - alpha))``: the rank (1-based, ascending) of the half-width among ``n``
/// scores; above ``n`` the interval is infinite.
inline i64 conformal_rank(i64 n, double alpha) {
  return to_i64(std::ceil(static_cast<double>(n + 1) * (1.0 - alpha) - 1e-9));
}

/// The conformal_rank-th smallest of the sorted scores ``ss[:n]`` (``inf`` when that exceeds
/// ``n`` or ``n`` is 0, ``-inf`` when it is below 1).
template <class V>
inline double sorted_half_width(V ss, i64 n, double alpha) {
  i64 r = conformal_rank(n, alpha);
  if (r > n || n == 0) return std::numeric_limits<double>::infinity();
  if (r < 1) return -std::numeric_limits<double>::infinity();
  return ss[r - 1];
}

/// Slot of each row that enters the calibration set (out-of-bag for some tree: a zero weight
/// in its column of ``W``), else -1.  ``ring = [head, capacity]``; advances the head.
inline void ring_slots(Vec<i64> ring, Mat<const double> W, Vec<i64> slots) {
  i64 c = ring[1];
  for (i64 i = 0; i < W.cols(); ++i) {
    bool oob = false;
    for (i64 t = 0; t < W.rows(); ++t)
      if (W(t, i) == 0.0) oob = true;
    if (oob) {
      slots[i] = ring[0];
      ring[0] = pymod(ring[0] + 1, c);
    } else {
      slots[i] = -1;
    }
  }
}

/// ``np.searchsorted(a[:n], v, side="left")`` as numba computes it (NaN sorts last).
template <class V>
inline i64 searchsorted_left(V a, i64 n, double v) {
  i64 lo = 0, hi = n;
  while (lo < hi) {
    i64 mid = lo + ((hi - lo) >> 1);
    double m = a[mid];
    if (m < v || (v != v && m == m)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// ``np.searchsorted(a[:n], v, side="right")`` as numba computes it (a NaN ``v``: ``n``).
template <class V>
inline i64 searchsorted_right(V a, i64 n, double v) {
  i64 lo = 0, hi = n;
  while (lo < hi) {
    i64 mid = lo + ((hi - lo) >> 1);
    double m = a[mid];
    if (v != v || m <= v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace sf::intervals
