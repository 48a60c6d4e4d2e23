"""Compiled kernels of aggregated Mondrian trees (AMF; Mourtada, Gaïffas & Scornet, JRSS-B 2021).

The trees of one forest share a few arrays (see :class:`~streamforest.mondrian.state.
MondrianState`); tree ``t`` owns row ``t`` of each.  Node 0 is a tree's root for ever: a split
of a node keeps the node where it is (with the new feature and threshold) and moves its old
content (statistics, box, children) to a new child, as the Mondrian process inserts a split
above a subtree.

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
the context-tree-weighting recursion over every pruning of the tree with prior 1/2 per node.

**Predicting a row** routes it to its leaf and averages up the path: starting from the leaf's
prediction ``p``, each ancestor ``v`` gives ``p = a p_v + (1 - a) p``, ``a = exp(log w(v) -
log W(v)) / 2``: the exponentially weighted average of the predictions of all prunings
(exact).  Without aggregation the leaf's prediction is the tree's.

Random draws come from each tree's own SplitMix64 state (:mod:`streamforest.rng`), in this
order, for each node where a split is considered: the uniform of the exponential time; when it
splits, the uniform choosing the feature, then the threshold's.  Trees are independent, so the
passes run tree by tree (tree-major) and a per-example call runs them in order: both give the
same trees.

Missing values (NaN; a nominal feature's unseen category, code < 0) extend no box and draw no
split on their feature; at a split on such a feature the row goes to the child that has seen
more weight (left on ties).  A feature whose box is empty at a node (no value seen there yet)
has no extension: the first value seen sets it.  Nominal features are split as their codes.

Rows of weight 0 change nothing (a bagging weight of 0: out of bag).  A pass stops before a row
when a tree may lack room for the two nodes a split adds (see :func:`learn_rows`); the owner
grows the arrays and calls again.
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import entry, kernel
from ..rng import next_float

# columns of ``links`` (int64, (T, C, 4))
PARENT, LEFT, RIGHT, FEATURE = 0, 1, 2, 3
N_LINKS = 4
# columns of ``nodes`` (float64, (T, C, VALUE + K)): then the node's value (regression: the mean
# of its targets, K = 1; classification: the weight of each class)
THRESHOLD, TIME, COUNT, LOG_WEIGHT, LOG_TREE, VALUE = 0, 1, 2, 3, 4, 5
# columns of ``meta`` (int64, (T, 2))
N_NODES, N_SEEN = 0, 1
# entries of the parameters (float64 array)
P_STEP, P_AGGREGATE, P_DIRICHLET, P_SPLIT_PURE, P_MAX_NODES, P_CLASSES = 0, 1, 2, 3, 4, 5
N_PARAMS = 6

_LOG2 = math.log(2.0)


# --- reading a row --------------------------------------------------------------------------------
@kernel(inline="always")
def coordinate(nominal, x, j):
    """Feature ``j`` of row ``x``, NaN when missing (a nominal feature's unseen code < 0)."""
    v = x[j]
    if nominal[j] != 0 and v < 0.0:
        return np.nan
    return v


@kernel(inline="always")
def n_features(box, x):
    return min(box.shape[2], x.shape[0])


@kernel(inline="always")
def child_of(links, nodes, nominal, t, v, x):
    """The child of split node ``v`` of tree ``t`` that row ``x`` goes to."""
    left = links[t, v, LEFT]
    right = links[t, v, RIGHT]
    xv = coordinate(nominal, x, links[t, v, FEATURE])
    if xv != xv:  # missing: the child that has seen more
        return left if nodes[t, left, COUNT] >= nodes[t, right, COUNT] else right
    return left if xv <= nodes[t, v, THRESHOLD] else right


@kernel
def leaf_of(links, nodes, nominal, t, x):
    """The leaf of tree ``t`` that row ``x`` reaches."""
    v = 0
    while links[t, v, LEFT] >= 0:
        v = child_of(links, nodes, nominal, t, v, x)
    return v


@kernel(inline="always")
def log_sum_2_exp(a, b):
    """``log((exp(a) + exp(b)) / 2)`` without overflow."""
    if a > b:
        return a + math.log1p(math.exp(b - a)) - _LOG2
    return b + math.log1p(math.exp(a - b)) - _LOG2


# --- predictions ---------------------------------------------------------------------------------
@kernel
def predict_value(links, nodes, nominal, params, t, x):
    """Tree ``t``'s prediction of a regression target for row ``x`` (0 while it is empty)."""
    leaf = leaf_of(links, nodes, nominal, t, x)
    p = nodes[t, leaf, VALUE]
    if params[P_AGGREGATE] == 0.0:
        return p
    v = leaf
    while v != 0:
        v = links[t, v, PARENT]
        a = 0.5 * math.exp(nodes[t, v, LOG_WEIGHT] - nodes[t, v, LOG_TREE])
        p = a * nodes[t, v, VALUE] + (1.0 - a) * p
    return p


@kernel
def predict_classes(links, nodes, nominal, params, t, x, out):
    """Tree ``t``'s class probabilities for row ``x`` into ``out`` (``K`` entries): each node's
    Dirichlet-smoothed class frequencies, aggregated up the path (uniform while it is empty)."""
    K = out.shape[0]
    d = params[P_DIRICHLET]
    leaf = leaf_of(links, nodes, nominal, t, x)
    den = nodes[t, leaf, COUNT] + d * K
    for k in range(K):
        out[k] = (nodes[t, leaf, VALUE + k] + d) / den
    if params[P_AGGREGATE] == 0.0:
        return
    v = leaf
    while v != 0:
        v = links[t, v, PARENT]
        a = 0.5 * math.exp(nodes[t, v, LOG_WEIGHT] - nodes[t, v, LOG_TREE])
        den = nodes[t, v, COUNT] + d * K
        for k in range(K):
            out[k] = a * (nodes[t, v, VALUE + k] + d) / den + (1.0 - a) * out[k]


# --- learning ------------------------------------------------------------------------------------
@kernel(inline="always")
def node_loss(nodes, params, t, v, y):
    """The loss of node ``v``'s prediction (before learning ``y``)."""
    K = int(params[P_CLASSES])
    if K == 0:
        r = nodes[t, v, VALUE] - y
        return 0.5 * r * r
    d = params[P_DIRICHLET]
    k = int(y)
    return -math.log((nodes[t, v, VALUE + k] + d) / (nodes[t, v, COUNT] + d * K))


@kernel
def take_row(nodes, box, nominal, params, t, v, x, y, w, weigh):
    """Node ``v`` of tree ``t`` learns row ``(x, y)`` with weight ``w``: its box holds the row,
    its log weight loses the loss of its prediction (when ``weigh`` and aggregating), then its
    statistics take the row."""
    for j in range(n_features(box, x)):
        xv = coordinate(nominal, x, j)
        if xv == xv:
            lo = box[t, v, j, 0]
            if lo != lo:  # no value of this feature seen at the node yet
                box[t, v, j, 0] = xv
                box[t, v, j, 1] = xv
            elif xv < lo:
                box[t, v, j, 0] = xv
            elif xv > box[t, v, j, 1]:
                box[t, v, j, 1] = xv
    if weigh and params[P_AGGREGATE] != 0.0:
        nodes[t, v, LOG_WEIGHT] -= params[P_STEP] * w * node_loss(nodes, params, t, v, y)
    c = nodes[t, v, COUNT] + w
    nodes[t, v, COUNT] = c
    if params[P_CLASSES] == 0.0:
        m = nodes[t, v, VALUE]
        nodes[t, v, VALUE] = m + w * (y - m) / c
    else:
        nodes[t, v, VALUE + int(y)] += w


@kernel
def range_extension(box, nominal, extension, t, v, x):
    """``extension[t, j]``: how far row ``x`` lies outside node ``v``'s box in feature ``j``;
    returns their sum."""
    total = 0.0
    for j in range(box.shape[2]):
        e = 0.0
        if j < x.shape[0]:
            xv = coordinate(nominal, x, j)
            lo = box[t, v, j, 0]
            if xv == xv and lo == lo:
                if xv < lo:
                    e = lo - xv
                else:
                    hi = box[t, v, j, 1]
                    if xv > hi:
                        e = xv - hi
        extension[t, j] = e
        total += e
    return total


@kernel
def draw_feature(extension, rng, t, total):
    """A feature drawn with probability proportional to its extension."""
    P = extension.shape[1]
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
def add_children(links, nodes, box, meta, t, v, j, threshold, time, right):
    """Split node ``v`` of tree ``t`` (see the module docstring); returns the new leaf."""
    a = meta[t, N_NODES]
    meta[t, N_NODES] = a + 2
    b = a + 1
    old, new = (a, b) if right else (b, a)
    for c in range(N_LINKS):
        links[t, old, c] = links[t, v, c]
    for c in range(nodes.shape[2]):
        nodes[t, old, c] = nodes[t, v, c]
        nodes[t, new, c] = 0.0
    for f in range(box.shape[2]):
        box[t, old, f, 0] = box[t, v, f, 0]
        box[t, old, f, 1] = box[t, v, f, 1]
        box[t, new, f, 0] = np.nan
        box[t, new, f, 1] = np.nan
    links[t, old, PARENT] = v
    nodes[t, old, TIME] = time
    if links[t, old, LEFT] >= 0:
        links[t, links[t, old, LEFT], PARENT] = old
        links[t, links[t, old, RIGHT], PARENT] = old
    links[t, new, PARENT] = v
    links[t, new, LEFT] = -1
    links[t, new, RIGHT] = -1
    links[t, new, FEATURE] = -1
    nodes[t, new, TIME] = time
    links[t, v, LEFT] = a
    links[t, v, RIGHT] = b
    links[t, v, FEATURE] = j
    nodes[t, v, THRESHOLD] = threshold
    return new


@kernel(inline="always")
def is_pure(nodes, t, v, y):
    """Whether every example of node ``v`` (none included) has class ``y``."""
    return nodes[t, v, VALUE + int(y)] >= nodes[t, v, COUNT]


@kernel
def learn_tree(links, nodes, box, meta, rng, nominal, extension, params, t, x, y, w):
    """Tree ``t`` learns row ``(x, y)`` with weight ``w`` (see the module docstring); the caller
    made room for two more nodes."""
    if not w > 0.0:
        return
    meta[t, N_SEEN] += 1
    K = int(params[P_CLASSES])
    max_nodes = params[P_MAX_NODES]
    if meta[t, N_NODES] == 1 and nodes[t, 0, COUNT] == 0.0:  # the first row
        take_row(nodes, box, nominal, params, t, 0, x, y, w, False)
        nodes[t, 0, LOG_TREE] = nodes[t, 0, LOG_WEIGHT]
        return
    v = 0
    leaf = 0
    total = 0.0
    time = 0.0
    while True:
        split = False
        if max_nodes <= 0.0 or meta[t, N_NODES] + 2 <= max_nodes:
            considered = K == 0 or params[P_SPLIT_PURE] != 0.0 or not is_pure(nodes, t, v, y)
            if considered:
                total = range_extension(box, nominal, extension, t, v, x)
                if total > 0.0:
                    u = next_float(rng)
                    time = nodes[t, v, TIME] - math.log1p(-u) / total
                    left = links[t, v, LEFT]
                    split = left < 0 or time < nodes[t, left, TIME]
        if split:
            j = draw_feature(extension, rng, t, total)
            xv = x[j]
            lo = box[t, v, j, 0]
            hi = box[t, v, j, 1]
            u = next_float(rng)
            right = xv > hi
            if right:  # hi <= threshold < x
                threshold = hi + u * (xv - hi)
                if not threshold < xv:
                    threshold = hi
            else:  # x <= threshold < lo
                threshold = xv + u * (lo - xv)
                if not threshold < lo:
                    threshold = xv
            leaf = add_children(links, nodes, box, meta, t, v, j, threshold, time, right)
            take_row(nodes, box, nominal, params, t, v, x, y, w, True)
            take_row(nodes, box, nominal, params, t, leaf, x, y, w, False)
            break
        take_row(nodes, box, nominal, params, t, v, x, y, w, True)
        if links[t, v, LEFT] < 0:
            leaf = v
            break
        v = child_of(links, nodes, nominal, t, v, x)
    if params[P_AGGREGATE] == 0.0:
        return
    nodes[t, leaf, LOG_TREE] = nodes[t, leaf, LOG_WEIGHT]
    v = leaf
    while v != 0:
        v = links[t, v, PARENT]
        below = nodes[t, links[t, v, LEFT], LOG_TREE] + nodes[t, links[t, v, RIGHT], LOG_TREE]
        nodes[t, v, LOG_TREE] = log_sum_2_exp(nodes[t, v, LOG_WEIGHT], below)


# --- passes called from Python -------------------------------------------------------------------
@entry(nogil=True, _nrt=False)
def learn_rows(links, nodes, box, meta, rng, nominal, extension, params, t, X, y, W, start,
               predict, P):  # fmt: skip
    """Tree ``t`` learns rows ``start..`` of ``X`` with weights ``W[t]`` (predicting each into
    ``P[t]`` first when ``predict``); returns the row it stopped before: ``n`` when done, else
    a row before which the tree may lack room for two nodes."""
    n = X.shape[0]
    capacity = links.shape[1]
    tree_rng = rng[t]
    for i in range(start, n):
        if meta[t, N_NODES] + 2 > capacity:
            return i
        x = X[i]
        if predict:
            P[t, i] = predict_value(links, nodes, nominal, params, t, x)
        learn_tree(links, nodes, box, meta, tree_rng, nominal, extension, params, t, x, y[i],
                   W[t, i])  # fmt: skip
    return n


@entry(nogil=True, _nrt=False)
def predict_rows(links, nodes, nominal, params, t, X, P):
    """``P[t, i]``: tree ``t``'s prediction of a regression target for each row of ``X``."""
    for i in range(X.shape[0]):
        P[t, i] = predict_value(links, nodes, nominal, params, t, X[i])


@entry(nogil=True, _nrt=False)
def predict_class_rows(links, nodes, nominal, params, t, X, P):
    """``P[t, i]``: tree ``t``'s class probabilities for each row of ``X`` (``P`` of shape
    ``(T, n, K)``)."""
    for i in range(X.shape[0]):
        predict_classes(links, nodes, nominal, params, t, X[i], P[t, i])


@entry(nogil=True, _nrt=False)
def apply_rows(links, nodes, nominal, t, X, out):
    """``out[i]``: the leaf of tree ``t`` that row ``i`` of ``X`` reaches."""
    for i in range(X.shape[0]):
        out[i] = leaf_of(links, nodes, nominal, t, X[i])


@entry(nogil=True, _nrt=False)
def learn_one(links, nodes, box, meta, rng, nominal, extension, params, x, y, weights, predict,
              shift, out):  # fmt: skip
    """Every tree learns row ``(x, y)`` with weight ``weights[t]`` (predicting it into
    ``out[t]`` first, plus ``shift``, when ``predict``), in tree order; the caller made room.
    Returns the most nodes a tree holds now."""
    most = 0
    for t in range(links.shape[0]):
        if predict:
            out[t] = predict_value(links, nodes, nominal, params, t, x) + shift
        learn_tree(links, nodes, box, meta, rng[t], nominal, extension, params, t, x, y,
                   weights[t])  # fmt: skip
        most = max(most, meta[t, N_NODES])
    return most


@entry(nogil=True, _nrt=False)
def predict_one(links, nodes, nominal, params, x, shift, out):
    """Each tree's prediction of a regression target for row ``x``, plus ``shift``, into
    ``out[t]``; returns their mean (summed in tree order, as
    ``streamforest.engine.kernels.mean_columns`` does)."""
    T = links.shape[0]
    s = 0.0
    for t in range(T):
        p = predict_value(links, nodes, nominal, params, t, x) + shift
        out[t] = p
        s += p
    return s / T


@entry(nogil=True, _nrt=False)
def predict_proba_one(links, nodes, nominal, params, x, scratch, mean):
    """The mean of the trees' class probabilities for row ``x`` into ``mean`` (``scratch``: one
    tree's, ``K`` entries); returns the most probable class (the first on ties)."""
    T = links.shape[0]
    K = mean.shape[0]
    for k in range(K):
        mean[k] = 0.0
    for t in range(T):
        predict_classes(links, nodes, nominal, params, t, x, scratch)
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
