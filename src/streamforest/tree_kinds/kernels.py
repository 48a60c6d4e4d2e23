"""A tree's passes over rows, for every tree kind and both tasks: the loops the engine runs.

What a tree does with one row depends on its task, a component of its kind
(:attr:`~.kinds.TreeKind.classification`): the task module, :mod:`.regression` or
:mod:`.classification`, gives the same four functions, and the loops here call them through a
:func:`~.kinds.kind_hook`, so one loop serves both tasks and compiles, per kind, only its task's
code:

- ``learn_one_row(st, prm, x, y, w)``: learn a row (room checked) in a batch pass; returns
  whether the tree's drift detector fired (the pass stops after that row);
- ``learn_one_row_memo(st, prm, x, y, w, M, t)``: learn a row in a per-example pass, using
  column ``t`` of a memo ``M`` a prediction of the same row left (``(4, n_trees)``: leaf node,
  rows seen, then the task's prediction: a regression tree's value, or a classification tree's
  majority and naive Bayes votes) while the tree is unchanged; returns ``(prediction made
  before learning, drifted)``;
- ``predict_one_row_into(st, prm, x, out, i)``: the tree's answer for a row into ``out[i]`` (a
  value, or a row of class probabilities);
- ``init_task_fields(st)`` (optional): what a new root leaf needs for the task.

``y`` is the target (regression) or the class index as a float (classification).

A pass that needs more room than the tree has returns the index of the example it stopped
*before*; the Python side grows the arrays and calls again from there.  Room and the rows a tree
counts are the same for both tasks (:func:`has_room`, :func:`needs_step`, :func:`rows_seen`).
"""

from __future__ import annotations

from ..compiled import entry, kernel
from . import classification, regression
from .kinds import kind_hook
from .room import _room
from .state import EV_LOGW, I_NSEEN
from .structure import route

# ------------------------------------------------------------------------------------------------
# Literal constants: a kernel that calls another (non-inlined) kernel with an integer constant,
# or with a variable first set to one (``f = -1`` before a loop that may assign a feature),
# makes numba compile the callee for ``Literal[int](-1)`` as well as for ``int64``: type
# inference compiles callees on its first, literal guess.  Each such copy of a splitting or
# alternate-tree kernel cost seconds of every cold start, so such constants are ``np.int64(c)``.


def task_of(kind):
    """The task module of trees of ``kind``."""
    return classification if kind.classification else regression


@kind_hook(lambda kind: task_of(kind).learn_one_row)
def learn_one_row(st, prm, x, y, w):
    """The task's step for one row of a batch pass (see the module docstring)."""


@kind_hook(lambda kind: task_of(kind).learn_one_row_memo)
def learn_one_row_memo(st, prm, x, y, w, M, t):
    """The task's step for one row of a per-example pass (see the module docstring)."""


@kind_hook(lambda kind: task_of(kind).predict_one_row_into)
def predict_one_row_into(st, prm, x, out, i):
    """The task's answer for one row into ``out[i]`` (see the module docstring)."""


@kind_hook(lambda kind: classification.init_task_fields if kind.classification else None)
def init_task_fields(st):
    """What a new root leaf needs for the task (a classification tree's class fields)."""


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
        if learn_one_row(st, prm, X[i], y[i], w[i]):
            return i + 1
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def predict_batch(st, prm, X, out):
    """``out[i]``: the tree's answer for row ``i`` (a value, or class probabilities)."""
    for i in range(X.shape[0]):
        predict_one_row_into(st, prm, X[i], out, i)


@entry(nogil=True, _nrt=False)
def apply_batch(st, X, out):
    """Leaf node id reached by each row."""
    for i in range(X.shape[0]):
        out[i] = route(st, X[i])


# ------------------------------------------------------------------------------------------------
# prequential passes of a regression tree (the value it predicts for each row before learning it)
@entry(nogil=True, _nrt=False)
def predict_learn_batch(st, prm, X, y, w, start, out):
    """Prequential loop: ``out[i]`` is the prediction for row i made before learning it."""
    for i in range(start, X.shape[0]):
        if needs_step(prm, w[i]) and not _room(st, prm):
            return i
        out[i], drifted = regression.learn_step(st, prm, X[i], y[i], w[i], True)
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
        out[i], drifted = regression.learn_step(st, prm, X[i], y[i], w[i], True)
        if drifted:
            return i + 1
    return X.shape[0]
