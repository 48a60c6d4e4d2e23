"""Compiled passes of the batch leaf-weight forests (:mod:`streamforest.batch.hdi_forest`).

A fitted forest is held as padded arrays, one row per tree: ``left``, ``right`` (child node ids,
``-1`` at a leaf), ``feature``, ``threshold`` and ``value`` (the node's mean target).  The training
targets are stored per tree sorted by (leaf, target) and the trees' blocks concatenated, so the
targets of one leaf are a contiguous ascending *run* ``buf[start[t, leaf]:stop[t, leaf]]``.
The conditional distribution at ``x`` (Meinshausen 2006) gives every training row ``i`` the weight
``(1/T) sum_t [leaf_t(x) = leaf_t(x_i)] / |leaf_t(x)|``: one run per tree with the item weight
``1 / (T |leaf|)``.  Quantiles and highest-density intervals of that mixture of runs are read by the
same kernels OnlineQRF uses on its leaf sketches
(:func:`~streamforest.sketches.kll.runs_quantile_many`,
:func:`~streamforest.sketches.kll.runs_sorted` and
:func:`~streamforest.sketches.kll.shortest_interval`, HDI-Forest's Algorithm 1).

The batch forests call their port in the compiled core (``_core.batch``,
src/core/batch/kernels.hpp); these numba kernels stay as the reference of the port's tests
(tests/test_core_batch.py) until the numba core goes."""

from __future__ import annotations

import numpy as np

from ..compiled import entry
from ..sketches.kll import runs_quantile_many, runs_sorted, shortest_interval


@entry(nogil=True)
def forest_apply(left, right, feature, threshold, X, out):
    """``out[i, t]``: the leaf of tree ``t`` that row ``X[i]`` reaches (``x[f] <= c`` goes left)."""
    T = left.shape[0]
    for i in range(X.shape[0]):
        for t in range(T):
            node = 0
            while left[t, node] >= 0:
                if X[i, feature[t, node]] <= threshold[t, node]:
                    node = left[t, node]
                else:
                    node = right[t, node]
            out[i, t] = node


@entry(nogil=True)
def forest_mean(value, leaves, out):
    """``out[i]``: the mean over trees of the value of the leaves ``leaves[i]``."""
    T = leaves.shape[1]
    for i in range(leaves.shape[0]):
        s = 0.0
        for t in range(T):
            s += value[t, leaves[i, t]]
        out[i] = s / T


@entry(nogil=True)
def leaf_mixture_query(buf, start, stop, leaves, qs, masses, out_q, out_lo, out_hi):
    """For every row ``i`` of ``leaves`` (its leaf in each tree): the quantiles ``qs`` (into
    ``out_q[i]``) and the highest-density intervals of the masses ``masses`` (into ``out_lo[i]``,
    ``out_hi[i]``) of the Meinshausen-weighted training targets of its leaves."""
    T = leaves.shape[1]
    cap = 0
    for t in range(T):
        for j in range(start.shape[1]):
            cap = max(cap, stop[t, j] - start[t, j])
    rs = np.empty(T, np.int64)
    re = np.empty(T, np.int64)
    rw = np.empty(T)
    heap = np.empty(T, np.int64)
    hv = np.empty(T)
    cur = np.empty(T, np.int64)
    sv = np.empty(T * cap if masses.shape[0] else 0)
    sw = np.empty(T * cap if masses.shape[0] else 0)
    for i in range(leaves.shape[0]):
        nr = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
        for t in range(T):
            leaf = leaves[i, t]
            if stop[t, leaf] > start[t, leaf]:
                rs[nr] = start[t, leaf]
                re[nr] = stop[t, leaf]
                nr += 1
        total = 0.0
        for r in range(nr):  # every tree holding data weighs 1 / (trees holding data)
            rw[r] = 1.0 / ((re[r] - rs[r]) * nr)
            total += rw[r] * (re[r] - rs[r])
        for k in range(qs.shape[0]):
            out_q[i, k] = runs_quantile_many(buf, rs, re, rw, nr, total, qs[k], hv, cur, heap)
        if masses.shape[0]:
            m = runs_sorted(buf, rs, re, rw, nr, heap, cur, sv, sw)
            for k in range(masses.shape[0]):
                out_lo[i, k], out_hi[i, k] = shortest_interval(sv, sw, m, masses[k])
