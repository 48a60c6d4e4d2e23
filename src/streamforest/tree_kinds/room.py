"""A tree's memory: the observer bin budget (deactivating and reactivating leaves), freezing at
the leaf cap, and whether the state has room for the next row (see :mod:`.kernels`)."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from .kinds import kind_hook, rule_part
from .observers import (
    free_bins,
    free_observers,
)
from .state import (
    I_CAT_USED,
    I_FROZEN,
    I_LEAF_HW,
    I_LEAF_NFREE,
    I_MAXCAT,
    I_NALTS,
    I_NDEACT,
    I_NFEAT,
    I_NNODES,
    S_M2,
    S_W,
)


@kernel
def _deactivate(st, leaf):
    free_observers(st, leaf)
    st.lf_active[leaf] = 0
    st.ints[I_NDEACT] += 1


@kernel
def _enforce_bin_budget(st, need):
    """Deactivate the least promising active leaves until ``need`` bins (or 1/8 of the pool) are
    free.  Returns False if that is impossible (no active leaf left to deactivate)."""
    target = max(need, st.bins.shape[0] // 8)
    while free_bins(st) < target:
        worst = np.int64(-1)  # not a literal: see "Literal constants" above
        worst_m2 = np.inf
        for s in range(st.ints[I_LEAF_HW]):
            if st.lf_node[s] >= 0 and st.lf_active[s] == 1 and st.lf_nbins[s, :].sum() > 0:
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
    if st.ints[I_NDEACT] == 0 or st.ints[I_FROZEN] == 1 or st.bins.shape[0] < prm.max_bins:
        return
    if free_bins(st) < st.bins.shape[0] // 4:
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
        st.lf_inherited[best, c] = st.lf_stat[best, c]


@kernel
def _freeze(st):
    st.ints[I_FROZEN] = 1
    for s in range(st.ints[I_LEAF_HW]):
        if st.lf_node[s] >= 0 and st.lf_active[s] == 1:
            free_observers(st, s)
            st.lf_active[s] = 0


# learning and prediction loops
@kind_hook(rule_part("room"))
def _room(st, prm):
    """True if one more example can be learnt without growing any array."""


@kernel
def _observer_bin_room(st, prm, nfeat):
    """Whether the observers have a bin free for each feature (may free bins of the least
    promising leaves under the memory budget)."""
    if free_bins(st) < nfeat:
        if st.bins.shape[0] < prm.max_bins:
            return False
        _enforce_bin_budget(st, nfeat)
    return True


@kernel
def _no_bins_needed(st, prm, nfeat):
    return True


@kind_hook(rule_part("bin_room"))
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
