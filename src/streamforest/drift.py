"""Drift detectors as components: the state layout of the detectors a tree, a leaf or a forest
plugs in (their updates are the compiled core's, ``src/core/drift/page_hinkley.hpp``).

A detector's whole state is a small float64 array (allocated by its owner, e.g. a tree's
``TreeState.drift_detector``), updated by one compiled function per observation, so any owner can
keep one per tree or per node and the detector can be replaced without touching the learner.

- ``page_hinkley_update``: the Page-Hinkley test as Seah (2021, §4.2.2, Algorithm 4.4) and
  FIMT-DD (Ikonomovska et al. 2011) specify it, on the prequential absolute error of a model
  normalised by the standard deviation of the targets when the detector started; it also gives
  *warnings* (a lower threshold) for owners that prepare a replacement (ARF-style background
  trees, see :mod:`streamforest.engine.core`).  The trees' detector.  ``_core.drift.
  page_hinkley_scan`` runs it over a stream (tests, benchmarks).
- ``page_hinkley_standardised_update``: the earlier variant (errors standardised by their
  own running mean and sd), kept for comparison (``_core.drift.page_hinkley_standardised_scan``).
- ``page_hinkley_row_update``: the test on a row of a 2-d state, one per tree node (the split
  nodes' detectors of alternate subtrees).

(ADWIN-style detectors are meant to land here with the same shape: ``N_<NAME>`` floats of state
and an ``<name>_update(state, ...)`` function in ``src/core/drift``.)
"""

from __future__ import annotations

import numpy as np

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

# signals of page_hinkley_update (a tree keeps the last one in ints[I_DRIFT])
PH_NONE = 0
PH_DRIFT = 1  # m_t - M_t > lambda: the error rose
PH_WARNING = 2  # m_t - M_t > the warning threshold (once, until withdrawn)
PH_WITHDRAWN = 3  # after a warning, m_t fell back to a new minimum: the rise is cancelled

# the earlier variant: errors standardised by their own running mean and sd
SPH_M, SPH_MMIN, SPH_W, SPH_HI, SPH_LO, SPH_M2 = range(6)
N_SPH = 6

# Page-Hinkley on a row of a 2-d state (one detector per tree node): count, mean error,
# cumulative sum, its minimum, and the normaliser fixed when the detector started
PHN_N, PHN_EBAR, PHN_SUM, PHN_MIN, PHN_SD0 = range(5)
N_PHN = 5


def page_hinkley_init(state: np.ndarray, warning: float = 0.0) -> None:
    """A fresh detector in ``state`` (length ``N_PH``), giving warnings above ``warning``
    (0: none)."""
    state[:] = 0.0
    state[PH_WARN] = warning
