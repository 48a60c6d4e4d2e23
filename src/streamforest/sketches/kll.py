"""KLL quantile sketch (Karnin, Lang & Liberty 2016) for use inside learning loops: its layout
and capacity tables (the sketch's kernels are the compiled core's, ``src/core/sketch``).

Layout follows Apache DataSketches' ``kll_sketch``: the items of all levels live in one array,
level ``h`` (items of weight ``2**h``) occupies ``[start_h, start_{h+1})``, the top level ends at
the end of the array and level 0 sits next to the free space at the front.  Level ``h`` of a
sketch with ``H`` levels has capacity ``max(8, round(k * (2/3) ** (H - h - 1)))``; when the
array's live capacity (the sum of those) is full, the lowest level at or over its capacity is
compacted: its items are halved with a random offset (an odd item stays behind) and merged into
the level above, which is created when needed.

Two deliberate differences from DataSketches, neither affecting accuracy:

- every level, level 0 included, is kept sorted (an insertion shifts the smaller items of its
  level by one), so a query never sorts: quantiles of one sketch or of a union of sketches are a
  heap walk over sorted runs (``runs_quantile``);
- a weighted update ``update(v, w)`` for an integer weight ``w`` inserts ``v`` once into every
  level ``j`` whose bit is set in ``w`` (weight ``2**j``), so it costs ``O(log w)`` and keeps the
  exact total weight, instead of ``w`` repeated updates.

Many sketches share one 2-d array (one row each: a tree's leaves), so every kernel takes the
arrays and a row index.  ``lv`` rows hold ``[H, start_0, ..., start_MAXL, n]``.  A row has
room for :data:`MAX_LEVELS` levels, i.e. a total weight of about ``8 * 2**MAX_LEVELS``.

A tree's leaf sketches (:func:`leaf_capacity_table`) keep a row of ``0.8 k`` items instead of
the ~3.85 k of a row with room for every level: a leaf sketch is exact while it has one level
(up to its row, ``0.8 k`` items) and a KLL sketch of a smaller ``k_H`` as its levels ``H``
grow, so that their capacities always fit the row.  The kernels take either table.

Queries use DataSketches' inclusive rule: the ``q``-quantile is the smallest retained item whose
cumulative weight (items sorted by value) is at least ``q`` times the total weight.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

MAX_LEVELS = 32
MIN_WIDTH = 8
LV_H = 0  # index of the level count in an lv row
LV_N = MAX_LEVELS + 2  # index of the total weight
LV_WIDTH = MAX_LEVELS + 3


def capacity_table(k: int) -> np.ndarray:
    """``(2, MAX_LEVELS + 1)`` int64 table: row 0 the capacity of a level at depth ``d`` (levels
    below the top), row 1 the total capacity of a sketch with ``H`` levels."""
    if not (isinstance(k, (int, np.integer)) and MIN_WIDTH <= k <= 65535):
        raise ValueError(f"KLL k must be an integer in [{MIN_WIDTH}, 65535], got {k!r}")
    t = np.zeros((2, MAX_LEVELS + 1), dtype=np.int64)
    for d in range(MAX_LEVELS + 1):
        t[0, d] = max(MIN_WIDTH, int(k * (2.0 / 3.0) ** d + 0.5))
    for h in range(1, MAX_LEVELS + 1):
        t[1, h] = t[1, h - 1] + t[0, h - 1]
    return t


def row_capacity(k: int) -> int:
    """Items a sketch row must hold (its capacity with :data:`MAX_LEVELS` levels)."""
    return int(capacity_table(k)[1, MAX_LEVELS])


# a leaf sketch's row (trees' leaves, OnlineQRF): LEAF_WIDTH * k items, at least LEAF_MIN_ROW.
# OnlineQRF's point predictions do not read the sketches (they are the leaf models'), so the
# bytes a narrower row saves are leaves under a budget: chosen with the memory soak benchmark
# (docs/benchmarks/index.md, "Within 2% of the unbounded forest")
LEAF_WIDTH = 0.8
LEAF_MIN_ROW = 2 * (MAX_LEVELS + 1)


def leaf_row_capacity(k: int) -> int:
    """Items the row of a leaf sketch of accuracy ``k`` holds: ``LEAF_WIDTH * k`` (160 for
    ``k = 200``), against :func:`row_capacity`'s ~3.8k.  See :func:`leaf_capacity_table`."""
    capacity_table(k)  # validates k
    return max(LEAF_MIN_ROW, int(LEAF_WIDTH * k + 0.5))


def leaf_capacity_table(k: int, width: int | None = None) -> np.ndarray:
    """The capacity table (a new copy) of a sketch whose row holds ``width`` items (default
    :func:`leaf_row_capacity`), ``(MAX_LEVELS + 2, MAX_LEVELS + 1)`` int64: row 0 and row 1
    as :func:`capacity_table`'s (the nominal capacity at depth ``d``; the total with ``H``
    levels, here never more than ``width``), row ``1 + H`` the capacity at depth ``d`` of a
    sketch with ``H`` levels.

    With ``H`` levels, the capacities are :func:`capacity_table`'s for the largest
    ``k_H <= k`` whose total fits in ``width`` (every level at least :data:`MIN_WIDTH`, or
    at least 2 when even ``k_H = MIN_WIDTH`` would not fit): a young sketch (one level: up to
    ``min(k, width)`` items) is exact; as its levels grow it keeps its row and becomes one of
    accuracy ``k_H`` (``k = 200`` in 160 items: ``k_H`` 96 with two levels, ~52 from eight,
    i.e. a rank error about 3.8 times larger in a leaf that saw over ~20k weight).  KLL's
    compactions stay valid whatever the capacities; only the error bound follows ``k_H``."""
    width = leaf_row_capacity(k) if width is None else int(width)
    return _leaf_table(int(k), width).copy()


@lru_cache(maxsize=32)
def _leaf_table(k: int, width: int) -> np.ndarray:
    nominal = capacity_table(k)
    if width < LEAF_MIN_ROW:
        raise ValueError(f"a leaf sketch row holds at least {LEAF_MIN_ROW} items, got {width}")
    t = np.zeros((MAX_LEVELS + 2, MAX_LEVELS + 1), dtype=np.int64)
    t[0] = nominal[0]
    geo = (2.0 / 3.0) ** np.arange(MAX_LEVELS + 1)
    for H in range(1, MAX_LEVELS + 1):
        caps = None
        for floor in (MIN_WIDTH, 2):
            kh = _largest_fitting_k(k, floor, geo[:H], width)
            if kh is not None:
                caps = _level_caps(kh, floor, geo[:H])
                break
        if caps is None:  # cannot happen: width >= 2 * (MAX_LEVELS + 1)
            raise AssertionError("leaf sketch row too narrow")
        t[1 + H, :H] = caps
        t[1, H] = caps.sum()
    return t


def _level_caps(kh: int, floor: int, geo: np.ndarray) -> np.ndarray:
    return np.maximum(floor, (kh * geo + 0.5).astype(np.int64))


def _largest_fitting_k(k: int, floor: int, geo: np.ndarray, width: int) -> int | None:
    """The largest ``k_H`` in ``[min(floor, k), k]`` whose level capacities (each at least
    ``floor``) sum to at most ``width``, ``None`` if even the smallest does not fit.  The sum
    never decreases as ``k_H`` grows, so a bisection finds it (a search down from ``k`` costs
    ``k`` steps per height)."""
    lo, hi = min(floor, k), k
    if _level_caps(lo, floor, geo).sum() > width:
        return None
    # (lo fits)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _level_caps(mid, floor, geo).sum() <= width:
            lo = mid
        else:
            hi = mid - 1
    return lo


SCAN_RUNS = 16  # up to this many runs a linear scan of their heads beats a heap
