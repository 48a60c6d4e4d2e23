"""Compiled passes of :class:`~streamforest.AdaptiveConformal`: adaptive conformal inference (ACI)
and conformal PID control over the intervals of a base model, rows in order.

Both take the base model's intervals for the rows (computed before the base learnt each row) and,
per tracked level ``r``, produce the wrapper's own interval, the reported (nested) interval and,
when learning, update the level's controller with the error of its own interval.  An empty set
is carried as ``(+inf, -inf)`` while nesting and reported as the point ``(pred, pred)``.

Each row has a ``mode``: 0 serve (own interval from the current state, written to ``rec``), 1
serve then learn (prequential), 2 learn from ``rec``, the record of the interval served for the
row earlier (``[own_lo, own_hi, base_lo, base_hi, ..., served_at]`` per level; ACI keeps in
``base_lo`` whether the row teaches), 3 skip.  So the controllers learn from the intervals that
were served, whenever the label comes.

**Stale feedback.**  ``served_at`` is the level's count of learnt rows when the row was served,
so a label knows its *lag*: the rows learnt between serving its row and learning it (0 one row
at a time, up to ``b - 1`` in batches of ``b``, ``d`` with labels ``d`` rows late).  A controller
that integrates the served misses with a fixed step ``gamma`` and feedback ``lag`` rows stale is
a delayed integrator: once ``gamma * lag`` passes about 1 it overshoots and swings between the
whole line and narrow intervals (measured: ACI at batches of 1000 on ``wind``, MER 0.134, worst
window 0.35).  So every step on a served miss is capped at :func:`lag_step`: at most
``LAG_GAIN / (1 + lag)`` per unit of the level (``LAG_GAIN = 1/e``: with a constant delay the
loop ``x_t = x_{t-1} - (LAG_GAIN / d) x_{t-d}`` is critically damped; in batches of ``b`` the
steps of one batch add up to about ``LAG_GAIN (1 + log(b gamma / LAG_GAIN))``, 1.3 at ``b =
1000``); with ``lag <= LAG_GAIN / gamma - 1`` (one row at a time, and batches of up to 73 rows
at ``gamma = 0.005``) the step is ``gamma``, the papers' method."""

from __future__ import annotations

import math

import numpy as np

from ..compiled import entry, kernel

#: The staleness cap of the steps on served misses (see the module docstring).
LAG_GAIN = 1.0 / math.e

#: ACI's ladder around a level ``a``: ``expit(logit(a) + LADDER_STEP * k)`` for ``k`` in
#: ``LADDER_K``.  For a = 0.1 it spans 0.0099 .. 0.25 in 13 levels.
LADDER_STEP = 0.3
LADDER_K = np.arange(-8, 5)
#: :func:`aci_plan`'s plans by the bytes of their levels (the last few sets of levels)
_PLANS: dict[bytes, tuple] = {}


def ladder(alpha: float) -> np.ndarray:
    """ACI's ladder of base levels around ``alpha`` (ascending)."""
    z = math.log(alpha / (1 - alpha)) + LADDER_STEP * LADDER_K
    return np.clip(1.0 / (1.0 + np.exp(-z)), 1e-9, 1 - 1e-9)


def aci_plan(levels: np.ndarray) -> tuple:
    """``(union, lad_idx, lad_logit)`` for :func:`aci_pass`: the base levels to ask for (the
    union of the levels' ladders), each level's ladder as columns of them and its logits.  A
    function of the levels alone, kept for the last few sets of levels (a one-row call asks for
    it twice): the arrays are shared and never written."""
    key = levels.tobytes()
    plan = _PLANS.get(key)
    if plan is None:
        ladders = [ladder(float(a)) for a in levels]
        union = np.unique(np.concatenate(ladders))
        idx = np.array([np.searchsorted(union, lad) for lad in ladders], dtype=np.int64)
        logit = np.log(np.stack(ladders) / (1 - np.stack(ladders)))
        if len(_PLANS) >= 64:
            _PLANS.clear()
        plan = _PLANS[key] = (union, idx, np.ascontiguousarray(logit))
    return plan


@kernel(inline="always")
def lag_step(step, lag, cap):
    """``step`` capped at ``cap / (1 + lag)`` (``cap``: :data:`LAG_GAIN` in the controller's
    units) for a label learnt ``lag`` rows after its row was served."""
    return min(step, cap / (1.0 + lag))


@kernel(inline="always")
def _logit(a):
    return np.log(a / (1.0 - a))


@kernel(inline="always")
def _blend(a, b, w, low):
    """Endpoint at weight ``w`` between ``a`` (w = 0) and ``b`` (w = 1): linear when both are
    finite, else the outer one (``low``: the smaller) unless ``w`` is 0."""
    if w == 0.0:
        return a
    if np.isfinite(a) and np.isfinite(b):
        return a + w * (b - a)
    return min(a, b) if low else max(a, b)


@kernel(inline="always")
def _nest(order, own_lo, own_hi, pred, out_lo, out_hi, i):
    """Row i's reported intervals: level ``order[k]`` (ascending levels) gets the hull of its own
    interval and those of every larger level; an empty hull is reported as ``(pred, pred)``."""
    R = order.shape[0]
    lo = np.inf
    hi = -np.inf
    for k in range(R - 1, -1, -1):
        r = order[k]
        lo = min(lo, own_lo[r])
        hi = max(hi, own_hi[r])
        if lo > hi:
            out_lo[i, r] = pred[i]
            out_hi[i, r] = pred[i]
        else:
            out_lo[i, r] = lo
            out_hi[i, r] = hi


@entry(nogil=True)
def aci_pass(
    blo, bhi, pred, y, mode, rec, lad_idx, lad_logit, alphas, learns, gamma, alpha_t, steps,
    order, out_lo, out_hi, own_lo, own_hi,
):  # fmt: skip
    """ACI (Gibbs & Candes 2021).  ``blo/bhi[i, j]``: the base interval of row i at the j-th
    level of the union ladder; level r's ladder is ``lad_idx[r]`` (columns, ascending levels) at
    ``logit`` values ``lad_logit[r]``.  Level r's own interval at ``alpha_t[r]``:

    - ``alpha_t <= 0``: ``(-inf, inf)``;  ``alpha_t >= 1``: empty (an error whatever ``y``);
    - else the base interval interpolated between the two ladder levels around ``alpha_t``
      (linearly in logit(level); clamped to the ladder's end levels outside it).

    When learning and ``learns[r]``: ``alpha_t[r] += lag_step(gamma, lag, LAG_GAIN) * (alphas[r]
    - err)``, ``err`` the miss of the own interval that was served (an empty one always misses),
    ``lag`` the rows the level learnt between serving and learning the row (``steps[r]``: the
    level's learnt rows).  A row served an infinite interval while ``0 < alpha_t < 1`` (the base
    model's interval there was not finite: an unfitted or warming-up model) teaches nothing, as
    in the score-based methods: it says nothing of the level, and counted as covered it would
    push ``alpha_t`` towards 1 (by ``gamma * alpha`` a row; 0.5 after a first batch of 1000
    rows served by the unfitted model)."""
    n = y.shape[0]
    R = alphas.shape[0]
    K = lad_idx.shape[1]
    LAG = rec.shape[2] - 1
    for i in range(n):
        md = mode[i]
        if md == 3:
            continue
        for r in range(R):
            if md == 2:
                own_lo[r] = rec[i, r, 0]
                own_hi[r] = rec[i, r, 1]
                continue
            rec[i, r, LAG] = steps[r]
            a = alpha_t[r]
            if a <= 0.0:
                own_lo[r] = -np.inf
                own_hi[r] = np.inf
            elif a >= 1.0:
                own_lo[r] = np.inf
                own_hi[r] = -np.inf
            else:
                z = _logit(a)
                k = 0
                while k < K - 2 and lad_logit[r, k + 1] <= z:
                    k += 1
                z0 = lad_logit[r, k]
                z1 = lad_logit[r, k + 1]
                w = (z - z0) / (z1 - z0)
                w = min(max(w, 0.0), 1.0)
                j0 = lad_idx[r, k]
                j1 = lad_idx[r, k + 1]
                own_lo[r] = _blend(blo[i, j0], blo[i, j1], w, True)
                own_hi[r] = _blend(bhi[i, j0], bhi[i, j1], w, False)
            rec[i, r, 0] = own_lo[r]
            rec[i, r, 1] = own_hi[r]
            # (teaches: the level's own interval, not the base's infinite one)
            finite = np.isfinite(own_lo[r]) and np.isfinite(own_hi[r])
            rec[i, r, 2] = 1.0 if (a <= 0.0 or a >= 1.0 or finite) else 0.0
        _nest(order, own_lo, own_hi, pred, out_lo, out_hi, i)
        if md == 0:
            continue
        for r in range(R):
            if not learns[r]:
                continue
            lag = max(steps[r] - rec[i, r, LAG], 0.0)
            steps[r] += 1  # (every learnt row: a lag counts the rows, teaching or not)
            if rec[i, r, 2] == 0.0:
                continue
            miss = own_lo[r] > own_hi[r] or not (own_lo[r] <= y[i] <= own_hi[r])
            step = lag_step(gamma, lag, LAG_GAIN)
            alpha_t[r] += step * (alphas[r] - (1.0 if miss else 0.0))


@kernel(inline="always")
def _scale(win, m):
    """Range (max - min) of the first ``m`` recent scores (0 for fewer than two)."""
    if m < 2:
        return 0.0
    lo = win[0]
    hi = win[0]
    for j in range(1, m):
        lo = min(lo, win[j])
        hi = max(hi, win[j])
    return hi - lo


@kernel(inline="always")
def _integrator(s, t, ki, csat, scale):
    """``ki * scale * tan(s log(t + 1) / (csat (t + 1)))``, +-inf once the argument leaves
    ``(-pi/2, pi/2)`` (the saturation that bounds the long-run error)."""
    x = s * np.log(t + 1.0) / (csat * (t + 1.0))
    if x >= np.pi / 2:
        return np.inf
    if x <= -np.pi / 2:
        return -np.inf
    return ki * scale * np.tan(x)


@entry(nogil=True)
def pid_pass(
    blo, bhi, pred, y, mode, rec, alphas, learns, lr, ki, csat, p, isum, steps, win, win_n,
    win_pos, order, out_lo, out_hi, own_lo, own_hi,
):  # fmt: skip
    """Conformal PID control (Angelopoulos, Candes & Tibshirani 2023), quantile tracking plus
    a saturating integrator, no scorecaster.  ``blo/bhi[i, r]``: the base interval of row i at
    ``alphas[r]``; the score of ``y`` is ``s = max(lo - y, y - hi)`` (how far outside, negative
    inside) and the own interval ``[lo - q, hi + q]`` with ``q = p + I``: ``p`` the quantile
    tracker, ``I`` the integrator of ``sum (err - alpha)`` (``q = inf``: the whole line;
    ``-inf``: empty).  Both gains are proportional to ``scale``, the range of the level's last
    ``win.shape[1]`` scores.  A row whose base interval is not finite leaves the level's state
    alone (its score says nothing).  When learning and ``learns[r]`` (``err``: the miss of the
    own interval that was served, the score from the base interval it was served from):
    ``p += lag_step(lr, lag, LAG_GAIN) * scale * (err - alpha)`` (``lag``: the level's rows
    learnt between serving and learning the row), ``isum += err - alpha``, and the score enters
    the window; ``steps += 1`` for every learnt row (the integrator's ``t``)."""
    n = y.shape[0]
    R = alphas.shape[0]
    W = win.shape[1]
    LAG = rec.shape[2] - 1
    for i in range(n):
        md = mode[i]
        if md == 3:
            continue
        for r in range(R):
            if md == 2:
                own_lo[r] = rec[i, r, 0]
                own_hi[r] = rec[i, r, 1]
                continue
            lo = blo[i, r]
            hi = bhi[i, r]
            rec[i, r, 2] = lo
            rec[i, r, 3] = hi
            rec[i, r, LAG] = steps[r]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                own_lo[r] = lo
                own_hi[r] = hi
            else:
                q = p[r] + _integrator(isum[r], steps[r], ki, csat, _scale(win[r], win_n[r]))
                own_lo[r] = lo - q
                own_hi[r] = hi + q
            rec[i, r, 0] = own_lo[r]
            rec[i, r, 1] = own_hi[r]
        _nest(order, own_lo, own_hi, pred, out_lo, out_hi, i)
        if md == 0:
            continue
        for r in range(R):
            if not learns[r]:
                continue
            lag = max(steps[r] - rec[i, r, LAG], 0.0)
            steps[r] += 1  # (every learnt row: a lag counts the rows, teaching or not)
            lo = rec[i, r, 2]
            hi = rec[i, r, 3]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                continue
            miss = 1.0 if not (own_lo[r] <= y[i] <= own_hi[r]) else 0.0
            scale = _scale(win[r], win_n[r])
            p[r] += lag_step(lr, lag, LAG_GAIN) * scale * (miss - alphas[r])
            isum[r] += miss - alphas[r]
            win[r, win_pos[r]] = max(lo - y[i], y[i] - hi)
            win_pos[r] = (win_pos[r] + 1) % W
            if win_n[r] < W:
                win_n[r] += 1
