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
from numba.core import types
from numba.extending import intrinsic

from ..compiled import entry, kernel
from ..rng import mix64
from ..stats import chan_merge, chan_subtract, welford_update
from .arena import tree_state
from .state import (
    B_FEAT,
    B_HI,
    B_KEY,
    B_LEAF,
    B_LO,
    B_M2,
    B_NEXT,
    B_W,
    B_XMAX,
    B_XMIN,
    B_XSUM,
    I_BIN_FREE,
    I_BIN_HW,
    I_BINS_LIVE,
    OBS_EBST,
)

_KEY_LIMIT = 9.0e15  # |key| cap: integer-valued float64 keys stay exact below 2**53
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@intrinsic
def _float_bits(typingctx, x):
    """The IEEE-754 bits of a float64 as a uint64 (an LLVM bitcast, no memory round trip)."""
    sig = types.uint64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.uint64))

    return sig, codegen


@kernel(inline="always")
def bin_key(x, observer, scale, nominal):
    """Key of value ``x`` for an observer (see module docstring); ``scale`` is ``10**d`` for
    TE-BST and ``1 / radius`` for QO."""
    if nominal or observer == OBS_EBST:
        return x + 0.0  # -0.0 -> 0.0: equal values, equal keys, equal hashes
    k = x * scale
    if k > _KEY_LIMIT:
        k = _KEY_LIMIT
    elif k < -_KEY_LIMIT:
        k = -_KEY_LIMIT
    return np.floor(k) + 0.0


@kernel(inline="always")
def _home(leaf, feat, key, mask):
    owner = np.uint64(leaf) * np.uint64(1 << 20) + np.uint64(feat)
    return np.int64(mix64(_float_bits(key) ^ (owner * _GOLDEN)) & mask)


@kernel(inline="always")
def observe(st, leaf, feat, key, x, y, w):
    """Add ``(x, y)`` with weight ``w`` to the bin ``key`` of observer (leaf, feat).

    The caller guarantees a free bin exists (see ``free_bins``).
    """
    bn = st.bins
    ht = st.bin_hash
    m = ht.shape[0] - 1
    i = _home(leaf, feat, key, np.uint64(m))
    fl = np.float64(leaf)
    ff = np.float64(feat)
    while True:
        b = ht[i]
        if b < 0:
            break
        if bn[b, B_KEY] == key and bn[b, B_FEAT] == ff and bn[b, B_LEAF] == fl:
            bn[b, B_W], bn[b, B_HI], bn[b, B_LO], bn[b, B_M2] = welford_update(
                bn[b, B_W], bn[b, B_HI], bn[b, B_LO], bn[b, B_M2], y, w
            )
            bn[b, B_XSUM] += w * x
            if x < bn[b, B_XMIN]:
                bn[b, B_XMIN] = x
            elif x > bn[b, B_XMAX]:
                bn[b, B_XMAX] = x
            return
        i = (i + 1) & m
    # new bin
    ints = st.ints
    b = ints[I_BIN_FREE]
    if b >= 0:
        ints[I_BIN_FREE] = np.int64(bn[b, B_NEXT])
    else:
        b = ints[I_BIN_HW]
        ints[I_BIN_HW] += 1
    ints[I_BINS_LIVE] += 1
    ht[i] = b
    bn[b, B_KEY] = key
    bn[b, B_W] = w
    bn[b, B_HI] = y
    bn[b, B_LO] = 0.0
    bn[b, B_M2] = 0.0
    bn[b, B_XSUM] = w * x
    bn[b, B_XMIN] = x
    bn[b, B_XMAX] = x
    bn[b, B_LEAF] = fl
    bn[b, B_FEAT] = ff
    bn[b, B_NEXT] = st.lf_head[leaf, feat]
    st.lf_head[leaf, feat] = b
    st.lf_nbins[leaf, feat] += 1


@kernel(inline="always")
def free_bins(st):
    """Bins that can still be allocated without growing the pool."""
    return st.bins.shape[0] - st.ints[I_BINS_LIVE]


@kernel
def _bin_home(st, b, m):
    return _home(
        np.int64(st.bins[b, B_LEAF]), np.int64(st.bins[b, B_FEAT]), st.bins[b, B_KEY], np.uint64(m)
    )


@kernel
def _hash_delete(st, b):
    ht = st.bin_hash
    m = ht.shape[0] - 1
    i = _bin_home(st, b, m)
    while ht[i] != b:
        i = (i + 1) & m
    # backward-shift deletion (linear probing)
    j = i
    while True:
        j = (j + 1) & m
        c = ht[j]
        if c < 0:
            break
        k = _bin_home(st, c, m)
        # c may move into the hole at i unless its home lies cyclically in (i, j]
        if i <= j:
            stays = i < k <= j
        else:
            stays = k > i or k <= j
        if not stays:
            ht[i] = c
            i = j
    ht[i] = -1


@kernel
def free_observers(st, leaf):
    """Release every bin of every observer of ``leaf``."""
    ints = st.ints
    bn = st.bins
    for f in range(st.lf_head.shape[1]):
        b = st.lf_head[leaf, f]
        while b >= 0:
            nxt = np.int64(bn[b, B_NEXT])
            _hash_delete(st, b)
            bn[b, B_LEAF] = -1.0
            bn[b, B_NEXT] = ints[I_BIN_FREE]
            ints[I_BIN_FREE] = b
            ints[I_BINS_LIVE] -= 1
            b = nxt
        st.lf_head[leaf, f] = -1
        st.lf_nbins[leaf, f] = 0


@kernel
def rebuild_hash(st):
    """Re-insert every live bin (after the table was resized)."""
    st.bin_hash[:] = -1
    m = st.bin_hash.shape[0] - 1
    for b in range(st.ints[I_BIN_HW]):
        if st.bins[b, B_LEAF] >= 0:
            i = _bin_home(st, b, m)
            while st.bin_hash[i] >= 0:
                i = (i + 1) & m
            st.bin_hash[i] = b


@kernel
def _heapsort_by_key(keys, vals, n):
    """Sort ``keys[:n]`` ascending in place, permuting ``vals[:n]`` alongside (no allocation)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(keys, vals, start, n)
    for end in range(n - 1, 0, -1):
        k = keys[0]
        keys[0] = keys[end]
        keys[end] = k
        v = vals[0]
        vals[0] = vals[end]
        vals[end] = v
        _sift_down(keys, vals, 0, end)


@kernel(inline="always")
def _sift_down(keys, vals, root, n):
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and keys[child + 1] > keys[child]:
            child += 1
        if keys[root] >= keys[child]:
            return
        k = keys[root]
        keys[root] = keys[child]
        keys[child] = k
        v = vals[root]
        vals[root] = vals[child]
        vals[child] = v
        root = child


@kernel
def sorted_bins(st, leaf, feat, nominal):
    """Sort the bin ids of observer (leaf, feat) into ``st.scratch_bins[:n]`` (by x for numeric, by
    mean target for nominal) and return ``n``; valid until the next call."""
    nb = st.lf_nbins[leaf, feat]
    idx = st.scratch_bins
    order_key = st.scratch_keys
    bn = st.bins
    b = st.lf_head[leaf, feat]
    k = 0
    while b >= 0:
        idx[k] = b
        order_key[k] = bn[b, B_HI] + bn[b, B_LO] if nominal else bn[b, B_XMIN]
        k += 1
        b = np.int64(bn[b, B_NEXT])
    _heapsort_by_key(order_key, idx, nb)
    return nb


@kernel
def merged_stat(st, idx, lo, hi):
    """Chan merge of the target statistics of bins ``idx[lo:hi]``."""
    w = 0.0
    mh = 0.0
    ml = 0.0
    m2 = 0.0
    bn = st.bins
    for k in range(lo, hi):
        b = idx[k]
        w, mh, ml, m2 = chan_merge(w, mh, ml, m2, bn[b, B_W], bn[b, B_HI], bn[b, B_LO], bn[b, B_M2])
    return w, mh, ml, m2


@kernel
def best_cut(st, idx, n, min_branch):
    """Best partition ``idx[:k+1] | idx[k+1:n]`` by variance reduction.

    Returns ``(vr, k)``; ``k = -1`` when no partition leaves ``min_branch`` weight on both sides.
    """
    if n < 2:
        return -1.0, -1
    tw, th, tl, tm2 = merged_stat(st, idx, np.int64(0), n)
    bn = st.bins
    lw = 0.0
    lh = 0.0
    ll = 0.0
    lm2 = 0.0
    best = -1.0
    best_k = -1
    for k in range(n - 1):
        b = idx[k]
        lw, lh, ll, lm2 = chan_merge(
            lw, lh, ll, lm2, bn[b, B_W], bn[b, B_HI], bn[b, B_LO], bn[b, B_M2]
        )
        rw, rh, rl, rm2 = chan_subtract(tw, th, tl, tm2, lw, lh, ll, lm2)
        if lw < min_branch or rw < min_branch:
            continue
        dm = (rh - lh) + (rl - ll)
        vr = lw * rw * dm * dm / (tw * tw)
        if vr > best:
            best = vr
            best_k = k
    return best, best_k


@kernel
def cut_threshold(st, idx, k):
    """Threshold ``c`` of the numeric split after ``idx[k]``: ``max_k <= c < min_{k+1}``."""
    bn = st.bins
    a = idx[k]
    b = idx[k + 1]
    c = 0.5 * (bn[a, B_XSUM] / bn[a, B_W]) + 0.5 * (bn[b, B_XSUM] / bn[b, B_W])
    if not (bn[a, B_XMAX] <= c < bn[b, B_XMIN]):
        c = bn[a, B_XMAX]
    return c


@kernel
def feature_spread(st, leaf, feat):
    """Standard deviation of feature ``feat`` at ``leaf`` estimated from its observer's bins:
    between-bin spread of the prototypes plus the within-bin spread of a uniform bin
    (``(max - min)**2 / 12``).  0 when the observer is empty."""
    bn = st.bins
    w = 0.0
    s = 0.0
    b = st.lf_head[leaf, feat]
    while b >= 0:
        w += bn[b, B_W]
        s += bn[b, B_XSUM]
        b = np.int64(bn[b, B_NEXT])
    if w <= 0.0:
        return 0.0
    mean = s / w
    v = 0.0
    b = st.lf_head[leaf, feat]
    while b >= 0:
        d = bn[b, B_XSUM] / bn[b, B_W] - mean
        r = bn[b, B_XMAX] - bn[b, B_XMIN]
        v += bn[b, B_W] * (d * d + r * r / 12.0)
        b = np.int64(bn[b, B_NEXT])
    return np.sqrt(v / w)


@entry
def leaf_best_cut(A, t, leaf, j, min_branch):
    """``(variance reduction, bins)`` of the best cut of feature ``j``'s observer at leaf slot
    ``leaf`` of tree ``t`` of the arena ``A`` (a query for inspection and benchmarks: the
    observer's bins are sorted, its best cut found and its threshold computed, as a split
    attempt does)."""
    st = tree_state(A, t)
    k = sorted_bins(st, leaf, j, st.ft_nominal[j] == 1)
    vr, cut = best_cut(st, st.scratch_bins, k, min_branch)
    if cut >= 0:
        cut_threshold(st, st.scratch_bins, cut)
    return vr, k
