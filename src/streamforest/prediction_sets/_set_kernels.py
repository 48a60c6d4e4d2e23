"""Compiled kernels of :class:`~streamforest.ConformalClassifier`: conformity scores of classes
(LAC, APS, RAPS), the per-row uniforms that randomise APS/RAPS, and the pass over a chunk that
reads each row's conformal thresholds from the FIFO calibration set before adding the row's score.

The calibration set is two arrays of capacity ``C``: ``ring`` (scores in arrival order, the
FIFO) and ``srt`` (the same scores sorted ascending), with ``state = [m, pos]`` (how many are
held, the ring slot of the next score).  Adding a score to a full set first removes the oldest.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..sorting import argsort_into

LAC, APS, RAPS = 0, 1, 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@kernel(inline="always")
def _splitmix(z):
    """SplitMix64's finaliser of the unsigned 64-bit ``z``."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@entry
def row_uniforms(seed, start, out):
    """``out[i]`` = a uniform in [0, 1) that depends only on ``seed`` and the row's position
    ``start + i`` in the stream (so chunking never changes it): SplitMix64 of
    ``seed * golden + position``, its top 53 bits."""
    s = np.uint64(seed) * _GOLDEN
    for i in range(out.shape[0]):
        z = _splitmix(s + np.uint64(start + i))
        out[i] = np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@entry
def class_scores(P, U, known, kind, penalty, k_reg, out):
    """Conformity score of every class (column) of every row; a larger score is less conforming.

    Parameters
    ----------
    P : float64 (n, K)
        Class probabilities (rows sum to 1).
    U : float64 (n,)
        The rows' uniforms for APS/RAPS (all 1.0: the non-randomised scores).
    known : int64 (n,)
        Columns that exist for row i (``0 .. known[i] - 1``; the others get NaN, which is in
        no set); row i's score of a label that is not among them is written to ``out[i, K]``:
        the score of an extra class of probability 0 ranked last among ``known[i]`` columns.
    kind : int
        ``LAC``: ``1 - p_y``.  ``APS``: the probability of the classes ranked above ``y`` plus
        ``U p_y`` (classes ranked by decreasing probability, ties by column).  ``RAPS``: APS plus
        ``penalty * max(0, rank_y - k_reg)`` (``rank_y`` from 1).
    out : float64 (n, K + 1)
    """
    n, K = P.shape
    negated = np.empty(K)
    order = np.empty(K, dtype=np.int64)
    for i in range(n):
        row = P[i]
        kn = known[i]
        for k in range(kn):
            negated[k] = -row[k]
        argsort_into(negated, np.int64(kn), order)  # by decreasing probability, ties by column
        cum = 0.0
        for r in range(kn):
            k = order[r]
            p = row[k]
            if kind == LAC:
                out[i, k] = 1.0 - p
            else:
                s = cum + U[i] * p
                if kind == RAPS:
                    s += penalty * max(0, r + 1 - k_reg)
                out[i, k] = s
            cum += p
        for k in range(kn, K):
            out[i, k] = np.nan  # not a column yet for this row: in no set
        if kind == LAC:
            out[i, K] = 1.0
        elif kind == APS:
            out[i, K] = cum
        else:
            out[i, K] = cum + penalty * max(0, kn + 1 - k_reg)


@kernel(inline="always")
def _quantile(srt, m, alpha):
    """The conformal threshold at level ``alpha`` of ``m`` sorted scores: the
    ``ceil((m + 1)(1 - alpha))``-th smallest, ``+inf`` if that exceeds ``m``."""
    k = int(np.ceil((m + 1) * (1.0 - alpha) - 1e-9))
    if k < 1:
        k = 1
    if k > m:
        return np.inf
    return srt[k - 1]


@entry
def thresholds(srt, state, levels, out):
    """``out[l]``: the current threshold at ``levels[l]``."""
    for j in range(levels.shape[0]):
        out[j] = _quantile(srt, state[0], levels[j])


@kernel(inline="always")
def _push(ring, srt, state, s):
    C = ring.shape[0]
    m = state[0]
    pos = state[1]
    if m == C:  # full: the oldest score leaves
        old = ring[pos]
        j = np.searchsorted(srt[:m], old)
        for k in range(j, m - 1):
            srt[k] = srt[k + 1]
        m -= 1
    j = np.searchsorted(srt[:m], s, side="right")
    for k in range(m, j, -1):
        srt[k] = srt[k - 1]
    srt[j] = s
    ring[pos] = s
    state[0] = m + 1
    state[1] = (pos + 1) % C


@entry
def calibration_pass(scores, use, levels, ring, srt, state, thr):
    """Rows in order: ``thr[i, l]`` = the threshold at ``levels[l]`` from the calibration set as
    it is before row i, then row i's score ``scores[i]`` joins the set if ``use[i]`` (the oldest
    leaves when it is full).  ``thr`` may have no columns (learning only)."""
    for i in range(scores.shape[0]):
        for j in range(thr.shape[1]):
            thr[i, j] = _quantile(srt, state[0], levels[j])
        if use[i]:
            _push(ring, srt, state, scores[i])
