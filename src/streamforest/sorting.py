"""Sorting inside compiled loops: :func:`argsort_into`, a stable merge sort of indices.

``np.argsort`` in a numba kernel compiles numba's quicksort for its caller (about two seconds of
a cold start, every process that compiles the caller); this kernel is small, cached on disk like
every streamforest kernel, and stable (equal values keep their order), so its result is defined
by the values alone.  Checked against ``np.argsort(kind="stable")`` in ``tests/test_sorting.py``.
"""

from __future__ import annotations

import numpy as np

from .compiled import entry


@entry(nogil=True)
def argsort_into(values, n, out):
    """``out[:n]``: the indices that sort ``values[:n]`` in ascending order, equal values in
    their order of appearance (NaN last, as numpy sorts them)."""
    if n <= 0:
        return
    src = np.empty(n, dtype=np.int64)
    for i in range(n):
        src[i] = i
    dst = np.empty(n, dtype=np.int64)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, k = lo, mid, lo
            while a < mid and b < hi:
                va = values[src[a]]
                vb = values[src[b]]
                # take from the right run only when strictly smaller (stable); NaN sorts last
                if vb < va or (va != va and vb == vb):
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo += 2 * width
        src, dst = dst, src
        width *= 2
    for i in range(n):
        out[i] = src[i]
