"""The regression task of a tree: how a Hoeffding (FIMT-style) regression tree learns and predicts a
row (the task module :mod:`.kernels` calls for trees of a regression kind).

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

The task's interface (see :mod:`.kernels`): :func:`learn_one_row`, :func:`learn_one_row_memo`,
:func:`predict_one_row_into`, :func:`remember` (a regression root needs no ``init_task_fields``);
the steps the interval methods build on: :func:`learn_at`, :func:`learn_step`,
:func:`predict_row`, :func:`route_predict`.
"""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from .alternates import _adapts, drift_step
from .kinds import kind_hook, rule_part
from .leaf_learning import _learn_row
from .leaf_models import predict_leaf
from .pregrown import evidence_update
from .state import I_NFEAT, I_NSEEN
from .structure import route

# ------------------------------------------------------------------------------------------------
# Literal constants: a kernel that calls another (non-inlined) kernel with an integer constant,
# or with a variable first set to one (``f = -1`` before a loop that may assign a feature),
# makes numba compile the callee for ``Literal[int](-1)`` as well as for ``int64``: type
# inference compiles callees on its first, literal guess.  Each such copy of a splitting or
# alternate-tree kernel cost seconds of every cold start, so such constants are ``np.int64(c)``.


@kind_hook(lambda kind: evidence_update if kind.evidence else None)
def _evidence_update(st, prm, leaf, y, w, pred, nfeat):
    """The evidence weights learn the row (kinds with evidence weights)."""


@kind_hook(rule_part("after_learning"))
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


# ------------------------------------------------------------------------------------------------
# the task's interface (see streamforest.tree_kinds.kernels)
@kernel
def learn_one_row(st, prm, x, y, w):
    """Learn one row (room checked) in a batch pass: returns whether the tree's drift detector
    fired (the pass stops after the row)."""
    _, drifted = learn_step(st, prm, x, y, w, False)
    return drifted


@kernel
def learn_one_row_memo(st, prm, x, y, w, M, t):
    """Learn one row in a per-example pass: ``(prediction made before learning, drifted)``.
    Column ``t`` of the memo ``M`` (leaf node, rows seen, prediction; see
    :func:`remember`) holds the row's leaf and prediction when the tree has not changed since
    a prediction left them: then the row is learnt there, not routed and predicted again."""
    if t < M.shape[1] and M[1, t] == st.ints[I_NSEEN]:  # routed and predicted just before
        p = M[2, t]
        return p, learn_at(st, prm, np.int64(M[0, t]), x, y, w, p)
    return learn_step(st, prm, x, y, w, True)


@kernel(inline="always")
def predict_one_row_into(st, prm, x, out, i):
    """``out[i]``: the tree's prediction for row ``x``."""
    out[i] = predict_row(st, prm, x)


@kernel(inline="always")
def remember(M, t, st, node, pred):
    """Keep tree ``t``'s leaf node and prediction of a row in the memo ``M`` (rows 0-2 of its
    column: leaf node, rows seen, prediction)."""
    M[0, t] = node
    M[1, t] = st.ints[I_NSEEN]
    M[2, t] = pred
