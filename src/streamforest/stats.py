"""Weighted running mean and variance that can be updated, merged and subtracted.

A statistic is the 4-tuple ``(w, hi, lo, m2)``: total weight ``w``, the weighted mean carried as an
unevaluated sum ``hi + lo`` (``lo`` holds the rounding error of ``hi``, Kahan/two-sum style), and
``m2``, the weighted sum of squared deviations from the mean, so the population variance is
``m2 / w``.

- ``welford_update`` adds one weighted value (Welford's update in West's weighted form,
  QO paper eqs. 2-3);
- ``chan_merge`` combines two disjoint samples (Chan et al.; QO paper eqs. 4-5);
- ``chan_subtract`` removes a sub-sample from a sample (QO paper eqs. 6-7).

Why the compensated mean: for ``y = 1e9 + N(0, 1)`` the plain Welford mean drifts by about
``sqrt(n)`` ulps of 1e9, which after 1e6 values leaves the variance wrong by 3e-9 to 4e-8
(relative); with the compensated mean the error stays near 1e-14 (``tests/test_stats.py``).

The functions are the compiled core's (``src/core/common/stats.hpp``: ``welford_update``,
``chan_merge``, ``chan_subtract``, ``stats_of``, each returning a new statistic);
:class:`RunningStats` is their Python face.
"""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

_common = _core.common


class RunningStats:
    """Python-side view of one statistic, for users and tests.

    >>> s = RunningStats.of([1.0, 2.0, 3.0])
    >>> s.mean, s.variance()
    (2.0, 0.6666666666666666)
    """

    __slots__ = ("w", "hi", "lo", "m2")

    def __init__(self, w: float = 0.0, hi: float = 0.0, lo: float = 0.0, m2: float = 0.0):
        self.w, self.hi, self.lo, self.m2 = float(w), float(hi), float(lo), float(m2)

    @classmethod
    def of(cls, values, weights=None) -> RunningStats:
        v = np.ascontiguousarray(values, dtype=np.float64)
        wts = np.empty(0) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        return cls(*_common.stats_of(v, wts))

    def update(self, x: float, w: float = 1.0) -> RunningStats:
        self.w, self.hi, self.lo, self.m2 = _common.welford_update(
            self.w, self.hi, self.lo, self.m2, float(x), float(w)
        )
        return self

    def __add__(self, other: RunningStats) -> RunningStats:
        return RunningStats(*_common.chan_merge(*self.astuple(), *other.astuple()))

    def __sub__(self, other: RunningStats) -> RunningStats:
        return RunningStats(*_common.chan_subtract(*self.astuple(), *other.astuple()))

    def astuple(self):
        return self.w, self.hi, self.lo, self.m2

    @property
    def mean(self) -> float:
        return self.hi + self.lo

    def variance(self, ddof: int = 0) -> float:
        return self.m2 / (self.w - ddof) if self.w - ddof > 0 else 0.0

    def __repr__(self) -> str:
        return f"RunningStats(w={self.w!r}, mean={self.mean!r}, variance={self.variance()!r})"
