"""Attribute observers: E-BST, TE-BST and the Quantization Observer (QO), compiled.

All three keep, per (leaf, feature), a set of *bins*; a bin holds the target statistic
``(w, hi, lo, m2)`` (see :mod:`streamforest.stats`), the weighted sum of x (its prototype is the
mean x) and the smallest and largest x it received.  They differ only in the key that decides
which bin an example joins:

- ``ebst``: the value itself, so every distinct value is a split candidate, as in E-BST
  (Ikonomovska et al.).  The bins are stored in the hash table below rather than in a binary
  search tree: insertion is O(1) instead of O(depth), and the in-order traversal of E-BST is
  replaced by one sort at split time.  The candidate set, the statistics and so the chosen split
  are the same as E-BST's.
- ``tebst``: the value truncated to ``d`` decimals, ``floor(x * 10**d)`` (TE-BST).
- ``qo``: ``floor(x / r)`` for the leaf's quantization radius ``r`` (QO paper, Algorithm 1).

Nominal features use the category code as key (one bin per category).

Split search (QO paper, Algorithm 2, and E-BST's traversal alike): bins are sorted by x (by mean
target for a nominal feature, Breiman's ordering, which makes the best binary partition of the
categories a prefix of that order), the left statistic is accumulated by Chan merges and the right
one obtained by Chan subtraction.  The variance reduction of a partition is computed exactly as

    VR = (M2_total - M2_left - M2_right) / W = w_L * w_R * (mean_R - mean_L)**2 / W**2.

Thresholds: the split test is ``x <= c``.  For two consecutive bins i < j the candidate is the
midpoint of their prototypes (mean x), but it is moved to ``max x of bin i`` when the midpoint
would not separate the bins' actual values (``max_i <= c < min_j``).  So the threshold always
sends exactly the examples counted left to the left child (River 0.26.1's QOSplitter does not).

Every bin of a tree sits in one open-addressing hash table keyed by (leaf slot, feature, key),
with linear probing and backward-shift deletion, so freeing an observer leaves no tombstones.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import mix64
from ..stats import chan_merge, chan_subtract, welford_update
from ._state import I_BIN_FREE, I_BIN_HW, I_BINS_LIVE, OBS_EBST, OBS_TEBST, S_HI, S_LO, S_M2, S_W

_KEY_LIMIT = 9.0e15  # |key| cap: integer-valued float64 keys stay exact below 2**53


@njit(cache=True, inline="always")
def bin_key(x, observer, scale, radius, nominal):
    """Key of value ``x`` for an observer (see module docstring)."""
    if nominal or observer == OBS_EBST:
        return x
    k = x * scale if observer == OBS_TEBST else x / radius
    if k > _KEY_LIMIT:
        k = _KEY_LIMIT
    elif k < -_KEY_LIMIT:
        k = -_KEY_LIMIT
    return np.floor(k)


@njit(cache=True, inline="always")
def _hash(leaf, feat, key):
    h = np.uint64(hash(key))
    h ^= mix64(np.uint64(leaf) * np.uint64(1048583) + np.uint64(feat) + np.uint64(1))
    return mix64(h)


@njit(cache=True)
def observe(st, leaf, feat, key, x, y, w):
    """Add ``(x, y)`` with weight ``w`` to the bin ``key`` of observer (leaf, feat).

    The caller guarantees a free bin exists (see ``free_bins``).
    """
    h = _hash(leaf, feat, key)
    mask = np.uint64(st.ht.shape[0] - 1)
    i = np.int64(h & mask)
    while True:
        b = st.ht[i]
        if b < 0:
            break
        if st.bn_hash[b] == h and st.bn_leaf[b] == leaf and st.bn_feat[b] == feat \
                and st.bn_key[b] == key:
            s = st.bn_stat
            s[b, S_W], s[b, S_HI], s[b, S_LO], s[b, S_M2] = welford_update(
                s[b, S_W], s[b, S_HI], s[b, S_LO], s[b, S_M2], y, w)
            st.bn_xsum[b] += w * x
            if x < st.bn_xmin[b]:
                st.bn_xmin[b] = x
            if x > st.bn_xmax[b]:
                st.bn_xmax[b] = x
            return
        i = (i + 1) & (st.ht.shape[0] - 1)
    # new bin
    ints = st.ints
    b = ints[I_BIN_FREE]
    if b >= 0:
        ints[I_BIN_FREE] = st.bn_next[b]
    else:
        b = ints[I_BIN_HW]
        ints[I_BIN_HW] += 1
    ints[I_BINS_LIVE] += 1
    st.ht[i] = b
    st.bn_leaf[b] = leaf
    st.bn_feat[b] = feat
    st.bn_key[b] = key
    st.bn_hash[b] = h
    st.bn_stat[b, S_W] = w
    st.bn_stat[b, S_HI] = y
    st.bn_stat[b, S_LO] = 0.0
    st.bn_stat[b, S_M2] = 0.0
    st.bn_xsum[b] = w * x
    st.bn_xmin[b] = x
    st.bn_xmax[b] = x
    st.bn_next[b] = st.lf_head[leaf, feat]
    st.lf_head[leaf, feat] = b
    st.lf_nb[leaf, feat] += 1


@njit(cache=True)
def free_bins(st):
    """Bins that can still be allocated without growing the pool."""
    return st.bn_leaf.shape[0] - st.ints[I_BINS_LIVE]


@njit(cache=True)
def _hash_delete(st, b):
    cap = st.ht.shape[0]
    m = cap - 1
    i = np.int64(st.bn_hash[b] & np.uint64(m))
    while st.ht[i] != b:
        i = (i + 1) & m
    # backward-shift deletion (linear probing)
    j = i
    while True:
        j = (j + 1) & m
        c = st.ht[j]
        if c < 0:
            break
        k = np.int64(st.bn_hash[c] & np.uint64(m))  # home slot of c
        # c may move into the hole at i unless its home lies cyclically in (i, j]
        if i <= j:
            stays = i < k <= j
        else:
            stays = k > i or k <= j
        if not stays:
            st.ht[i] = c
            i = j
    st.ht[i] = -1


@njit(cache=True)
def free_observers(st, leaf):
    """Release every bin of every observer of ``leaf``."""
    ints = st.ints
    for f in range(st.lf_head.shape[1]):
        b = st.lf_head[leaf, f]
        while b >= 0:
            nxt = st.bn_next[b]
            _hash_delete(st, b)
            st.bn_leaf[b] = -1
            st.bn_next[b] = ints[I_BIN_FREE]
            ints[I_BIN_FREE] = b
            ints[I_BINS_LIVE] -= 1
            b = nxt
        st.lf_head[leaf, f] = -1
        st.lf_nb[leaf, f] = 0


@njit(cache=True)
def rebuild_hash(st):
    """Re-insert every live bin (after the table was resized)."""
    st.ht[:] = -1
    m = np.uint64(st.ht.shape[0] - 1)
    for b in range(st.ints[I_BIN_HW]):
        if st.bn_leaf[b] >= 0:
            i = np.int64(st.bn_hash[b] & m)
            while st.ht[i] >= 0:
                i = (i + 1) & (st.ht.shape[0] - 1)
            st.ht[i] = b


@njit(cache=True)
def sorted_bins(st, leaf, feat, nominal):
    """Bin ids of observer (leaf, feat): by x for numeric, by mean target for nominal."""
    nb = st.lf_nb[leaf, feat]
    idx = np.empty(nb, np.int64)
    order_key = np.empty(nb, np.float64)
    b = st.lf_head[leaf, feat]
    k = 0
    while b >= 0:
        idx[k] = b
        if nominal:
            order_key[k] = st.bn_stat[b, S_HI] + st.bn_stat[b, S_LO]
        else:
            order_key[k] = st.bn_xmin[b]
        k += 1
        b = st.bn_next[b]
    return idx[np.argsort(order_key, kind="mergesort")]


@njit(cache=True)
def merged_stat(st, idx, lo, hi):
    """Chan merge of the target statistics of bins ``idx[lo:hi]``."""
    w = 0.0
    mh = 0.0
    ml = 0.0
    m2 = 0.0
    s = st.bn_stat
    for k in range(lo, hi):
        b = idx[k]
        w, mh, ml, m2 = chan_merge(w, mh, ml, m2, s[b, S_W], s[b, S_HI], s[b, S_LO], s[b, S_M2])
    return w, mh, ml, m2


@njit(cache=True)
def best_cut(st, idx, min_branch):
    """Best partition ``idx[:k+1] | idx[k+1:]`` by variance reduction.

    Returns ``(vr, k)``; ``k = -1`` when no partition leaves ``min_branch`` weight on both sides.
    """
    n = idx.shape[0]
    if n < 2:
        return -1.0, -1
    tw, th, tl, tm2 = merged_stat(st, idx, 0, n)
    s = st.bn_stat
    lw = 0.0
    lh = 0.0
    ll = 0.0
    lm2 = 0.0
    best = -1.0
    best_k = -1
    for k in range(n - 1):
        b = idx[k]
        lw, lh, ll, lm2 = chan_merge(lw, lh, ll, lm2, s[b, S_W], s[b, S_HI], s[b, S_LO], s[b, S_M2])
        rw, rh, rl, rm2 = chan_subtract(tw, th, tl, tm2, lw, lh, ll, lm2)
        if lw < min_branch or rw < min_branch:
            continue
        dm = (rh - lh) + (rl - ll)
        vr = lw * rw * dm * dm / (tw * tw)
        if vr > best:
            best = vr
            best_k = k
    return best, best_k


@njit(cache=True)
def cut_threshold(st, idx, k):
    """Threshold ``c`` of the numeric split after ``idx[k]``: ``max_k <= c < min_{k+1}``."""
    a = idx[k]
    b = idx[k + 1]
    pa = st.bn_xsum[a] / st.bn_stat[a, S_W]
    pb = st.bn_xsum[b] / st.bn_stat[b, S_W]
    c = 0.5 * pa + 0.5 * pb
    if not (st.bn_xmax[a] <= c < st.bn_xmin[b]):
        c = st.bn_xmax[a]
    return c
