"""How :class:`~streamforest.AdaptiveConformal`'s compiled passes (``_core.intervals.aci_pass``,
``pid_pass`` and ``online_pass``; ``src/core/intervals/controllers.hpp`` and ``online.hpp``) run
adaptive conformal inference (ACI), conformal PID control and the online controllers over the
intervals of a base model, rows in order; and ACI's ladder of base levels (:func:`aci_plan`).

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
window 0.35).  So every step on a served miss is capped (``lag_step``): at most
``LAG_GAIN / (1 + lag)`` per unit of the level (``LAG_GAIN = 1/e``: with a constant delay the
loop ``x_t = x_{t-1} - (LAG_GAIN / d) x_{t-d}`` is critically damped; in batches of ``b`` the
steps of one batch add up to about ``LAG_GAIN (1 + log(b gamma / LAG_GAIN))``, 1.3 at ``b =
1000``); with ``lag <= LAG_GAIN / gamma - 1`` (one row at a time, and batches of up to 73 rows
at ``gamma = 0.005``) the step is ``gamma``, the papers' method."""

from __future__ import annotations

import math

import numpy as np

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
    """``(union, lad_idx, lad_logit)`` for ``aci_pass``: the base levels to ask for (the
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


def dtaci_eta(alpha: float, interval: int, experts: int) -> float:
    """DtACI's learning rate of the experts' weights at level ``alpha`` (Gibbs & Candes 2022,
    with the interval ``I`` and ``experts`` experts)."""
    a = alpha
    denom = ((1 - a) ** 2 * a**3 + a**2 * (1 - a) ** 3) / 3
    return math.sqrt(3 / interval) * math.sqrt((math.log(interval * experts) + 2) / denom)
