"""The conformalized quantile forest (ConformalQRF): OnlineQRF intervals widened by out-of-bag
conformal scores, at any significance level."""

from __future__ import annotations

import numbers

import numpy as np

import streamforest._core as _core

from .base import IntervalRegressor, check_alphas
from .quantile_forest import OnlineQRF


def _check_size(c) -> None:
    if not (isinstance(c, numbers.Integral) and not isinstance(c, bool) and 1 <= c <= 10**7):
        raise ValueError(f"calibration_size must be a positive integer, got {c!r}")


class ConformalQRF(OnlineQRF):
    """OnlineQRF intervals calibrated by out-of-bag conformal scores (conformalized quantile
    regression, Romano et al. 2019, online), optionally with adaptive conformal inference.

    For each *calibrated* level ``g`` in ``alphas`` the base interval ``[lo_g(x), hi_g(x)]`` is
    OnlineQRF's (equal-tailed or HDI) at ``g``.  Every example that is out of bag for some tree
    enters a FIFO calibration set with, per calibrated level, the score
    ``max(lo_oob(x) - y, y - hi_oob(x))`` (``lo_oob``, ``hi_oob`` from the merged leaf sketches of
    its out-of-bag trees only, at that moment).  ``J_g(x, a) = [lo_g(x) - s, hi_g(x) + s]`` with
    ``s`` the ``ceil((n + 1)(1 - a))``-th smallest of level ``g``'s scores (``s`` may be
    negative: intervals shrink when the forest over-covers) is a split-conformal interval, valid
    at level ``a`` on exchangeable data for *any* ``a``, not only ``a = g``.

    **Any level at prediction time.**  A requested level ``a`` uses the scores of the largest
    calibrated level ``g <= a`` (the smallest one when ``a`` is below them all), and the interval
    is the hull of ``J_g(x, a)`` and of the calibrated intervals ``J_h(x, h)`` of every
    calibrated ``h > a``.  So it is

    - valid at every ``a`` (it contains the split-conformal ``J_g(x, a)``);
    - nested: a smaller ``a`` never gives a narrower interval (within ``[g, next level)`` the
      rank grows as ``a`` falls, and the hull only gains members);
    - at a calibrated level ``g``, the CQR interval ``J_g(x, g)`` itself, widened only where a
      larger level's interval sticks out of it (the levels' own calibrations may cross).

    Between calibrated levels the base quantiles are those of ``g``, widened additively, so the
    intervals adapt to ``x`` less than at a calibrated level: calibrate the levels you use most.
    Cost grows with the number of calibrated levels (a quantile query and a sorted calibration
    set each), not with the levels asked for.

    Parameters
    ----------
    alphas
        The calibrated levels (any level can be asked for; see above).
    calibration_size
        Maximum number of calibration examples (FIFO), shared by the levels.
    aci_gamma
        ``None``, or the step of adaptive conformal inference (Gibbs & Candes 2021) run inside
        each calibrated level: after each learnt example, ``alpha_t <- alpha_t + gamma * (alpha -
        err_t)`` where ``err_t`` says whether the interval at ``alpha_t`` missed ``y``; the
        conformal rank then uses ``alpha_t``.  A level that is not calibrated is shifted by the
        offset ``alpha_t - g`` of its calibrated level ``g``.  For ACI over any method, with
        its guarantee on the reported intervals, see :class:`streamforest.AdaptiveConformal`.
    forest, k, weighting, interval, split_sketch, seed
        As in :class:`OnlineQRF`.
    """

    def _staged(self, alphas) -> bool:
        return False  # one pass per chunk (its scores need the chunk's OOB masks and records)

    learn_one = IntervalRegressor.learn_one  # its calibration learns through the chunk pass
    _learn_row = None
    _one_kernel = None
    _quantile_one = False  # (OnlineQRF's per-example interval is not this one)

    def __init__(
        self,
        forest=None,
        alphas=(0.05, 0.1, 0.3),
        calibration_size: int = 1000,
        aci_gamma: float | None = None,
        k: int = 200,
        weighting: str = "meinshausen",
        interval: str = "equal_tailed",
        split_sketch: str = "empty",
        seed: int | None = None,
        groups=None,
    ):
        super().__init__(
            forest=forest, k=k, weighting=weighting, interval=interval,
            split_sketch=split_sketch, seed=seed, groups=groups,
        )  # fmt: skip
        self.alphas = alphas
        self.calibration_size = calibration_size
        self.aci_gamma = aci_gamma

    shard_stages = None
    not_sharded = "its conformal widening is a stage the shards do not run"

    def _check_params(self) -> None:
        super()._check_params()
        check_alphas(
            list(self.alphas) if not isinstance(self.alphas, numbers.Real) else self.alphas
        )
        _check_size(self.calibration_size)
        g = self.aci_gamma
        if g is not None and not (isinstance(g, numbers.Real) and 0 < g < 1):
            raise ValueError(f"aci_gamma must be None or a number in (0, 1), got {g!r}")

    def _levels(self) -> np.ndarray:
        """The calibrated levels, in the order given."""
        a, _ = check_alphas(
            self.alphas if isinstance(self.alphas, numbers.Real) else list(self.alphas)
        )
        return a

    def _init_state(self) -> None:
        A, c = self._levels().shape[0], int(self.calibration_size)
        self.ring_ = np.array([0, c], np.int64)
        self.size_ = 0
        self.cal_score_ = np.zeros((A, c))
        self.cal_order_ = np.zeros((A, c), np.int64)
        self.cal_pos_ = np.full((A, c), -1, np.int64)
        self.cal_sorted_ = np.zeros((A, c))
        self.alpha_t_ = self._levels().copy()

    def _own_bytes(self) -> int:
        return sum(v.nbytes for k, v in self.__dict__.items() if k.startswith("cal_"))

    def _learn_levels(self) -> np.ndarray:
        return np.zeros(0)  # the calibrated levels are always updated; none is reported

    @staticmethod
    def _base_of(alphas, levels) -> np.ndarray:
        """Index (into ``levels``) of the calibrated level whose scores answer each requested
        level: the largest ``<= alpha`` (a tolerance of 1e-12 makes a calibrated level its own
        base), else the smallest."""
        order = np.argsort(levels, kind="stable")
        srt = levels[order]
        k = np.searchsorted(srt, alphas + 1e-12, side="right") - 1
        return order[np.maximum(k, 0)].astype(np.int64)

    def _chunk(self, Xa, ya, wa, alphas, learn):
        levels = self._levels()
        P, rec, W = self._tree_records(Xa, ya, wa, learn)
        T, n = P.shape
        base_lo, base_hi = self._query(rec, np.ones((T, n), np.int8), levels)
        if learn:
            oob_lo, oob_hi = self._query(rec, (W == 0).astype(np.int8), levels)
        else:
            oob_lo = oob_hi = base_lo
        half = np.empty((n, levels.shape[0]))
        base = self._base_of(alphas, levels)
        req_half = np.empty((n, alphas.shape[0]))
        g = float(self.aci_gamma) if self.aci_gamma is not None else 0.0
        self.size_ = _core.intervals.cqr_levels_pass(
            self.size_, self.ring_, self.cal_score_, self.cal_order_, self.cal_pos_,
            self.cal_sorted_, base_lo, base_hi, oob_lo, oob_hi,
            W if learn else np.ones((T, n)), ya, bool(learn), levels, g, self.alpha_t_, half,
            alphas, base, req_half,
        )  # fmt: skip
        cal_lo, cal_hi = base_lo - half, base_hi + half  # J_g(x, g) of each calibrated g
        lo = base_lo[:, base] - req_half
        hi = base_hi[:, base] + req_half
        for r in range(alphas.shape[0]):
            above = levels > alphas[r] + 1e-12
            if above.any():  # the hull with the calibrated intervals of the larger levels
                lo[:, r] = np.minimum(lo[:, r], cal_lo[:, above].min(axis=1))
                hi[:, r] = np.maximum(hi[:, r], cal_hi[:, above].max(axis=1))
        return self.forest_.engine_.aggregate(P), lo, hi


__all__ = ["ConformalQRF"]
