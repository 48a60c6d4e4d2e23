"""Drift detectors as components: compiled state updates that a tree, a leaf or a forest plugs in.

A detector's whole state is a small float64 array (allocated by its owner, e.g. a tree's
``TreeState.dd``), updated by one compiled function per observation, so any owner can keep one
per tree or per node and the detector can be replaced without touching the learner.

Today: the Page-Hinkley test.  (ADWIN-style detectors are meant to land here with the same shape:
``N_<NAME>`` floats of state and an ``<name>_update(state, value, ...) -> fired`` kernel.)
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .stats import welford_update

# Page-Hinkley state: cumulative sum and its minimum; running statistic of the observed values
PH_M, PH_MMIN, PH_W, PH_HI, PH_LO, PH_M2 = range(6)
N_PH = 6


@njit(cache=True, inline="always")
def page_hinkley_update(state, e, delta, lam, min_n):
    """Page-Hinkley test (Page 1954; Hinkley 1971) for an increase of the mean of ``e``, on
    values standardised by their own running mean and sd since the detector started (so one
    threshold fits any scale): ``m_T = sum_t ((e_t - mean) / sd - delta)`` fires when
    ``m_T - min_t m_t > lam`` (after ``min_n`` values).  Returns whether it fired."""
    state[PH_W], state[PH_HI], state[PH_LO], state[PH_M2] = welford_update(
        state[PH_W], state[PH_HI], state[PH_LO], state[PH_M2], e, 1.0
    )
    if state[PH_W] < min_n or state[PH_M2] <= 0.0:
        return False
    z = (e - (state[PH_HI] + state[PH_LO])) / np.sqrt(state[PH_M2] / state[PH_W])
    state[PH_M] += z - delta
    if state[PH_M] < state[PH_MMIN]:
        state[PH_MMIN] = state[PH_M]
    return state[PH_M] - state[PH_MMIN] > lam


# Page-Hinkley on a row of a 2-d state (one detector per tree node), as Seah's thesis (Alg. 4.4,
# after Ikonomovska et al. 2011): columns count, mean error, cumulative sum, its minimum, and the
# normaliser fixed when the detector started (the sd of the targets then).
PHN_N, PHN_EBAR, PHN_SUM, PHN_MIN, PHN_SD0 = range(5)
N_PHN = 5


@njit(cache=True, inline="always")
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
