"""Compiled learning and prediction loops of the Hoeffding (FIMT-style) regression tree.

Statistics of a leaf: the examples that reached it, plus, from its creation, the exact share of
the examples its parent *observed* (received while it was a leaf) that route to it.  What the
parent had itself inherited from the grandparent cannot be split by the new test without storing
examples, so it is not passed on: a leaf's statistic is exactly that of the examples routed to it
among those learnt since its parent was created (all examples, for the root's children).

Routing rules
- numeric split: ``x <= threshold`` goes left;
- nominal split: the categories listed for the node go left (sorted, binary-searched);
- a missing value (NaN) and a category the split never saw go to the child that received more
  weight when the split was made (ties: left).  Learning routes the same way, so the statistics a
  child starts with are exactly those of the examples that route to it (missing ones included).

Split decision (every ``grace`` weight at a leaf, if its targets vary): each observed feature's
best variance reduction is found (:mod:`.observers`); with the best ``VR1`` and the runner-up
feature's ``VR2`` the leaf splits when ``VR2 / VR1 < 1 - eps`` or ``eps < tau``, with
``eps = sqrt(ln(1 / delta) / (2 n))`` (range R = 1 for the ratio) and ``n`` the leaf's weight.

Memory: leaves at ``max_depth`` do not observe; when the bin pool reached ``max_bins`` the least
promising active leaves (smallest sum of squared target deviations, the VFDT/FIMT criterion) are
deactivated, their observers freed, until an eighth of the pool is free again; a deactivated leaf
keeps predicting and learning its leaf model but does not split while inactive.  When a split
leaves a quarter of the full pool free, the most promising deactivated leaf observes again (from
empty observers, one grace period later), as MOA and River reactivate leaves.  When
``max_leaves`` is reached every observer is freed and the structure is frozen.

A kernel that needs more room than the state has returns the index of the example it stopped
*before*; the Python side grows the arrays and calls again from there.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..drift import PHN_SD0, page_hinkley_row_update, page_hinkley_update
from ..rng import next_below, next_float
from ..sketches.kll import kll_copy, kll_reset, kll_update
from ..stats import chan_merge, chan_subtract, welford_update
from ._state import (
    B_KEY,
    EV_LOGW,
    I_ALT_DISCARDED,
    I_ALT_STARTED,
    I_ALT_SWAPPED,
    I_CAT_USED,
    I_DRIFT,
    I_FROZEN,
    I_LAST_SPLIT_LEAF,
    I_LEAF_HW,
    I_LEAF_NFREE,
    I_MAXCAT,
    I_NALTS,
    I_NATTEMPTS,
    I_NDEACT,
    I_NFEAT,
    I_NLEAVES,
    I_NNODES,
    I_NODE_FREE,
    I_NODE_NFREE,
    I_NSEEN,
    I_NSPLITS,
    OBS_QO,
    Q_ALT,
    Q_COUNT,
    Q_MEAN,
    Q_ORG,
    Q_SEEN,
    S_HI,
    S_LO,
    S_M2,
    S_W,
)
from .extra_split import cat_goes_left, choose_extra_split, extra_observe, extra_sides
from .leaf_models import inherit_linear, learn_leaf_model, predict_leaf, target_mean_sd
from .observers import (
    best_cut,
    bin_key,
    cut_threshold,
    feature_spread,
    free_bins,
    free_observers,
    merged_stat,
    observe,
    sorted_bins,
)
from .pregrown import build_pregrown, child_pregrown, evidence_update, update_scaling
from .tree_kind import kind_hook

# ------------------------------------------------------------------------------------------------
# Literal constants: a kernel that calls another (non-inlined) kernel with an integer constant,
# or with a variable first set to one (``f = -1`` before a loop that may assign a feature),
# makes numba compile the callee for ``Literal[int](-1)`` as well as for ``int64``: type
# inference compiles callees on its first, literal guess.  Each such copy of a splitting or
# alternate-tree kernel cost seconds of every cold start, so such constants are ``np.int64(c)``.


# ------------------------------------------------------------------------------------------------
# routing
@kernel(inline="always")
def _in_cats(cats, off, n, v):
    lo = off
    hi = off + n
    while lo < hi:
        mid = (lo + hi) // 2
        if cats[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo < off + n and cats[lo] == v


@kernel(inline="always")
def route(st, x):
    """Node id of the leaf that row ``x`` reaches."""
    return route_from(st, 0, x)


@kernel(inline="always")
def route_from(st, node, x):
    """Node id of the leaf that row ``x`` reaches from ``node`` (the root, or an alternate
    subtree's root)."""
    while st.nd_feat[node] >= 0:
        node = _child(st, node, x)
    return node


@kind_hook(lambda kind: child_pregrown if kind.rule == "pregrown" else _child_axis)
def _child(st, node, x):
    """The child of split node ``node`` that row ``x`` goes to (a pre-grown tree's: scaled
    values, projections)."""


@kernel
def _child_axis(st, node, x):
    """The child of split node ``node`` that row ``x`` goes to: a test of one feature."""
    f = st.nd_feat[node]
    v = x[f] if f < x.shape[0] else np.nan
    if np.isnan(v):
        go_left = st.nd_miss_left[node] == 1
    elif st.ft_nominal[f]:
        off = st.nd_cat_off[node]
        nl = st.nd_cat_len[node]
        if nl < 0:  # an extremely randomised split: every category on a random side
            go_left = cat_goes_left(st.nd_thr[node], v)
        elif _in_cats(st.cats, off, nl, v):
            go_left = True
        elif _in_cats(st.cats, off + nl, st.nd_cat_nr[node], v):
            go_left = False
        else:  # a category this split never saw
            go_left = st.nd_miss_left[node] == 1
    else:
        go_left = v <= st.nd_thr[node]
    return st.nd_left[node] if go_left else st.nd_right[node]


# ------------------------------------------------------------------------------------------------
# leaves
@kernel
def _new_node(st):
    """A node id: from the free list (nodes of discarded subtrees), else the next unused."""
    ints = st.ints
    f = ints[I_NODE_FREE]
    if f >= 0:
        ints[I_NODE_FREE] = st.nd_left[f]
        ints[I_NODE_NFREE] -= 1
        return f
    n = ints[I_NNODES]
    ints[I_NNODES] = n + 1
    return n


@kernel
def _new_leaf_slot(st):
    ints = st.ints
    if ints[I_LEAF_NFREE] > 0:
        ints[I_LEAF_NFREE] -= 1
        return st.lf_free[ints[I_LEAF_NFREE]]
    s = ints[I_LEAF_HW]
    ints[I_LEAF_HW] += 1
    return s


@kernel
def _choose_features(st, prm, leaf):
    """Feature mask of a new leaf: all features, or a random subspace of ``max_features``."""
    p = st.ints[I_NFEAT]
    k = prm.max_features
    if k <= 0 or k >= p:
        st.lf_mask[leaf, :] = 1
        return
    st.lf_mask[leaf, :] = 0
    perm = st.ft_perm
    for i in range(p):
        perm[i] = i
    for i in range(k):
        j = i + next_below(st.rng, p - i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
        st.lf_mask[leaf, perm[i]] = 1
    # features that emerge later are observed by every existing leaf
    st.lf_mask[leaf, p:] = 1


@kernel
def _set_scale(st, prm, leaf, spread):
    """Key scale of each observer of ``leaf``, fixed for the observer's life: ``10**d`` for
    TE-BST; for QO ``1 / radius`` with the fixed radius, or with ``spread[j] / k`` (the parent's
    spread of feature j) under ``"sigma/k"``, falling back to the cold-start radius where no
    spread is known (the root, a feature the parent did not observe)."""
    for j in range(st.lf_scale.shape[1]):
        if prm.observer != OBS_QO:
            st.lf_scale[leaf, j] = prm.tebst_scale
            continue
        r = prm.qo_radius
        if prm.qo_sigma > 0.0 and j < spread.shape[0] and spread[j] > 0.0:
            r = spread[j] / prm.qo_sigma
        st.lf_scale[leaf, j] = 1.0 / r


@kernel
def _init_leaf(st, prm, leaf, node, depth, spread):
    st.lf_node[leaf] = node
    st.nd_leaf[node] = leaf
    st.nd_feat[node] = -1
    st.nd_left[node] = -1
    st.nd_right[node] = -1
    st.nd_depth[node] = depth
    st.nd_born[node] = st.ints[I_NSEEN]
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    st.lf_active[leaf] = 1 if depth < prm.max_depth and st.ints[I_FROZEN] == 0 else 0
    st.lf_head[leaf, :] = -1
    st.lf_nb[leaf, :] = 0
    st.lf_nex[leaf] = 0
    st.nd_alt[node] = -1
    _choose_features(st, prm, leaf)
    _set_scale(st, prm, leaf, spread)


@kind_hook(lambda kind: build_pregrown if kind.rule == "pregrown" else _init_root_leaf)
def init_root(st, prm):
    """A new tree: one empty root leaf, or for a pre-grown tree the whole tree."""


@kernel
def _init_root_leaf(st, prm):
    """A new tree's one empty root leaf."""
    st.ints[I_NNODES] = 1
    st.ints[I_NLEAVES] = 1
    leaf = _new_leaf_slot(st)
    st.lf_stat[leaf, :] = 0.0
    st.lf_inh[leaf, :] = 0.0
    st.lf_coef[leaf, :] = 0.0
    st.lf_rms[leaf, :] = 0.0
    st.lf_x[leaf, :, :] = 0.0
    st.lf_err[leaf, :] = 0.0
    st.ft_spread[:] = 0.0
    _init_leaf(st, prm, leaf, np.int64(0), np.int64(0), st.ft_spread)
    sketch_reset(st, prm, leaf)


@kernel
def _deactivate(st, leaf):
    free_observers(st, leaf)
    st.lf_active[leaf] = 0
    st.ints[I_NDEACT] += 1


@kernel
def _enforce_bin_budget(st, need):
    """Deactivate the least promising active leaves until ``need`` bins (or 1/8 of the pool) are
    free.  Returns False if that is impossible (no active leaf left to deactivate)."""
    target = max(need, st.bn.shape[0] // 8)
    while free_bins(st) < target:
        worst = np.int64(-1)  # not a literal: see "Literal constants" above
        worst_m2 = np.inf
        for s in range(st.ints[I_LEAF_HW]):
            if st.lf_node[s] >= 0 and st.lf_active[s] == 1 and st.lf_nb[s, :].sum() > 0:
                if st.lf_stat[s, S_M2] < worst_m2:
                    worst_m2 = st.lf_stat[s, S_M2]
                    worst = s
        if worst < 0:
            return free_bins(st) >= need
        _deactivate(st, worst)
    return True


@kernel
def _reactivate(st, prm):
    """After a split freed bins: if a quarter of a full pool is free again, the most promising
    leaf deactivated for lack of bins (largest sum of squared target deviations) observes again,
    from empty observers and a full grace period on (MOA's and River's memory management)."""
    if st.ints[I_NDEACT] == 0 or st.ints[I_FROZEN] == 1 or st.bn.shape[0] < prm.max_bins:
        return
    if free_bins(st) < st.bn.shape[0] // 4:
        return
    best = np.int64(-1)  # not a literal: see "Literal constants" above
    best_m2 = 0.0
    for s in range(st.ints[I_LEAF_HW]):
        node = st.lf_node[s]
        if node >= 0 and st.lf_active[s] == 0 and st.nd_depth[node] < prm.max_depth:
            if st.lf_stat[s, S_M2] > best_m2:
                best_m2 = st.lf_stat[s, S_M2]
                best = s
    if best < 0:
        return
    st.lf_active[best] = 1
    st.lf_last[best] = st.lf_stat[best, S_W]
    for c in range(4):  # what it learnt unobserved is its inherited part (cannot be split)
        st.lf_inh[best, c] = st.lf_stat[best, c]


@kernel
def _freeze(st):
    st.ints[I_FROZEN] = 1
    for s in range(st.ints[I_LEAF_HW]):
        if st.lf_node[s] >= 0 and st.lf_active[s] == 1:
            free_observers(st, s)
            st.lf_active[s] = 0


# ------------------------------------------------------------------------------------------------
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
        if st.lf_nb[leaf, j] < 2:
            continue
        nb = sorted_bins(st, leaf, j, st.ft_nominal[j] == 1)
        vr, k = best_cut(st, st.sc_idx, nb, prm.min_branch)
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
    n = st.lf_stat[leaf, S_W] - st.lf_inh[leaf, S_W]  # the sample the observers saw
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
    idx = st.sc_idx
    _, k = best_cut(st, idx, n, prm.min_branch)
    lw, lh, ll, lm2 = merged_stat(st, idx, np.int64(0), k + 1)
    rw, rh, rl, rm2 = merged_stat(st, idx, k + 1, n)
    node = st.lf_node[leaf]
    if nominal:
        off = st.ints[I_CAT_USED]
        nl = k + 1
        for q in range(nl):
            st.cats[off + q] = st.bn[idx[q], B_KEY]
        _insertion_sort(st.cats, off, off + nl)
        for q in range(n - nl):
            st.cats[off + nl + q] = st.bn[idx[nl + q], B_KEY]
        _insertion_sort(st.cats, off + nl, off + n)
        st.ints[I_CAT_USED] = off + n
        st.nd_cat_off[node] = off
        st.nd_cat_len[node] = nl
        st.nd_cat_nr[node] = n - nl
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
        st.nd_cat_nr[node] = 0
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lh, ll, lm2, rw, rh, rl, rm2)


@kernel
def _grow_children(st, prm, leaf, f, lw, lh, ll, lm2, rw, rh, rl, rm2):
    """Turn ``leaf``'s node into a split on feature ``f`` (its threshold or categories already
    set) with two new leaves holding the sides' target statistics ``(w, hi, lo, m2)``.
    Examples the split rule did not see (a missing value of f) follow the heavier side."""
    tw, th, tl, tm2 = chan_merge(lw, lh, ll, lm2, rw, rh, rl, rm2)
    s = st.lf_stat
    ih = st.lf_inh
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
    if st.nd_ph.shape[1]:  # the new split node's change detector starts now
        for c in range(st.nd_ph.shape[1]):
            st.nd_ph[node, c] = 0.0
        st.nd_ph[node, PHN_SD0] = p_sd
        for c in range(st.nd_q.shape[1]):
            st.nd_q[node, c] = 0.0
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
        st.lf_inh[lslot, c] = st.lf_stat[lslot, c]
        st.lf_inh[rslot, c] = st.lf_stat[rslot, c]
    inherit_linear(st, leaf, rslot, p_mean, p_sd)  # copies from the parent's slot first
    inherit_linear(st, leaf, lslot, p_mean, p_sd)
    spread = st.ft_spread
    _init_leaf(st, prm, lslot, left, depth + 1, spread)
    _init_leaf(st, prm, rslot, right, depth + 1, spread)
    sketch_children(st, prm, lslot, rslot)


# ------------------------------------------------------------------------------------------------
# drift detection
@kernel(inline="always")
def drift_step(st, prm, y, pred):
    """The tree's drift detector (a component, :mod:`streamforest.drift`): the thesis'
    Page-Hinkley test on the tree's prequential absolute error ``|y - pred|``, normalised by the
    targets' sd when the detector started (alpha ``drift_delta``, lambda ``drift_lambda``, a
    warm-up of ``drift_min`` targets).  On a signal (1 drift; 2 warning, 3 warning withdrawn when
    the owner armed warnings) sets ``I_DRIFT`` to it and returns True: a pass stops after the
    row, and the owner acts (replaces the tree, starts or drops a background tree)."""
    s = page_hinkley_update(st.dd, y, pred, prm.drift_delta, prm.drift_lambda, prm.drift_min)
    if s != 0:
        st.ints[I_DRIFT] = s
        return True
    return False


# ------------------------------------------------------------------------------------------------
# learning and prediction loops
@kernel
def _room_pregrown(st, prm):
    """A pre-grown tree (grown before data, no observers) never needs room."""
    return True


@kind_hook(lambda kind: _room_pregrown if kind.rule == "pregrown" else _room_growing)
def _room(st, prm):
    """True if one more example can be learnt without growing any array."""


@kernel
def _observer_bin_room(st, prm, nfeat):
    """Whether the observers have a bin free for each feature (may free bins of the least
    promising leaves under the memory budget)."""
    if free_bins(st) < nfeat:
        if st.bn.shape[0] < prm.max_bins:
            return False
        _enforce_bin_budget(st, nfeat)
    return True


@kernel
def _no_bins_needed(st, prm, nfeat):
    return True


@kind_hook(lambda kind: _observer_bin_room if kind.rule == "observers" else _no_bins_needed)
def _bin_room(st, prm, nfeat):
    """Whether the split rule's statistics have room for a row (attribute observers' bins)."""


@kernel
def _room_growing(st, prm):
    """True if one more example can be learnt without growing any array (a tree that grows:
    nodes, leaf slots and category room for a split, observer bins)."""
    nfeat = st.ints[I_NFEAT]
    # an example may split its leaf, start an alternate and split a leaf of each alternate
    k = st.ints[I_NALTS] + 2 if prm.alt_lambda > 0.0 else 1
    if st.ints[I_NNODES] + 2 * k > st.nd_feat.shape[0]:
        return False
    if st.ints[I_LEAF_NFREE] + st.lf_node.shape[0] - st.ints[I_LEAF_HW] < k:
        return False
    if st.ints[I_CAT_USED] + st.ints[I_MAXCAT] > st.cats.shape[0]:
        return False
    return _bin_room(st, prm, nfeat)


@kernel
def _sketch_target(st, prm, leaf, y, w):
    """Add ``y`` to the leaf's KLL sketch with an integer weight: ``w`` rounded stochastically
    (``floor(w)`` plus one with probability ``frac(w)``, unbiased; Poisson bagging weights are
    integers already)."""
    if prm.sketch_k <= 0:
        return
    wi = np.int64(w)
    frac = w - wi
    if frac > 0.0 and next_float(st.rng) < frac:
        wi += 1
    if wi > 0:
        kll_update(st.lf_sk, st.lf_skl, leaf, y, wi, st.sk_cap, st.rng)


@kernel
def _reset_sketch(st, prm, leaf):
    if prm.sketch_k > 0:
        kll_reset(st.lf_sk, st.lf_skl, leaf)


@kernel
def _split_sketch(st, prm, lslot, rslot):
    """The children's sketches: the left child keeps the parent's slot, hence its sketch."""
    if prm.sketch_k > 0:
        if prm.sketch_split == 1:
            kll_copy(st.lf_sk, st.lf_skl, lslot, rslot)
        else:
            kll_reset(st.lf_sk, st.lf_skl, lslot)
            kll_reset(st.lf_sk, st.lf_skl, rslot)


@kind_hook(lambda kind: _reset_sketch if kind.sketch else None)
def sketch_reset(st, prm, leaf):
    """A new leaf's sketch starts empty (kinds with sketches)."""


@kind_hook(lambda kind: _split_sketch if kind.sketch else None)
def sketch_children(st, prm, lslot, rslot):
    """A split leaf's children's sketches (kinds with sketches)."""


@kind_hook(lambda kind: _sketch_target if kind.sketch else None)
def sketch_learn(st, prm, leaf, y, w):
    """The leaf's sketch learns ``y`` (kinds with sketches)."""


@kernel
def _learn_row(st, prm, node, x, y, w):
    """Learn ``(x, y, w)`` at the leaf ``node`` that ``x`` routes to."""
    nfeat = st.ints[I_NFEAT]
    leaf = st.nd_leaf[node]
    learn_leaf_model(st, prm, leaf, x, y, w, nfeat)
    s = st.lf_stat
    s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3] = welford_update(
        s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3], y, w
    )
    sketch_learn(st, prm, leaf, y, w)
    if st.lf_active[leaf] == 0:
        return
    _split_rule_learns(st, prm, leaf, x, y, w, nfeat)


@kernel
def _extra_learns(st, prm, leaf, x, y, w, nfeat):
    """The extremely randomised split's part of learning a row at an active leaf."""
    s = st.lf_stat
    extra_observe(st, prm, leaf, x, y, w, nfeat)
    if s[leaf, S_W] - st.lf_last[leaf] >= prm.grace and s[leaf, S_M2] > 0.0:
        _attempt_extra_split(st, prm, leaf)


@kernel
def _observers_learn(st, prm, leaf, x, y, w, nfeat):
    """The attribute observers' part of learning a row at an active leaf."""
    s = st.lf_stat
    if free_bins(st) < nfeat:  # budget reached, nothing else to deactivate: stop observing here
        _deactivate(st, leaf)
        return
    for j in range(nfeat):
        xj = x[j]
        if st.lf_mask[leaf, j] == 1 and not np.isnan(xj):
            nominal = st.ft_nominal[j] == 1
            key = bin_key(xj, prm.observer, st.lf_scale[leaf, j], nominal)
            observe(st, leaf, j, key, xj, y, w)
    if s[leaf, S_W] - st.lf_last[leaf] >= prm.grace and s[leaf, S_M2] > 0.0:
        _attempt_observer_split(st, prm, leaf)


@kernel
def _nothing_to_learn(st, prm, leaf, x, y, w, nfeat):
    return None


def _split_rule_part(kind):
    return {"extra": _extra_learns, "observers": _observers_learn}.get(kind.rule, _nothing_to_learn)


@kind_hook(_split_rule_part)
def _split_rule_learns(st, prm, leaf, x, y, w, nfeat):
    """What the tree's split rule does with a row its active leaf learnt: observe it, and try
    a split every grace period (a pre-grown tree's leaves are never active)."""


# ------------------------------------------------------------------------------------------------
# change adaptation at split nodes: alternate subtrees (FIMT-DD; thesis §4.2.2-4.2.3)
@kernel
def _free_leaf(st, leaf):
    free_observers(st, leaf)
    st.lf_node[leaf] = -1
    st.lf_active[leaf] = 0
    st.lf_free[st.ints[I_LEAF_NFREE]] = leaf
    st.ints[I_LEAF_NFREE] += 1
    st.ints[I_NLEAVES] -= 1


@kernel
def _free_node(st, node):
    st.nd_feat[node] = -1
    st.nd_leaf[node] = -1
    st.nd_alt[node] = -1
    st.nd_isalt[node] = 0
    st.nd_depth[node] = 0
    st.nd_left[node] = st.ints[I_NODE_FREE]
    st.ints[I_NODE_FREE] = node
    st.ints[I_NODE_NFREE] += 1


@kernel
def _free_subtree(st, root):
    """Free the nodes and leaves of the subtree at ``root`` (and of their alternates)."""
    stack = st.nd_path
    stack[0] = root
    top = 1
    while top > 0:
        top -= 1
        n = stack[top]
        if st.nd_alt[n] >= 0:
            stack[top] = st.nd_alt[n]
            top += 1
            st.ints[I_NALTS] -= 1
        if st.nd_feat[n] < 0:
            if st.nd_leaf[n] >= 0:
                _free_leaf(st, st.nd_leaf[n])
        else:
            stack[top] = st.nd_left[n]
            stack[top + 1] = st.nd_right[n]
            top += 2
        _free_node(st, n)


@kernel(inline="always")
def _restart_detector(st, n):
    for c in range(PHN_SD0):  # keeps the normaliser
        st.nd_ph[n, c] = 0.0
    for c in range(st.nd_q.shape[1]):
        st.nd_q[n, c] = 0.0


@kernel
def _start_alternate(st, prm, n):
    """Node ``n``'s detector fired: grow an alternate subtree for it, from an empty leaf."""
    _restart_detector(st, n)
    if st.ints[I_FROZEN] == 1 or st.ints[I_NLEAVES] >= prm.max_leaves:
        return
    a = _new_node(st)
    leaf = _new_leaf_slot(st)
    st.lf_stat[leaf, :] = 0.0
    st.lf_inh[leaf, :] = 0.0
    st.lf_coef[leaf, :] = 0.0
    st.lf_rms[leaf, :] = 0.0
    st.lf_x[leaf, :, :] = 0.0
    st.lf_err[leaf, :] = 0.0
    st.ft_spread[:] = 0.0
    _init_leaf(st, prm, leaf, a, st.nd_depth[n], st.ft_spread)
    sketch_reset(st, prm, leaf)
    st.nd_isalt[a] = 1
    st.nd_alt[n] = a
    st.ints[I_NLEAVES] += 1
    st.ints[I_NALTS] += 1
    st.ints[I_ALT_STARTED] += 1


@kernel
def _adopt_alternate(st, n):
    """Node ``n``'s alternate replaces its subtree (which is freed)."""
    a = st.nd_alt[n]
    _free_subtree(st, st.nd_left[n])
    _free_subtree(st, st.nd_right[n])
    st.nd_feat[n] = st.nd_feat[a]
    st.nd_thr[n] = st.nd_thr[a]
    st.nd_left[n] = st.nd_left[a]
    st.nd_right[n] = st.nd_right[a]
    st.nd_miss_left[n] = st.nd_miss_left[a]
    st.nd_leaf[n] = st.nd_leaf[a]
    st.nd_cat_off[n] = st.nd_cat_off[a]
    st.nd_cat_len[n] = st.nd_cat_len[a]
    st.nd_cat_nr[n] = st.nd_cat_nr[a]
    st.nd_born[n] = st.nd_born[a]
    for c in range(st.nd_ph.shape[1]):
        st.nd_ph[n, c] = st.nd_ph[a, c]
    for c in range(st.nd_q.shape[1]):
        st.nd_q[n, c] = 0.0
    if st.nd_leaf[a] >= 0:
        st.lf_node[st.nd_leaf[a]] = n
    st.nd_alt[n] = -1
    st.nd_alt[a] = -1
    st.nd_feat[a] = -1  # a's fields now live in n: free a without its subtree
    st.nd_leaf[a] = -1
    _free_node(st, a)
    stack = st.nd_path  # the adopted nodes are part of the tree now
    stack[0] = n
    top = 1
    while top > 0:
        top -= 1
        m = stack[top]
        st.nd_isalt[m] = 0
        if st.nd_feat[m] >= 0:
            stack[top] = st.nd_left[m]
            stack[top + 1] = st.nd_right[m]
            top += 2
    st.ints[I_NALTS] -= 1
    st.ints[I_ALT_SWAPPED] += 1


@kernel
def _discard_alternate(st, n):
    a = st.nd_alt[n]
    st.nd_alt[n] = -1
    _free_subtree(st, a)
    _restart_detector(st, n)
    st.ints[I_NALTS] -= 1
    st.ints[I_ALT_DISCARDED] += 1


@kernel
def _adapt(st, prm, x, y, w, pred):
    """Change detection and adaptation along the path of ``x`` (bottom-up: every split node
    on it judges the tree's prediction ``pred``, made at the leaf).  A node without an
    alternate feeds its Page-Hinkley detector and starts one when it fires; a node with one
    trains it on the example, compares the faded squared errors of both every ``alt_period``
    examples (``Q = log(S_org / S_alt)``) and adopts it when ``Q > 0``, discards it once it has
    seen ``10 * grace`` examples and ``Q`` fell below its running mean.  Returns True when an
    adoption took the example's leaf away (the adopted subtree has learnt it)."""
    e = abs(y - pred)
    nfeat = st.ints[I_NFEAT]
    q = st.nd_q
    n = np.int64(0)  # not a literal: see "Literal constants" above
    while st.nd_feat[n] >= 0:
        a = st.nd_alt[n]
        if a >= 0:
            an = route_from(st, a, x)
            ap = predict_leaf(st, prm, st.nd_leaf[an], x, nfeat)
            f = prm.alt_fade
            q[n, Q_ORG] = w * (y - pred) ** 2 + f * q[n, Q_ORG]
            q[n, Q_ALT] = w * (y - ap) ** 2 + f * q[n, Q_ALT]
            q[n, Q_SEEN] += 1.0
            _learn_row(st, prm, an, x, y, w)
            if q[n, Q_SEEN] % prm.alt_period == 0.0:
                r = np.log((q[n, Q_ORG] + 1e-300) / (q[n, Q_ALT] + 1e-300))
                if r > 0.0:
                    _adopt_alternate(st, n)
                    return True
                q[n, Q_COUNT] += 1.0
                q[n, Q_MEAN] += (r - q[n, Q_MEAN]) / q[n, Q_COUNT]
                if q[n, Q_SEEN] >= 10.0 * prm.grace and r < q[n, Q_MEAN]:
                    _discard_alternate(st, n)
        elif page_hinkley_row_update(st.nd_ph, n, e, prm.alt_alpha, prm.alt_lambda):
            _start_alternate(st, prm, n)
        n = _child(st, n, x)
    return False


@kernel
def _never_adapts(st, prm, x, y, w, pred):
    return False


@kind_hook(lambda kind: _adapt if kind.alternates else _never_adapts)
def _adapts(st, prm, x, y, w, pred):
    """:func:`_adapt` (kinds with alternate subtrees)."""


@kernel
def _no_evidence(st, prm, leaf, y, w, pred, nfeat):
    return None


@kind_hook(lambda kind: evidence_update if kind.evidence else _no_evidence)
def _evidence_update(st, prm, leaf, y, w, pred, nfeat):
    """The evidence weights learn the row (kinds with evidence weights)."""


@kernel
def _nothing_after(st, x, nfeat):
    return None


@kind_hook(lambda kind: update_scaling if kind.rule == "pregrown" else _nothing_after)
def _after_learning(st, x, nfeat):
    """What a tree does once it learnt a row: a pre-grown tree's feature ranges grow."""


@kernel
def learn_at(st, prm, node, x, y, w, pred):
    """Learn ``(x, y, w)`` at leaf ``node`` (where ``x`` routes; ``pred`` the tree's prediction
    for it, made before, which feeds the drift detectors).  Returns whether the tree's own
    detector fired (the owner replaces the tree); the split nodes' detectors adapt the tree in
    place (:func:`_adapt`)."""
    st.ints[I_NSEEN] += 1
    if w > 0.0:
        if not (prm.alt_lambda > 0.0 and st.nd_feat[0] >= 0 and _adapts(st, prm, x, y, w, pred)):
            _learn_row(st, prm, node, x, y, w)
        if prm.ev_fade > 0.0:
            _evidence_update(st, prm, st.nd_leaf[node], y, w, pred, st.ints[I_NFEAT])
        _after_learning(st, x, st.ints[I_NFEAT])
    if prm.drift_lambda > 0.0:
        return drift_step(st, prm, y, pred)
    return False


@kernel(inline="always")
def learn_step(st, prm, x, y, w, predict):
    """The tree's step for one example (room already checked, see :func:`has_room`): route
    ``x``, predict it (when ``predict`` or for the drift detector), learn ``(x, y, w)`` (when
    ``w > 0``), feed the detector.  Returns ``(prediction, drift detected)``."""
    node = route(st, x)
    pred = 0.0
    if predict or prm.drift_lambda > 0.0 or prm.alt_lambda > 0.0 or prm.ev_fade > 0.0:
        pred = predict_leaf(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT])
    return pred, learn_at(st, prm, node, x, y, w, pred)


@kernel(inline="always")
def needs_step(prm, w):
    """Whether an example of weight ``w`` changes the tree beyond its row count."""
    return w > 0.0 or prm.drift_lambda > 0.0


@kernel(inline="always")
def has_room(st, prm):
    """True if one more example can be learnt without growing any array (may free observer
    bins under the memory budget)."""
    return _room(st, prm)


@kernel(inline="always")
def predict_row(st, prm, x):
    """The tree's prediction for row ``x``."""
    node = route(st, x)
    return predict_leaf(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT])


@kernel(inline="always")
def route_predict(st, prm, x):
    """``(leaf node, prediction)`` of row ``x``: what :func:`learn_at` takes (a caller that
    keeps them while the tree is unchanged, i.e. while ``st.ints[I_NSEEN]`` is, can learn the
    row later without routing and predicting it again)."""
    node = route(st, x)
    return node, predict_leaf(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT])


@kernel(inline="always")
def rows_seen(st):
    """Rows the tree was given to learn (weight-0 rows included): any change of the tree's
    structure or leaves comes with a change of this count."""
    return st.ints[I_NSEEN]


@entry(nogil=True, _nrt=False)
def learn_batch(st, prm, X, y, w, start):
    """Learn rows ``start..`` of ``X``; returns the row it stopped before (``len(X)``: all).

    With drift detection on, each row is predicted first (for the detector) and the loop stops
    after a row on which the detector fired (``I_DRIFT`` set)."""
    for i in range(start, X.shape[0]):
        if not needs_step(prm, w[i]):
            st.ints[I_NSEEN] += 1
            continue
        if not _room(st, prm):
            return i
        _, drifted = learn_step(st, prm, X[i], y[i], w[i], False)
        if drifted:
            return i + 1
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def predict_batch(st, prm, X, out):
    for i in range(X.shape[0]):
        out[i] = predict_row(st, prm, X[i])


@entry(nogil=True, _nrt=False)
def predict_learn_batch(st, prm, X, y, w, start, out):
    """Prequential loop: ``out[i]`` is the prediction for row i made before learning it."""
    for i in range(start, X.shape[0]):
        if needs_step(prm, w[i]) and not _room(st, prm):
            return i
        out[i], drifted = learn_step(st, prm, X[i], y[i], w[i], True)
        if drifted:
            return i + 1
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def predict_learn_batch_lw(st, prm, X, y, w, start, out, lw):
    """:func:`predict_learn_batch` that also records the tree's log evidence weight before
    each row (``lw[i]``: the weight its prediction ``out[i]`` is aggregated with)."""
    for i in range(start, X.shape[0]):
        if needs_step(prm, w[i]) and not _room(st, prm):
            return i
        lw[i] = st.ev[EV_LOGW]
        out[i], drifted = learn_step(st, prm, X[i], y[i], w[i], True)
        if drifted:
            return i + 1
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def apply_batch(st, X, out):
    """Leaf node id reached by each row."""
    for i in range(X.shape[0]):
        out[i] = route(st, X[i])
