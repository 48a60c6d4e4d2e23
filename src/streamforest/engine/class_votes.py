"""Compiled passes of the forest engine for classification trees (see
:mod:`streamforest.engine.kernels` for the regression ones, whose conventions these follow:
one arena argument, tree-major batch passes that return the row they stopped before, and
per-example kernels that run every tree in one call).

A tree's output is a row of class probabilities (``K`` = the width of its class fields, the same
for every tree of an engine).  The forest's answer is the mean of its trees' probabilities and a
majority vote of their classes (each tree's most probable class), ties broken by the mean
probability: :func:`vote` (one row) and :func:`vote_rows` (a chunk) compute the same thing.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..tree_kinds.arena import tree_at
from ..tree_kinds.class_kernels import learn_batch, learn_step, learn_step_at, predict_proba_batch
from ..tree_kinds.class_leaves import argmax, leaf_proba_votes
from ..tree_kinds.kernels import has_room
from ..tree_kinds.state import I_NFEAT, I_NSEEN
from ..tree_kinds.structure import route
from .kernels import DONE, FRESH, bagging_weight


@entry(nogil=True, _nrt=False)
def learn_rows(A, t, X, y, W, start):
    """Tree ``t`` learns rows ``start..`` of ``X`` (class indices ``y``) with weights ``W[t]``."""
    st, prm = tree_at(A, t)
    return learn_batch(st, prm, X, y, W[t], start)


@entry(nogil=True, _nrt=False)
def predict_proba_rows(A, t, X, P):
    """Tree ``t``'s class probabilities of the rows of ``X``, into ``P[t]`` (``(n, K)``)."""
    st, prm = tree_at(A, t)
    predict_proba_batch(st, prm, X, P[t])


@entry(nogil=True, _nrt=False)
def learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M):
    """Every tree learns ``(x, y)`` (``y`` a class index) with its bagging weight ``wt[t]``
    (drawn on a new row, ``t0 = FRESH``), as :func:`streamforest.engine.kernels.learn_one`
    does; ``P[t]`` gets the class tree t predicted before learning.  ``M``: the memo
    :func:`predict_proba_one` left for this very row (``(4, n_trees)``: leaf node, rows seen,
    majority and naive Bayes votes), or of width 0; a tree uses its column while it has seen
    no row since.  Returns ``(DONE, 0.0)`` or ``(t, 0.0)`` for a tree that lacks room (call
    again with ``t0 = t`` once it has grown)."""
    T = A.lay.shape[0]
    if t0 == FRESH:
        for t in range(T):
            wt[t] = bagging_weight(frng, lam, w)
            drifted[t] = 0
        t0 = 0
    for t in range(t0, T):
        st, prm = tree_at(A, t)
        if wt[t] > 0.0 and not has_room(st, prm):
            return t, 0.0
        if wt[t] > 0.0:
            if t < M.shape[1] and M[1, t] == st.ints[I_NSEEN]:  # routed and voted just before
                P[t] = learn_step_at(st, prm, np.int64(M[0, t]), x, y, wt[t],
                                     np.int64(M[2, t]), np.int64(M[3, t]))  # fmt: skip
            else:
                P[t] = learn_step(st, prm, x, y, wt[t])
        else:
            st.ints[I_NSEEN] += 1  # a row of weight 0 is only counted
    return DONE, 0.0


@kernel(inline="always")
def _vote_row(PT, i, K, mean, out):
    """``out[:K]``: votes of the trees' classes for row ``i`` of ``PT`` (``(T, n, K)``) plus
    half their mean probability (ties of votes go to the more probable class); ``mean[:K]``
    the mean probabilities."""
    T = PT.shape[0]
    for k in range(K):
        mean[k] = 0.0
        out[k] = 0.0
    for t in range(T):
        for k in range(K):
            mean[k] += PT[t, i, k] / T
        out[argmax(PT[t, i], K)] += 1.0
    for k in range(K):
        out[k] += 0.5 * mean[k]
    return argmax(out, K)


@entry(nogil=True, _nrt=False)
def vote_rows(PT, mean, votes, cls):
    """For each row ``i`` of the trees' probabilities ``PT`` (``(T, n, K)``): ``mean[i]`` the
    mean probabilities, ``cls[i]`` the majority class (see the module docstring); ``votes`` is
    ``(K,)`` scratch."""
    K = PT.shape[2]
    for i in range(PT.shape[1]):
        cls[i] = _vote_row(PT, i, K, mean[i], votes)


@entry(nogil=True, _nrt=False)
def predict_proba_one(A, x, PT, mean, votes, M):
    """The forest's answer for row ``x``: ``mean`` gets the mean class probabilities, the
    majority class is returned (``PT``: ``(T, 1, K)`` scratch, ``votes``: ``(K,)`` scratch).
    Each tree's leaf node, rows seen and votes go to the memo ``M`` (``(4, T)``, see
    :func:`learn_one`)."""
    K = PT.shape[2]
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        node = route(st, x)
        mc, nb = leaf_proba_votes(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT], PT[t, 0])
        M[0, t] = node
        M[1, t] = st.ints[I_NSEEN]
        M[2, t] = mc
        M[3, t] = nb
    return _vote_row(PT, np.int64(0), K, mean, votes)
