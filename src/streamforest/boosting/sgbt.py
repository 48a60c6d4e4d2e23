"""Streaming gradient-boosted trees: :class:`SGBTRegressor` (Gunasekara, Pfahringer, Gomes &
Bifet, "Gradient boosted trees for evolving data streams", Machine Learning 113, 2024)."""

from __future__ import annotations

import math
import numbers

import numpy as np

import streamforest._core as _core

from ..engine.budget import DEFAULT_MEMORY_MB
from ..engine.core import Engine
from ..engine.forest_interface import BOOSTED, TREE_MEMBERS, RegressionForest, lacks
from ..forests.hoeffding_trees import HoeffdingTrees
from ..tree_kinds import state
from ..trees import HoeffdingTreeRegressor

_boosting = _core.boosting  # the boosting passes (src/core/boosting/sgbt.hpp)


def _new_guard() -> np.ndarray:
    """A fresh label guard's state (src/core/common/label_guard.hpp)."""
    return np.zeros(_core.common.GUARD_SIZE)


_WRAPPERS = (
    "SGBTRegressor is not a bagged forest: an interval method that uses the trees one by one "
    "(out-of-bag calibration, the trees' spread or leaf sketches) does not apply to it; use "
    "NormalizedConformal (normalize='residuals', the default) or AdaptiveConformal over it"
)


def default_tree() -> HoeffdingTreeRegressor:
    """The steps' tree: MOA SGBT's default base learner, ``FIMTDD -s
    VarianceReductionSplitCriterion -g 25 -c 0.05 -e`` (grace period 25, split confidence
    0.05, tie threshold 0.05, mean leaves) with FIMT-DD's change adaptation (Page-Hinkley tests
    in the split nodes, alternate subtrees: lambda 50, alpha 0.005), at most 6 levels deep
    (XGBoost's default depth; FIMT-DD has no limit)."""
    return HoeffdingTreeRegressor(
        grace_period=25,
        delta=0.05,
        tau=0.05,
        leaf_model="mean",
        drift_detection=True,
        max_depth=6,
    )


class BoostEngine(Engine):
    """The engine of an :class:`SGBTRegressor`: the boosting steps are its trees (one arena),
    run row-major through the compiled core's boosting passes (``_core.boosting``).

    To the interval methods (which see a forest's engine) it shows *one* member, the boosted
    prediction: :meth:`predict_trees` and :meth:`predict_learn` give ``(1, n)`` arrays, the
    bagging weights are the sample weights (no bagging), and the mean of one member is itself.
    A step whose own drift detector fires (``drift_threshold``) is replaced by a fresh tree
    before the next row (no background trees)."""

    def __init__(self, specs, features, learning_rate, max_memory_mb=None, seed=None):
        super().__init__(specs, features, bagging=0.0, seed=seed, aggregation="mean",
                         max_memory_mb=max_memory_mb, n_jobs=1, warning=0.0)  # fmt: skip
        self.learning_rate = float(learning_rate)
        self.base_score = None  # the first target learnt: the raw score's start (see below)
        self.label_guard = _new_guard()  # the label guard's state (see SGBTRegressor)

    def _scratch(self) -> None:
        super()._scratch()
        self._acc = np.zeros(_boosting.ACC_SIZE)
        self._p1 = np.zeros(1)

    def __setstate__(self, d):
        super().__setstate__(d)
        if "label_guard" not in self.__dict__:  # saved before the guard: a fresh one
            self.label_guard = _new_guard()

    def __getstate__(self):
        d = super().__getstate__()
        d.pop("_acc", None)
        d.pop("_p1", None)
        return d

    def restrict(self, trees) -> None:
        raise TypeError("the steps of a boosted model cannot be split over processes")

    def run(self, step, n, before=None, on_reset=None, rows=None) -> None:
        raise TypeError(_WRAPPERS)

    # --- the signals of the steps' detectors ------------------------------------------------------
    def _act_on_drift(self) -> None:
        with self._lock:
            for t in np.flatnonzero(self._drifted).tolist():
                code = self.int_of(t, state.I_DRIFT)
                if code:
                    self._signal(t, code)  # warning = 0: a drift, a fresh tree

    # --- batches ----------------------------------------------------------------------------------
    def bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """No bagging: the sample weights, as the one member's ``(1, n)`` weights."""
        return np.ascontiguousarray(wa, dtype=np.float64).reshape(1, -1)

    def _base(self, y: float) -> float:
        if self.base_score is None:
            self.base_score = float(y)
        return self.base_score

    def _boost(self, Xa, ya, wa, out) -> None:
        n = Xa.shape[0]
        if not n:
            return
        Xa = np.ascontiguousarray(Xa, dtype=np.float64)
        first = self.base_score is None  # row 0 sets the base: its prediction is made without
        base = self._base(ya[0])
        ya = np.ascontiguousarray(ya - base, dtype=np.float64)
        wa = np.ascontiguousarray(wa, dtype=np.float64)
        i, t0 = 0, _boosting.FRESH
        self._hint = None
        while i < n:
            i, s = _boosting.boost_rows(
                self.arena, Xa, ya, wa, self.learning_rate, i, t0, self._acc, self._drifted,
                self.label_guard, out,
            )  # fmt: skip
            if s >= 0:
                self.make_room(int(s))
                t0 = int(s)
                continue
            t0 = _boosting.FRESH
            if s == _boosting.DRIFTED:
                self._act_on_drift()
        p0 = out[0]
        out += base
        if first:
            out[0] = p0

    def learn(self, Xa, ya, W, wa) -> None:
        self._boost(Xa, ya, W[0], np.empty(Xa.shape[0]))

    def predict_learn(self, Xa, ya, W, wa) -> np.ndarray:
        P = np.zeros((1, Xa.shape[0]))
        self._boost(Xa, ya, W[0], P[0])
        return P

    def predict_trees(self, Xa) -> np.ndarray:
        n = Xa.shape[0]
        P = np.zeros((1, n))
        if self.fitted and n:
            Xa = np.ascontiguousarray(Xa, dtype=np.float64)
            _boosting.boost_predict_rows(self.arena, Xa, self.learning_rate, P[0])
            P[0] += self.base_score or 0.0
        return P

    # --- one example ------------------------------------------------------------------------------
    def learn_one(self, row, y, w, kernel=None, extra=(), memo=False, handle=None):
        if kernel is not None or handle is not None:
            raise TypeError(_WRAPPERS)
        if not (row.flags.c_contiguous and row.dtype == np.float64 and row.ndim == 1):
            row = np.ascontiguousarray(row, dtype=np.float64).reshape(-1)
        return self._one(row, float(y), float(w))

    def learn_row(self, y: float, w: float):
        return self._one(self.row_buffer, y, w)

    def _one(self, row, y, w):
        self._hint = None
        first = self.base_score is None  # (as in _boost)
        base = self._base(y)
        y = y - base
        t0 = _boosting.FRESH
        lr = self.learning_rate
        while True:
            s = _boosting.boost_one(
                self.arena, row, y, w, lr, t0, self._acc, self._drifted, self.label_guard
            )
            if s == _boosting.DONE:
                break
            if s >= 0:
                self.make_room(s)
                t0 = s
                continue
            self._act_on_drift()
            break
        self._p1[0] = self._acc[1] if first else self._acc[1] + base
        return self._p1

    def predict_one(self, row) -> float:
        if not (row.flags.c_contiguous and row.dtype == np.float64 and row.ndim == 1):
            row = np.ascontiguousarray(row, dtype=np.float64).reshape(-1)
        p = _boosting.boost_predict_one(self.arena, row, self.learning_rate)
        return p + (self.base_score or 0.0)


class SGBTRegressor(HoeffdingTrees, RegressionForest):
    """Streaming gradient-boosted trees (SGBT; Gunasekara, Pfahringer, Gomes & Bifet, Machine
    Learning 2024).

    ``n_steps`` boosting steps, each a Hoeffding regression tree of this library.  For each
    example, step ``t`` learns the Newton step of the squared loss at the raw score ``F_t`` of
    the steps before it (target ``-g / h = y - F_t``, weight ``h * w = w``: the weighted squared
    loss the paper elicits from XGBoost), then ``F_{t+1} = F_t + learning_rate * f_t(x)`` with
    the step's tree after learning the example (as MOA's SGBT).  The model predicts
    ``F_0 + learning_rate * sum_t f_t(x)``.  The loop over the steps is one compiled call per
    example (per chunk of rows in ``learn_many``/``predict_learn_many``).

    Drift: as in the paper, the steps' trees adapt through their own detectors.  The default
    tree is FIMT-DD (MOA SGBT's base learner) with its change adaptation: Page-Hinkley tests
    in the split nodes grow alternate subtrees that replace the subtrees whose error rose
    (``HoeffdingTreeRegressor(drift_detection=True)``).  ``drift_threshold`` adds a test on
    each step's whole error: when it fires, that step restarts as a fresh tree (the other
    steps are kept, so the following steps learn around it).

    Departures from the paper and MOA (``moa.classifiers.meta.StreamingGradientBoostedTrees``):

    - the raw score starts at ``F_0``, the first target learnt (``engine_.base_score``), not
      at 0: the model is then the same for ``y + c`` as for ``y`` (up to rounding), a constant
      target is predicted exactly, and the steps need not first learn the targets' offset;

    - the feature subspace (``feature_fraction``, MOA's ``-m 75``) is drawn per *leaf* (this
      library's trees' ``max_features``), not once per boosting step;
    - the prediction is scaled by the learning rate, as the paper's equation (MOA sums the
      steps' predictions unscaled, which only agrees for ``learning_rate=1``: with its
      classification loss the scale does not change the argmax);
    - ``learning_rate`` defaults to 0.0625, not MOA's 0.0125: with squared loss and no base
      score, ``n_steps`` steps can only remove a fraction ``1 - (1 - lr)^n_steps`` of the target
      (72% at MOA's 100 steps and 0.0125), so the raw score stays biased towards 0 (MOA's
      default is tuned for classification, where the softmax hides the scale);
    - the defaults (issue 49) are 200 steps at 0.0625 with ``drift_threshold=50`` (a step
      whose whole error rises restarts), not MOA's 100 steps: against the defaults before
      (100 steps at 0.125, no whole-step test) they erred less on 20 of the 21 shared real sets
      and streams where both were run, and recovered from an abrupt drift in ~1.5k rows instead
      of ~6k, at about half the rows/s (docs/benchmarks/defaults.md); the defaults before are
      ``SGBTRegressor(n_steps=100, learning_rate=0.125, drift_threshold=None)``;
    - the steps' trees stop growing at depth 6 (MOA's FIMT-DD grows without limit): a
      hundred unlimited trees fill the memory budget within 100k rows of Friedman #1, learn
      several times slower, and err more once the budget has frozen them (``python
      benchmarks/learners.py``, its docstring);
    - no "skip" or "multiple iterations" variants (MOA's ``-S`` and ``-M``; with squared loss
      ``h = 1``, so ``-M`` changes nothing).

    Label glitches: a target far outside the range of the targets learnt so far (more than ten
    times the range's width beyond it, after the first 32: a sensor spike, a unit slip) is set
    aside by a label guard (``src/core/common/label_guard.hpp``, its state
    ``engine_.label_guard``): the row is predicted as any other, but every step learns it with
    weight 0, so no leaf holds it.  Without it one target of 1e12 stayed in the steps' leaves
    for good (the mean absolute error 50k rows later was a million times the glitch-free one).
    A real change of scale is let through after a few flagged rows; on a stream whose targets
    stay within the guard's margin nothing changes.  See docs/intervals.md, "Label glitches".

    It is not a bagged forest: it implements the forest interface
    (:class:`~streamforest.engine.forest_interface.RegressionForest`, with the Hoeffding trees'
    ``trees_``, ``params_`` and ``tree_template``) without any capability, so the interval
    methods take it as their ``forest`` but only those that use the forest's prediction alone
    apply (:class:`~streamforest.NormalizedConformal` with its default
    ``normalize="residuals"``, and :class:`~streamforest.AdaptiveConformal` over it; the others
    raise a ``TypeError`` naming the capability they need).

    Parameters
    ----------
    n_steps
        Boosting steps (trees); 200 (MOA's default: 100).
    learning_rate
        Shrinkage of each step (see above).
    feature_fraction
        Fraction of the features each leaf observes (MOA: 75%); ``None`` or 1: all.
    tree
        Template of the steps' trees (its ``max_features``, ``seed``, ``drift_threshold`` and
        ``drift_delta`` are replaced); default :func:`default_tree`.
    drift_threshold, drift_delta
        ``None``, or the Page-Hinkley test of each step's whole tree (see
        :class:`OnlineForestRegressor`); a step whose test fires restarts empty (default 50).
    max_memory_mb
        Memory budget of all the steps' trees (split evenly), as :class:`OnlineForestRegressor`'s.
    n_jobs
        Accepted for the interval methods (they overlap their scoring with learning when > 1);
        the steps themselves run in order on one thread.
    seed
        Seed of the trees' feature subsets: the same seed gives the same model.

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import SGBTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(3000, 3)); y = 10 * (X[:, 0] > 0.5) + rng.normal(size=3000)
    >>> model = SGBTRegressor(n_steps=20, learning_rate=0.5, seed=1).learn_many(X, y)
    >>> [round(float(v)) for v in model.predict([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]])]
    [10, 0]
    """

    forest_limits = _WRAPPERS
    #: A boosted base (the interval methods' calibration settings for it: docs/intervals.md).
    forest_kind = BOOSTED
    # as a Hoeffding forest's: a boosted model has no bagging, no background trees
    lambda_value = 0.0
    aggregation = "mean"
    warning_fraction = None

    def __init__(
        self,
        n_steps: int = 200,
        learning_rate: float = 0.0625,
        feature_fraction: float | None = 0.75,
        tree: HoeffdingTreeRegressor | None = None,
        drift_threshold: float | None = 50.0,
        drift_delta: float = 0.005,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_steps = n_steps
        self.learning_rate = learning_rate
        self.feature_fraction = feature_fraction
        self.tree = tree
        self.drift_threshold = drift_threshold
        self.drift_delta = drift_delta
        self.max_memory_mb = max_memory_mb
        self.n_jobs = n_jobs
        self.seed = seed

    @property
    def n_trees(self):
        """Not a forest's count of bagged members: ``TypeError`` (the capability tree members;
        the steps' trees are ``n_steps``)."""
        raise lacks(self, TREE_MEMBERS, "n_trees")

    @property
    def n_leaves(self) -> int:
        return sum(t.n_leaves for t in self.trees_) if self.is_fitted else int(self.n_steps)

    @property
    def drift_stats_(self) -> dict:
        """Counts of the steps' whole-tree drift detectors (``drift_threshold``): ``drifts``
        and ``replacements`` (fresh trees), in total and per step (``per_tree``); FIMT-DD's
        alternate subtrees are counted by each tree (``trees_[t]``)."""
        return RegressionForest.drift_stats_.fget(self)

    def member_count(self) -> int:
        """The boosting steps' trees: ``n_steps``."""
        return int(self.n_steps)

    @property
    def max_features(self):
        ff = self.feature_fraction
        return None if ff is None or ff == 1 else float(ff)

    def _check_params(self) -> None:
        n = self.n_steps
        if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= 10_000):
            raise ValueError(f"n_steps must be an integer in [1, 10000], got {n!r}")
        lr = self.learning_rate
        if isinstance(lr, bool) or not (
            isinstance(lr, numbers.Real) and 0 < lr <= 1 and math.isfinite(lr)
        ):
            raise ValueError(f"learning_rate must be a number in (0, 1], got {lr!r}")
        ff = self.feature_fraction
        if ff is not None and (
            isinstance(ff, bool) or not (isinstance(ff, numbers.Real) and 0 < ff <= 1)
        ):
            raise ValueError(f"feature_fraction must be None or a number in (0, 1], got {ff!r}")
        if self.tree is not None and not isinstance(self.tree, HoeffdingTreeRegressor):
            raise TypeError(
                f"tree must be a HoeffdingTreeRegressor template, got {type(self.tree).__name__}"
            )
        self._check_engine_params()

    def tree_template(self) -> HoeffdingTreeRegressor:
        """The tree the steps' trees are clones of."""
        return self.tree if self.tree is not None else default_tree()

    def _make_engine(self, features) -> BoostEngine:
        specs, seed = self.tree_specs(self.n_steps)
        return BoostEngine(specs, features, float(self.learning_rate),
                           max_memory_mb=self.max_memory_mb, seed=seed)  # fmt: skip

    def __setstate__(self, d):
        self.__dict__.update(d)

    def tree_predictions(self, X) -> np.ndarray:
        """``(n, n_steps)``: each step's tree's prediction, unscaled (``predict`` is
        ``engine_.base_score`` plus ``learning_rate`` times their row sums)."""
        if "features_" not in self.__dict__:
            return self._first_call(SGBTRegressor.tree_predictions, X, keep=False)
        e = self._engine
        Xa = self.encode_predict(X)
        return Engine.predict_trees(e, Xa).T
