"""Compiled kernels of the forest engine: bagging weights and the trees' passes over an arena.

Every kernel takes the forest's :class:`~streamforest.tree_kinds.arena.Arena` (all trees in five
arrays) and works on tree ``t`` through :func:`~streamforest.tree_kinds.arena.tree_at`, so no
signature depends on the number of trees or of features: one compilation serves every forest.

Batch passes run *tree-major*: for a chunk of rows, the bagging weights of every (row, tree)
are drawn first (row by row, tree by tree, from the forest's generator, so the result does not
depend on how a stream is cut into chunks), then each tree runs through the whole chunk in its
own compiled loop.  Trees are independent given their weights, so this is exactly online bagging
in stream order; running a tree's chunk at once keeps its state in cache (interleaving ten trees
row by row is several times slower) and lets trees run on several cores.

The per-example kernels (:func:`learn_one`, :func:`predict_one`) run every tree for one row in
one call, drawing the weights in the same order, so ``learn_one`` row by row gives exactly what
a batch pass gives.  A per-example prediction leaves each tree's leaf node, prediction and row
count in a *memo* ``M`` (``(4, n_trees)``, :func:`predict_trees_memo`; a classifier's holds its
trees' votes, :func:`~streamforest.engine.class_votes.predict_proba_one`); when the same row is
learnt next (``predict_one(x)`` then ``learn_one(x, y)``, the engine checks that it is the same
row), :func:`learn_one` takes the memo and each tree whose row count has not changed since
learns the row at that leaf without routing and predicting it again.  A memo of width 0 means
none.  From Python they are called through a *handle* (:mod:`streamforest.engine.handle`):
:func:`learn_one_h` and :func:`predict_one_h` take the engine's arrays packed as addresses in
one array, which saves unboxing a dozen arrays per call (an interval method's kernels take a
second handle of its own arrays the same way).

Online bagging (Oza 2005): tree ``t`` learns row ``i`` with weight ``k * w_i``,
``k ~ Poisson(lam)`` (Knuth's multiplication method, exact for the small rates used here);
``lam = 0`` means no bagging (weight ``w_i``), as for a single tree.

Background trees (see :mod:`streamforest.engine.core`) live in a second arena of the same shape
(row ``t``: tree ``t``'s background tree, when ``on[t]``); each draws its bagging weights from
its own generator, one draw per row it sees, so the per-example kernel
(:func:`learn_background_one`) and the batch pass (:func:`draw_background` then
:func:`background_rows`) give the same trees.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..rng import next_float
from ..tree_kinds.arena import make_arena, tree_at
from ..tree_kinds.kernels import apply_batch as _apply_batch
from ..tree_kinds.kernels import (
    has_room,
    init_task_fields,
    learn_batch,
    learn_one_row,
    learn_one_row_memo,
    needs_step,
    predict_batch,
    predict_learn_batch,
    predict_learn_batch_lw,
)
from ..tree_kinds.observers import rebuild_hash
from ..tree_kinds.pregrown import log_weights, weighted_mean, weighted_mean_at
from ..tree_kinds.regression import predict_row, remember, route_predict
from ..tree_kinds.structure import init_root
from .handle import h1, h2, h3

AGG_MEAN = 0
AGG_MEDIAN = 1
AGG_WEIGHTED = 2  # by the trees' evidence weights (ABORF): see aggregate_at
DONE = -1  # a per-example kernel learnt the row
DRIFTED = -2  # ... and some tree's drift detector signalled (a drift or a warning)
FRESH = -1  # learn_one's t0 for a new row


@entry(inline="always")
def poisson(rng, lam):
    limit = np.exp(-lam)
    k = 0
    p = next_float(rng)
    while p > limit:
        k += 1
        p *= next_float(rng)
    return k


@kernel(inline="always")
def bagging_weight(frng, lam, w):
    """Weight of one (row, tree): ``Poisson(lam) * w``, or ``w`` without bagging (``lam = 0``)."""
    if lam > 0.0:
        return poisson(frng, lam) * w
    return w


@entry
def draw_weights(frng, lam, w, out):
    """``out[t, i]``: bagging weight of row i for tree t, drawn row by row, tree by tree."""
    for i in range(w.shape[0]):
        for t in range(out.shape[0]):
            out[t, i] = bagging_weight(frng, lam, w[i])


# ------------------------------------------------------------------------------------------------
# batch passes of one tree (tree-major); each returns the row it stopped before, as the tree
# kernels do (the engine grows the tree, or replaces it after a drift, and calls again)
@entry(nogil=True, _nrt=False)
def learn_rows(A, t, X, y, W, start):
    """Tree ``t`` learns rows ``start..`` of ``X`` with weights ``W[t]``."""
    st, prm = tree_at(A, t)
    return learn_batch(st, prm, X, y, W[t], start)


@entry(nogil=True, _nrt=False)
def predict_learn_rows(A, t, X, y, W, start, P):
    """Tree ``t`` predicts each row (into ``P[t]``), then learns it with weight ``W[t]``."""
    st, prm = tree_at(A, t)
    return predict_learn_batch(st, prm, X, y, W[t], start, P[t])


@entry(nogil=True, _nrt=False)
def predict_learn_rows_lw(A, t, X, y, W, start, P, LW):
    """:func:`predict_learn_rows` that also records tree t's log weight before each row in
    ``LW[t]`` (weighted aggregation)."""
    st, prm = tree_at(A, t)
    return predict_learn_batch_lw(st, prm, X, y, W[t], start, P[t], LW[t])


@entry(nogil=True, _nrt=False)
def predict_rows(A, t, X, P):
    """Tree ``t``'s predictions for the rows of ``X``, into ``P[t]``."""
    st, prm = tree_at(A, t)
    predict_batch(st, prm, X, P[t])


@entry(nogil=True, _nrt=False)
def apply_rows(A, t, X, out):
    """Leaf node of tree ``t`` reached by each row of ``X``."""
    st, _ = tree_at(A, t)
    _apply_batch(st, X, out)


@entry(nogil=True, _nrt=False)
def background_rows(B, t, X, y, w, start):
    """Background tree ``t`` (row t of arena ``B``) learns rows ``start..`` of ``X`` with the
    weights ``w`` (drawn by :func:`draw_background`)."""
    st, prm = tree_at(B, t)
    return learn_batch(st, prm, X, y, w, start)


@entry(nogil=True)
def draw_background(brng, lam, w, out, start, stop):
    """``out[i]``, ``start <= i < stop``: a background tree's bagging weights of rows i (sample
    weights ``w``), drawn in row order from its generator ``brng``."""
    for i in range(start, stop):
        out[i] = bagging_weight(brng, lam, w[i])


@entry
def init_tree(A, t):
    """A new tree in row ``t``: its root leaf (or the whole pre-grown tree) with the fields its
    task needs."""
    st, prm = tree_at(A, t)
    init_root(st, prm)
    init_task_fields(st)


@entry(_nrt=False)
def rebuild_hash_at(A, t):
    """Re-insert every live observer bin of tree ``t`` into its hash table (after it grew)."""
    st, _ = tree_at(A, t)
    rebuild_hash(st)


@entry(_nrt=False)
def lacks_room(A, t):
    st, prm = tree_at(A, t)
    return not has_room(st, prm)


# ------------------------------------------------------------------------------------------------
# one example through every tree
@entry(nogil=True, _nrt=False, inline="always")
def predict_trees_memo(A, x, P, M):
    """Every tree's prediction for row ``x``, into ``P``; leaf nodes and predictions also into
    the memo ``M`` (see the module docstring)."""
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        node, p = route_predict(st, prm, x)
        P[t] = p
        remember(M, t, st, node, p)


@entry(nogil=True, _nrt=False, inline="always")
def learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M):
    """Every tree learns ``(x, y)``: tree t with the bagging weight ``wt[t]`` after predicting
    ``x`` into ``P[t]``; ``drifted[t]`` is set when tree t's drift detector signalled.  A new row
    comes with ``t0 = FRESH`` (the weights are drawn, every tree runs); a repeated call with
    ``t0 = t`` resumes at tree ``t`` with the weights already drawn.  ``M``: the memo of a
    prediction of this very row (``(4, n_trees)``), or of width 0 (see the module docstring).
    Both tasks: a classification tree's ``P[t]`` is the class it predicted (an index), ``y`` the
    row's class index (see :mod:`streamforest.tree_kinds.kernels`).

    Returns ``DONE`` (or ``DRIFTED`` when some detector signalled), or the index ``t`` of a tree
    that lacks room: the trees before it have learnt the row, and the call is repeated with
    ``t0 = t`` once the engine grew that tree."""
    T = A.lay.shape[0]
    if t0 == FRESH:
        for t in range(T):
            wt[t] = bagging_weight(frng, lam, w)
            drifted[t] = 0
        t0 = 0
    for t in range(t0, T):
        st, prm = tree_at(A, t)
        if needs_step(prm, wt[t]) and not has_room(st, prm):
            return t
        P[t], d = learn_one_row_memo(st, prm, x, y, wt[t], M, t)
        if d:
            drifted[t] = 1
    for t in range(T):
        if drifted[t]:
            return DRIFTED
    return DONE


@entry(nogil=True, _nrt=False)
def learn_background_one(B, on, brng, lam, x, y, w, bw, t0):
    """Every background tree (``on[t]``, row t of arena ``B``) learns ``(x, y)`` with its own
    bagging weight ``bw[t]``, drawn from ``brng[t]`` on a new row (``t0 = FRESH``).  Returns
    ``DONE``, or the index of a background tree that lacks room (call again with ``t0 = t``
    once the engine grew it)."""
    if t0 == FRESH:
        for t in range(on.shape[0]):
            if on[t]:
                bw[t] = bagging_weight(brng[t], lam, w)
        t0 = 0
    for t in range(t0, on.shape[0]):
        if not on[t]:
            continue
        st, prm = tree_at(B, t)
        if needs_step(prm, bw[t]) and not has_room(st, prm):
            return t
        learn_one_row(st, prm, x, y, bw[t])
    return DONE


@kernel(inline="always")
def aggregate(P, agg):
    """Mean (``AGG_MEAN``) or median (``AGG_MEDIAN``, sorting ``P`` in place) of ``P``."""
    T = P.shape[0]
    if agg == AGG_MEDIAN:
        for i in range(1, T):  # insertion sort: a forest has few trees
            v = P[i]
            j = i - 1
            while j >= 0 and P[j] > v:
                P[j + 1] = P[j]
                j -= 1
            P[j + 1] = v
        h = T // 2
        return P[h] if T % 2 == 1 else (P[h - 1] + P[h]) / 2.0
    s = 0.0
    for t in range(T):
        s += P[t]
    return s / T


@kernel(inline="always")
def aggregate_at(A, P, agg):
    """:func:`aggregate`, or with ``AGG_WEIGHTED`` the mean of ``P`` weighted by the trees'
    current evidence weights (the softmax of their log weights, read from ``A``)."""
    if agg == AGG_WEIGHTED:
        return weighted_mean_at(A, P)
    return aggregate(P, agg)


@entry(nogil=True, _nrt=False)
def mean_columns(P, out):
    """``out[i]``: the mean of ``P[:, i]``, summed over the trees in order (the arithmetic of
    :func:`aggregate`, so that a one-row batch gives what the per-example call gives)."""
    T, n = P.shape
    for i in range(n):
        out[i] = 0.0
    for t in range(T):
        for i in range(n):
            out[i] += P[t, i]
    for i in range(n):
        out[i] /= T


@entry(nogil=True, _nrt=False)
def weighted_columns(LW, P, out):
    """``out[i]``: the mean of ``P[:, i]`` weighted by the softmax of ``LW[:, i]`` (the same
    arithmetic as :func:`aggregate_at`); ``LW`` may have one column, for every row."""
    for i in range(P.shape[1]):
        out[i] = weighted_mean(LW[:, min(i, LW.shape[1] - 1)], P[:, i])


@entry(nogil=True, _nrt=False)
def tree_log_weights(A, out):
    log_weights(A, out)


@entry(nogil=True, _nrt=False)
def predict_trees(A, x, P):
    """Every tree's prediction for row ``x``, into ``P``."""
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        P[t] = predict_row(st, prm, x)


@entry(nogil=True, _nrt=False, inline="always")
def predict_one(A, x, agg, P, M):
    """The forest's prediction for row ``x`` (tree predictions left in ``P``, sorted for a
    median; leaf nodes and predictions in the memo ``M``)."""
    predict_trees_memo(A, x, P, M)
    return aggregate_at(A, P, agg)


# ------------------------------------------------------------------------------------------------
# the per-example kernels through a handle (see streamforest.engine.handle): the engine's
# arrays in the order of ``Engine._handle_arrays``
H_SIZE = 32  # entries of an engine handle
H_ROW = 18  # where the row's address is (the only array a caller may change between calls)


@kernel(inline="always")
def engine_views(H, kind):
    """``(arena, rng, row, weights, predictions, drifted, memo, empty memo)`` of a handle (the
    arena of trees of ``kind``, a :class:`~streamforest.tree_kinds.kinds.KindTag`)."""
    A = make_arena(kind, h2(H, 0, np.float64), h2(H, 3, np.int64), h2(H, 6, np.int8),
                   h3(H, 9, np.int64), h2(H, 13, np.float64))  # fmt: skip
    return (A, h1(H, 16, np.uint64), h1(H, 18, np.float64), h1(H, 20, np.float64),
            h1(H, 22, np.float64), h1(H, 24, np.int8), h2(H, 26, np.float64),
            h2(H, 29, np.float64))  # fmt: skip


@entry(nogil=True, _nrt=False)
def learn_one_h(H, kind, lam, y, w, t0, memo):
    """:func:`learn_one` of the handle's arrays (``memo``: whether the memo holds this row)."""
    A, frng, x, wt, P, drifted, M, M0 = engine_views(H, kind)
    return learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M if memo else M0)


@entry(nogil=True, _nrt=False)
def predict_one_h(H, kind, agg):
    """:func:`predict_one` of the handle's arrays."""
    A, _, x, _, P, _, M, _ = engine_views(H, kind)
    return predict_one(A, x, agg, P, M)
