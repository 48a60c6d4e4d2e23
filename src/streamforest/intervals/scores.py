"""Sorted calibration scores shared by the conformal methods: a FIFO ring of calibration slots
whose scores are kept sorted (``order[k]`` the slot of the k-th smallest score, ``ss[k]`` that
score, contiguous for fast scans, ``pos[slot]`` its rank, -1 for an empty slot), and the
conformal rank of a half-width."""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel


# ------------------------------------------------------------------------------------------------
# calibration set: FIFO ring of slots, scores kept sorted: order[k] is the slot of the k-th
# smallest score, ss[k] that score (contiguous, for fast scans), pos[slot] its rank (-1: empty)
@entry(inline="always")
def ss_insert(order, pos, ss, n, v, s):
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if ss[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    for k in range(n, lo, -1):
        order[k] = order[k - 1]
        ss[k] = ss[k - 1]
        pos[order[k]] = k
    order[lo] = s
    ss[lo] = v
    pos[s] = lo
    return n + 1


@entry(inline="always")
def ss_update(order, pos, ss, n, v, s):
    p = pos[s]
    while p > 0 and ss[p - 1] > v:
        order[p] = order[p - 1]
        ss[p] = ss[p - 1]
        pos[order[p]] = p
        p -= 1
    while p < n - 1 and ss[p + 1] < v:
        order[p] = order[p + 1]
        ss[p] = ss[p + 1]
        pos[order[p]] = p
        p += 1
    order[p] = s
    ss[p] = v
    pos[s] = p


@kernel(inline="always")
def conformal_rank(n, alpha):
    """``ceil((n + 1)(1 - alpha))``: the rank (1-based, ascending) of the half-width among ``n``
    scores; above ``n`` the interval is infinite."""
    return np.int64(np.ceil((n + 1) * (1.0 - alpha) - 1e-9))


@entry(inline="always")
def sorted_half_width(ss, n, alpha):
    """The :func:`conformal_rank`-th smallest of the sorted scores ``ss[:n]`` (``inf`` when that
    exceeds ``n``)."""
    r = conformal_rank(n, alpha)
    if r > n or n == 0:
        return np.inf
    if r < 1:
        return -np.inf
    return ss[r - 1]


@entry
def ring_slots(ring, W, slots):
    """Slot of each row that enters the calibration set (out-of-bag for some tree), else -1.
    ``ring = [head, capacity]``; advances the head."""
    c = ring[1]
    for i in range(W.shape[1]):
        oob = False
        for t in range(W.shape[0]):
            if W[t, i] == 0.0:
                oob = True
        if oob:
            slots[i] = ring[0]
            ring[0] = (ring[0] + 1) % c
        else:
            slots[i] = -1
