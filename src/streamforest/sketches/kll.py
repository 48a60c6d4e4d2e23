"""KLL quantile sketch (Karnin, Lang & Liberty 2016) compiled for use inside learning loops.

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
  heap walk over sorted runs (:func:`runs_quantile`);
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

from ..compiled import entry, kernel
from ..rng import next_u64

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


@kernel(inline="always")
def _level_capacity(capt, H, d):
    """Capacity of the level at depth ``d`` (0: the top) of a sketch with ``H`` levels:
    :func:`capacity_table`'s (2 rows) or :func:`leaf_capacity_table`'s."""
    if capt.shape[0] == 2:
        return capt[0, d]
    return capt[H + 1, d]


# ------------------------------------------------------------------------------------------------
# one sketch (a row of shared arrays)
@kernel(inline="always")
def kll_reset(items, lv, r):
    cap = items.shape[1]
    lv[r, LV_H] = 1
    lv[r, 1] = cap
    lv[r, 2] = cap
    lv[r, LV_N] = 0


@kernel(inline="always")
def kll_copy(items, lv, src, dst):
    cap = items.shape[1]
    for i in range(lv[src, 1], cap):
        items[dst, i] = items[src, i]
    for j in range(LV_WIDTH):
        lv[dst, j] = lv[src, j]


@kernel(inline="always")
def kll_n(lv, r):
    return lv[r, LV_N]


@entry(inline="always")
def kll_retained(items, lv, r):
    return items.shape[1] - lv[r, 1]


@kernel(inline="always")
def _add_level(items, lv, r):
    h = lv[r, LV_H]
    lv[r, h + 2] = items.shape[1]  # the new top level starts (and ends) at the array's end
    lv[r, LV_H] = h + 1


@kernel
def _compress(items, lv, r, capt, rng):
    """Compact the lowest level at or over its capacity into the level above."""
    H = lv[r, LV_H]
    h = 0
    while h < H - 1:
        if lv[r, h + 2] - lv[r, h + 1] >= _level_capacity(capt, H, H - h - 1):
            break
        h += 1
    if h == H - 1:
        if H >= MAX_LEVELS:  # cannot happen below ~8 * 2**MAX_LEVELS of weight
            return
        _add_level(items, lv, r)
    raw_beg = lv[r, h + 1]
    raw_end = lv[r, h + 2]
    above_end = lv[r, h + 3]
    raw_pop = raw_end - raw_beg
    odd = raw_pop & 1
    odd_item = items[r, raw_beg]
    adj_beg = raw_beg + odd
    half = (raw_pop - odd) // 2
    off = np.int64(next_u64(rng) & np.uint64(1))
    for i in range(half):  # keep every other item, random phase
        items[r, adj_beg + i] = items[r, adj_beg + 2 * i + off]
    # merge the kept half with the level above into [adj_beg + half, above_end)
    a = adj_beg
    a_end = adj_beg + half
    b = raw_end
    d = adj_beg + half
    while a < a_end and b < above_end:
        if items[r, a] <= items[r, b]:
            items[r, d] = items[r, a]
            a += 1
        else:
            items[r, d] = items[r, b]
            b += 1
        d += 1
    while a < a_end:
        items[r, d] = items[r, a]
        a += 1
        d += 1
    lv[r, h + 2] = adj_beg + half
    new_beg = adj_beg + half
    if odd:
        new_beg -= 1
        items[r, new_beg] = odd_item
    shift = new_beg - raw_beg
    lv[r, h + 1] = new_beg
    if h > 0 and shift > 0:
        lo = lv[r, 1]
        for i in range(raw_beg - 1, lo - 1, -1):
            items[r, i + shift] = items[r, i]
        for g in range(h):
            lv[r, g + 1] += shift


@kernel
def _insert_level(items, lv, r, h, v, capt, rng):
    while lv[r, LV_H] <= h:
        _add_level(items, lv, r)
    cap = items.shape[1]
    while lv[r, 1] - (cap - capt[1, lv[r, LV_H]]) <= 0:
        _compress(items, lv, r, capt, rng)
    # position: after the items <= v of level h (upper bound)
    lo = lv[r, h + 1]
    hi = lv[r, h + 2]
    while lo < hi:
        mid = (lo + hi) >> 1
        if items[r, mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    first = lv[r, 1]
    for i in range(first, lo):
        items[r, i - 1] = items[r, i]
    items[r, lo - 1] = v
    for g in range(h + 1):
        lv[r, g + 1] -= 1
    lv[r, LV_N] += np.int64(1) << h


@kernel
def kll_update(items, lv, r, v, w, capt, rng):
    """Add value ``v`` with integer weight ``w >= 1`` (one insertion per set bit of ``w``)."""
    j = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    while w > 0:
        if w & 1:
            _insert_level(items, lv, r, j, v, capt, rng)
        w >>= 1
        j += 1


# ------------------------------------------------------------------------------------------------
# queries over sorted runs (one sketch, or the union of several)
@kernel(inline="always")
def level_runs(lv, start, mult, rs, re, rw, nruns):
    """Append the levels of one sketch (level row ``lv``) as runs read in place: level h is
    ``[start + lv[h + 1], start + lv[h + 2])`` of the array holding the sketch's items (``start``:
    where that array's index of the sketch row's item 0 is), each item weighing
    ``mult * 2**h``; empty levels are skipped.  Returns ``nruns``."""
    for h in range(lv[LV_H]):
        s = lv[h + 1]
        e = lv[h + 2]
        if e <= s:
            continue
        rs[nruns] = start + s
        re[nruns] = start + e
        rw[nruns] = mult * float(np.int64(1) << h)
        nruns += 1
    return nruns


@kernel(inline="always")
def append_runs(items, off, lv, mult, buf, nbuf, rs, re, rw, nruns):
    """Append the levels of one sketch (level row ``lv``: count and boundaries; its items in
    ``items`` from ``off``, e.g. a copy made elsewhere) as runs of ``buf`` (values copied), each
    item of level h weighing ``mult * 2**h``.  Returns ``(nbuf, nruns)``."""
    a = lv[1]  # the levels are contiguous: level 0 starts there, the top one ends at the row's end
    b = lv[lv[LV_H] + 1]
    for i in range(a, b):
        buf[nbuf + i - a] = items[off + i]
    return nbuf + max(b - a, 0), level_runs(lv, nbuf - a, mult, rs, re, rw, nruns)


@kernel(inline="always")
def add_runs(items, lv, r, mult, buf, nbuf, rs, re, rw, nruns):
    """Append sketch row ``r``'s levels as runs of ``buf``; see :func:`append_runs`."""
    return append_runs(items[r], 0, lv[r], mult, buf, nbuf, rs, re, rw, nruns)


@kernel(inline="always")
def _sift_down(heap, hn, cur, buf, i, sign):
    # min-heap on sign * buf[cur[run]]
    while True:
        c = 2 * i + 1
        if c >= hn:
            return
        if c + 1 < hn and sign * buf[cur[heap[c + 1]]] < sign * buf[cur[heap[c]]]:
            c += 1
        if sign * buf[cur[heap[c]]] < sign * buf[cur[heap[i]]]:
            t = heap[c]
            heap[c] = heap[i]
            heap[i] = t
            i = c
        else:
            return


@entry
def runs_quantile(buf, rs, re, rw, nruns, total, q, hv, cur):
    """Inclusive ``q``-quantile of the weighted union of sorted runs (NaN if empty).

    Walks from the low end for ``q <= 0.5`` and from the high end otherwise, picking the next
    item by a scan of the runs' current heads (``hv``, contiguous: faster than a heap for the
    few dozen runs of a forest's leaves); cost ``O(min(q, 1 - q) * items * runs)``.
    """
    if nruns == 0 or total <= 0.0:
        return np.nan
    target = q * total
    v = np.nan
    if q <= 0.5:
        for k in range(nruns):
            cur[k] = rs[k]
            hv[k] = buf[rs[k]]
        cum = 0.0
        while True:
            best = 0
            bv = hv[0]
            for k in range(1, nruns):
                if hv[k] < bv:
                    bv = hv[k]
                    best = k
            if bv == np.inf:
                return v
            v = bv
            cum += rw[best]
            if cum >= target:
                return v
            cur[best] += 1
            hv[best] = buf[cur[best]] if cur[best] < re[best] else np.inf
    rest = total - target
    for k in range(nruns):
        cur[k] = re[k] - 1
        hv[k] = buf[re[k] - 1]
    above = 0.0
    while True:
        best = 0
        bv = hv[0]
        for k in range(1, nruns):
            if hv[k] > bv:
                bv = hv[k]
                best = k
        if bv == -np.inf:
            return v
        v = bv
        above += rw[best]
        if above > rest:
            return v
        cur[best] -= 1
        hv[best] = buf[cur[best]] if cur[best] >= rs[best] else -np.inf


SCAN_RUNS = 16  # up to this many runs a linear scan of their heads beats a heap


@kernel(inline="always")
def _head_down(hv, heap, hn, i):
    """Sift heap node ``i`` down: node ``j`` holds run ``heap[j]``'s head as key ``hv[j]``, and
    a node comes before another by key, then by the lower run index (the scan's order)."""
    key = hv[i]
    run = heap[i]
    while True:
        c = 2 * i + 1
        if c >= hn:
            break
        if c + 1 < hn and (hv[c + 1] < hv[c] or (hv[c + 1] == hv[c] and heap[c + 1] < heap[c])):
            c += 1
        if hv[c] < key or (hv[c] == key and heap[c] < run):
            hv[i] = hv[c]
            heap[i] = heap[c]
            i = c
        else:
            break
    hv[i] = key
    heap[i] = run


@entry
def runs_quantile_many(buf, rs, re, rw, nruns, total, q, hv, cur, heap):
    """:func:`runs_quantile` of many runs (non-empty, as :func:`append_runs` makes them): the
    next item is taken from a heap of the runs' heads, ``O(min(q, 1 - q) * items * log(runs))``
    (the scan's ``* runs`` costs more beyond ``SCAN_RUNS`` runs), in the very
    order of the scan (ties to the lower run), so the result is the same bit for bit.  The heap
    keeps each node's key (the head's value, negated when walking down from the high end) beside
    its run (``hv``, ``heap``: ``nruns`` scratch each, ``cur``: each run's position), so a
    comparison reads no other array."""
    if nruns <= SCAN_RUNS:
        return runs_quantile(buf, rs, re, rw, nruns, total, q, hv, cur)
    if total <= 0.0:
        return np.nan
    target = q * total
    low = q <= 0.5
    sign = 1.0 if low else -1.0
    step = 1 if low else -1
    for k in range(nruns):
        cur[k] = rs[k] if low else re[k] - 1
        hv[k] = sign * buf[cur[k]]
        heap[k] = k
    hn = nruns
    for i in range(hn // 2 - 1, -1, -1):
        _head_down(hv, heap, hn, i)
    rest = total - target
    acc = 0.0
    v = np.nan
    while hn > 0:
        best = heap[0]
        v = sign * hv[0]  # (negation is exact: the head's value)
        acc += rw[best]
        if (acc >= target) if low else (acc > rest):
            return v
        c = cur[best] + step
        cur[best] = c
        if rs[best] <= c < re[best]:
            hv[0] = sign * buf[c]
        else:
            hn -= 1
            hv[0] = hv[hn]
            heap[0] = heap[hn]
        _head_down(hv, heap, hn, 0)
    return v


@kernel
def runs_sorted(buf, rs, re, rw, nruns, heap, cur, out_v, out_w):
    """Merge the runs into ascending ``out_v`` with weights ``out_w``; returns the count."""
    hn = 0
    for k in range(nruns):
        if re[k] > rs[k]:
            cur[k] = rs[k]
            heap[hn] = k
            hn += 1
    for i in range(hn // 2 - 1, -1, -1):
        _sift_down(heap, hn, cur, buf, i, 1.0)
    m = 0
    while hn > 0:
        k = heap[0]
        out_v[m] = buf[cur[k]]
        out_w[m] = rw[k]
        m += 1
        cur[k] += 1
        if cur[k] >= re[k]:
            hn -= 1
            heap[0] = heap[hn]
        _sift_down(heap, hn, cur, buf, 0, 1.0)
    return m


@kernel
def shortest_interval(v, w, m, mass):
    """Highest-density interval of a discrete distribution (``v`` ascending, weights ``w``):
    the shortest ``[v[i], v[j]]`` holding at least ``mass`` of the total weight (HDI-Forest,
    Algorithm 1: a two-pointer scan).  Ties in width go to the leftmost.  ``(nan, nan)`` if
    empty."""
    if m == 0:
        return np.nan, np.nan
    total = 0.0
    for i in range(m):
        total += w[i]
    need = mass * total * (1.0 - 1e-12)
    best_lo = v[0]
    best_hi = v[m - 1]
    best = best_hi - best_lo
    j = 0
    acc = 0.0
    for i in range(m):
        while j < m and acc < need:
            acc += w[j]
            j += 1
        if acc < need:
            break
        width = v[j - 1] - v[i]
        if width < best:
            best = width
            best_lo = v[i]
            best_hi = v[j - 1]
        acc -= w[i]
    return best_lo, best_hi
