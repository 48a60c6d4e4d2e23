"""Drift adaptation inside a tree: each node's Page-Hinkley detector, alternate subtrees started
at a drift, adopted when they do better, discarded otherwise (ATSER, Seah's thesis ch. 4)."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from ..drift import PHN_SD0, page_hinkley_row_update, page_hinkley_update
from .kinds import kind_hook
from .leaf_learning import _learn_row
from .leaf_models import predict_leaf
from .leaf_sketch import sketch_reset
from .state import (
    I_ALT_DISCARDED,
    I_ALT_STARTED,
    I_ALT_SWAPPED,
    I_DRIFT,
    I_FROZEN,
    I_NALTS,
    I_NFEAT,
    I_NLEAVES,
    Q_ALT,
    Q_COUNT,
    Q_MEAN,
    Q_ORG,
    Q_SEEN,
)
from .structure import (
    _child,
    _free_node,
    _free_subtree,
    _init_leaf,
    _new_leaf_slot,
    _new_node,
    route_from,
)


# drift detection
@kernel(inline="always")
def drift_step(st, prm, y, pred):
    """The tree's drift detector (a component, :mod:`streamforest.drift`): the thesis'
    Page-Hinkley test on the tree's prequential absolute error ``|y - pred|``, normalised by the
    targets' sd when the detector started (alpha ``drift_delta``, lambda ``drift_lambda``, a
    warm-up of ``drift_min`` targets).  On a signal (1 drift; 2 warning, 3 warning withdrawn when
    the owner armed warnings) sets ``I_DRIFT`` to it and returns True: a pass stops after the
    row, and the owner acts (replaces the tree, starts or drops a background tree)."""
    s = page_hinkley_update(
        st.drift_detector, y, pred, prm.drift_delta, prm.drift_lambda, prm.drift_min
    )
    if s != 0:
        st.ints[I_DRIFT] = s
        return True
    return False


@kernel(inline="always")
def _restart_detector(st, n):
    for c in range(PHN_SD0):  # keeps the normaliser
        st.nd_detector[n, c] = 0.0
    for c in range(st.nd_alt_compare.shape[1]):
        st.nd_alt_compare[n, c] = 0.0


@kernel
def _start_alternate(st, prm, n):
    """Node ``n``'s detector fired: grow an alternate subtree for it, from an empty leaf."""
    _restart_detector(st, n)
    if st.ints[I_FROZEN] == 1 or st.ints[I_NLEAVES] >= prm.max_leaves:
        return
    a = _new_node(st)
    leaf = _new_leaf_slot(st)
    st.lf_stat[leaf, :] = 0.0
    st.lf_inherited[leaf, :] = 0.0
    st.lf_coef[leaf, :] = 0.0
    st.lf_rmsprop[leaf, :] = 0.0
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
    st.nd_cat_right[n] = st.nd_cat_right[a]
    st.nd_born[n] = st.nd_born[a]
    for c in range(st.nd_detector.shape[1]):
        st.nd_detector[n, c] = st.nd_detector[a, c]
    for c in range(st.nd_alt_compare.shape[1]):
        st.nd_alt_compare[n, c] = 0.0
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
    q = st.nd_alt_compare
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
        elif page_hinkley_row_update(st.nd_detector, n, e, prm.alt_alpha, prm.alt_lambda):
            _start_alternate(st, prm, n)
        n = _child(st, n, x)
    return False


@kernel
def _never_adapts(st, prm, x, y, w, pred):
    return False


@kind_hook(lambda kind: _adapt if kind.alternates else _never_adapts)
def _adapts(st, prm, x, y, w, pred):
    """:func:`_adapt` (kinds with alternate subtrees)."""
