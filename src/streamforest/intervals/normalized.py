"""NormalizedConformal: online split-conformal intervals from prequential, normalised scores
(the library's recommended default interval method)."""

from __future__ import annotations

import numbers

import numpy as np

from ..forests import OnlineForestRegressor
from . import _normalized_kernels as NK
from .base import IntervalRegressor

_NORMALIZE = ("trees", "residuals", "none")
_CENTER = ("boosted", "forest")


class NormalizedConformal(IntervalRegressor):
    """Online conformal regression with prequential, normalised calibration scores (the
    recommended default interval method).

    Each example is scored *before* the forest learns it, with the same predictor a test
    example meets: the interval's centre ``y_hat(x)``, the whole forest's prediction plus (with
    ``center="boosted"``) a second forest's prediction of the forest's signed residual at
    ``x`` (one boosting stage).  Its score is

        ``|y - y_hat(x)| / (L * g(x))``,  ``g(x) = sigma(x) / m + offset``

    where ``sigma(x)`` is a spread estimate at ``x`` (``normalize``), ``m`` the mean spread of
    the calibration members and ``L`` a running mean of the recent absolute residuals (span
    ``error_span``; while it has seen fewer than 20 rows, a row's own residual is part of the
    level that scales it, so one of the first rows cannot get an extreme score from a level
    made of two or three residuals).  The score enters a FIFO calibration set of the last
    ``calibration_size`` examples.  The interval at level ``alpha`` is ``y_hat(x) +- q L g(x)``
    with ``q`` the ``ceil((n + 1)(1 - alpha))``-th smallest of the ``n`` scores (``(-inf, inf)``
    when that rank exceeds ``n``, i.e. ``alpha < 1 / (n + 1)``).

    Why it is tighter than the out-of-bag methods while valid: an out-of-bag score
    (:class:`CPApproximate`, :class:`CPExact`) measures a sub-forest of the ~37% of trees that
    did not see the row, which errs more than the whole forest used at test time, and scores
    up to ``calibration_size`` rows old measure a forest that has improved since; both make the
    intervals over-cover (wasted width).  A prequential score measures the whole forest on a row
    it has not learnt, like a test row; dividing by ``L`` (which follows the forest's current
    error level) and by the *relative* spread ``sigma / m`` removes the global drift of the
    errors as the forest learns (or after a change), so old and new scores stay comparable.
    ``g(x)`` makes the widths x-adaptive.

    Properties:

    - any ``alpha`` at prediction time, from one calibration set; nested (a smaller ``alpha``
      never gives a narrower interval, never a crossing one: the scale does not depend on
      ``alpha``);
    - every learnt example enters the calibration set and nothing else removes one (a tree
      replaced after a drift does not), so after ``calibration_size`` examples the set is full
      and an interval is infinite only when ``alpha < 1 / (calibration_size + 1)``.

    Validity is that of split conformal prediction on exchangeable data up to the forest's
    change over the calibration window (scores are not exactly exchangeable with the test
    score; measured in ``benchmarks/interval_sweep.py`` and docs/intervals.md).  For
    guarantees on any sequence wrap it in :class:`AdaptiveConformal`.

    Parameters
    ----------
    forest
        The forest (unfitted); default ``OnlineForestRegressor(n_trees=10)``.
    calibration_size
        Number of calibration examples (FIFO: the most recent).
    normalize
        The spread ``sigma(x)``: ``"residuals"``, a forest (a clone of ``forest``, its seed + 1)
        that learns the absolute prequential residuals ``|y - y_hat|`` of the centre (their
        prediction at ``x``, made before learning the row); ``"trees"``, the standard deviation
        of the trees' predictions; ``"none"``: ``g = 1`` (constant width up to ``L``).
    center
        The interval's centre (and the point prediction): ``"boosted"``, the forest's
        prediction plus a bias forest's (a clone of ``forest``, its seed + 2) prediction of
        the signed prequential residual ``y - forest(x)``, which it learns row by row after
        predicting it; ``"forest"``: the forest's prediction.  The bias forest corrects what
        the forest's coarse leaves miss (narrower intervals at every level, measured in
        docs/intervals.md) at the cost of a third forest.
    offset
        Added to the relative spread (``> 0``): the larger, the less the widths vary with
        ``x``.
    error_span
        Span of the running mean ``L`` of the absolute residuals (the mean of the first
        ``error_span`` rows, then an exponential average); ``0``: ``L = 1`` (no rescaling).
    batch_scores
        Score the rows of a learnt batch with the centre and spread the forests predicted for
        the whole batch *before* learning it (the predictions a test batch of the same rows
        met), instead of row by row.  On ordered streams (sorted or grouped files) the forest
        learns a trend inside a batch, so row-by-row scores are smaller than test-time errors;
        on exchangeable ones the two agree.  Costs one prediction pass per batch.
    guard
        A drift guard: a one-sided CUSUM of the ranks of the learnt rows' scores among the
        calibration scores (uniform on exchangeable data); while it fires, the quantile is the
        larger of the plain one and a recency-weighted one (weights ``0.99 ** age``, Barber et
        al. 2023).  Rarely fires on exchangeable streams; holds the error rate on runs of
        misses (measured in docs/intervals.md).
    seed
        Overrides the forest's seed when given.
    """

    def __init__(
        self,
        forest=None,
        calibration_size: int = 1000,
        normalize: str = "residuals",
        center: str = "boosted",
        offset: float = 0.5,
        error_span: int = 1000,
        batch_scores: bool = True,
        guard: bool = True,
        seed: int | None = None,
    ):
        self.forest = forest
        self.calibration_size = calibration_size
        self.normalize = normalize
        self.center = center
        self.offset = offset
        self.error_span = error_span
        self.batch_scores = batch_scores
        self.guard = guard
        self.seed = seed

    def _check_params(self) -> None:
        self._check_common()
        c = self.calibration_size
        if not (isinstance(c, numbers.Integral) and not isinstance(c, bool) and 1 <= c <= 10**7):
            raise ValueError(f"calibration_size must be a positive integer, got {c!r}")
        if self.normalize not in _NORMALIZE:
            raise ValueError(f"normalize must be one of {_NORMALIZE}, got {self.normalize!r}")
        if self.center not in _CENTER:
            raise ValueError(f"center must be one of {_CENTER}, got {self.center!r}")
        b = self.offset
        if isinstance(b, bool) or not (isinstance(b, numbers.Real) and 0 < b < float("inf")):
            raise ValueError(f"offset must be a finite number > 0, got {b!r}")
        e = self.error_span
        if isinstance(e, bool) or not (isinstance(e, numbers.Integral) and 0 <= e <= 10**9):
            raise ValueError(f"error_span must be an integer >= 0, got {e!r}")
        for k in ("batch_scores", "guard"):
            if not isinstance(getattr(self, k), (bool, np.bool_)):
                raise ValueError(f"{k} must be True or False, got {getattr(self, k)!r}")

    def __setstate__(self, d) -> None:
        """Pickle and :func:`streamforest.load`: a model saved before ``center`` existed keeps
        the centre it learnt with, the forest's prediction; one saved before ``batch_scores``
        and ``guard`` existed keeps row-by-row scores and no guard."""
        self.__dict__.update(d)
        self.__dict__.setdefault("center", "forest")
        self.__dict__.setdefault("batch_scores", False)
        self.__dict__.setdefault("guard", False)
        if "level_" in self.__dict__ and "guard_" not in self.__dict__:
            self.guard_ = np.zeros(2)

    def _init_state(self) -> None:
        c = int(self.calibration_size)
        self.ring_ = np.array([0, c], np.int64)
        self.size_ = 0
        self.cal_score_ = np.zeros(c)
        self.cal_spread_ = np.zeros(c)
        self.cal_order_ = np.zeros(c, np.int64)
        self.cal_pos_ = np.full(c, -1, np.int64)
        self.cal_sorted_ = np.zeros(c)
        self.level_ = np.zeros(2)  # running mean absolute residual, rows it has seen
        self.guard_ = np.zeros(2)  # [on, CUSUM statistic of the scores' ranks]

    def _own_bytes(self) -> int:
        own = sum(v.nbytes for k, v in self.__dict__.items() if k.startswith("cal_"))
        for k in ("_resid", "_bias"):
            rf = self.__dict__.get(k)
            own += rf.memory_bytes if rf is not None else 0
        return own

    @property
    def calibration_scores(self) -> np.ndarray:
        """The current (normalised) calibration scores, ascending."""
        if "_forest" not in self.__dict__:
            return np.zeros(0)
        return self.cal_sorted_[: self.size_].copy()

    def _aux(self, key: str, seed_offset: int):
        """The auxiliary forest ``key`` (``"_resid"``, ``"_bias"``): a clone of ``forest`` with
        the main forest's seed + ``seed_offset``, created on first use."""
        rf = self.__dict__.get(key)
        if rf is None:
            f = self.forest if self.forest is not None else OnlineForestRegressor()
            rf = f.clone()
            rf.seed = (self.forest_.seed or 0) + seed_offset
            self.__dict__[key] = rf
        return rf

    def _aux_rows(self, Xa) -> np.ndarray:
        """``Xa`` in the auxiliary forests' columns (the first rows' width; later columns
        dropped, missing ones NaN)."""
        if "_resid_width" not in self.__dict__:
            self._resid_width = Xa.shape[1]
        Xr = np.full((Xa.shape[0], self._resid_width), np.nan)
        p = min(self._resid_width, Xa.shape[1])
        Xr[:, :p] = Xa[:, :p]
        return Xr

    def _bias_at(self, Xa) -> np.ndarray:
        """The bias forest's prediction at the rows ``Xa`` (0 without one or before it learnt)."""
        bf = self.__dict__.get("_bias")
        if self.center != "boosted" or bf is None or not bf._fitted:
            return np.zeros(Xa.shape[0])
        return bf.predict(self._aux_rows(Xa))

    def _spread(self, P, Xa, r=None) -> np.ndarray:
        """Row spreads: the trees' (``P``), or the residual forest's prediction of ``|y - y_hat|``
        (prequential, learning ``r`` when given)."""
        if self.normalize != "residuals":
            spread = np.empty(P.shape[1])
            NK.tree_spread(P, spread)
            return spread
        rf = self._aux("_resid", 1)
        Xr = self._aux_rows(Xa)
        if r is not None:
            return np.maximum(rf.predict_learn_many(Xr, r), 0.0)
        if not rf._fitted:
            return np.zeros(Xa.shape[0])
        return np.maximum(rf.predict(Xr), 0.0)

    def _pass(self, yhat, spread, ya, alphas, learn):
        half = np.empty((yhat.shape[0], alphas.shape[0]))
        self.guard_[0] = 1.0 if self.guard else 0.0
        self.size_ = NK.normalized_pass(
            self.size_, self.ring_, self.cal_score_, self.cal_order_, self.cal_pos_,
            self.cal_sorted_, self.cal_spread_, self.level_, int(self.error_span), yhat, spread,
            ya, learn,
            self.normalize != "none", float(self.offset), alphas, half, self.guard_,
        )  # fmt: skip
        return yhat, yhat[:, None] - half, yhat[:, None] + half

    def _chunk(self, Xa, ya, wa, alphas, learn):
        """Prediction only (learning runs in stages)."""
        e = self.forest_.engine_
        P = e.predict_trees(Xa)
        yhat = e.aggregate(P) + self._bias_at(Xa)
        return self._pass(yhat, self._spread(P, Xa), ya, alphas, False)

    def _staged(self, alphas) -> bool:
        return True

    def _tree_stage(self, Xa, ya, wa, parity: int):
        """The trees predict each row, then learn it (the bias forest, if any, the signed
        residual; the residual forest, if any, the absolute residual of the centre); only the
        forests are touched.  With ``batch_scores`` (and more than one row, once the forest has
        learnt), the rows are scored with the centre and spread the forests predict for the
        whole batch *before* learning it: the predictions a test batch met."""
        e = self.forest_.engine_
        before = None
        if self.batch_scores and Xa.shape[0] > 1 and e.fitted and self._n_seen > 0:
            P0 = e.predict_trees(Xa)
            before = (e.aggregate(P0) + self._bias_at(Xa), self._spread(P0, Xa))
        P = e.predict_learn(Xa, ya, e.bagging_weights(wa), wa)
        yhat = e.aggregate(P)
        if self.center == "boosted":
            yhat = yhat + self._aux("_bias", 2).predict_learn_many(self._aux_rows(Xa), ya - yhat)
        spread = self._spread(P, Xa, np.abs(ya - yhat))
        return before if before is not None else (yhat, spread)

    def predict(self, X) -> np.ndarray:
        """Point predictions: the intervals' centres (the forest's, plus the bias forest's
        correction with ``center="boosted"``)."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(NormalizedConformal.predict, X, keep=False)
        return f.predict(X) + self._bias_at(self._encode(X))

    def predict_one(self, x) -> float:
        """Point prediction for one example: the interval's centre."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(NormalizedConformal.predict_one, x, keep=False)
        p = f.predict_one(x)
        if self.center == "boosted" and "_bias" in self.__dict__:
            p += float(self._bias_at(f._encode_one(x, learn=False))[0])
        return p

    def _score_stage(self, stage, ya, alphas, alone: bool):
        """Half-widths from the calibration set, row by row, each row entering it after."""
        return self._pass(*stage, ya, alphas, True)


__all__ = ["NormalizedConformal"]
