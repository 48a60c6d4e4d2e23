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
