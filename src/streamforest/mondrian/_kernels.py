"""Compiled kernels of aggregated Mondrian trees (AMF; Mourtada, Gaïffas & Scornet, JRSS-B 2021).

The numba original of the compiled core's ``src/core/mondrian`` (``streamforest._core.mondrian``,
which the forests run): kept only as the reference that tests/test_core_mondrian.py checks the
core against bit for bit; nothing in the package imports it.

The trees of one forest share one array of node records, ``nodes`` ``(T, C, R)`` float64 (tree
``t`` owns row ``t``; see :mod:`streamforest.mondrian.state` for the columns): a node's links,
split, statistics, aggregation weights, value and range box lie together, so a step down a path
reads a few adjacent cache lines (the trees outgrow the caches: their passes are bound by memory
reads).  Node 0 is a tree's root for ever: a split of a node keeps the node where it is (with
the new feature and threshold) and moves its old content (statistics, box, children) to a new
child, as the Mondrian process inserts a split above a subtree.

**Learning a row** (the paper's Algorithm 1 with the weights' update of its Algorithm 2) walks
down from the root.  At each node ``v`` the row's *range extension* is the distance by which it
lies outside ``v``'s range box in each feature, ``e_j``; with ``E = sum_j e_j > 0`` a split time
``tau_v + Exp(E)`` is drawn (``tau_v`` the node's birth time); when ``v`` is a leaf, or the time
comes before its children's birth, ``v`` splits: feature ``j`` drawn with probability
``e_j / E``, the threshold uniform between the box and the row's value, the old content on the
box's side and a new leaf holding the row on the other; the walk stops there.  Every node passed
learns the row: its box grows to hold it, its log weight loses ``step * w * loss`` of the
prediction it made *before* the row (squared loss ``(y - mean)^2 / 2``; log loss of the
Krichevsky-Trofimov (Dirichlet) class probabilities ``(n_k + d) / (n + d K)``), then its
statistics take the row with weight ``w``.  A new leaf's weight starts at 0 (no loss yet).
Then, from the leaf up to the root, each node's *subtree weight* is recomputed:
``log W(v) = log((exp(log w(v)) + exp(log W(left) + log W(right))) / 2)`` (a leaf's is its own),
the context-tree-weighting recursion over every pruning of the tree with prior 1/2 per node,
and with it the node's *mixing weight* ``a(v) = exp(log w(v) - log W(v)) / 2``.

**Predicting a row** routes it to its leaf and averages up the path: starting from the leaf's
prediction ``p``, each ancestor ``v`` gives ``p = a(v) p_v + (1 - a(v)) p``: the exponentially
weighted average of the predictions of all prunings (exact).  Without aggregation the leaf's
prediction is the tree's.

Random draws come from each tree's own SplitMix64 state (:mod:`streamforest.rng`), in this
order, for each node where a split is considered: the uniform of the exponential time; when it
splits, the uniform choosing the feature, then the threshold's.  Trees are independent, so the
passes run tree by tree (tree-major) and a per-example call runs them in order: both give the
same trees.

Missing values (NaN) extend no box and draw no split on their feature; at a split on such a
feature the row goes to the child that has seen more weight (left on ties).  A feature whose box
is empty at a node (no value seen there yet) has no extension: the first value seen sets it.
The kernels read rows whose nominal features' unseen categories (codes < 0) are already NaN
(:func:`clean_row`; the engine cleans batches).  Nominal features are split as their codes.

Rows of weight 0 change nothing (a bagging weight of 0: out of bag).  A pass stops before a row
when a tree may lack room for the two nodes a split adds (see :func:`learn_rows`); the owner
grows the arrays and calls again.
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import entry, kernel
from ..rng import next_float
from .layout import (  # noqa: F401  (the layout's constants, read by the kernels)
    COUNT,
    FEATURE,
    LEFT,
    LEFT_TREE,
    LOG_TREE,
    LOG_WEIGHT,
    MIX,
    N_NODES,
    N_PARAMS,
    N_SEEN,
    P_AGGREGATE,
    P_CLASSES,
    P_DIRICHLET,
    P_MAX_NODES,
    P_SPLIT_PURE,
    P_STEP,
    PARENT,
    RIGHT,
    RIGHT_TREE,
    SPLIT_TIME,
    THRESHOLD,
    TIME,
    VALUE,
)

_LOG2 = math.log(2.0)


@kernel(inline="always")
def box_at(params):
    """The first box column of a node record (after the ``K`` value columns)."""
    return VALUE + max(int(params[P_CLASSES]), 1)


# --- reading a row --------------------------------------------------------------------------------
@kernel(inline="always")
def child_of(nodes, t, v, x):
    """The child of split node ``v`` of tree ``t`` that row ``x`` goes to."""
    left = int(nodes[t, v, LEFT])
    right = int(nodes[t, v, RIGHT])
    xv = x[int(nodes[t, v, FEATURE])]
    if xv != xv:  # missing: the child that has seen more
        return left if nodes[t, left, COUNT] >= nodes[t, right, COUNT] else right
    return left if xv <= nodes[t, v, THRESHOLD] else right


@kernel
def leaf_of(nodes, t, x):
    """The leaf of tree ``t`` that row ``x`` reaches."""
    v = 0
    while nodes[t, v, LEFT] >= 0.0:
        v = child_of(nodes, t, v, x)
    return v


@kernel(inline="always")
def clean_row(nominal, x, out):
    """``out``: row ``x`` with the unseen categories of nominal features (codes < 0) as NaN and
    the features it lacks as NaN; returns ``out`` cut to the features the trees know."""
    P = min(nominal.shape[0], out.shape[0])
    for j in range(P):
        v = x[j] if j < x.shape[0] else np.nan
        out[j] = np.nan if nominal[j] != 0 and v < 0.0 else v
    return out[:P]


# --- predictions ---------------------------------------------------------------------------------
@kernel
def predict_value(nodes, params, t, x):
    """Tree ``t``'s prediction of a regression target for row ``x`` (0 while it is empty)."""
    v = leaf_of(nodes, t, x)
    p = nodes[t, v, VALUE]
    if params[P_AGGREGATE] == 0.0:
        return p
    while v != 0:
        v = int(nodes[t, v, PARENT])
        a = nodes[t, v, MIX]
        p = a * nodes[t, v, VALUE] + (1.0 - a) * p
    return p


@kernel
def predict_classes(nodes, params, t, x, out):
    """Tree ``t``'s class probabilities for row ``x`` into ``out`` (``K`` entries): each node's
    Dirichlet-smoothed class frequencies, aggregated up the path (uniform while it is empty)."""
    K = out.shape[0]
    d = params[P_DIRICHLET]
    v = leaf_of(nodes, t, x)
    den = nodes[t, v, COUNT] + d * K
    for k in range(K):
        out[k] = (nodes[t, v, VALUE + k] + d) / den
    if params[P_AGGREGATE] == 0.0:
        return
    while v != 0:
        v = int(nodes[t, v, PARENT])
        a = nodes[t, v, MIX]
        den = nodes[t, v, COUNT] + d * K
        for k in range(K):
            out[k] = a * ((nodes[t, v, VALUE + k] + d) / den) + (1.0 - a) * out[k]


# --- learning ------------------------------------------------------------------------------------
@kernel(inline="always")
def node_loss(nodes, params, t, v, y):
    """The loss of node ``v``'s prediction (before learning ``y``)."""
    K = int(params[P_CLASSES])
    if K == 0:
        r = nodes[t, v, VALUE] - y
        return 0.5 * r * r
    d = params[P_DIRICHLET]
    return -math.log((nodes[t, v, VALUE + int(y)] + d) / (nodes[t, v, COUNT] + d * K))


@kernel
def take_stats(nodes, params, t, v, y, w, weigh):
    """Node ``v`` of tree ``t`` learns target ``y`` with weight ``w``: its log weight loses the
    loss of its prediction (when ``weigh`` is 1.0 and aggregating; 0.0: it made none), then its
    statistics take it."""
    if weigh != 0.0 and params[P_AGGREGATE] != 0.0:
        nodes[t, v, LOG_WEIGHT] -= params[P_STEP] * w * node_loss(nodes, params, t, v, y)
    n = nodes[t, v, COUNT] + w
    nodes[t, v, COUNT] = n
    if params[P_CLASSES] == 0.0:
        m = nodes[t, v, VALUE]
        nodes[t, v, VALUE] = m + w * (y - m) / n
    else:
        nodes[t, v, VALUE + int(y)] += w


@kernel
def box_of_row(nodes, params, t, v, x):
    """Node ``v``'s box (empty) becomes row ``x``'s point."""
    b = box_at(params)
    for j in range(x.shape[0]):
        xv = x[j]
        if xv == xv:
            nodes[t, v, b + 2 * j] = xv
            nodes[t, v, b + 2 * j + 1] = xv


@kernel
def extend_box(nodes, params, extension, saved, t, v, x):
    """Node ``v``'s box grows to hold row ``x`` (one pass over the features: the box is read
    once); ``extension[t, j]``: how far ``x`` lay outside it in feature ``j`` (-1: the feature's
    box was empty, the row's value fills it), ``saved[t, j]`` the bound a positive extension
    replaced; returns the sum of the extensions."""
    b = box_at(params)
    total = 0.0
    for j in range(x.shape[0]):
        xv = x[j]
        c = b + 2 * j
        lo = nodes[t, v, c]
        hi = nodes[t, v, c + 1]
        e = 0.0
        if xv < lo:  # (False when either is NaN)
            e = lo - xv
            saved[t, j] = lo
            nodes[t, v, c] = xv
            total += e
        elif xv > hi:
            e = xv - hi
            saved[t, j] = hi
            nodes[t, v, c + 1] = xv
            total += e
        elif lo != lo and xv == xv:
            e = -1.0
            nodes[t, v, c] = xv
            nodes[t, v, c + 1] = xv
        extension[t, j] = e
    return total


@kernel
def box_before(nodes, params, extension, saved, t, v, x):
    """Node ``v``'s box as it was before :func:`extend_box` took row ``x`` (whose ``extension``
    and ``saved`` it reads)."""
    b = box_at(params)
    for j in range(x.shape[0]):
        e = extension[t, j]
        if e > 0.0:
            if x[j] < saved[t, j]:
                nodes[t, v, b + 2 * j] = saved[t, j]
            else:
                nodes[t, v, b + 2 * j + 1] = saved[t, j]
        elif e < 0.0:
            nodes[t, v, b + 2 * j] = np.nan
            nodes[t, v, b + 2 * j + 1] = np.nan


@kernel
def draw_feature(extension, rng, t, P, total):
    """A feature drawn with probability proportional to its extension."""
    last = -1
    if total < np.inf:
        r = next_float(rng) * total
        acc = 0.0
        for j in range(P):
            e = extension[t, j]
            if e > 0.0:
                acc += e
                last = j
                if r < acc:
                    return j
        return last
    # an infinite extension (values near the float range): the first infinite one
    next_float(rng)
    for j in range(P):
        if extension[t, j] == np.inf:
            return j
    return last


@kernel
def add_children(nodes, meta, t, v, j, threshold, time, right, box):
    """Split node ``v`` of tree ``t`` (see the module docstring; ``box``: the records' first box
    column); returns the new leaf."""
    first = meta[t, N_NODES]
    second = first + 1
    meta[t, N_NODES] = first + 2
    old, new = (first, second) if right else (second, first)
    R = nodes.shape[2]
    for c in range(R):
        nodes[t, old, c] = nodes[t, v, c]
    for c in range(box):
        nodes[t, new, c] = 0.0
    for c in range(box, R):  # an empty box
        nodes[t, new, c] = np.nan
    nodes[t, new, LEFT] = -1.0
    nodes[t, new, RIGHT] = -1.0
    nodes[t, new, FEATURE] = -1.0
    nodes[t, new, MIX] = 0.5
    nodes[t, new, PARENT] = v
    nodes[t, new, TIME] = time
    nodes[t, new, SPLIT_TIME] = np.inf
    nodes[t, old, PARENT] = v
    nodes[t, old, TIME] = time
    if nodes[t, old, LEFT] >= 0.0:
        nodes[t, int(nodes[t, old, LEFT]), PARENT] = old
        nodes[t, int(nodes[t, old, RIGHT]), PARENT] = old
    nodes[t, v, LEFT] = first
    nodes[t, v, RIGHT] = second
    nodes[t, v, FEATURE] = j
    nodes[t, v, THRESHOLD] = threshold
    nodes[t, v, SPLIT_TIME] = time
    lt_old = nodes[t, v, LOG_TREE]  # the moved subtree's (the new leaf's: set going up)
    nodes[t, v, LEFT_TREE] = lt_old if right else 0.0
    nodes[t, v, RIGHT_TREE] = 0.0 if right else lt_old
    return new


@kernel(inline="always")
def is_pure(nodes, t, v, y):
    """Whether every example of node ``v`` (none included) has class ``y``."""
    return nodes[t, v, VALUE + int(y)] >= nodes[t, v, COUNT]


@kernel(inline="always")
def mix_up(nodes, t, v):
    """Node ``v``'s subtree weight and mixing weight from its own and its children's."""
    own = nodes[t, v, LOG_WEIGHT]
    below = nodes[t, v, LEFT_TREE] + nodes[t, v, RIGHT_TREE]
    if own > below:
        e = math.exp(below - own)
        nodes[t, v, LOG_TREE] = own + math.log1p(e) - _LOG2
        nodes[t, v, MIX] = 1.0 / (1.0 + e)
    else:
        e = math.exp(own - below)
        nodes[t, v, LOG_TREE] = below + math.log1p(e) - _LOG2
        nodes[t, v, MIX] = e / (1.0 + e)


@kernel
def learn_tree(nodes, meta, rng, extension, saved, params, t, x, y, w):
    """Tree ``t`` learns row ``(x, y)`` with weight ``w`` (see the module docstring); the caller
    made room for two more nodes."""
    if not w > 0.0:
        return
    meta[t, N_SEEN] += 1
    K = int(params[P_CLASSES])
    max_nodes = params[P_MAX_NODES]
    root = np.int64(0)  # (not a literal: see "Literal constants" in tree_kinds.kernels)
    if meta[t, N_NODES] == 1 and nodes[t, root, COUNT] == 0.0:  # the first row
        box_of_row(nodes, params, t, root, x)
        take_stats(nodes, params, t, root, y, w, 0.0)
        nodes[t, root, LOG_TREE] = nodes[t, root, LOG_WEIGHT]
        return
    P = x.shape[0]
    v = root
    leaf = root
    while True:
        total = extend_box(nodes, params, extension, saved, t, v, x)
        split = False
        time = 0.0
        if total > 0.0 and (max_nodes <= 0.0 or meta[t, N_NODES] + 2 <= max_nodes):
            if K == 0 or params[P_SPLIT_PURE] != 0.0 or not is_pure(nodes, t, v, y):
                u = next_float(rng)
                time = nodes[t, v, TIME] - math.log1p(-u) / total
                split = time < nodes[t, v, SPLIT_TIME]  # (inf at a leaf)
        if split:
            j = draw_feature(extension, rng, t, P, total)
            xv = x[j]
            u = next_float(rng)
            right = not xv < saved[t, j]  # the row extends the box to the right
            if right:  # hi <= threshold < x
                hi = saved[t, j]
                threshold = hi + u * (xv - hi)
                if not threshold < xv:
                    threshold = hi
            else:  # x <= threshold < lo
                lo = saved[t, j]
                threshold = xv + u * (lo - xv)
                if not threshold < lo:
                    threshold = xv
            leaf = add_children(nodes, meta, t, v, j, threshold, time, right, box_at(params))
            old = int(nodes[t, v, LEFT if right else RIGHT])
            box_before(nodes, params, extension, saved, t, old, x)
            take_stats(nodes, params, t, v, y, w, 1.0)
            box_of_row(nodes, params, t, leaf, x)
            take_stats(nodes, params, t, leaf, y, w, 0.0)
            break
        take_stats(nodes, params, t, v, y, w, 1.0)
        if nodes[t, v, LEFT] < 0.0:
            leaf = v
            break
        v = child_of(nodes, t, v, x)
    if params[P_AGGREGATE] == 0.0:
        return
    nodes[t, leaf, LOG_TREE] = nodes[t, leaf, LOG_WEIGHT]
    u = leaf
    while u != 0:
        v = int(nodes[t, u, PARENT])
        if nodes[t, v, LEFT] == u:
            nodes[t, v, LEFT_TREE] = nodes[t, u, LOG_TREE]
        else:
            nodes[t, v, RIGHT_TREE] = nodes[t, u, LOG_TREE]
        mix_up(nodes, t, v)
        u = v


# --- passes called from Python -------------------------------------------------------------------
@entry(nogil=True, _nrt=False)
def learn_rows(nodes, meta, rng, extension, saved, params, t, X, y, W, start, predict, P):
    """Tree ``t`` learns rows ``start..`` of ``X`` (cleaned, see :func:`clean_row`) with weights
    ``W[t]`` (predicting each into ``P[t]`` first when ``predict``); returns the row it stopped
    before: ``n`` when done, else a row before which the tree may lack room for two nodes."""
    n = X.shape[0]
    capacity = nodes.shape[1]
    tree_rng = rng[t]
    for i in range(start, n):
        if meta[t, N_NODES] + 2 > capacity:
            return i
        x = X[i]
        if predict:
            P[t, i] = predict_value(nodes, params, t, x)
        learn_tree(nodes, meta, tree_rng, extension, saved, params, t, x, y[i], W[t, i])
    return n


@entry(nogil=True, _nrt=False)
def predict_rows(nodes, params, t, X, P):
    """``P[t, i]``: tree ``t``'s prediction of a regression target for each (cleaned) row of
    ``X``."""
    for i in range(X.shape[0]):
        P[t, i] = predict_value(nodes, params, t, X[i])


@entry(nogil=True, _nrt=False)
def predict_class_rows(nodes, params, t, X, P):
    """``P[t, i]``: tree ``t``'s class probabilities for each (cleaned) row of ``X`` (``P`` of
    shape ``(T, n, K)``)."""
    for i in range(X.shape[0]):
        predict_classes(nodes, params, t, X[i], P[t, i])


@entry(nogil=True, _nrt=False)
def apply_rows(nodes, t, X, out):
    """``out[i]``: the leaf of tree ``t`` that (cleaned) row ``i`` of ``X`` reaches."""
    for i in range(X.shape[0]):
        out[i] = leaf_of(nodes, t, X[i])


@entry(nogil=True, _nrt=False)
def learn_one(nodes, meta, rng, extension, saved, params, nominal, row, clean, y, weights,
              predict, shift, out):  # fmt: skip
    """Every tree learns ``row`` (cleaned into ``clean`` first) and target ``y`` with weight
    ``weights[t]`` (predicting it into ``out[t]`` first, plus ``shift``, when ``predict``), in
    tree order; the caller made room.  Returns the most nodes a tree holds now."""
    x = clean_row(nominal, row, clean)
    most = 0
    for t in range(nodes.shape[0]):
        if predict:
            out[t] = predict_value(nodes, params, t, x) + shift
        learn_tree(nodes, meta, rng[t], extension, saved, params, t, x, y, weights[t])
        most = max(most, meta[t, N_NODES])
    return most


@entry(nogil=True, _nrt=False)
def predict_one(nodes, params, nominal, row, clean, shift, out):
    """Each tree's prediction of a regression target for ``row``, plus ``shift``, into
    ``out[t]``; returns their mean (summed in tree order, as
    ``streamforest.engine.kernels.mean_columns`` does)."""
    x = clean_row(nominal, row, clean)
    T = nodes.shape[0]
    s = 0.0
    for t in range(T):
        p = predict_value(nodes, params, t, x) + shift
        out[t] = p
        s += p
    return s / T


@entry(nogil=True, _nrt=False)
def predict_proba_one(nodes, params, nominal, row, clean, scratch, mean):
    """The mean of the trees' class probabilities for ``row`` into ``mean`` (``scratch``: one
    tree's, ``K`` entries); returns the most probable class (the first on ties)."""
    x = clean_row(nominal, row, clean)
    T = nodes.shape[0]
    K = mean.shape[0]
    for k in range(K):
        mean[k] = 0.0
    for t in range(T):
        predict_classes(nodes, params, t, x, scratch)
        for k in range(K):
            mean[k] += scratch[k]
    best = 0
    for k in range(K):
        mean[k] /= T
        if mean[k] > mean[best]:
            best = k
    return best


@entry(nogil=True, _nrt=False)
def mean_probabilities(P, mean, best):
    """``mean[i]``: the mean over the trees of ``P[:, i]`` (``(T, n, K)``), summed in tree
    order; ``best[i]`` its most probable class (the first on ties)."""
    T, n, K = P.shape
    for i in range(n):
        for k in range(K):
            mean[i, k] = 0.0
        for t in range(T):
            for k in range(K):
                mean[i, k] += P[t, i, k]
        b = 0
        for k in range(K):
            mean[i, k] /= T
            if mean[i, k] > mean[i, b]:
                b = k
        best[i] = b


@entry(nogil=True, _nrt=False)
def clean_rows(nominal, X):
    """Rows of ``X`` with the unseen categories of nominal features (codes < 0) as NaN, in
    place."""
    for i in range(X.shape[0]):
        clean_row(nominal, X[i], X[i])
