"""Compiled method pass of :class:`~streamforest.intervals.normalized.NormalizedConformal`:
prequential, spread-normalised conformal scores in a FIFO calibration ring kept sorted."""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from .scores import sorted_half_width, ss_insert, ss_update

#: While the error level has seen fewer rows than this, a learnt row's score is scaled by the
#: level *including* its own residual (a level of two or three residuals is too noisy: one
#: large residual after two small ones would score 10+ and set the 0.01 intervals of a small
#: stream for its whole length).
LEVEL_WARMUP = 20

#: The drift guard (``guard=True``): a one-sided CUSUM ``S = max(0, S + u - 1/2 - GUARD_K)`` on
#: the rank ``u`` (in (0, 1)) of each learnt row's score among the calibration scores (uniform
#: on exchangeable data, so ``S`` drifts down and rarely passes ``GUARD_H``; a run of large
#: scores drives it up).  While ``S > GUARD_H`` the half-width's quantile is the larger of the
#: plain one and a recency-weighted one (weights ``GUARD_RHO ** age``, the test point's weight 1
#: at ``+inf``: Barber, Candes, Ramdas & Tibshirani 2023, non-exchangeable conformal prediction).
GUARD_K = 0.05
GUARD_H = 5.0
GUARD_RHO = 0.99
#: Calibration scores needed before the guard's statistic moves.
GUARD_MIN = 20


@kernel(inline="always")
def scale_of(spread, mean, offset, normalize):
    """The scale of a score: ``spread / mean + offset`` when normalising (``mean`` the mean spread
    of the calibration members; 1 while it is 0, i.e. no spread is known yet), else 1.  The
    spread enters relative to its current mean, so a global change of the spreads over time
    (the trees agreeing more as they grow) does not change the scores' distribution."""
    if not normalize or not mean > 0.0:
        return 1.0
    return spread / mean + offset


@entry(inline="always")
def weighted_half_width(ss, order, size, head, cap, rho, alpha):
    """The weighted conformal quantile of the sorted scores ``ss[:size]`` (``order[k]`` the
    ring slot of the k-th smallest; the slot written last is ``head - 1``): the smallest score
    ``s`` with ``sum(w_i, s_i <= s) / (sum(w_i) + 1) >= 1 - alpha``, ``w_i = rho ** age_i``
    (age 0 for the newest).  When no score reaches it: ``inf`` while the ring is not full (as
    the plain rank is for a small set), the largest score once it is (so after
    ``calibration_size`` rows the guard never makes an interval infinite)."""
    if size == 0:
        return np.inf
    tot = 1.0 + (1.0 - rho**size) / (1.0 - rho)
    need = (1.0 - alpha) * tot - 1e-12
    c = 0.0
    for k in range(size):
        age = (head - 1 - order[k]) % cap
        c += rho**age
        if c >= need:
            return ss[k]
    return ss[size - 1] if size >= cap else np.inf


@kernel(inline="always")
def score_rank(ss, size, v):
    """The mid-rank of ``v`` among the sorted scores ``ss[:size]``, in (0, 1)."""
    lo = np.searchsorted(ss[:size], v, side="left")
    hi = np.searchsorted(ss[:size], v, side="right")
    return (0.5 * (lo + hi) + 0.5) / (size + 1.0)


@entry(nogil=True)
def normalized_pass(size, ring, score, order, pos, ss, cspread, level, span, yhat, spread, y, learn,
                    normalize, offset, alphas, half, guard):  # fmt: skip
    """Rows in order.  Row i's scale is ``L * g``: ``L = level[0]`` the running mean of the
    recent absolute residuals (the mean of the first ``span`` rows', then an exponential
    average of span ``span``; 1 when ``span == 0``) and ``g`` :func:`scale_of` of
    ``spread[i]``.  ``half[i, a]``: the ``ceil((n + 1)(1 - alphas[a]))``-th smallest of the
    ``n`` calibration scores before row i (``inf`` when that rank exceeds ``n``), times the
    scale.  Then, when ``learn``, row i enters the calibration ring (evicting the oldest member
    once full) with the score ``|y[i] - yhat[i]| / scale`` (0 for a zero residual, ``inf`` for
    another while the scale is 0; while ``L`` has seen fewer than :data:`LEVEL_WARMUP` rows
    the row's scale uses ``L`` with the row's own residual averaged in, so the first row is
    scaled by its own residual), and ``L`` learns the residual.  ``yhat`` and ``spread`` are
    the forest's prediction and spread for row i made *before* learning it, the same kind of
    prediction as at test time, so the scores are exchangeable with the test score; dividing
    by ``L`` keeps them so while the forest's errors shrink as it learns (or grow after a
    drift).  Members never leave otherwise (tree replacement does not touch them).
    ``guard``: ``[on, S]``; when ``on`` and ``S > GUARD_H`` the quantile is the larger of the
    plain and the recency-weighted one (:data:`GUARD_K`); a learnt row updates ``S`` with its
    score's rank before it enters.  Returns the new size."""
    c = ring[1]
    A = alphas.shape[0]
    tot = 0.0
    for k in range(size):
        tot += cspread[order[k]]
    lev = level[0]
    cnt = level[1]
    for i in range(y.shape[0]):
        g = scale_of(spread[i], tot / size if size > 0 else 0.0, offset, normalize)
        sc = g * lev if span > 0 else g
        alarm = guard[0] > 0.0 and guard[1] > GUARD_H
        for a in range(A):
            q = sorted_half_width(ss, size, alphas[a])
            if alarm:
                q = max(q, weighted_half_width(ss, order, size, ring[0], c, GUARD_RHO, alphas[a]))
            half[i, a] = q * sc if np.isfinite(q) else q
        if not learn:
            continue
        r = abs(y[i] - yhat[i])
        if span > 0 and cnt < LEVEL_WARMUP:  # a young level: it includes the row's residual
            w = min(cnt, float(span))
            sc = g * (lev * w + r) / (w + 1.0)
        if sc > 0.0:
            v = r / sc
        else:
            v = 0.0 if r == 0.0 else np.inf
        if guard[0] > 0.0 and size >= GUARD_MIN:
            guard[1] = max(0.0, guard[1] + score_rank(ss, size, v) - 0.5 - GUARD_K)
        s = ring[0]
        ring[0] = (s + 1) % c
        if pos[s] >= 0:
            tot -= cspread[s]
            score[s] = v
            ss_update(order, pos, ss, size, v, s)
        else:
            score[s] = v
            ss_insert(order, pos, ss, size, v, s)
            size += 1
        cspread[s] = spread[i]
        tot += spread[i]
        if span > 0:
            cnt += 1.0
            lev += (r - lev) / min(cnt, float(span))
    level[0] = lev
    level[1] = cnt
    return size


@entry(nogil=True)
def tree_spread(P, out):
    """``out[i]``: the standard deviation of the trees' predictions ``P[:, i]``."""
    T, n = P.shape
    for i in range(n):
        m = 0.0
        for t in range(T):
            m += P[t, i]
        m /= T
        v = 0.0
        for t in range(T):
            d = P[t, i] - m
            v += d * d
        out[i] = np.sqrt(v / T)


@entry(nogil=True, _nrt=False)
def tree_mean(P):
    """The mean of the trees' predictions ``P`` (one row), in the order of the forest's
    aggregation (:func:`streamforest.engine.kernels.aggregate`)."""
    s = 0.0
    for t in range(P.shape[0]):
        s += P[t]
    return s / P.shape[0]
