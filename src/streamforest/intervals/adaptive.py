"""AdaptiveConformal: online calibration of any interval method's intervals under drift and
non-exchangeable data (ACI, DtACI, AgACI, SF-OGD, SAOCP, NExCP, conformal PID control), learning
from the intervals it served however predictions and labels interleave."""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Hashable, Mapping
from contextlib import contextmanager

import numpy as np

import streamforest._core as _core

from ..base import Estimator
from ..features import check_target, check_targets, check_weight, check_weights, n_rows
from . import _controllers as controllers
from . import _group_controllers as group_controllers
from . import _tracked_levels as tracked_levels
from ._served_log import ServedLog, row_keys
from .base import check_alphas, memory_budget

_METHODS = ("aci", "pid", "dtaci", "agaci", "sfogd", "saocp", "nexcp")
_SCORE_METHODS = {
    "sfogd": _core.intervals.SFOGD,
    "saocp": _core.intervals.SAOCP,
    "dtaci": _core.intervals.DTACI,
    "agaci": _core.intervals.AGACI,
    "nexcp": _core.intervals.NEXCP,
}
_UNMATCHED = ("current", "skip", "raise")
#: DtACI's and AgACI's experts: ACI steps 0.001 * 2**k, k = 0..7 (Gibbs & Candes 2022, the
#: grid of the reference implementation of Bhatnagar et al. 2023); DtACI's ``I``.
EXPERT_GAMMAS = 0.001 * 2.0 ** np.arange(8)
DTACI_INTERVAL = 100
#: SAOCP: most experts alive at once (about 4 log2(t) are).
SAOCP_CAPACITY = 128
MAX_ASKED_LEVELS = tracked_levels.MAX_ASKED_LEVELS


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


class AdaptiveConformal(Estimator):
    """Online wrapper that keeps the long-run error rate of any interval method at ``alpha``,
    whatever the sequence (drift, trends, adversarial order), learning from the intervals it
    actually served, however predictions and labels interleave.

    It wraps an interval method of this library (:class:`NormalizedConformal`,
    :class:`CPApproximate`, :class:`CPExact`, :class:`OnlineQRF`, :class:`ConformalQRF`,
    :class:`GaussianInterval`) and has the same API (``learn_one``, ``learn_many``,
    ``predict_learn_many``, ``predict_one``, ``predict``, ``predict_interval_one``,
    ``predict_interval``), so it runs in :func:`streamforest.evaluate.prequential` and the
    command line like the others.

    **Feedback on what was served.**  ``predict_interval(X)`` and ``predict_interval_one(x)``
    serve intervals: each served row's record (its own interval at every tracked level, the base
    interval it came from and the method's served quantities) goes to a bounded log keyed by the
    row's feature values.  When the row's label is learnt (``learn_one`` / ``learn_many``, now or
    any number of rows later), the controllers learn from that record: the error of the interval
    that was served, not of the one the wrapper would give now.  So the protocols users run all
    hold: one row at a time, batches (predict ``b`` rows, then learn them), delayed labels (learn
    row ``t`` after rows up to ``t + d`` were predicted; River's ``progressive_val_score(...,
    delay=d)`` through :class:`streamforest.river.RiverRegressor`).  Rows are matched by their
    features in the same form (an array row with an array row, a dict with a dict), first in,
    first out among equal rows; asking again for a row's interval with nothing learnt in between
    logs it once.  ``predict_learn_many`` serves and learns each row in turn (the prequential
    protocol) and needs no log.  A learnt row with no record is handled by ``unmatched``:
    ``"current"`` (default) learns from the interval the wrapper gives the row now, before the
    base model learns it (what learning without predicting means); ``"skip"`` leaves the
    controllers alone; ``"raise"`` refuses the call.  A *late* label (its record was evicted
    from the log, which holds the last ``log_size`` served rows) is handled the same way and
    warns once (raise ``log_size`` above the delay plus the batch size); :attr:`log_stats`
    counts matched, late and unmatched rows.

    **Stale feedback.**  A label learnt ``lag`` rows after its row was served (the rows the
    level learnt in between: up to ``b - 1`` in batches of ``b``, ``d`` with delays) is stale
    feedback: a controller that integrates the served misses with a fixed step ``gamma`` is then
    a delayed integrator, and past ``gamma * lag`` of about 1 it swings between the whole line
    and narrow intervals.  So each step on a served miss is at most ``LAG_GAIN / (1 + lag)``
    per unit of the level (``LAG_GAIN = 1/e``, a critically damped delayed integrator); below
    ``lag = LAG_GAIN / gamma - 1`` (72 rows at ``gamma = 0.005``) the step is the paper's.

    **Methods** (per tracked level; the score-based ones work on the base interval ``[lo, hi]``
    at that level through the scaled score ``s = |y - m| / h``, ``m``, ``h`` its centre and
    half-width, and serve ``m +- theta h``: ``theta = 1`` is the base interval, so widths stay
    x-adaptive):

    - ``"aci"``: adaptive conformal inference (Gibbs & Candes 2021, "Adaptive conformal
      inference under distribution shift").  The interval at ``alpha`` is the base model's at
      the level ``alpha_t``, ``alpha_t <- alpha_t + gamma (alpha - err_t)``; ``alpha_t <= 0``
      gives ``(-inf, inf)``, ``alpha_t >= 1`` the empty set (reported as ``(pred, pred)``, an
      error).  On *any* sequence of ``T`` labels (Prop. 4.1), ``|MER_T - alpha| <= (max(alpha_1,
      1 - alpha_1) + gamma) / (gamma T)`` (:meth:`long_run_bound`); with labels learnt up to
      ``d`` labels after their row was served, ``gamma (1 + d)`` replaces ``gamma`` in the
      numerator.  Departures from the paper: a step on a label learnt ``lag`` rows after its
      row was served is capped at ``LAG_GAIN / (1 + lag)`` ("Stale feedback" above; the bound
      then holds with that step for a constant lag, and as stated while ``lag <= LAG_GAIN /
      gamma - 1``), and a row served an infinite interval at ``0 < alpha_t < 1`` (the base's,
      unfitted or warming up) teaches nothing (the bound is over the rows that teach).  The
      base model gives its intervals at a ladder of 13 levels around ``alpha``
      (``expit(logit(alpha) + 0.3 k)``, ``k = -8 .. 4``), interpolated in ``logit``.
    - ``"pid"``: conformal PID control (Angelopoulos, Candes & Tibshirani 2023, "Conformal PID
      control for time series prediction"), quantile tracking plus a saturating integrator, no
      scorecaster: the interval is ``[lo - q_t, hi + q_t]``, ``q_t = p_t + I_t``, the tracker
      ``p += gamma * B_t * (err - alpha)`` (the step capped as ACI's; ``B_t``: the range of
      the last ``window`` scores
      ``max(lo - y, y - hi)``) and ``I_t = ki B_t tan(S_t log(t + 1) / (csat (t + 1)))``, ``S_t =
      sum (err - alpha)``, infinite once ``|S_t| >= (pi/2) csat (t + 1) / log(t + 1)``; hence
      ``|MER_T - alpha| <= ((pi/2) csat (T + 1) / log(T + 1) + 1) / T``.
    - ``"dtaci"``: dynamically-tuned ACI (Gibbs & Candes 2022, "Conformal inference for online
      prediction with arbitrary distribution shifts", Alg. 1 with the mean of the experts as in
      the reference implementation of Bhatnagar et al. 2023): eight ACI experts with steps
      ``0.001 * 2**k`` on the family ``theta(a)`` = the ``1 - a`` quantile of the last
      ``score_window`` scores, exponentially reweighted by the pinball loss of ``beta_t`` (the
      share of window scores ``>= s_t``), ``eta`` and ``sigma = 1 / (2 I)`` of the paper with ``I =
      100``; a level ``<= 0`` serves the whole line and ``>= 1`` the empty set, as in the paper
      (the reference implementation's clipping to the window's extremes cannot widen past the
      largest recent score, and missed alpha by 0.2 in batches on a trending series).  Each
      expert learns from the miss of the interval it served, its step capped as ACI's.
      The served level is the experts' weighted mean plus a correction ``c``, ``c += gamma
      (alpha - err)`` on the miss of the served interval (ACI on the aggregate, its step capped
      as ACI's): stale by a batch
      or a delay the mean of the experts' levels does not hold alpha though each expert does
      (the docs' online-conformal benchmark), since a level's miss rate is not linear in the
      level; with ``c`` the served intervals keep ACI's bound,
      the experts' levels being bounded.  ``gamma=0`` is the paper's DtACI.
    - ``"agaci"``: aggregated ACI (Zaffran, Feron, Goude, Josse & Dieuleveut 2022, "Adaptive
      conformal predictions for time series"): the same eight ACI experts (each learning from the
      interval it served), their lower and upper bounds aggregated separately by Bernstein online
      aggregation (Wintenberger 2017; multiple learning rates, linearised pinball losses at
      ``alpha / 2`` and ``1 - alpha / 2``); an expert's infinite bound (level <= 0) is replaced
      by the window's largest score; the experts' steps capped as ACI's.  As SAOCP's, the
      served bounds are widened by a correction ``c += gamma D / sqrt(3) (err - alpha)`` on the
      miss of the served interval (stale by a batch, the aggregate missed alpha by 0.02-0.04 on
      the Friedman stream in batches of 1000); ``gamma=0`` is the paper's AgACI.
    - ``"sfogd"``: scale-free online gradient descent on the pinball loss of ``theta``
      (Bhatnagar, Wang, Xiong & Bai 2023, "Improved online conformal prediction via strongly
      adaptive online learning", after Orabona & Pal 2018): ``theta <- max(0, theta - D g /
      sqrt(sum g^2))``, ``g`` the gradient at the *served* ``theta`` (``alpha - err``), ``D``
      the largest score seen (or ``scale / sqrt(3)``); stale by ``lag`` rows, the step is
      divided by ``sqrt(1 + lag)`` (the delay-tolerant AdaGrad step, McMahan & Streeter 2014).
    - ``"saocp"``: strongly adaptive online conformal prediction (Bhatnagar et al. 2023, Alg. 1):
      SF-OGD experts started every step with lifetimes ``lifetime * 2**u`` (geometric covering),
      combined by coin betting (CBCE); the experts take their losses at their current thresholds
      when the label arrives (the reference implementation's order).  The served threshold is
      the experts' aggregate plus a correction ``c += gamma D / sqrt(3) (err - alpha)`` on the
      miss of the served interval (``D`` the steps' scale; the step capped as ACI's): stale
      by a batch or a delay, the
      experts learn the scores' quantile but not the served misses, and under-cover a trending
      series (the docs' online-conformal benchmark).  ``gamma=0`` is the paper's SAOCP.
    - ``"nexcp"``: non-exchangeable split conformal (Barber, Candes, Ramdas & Tibshirani 2023,
      "Conformal prediction beyond exchangeability"): ``theta`` is the weighted ``1 - alpha``
      quantile of the last ``score_window`` scores, weights ``rho ** age``, the test point's
      weight 1 at ``+inf``.  This is the recency-weighted calibration as a wrapper option (over
      any base method's scores); it has no controller.

    **Several levels.**  Each tracked level has its own controller.  Intervals are reported
    nested (the hull of a level's own interval and those of every larger level); the bounds hold
    for each level's own intervals.  **Tracked levels** are those of ``alphas`` (always) and the
    last :data:`MAX_ASKED_LEVELS` (16) others asked for by ``predict_learn_many``; one more
    forgets the least recently asked (warned once; asked again, it starts afresh), and a call
    asking for more than 16 outside ``alphas`` is refused, nothing changed (``_tracked_levels``).
    ``predict_interval`` at an untracked level answers from a controller at its initial state.

    Parameters
    ----------
    model
        The interval method to wrap (unfitted; cloned when learning starts).  Default
        ``CPApproximate()``.
    alphas
        Levels tracked from the start (a number or a list).
    method
        ``"aci"``, ``"pid"``, ``"dtaci"``, ``"agaci"``, ``"sfogd"``, ``"saocp"`` or ``"nexcp"``.
    gamma
        ACI: the step of ``alpha_t`` (default 0.005).  PID: the tracker's step as a fraction of
        the recent score range (default 0.05).  DtACI, SAOCP, AgACI: the step of the served-miss
        correction (default 0.005).
    ki, csat, window
        PID's integrator gain and saturation constant, and the number of recent scores whose
        range scales its steps.
    score_window
        DtACI, AgACI, NExCP: the number of recent scores their quantiles are taken from.
    lifetime
        SAOCP: the experts' base lifetime ``g``.
    rho
        NExCP: the recency weight.
    scale
        SF-OGD, SAOCP: the scale of the steps, the reference implementation's ``max_scale``
        (steps ``scale / sqrt(3 sum g^2)``; None: ``sqrt(3)`` times the largest score seen).
    log_size
        Served rows kept in the log (0: no log; every learnt row is then unmatched).
    unmatched
        A learnt row with no record of what was served: ``"current"``, ``"skip"`` or
        ``"raise"`` (above).  Rows served before the wrapper learnt anything are not logged (an
        unfitted model serves infinite intervals, and predicting creates no state): their labels
        are unmatched and taught as ``"current"``, also under ``"raise"``.  The log is not
        saved or pickled (it records what predictions served, not what the model learnt): a
        loaded or copied wrapper starts with an empty one.
    groups
        A controller per group (see ``_group_controllers``): None for the wrapped method's
        groups, False for one marginal controller, or an interval method's ``groups`` (the
        wrapped method without groups takes them too); the calls take a ``groups=`` array.
    """

    #: Score-based methods: scaled scores (regression) or additive ones (prediction sets).
    _SCALED = True

    def __init__(
        self,
        model=None,
        alphas=(0.1,),
        method: str = "aci",
        gamma: float | None = None,
        ki: float = 0.5,
        csat: float = 0.5,
        window: int = 100,
        score_window: int = 1000,
        lifetime: int = 8,
        rho: float = 0.99,
        scale: float | None = None,
        log_size: int = 10_000,
        unmatched: str = "current",
        groups=None,
    ):
        self.model = model
        self.alphas = alphas
        self.method = method
        self.gamma = gamma
        self.ki = ki
        self.csat = csat
        self.window = window
        self.score_window = score_window
        self.lifetime = lifetime
        self.rho = rho
        self.scale = scale
        self.log_size = log_size
        self.unmatched = unmatched
        self.groups = groups

    groups = None  # (models saved before groups existed)

    def __getstate__(self):
        """The state without the served log: it is a record of what predictions served, not of
        what the model learnt, so predicting changes no saved file or pickle; a loaded or
        copied wrapper starts with an empty log (labels of rows served before are unmatched)."""
        d = dict(self.__dict__)
        for k in ("_log", "_asked", "_asked_clock", "_layout", "_warned_levels"):
            d.pop(k, None)
        return d

    def __setstate__(self, d) -> None:
        """A model saved before the served log and the methods after ACI keeps learning (with an
        empty log, and the defaults of the new parameters); the served log starts empty."""
        self.__dict__.update(d)
        for k, v in (("score_window", 1000), ("lifetime", 8), ("rho", 0.99), ("scale", None),
                     ("log_size", 10_000), ("unmatched", "current")):  # fmt: skip
            self.__dict__.setdefault(k, v)
        if "_model" in d and "st_" not in d:
            R = self.levels_.shape[0]
            init = self._initial_rows(R, self.levels_)
            for k in ("st_", "cal_", "ex_"):
                self.__dict__[k] = init[k]
            self._version = 0
        if "_model" in d:
            self._log = ServedLog(int(self.log_size), self._record_width())
            tracked_levels.reset(self)

    # --- parameters and state ------------------------------------------------------------------
    def _check_params(self) -> None:
        self._check_model()
        self._levels_of(self.alphas)
        if self.method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
        self._check_controller_params()
        group_controllers.check(self)

    def _check_model(self) -> None:
        """``TypeError`` unless ``model`` is None or what the wrapper can wrap."""
        if self.model is not None and not all(
            hasattr(self.model, a)
            for a in ("predict_interval", "predict_interval_one", "predict_learn_many", "clone")
        ):
            raise TypeError(
                f"model must be an interval method of streamforest (NormalizedConformal, "
                f"CPApproximate, CPExact, OnlineQRF, ConformalQRF, GaussianInterval), got "
                f"{type(self.model).__name__}"
            )
        if isinstance(self.model, AdaptiveConformal):
            raise TypeError("model must be an interval method, not another AdaptiveConformal")

    def _check_controller_params(self) -> None:
        g = self.gamma
        zero = self.method in ("dtaci", "saocp", "agaci")  # (0: the papers' methods)
        if g is not None and (not _is_real(g) or not (0 <= g if zero else 0 < g) or not g < 1):
            span = "[0, 1)" if zero else "(0, 1)"
            raise ValueError(f"gamma must be None or a number in {span}, got {g!r}")
        if not _is_real(self.ki) or not 0 <= self.ki < math.inf:
            raise ValueError(f"ki must be a number >= 0, got {self.ki!r}")
        if not _is_real(self.csat) or not 0 < self.csat < math.inf:
            raise ValueError(f"csat must be a positive number, got {self.csat!r}")
        for name, lo in (("window", 2), ("score_window", 2), ("lifetime", 1), ("log_size", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= v <= 10**7:
                raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
        if not _is_real(self.rho) or not 0 < self.rho <= 1:
            raise ValueError(f"rho must be a number in (0, 1], got {self.rho!r}")
        sc = self.scale
        if sc is not None and (not _is_real(sc) or not 0 < sc < math.inf):
            raise ValueError(f"scale must be None or a positive number, got {sc!r}")
        if self.unmatched not in _UNMATCHED:
            raise ValueError(f"unmatched must be one of {_UNMATCHED}, got {self.unmatched!r}")

    @property
    def gamma_(self) -> float:
        """The step in use: ``gamma``, or the method's default (ACI 0.005, PID 0.05)."""
        if self.gamma is not None:
            return float(self.gamma)
        return 0.05 if self.method == "pid" else 0.005

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
            group_controllers.configure(self, m)
            self._model = m
            self.levels_ = np.zeros(0)
            for k, v in self._initial_rows(0, self.levels_).items():
                self.__dict__[k] = v
            self._n_seen = 0
            self._version = 0
            self._log = ServedLog(int(self.log_size), self._record_width())
            tracked_levels.reset(self)
            self._warned_late = False
            self._track(self._levels_of(self.alphas))
        return m

    @staticmethod
    def _default_model():
        """The model wrapped when ``model`` is None."""
        from .conformal import CPApproximate

        return CPApproximate()

    def _create_state(self) -> None:  # see Estimator._first_call
        _ = self.model_

    # the controllers' state (one row per tracked level): restored when a learning call fails
    _CONTROLLERS = ("alpha_t_", "p_", "isum_", "steps_", "win_", "win_n_", "win_pos_", "st_",
                    "cal_", "ex_")  # fmt: skip

    def _expert_shape(self) -> tuple:
        if self.method in ("dtaci", "agaci"):
            return (
                EXPERT_GAMMAS.shape[0],
                2 if self.method == "dtaci" else _core.intervals.N_AGACI_FIELDS,
            )
        if self.method == "saocp":
            return (SAOCP_CAPACITY, _core.intervals.N_SAOCP_FIELDS)
        return (1, 1)

    def _record_width(self) -> int:
        """A served row's record per level: own and base interval, the method's served
        quantities, and the level's count of learnt rows when served (the label's lag)."""
        if self.method in ("dtaci", "agaci"):
            K = EXPERT_GAMMAS.shape[0]
            return 5 + 2 * K if self.method == "dtaci" else 6 + K
        return 6

    def _initial_rows(self, k: int, levels) -> dict:
        """The controllers' initial state for ``k`` levels ``levels``."""
        st = np.zeros((k, _core.intervals.N_SCALARS))
        st[:, _core.intervals.TH] = 1.0 if self._SCALED else 0.0
        st[:, _core.intervals.CLOCK] = 1.0
        ex = np.zeros((k, *self._expert_shape()))
        if self.method == "dtaci":
            ex[:, :, 0] = np.asarray(levels, dtype=float)[:, None]
        elif self.method == "agaci":
            ex[:, :, _core.intervals.A_LEVEL] = np.asarray(levels, dtype=float)[:, None]
        W = int(self.score_window) if self.method in ("dtaci", "agaci", "nexcp") else 1
        return {
            "alpha_t_": np.asarray(levels, dtype=float).copy(),
            "p_": np.zeros(k),
            "isum_": np.zeros(k),
            "steps_": np.zeros(k, np.int64),
            "win_": np.zeros((k, int(self.window))),
            "win_n_": np.zeros(k, np.int64),
            "win_pos_": np.zeros(k, np.int64),
            "st_": st,
            "cal_": np.zeros((k, W)),
            "ex_": ex,
        }

    @contextmanager
    def _atomic(self):
        """A learning call: if it raises, the controllers are as they were (so a rejected call,
        e.g. an ``x`` the base model refuses after the controllers learnt from its interval,
        changes nothing)."""
        d = self.__dict__
        saved = {k: d[k].copy() for k in (*self._CONTROLLERS, "levels_", "_asked")}
        saved.update((k, d[k]) for k in ("_n_seen", "_layout", "_asked_clock"))
        try:
            yield
        except BaseException:
            d.update(saved)
            raise
        self._version += 1
        gc = d.get("_group_controllers")
        if gc is not None:
            gc.forget_untracked(self.levels_)

    def _track(self, levels: np.ndarray) -> None:
        tracked_levels.track(self, levels)

    @property
    def n_seen(self) -> int:
        return self.__dict__.get("_n_seen", 0)

    @property
    def alpha_t(self) -> dict:
        """ACI: the current level ``alpha_t`` of each tracked level."""
        _ = self.model_
        return {float(a): float(t) for a, t in zip(self.levels_, self.alpha_t_, strict=True)}

    @property
    def log_stats(self) -> dict:
        """Learnt rows by how they were fed back: ``matched`` (a served record), ``late`` (its
        record was evicted), ``unmatched`` (never served, or in another form); ``logged``: the
        served rows waiting for their labels."""
        lg = self.__dict__.get("_log")
        if lg is None:
            return {"matched": 0, "late": 0, "unmatched": 0, "logged": 0}
        return {"matched": lg.n_matched, "late": lg.n_late, "unmatched": lg.n_unmatched,
                "logged": len(lg)}  # fmt: skip

    def long_run_bound(self, n: int, delay: int = 0) -> dict:
        """The bound on ``|MER - alpha|`` after ``n`` labels that ACI and PID guarantee for each
        tracked level's own intervals on any sequence (ACI with labels learnt up to ``delay``
        labels after their row was served, each ``delay`` labels late when that caps the step;
        see the class docstring)."""
        _ = self.model_
        if self.method == "aci":
            g = min(self.gamma_, _core.intervals.LAG_GAIN / (1 + delay))
            return {float(a): (max(a, 1 - a) + g * (1 + delay)) / (g * n) for a in self.levels_}
        if self.method == "pid":
            c = (math.pi / 2) * float(self.csat) * (n + 1) / math.log(n + 1)
            return {float(a): (c + 1) / n for a in self.levels_}
        raise ValueError(f"method {self.method!r} has no finite-sample long-run bound here")

    # --- the passes ----------------------------------------------------------------------------
    def _plan(self, levels: np.ndarray):
        """The base levels to ask for and, for ACI, each level's ladder in them."""
        if self.method != "aci":
            return levels, None, None
        return controllers.aci_plan(levels)

    def _pass(self, levels, learns, blo, bhi, pred, y, mode, rec, s):
        """Run the method's compiled pass on the state ``s`` (a dict of the call's arrays);
        returns the reported ``(lo, hi)`` of shape (n, R)."""
        n, R = y.shape[0], levels.shape[0]
        order = np.argsort(levels, kind="stable").astype(np.int64)
        out_lo, out_hi = np.empty((n, R)), np.empty((n, R))
        own_lo, own_hi = np.empty(R), np.empty(R)
        blo = np.ascontiguousarray(blo, dtype=np.float64)
        bhi = np.ascontiguousarray(bhi, dtype=np.float64)
        pred = np.ascontiguousarray(pred, dtype=np.float64)
        if self.method == "aci":
            _, idx, logit = self._plan(levels)
            _core.intervals.aci_pass(
                blo,
                bhi,
                pred,
                y,
                mode,
                rec,
                idx,
                logit,
                levels,
                learns,
                self.gamma_,
                s["alpha_t_"],
                s["steps_"],
                order,
                out_lo,
                out_hi,
                own_lo,
                own_hi,
            )
        elif self.method == "pid":
            _core.intervals.pid_pass(blo, bhi, pred, y, mode, rec, levels, learns, self.gamma_,
                                     float(self.ki), float(self.csat), s["p_"], s["isum_"],
                                     s["steps_"], s["win_"], s["win_n_"], s["win_pos_"], order,
                                     out_lo, out_hi, own_lo, own_hi)  # fmt: skip
        else:
            gammas = EXPERT_GAMMAS
            eta = np.array([controllers.dtaci_eta(float(a), DTACI_INTERVAL, gammas.shape[0])
                            for a in levels])  # fmt: skip
            W = s["cal_"].shape[1]
            _core.intervals.online_pass(
                _SCORE_METHODS[self.method], self._SCALED, 0.0 if self._SCALED else -np.inf,
                1.0 if self._SCALED else 0.0, blo, bhi, pred, y, mode, rec, levels, learns,
                gammas, eta, 1.0 / (2 * DTACI_INTERVAL), self.gamma_, float(self.lifetime),
                float(self.scale) if self.scale is not None else 0.0, float(self.rho), False,
                s["st_"], s["cal_"], s["ex_"], order, out_lo, out_hi, own_lo, own_hi,
                np.empty(max(W, 1)), np.empty((2, gammas.shape[0])),
            )  # fmt: skip
        return out_lo, out_hi

    def _all_tracked(self, levels) -> bool:
        """``levels`` are the tracked levels, in their order (the calls pass a copy of
        ``levels_``, or it with untracked levels after it)."""
        return np.array_equal(levels, self.levels_)

    def _state_of(self, levels) -> dict:
        """The controllers' state for ``levels`` (copies; untracked levels at the initial
        state)."""
        if self._all_tracked(levels):
            return {k: self.__dict__[k].copy() for k in self._CONTROLLERS}
        idx = tracked_levels.index_of(self.levels_, levels)
        s = self._initial_rows(levels.shape[0], levels)
        for r, j in enumerate(idx):
            if j >= 0:
                for k in self._CONTROLLERS:
                    s[k][r] = self.__dict__[k][j]
        return s

    def _store_state(self, levels, s) -> None:
        if self._all_tracked(levels):
            for k in self._CONTROLLERS:
                self.__dict__[k][...] = s[k]
            return
        for r, j in enumerate(tracked_levels.index_of(self.levels_, levels)):
            if j >= 0:
                for k in self._CONTROLLERS:
                    self.__dict__[k][j] = s[k][r]

    def _levels_for(self, alphas: np.ndarray):
        """The levels a call works on: the tracked ones, then the requested ones not tracked;
        and the position of each requested level among them."""
        idx = tracked_levels.index_of(self.levels_, alphas)
        if np.all(idx >= 0):  # (every level asked for is tracked: the usual call)
            return self.levels_.copy(), idx, np.ones(self.levels_.shape[0], np.bool_)
        extra = [a for a, j in zip(alphas, idx, strict=True) if j < 0]
        extra = np.array(list(dict.fromkeys(float(a) for a in extra)))
        levels = np.concatenate([self.levels_, extra]) if extra.size else self.levels_.copy()
        pos = np.array([np.flatnonzero(np.abs(levels - a) <= 1e-12)[0] for a in alphas])
        learns = np.zeros(levels.shape[0], np.bool_)
        learns[: self.levels_.shape[0]] = True
        return levels, pos.astype(np.int64), learns

    def _feedback(self, keys, n: int, parts: int = 1):
        """How each learnt row teaches the controllers: ``(mode, rec, slots, late)`` from the
        served log (mode 2 with the record, else by ``unmatched``; ``parts``: records of that
        many controllers per level).  Changes nothing."""
        R = self.levels_.shape[0] * parts
        mode = np.ones(n, np.int8)
        rec = np.zeros((n, R, self._record_width()))
        log = self._log
        if keys is None or log.size == 0 or (not log.by_key and not log.evicted):
            slots, late = np.full(n, -1, np.int64), np.zeros(n, np.bool_)
        else:
            slots, late = log.find(keys)
            for i in np.flatnonzero(slots >= 0):
                # (tracked levels changed since: learn as unmatched)
                if log.n_levels[slots[i]] == R and log.layout[slots[i]] == self._layout:
                    mode[i] = 2
                    rec[i] = log.rec[slots[i], :R]
        if keys is not None:
            none = mode != 2
            if none.any():
                if self.unmatched == "raise" and self.__dict__.get("_n_seen", 0) > 0:
                    what = (
                        "late (its record was evicted: raise log_size)"
                        if late[none].any()
                        else "never served (predict its interval first, in the same form)"
                    )
                    raise ValueError(f"unmatched='raise': a learnt row was {what}")
                if self.unmatched == "skip":
                    mode[none] = 3
            if late.any() and not self.__dict__.get("_warned_late"):
                self._warned_late = True
                warnings.warn(
                    f"AdaptiveConformal: {int(late.sum())} label(s) came after their served "
                    f"intervals left the log (log_size={self.log_size}); they are handled as "
                    f"unmatched={self.unmatched!r}.  Raise log_size above the delay plus the "
                    "batch size.",
                    RuntimeWarning,
                    stacklevel=4,
                )
        return mode, rec, slots, late

    def _run(self, base_call, y, alphas, learn: bool, keys=None, serve: bool = False):
        """``base_call(levels) -> (pred, iv)`` gives the base model's predictions and intervals
        (``(n, L, 2)``) at the base levels of the plan (learning, the base learns the rows
        there); returns ``(pred, lo, hi)`` at ``alphas``.  ``keys``: the learnt rows' keys, to
        learn from what was served for them; ``serve``: log the served rows under ``keys``."""
        levels, pos, learns = self._levels_for(alphas)
        R = self.levels_.shape[0]
        n = None if y is None else y.shape[0]
        fb = self._feedback(keys, n) if learn else None
        pred, iv = base_call(self._plan(levels)[0])
        n = iv.shape[0]
        if y is None:  # prediction only
            y = np.zeros(n)
        if fb is None:
            mode, rec = np.zeros(n, np.int8), np.zeros((n, levels.shape[0], self._record_width()))
        else:
            mode, rec = fb[0], fb[1]
            if levels.shape[0] > R:  # (untracked levels: records only for the tracked ones)
                full = np.zeros((n, levels.shape[0], rec.shape[2]))
                full[:, :R] = rec
                rec = full
        s = self._state_of(levels)
        lo, hi = self._pass(levels, learns, iv[:, :, 0], iv[:, :, 1], pred, y, mode, rec, s)
        if learn:
            self._store_state(levels, s)
            if keys is not None:
                self._log.commit(keys, fb[2], fb[3])
        elif serve and keys is not None and R > 0:
            self._log.add(keys, rec[:, :R], self._version, layout=self._layout)
        return pred, lo[:, pos], hi[:, pos]

    def _drop_served(self, keys) -> None:
        """Rows served earlier and learnt by ``predict_learn_many`` (which serves them again):
        their records go, so they cannot answer for another row."""
        log = self._log
        if log.by_key:
            slots, late = log.find(keys)
            hit = slots >= 0
            if hit.any():
                log.commit([k for k, h in zip(keys, hit, strict=True) if h], slots[hit],
                           late[hit])  # fmt: skip
                log.n_matched -= int(hit.sum())

    # --- array API -------------------------------------------------------------------------------
    @group_controllers.grouped
    def predict_learn_many(self, X, y, alpha=0.1, w=None):
        """Prequential pass: for each row the prediction and interval the wrapper gives *before*
        learning it, then it learns the row (controllers, from that interval, then the base
        model).  The levels asked for are tracked from now on.  Returns ``(predictions,
        intervals)``: ``(n, 2)`` for one level, ``(n, len(alpha), 2)`` for a list."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_learn_many, X, y, alpha, w)
        m = self.model_
        ya = check_targets(y, n_rows(X))
        check_weights(w, ya.shape[0])

        def base(levels):
            return m.predict_learn_many(X, y, alpha=levels.copy(), w=w)

        with self._atomic():
            self._track(alphas)
            pred, lo, hi = self._run(base, ya, alphas, learn=True)
            self._n_seen += ya.shape[0]
            if self._log.by_key:
                self._drop_served(row_keys(X, False))
        out = np.stack([lo, hi], axis=-1)
        return pred, (out[:, 0, :] if scalar else out)

    @group_controllers.grouped
    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` in order: the controllers from the intervals served for them
        (see "Feedback on what was served"), then the base model."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.learn_many, X, y, w)
        m = self.model_
        ya = check_targets(y, n_rows(X))
        check_weights(w, ya.shape[0])

        def base(levels):
            return m.predict_learn_many(X, y, alpha=levels.copy(), w=w)

        with self._atomic():
            self._run(base, ya, self.levels_.copy(), learn=True, keys=row_keys(X, False))
            self._n_seen += ya.shape[0]
        return self

    def predict(self, X) -> np.ndarray:
        """Point predictions (the base model's)."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict, X, keep=False)
        return self.model_.predict(X)

    @group_controllers.grouped
    def predict_interval(self, X, alpha=0.1, log: bool = True) -> np.ndarray:
        """The intervals the wrapper serves now at significance ``alpha`` (a number or a list):
        ``(n, 2)`` or ``(n, len(alpha), 2)``.  Logs what was served for each row (``log=False``:
        only look; then a later label of these rows is unmatched); changes nothing else."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_interval, X, alpha, log, keep=False)
        m = self.model_

        def base(levels):
            return m.predict(X), m.predict_interval(X, alpha=levels.copy())

        keys = row_keys(X, False) if log and self._log.size else None
        pred, lo, hi = self._run(base, None, alphas, learn=False, keys=keys, serve=True)
        out = np.stack([lo, hi], axis=-1)
        return out[:, 0, :] if scalar else out

    # --- River-style API -------------------------------------------------------------------------
    def _one(self, x, alphas, learn: bool, y: float = 0.0, keys=None, serve=False):
        m = self.model_

        def base(levels):
            iv = np.array(m.predict_interval_one(x, alpha=levels.copy()), dtype=np.float64)
            return np.array([m.predict_one(x)], dtype=np.float64), iv[None]

        return self._run(base, np.array([y]) if learn else None, alphas, learn, keys, serve)

    @group_controllers.grouped
    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example: the controllers from the interval served for ``x`` (see "Feedback
        on what was served"), then the base model learns ``(x, y)``."""
        yf = check_target(y)
        check_weight(w)
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.learn_one, x, y, w)
        m = self.model_
        with self._atomic():
            keys = row_keys(x, True)
            fb = self._feedback(keys, 1)
            # the controllers first (from the record, or from the interval given now), the
            # base model after
            levels = self.levels_.copy()
            s = self._state_of(levels)
            if fb[0][0] == 2:
                iv = np.zeros((1, self._plan(levels)[0].shape[0], 2))
                pred = np.zeros(1)
            else:
                iv = np.array(m.predict_interval_one(x, alpha=self._plan(levels)[0].copy()),
                              dtype=np.float64)[None]  # fmt: skip
                pred = np.array([m.predict_one(x)], dtype=np.float64)
            self._pass(levels, np.ones(levels.shape[0], np.bool_), iv[:, :, 0], iv[:, :, 1],
                       pred, np.array([yf]), fb[0], fb[1], s)  # fmt: skip
            m.learn_one(x, yf, w)
            self._store_state(levels, s)
            self._log.commit(keys, fb[2], fb[3])
            self._n_seen += 1

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Point prediction for one example (the base model's)."""
        if "_model" not in self.__dict__:
            return self._first_call(AdaptiveConformal.predict_one, x, keep=False)
        return self.model_.predict_one(x)

    @group_controllers.grouped
    def predict_interval_one(self, x: Mapping[Hashable, object], alpha=0.1, log: bool = True):
        """``(lower, upper)`` served for one example, or a list of them for a list of ``alpha``;
        logged as :meth:`predict_interval`."""
        alphas, scalar = check_alphas(alpha)
        if "_model" not in self.__dict__:
            return self._first_call(
                AdaptiveConformal.predict_interval_one, x, alpha, log, keep=False
            )
        keys = row_keys(x, True) if log and self._log.size else None
        _, lo, hi = self._one(x, alphas, False, keys=keys, serve=True)
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
    def memory_budget_bytes(self) -> int | None:
        """The wrapped model's budget in bytes (0 before learning; the controllers and the
        served log come on top, ``memory_bytes`` counts them)."""
        return memory_budget([self.__dict__["_model"]]) if "_model" in self.__dict__ else 0

    @property
    def memory_bytes(self) -> int:
        if "_model" not in self.__dict__:
            return 0
        own = sum(v.nbytes for k, v in self.__dict__.items() if isinstance(v, np.ndarray))
        gc = self.__dict__.get("_group_controllers")
        own += gc.nbytes() if gc is not None else 0
        return self.model_.memory_bytes + own + self._log.nbytes
