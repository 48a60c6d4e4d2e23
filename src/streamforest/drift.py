"""Drift detectors as components: compiled state updates that a tree, a leaf or a forest plugs in.

A detector's whole state is a small float64 array (allocated by its owner, e.g. a tree's
``TreeState.drift_detector``), updated by one compiled function per observation, so any owner can
keep one per tree or per node and the detector can be replaced without touching the learner.

- :func:`page_hinkley_update`: the Page-Hinkley test as Seah (2021, §4.2.2, Algorithm 4.4) and
  FIMT-DD (Ikonomovska et al. 2011) specify it, on the prequential absolute error of a model
  normalised by the standard deviation of the targets when the detector started; it also gives
  *warnings* (a lower threshold) for owners that prepare a replacement (ARF-style background
  trees, see :mod:`streamforest.engine.core`).  The trees' detector.
- :func:`page_hinkley_standardised_update`: the earlier variant (errors standardised by their
  own running mean and sd), kept for comparison.

(ADWIN-style detectors are meant to land here with the same shape: ``N_<NAME>`` floats of state
and an ``<name>_update(state, ...)`` kernel.)
"""

from __future__ import annotations

import numpy as np

from .compiled import entry, kernel
from .stats import welford_update

# ------------------------------------------------------------------------------------------------
# Page-Hinkley (Seah 2021 §4.2.2; Ikonomovska et al. 2011)
PH_N = 0  # values seen since the detector started (warm-up included)
PH_YM = 1  # warm-up: running mean of the targets
PH_YM2 = 2  # warm-up: running sum of squared deviations of the targets
PH_SD = 3  # the normaliser: sd of the targets over the warm-up (0 while warming up)
PH_T = 4  # normalised errors seen after the warm-up
PH_EBAR = 5  # their mean, e_bar_t
PH_M = 6  # m_t = sum_t (e_t - e_bar_t - alpha)
PH_MMIN = 7  # M_t = min_t m_t
PH_WARNED = 8  # 1 after a warning, until it is withdrawn or the detector fires
PH_WARN = 9  # configuration written by the owner: warning threshold (0: no warnings)
N_PH = 10

PH_CLIP = 2.0  # a normalised error counts at most this much (one outlier cannot fire the test)

# signals returned by page_hinkley_update (a tree keeps the last one in ints[I_DRIFT])
PH_NONE = 0
PH_DRIFT = 1  # m_t - M_t > lambda: the error rose
PH_WARNING = 2  # m_t - M_t > the warning threshold (once, until withdrawn)
PH_WITHDRAWN = 3  # after a warning, m_t fell back to a new minimum: the rise is cancelled


def page_hinkley_init(state: np.ndarray, warning: float = 0.0) -> None:
    """A fresh detector in ``state`` (length ``N_PH``), giving warnings above ``warning``
    (0: none)."""
    state[:] = 0.0
    state[PH_WARN] = warning


@kernel(inline="always")
def _ph_restart(state):
    w = state[PH_WARN]
    for k in range(state.shape[0]):
        state[k] = 0.0
    state[PH_WARN] = w


@kernel(inline="always")
def page_hinkley_update(state, y, pred, alpha, lam, warmup):
    """One step of the Page-Hinkley test on the prediction error of target ``y``.

    As specified by Seah (2021, Algorithm 4.4, after Ikonomovska et al. 2011; their defaults
    ``alpha = 0.005``, ``lam = 50``): the error ``e_t = |y_t - pred_t| / sd`` is normalised by
    the standard deviation of the targets when the detector started (here: over its first
    ``warmup`` targets, extended while they are all equal), which the thesis keeps fixed so that
    a gradual drift does not inflate it; with ``e_bar_t`` the mean of ``e_1..e_t``,
    ``m_t = sum (e_t - e_bar_t - alpha)``, ``M_t = min m`` and the test fires when
    ``m_t - M_t > lam``.

    Robustness (measured on shuffled real data sets, see ``benchmarks/drift_false_alarms.py``):
    ``e_t`` is clipped at ``PH_CLIP`` (2 target sds), so a single outlier (heavy-tailed targets:
    house prices, CPU loads) moves ``m`` by at most 2 and the test needs a sustained rise of the
    error; a rise of ``d`` target sds still fires after about ``lam / min(d, 2)`` examples.

    Warnings (when the owner set ``state[PH_WARN] > 0``): the same statistic above the lower
    threshold ``state[PH_WARN]`` gives ``PH_WARNING`` once; if ``m`` then falls back to a new
    minimum before the test fires, ``PH_WITHDRAWN``.  After ``PH_DRIFT`` the detector restarts
    (warm-up included).  Returns the signal (``PH_NONE`` = 0 mostly)."""
    state[PH_N] += 1.0
    sd = state[PH_SD]
    if sd <= 0.0:  # warm-up: the targets' sd
        n = state[PH_N]
        d = y - state[PH_YM]
        state[PH_YM] += d / n
        state[PH_YM2] += d * (y - state[PH_YM])
        if n >= warmup and state[PH_YM2] > 0.0:
            state[PH_SD] = np.sqrt(state[PH_YM2] / n)
        return PH_NONE
    e = abs(y - pred) / sd
    if not e <= PH_CLIP:  # NaN or infinite too
        e = PH_CLIP
    t = state[PH_T] + 1.0
    state[PH_T] = t
    state[PH_EBAR] += (e - state[PH_EBAR]) / t
    m = state[PH_M] + e - state[PH_EBAR] - alpha
    state[PH_M] = m
    if m < state[PH_MMIN]:
        state[PH_MMIN] = m
        if state[PH_WARNED] != 0.0:
            state[PH_WARNED] = 0.0
            return PH_WITHDRAWN
        return PH_NONE
    ph = m - state[PH_MMIN]
    if ph > lam:
        _ph_restart(state)
        return PH_DRIFT
    if state[PH_WARN] > 0.0 and ph > state[PH_WARN] and state[PH_WARNED] == 0.0:
        state[PH_WARNED] = 1.0
        return PH_WARNING
    return PH_NONE


@entry
def page_hinkley_scan(state, y, pred, alpha, lam, warmup, out):
    """Run :func:`page_hinkley_update` over a stream: ``out[i]`` the signal after row ``i``
    (tests and benchmarks)."""
    for i in range(y.shape[0]):
        out[i] = page_hinkley_update(state, y[i], pred[i], alpha, lam, warmup)


# ------------------------------------------------------------------------------------------------
# the earlier variant: errors standardised by their own running mean and sd
SPH_M, SPH_MMIN, SPH_W, SPH_HI, SPH_LO, SPH_M2 = range(6)
N_SPH = 6


@kernel(inline="always")
def page_hinkley_standardised_update(state, e, delta, lam, min_n):
    """Page-Hinkley test (Page 1954; Hinkley 1971) for an increase of the mean of ``e``, on
    values standardised by their own running mean and sd since the detector started:
    ``m_T = sum_t ((e_t - mean) / sd - delta)`` fires when ``m_T - min_t m_t > lam`` (after
    ``min_n`` values).  Returns whether it fired.

    The trees used it until the thesis' test replaced it: standardising by the errors' own sd
    lets one heavy-tailed error tens of sds away fire it at once (measured on shuffled real sets,
    most of its rare false alarms were such single errors)."""
    state[SPH_W], state[SPH_HI], state[SPH_LO], state[SPH_M2] = welford_update(
        state[SPH_W], state[SPH_HI], state[SPH_LO], state[SPH_M2], e, 1.0
    )
    if state[SPH_W] < min_n or state[SPH_M2] <= 0.0:
        return False
    z = (e - (state[SPH_HI] + state[SPH_LO])) / np.sqrt(state[SPH_M2] / state[SPH_W])
    state[SPH_M] += z - delta
    if state[SPH_M] < state[SPH_MMIN]:
        state[SPH_MMIN] = state[SPH_M]
    return state[SPH_M] - state[SPH_MMIN] > lam


# Page-Hinkley on a row of a 2-d state (one detector per tree node), as Seah's thesis (Alg. 4.4,
# after Ikonomovska et al. 2011): columns count, mean error, cumulative sum, its minimum, and the
# normaliser fixed when the detector started (the sd of the targets then).
PHN_N, PHN_EBAR, PHN_SUM, PHN_MIN, PHN_SD0 = range(5)
N_PHN = 5


@kernel(inline="always")
def page_hinkley_row_update(state, r, e, alpha, lam):
    """Feed absolute error ``e`` to the detector in row ``r`` of ``state``: with ``e`` divided by
    the row's normaliser, ``ebar_t`` the running mean of the errors, ``m_t = m_{t-1} + e_t -
    ebar_t - alpha`` and ``M_t = min m``; fires (returns True) when ``m_t - M_t > lam``.  Dividing
    by the sd of the targets *when the detector started* keeps a slow rise of the error visible
    (the thesis' remedy for gradual changes)."""
    sd0 = state[r, PHN_SD0]
    if sd0 > 0.0:
        e = e / sd0
    n = state[r, PHN_N] + 1.0
    state[r, PHN_N] = n
    ebar = state[r, PHN_EBAR] + (e - state[r, PHN_EBAR]) / n
    state[r, PHN_EBAR] = ebar
    m = state[r, PHN_SUM] + e - ebar - alpha
    state[r, PHN_SUM] = m
    if m < state[r, PHN_MIN]:
        state[r, PHN_MIN] = m
        return False
    return m - state[r, PHN_MIN] > lam
