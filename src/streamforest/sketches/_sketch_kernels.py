"""The compiled part of :class:`~streamforest.sketches.sketch.KLLSketch`: batched updates into a
sketch's row (compaction, the unit-weight fast path), merges and quantile queries over a row.

KLLSketch calls their port in the compiled core (``_core.sketch``, src/core/sketch/); these numba
kernels stay as the reference of the port's tests (tests/test_core_sketch.py, test_kll.py) until
the numba core goes."""

from __future__ import annotations

import numpy as np

from .. import rng as _rng
from ..compiled import entry, kernel
from ..sorting import sort_into
from . import _sortnet as _net
from . import kll


@entry
def _update_many(items, lv, values, weights, capt, rng):
    for i in range(values.shape[0]):
        kll.kll_update(items, lv, np.int64(0), values[i], weights[i], capt, rng)


#: a run of at most this many values with a zero in it is inserted value by value; longer runs
#: are sorted and merged in at once
UNIT_BATCH_MIN = 32


#: values level 0 may hold unsorted (the largest network): runs of at most this many go in
#: unsorted
UNSORTED_MAX = 32


@kernel
def _compress_row(it, lv, capt, rng):
    """``kll._compress`` of one sketch (its row of items ``it`` and level row ``lv``, 1-d): the
    same level compacted with the same random draw, to the same items.  The level above's
    items below the first kept one, like the levels below, move as one block (no
    comparisons)."""
    H = lv[kll.LV_H]
    h = 0
    while h < H - 1:
        if lv[h + 2] - lv[h + 1] >= kll._level_capacity(capt, H, H - h - 1):
            break
        h += 1
    if h == H - 1:
        if H >= kll.MAX_LEVELS:  # cannot happen below ~8 * 2**MAX_LEVELS of weight
            return
        lv[H + 2] = it.shape[0]  # kll._add_level
        lv[kll.LV_H] = H + 1
    raw_beg = lv[h + 1]
    raw_end = lv[h + 2]
    above_end = lv[h + 3]
    raw_pop = raw_end - raw_beg
    odd = raw_pop & 1
    odd_item = it[raw_beg]
    adj_beg = raw_beg + odd
    half = (raw_pop - odd) // 2
    off = np.int64(_rng.next_u64(rng) & np.uint64(1))
    for i in range(half):  # keep every other item, random phase
        it[adj_beg + i] = it[adj_beg + 2 * i + off]
    # merge the kept half with the level above into [adj_beg + half, above_end); ties: the
    # kept item first
    a = adj_beg
    a_end = adj_beg + half
    d = adj_beg + half
    b = raw_end
    if half > 0:
        x = it[a]
        lo = raw_end
        hi = above_end
        while lo < hi:  # the level above's items below the first kept one
            mid = (lo + hi) >> 1
            if it[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        for j in range(raw_end, lo):
            it[d] = it[j]
            d += 1
        b = lo
    while a < a_end and b < above_end:
        x = it[a]
        y = it[b]
        if x <= y:
            it[d] = x
            a += 1
        else:
            it[d] = y
            b += 1
        d += 1
    while a < a_end:
        it[d] = it[a]
        a += 1
        d += 1
    lv[h + 2] = adj_beg + half
    new_beg = adj_beg + half
    if odd:
        new_beg -= 1
        it[new_beg] = odd_item
    shift = new_beg - raw_beg
    lv[h + 1] = new_beg
    if h > 0 and shift > 0:
        lo = lv[1]
        for i in range(raw_beg - 1, lo - 1, -1):
            it[i + shift] = it[i]
        for g in range(h):
            lv[g + 1] += shift


@kernel(inline="always")
def _settle(it, lv, u, x):
    """Sort the ``u`` unsorted items at the front of level 0 (``1 <= u <=`` :data:`UNSORTED_MAX`,
    no zero among them) into the sorted rest of the level: a sorting network in registers
    (scratch ``x``, padded with +inf), then a merge.  Equal items are equal bits (no zeros), so
    their order does not matter."""
    first = lv[1]
    e0 = lv[2]
    for t in range(UNSORTED_MAX):
        x[t] = it[first + t] if t < u else np.inf
    if u <= 16:
        _net.sort16(x)
    else:
        _net.sort32(x)
    a = 0
    b = first + u
    d = first
    while a < u and b < e0:  # d never overtakes b
        p = x[a]
        q = it[b]
        if p < q:
            it[d] = p
            a += 1
        else:
            it[d] = q
            b += 1
        d += 1
    while a < u:
        it[d] = x[a]
        a += 1
        d += 1


@kernel
def _insert_unit_row(it, lv, values, capt, rng):
    """Add each of ``values`` with weight 1, in order, to one sketch (rows ``it``, ``lv``): the
    same sketch, item for item and draw for draw, as one ``kll.kll_update(..., v, 1, ...)`` per
    value.

    The values that arrive between two compactions go to level 0 at once.  A few (at most
    :data:`UNSORTED_MAX`, a deep sketch's small level 0) are put at its front unsorted, and
    the level's unsorted items (at most :data:`UNSORTED_MAX`) are sorted in (:func:`_settle`)
    before a compaction of level 0 reads them, and before this returns; a run with a zero in
    it is inserted value by value instead, each after the level's items at or below it (what an
    insertion does: ``-0.0`` and ``0.0`` keep their order).  More values (a young sketch, whose
    level 0 is large) are sorted and merged with the level (equal values keep their order, so
    -0.0 and 0.0 too: the sketch is the same bit for bit).  A compaction happens exactly when
    the one-by-one path's would (an insertion finding no free space), and only its sizes decide
    which level it compacts, so the random draws and the result are the same."""
    n = values.shape[0]
    cap = it.shape[0]
    tmp = np.empty(0)
    x = np.empty(UNSORTED_MAX)
    u = 0  # unsorted items at the front of level 0
    i = 0
    while i < n:
        H = lv[kll.LV_H]
        free = lv[1] - (cap - capt[1, H])
        if free <= 0:
            if u > 0 and (H == 1 or lv[2] - lv[1] >= kll._level_capacity(capt, H, H - 1)):
                _settle(it, lv, u, x)  # level 0 is the one compacted
                u = 0
            _compress_row(it, lv, capt, rng)
            continue
        m = min(free, n - i)
        s0 = lv[1]
        if m <= UNSORTED_MAX:
            zero = False
            for j in range(m):
                zero |= values[i + j] == 0.0
            if not zero:  # to the front of level 0, unsorted
                if u + m > UNSORTED_MAX:
                    _settle(it, lv, u, x)
                    u = 0
                for j in range(m):
                    it[s0 - m + j] = values[i + j]
                u += m
                lv[1] = s0 - m
                lv[kll.LV_N] += m
                i += m
                continue
        if u > 0:
            _settle(it, lv, u, x)
            u = 0
        e0 = lv[2]
        if m <= UNIT_BATCH_MIN:
            first = s0
            for j in range(m):
                v = values[i + j]
                p = first
                while p < e0 and it[p] <= v:  # the items at or below v move down one
                    it[p - 1] = it[p]
                    p += 1
                it[p - 1] = v
                first -= 1
        else:
            if tmp.shape[0] < m:
                tmp = np.empty(cap)
            zeros = 0
            for j in range(m):
                v = values[i + j]
                tmp[j] = v
                if v == 0.0:
                    zeros += 1
            sort_into(tmp, m)
            if zeros > 1:  # -0.0 and 0.0 tie: in the order they came, as insertions leave them
                z = 0
                while tmp[z] != 0.0:
                    z += 1
                for j in range(m):
                    v = values[i + j]
                    if v == 0.0:
                        tmp[z] = v
                        z += 1
            a = 0
            b = s0
            d = s0 - m
            while a < m and b < e0:  # merge into [s0 - m, e0): d never overtakes b
                if tmp[a] < it[b]:  # ties: the level's item first, as an insertion does
                    it[d] = tmp[a]
                    a += 1
                else:
                    it[d] = it[b]
                    b += 1
                d += 1
            while a < m:
                it[d] = tmp[a]
                a += 1
                d += 1
        lv[1] = s0 - m
        lv[kll.LV_N] += m
        i += m
    if u > 0:
        _settle(it, lv, u, x)


@entry
def _update_unit(items, lv, values, capt, rng, bounds):
    """Add ``values`` (weight 1 each) to sketch row 0 and widen ``bounds`` (min, max); False,
    and nothing added, if one of them is not finite."""
    lo = bounds[0]
    hi = bounds[1]
    for i in range(values.shape[0]):
        v = values[i]
        if not np.isfinite(v):
            return False
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    _insert_unit_row(items[0], lv[0], values, capt, rng)
    bounds[0] = lo
    bounds[1] = hi
    return True


@kernel
def _merge_into(it, lv, o_it, o_lv, capt, rng):
    """Insert every retained item of the other sketch (rows ``o_it``, ``o_lv``) at its own level
    (weight preserved) into this one (rows ``it``, ``lv``): the same sketch as one
    ``kll._insert_level`` per item, level by level, but the items that fit before the next
    compaction go in at once (the items below the run's first move down as one block, the run
    is merged with the rest of its level)."""
    cap = it.shape[0]
    for h in range(o_lv[kll.LV_H]):
        i = o_lv[h + 1]
        end = o_lv[h + 2]
        while i < end:
            while lv[kll.LV_H] <= h:  # kll._add_level
                lv[lv[kll.LV_H] + 2] = cap
                lv[kll.LV_H] += 1
            free = lv[1] - (cap - capt[1, lv[kll.LV_H]])
            if free <= 0:
                _compress_row(it, lv, capt, rng)
                continue
            m = min(free, end - i)
            sh = lv[h + 1]
            eh = lv[h + 2]
            x = o_it[i]
            lo = sh
            hi = eh
            while lo < hi:  # the first item of level h above the run's first (ties: the level's
                mid = (lo + hi) >> 1  # item first, as an insertion does)
                if it[mid] <= x:
                    lo = mid + 1
                else:
                    hi = mid
            for j in range(lv[1], lo):  # the levels below h and level h up to there: m down
                it[j - m] = it[j]
            for g in range(h):
                lv[g + 1] -= m
            a = i
            b = lo
            d = lo - m
            while a < i + m and b < eh:
                if o_it[a] < it[b]:
                    it[d] = o_it[a]
                    a += 1
                else:
                    it[d] = it[b]
                    b += 1
                d += 1
            while a < i + m:
                it[d] = o_it[a]
                a += 1
                d += 1
            lv[h + 1] = sh - m
            lv[kll.LV_N] += np.int64(m) << h
            i += m


@entry
def _merge_sketch(items, lv, bounds, o_items, o_lv, o_bounds, capt, rng):
    """:func:`_merge_into` (sketch row 0 of each), and the bounds (min, max) widened to the
    other sketch's."""
    _merge_into(items[0], lv[0], o_items[0], o_lv[0], capt, rng)
    bounds[0] = min(bounds[0], o_bounds[0])
    bounds[1] = max(bounds[1], o_bounds[1])


@entry
def _quantiles(items, lv, qs, out):
    cap = items.shape[1]
    buf = np.empty(cap)
    rs = np.empty(kll.MAX_LEVELS, np.int64)
    re = np.empty(kll.MAX_LEVELS, np.int64)
    rw = np.empty(kll.MAX_LEVELS)
    hv = np.empty(kll.MAX_LEVELS)
    cur = np.empty(kll.MAX_LEVELS, np.int64)
    nb, nr = kll.add_runs(items, lv, 0, 1.0, buf, np.int64(0), rs, re, rw, np.int64(0))
    total = float(lv[0, kll.LV_N])
    for i in range(qs.shape[0]):
        out[i] = kll.runs_quantile(buf, rs, re, rw, nr, total, qs[i], hv, cur)


@entry
def _sorted_view(items, lv, values, cumulative):
    """The retained items ascending (``values``) and their cumulative weights; returns the count."""
    cap = items.shape[1]
    buf = np.empty(cap)
    rs = np.empty(kll.MAX_LEVELS, np.int64)
    re = np.empty(kll.MAX_LEVELS, np.int64)
    rw = np.empty(kll.MAX_LEVELS)
    heap = np.empty(kll.MAX_LEVELS, np.int64)
    cur = np.empty(kll.MAX_LEVELS, np.int64)
    nb, nr = kll.add_runs(items, lv, 0, 1.0, buf, np.int64(0), rs, re, rw, np.int64(0))
    m = kll.runs_sorted(buf, rs, re, rw, nr, heap, cur, values, cumulative)
    total = 0.0
    for i in range(m):
        total += cumulative[i]
        cumulative[i] = total
    return m
