"""NormalizedConformal: online split-conformal intervals from prequential, normalised scores
(the library's recommended default interval method)."""

from __future__ import annotations

import numbers

import numpy as np

import streamforest._core as _core

from ..boosting import SGBTRegressor
from ..engine.forest_interface import TREE_MEMBERS
from ..features import check_target, weight_of
from ..forests import OnlineForestRegressor
from ._label_guard import flagged_count, guard_label, guarded, new_state
from .base import IntervalRegressor, check_alphas
from .calibration_defaults import resolved

_INF = float("inf")
_LEARN_LEVELS = np.array([0.1])  # IntervalRegressor._learn_levels(), shared (never written)
_FLAGGED_ONE = np.ones(1, np.int8)  # one row the label guard set aside (shared, never written)

_NORMALIZE = ("trees", "residuals", "none")
_CENTER = ("boosted", "forest")
#: The parameters whose default (``None``) follows the base (see calibration_defaults).
_PER_BASE = ("center", "batch_scores")


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
    score; see ``benchmarks/interval_sweep.py`` and docs/intervals.md).  For
    guarantees on any sequence wrap it in :class:`AdaptiveConformal`.

    Parameters
    ----------
    forest
        The forest (unfitted); default ``SGBTRegressor()`` (200 boosting steps; with
        ``normalize="trees"``, which needs bagged members, ``OnlineForestRegressor()``): the
        base that was valid and narrowest on most of the shared real sets and the Friedman
        drift streams (docs/benchmarks/defaults.md).  ``OnlineForestRegressor()`` is about ten
        times faster and wider on most of them.
    calibration_size
        Number of calibration examples (FIFO: the most recent).
    normalize
        The spread ``sigma(x)``: ``"residuals"``, a forest (a clone of ``forest``, its seed + 1)
        that learns the absolute prequential residuals ``|y - y_hat|`` of the centre (their
        prediction at ``x``, made before learning the row); ``"trees"``, the standard deviation
        of the trees' predictions; ``"none"``: ``g = 1`` (constant width up to ``L``).
    center
        The interval's centre (and the point prediction); ``None`` (the default): the one
        validated for the forest's kind (:attr:`RegressionForest.forest_kind
        <streamforest.engine.forest_interface.RegressionForest.forest_kind>`; the table of
        docs/intervals.md, "Settings per base": ``"boosted"`` over a bagged forest,
        ``"forest"`` over SGBT and AMF), resolved when learning starts (``center_``).
        ``"boosted"``: the forest's
        prediction plus a bias forest's (a clone of ``forest``, its seed + 2) prediction of
        the signed prequential residual ``y - forest(x)``, which it learns row by row after
        predicting it; ``"forest"``: the forest's prediction.  The bias forest corrects what
        the forest's coarse leaves miss (narrower intervals at every level, see
        docs/intervals.md) at the cost of a third forest.
    offset
        Added to the relative spread (``> 0``): the larger, the less the widths vary with
        ``x``.
    error_span
        Span of the running mean ``L`` of the absolute residuals (the mean of the first
        ``error_span`` rows, then an exponential average); ``0``: ``L = 1`` (no rescaling).
    batch_scores
        ``None`` (the default): as ``center``, the setting validated for the forest's kind
        (``True`` over a bagged forest, ``False`` over SGBT and AMF; ``batch_scores_``).
        ``True``: score the rows of a learnt batch with the centre and spread the forests
        predicted for the whole batch *before* learning it (the predictions a test batch of the
        same rows met), instead of row by row.  On ordered streams (sorted or grouped files)
        the forest learns a trend inside a batch, so row-by-row scores are smaller than
        test-time errors; on exchangeable ones the two agree.  Costs one prediction pass per
        batch.
    guard
        A drift guard: a one-sided CUSUM of the ranks of the learnt rows' scores among the
        calibration scores (uniform on exchangeable data); while it fires, the quantile is the
        larger of the plain one and a recency-weighted one (weights ``0.99 ** age``, Barber et
        al. 2023).  Rarely fires on exchangeable streams; holds the error rate on runs of
        misses (see docs/intervals.md).
    seed
        Overrides the forest's seed when given.
    groups
        Intervals calibrated per group (online Mondrian conformal): a column name or index, a
        function of the row, a list of them (several families), or
        :class:`~streamforest.Multivalid` (overlapping families); the array calls also take a
        ``groups=`` array.  See docs/intervals.md, "Coverage per group".

    Notes
    -----
    **Label glitches.**  A label far outside the range of the labels learnt so far (more than
    ten times the range's width beyond it, after the first 32 labels: a sensor spike, a unit
    slip) is set aside by a label guard (``src/core/common/label_guard.hpp``): the row is
    predicted and scored like any other, and its score enters the calibration set (the model
    did miss it; the set forgets it ``calibration_size`` rows later), but none of the three
    forests learns it (they count it with weight 0) and neither does the error level ``L``.
    Without it one label of 1e12 stayed in the forests' leaves and in ``L`` for good (the
    mean absolute error 50k rows later was millions of times the glitch-free one).  A real
    change of scale is let through after a few flagged rows (each flag doubles the guard's
    margin); on a stream whose labels stay within the margin the guard never acts and the
    results are those without it.  ``n_flagged_labels`` counts the labels set aside; see
    docs/intervals.md, "Label glitches".

    The three forests learn the targets less a fixed shift, the first target learnt
    (``target_shift_``), and every prediction adds it back, so the intervals and centres of
    ``y + c`` are those of ``y`` moved by ``c`` (up to the rounding of ``c + ...``).  Without
    it a tree that has learnt nothing (the first rows, a tree reset after a drift) predicts 0,
    so the first residuals were about ``c`` and the bias and residual forests learnt them (a
    large offset multiplied the error; ``tests/test_scale.py``).  ``forest_`` therefore
    predicts ``y - target_shift_``.
    """

    def __init__(
        self,
        forest=None,
        calibration_size: int = 1000,
        normalize: str = "residuals",
        center: str | None = None,
        offset: float = 0.5,
        error_span: int = 1000,
        batch_scores: bool | None = None,
        guard: bool = True,
        seed: int | None = None,
        groups=None,
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
        self.groups = groups

    def default_forest(self):
        """The forest used when ``forest`` is None: ``SGBTRegressor()``, or with
        ``normalize="trees"`` (the members' spread) ``OnlineForestRegressor()``."""
        return OnlineForestRegressor() if self.normalize == "trees" else SGBTRegressor()

    def forest_needs(self) -> tuple[str, ...]:
        """Nothing but the interface, or with ``normalize="trees"`` the members' spread."""
        return (TREE_MEMBERS,) if self.normalize == "trees" else ()

    def _check_params(self) -> None:
        self._check_common()
        c = self.calibration_size
        if not (isinstance(c, numbers.Integral) and not isinstance(c, bool) and 1 <= c <= 10**7):
            raise ValueError(f"calibration_size must be a positive integer, got {c!r}")
        if self.normalize not in _NORMALIZE:
            raise ValueError(f"normalize must be one of {_NORMALIZE}, got {self.normalize!r}")
        if self.center is not None and self.center not in _CENTER:
            raise ValueError(f"center must be one of {_CENTER} or None, got {self.center!r}")
        b = self.offset
        if isinstance(b, bool) or not (isinstance(b, numbers.Real) and 0 < b < float("inf")):
            raise ValueError(f"offset must be a finite number > 0, got {b!r}")
        e = self.error_span
        if isinstance(e, bool) or not (isinstance(e, numbers.Integral) and 0 <= e <= 10**9):
            raise ValueError(f"error_span must be an integer >= 0, got {e!r}")
        b = self.batch_scores
        if b is not None and not isinstance(b, (bool, np.bool_)):
            raise ValueError(f"batch_scores must be True, False or None, got {b!r}")
        if not isinstance(self.guard, (bool, np.bool_)):
            raise ValueError(f"guard must be True or False, got {self.guard!r}")

    def __setstate__(self, d) -> None:
        """Pickle and :func:`streamforest.load`: a model saved before ``center`` existed keeps
        the centre it learnt with, the forest's prediction; one saved before ``batch_scores``
        and ``guard`` existed keeps row-by-row scores and no guard; one saved before the
        settings per base (issue 49) held them as given (never ``None``) and keeps them."""
        self.__dict__.update(d)
        self.__dict__.setdefault("center", "forest")
        self.__dict__.setdefault("batch_scores", False)
        self.__dict__.setdefault("guard", False)
        if "level_" in self.__dict__:  # (fitted: the settings it learnt with; a file without
            # them, never written by this code, takes those of its forest's kind)
            for k, v in resolved(self, self.__dict__.get("_forest"), _PER_BASE).items():
                self.__dict__.setdefault(k + "_", v)
        if "level_" in self.__dict__ and "guard_" not in self.__dict__:
            self.guard_ = np.zeros(2)
        if "level_" in self.__dict__:  # saved before the shift: its forests learnt y itself
            self.__dict__.setdefault("target_shift_", 0.0)
        if "level_" in self.__dict__ and "label_guard_" not in self.__dict__:
            self.label_guard_ = new_state()

    def _init_state(self) -> None:
        # the settings that follow the base, fixed for the model's life (center_, batch_scores_)
        for k, v in resolved(self, self._forest, _PER_BASE).items():
            setattr(self, k + "_", v)
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
        self.target_shift_ = 0.0  # the first target learnt (set then): the forests learn y - it
        self.label_guard_ = new_state()  # the label guard (see the notes)

    def _own_bytes(self) -> int:
        own = sum(v.nbytes for k, v in self.__dict__.items() if k.startswith("cal_"))
        for k in ("_resid", "_bias"):
            rf = self.__dict__.get(k)
            own += rf.memory_bytes if rf is not None else 0
        return own

    @property
    def n_flagged_labels(self) -> int:
        """Labels the label guard has set aside (not learnt; see the class notes)."""
        return flagged_count(self.__dict__.get("label_guard_"))

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
            f = self.forest if self.forest is not None else self.default_forest()
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
        if self.center_ != "boosted" or bf is None or not bf.is_fitted:
            return np.zeros(Xa.shape[0])
        return bf.predict(self._aux_rows(Xa))

    def _spread(self, P, Xa, r=None, first: bool = False, flagged=None) -> np.ndarray:
        """Row spreads: the trees' (``P``), or the residual forest's prediction of ``|y - y_hat|``
        (prequential, learning ``r`` when given, but not the rows ``flagged``)."""
        if self.normalize != "residuals":
            spread = np.empty(P.shape[1])
            _core.intervals.tree_spread(P, spread)
            return spread
        rf = self._aux("_resid", 1)
        Xr = self._aux_rows(Xa)
        if r is not None:
            return np.maximum(rf.predict_learn_many(Xr, *_learnable(r, first, flagged)), 0.0)
        if not rf.is_fitted:
            return np.zeros(Xa.shape[0])
        return np.maximum(rf.predict(Xr), 0.0)

    def _pass(self, yhat, spread, ya, alphas, learn, flagged=None):
        half = np.empty((yhat.shape[0], alphas.shape[0]))
        self.guard_[0] = 1.0 if self.guard else 0.0
        self.size_ = _core.intervals.normalized_pass(
            self.size_, self.ring_, self.cal_score_, self.cal_order_, self.cal_pos_,
            self.cal_sorted_, self.cal_spread_, self.level_, int(self.error_span), yhat, spread,
            ya, bool(learn),
            self.normalize != "none", float(self.offset), alphas, half, self.guard_, flagged,
        )  # fmt: skip
        return yhat, yhat[:, None] - half, yhat[:, None] + half

    def _chunk(self, Xa, ya, wa, alphas, learn):
        """Prediction only (learning runs in stages)."""
        e = self.forest_.engine_
        P = e.predict_trees(Xa)
        yhat = e.aggregate(P) + self._bias_at(Xa)
        return self._shifted_back(self._pass(yhat, self._spread(P, Xa), ya, alphas, False))

    def _shifted_back(self, out):
        """``(centres, lower, upper)`` in the targets' units (the forests' plus the shift)."""
        c = self.target_shift_
        return tuple(a + c for a in out) if c != 0.0 else out

    def _staged(self, alphas) -> bool:
        return True

    def _tree_stage(self, Xa, ya, wa, parity: int):
        """The trees predict each row, then learn it (the bias forest, if any, the signed
        residual; the residual forest, if any, the absolute residual of the centre); only the
        forests (and the label guard) are touched.  With ``batch_scores`` (and more than one
        row, once the forest has learnt), the rows are scored with the centre and spread the
        forests predict for the whole batch *before* learning it: the predictions a test batch
        met.  The rows the label guard flags are learnt with weight 0 (see the class notes).
        Returns ``(centres, spreads, flagged rows or None)``."""
        e = self.forest_.engine_
        first = self._n_seen == 0 and ya.shape[0] > 0
        if first:  # the first rows: the shift is the first target
            self.target_shift_ = float(ya[0])
        ya = ya - self.target_shift_  # (the forests' units)
        ya, wa, flagged = guarded(self.label_guard_, ya, wa)
        before = None
        if self.batch_scores_ and Xa.shape[0] > 1 and e.fitted and self._n_seen > 0:
            P0 = e.predict_trees(Xa)
            before = (e.aggregate(P0) + self._bias_at(Xa), self._spread(P0, Xa), flagged)
        P = e.predict_learn(Xa, ya, e.bagging_weights(wa), wa)
        yhat = e.aggregate(P)
        if self.center_ == "boosted":
            r, rw = _learnable(ya - yhat, first, flagged)
            yhat = yhat + self._aux("_bias", 2).predict_learn_many(self._aux_rows(Xa), r, rw)
        spread = self._spread(P, Xa, np.abs(ya - yhat), first, flagged)
        return before if before is not None else (yhat, spread, flagged)

    def predict(self, X) -> np.ndarray:
        """Point predictions: the intervals' centres (the forest's, plus the bias forest's
        correction with ``center="boosted"``)."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(NormalizedConformal.predict, X, keep=False)
        return f.predict(X) + self._bias_at(self._encode(X)) + self.target_shift_

    def predict_one(self, x) -> float:
        """Point prediction for one example: the interval's centre."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(NormalizedConformal.predict_one, x, keep=False)
        p = f.predict_one(x)
        if self.center_ == "boosted" and "_bias" in self.__dict__:
            p += float(self._bias_at(f.encode_one(x, learn=False))[0])
        return p + self.target_shift_

    def _score_stage(self, stage, ya, alphas, alone: bool):
        """Half-widths from the calibration set, row by row, each row entering it after (the
        error level skips the rows the label guard flagged)."""
        yhat, spread, flagged = stage
        return self._shifted_back(
            self._pass(yhat, spread, ya - self.target_shift_, alphas, True, flagged)
        )

    # --- one example: the steps of a one-row chunk, each forest through its engine's
    # per-example call (a one-row chunk drives every tree of three forests through the batch
    # machinery: many times slower an example)
    _scratch_keys = (*IntervalRegressor._scratch_keys, "_one")

    def _one_state(self):
        """``(main engine, bias engine or None, residual engine, scratch)`` when an example can
        take the per-example path (the default spread, mean aggregation, every forest grown
        and in step with its features), else None.  The auxiliary engines read their rows from
        a buffer of the residual forests' width set as their row buffers (see
        :meth:`streamforest.engine.core.Engine.learn_row`)."""
        f = self.__dict__.get("_forest")
        if f is None or self.normalize != "residuals":
            return None
        e = f.__dict__.get("engine_")
        rf = self.__dict__.get("_resid")
        if e is None or not e.fitted or rf is None or not rf.is_fitted:
            return None
        re = rf.engine_
        be = None
        if self.center_ == "boosted":
            bf = self.__dict__.get("_bias")
            if bf is None or not bf.is_fitted:
                return None
            be = bf.engine_
        width = self.__dict__.get("_resid_width", -1)
        for a in (re, be):
            if a is None:
                continue
            synced = a.synced_version == a.features.version
            if a.aggregation != 0 or len(a.features) != width or not synced:
                return None
        if e.aggregation != 0:
            return None
        one = self.__dict__.get("_one")
        if one is None or one[0].shape[0] != width:
            one = self._one = (np.full(width, np.nan), np.zeros(1), np.zeros(1), np.zeros(1),
                               np.empty((1, 1)))  # fmt: skip
        buf = one[0]
        for a in (re, be):
            if a is not None and a.row_buffer is not buf:
                a.row_buffer = buf
        return e, be, re, one

    def _fill_aux(self, buf, row) -> None:
        """The auxiliary forests' row (``_aux_rows`` of one row): ``row``'s first columns."""
        p = min(buf.shape[0], row.shape[0])
        buf[:p] = row[:p]  # (columns past the row's width stay NaN)

    def learn_one(self, x, y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values)."""
        # the common cases of check_target and weight_of inline: the per-example hot path
        yf = y if type(y) is float and y - y == 0.0 else check_target(y)
        wf = w if type(w) is float and 0.0 <= w < _INF else weight_of(w)
        st = self._one_state()
        if st is None:
            return IntervalRegressor.learn_one(self, x, yf, wf)
        e, be, re, (buf, yh, sp, ya, half) = st
        f = self._forest
        row = f.encode_learn_row(x)  # (checks x; a new feature or category syncs the trees)
        if row.shape[0] < buf.shape[0]:  # (unreachable: a forest's width only grows)
            buf[row.shape[0] :] = np.nan
        mean = _core.intervals.tree_mean  # (the mean of the trees, in the forest's order)
        yf = yf - self.target_shift_  # (the forests' units)
        yl = guard_label(self.label_guard_, yf, wf)  # the label to learn (see the notes)
        ok = yl == yf  # (not flagged: the label guard let it through)
        yhat = mean(e.learn_row(yl, wf if ok else 0.0))  # the trees' predictions before learning
        self._fill_aux(buf, row)
        finite = ok and yhat - yhat == 0.0  # (else the residual forests learn nothing)
        if be is not None:
            yhat = yhat + mean(be.learn_row(yl - yhat if finite else 0.0, 1.0 if finite else 0.0))
        finite = ok and yhat - yhat == 0.0
        s = mean(re.learn_row(abs(yl - yhat) if finite else 0.0, 1.0 if finite else 0.0))
        yh[0], sp[0], ya[0] = yhat, _at_least_zero(s), yf
        self._pass_one(yh, sp, ya, True, _LEARN_LEVELS, half, None if ok else _FLAGGED_ONE)
        self._n_seen += 1

    def predict_interval_one(self, x, alpha=0.1):
        """``(lower, upper)`` for one example, or a list of them for a list of ``alpha``."""
        st = self._one_state() if type(alpha) is float and 0.0 < alpha < 1.0 else None
        if st is None:
            return IntervalRegressor.predict_interval_one(self, x, alpha)
        e, be, re, (buf, yh, sp, ya, half) = st
        row = e.encode_one(x, False)
        yhat = e.predict_one(row)  # (leaves the trees' memo for a learn_one of x next)
        self._fill_aux(buf, row)
        if be is not None:
            yhat = yhat + be.predict_one(buf)
        s = re.predict_one(buf)
        yh[0], sp[0], ya[0] = yhat, _at_least_zero(s), 0.0
        alphas = check_alphas(alpha)[0]  # (a shared one-element array)
        self._pass_one(yh, sp, ya, False, alphas, half)
        h = half[0, 0]
        c = self.target_shift_
        lo, hi = (yhat - h) + c, (yhat + h) + c
        return (-_INF if lo != lo else lo, _INF if hi != hi else hi)

    def _pass_one(self, yh, sp, ya, learn, alphas, half, flagged=None) -> None:
        """:meth:`_pass` of one row (its arrays are the per-example scratch)."""
        self.guard_[0] = 1.0 if self.guard else 0.0
        self.size_ = _core.intervals.normalized_pass(
            self.size_, self.ring_, self.cal_score_, self.cal_order_, self.cal_pos_,
            self.cal_sorted_, self.cal_spread_, self.level_, int(self.error_span), yh, sp, ya,
            learn, self.normalize != "none", float(self.offset), alphas, half, self.guard_,
            flagged,
        )  # fmt: skip


def _learnable(
    r: np.ndarray, first: bool = False, flagged: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(targets, weights)`` for a residual forest learning residuals ``r``: a residual that
    is not finite (the centre was not: a forest fed values it cannot represent) is learnt with
    weight 0, so the residual forests stay finite and the error, if any, is not reported as one
    of the caller's targets; so is the model's very first residual (``first``: 0 by the choice
    of the shift, not an error of a forest that had learnt anything), and so are the rows the
    label guard ``flagged``."""
    bad = ~np.isfinite(r)
    if first:
        bad[0] = True
    if flagged is not None:
        bad |= flagged != 0
    if not bad.any():
        return r, None
    return np.where(bad, 0.0, r), (~bad).astype(np.float64)


def _at_least_zero(s: float) -> float:
    """``np.maximum(s, 0.0)`` of a float (what :meth:`NormalizedConformal._spread` applies)."""
    return s if s >= 0.0 or s != s else 0.0


__all__ = ["NormalizedConformal"]
