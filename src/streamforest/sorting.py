"""Sorting inside compiled loops: :func:`argsort_into`, a stable merge sort of indices, and
:func:`sort_into`, an in-place heapsort of values.

``np.argsort`` (or ``ndarray.sort``) in a numba kernel compiles numba's quicksort for its caller
(about two seconds of a cold start, every process that compiles the caller); these kernels are
small and cached on disk like every streamforest kernel; the argsort is stable (equal values keep
their order), so its result is defined by the values alone.  Checked against
``np.argsort(kind="stable")`` and ``np.sort`` in ``tests/test_sorting.py``.
"""

from __future__ import annotations

import numpy as np

from .compiled import entry, kernel


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


@entry(nogil=True, _nrt=False)
def sort_into(values, n):
    """Sort ``values[:n]`` in place, ascending, NaN last (as ``np.sort``); no memory allocated.
    A heapsort: equal values are indistinguishable, except ``-0.0`` and ``0.0``, whose order
    among themselves is unspecified (as numpy's quicksort leaves it)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(values, start, n)
    for end in range(n - 1, 0, -1):
        top = values[0]
        values[0] = values[end]
        values[end] = top
        _sift(values, np.int64(0), end)  # (not a literal: see tree_kinds.kernels)


@kernel(inline="always")
def _above(a, b):
    """``a`` sorts after ``b`` (NaN after every number)."""
    return (a > b) or (a != a and b == b)


@kernel
def _sift(values, root, end):
    """Restore the max-heap order of ``values[root:end]`` below ``root``."""
    v = values[root]
    while True:
        child = 2 * root + 1
        if child >= end:
            break
        if child + 1 < end and _above(values[child + 1], values[child]):
            child += 1
        if not _above(values[child], v):
            break
        values[root] = values[child]
        root = child
    values[root] = v
