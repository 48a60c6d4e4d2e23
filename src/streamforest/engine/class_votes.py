"""A classifier forest's answer: the trees' class probabilities combined into one, by vote.

The engine's passes serve both tasks (:mod:`streamforest.engine.kernels`: a classification
tree learns a row and predicts its class probabilities through the same kernels); what is the
classifiers' own is how the trees' answers combine, here, as :func:`~.kernels.aggregate` is the
regressors'.

A tree's output is a row of class probabilities (``K`` = the width of its class fields, the same
for every tree of an engine).  The forest's answer is the mean of its trees' probabilities and a
majority vote of their classes (each tree's most probable class), ties broken by the mean
probability: :func:`predict_proba_one` (one row) and :func:`vote_rows` (a chunk) compute the
same thing.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..tree_kinds.arena import tree_at
from ..tree_kinds.class_leaves import argmax, leaf_proba_votes
from ..tree_kinds.classification import remember
from ..tree_kinds.state import I_NFEAT
from ..tree_kinds.structure import route


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
    :func:`streamforest.engine.kernels.learn_one`)."""
    K = PT.shape[2]
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        node = route(st, x)
        mc, nb = leaf_proba_votes(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT], PT[t, 0])
        remember(M, t, st, node, mc, nb)
    return _vote_row(PT, np.int64(0), K, mean, votes)
