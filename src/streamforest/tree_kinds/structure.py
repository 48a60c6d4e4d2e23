"""A tree's structure: routing a row to its leaf, the node and leaf pools, a leaf's creation and
the freeing of nodes, leaves and subtrees (every tree kind's; see :mod:`.kernels` for the rules)."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from ..rng import next_below
from .extra_split import cat_goes_left
from .kinds import kind_hook, rule_part
from .leaf_sketch import sketch_reset
from .observers import (
    free_observers,
)
from .state import (
    I_FROZEN,
    I_LEAF_HW,
    I_LEAF_NFREE,
    I_NALTS,
    I_NFEAT,
    I_NLEAVES,
    I_NNODES,
    I_NODE_FREE,
    I_NODE_NFREE,
    I_NSEEN,
    OBS_QO,
    S_W,
)


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


@kind_hook(rule_part("route_from"))
def route_from(st, node, x):
    """Node id of the leaf that row ``x`` reaches from ``node`` (the root, or an alternate
    subtree's root): one call per row, the tests of the nodes inlined in it."""


@kernel
def _route_axis(st, node, x):
    while st.nd_feat[node] >= 0:
        node = _child_axis(st, node, x)
    return node


@kind_hook(rule_part("child"))
def _child(st, node, x):
    """The child of split node ``node`` that row ``x`` goes to (a pre-grown tree's: scaled
    values, projections)."""


@kernel(inline="always")
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
        elif _in_cats(st.cats, off + nl, st.nd_cat_right[node], v):
            go_left = False
        else:  # a category this split never saw
            go_left = st.nd_miss_left[node] == 1
    else:
        go_left = v <= st.nd_thr[node]
    return st.nd_left[node] if go_left else st.nd_right[node]


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
    st.lf_nbins[leaf, :] = 0
    st.lf_nexamples[leaf] = 0
    st.nd_alt[node] = -1
    _choose_features(st, prm, leaf)
    _set_scale(st, prm, leaf, spread)


@kind_hook(rule_part("init_root"))
def init_root(st, prm):
    """A new tree: one empty root leaf, or for a pre-grown tree the whole tree."""


@kernel
def _init_root_leaf(st, prm):
    """A new tree's one empty root leaf."""
    st.ints[I_NNODES] = 1
    st.ints[I_NLEAVES] = 1
    leaf = _new_leaf_slot(st)
    st.lf_stat[leaf, :] = 0.0
    st.lf_inherited[leaf, :] = 0.0
    st.lf_coef[leaf, :] = 0.0
    st.lf_rmsprop[leaf, :] = 0.0
    st.lf_x[leaf, :, :] = 0.0
    st.lf_err[leaf, :] = 0.0
    st.ft_spread[:] = 0.0
    _init_leaf(st, prm, leaf, np.int64(0), np.int64(0), st.ft_spread)
    sketch_reset(st, prm, leaf)


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
