// Sorting inside compiled loops: ``argsort_into``, a stable bottom-up
// merge sort of indices (NaN last, as numpy sorts), and ``sort_into``, an in-place heapsort of
// values that allocates nothing.  Both give numpy's orders (checked against numpy in
// tests/test_sorting.py; the argsort is stable, so its result is defined by the values alone).
#pragma once

#include <vector>

#include "views.hpp"

namespace sf::sorting {

/// ``out[:n]``: the indices that sort ``values[:n]`` ascending, ties in order of appearance.
template <class V>
inline void argsort_into(V values, i64 n, Vec<i64> out) {
  if (n <= 0) return;
  std::vector<i64> buf_a(static_cast<size_t>(n)), buf_b(static_cast<size_t>(n));
  i64* src = buf_a.data();
  i64* dst = buf_b.data();
  for (i64 i = 0; i < n; ++i) src[i] = i;
  for (i64 width = 1; width < n; width *= 2) {
    for (i64 lo = 0; lo < n; lo += 2 * width) {
      i64 mid = lo + width < n ? lo + width : n;
      i64 hi = lo + 2 * width < n ? lo + 2 * width : n;
      i64 a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        double va = values[src[a]];
        double vb = values[src[b]];
        // take from the right run only when strictly smaller (stable); NaN sorts last
        if (vb < va || (va != va && vb == vb)) {
          dst[k++] = src[b++];
        } else {
          dst[k++] = src[a++];
        }
      }
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
    }
    i64* tmp = src;
    src = dst;
    dst = tmp;
  }
  for (i64 i = 0; i < n; ++i) out[i] = src[i];
}

/// ``a`` sorts after ``b`` (NaN after every number).
inline bool above(double a, double b) { return (a > b) || (a != a && b == b); }

/// Restore the max-heap order of ``values[root:end]`` below ``root``.
template <class V>
inline void sift(V values, i64 root, i64 end) {
  double v = values[root];
  while (true) {
    i64 child = 2 * root + 1;
    if (child >= end) break;
    if (child + 1 < end && above(values[child + 1], values[child])) child += 1;
    if (!above(values[child], v)) break;
    values[root] = values[child];
    root = child;
  }
  values[root] = v;
}

/// Sort ``values[:n]`` in place, ascending, NaN last; allocates nothing.
template <class V>
inline void sort_into(V values, i64 n) {
  for (i64 start = n / 2 - 1; start >= 0; --start) sift(values, start, n);
  for (i64 end = n - 1; end > 0; --end) {
    double top = values[0];
    values[0] = values[end];
    values[end] = top;
    sift(values, 0, end);
  }
}

}  // namespace sf::sorting
