"""Compiled kernels of streaming gradient-boosted trees (:class:`~streamforest.SGBTRegressor`).

The boosting steps are the trees of one :class:`~streamforest.tree_kinds.arena.Arena`, tree ``t``
being step ``t``.  One row goes through every step in order (the steps are not independent,
so the passes are *row-major*, unlike a bagging forest's tree-major passes): step ``t`` learns
the Newton step of the squared loss at the raw score ``F_t`` of the steps before it, then its
prediction after learning (scaled by the learning rate) is added to the raw score:

- ``g = F_t - y`` and ``h = 1`` (squared loss ``(y - F)^2 / 2``), so the step's target is
  ``-g / h = y - F_t`` with weight ``h * w = w`` (the weighted squared loss of XGBoost that the
  paper trains each tree with);
- ``F_{t+1} = F_t + lr * f_t(x)``, ``f_t`` the tree *after* learning the row (as MOA's SGBT);
- the prediction of the model is ``lr * sum_t f_t(x)`` (summed in step order), and a
  prequential pass reports, for each row, that sum with every tree as it was *before* the row.

The kernels see the targets less the model's base score (the first target learnt), which the
engine (:class:`~streamforest.boosting.sgbt.BoostEngine`) subtracts and adds back.

A per-row kernel returns ``DONE``, ``DRIFTED`` (some step's own drift detector fired: the owner
replaces that tree before the next row) or the index of a step that lacks room: the steps
before it have learnt the row, its partial sums are in ``acc`` (``acc[0]`` the raw score after
them, ``acc[1]`` the sum of their predictions before learning), and the call is repeated with
``t0`` = that step once the owner grew its tree.

The numba original of the compiled core's ``src/core/boosting`` (``streamforest._core.boosting``,
same names and arguments, which the engine calls for the tree kinds the core runs): kept for
``STREAMFOREST_CORE=numba`` and as the reference tests/test_core_boosting.py checks the core
against bit for bit.
"""

from __future__ import annotations

from ..compiled import entry, kernel
from ..tree_kinds.arena import tree_at
from ..tree_kinds.kernels import has_room, needs_step
from ..tree_kinds.regression import learn_step, predict_row

FRESH = -1  # t0 of a new row
DONE = -1
DRIFTED = -2


@kernel(inline="always")
def boost_row(A, x, y, w, lr, t0, acc, drifted):
    """Every step learns row ``(x, y, w)`` (see the module docstring); returns ``DONE``,
    ``DRIFTED`` or the step that lacks room."""
    T = A.lay.shape[0]
    if t0 == FRESH:
        acc[0] = 0.0
        acc[1] = 0.0
        for t in range(T):
            drifted[t] = 0
        t0 = 0
    for t in range(t0, T):
        st, prm = tree_at(A, t)
        if needs_step(prm, w) and not has_room(st, prm):
            return t
        before, d = learn_step(st, prm, x, y - acc[0], w, True)
        acc[1] += lr * before
        if d:
            drifted[t] = 1
        acc[0] += lr * predict_row(st, prm, x)
    for t in range(T):
        if drifted[t]:
            return DRIFTED
    return DONE


@kernel(inline="always")
def boost_predict(A, x, lr):
    """``lr * sum_t f_t(x)``, in step order."""
    s = 0.0
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        s += lr * predict_row(st, prm, x)
    return s


@entry(nogil=True, _nrt=False)
def boost_one(A, x, y, w, lr, t0, acc, drifted):
    """:func:`boost_row` of one row (the per-example path)."""
    return boost_row(A, x, y, w, lr, t0, acc, drifted)


@entry(nogil=True, _nrt=False)
def boost_rows(A, X, y, w, lr, start, t0, acc, drifted, out):
    """Rows ``start..`` of ``X`` through every step (row ``start`` resumes at step ``t0``);
    ``out[i]``: the model's prediction of row i before learning it.  Returns ``(row, status)``:
    ``(n, DONE)``; ``(i + 1, DRIFTED)`` after a row on which a detector fired; ``(i, t)`` when
    step ``t`` lacks room for row ``i`` (resume there with ``t0 = t``)."""
    for i in range(start, X.shape[0]):
        s = boost_row(A, X[i], y[i], w[i], lr, t0, acc, drifted)
        t0 = FRESH
        if s >= 0:
            return i, s
        out[i] = acc[1]
        if s == DRIFTED:
            return i + 1, DRIFTED
    return X.shape[0], DONE


@entry(nogil=True, _nrt=False)
def boost_predict_one(A, x, lr):
    return boost_predict(A, x, lr)


@entry(nogil=True, _nrt=False)
def boost_predict_rows(A, X, lr, out):
    for i in range(X.shape[0]):
        out[i] = boost_predict(A, X[i], lr)
