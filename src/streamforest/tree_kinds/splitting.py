"""Splitting a leaf: the split attempt of each rule (Hoeffding observers, the extremely
randomised split), the split itself and the children's start (see :mod:`.kernels`)."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from ..drift import PHN_SD0
from ..stats import chan_merge, chan_subtract
from .extra_split import choose_extra_split, extra_sides
from .leaf_models import inherit_linear, target_mean_sd
from .leaf_sketch import sketch_children
from .observers import (
    best_cut,
    cut_threshold,
    feature_spread,
    free_observers,
    merged_stat,
    sorted_bins,
)
from .room import _freeze, _reactivate
from .state import (
    B_KEY,
    I_CAT_USED,
    I_LAST_SPLIT_LEAF,
    I_NATTEMPTS,
    I_NFEAT,
    I_NLEAVES,
    I_NSPLITS,
    OBS_QO,
    S_HI,
    S_LO,
    S_M2,
    S_W,
)
from .structure import _init_leaf, _new_leaf_slot, _new_node


# splitting
@kernel
def _attempt_extra_split(st, prm, leaf):
    """The extremely randomised split's attempt (see :mod:`.extra_split`)."""
    f = choose_extra_split(st, prm, leaf)
    if f >= 0:
        if st.ints[I_NLEAVES] >= prm.max_leaves:
            _freeze(st)
            return
        _split_extra(st, prm, leaf, f)


@kernel
def _attempt_observer_split(st, prm, leaf):
    """The Hoeffding bound's test on the observers' best cuts (see the module docstring)."""
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    nfeat = st.ints[I_NFEAT]
    best1 = -1.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal: see "Literal constants" above
    for j in range(nfeat):
        if st.lf_nbins[leaf, j] < 2:
            continue
        nb = sorted_bins(st, leaf, j, st.ft_nominal[j] == 1)
        vr, k = best_cut(st, st.scratch_bins, nb, prm.min_branch)
        if k < 0:
            continue
        if vr > best1:
            best2 = best1 if best1 > 0.0 else 0.0
            best1 = vr
            f1 = j
        elif vr > best2:
            best2 = vr
    if f1 < 0 or best1 <= 0.0:
        return
    n = st.lf_stat[leaf, S_W] - st.lf_inherited[leaf, S_W]  # the sample the observers saw
    eps = np.sqrt(np.log(1.0 / prm.delta) / (2.0 * n))
    if best2 / best1 < 1.0 - eps or eps < prm.tau:
        if st.ints[I_NLEAVES] >= prm.max_leaves:
            _freeze(st)
            return
        _split(st, prm, leaf, f1)


@kernel
def _insertion_sort(a, lo, hi):
    for i in range(lo + 1, hi):
        v = a[i]
        j = i - 1
        while j >= lo and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


@kernel
def _split(st, prm, leaf, f):
    """Split ``leaf`` on feature ``f`` at its observer's best cut."""
    nominal = st.ft_nominal[f] == 1
    n = sorted_bins(st, leaf, f, nominal)
    idx = st.scratch_bins
    _, k = best_cut(st, idx, n, prm.min_branch)
    lw, lh, ll, lm2 = merged_stat(st, idx, np.int64(0), k + 1)
    rw, rh, rl, rm2 = merged_stat(st, idx, k + 1, n)
    node = st.lf_node[leaf]
    if nominal:
        off = st.ints[I_CAT_USED]
        nl = k + 1
        for q in range(nl):
            st.cats[off + q] = st.bins[idx[q], B_KEY]
        _insertion_sort(st.cats, off, off + nl)
        for q in range(n - nl):
            st.cats[off + nl + q] = st.bins[idx[nl + q], B_KEY]
        _insertion_sort(st.cats, off + nl, off + n)
        st.ints[I_CAT_USED] = off + n
        st.nd_cat_off[node] = off
        st.nd_cat_len[node] = nl
        st.nd_cat_right[node] = n - nl
        st.nd_thr[node] = np.nan
    else:
        st.nd_thr[node] = cut_threshold(st, idx, k)
    spread = st.ft_spread
    spread[:] = 0.0
    if prm.observer == OBS_QO and prm.qo_sigma > 0.0:
        for j in range(st.ints[I_NFEAT]):
            if not st.ft_nominal[j]:
                spread[j] = feature_spread(st, leaf, j)
    free_observers(st, leaf)
    _grow_children(st, prm, leaf, f, lw, lh, ll, lm2, rw, rh, rl, rm2)
    _reactivate(st, prm)


@kernel
def _split_extra(st, prm, leaf, f):
    """Split ``leaf`` on its random candidate of feature ``f`` (see :mod:`.extra_split`)."""
    thr, lw, lh, ll, lm2, rw, rh, rl, rm2 = extra_sides(st, leaf, f)
    node = st.lf_node[leaf]
    st.nd_thr[node] = thr  # a threshold, or a nominal candidate's salt
    if st.ft_nominal[f] == 1:
        st.nd_cat_off[node] = 0
        st.nd_cat_len[node] = -1  # categories go to the salt's random sides (route)
        st.nd_cat_right[node] = 0
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lh, ll, lm2, rw, rh, rl, rm2)


@kernel
def _grow_children(st, prm, leaf, f, lw, lh, ll, lm2, rw, rh, rl, rm2):
    """Turn ``leaf``'s node into a split on feature ``f`` (its threshold or categories already
    set) with two new leaves holding the sides' target statistics ``(w, hi, lo, m2)``.
    Examples the split rule did not see (a missing value of f) follow the heavier side."""
    tw, th, tl, tm2 = chan_merge(lw, lh, ll, lm2, rw, rh, rl, rm2)
    s = st.lf_stat
    ih = st.lf_inherited
    ow, oh, ol, om2 = chan_subtract(
        s[leaf, S_W],
        s[leaf, S_HI],
        s[leaf, S_LO],
        s[leaf, S_M2],
        ih[leaf, S_W],
        ih[leaf, S_HI],
        ih[leaf, S_LO],
        ih[leaf, S_M2],
    )
    mw, mh, ml, mm2 = chan_subtract(ow, oh, ol, om2, tw, th, tl, tm2)
    miss_left = lw >= rw
    if mw > 0.0:
        if miss_left:
            lw, lh, ll, lm2 = chan_merge(lw, lh, ll, lm2, mw, mh, ml, mm2)
        else:
            rw, rh, rl, rm2 = chan_merge(rw, rh, rl, rm2, mw, mh, ml, mm2)

    node = st.lf_node[leaf]
    depth = st.nd_depth[node]
    p_mean, p_sd = target_mean_sd(st, leaf)
    left = _new_node(st)
    right = _new_node(st)
    st.ints[I_NLEAVES] += 1
    st.nd_isalt[left] = st.nd_isalt[node]
    st.nd_isalt[right] = st.nd_isalt[node]
    if st.nd_detector.shape[1]:  # the new split node's change detector starts now
        for c in range(st.nd_detector.shape[1]):
            st.nd_detector[node, c] = 0.0
        st.nd_detector[node, PHN_SD0] = p_sd
        for c in range(st.nd_alt_compare.shape[1]):
            st.nd_alt_compare[node, c] = 0.0
    st.ints[I_NSPLITS] += 1
    st.ints[I_LAST_SPLIT_LEAF] = node
    st.nd_feat[node] = f
    st.nd_left[node] = left
    st.nd_right[node] = right
    st.nd_miss_left[node] = 1 if miss_left else 0
    st.nd_leaf[node] = -1

    rslot = _new_leaf_slot(st)
    lslot = leaf
    st.lf_stat[lslot, S_W], st.lf_stat[lslot, S_HI] = lw, lh
    st.lf_stat[lslot, S_LO], st.lf_stat[lslot, S_M2] = ll, lm2
    st.lf_stat[rslot, S_W], st.lf_stat[rslot, S_HI] = rw, rh
    st.lf_stat[rslot, S_LO], st.lf_stat[rslot, S_M2] = rl, rm2
    for c in range(4):
        st.lf_inherited[lslot, c] = st.lf_stat[lslot, c]
        st.lf_inherited[rslot, c] = st.lf_stat[rslot, c]
    inherit_linear(st, leaf, rslot, p_mean, p_sd)  # copies from the parent's slot first
    inherit_linear(st, leaf, lslot, p_mean, p_sd)
    spread = st.ft_spread
    _init_leaf(st, prm, lslot, left, depth + 1, spread)
    _init_leaf(st, prm, rslot, right, depth + 1, spread)
    sketch_children(st, prm, lslot, rslot)
