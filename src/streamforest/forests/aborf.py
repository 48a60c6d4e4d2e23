"""ABORF: the Approximately Bayesian Online Randomized Forest (Seah's thesis, ch. 6)."""

from __future__ import annotations

import math
import numbers
from types import MappingProxyType

import numpy as np

from ..engine import forest_interface
from ..engine.budget import DEFAULT_MEMORY_MB
from ..engine.core import Engine
from ..trees import ABORFTreeRegressor
from .online_forest import OnlineForestRegressor

WEIGHTINGS = ("evidence", "equal")
LEAF_MODELS = ("rmsprop", "bayesian")


class ABORFRegressor(OnlineForestRegressor):
    """ABORF (Seah 2021, ch. 6): pre-grown random trees, linear leaves, evidence-weighted.

    **Defaults and the thesis' settings.**  The defaults grow shallower trees with a slower leaf
    rate than the thesis' Table 6.2 (``depth=6, learning_rate=0.05`` against ``Q = 10, eta =
    0.25``): with 1024 leaves a tree leaves most of them with a few examples on a stream of
    thousands of rows, and there the thesis' fast leaves did worse than the mean.
    ``ABORFRegressor(**ABORFRegressor.THESIS)`` is the thesis' forest (Table 6.2), used by the
    reproduction benchmarks; the figures are in the docs' user guide (trees and forests).

    Which stream each is for: the **defaults** for streams of thousands to a hundred thousand
    rows (the battery of ``tests/test_defaults.py``; on 100k rows of Friedman #1 MAE 1.583
    stationary and 1.642 with the global abrupt drift, against 1.710 and 1.925 with
    ``THESIS``); **THESIS** for long streams, where each of its 1024 leaves per tree sees many
    rows: the thesis' FRIEDMAN stream (``Friedman.thesis()``, 1M rows, abrupt drifts at n/4,
    n/2, 3n/4), where it reproduces the thesis and beats the defaults (MAE 1.413 against
    1.533; ``python benchmarks/aborf_friedman.py --thesis-stream --n 1000000``).

    **Memory.**  Its trees are grown whole when the first feature arrives, so rows do not make
    them grow; features do (every leaf and oblique split is as wide as the rows).  The forest's
    fixed budget (``max_memory_mb``, 256 MiB, an attribute, not a parameter) caps its features
    as for every forest (:class:`~streamforest.FeatureCapWarning`).

    - **Trees** (:class:`~streamforest.trees.ABORFTreeRegressor`,
      :mod:`streamforest.tree_kinds.pregrown`): ``n_trees`` (``K``) balanced trees of depth
      ``depth`` (``Q``) built before any data, each split through the Monte Carlo centre of its
      cell along a random direction (``oblique=True``) or on one random feature
      (``oblique=False``); nominal features split by a random assignment of categories.  Inputs
      are min-max scaled online.  The trees are built for the features known when the model
      first learns; later features are used by the leaves only.
    - **Leaves**: linear models by RMSProp with ``learning_rate`` ``eta`` and
      ``leaf_decay`` ``gamma = 0.96`` (the running mean of squared gradients, Algorithm 6.2;
      the coefficients' decay is ``coef_decay``, off by default, see below).
    - **Weights** (Algorithm 6.3, ``evidence_fading`` ``gamma_T = 0.9996``): each tree's log
      evidence ``(-e_T + log b_T) / |leaves|`` is updated after every example it learns; the
      forest predicts ``sum_t w_t y_t`` with ``w = softmax(log evidence)`` (the weights sum to 1,
      :attr:`weights_`).  ``weighting="equal"``: the plain mean (the thesis' benchmark).  There
      is no drift detection: the fast-forgetting leaves and the weights adapt.
    - **The Bayesian variant** (``leaf_model="bayesian"``, thesis §6.2.1-6.2.2, the model that
      ABORF approximates): each leaf is a conjugate Bayesian linear regression of its target
      less the leaf's running mean (the thesis' prior is centred at 0: an offset of the
      targets then moved every prediction) on its standardised inputs, with a
      normal-inverse-gamma prior (``Lambda_0 = prior_precision I``,
      ``0.1`` as in the thesis' Table 6.3; ``sigma^2 ~ IG(prior_shape, prior_scale)``, 0.001
      each), forgetting its past with ``leaf_decay`` ``gamma`` (eqs. 6.32-6.33; ``gamma = 1``
      allowed: the stationary model), updated exactly after every example (a rank-one update of
      its scatter, then an ``O(D^3)`` solve, see :mod:`streamforest.tree_kinds.leaf_models`), and
      predicting its posterior mean.  A tree's evidence is its marginal likelihood, kept as the
      faded sum of the log posterior predictive densities (Student t) of the examples it learnt
      (``e_T <- gamma_T e_T - log p(y | x, leaf posterior)``; with ``gamma = gamma_T = 1`` the sum
      is the log of the thesis' tree likelihood, eq. 6.21, by the chain rule); the weights are
      ``w_t ~ exp(-e_T / |leaves|)``, the power likelihood of eq. 6.27 (the thesis mixes the
      evidence itself with ``gamma_T / (1 + gamma_T)``, eq. 6.38, about 1/2 per example: we fade
      its log as Algorithm 6.3 does).  ``learning_rate`` and ``coef_decay`` do not apply.  It
      is several times slower than the default per row (the docs' benchmark pages) and each
      leaf keeps
      a ``(D + 2) x (D + 2)`` matrix (about ``2**depth * 8 (D + 2)**2`` more bytes per tree).

    It is an :class:`~streamforest.OnlineForestRegressor` (same engine, both APIs, threads), so
    it serves as the forest of the interval methods.  Every tree learns every example
    (``lambda_value = 0``, the thesis); the conformal methods calibrate on out-of-bag examples,
    so they need ``lambda_value > 0`` (Poisson online bagging, each tree's evidence then counts
    its own examples).  A prediction made before learning a chunk uses each row's weights at
    that row in ``predict_learn_many`` and under CPApproximate; the other interval methods
    aggregate a chunk they learn with the weights reached at its end.

    Parameters
    ----------
    n_trees
        ``K``, the number of trees (10, the thesis' comparisons).
    depth
        ``Q``, the depth of every tree (6; the thesis': 10).
    oblique
        Random-projection splits (the thesis) or axis-aligned ones.
    learning_rate, leaf_decay
        ``eta`` (0.05; the thesis': 0.25) and ``gamma`` of the leaves' RMSProp (``gamma`` also
        fades each leaf's count and squared errors in the evidence); for Bayesian leaves
        ``gamma`` is their forgetting (in ``(0, 1]``).
    leaf_model
        ``"rmsprop"`` (ABORF, the thesis' approximation, §6.2.3) or ``"bayesian"`` (the
        thesis' Bayesian model, §6.2.1-6.2.2, see above).
    prior_precision, prior_shape, prior_scale
        The Bayesian leaves' prior: ``c`` of ``Lambda_0 = c I`` (> 0), ``a_0`` and ``b_0`` of the
        inverse-gamma prior of the noise variance.
    coef_decay
        Factor applied to the leaves' coefficients before each step, 1 for none.  Algorithm
        6.2 uses ``gamma`` (0.96): its leaves are raw linear models, where the decay forgets
        towards the prior 0; this library's linear leaf predicts around the leaf's mean
        (:mod:`streamforest.tree_kinds.leaf_models`), where the decay pulls towards that
        cumulative mean instead, and was worse on Friedman #1, stationary and with the
        thesis' drifts (``benchmarks/aborf_friedman.py``).
    evidence_fading
        ``gamma_T`` of the tree weights.
    weighting
        ``"evidence"`` (Algorithm 6.3) or ``"equal"``.  On stationary Friedman #1 both give
        about the same error (as in the thesis); with ``lambda_value > 0`` each tree's evidence
        counts only its own examples and the evidence weights did worse than equal ones
        (``benchmarks/aborf_friedman.py``).
    mc_points
        Monte Carlo points per tree (``None``: ``3 * 2**(D - 1)`` within bounds, see
        :func:`streamforest.tree_kinds.pregrown.mc_point_count`).
    lambda_value
        Poisson rate of online bagging, 0 for none.
    nominal_features
        Names (or column indices) of features to treat as nominal.
    n_jobs, seed
        As in :class:`~streamforest.OnlineForestRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import ABORFRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(4000, 3)); y = 10 * (X[:, 0] > 0.5) + rng.normal(size=4000)
    >>> model = ABORFRegressor(n_trees=5, depth=6, seed=1).learn_many(X, y)
    >>> hi, lo = model.predict([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]])
    >>> bool(hi > lo + 5)  # the step of 10 at x0 = 0.5, learnt
    True
    >>> round(float(model.weights_.sum()), 6)
    1.0
    """

    #: The thesis' settings (Table 6.2): ``ABORFRegressor(**ABORFRegressor.THESIS)``.
    THESIS = MappingProxyType(
        {
            "n_trees": 10,
            "depth": 10,
            "oblique": True,
            "learning_rate": 0.25,
            "leaf_decay": 0.96,
            "evidence_fading": 0.9996,
            "weighting": "evidence",
            "lambda_value": 0.0,
        }
    )

    # the distributed layer is checked (tests/test_distributed.py) on the plain forest only
    forest_capabilities = OnlineForestRegressor.forest_capabilities - {forest_interface.TREE_SHARDS}
    forest_limits = "ShardedForest has not been checked against its trees (split a plain forest)"

    def __init__(
        self,
        n_trees: int = 10,
        depth: int = 6,
        oblique: bool = True,
        learning_rate: float = 0.05,
        leaf_decay: float = 0.96,
        coef_decay: float = 1.0,
        evidence_fading: float = 0.9996,
        weighting: str = "evidence",
        mc_points: int | None = None,
        leaf_model: str = "rmsprop",
        prior_precision: float = 0.1,
        prior_shape: float = 0.001,
        prior_scale: float = 0.001,
        lambda_value: float = 0.0,
        nominal_features: tuple | None = None,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_trees = n_trees
        self.depth = depth
        self.oblique = oblique
        self.learning_rate = learning_rate
        self.leaf_decay = leaf_decay
        self.coef_decay = coef_decay
        self.evidence_fading = evidence_fading
        self.weighting = weighting
        self.mc_points = mc_points
        self.leaf_model = leaf_model
        self.prior_precision = prior_precision
        self.prior_shape = prior_shape
        self.prior_scale = prior_scale
        self.lambda_value = lambda_value
        self.nominal_features = nominal_features
        self.n_jobs = n_jobs
        self.seed = seed

    # the forest's parameters this model fixes
    max_features = None
    drift_threshold = None
    drift_delta = 0.005
    warning_fraction = None
    # its trees are grown whole at creation (2**depth leaves each): the budget bounds only their
    # width, the features a stream brings (the feature cap, see streamforest.features)
    max_memory_mb = DEFAULT_MEMORY_MB
    # defaults of the parameters added since (for models saved before them)
    leaf_model = "rmsprop"
    prior_precision = 0.1
    prior_shape = 0.001
    prior_scale = 0.001

    def __setstate__(self, d):
        self.__dict__.update(d)  # (not the forest's upgrade of format-1 files: no such ABORF)

    @property
    def aggregation(self) -> str:
        return "weighted" if self.weighting == "evidence" else "mean"

    @property
    def tree(self) -> ABORFTreeRegressor:
        bayes = self.leaf_model == "bayesian"
        return ABORFTreeRegressor(
            depth=self.depth,
            oblique=self.oblique,
            learning_rate=self.learning_rate,
            rms_decay=0.96 if bayes else self.leaf_decay,  # (unused by Bayesian leaves)
            coef_decay=self.coef_decay,
            evidence_fading=self.evidence_fading if self.weighting == "evidence" else 0.0,
            evidence_decay=self.leaf_decay,
            mc_points=self.mc_points,
            bayesian=bayes,
            prior_precision=self.prior_precision,
            prior_shape=self.prior_shape,
            prior_scale=self.prior_scale,
            bayes_decay=self.leaf_decay,
            nominal_features=self.nominal_features,
        )

    def _check_params(self) -> None:
        n = self.n_trees
        if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= 1000):
            raise ValueError(f"n_trees must be an integer in [1, 1000], got {n!r}")
        if self.weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {self.weighting!r}")
        lam = self.lambda_value
        if not (
            isinstance(lam, numbers.Real)
            and not isinstance(lam, bool)
            and 0 <= lam <= 50
            and math.isfinite(lam)
        ):
            raise ValueError(f"lambda_value must be a number in [0, 50], got {lam!r}")
        if self.leaf_model not in LEAF_MODELS:
            raise ValueError(f"leaf_model must be one of {LEAF_MODELS}, got {self.leaf_model!r}")
        ld = self.leaf_decay
        bayes = self.leaf_model == "bayesian"
        if not (
            isinstance(ld, numbers.Real)
            and not isinstance(ld, bool)
            and 0 < ld
            and (ld <= 1 if bayes else ld < 1)
        ):
            span = "(0, 1]" if bayes else "(0, 1)"
            raise ValueError(f"leaf_decay must be a number in {span}, got {ld!r}")
        ef = self.evidence_fading
        if self.weighting == "evidence" and not (isinstance(ef, numbers.Real) and 0 < ef <= 1):
            raise ValueError(f"evidence_fading must be a number in (0, 1], got {ef!r}")
        if not (isinstance(self.n_jobs, numbers.Integral) and 1 <= self.n_jobs <= 64):
            raise ValueError(f"n_jobs must be an integer in [1, 64], got {self.n_jobs!r}")
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")
        self.tree._check_params()

    def _make_engine(self, features) -> Engine:
        seeds = np.random.SeedSequence(self.seed).generate_state(self.n_trees + 1, np.uint64)
        overrides = getattr(self, "_tree_overrides", {})
        specs = []
        for t in range(self.n_trees):
            spec = self.tree.clone(seed=int(seeds[t]), **overrides)
            spec._check_params()
            specs.append(spec)
        return Engine(
            specs,
            features,
            bagging=float(self.lambda_value),
            seed=int(seeds[-1]),
            aggregation=self.aggregation,
            n_jobs=self.n_jobs,
            max_memory_mb=self.max_memory_mb,
        )

    @property
    def weights_(self) -> np.ndarray:
        """The trees' current weights (they sum to 1; equal before learning or with
        ``weighting="equal"``)."""
        e = self.__dict__.get("engine_")
        if e is None or not e.fitted or self.weighting != "evidence":
            return np.full(self.n_trees, 1.0 / self.n_trees)
        return e.tree_weights()
