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

from ..compiled import entry, kernel
from .alternates import _adapts, drift_step
from .kinds import kind_hook
from .leaf_learning import _learn_row
from .leaf_models import predict_leaf
from .pregrown import evidence_update, update_scaling
from .room import _room
from .state import (
    EV_LOGW,
    I_NFEAT,
    I_NSEEN,
)
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


@kind_hook(lambda kind: update_scaling if kind.rule == "pregrown" else None)
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
        lw[i] = st.evidence[EV_LOGW]
        out[i], drifted = learn_step(st, prm, X[i], y[i], w[i], True)
        if drifted:
            return i + 1
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def apply_batch(st, X, out):
    """Leaf node id reached by each row."""
    for i in range(X.shape[0]):
        out[i] = route(st, X[i])
