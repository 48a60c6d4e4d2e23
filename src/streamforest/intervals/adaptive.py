"""AdaptiveConformal: online calibration of any interval method's intervals under drift and
non-exchangeable data (adaptive conformal inference, conformal PID control)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping
from contextlib import contextmanager

import numpy as np

from ..base import Estimator
from ..features import check_target, check_targets, check_weight, check_weights, n_rows
from . import _adaptive_kernels as AK
from .base import check_alphas

_METHODS = ("aci", "pid")

#: ACI's ladder around a level ``a``: ``expit(logit(a) + LADDER_STEP * k)`` for ``k`` in
#: ``LADDER_K``.  For a = 0.1 it spans 0.0099 .. 0.25 in 13 levels.
LADDER_STEP = 0.3
LADDER_K = np.arange(-8, 5)


def _ladder(alpha: float) -> np.ndarray:
    z = math.log(alpha / (1 - alpha)) + LADDER_STEP * LADDER_K
    return np.clip(1.0 / (1.0 + np.exp(-z)), 1e-9, 1 - 1e-9)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class AdaptiveConformal(Estimator):
    """Online wrapper that keeps the long-run error rate of any interval method at ``alpha``,
    whatever the sequence (drift, trends, adversarial order).

    It wraps an interval method of this library (:class:`CPApproximate`, :class:`CPExact`,
    :class:`OnlineQRF`, :class:`ConformalQRF`, :class:`GaussianInterval`) and has the same API
    (``learn_one``, ``learn_many``, ``predict_learn_many``, ``predict_one``, ``predict``,
    ``predict_interval_one``, ``predict_interval``), so it runs in
    :func:`streamforest.evaluate.prequential` and the command line like the others.

    **Protocol.**  Each tracked level ``alpha`` has a controller whose state decides the
    wrapper's interval for the next example.  ``learn_one(x, y)`` first computes the interval the
    wrapper *would have predicted* for ``x`` now (the base model's intervals for ``x`` before it
    learns ``x``, and the controller's current state), updates the controller with whether ``y``
    fell outside it, then lets the base model learn ``(x, y)``.  So ``predict_interval_one(x)``
    followed by ``learn_one(x, y)`` is the prequential protocol, and the interval the controller
    learns from is the one that was reported.  ``learn_many`` and ``predict_learn_many`` do the
    same for every row in order, and give exactly the row-by-row result.

    **Methods.**

    - ``"aci"``: adaptive conformal inference (Gibbs & Candes 2021).  The interval at level
      ``alpha`` is the base model's interval at the level ``alpha_t``, updated after each example
      by ``alpha_t <- alpha_t + gamma * (alpha - err_t)``.  ``alpha_t <= 0`` gives
      ``(-inf, inf)`` and ``alpha_t >= 1`` the empty set (reported as the point
      ``(pred, pred)``, an error).  Then ``alpha_t`` stays in ``[-gamma, 1 + gamma]`` and, on
      *any* sequence of ``T`` examples (Gibbs & Candes, Prop. 4.1),

      ``|MER_T - alpha| <= (max(alpha_1, 1 - alpha_1) + gamma) / (gamma T)``

      (:meth:`long_run_bound`); with ``gamma = 0.005`` and ``alpha = 0.1`` that is
      ``0.181 / T`` -- 0.0018 after 100 000 examples.  The base model is asked, for every
      example, for its intervals at a fixed ladder of 13 levels around each tracked level
      (``expit(logit(alpha) + 0.3 k)``, ``k = -8 .. 4``: 0.0099 .. 0.25 for 0.1), and the
      interval at ``alpha_t`` is interpolated between the two ladder levels around it (linearly
      in ``logit``; outside the ladder, its end level).  The guarantee does not depend on how
      the interval family is built.  The ladder is cheap for the conformal and Gaussian methods;
      :class:`OnlineQRF` computes each level separately (about 3x its single-level time).
    - ``"pid"``: conformal PID control (Angelopoulos, Candes & Tibshirani 2023), quantile
      tracking with a saturating integrator (no scorecaster).  The score of an example is how
      far ``y`` falls outside the base interval at ``alpha`` itself, ``s = max(lo - y,
      y - hi)``, and the interval is ``[lo - q_t, hi + q_t]`` with ``q_t = p_t + I_t``: the
      tracker ``p_{t+1} = p_t + gamma * B_t * (err_t - alpha)`` (``B_t``: the range of the last
      ``window`` scores, so ``gamma`` is scale-free) and the integrator
      ``I_t = ki * B_t * tan(S_t log(t + 1) / (csat (t + 1)))``, ``S_t = sum (err - alpha)``,
      which becomes infinite (whole line, or empty) once ``|S_t|`` reaches
      ``(pi/2) csat (t + 1) / log(t + 1)``.  Hence on any sequence ``|MER_T - alpha| <=
      ((pi/2) csat (T + 1) / log(T + 1) + 1) / T`` (:meth:`long_run_bound`), a weaker bound than
      ACI's but reached with the base model's own interval as the starting point (``q = 0``),
      one base level per tracked level (cheap for every base), and corrections in units of
      ``y``.  Examples whose base interval is infinite (a conformal method's first examples)
      do not move the controller; they are covered.
      PID was chosen over SAOCP (Bhatnagar et al. 2023): one tracker and one integrator per
      level instead of a growing set of experts, and a long-run coverage guarantee on any
      sequence, which is what the evaluation asks for.

    **Several levels.**  Each tracked level has its own controller.  Intervals are reported
    nested: the interval at a level is the hull of its own and those of every larger tracked (or
    requested) level, so a smaller ``alpha`` is never narrower.  The long-run bound above holds
    for each level's *own* intervals; the reported ones can only cover more, so their MER is at
    most ``alpha`` plus the bound (equal while the controllers keep the levels' order, the usual
    case).

    **Tracked levels** are those of ``alphas`` and every level asked for by
    ``predict_learn_many`` (from then on).  ``predict_interval`` at a level that is not tracked
    answers with the base model's interval at that level (a controller at its initial state).

    Parameters
    ----------
    model
        The interval method to wrap (unfitted; it is cloned when learning starts, like a
        method's forest).  Default ``CPApproximate()``.
    alphas
        Levels tracked from the start (a number or a list).
    method
        ``"aci"`` or ``"pid"``.
    gamma
        ACI: the step of ``alpha_t`` (in units of the level; default 0.005).  PID: the quantile
        tracker's step as a fraction of the recent score range (default 0.05).
    ki, csat
        PID's integrator: gain (a fraction of the recent score range) and saturation constant.
    window
        PID: number of recent scores whose range scales the steps.
    """

    def __init__(
        self,
        model=None,
        alphas=(0.1,),
        method: str = "aci",
        gamma: float | None = None,
        ki: float = 0.5,
        csat: float = 0.5,
        window: int = 100,
    ):
        self.model = model
        self.alphas = alphas
        self.method = method
        self.gamma = gamma
        self.ki = ki
        self.csat = csat
        self.window = window

    # --- parameters and state ------------------------------------------------------------------
    def _check_params(self) -> None:
        self._check_model()
        self._levels_of(self.alphas)
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        self._check_controller_params()

    def _check_model(self) -> None:
        """``TypeError`` unless ``model`` is None or what the wrapper can wrap."""
        if self.model is not None and not all(
            hasattr(self.model, a)
            for a in ("predict_interval", "predict_interval_one", "predict_learn_many", "clone")
        ):
            raise TypeError(
                f"model must be an interval method of streamforest (CPApproximate, CPExact, "
                f"OnlineQRF, ConformalQRF, GaussianInterval), got {type(self.model).__name__}"
            )
        if isinstance(self.model, AdaptiveConformal):
            raise TypeError("model must be an interval method, not another AdaptiveConformal")

    def _check_controller_params(self) -> None:
        g = self.gamma
        if g is not None and (not _is_real(g) or not 0 < g < 1):
            raise ValueError(f"gamma must be None or a number in (0, 1), got {g!r}")
        if not _is_real(self.ki) or not 0 <= self.ki < math.inf:
            raise ValueError(f"ki must be a number >= 0, got {self.ki!r}")
        if not _is_real(self.csat) or not 0 < self.csat < math.inf:
            raise ValueError(f"csat must be a positive number, got {self.csat!r}")
        w = self.window
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or not 2 <= w <= 10**6:
            raise ValueError(f"window must be an integer >= 2, got {w!r}")

    @property
    def gamma_(self) -> float:
        """The step in use: ``gamma``, or the method's default (ACI 0.005, PID 0.05)."""
        if self.gamma is not None:
            return float(self.gamma)
        return 0.005 if self.method == "aci" else 0.05

    @staticmethod
    def _levels_of(alpha) -> np.ndarray:
        a, _ = check_alphas(alpha if _is_real(alpha) else list(alpha))
        return a

    @property
    def model_(self):
        """The wrapped model (a clone of ``model``, made when first used)."""
        m = self.__dict__.get("_model")
        if m is None:
            self._check_params()
            m = (self.model if self.model is not None else self._default_model()).clone()
            self._model = m
            self.levels_ = np.zeros(0)
            self.alpha_t_ = np.zeros(0)
            W = int(self.window)
            self.p_ = np.zeros(0)
            self.isum_ = np.zeros(0)
            self.steps_ = np.zeros(0, np.int64)
            self.win_ = np.zeros((0, W))
            self.win_n_ = np.zeros(0, np.int64)
            self.win_pos_ = np.zeros(0, np.int64)
            self._n_seen = 0
            self._track(self._levels_of(self.alphas))
        return m

    @staticmethod
    def _default_model():
        """The model wrapped when ``model`` is None."""
        from .conformal import CPApproximate

        return CPApproximate()

    def _create_state(self) -> None:  # see Estimator._first_call
        _ = self.model_

    # the controllers' state: restored when a learning call fails (the base model keeps itself)
    _CONTROLLERS = ("levels_", "alpha_t_", "p_", "isum_", "steps_", "win_", "win_n_", "win_pos_",
                    "_n_seen")  # fmt: skip

    @contextmanager
    def _atomic(self):
        """A learning call: if it raises, the controllers are as they were (so a rejected call,
        e.g. an ``x`` the base model refuses after the controllers learnt from its interval,
        changes nothing)."""
        d = self.__dict__
        saved = {
            k: d[k].copy() if isinstance(d[k], np.ndarray) else d[k] for k in self._CONTROLLERS
        }
        try:
            yield
        except BaseException:
            d.update(saved)
            raise

    def _track(self, levels: np.ndarray) -> None:
        """Start controllers for the levels not tracked yet (at their initial state)."""
        new = [float(a) for a in levels if not np.any(np.abs(self.levels_ - a) <= 1e-12)]
        new = list(dict.fromkeys(new))
        if not new:
            return
        k = len(new)
        self.levels_ = np.concatenate([self.levels_, new])
        self.alpha_t_ = np.concatenate([self.alpha_t_, new])
        self.p_ = np.concatenate([self.p_, np.zeros(k)])
        self.isum_ = np.concatenate([self.isum_, np.zeros(k)])
        self.steps_ = np.concatenate([self.steps_, np.zeros(k, np.int64)])
        self.win_ = np.concatenate([self.win_, np.zeros((k, self.win_.shape[1]))])
        self.win_n_ = np.concatenate([self.win_n_, np.zeros(k, np.int64)])
        self.win_pos_ = np.concatenate([self.win_pos_, np.zeros(k, np.int64)])

    @property
    def n_seen(self) -> int:
        return self.__dict__.get("_n_seen", 0)

    @property
    def alpha_t(self) -> dict:
        """ACI: the current level ``alpha_t`` of each tracked level."""
        _ = self.model_
        return {float(a): float(t) for a, t in zip(self.levels_, self.alpha_t_, strict=True)}

    def long_run_bound(self, n: int) -> dict:
        """The bound on ``|MER - alpha|`` after ``n`` examples that the method guarantees for each
        tracked level's own intervals, on any sequence (see the class docstring)."""
        _ = self.model_
        if self.method == "aci":
            g = self.gamma_
            return {float(a): (max(a, 1 - a) + g) / (g * n) for a in self.levels_}
        c = (math.pi / 2) * float(self.csat) * (n + 1) / math.log(n + 1)
        return {float(a): (c + 1) / n for a in self.levels_}

    # --- the passes ----------------------------------------------------------------------------
    def _plan(self, levels: np.ndarray):
        """The base levels to ask for and, for ACI, each level's ladder in them."""
        if self.method == "pid":
            return levels, None, None
        ladders = [_ladder(float(a)) for a in levels]
        union = np.unique(np.concatenate(ladders))
        idx = np.array([np.searchsorted(union, lad) for lad in ladders], dtype=np.int64)
        logit = np.log(np.stack(ladders) / (1 - np.stack(ladders)))
        return union, idx, np.ascontiguousarray(logit)

    def _pass(self, levels, learns, blo, bhi, pred, y, learn, alpha_t):
        """Run the method's compiled pass; returns the reported ``(lo, hi)`` of shape (n, R)."""
        n, R = y.shape[0], levels.shape[0]
        order = np.argsort(levels, kind="stable").astype(np.int64)
        out_lo, out_hi = np.empty((n, R)), np.empty((n, R))
        own_lo, own_hi = np.empty(R), np.empty(R)
        blo = np.ascontiguousarray(blo, dtype=np.float64)
        bhi = np.ascontiguousarray(bhi, dtype=np.float64)
        pred = np.ascontiguousarray(pred, dtype=np.float64)
        if self.method == "aci":
            _, idx, logit = self._plan(levels)
            AK.aci_pass(blo, bhi, pred, y, learn, idx, logit, levels, learns, self.gamma_,
                        alpha_t, order, out_lo, out_hi, own_lo, own_hi)  # fmt: skip
        else:
            s = self._state_of(levels)
            AK.pid_pass(blo, bhi, pred, y, learn, levels, learns, self.gamma_,
                        float(self.ki), float(self.csat), *s, order, out_lo, out_hi, own_lo,
                        own_hi)  # fmt: skip
            if learn:
                self._store_state(levels, s)
        return out_lo, out_hi

    def _index(self, levels) -> np.ndarray:
        """Position of each level among the tracked ones (-1: not tracked)."""
        out = np.full(levels.shape[0], -1, np.int64)
        for i, a in enumerate(levels):
            hit = np.flatnonzero(np.abs(self.levels_ - a) <= 1e-12)
            if hit.size:
                out[i] = hit[0]
        return out

    def _state_of(self, levels):
        """PID state arrays for ``levels`` (copies; untracked levels at the initial state)."""
        idx = self._index(levels)
        R, W = levels.shape[0], self.win_.shape[1]
        p, isum = np.zeros(R), np.zeros(R)
        steps, win = np.zeros(R, np.int64), np.zeros((R, W))
        win_n, win_pos = np.zeros(R, np.int64), np.zeros(R, np.int64)
        for r, j in enumerate(idx):
            if j >= 0:
                p[r], isum[r], steps[r] = self.p_[j], self.isum_[j], self.steps_[j]
                win[r], win_n[r], win_pos[r] = self.win_[j], self.win_n_[j], self.win_pos_[j]
        return p, isum, steps, win, win_n, win_pos

    def _store_state(self, levels, s) -> None:
        p, isum, steps, win, win_n, win_pos = s
        for r, j in enumerate(self._index(levels)):
            if j >= 0:
                self.p_[j], self.isum_[j], self.steps_[j] = p[r], isum[r], steps[r]
                self.win_[j], self.win_n_[j], self.win_pos_[j] = win[r], win_n[r], win_pos[r]

    def _levels_for(self, alphas: np.ndarray):
        """The levels a call works on: the tracked ones, then the requested ones not tracked;
        and the position of each requested level among them."""
        extra = [a for a in alphas if self._index(np.array([a]))[0] < 0]
        extra = np.array(list(dict.fromkeys(float(a) for a in extra)))
        levels = np.concatenate([self.levels_, extra]) if extra.size else self.levels_.copy()
        pos = np.array([np.flatnonzero(np.abs(levels - a) <= 1e-12)[0] for a in alphas])
        learns = np.zeros(levels.shape[0], np.bool_)
        learns[: self.levels_.shape[0]] = True
        alpha_t = np.concatenate([self.alpha_t_, extra]) if extra.size else self.alpha_t_.copy()
        return levels, pos.astype(np.int64), learns, alpha_t

    def _run(self, base_call, y, alphas, learn: bool):
        """``base_call(levels) -> (pred, iv)`` gives the base model's predictions and intervals
        (``(n, L, 2)``) at the base levels of the plan; returns ``(pred, lo, hi)`` at
        ``alphas``."""
        levels, pos, learns, alpha_t = self._levels_for(alphas)
        base_levels = self._plan(levels)[0]
        pred, iv = base_call(base_levels)
        if y is None:  # prediction only
            y = np.zeros(iv.shape[0])
        lo, hi = self._pass(levels, learns, iv[:, :, 0], iv[:, :, 1], pred, y, learn, alpha_t)
        if learn:
            self.alpha_t_[:] = alpha_t[: self.levels_.shape[0]]
        return pred, lo[:, pos], hi[:, pos]

    # --- array API -------------------------------------------------------------------------------
    def predict_learn_many(self, X, y, alpha=0.1, w=None):
        """Prequential pass: for each row the prediction and interval the wrapper gives *before*
        learning it, then it learns the row (controllers, then the base model).  The levels
        asked for are tracked from now on.  Returns ``(predictions, intervals)``: ``(n, 2)`` for
        one level, ``(n, len(alpha), 2)`` for a list."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_learn_many, X, y, alpha, w)
        m = self.model_
        ya = check_targets(y, n_rows(X))
        check_weights(w, ya.shape[0])

        def base(levels):
            return m.predict_learn_many(X, y, alpha=list(levels), w=w)

        with self._atomic():
            self._track(alphas)
            pred, lo, hi = self._run(base, ya, alphas, learn=True)
            self._n_seen += ya.shape[0]
        out = np.stack([lo, hi], axis=-1)
        return pred, (out[:, 0, :] if scalar else out)

    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` in order (the tracked levels' controllers, then the base
        model, row by row)."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.learn_many, X, y, w)
        m = self.model_
        ya = check_targets(y, n_rows(X))
        check_weights(w, ya.shape[0])

        def base(levels):
            return m.predict_learn_many(X, y, alpha=list(levels), w=w)

        with self._atomic():
            self._run(base, ya, self.levels_.copy(), learn=True)
            self._n_seen += ya.shape[0]
        return self

    def predict(self, X) -> np.ndarray:
        """Point predictions (the base model's)."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict, X, keep=False)
        return self.model_.predict(X)

    def predict_interval(self, X, alpha=0.1) -> np.ndarray:
        """The intervals the wrapper gives now at significance ``alpha`` (a number or a list):
        ``(n, 2)`` or ``(n, len(alpha), 2)``.  Changes nothing."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_interval, X, alpha, keep=False)
        m = self.model_

        def base(levels):
            return m.predict(X), m.predict_interval(X, alpha=list(levels))

        pred, lo, hi = self._run(base, None, alphas, learn=False)
        out = np.stack([lo, hi], axis=-1)
        return out[:, 0, :] if scalar else out

    # --- River-style API -------------------------------------------------------------------------
    def _one(self, x, alphas, learn: bool, y: float = 0.0):
        m = self.model_

        def base(levels):
            iv = np.array(m.predict_interval_one(x, alpha=list(levels)), dtype=np.float64)
            return np.array([m.predict_one(x)], dtype=np.float64), iv[None]

        return self._run(base, np.array([y]), alphas, learn)

    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example: the tracked levels' controllers learn from the intervals the wrapper
        gives for ``x`` now, then the base model learns ``(x, y)``."""
        yf = check_target(y)
        check_weight(w)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.learn_one, x, y, w)
        m = self.model_
        with self._atomic():
            self._one(x, self.levels_.copy(), True, yf)
            m.learn_one(x, yf, w)
            self._n_seen += 1

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Point prediction for one example (the base model's)."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_one, x, keep=False)
        return self.model_.predict_one(x)

    def predict_interval_one(self, x: Mapping[Hashable, object], alpha=0.1):
        """``(lower, upper)`` for one example, or a list of them for a list of ``alpha``."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_interval_one, x, alpha, keep=False)
        _, lo, hi = self._one(x, alphas, False)
        if scalar:
            return (float(lo[0, 0]), float(hi[0, 0]))
        return [(float(lo[0, r]), float(hi[0, r])) for r in range(alphas.shape[0])]

    # --- delegation ----------------------------------------------------------------------------
    @property
    def n_features_in_(self) -> int:
        m = self.__dict__.get("_model")
        return m.n_features_in_ if m is not None else 0

    @property
    def feature_names_in_(self) -> list:
        m = self.__dict__.get("_model")
        return m.feature_names_in_ if m is not None else []

    @property
    def memory_bytes(self) -> int:
        if "_model" not in self.__dict__:
            return 0
        own = sum(v.nbytes for k, v in self.__dict__.items() if isinstance(v, np.ndarray))
        return self.model_.memory_bytes + own

    def _load_kernels(self) -> None:
        self.model_._load_kernels()
