"""Splitting a classification leaf by information gain: the extremely randomised split's
candidates (ACTSER, thesis section 5.2.1) and the Gaussian split of VFDT (see
:mod:`.classification`)."""

from __future__ import annotations

import math

import numpy as np

from ..compiled import kernel
from ..rng import next_below
from .class_leaves import N_THRESHOLDS, _n_cats, _ncc, nominal_slot, reset_class_leaf
from .extra_split import cat_goes_left, extra_observe
from .room import _freeze
from .splitting import _grow_children
from .state import (
    I_CAT_USED,
    I_NATTEMPTS,
    I_NFEAT,
    I_NLEAVES,
    S_W,
    XB_W,
    XB_Y,
    XC_THR,
)

# information gain
# ``v log2 v`` of the whole numbers below XLX_N, the values the compiled ``v * np.log2(v)``
# gives (both call the C library's log2; tests/test_actser.py checks every entry against
# the compiled expression): class weights are whole numbers with unit sample weights and Poisson
# bagging, so an information gain reads its terms here instead of taking a logarithm each
# (on WISDM's 44 features and 6 classes a split attempt took 792 of them)
XLX_N = 4096


XLX = np.array([0.0] + [float(i) * math.log2(float(i)) for i in range(1, XLX_N)])


@kernel(inline="always")
def _xlx(v):
    """``v log2 v`` (0 for ``v <= 0``): from the table :data:`XLX` for whole ``v < XLX_N``,
    the same value bit for bit."""
    if 0.0 <= v < XLX_N:
        i = np.int64(v)
        if i == v:
            return XLX[i]
    return v * np.log2(v) if v > 0.0 else 0.0


@kernel(inline="always")
def _gain(pw, lw, rw, sp, sl, sr):
    """Information gain of a split from the side weights and the sums ``sum c log2 c`` of the
    class weights of the parent (``P = L + R``) and of each side."""
    return (_xlx(pw) - _xlx(lw) - _xlx(rw) - sp + sl + sr) / pw


@kernel(inline="always")
def _bound(st, prm, leaf):
    """The Hoeffding bound ``eps`` on information gains at ``leaf``."""
    n_seen = 0
    for k in range(st.lf_class_weights.shape[1]):
        if st.lf_class_weights[leaf, k] > 0.0:
            n_seen += 1
    r = np.log2(max(n_seen, 2))
    n = st.lf_stat[leaf, S_W] - st.lf_inherited[leaf, S_W]
    return np.sqrt(r * r * np.log(1.0 / prm.delta) / (2.0 * n))


@kernel(inline="always")
def _candidate_gain(st, leaf, j, K, min_branch):
    """IG of ACTSER's candidate on feature ``j`` (``-1`` when a side is lighter than
    ``min_branch``)."""
    xcc = st.lf_candidate_classes
    lw = 0.0
    rw = 0.0
    sp = 0.0
    sl = 0.0
    sr = 0.0
    for k in range(K):
        a = xcc[leaf, j, 2 * k]
        b = xcc[leaf, j, 2 * k + 1]
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(a + b)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel(inline="always")
def _side_stat(w, s1, s2):
    """``(w, mean, m2)`` of the class index from ``w``, ``sum k c_k`` and ``sum k^2 c_k``."""
    if w <= 0.0:
        return 0.0, 0.0, 0.0
    m = s1 / w
    return w, m, max(0.0, s2 - w * m * m)


# ACTSER's split (SPLIT_EXTRA)
@kernel(inline="always")
def _goes_left(st, j, thr, v):
    if st.ft_nominal[j]:
        return cat_goes_left(thr, v)
    return v <= thr


@kernel
def _replay_candidates(st, leaf, nfeat):
    """The candidates just drawn from the buffered examples get their class weights."""
    xcc = st.lf_candidate_classes
    buf = st.lf_buffer
    for j in range(nfeat):
        for c in range(xcc.shape[2]):
            xcc[leaf, j, c] = 0.0
        thr = st.lf_candidate[leaf, j, XC_THR]
        if np.isnan(thr):
            continue
        for i in range(st.lf_nexamples[leaf]):
            v = buf[leaf, 2 + j, i]
            if not np.isnan(v):
                k = np.int64(buf[leaf, XB_Y, i])
                side = 0 if _goes_left(st, j, thr, v) else 1
                xcc[leaf, j, 2 * k + side] += buf[leaf, XB_W, i]


@kernel(inline="always")
def _extra_observe(st, prm, leaf, x, y, w, nfeat):
    n = st.lf_nexamples[leaf]
    if n < prm.m_min:
        extra_observe(st, prm, leaf, x, y, w, nfeat)  # buffers; draws the candidates at m_min
        if st.lf_nexamples[leaf] == prm.m_min:
            _replay_candidates(st, leaf, nfeat)
        return
    k = np.int64(y)
    for j in range(nfeat):
        thr = st.lf_candidate[leaf, j, XC_THR]
        v = x[j]
        if np.isnan(thr) or np.isnan(v):
            continue
        side = 0 if _goes_left(st, j, thr, v) else 1
        st.lf_candidate_classes[leaf, j, 2 * k + side] += w


@kernel
def _choose_extra(st, prm, leaf):
    """The feature of ACTSER's split at ``leaf``, or -1 (see the module docstring).  Each
    candidate's gain is computed once (into the ``ft_spread`` scratch, zeroed again after)."""
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    if st.lf_nexamples[leaf] < prm.m_min:
        return -1
    K = st.lf_class_weights.shape[1]
    nfeat = st.ints[I_NFEAT]
    gains = st.ft_spread
    best1 = 0.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    for j in range(nfeat):
        if np.isnan(st.lf_candidate[leaf, j, XC_THR]):
            gains[j] = -np.inf
            continue
        g = _candidate_gain(st, leaf, j, K, prm.min_branch)
        gains[j] = g
        if g > best1:
            best2 = best1
            best1 = g
            f1 = j
        elif g > best2:
            best2 = g
    out = -1
    if f1 >= 0 and best1 > 0.0:
        eps = _bound(st, prm, leaf)
        if best1 - best2 > eps:
            out = f1
        elif eps < prm.tau:
            tied = 0
            for j in range(nfeat):
                if gains[j] >= best1 - eps:
                    tied += 1
            pick = next_below(st.rng, tied)
            out = f1
            for j in range(nfeat):
                if gains[j] >= best1 - eps:
                    if pick == 0:
                        out = j
                        break
                    pick -= 1
    for j in range(nfeat):
        gains[j] = 0.0
    return out


@kernel(inline="always")
def _split_extra_class(st, prm, leaf, f):
    """Split ``leaf`` on its candidate of feature ``f``; the children start with its sides'
    class weights."""
    K = st.lf_class_weights.shape[1]
    node = st.lf_node[leaf]
    st.nd_thr[node] = st.lf_candidate[leaf, f, XC_THR]
    if st.ft_nominal[f] == 1:
        st.nd_cat_off[node] = 0
        st.nd_cat_len[node] = -1  # categories go to the salt's random sides (route)
        st.nd_cat_right[node] = 0
    l0 = l1 = l2 = r0 = r1 = r2 = 0.0
    for k in range(K):
        a = st.lf_candidate_classes[leaf, f, 2 * k]
        b = st.lf_candidate_classes[leaf, f, 2 * k + 1]
        l0 += a
        l1 += k * a
        l2 += k * k * a
        r0 += b
        r1 += k * b
        r2 += k * k * b
    lw, lm, lm2 = _side_stat(l0, l1, l2)
    rw, rm, rm2 = _side_stat(r0, r1, r2)
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lm, 0.0, lm2, rw, rm, 0.0, rm2)
    right = st.nd_leaf[st.nd_right[node]]
    for k in range(K):  # the left child keeps the parent's slot, whose candidates are intact
        st.lf_class_weights[right, k] = st.lf_candidate_classes[leaf, f, 2 * k + 1]
        st.lf_class_weights[leaf, k] = st.lf_candidate_classes[leaf, f, 2 * k]
    _children_start(st, node, leaf, right)


@kernel
def _children_start(st, node, left, right):
    reset_class_leaf(st, left)
    reset_class_leaf(st, right)
    for c in range(st.nd_detector.shape[1]):  # the split node's detector starts now
        st.nd_detector[node, c] = 0.0


# VFDT's split (SPLIT_GAUSS), from the naive Bayes statistics
@kernel(inline="always")
def _gauss_left(st, leaf, j, k, thr):
    """The weight of class ``k`` at or below ``thr`` on feature ``j`` under its Gaussian."""
    gs = st.lf_class_stats
    w = gs[leaf, j, 3 * k]
    if w <= 0.0:
        return 0.0
    mean = gs[leaf, j, 3 * k + 1]
    sd = np.sqrt(gs[leaf, j, 3 * k + 2] / w)
    if sd <= 0.0:
        return w if mean <= thr else 0.0
    return w * 0.5 * (1.0 + math.erf((thr - mean) / (sd * math.sqrt(2.0))))


@kernel
def _threshold_gain(st, leaf, j, K, thr, min_branch):
    lw = rw = sp = sl = sr = 0.0
    for k in range(K):
        w = st.lf_class_stats[leaf, j, 3 * k]
        a = _gauss_left(st, leaf, j, k, thr)
        b = max(0.0, w - a)
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(w)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel
def _category_gain(st, leaf, j, slot, K, code, min_branch):
    """IG of the split sending category ``code`` of nominal feature ``j`` (row ``slot`` of
    ``lf_nominal_class_weights``) left, the rest right."""
    lw = rw = sp = sl = sr = 0.0
    for k in range(K):
        w = st.lf_class_stats[leaf, j, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k)
        b = max(0.0, w - a)
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(w)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel
def _best_of_feature(st, prm, leaf, j, K):
    """``(IG, threshold or category code)`` of the best split of feature ``j`` at ``leaf``."""
    best = -1.0
    arg = np.nan
    if st.ft_nominal[j]:
        slot = nominal_slot(st, j)
        for code in range(_n_cats(st)):
            g = _category_gain(st, leaf, j, slot, K, code, prm.min_branch)
            if g > best:
                best = g
                arg = np.float64(code)
        return best, arg
    lo = st.lf_range[leaf, j, 0]
    hi = st.lf_range[leaf, j, 1]
    if not lo < hi:
        return best, arg
    for i in range(1, N_THRESHOLDS + 1):
        thr = lo + (hi - lo) * i / (N_THRESHOLDS + 1)
        g = _threshold_gain(st, leaf, j, K, thr, prm.min_branch)
        if g > best:
            best = g
            arg = thr
    return best, arg


@kernel
def _attempt_gauss(st, prm, leaf):
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    K = st.lf_class_weights.shape[1]
    best1 = 0.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    arg1 = np.nan
    for j in range(st.ints[I_NFEAT]):
        if st.lf_mask[leaf, j] == 0:
            continue
        g, arg = _best_of_feature(st, prm, leaf, j, K)
        if g > best1:
            best2 = best1
            best1 = g
            f1 = j
            arg1 = arg
        elif g > best2:
            best2 = g
    if f1 < 0 or best1 <= 0.0:
        return
    eps = _bound(st, prm, leaf)
    if best1 - best2 > eps or eps < prm.tau:
        if st.ints[I_NLEAVES] >= prm.max_leaves:
            _freeze(st)
            return
        _split_gauss(st, prm, leaf, f1, arg1)


@kernel
def _split_gauss(st, prm, leaf, f, arg):
    K = st.lf_class_weights.shape[1]
    node = st.lf_node[leaf]
    nominal = st.ft_nominal[f] == 1
    code = np.int64(arg) if nominal else 0
    slot = nominal_slot(st, f)
    l0 = l1 = l2 = r0 = r1 = r2 = 0.0
    for k in range(K):
        w = st.lf_class_stats[leaf, f, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k) if nominal else _gauss_left(st, leaf, f, k, arg)
        b = max(0.0, w - a)
        l0 += a
        l1 += k * a
        l2 += k * k * a
        r0 += b
        r1 += k * b
        r2 += k * k * b
    if nominal:  # the category left, every other one seen here right, unseen ones as missing
        off = st.ints[I_CAT_USED]
        st.cats[off] = np.float64(code)
        nr = 0
        for c in range(_n_cats(st)):
            if c == code:
                continue
            seen = 0.0
            for k in range(K):
                seen += _ncc(st, leaf, slot, c * K + k)
            if seen > 0.0:
                st.cats[off + 1 + nr] = np.float64(c)
                nr += 1
        st.ints[I_CAT_USED] = off + 1 + nr
        st.nd_cat_off[node] = off
        st.nd_cat_len[node] = 1
        st.nd_cat_right[node] = nr
        st.nd_thr[node] = np.nan
    else:
        st.nd_thr[node] = arg
    lw, lm, lm2 = _side_stat(l0, l1, l2)
    rw, rm, rm2 = _side_stat(r0, r1, r2)
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lm, 0.0, lm2, rw, rm, 0.0, rm2)
    right = st.nd_leaf[st.nd_right[node]]
    for k in range(K):  # the parent's statistics are still in the left child's slot
        w = st.lf_class_stats[leaf, f, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k) if nominal else _gauss_left(st, leaf, f, k, arg)
        st.lf_class_weights[right, k] = max(0.0, w - a)
        st.lf_class_weights[leaf, k] = a
    _children_start(st, node, leaf, right)
