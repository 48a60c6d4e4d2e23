"""The VFDT (Hoeffding tree) classifier: a tree kind of the forest engine."""

from __future__ import annotations

import math
import numbers

from ..engine.budget import DEFAULT_MEMORY_MB, check_memory_mb
from ..engine.classifier_model import EngineClassifier
from ..tree_kinds import state


class HoeffdingTreeClassifier(EngineClassifier):
    """Incremental decision tree for classification (VFDT; Domingos & Hulten 2000): the
    reference single learner beside :class:`~streamforest.ACTSERClassifier`.

    A leaf keeps, per feature and class, the weight, mean and variance of the values (and per
    nominal category and class a weight): the statistics of its naive Bayes model, which also
    score its split candidates, so the tree keeps no attribute observer
    (:mod:`streamforest.tree_kinds.classification`, split rule ``SPLIT_GAUSS``):

    - numeric features: ten thresholds evenly spaced between the smallest and largest value the
      leaf saw, each scored by the information gain of the class weights each side would get
      under the per-class Gaussians (River's ``GaussianSplitter``);
    - nominal features: one category against the rest (binary splits), exact counts; a
      category first seen after the split goes with the heavier side, as a missing value does.

    Every ``grace_period`` of weight an impure leaf splits on the best candidate when
    ``IG(best) - IG(second) > eps`` or ``eps < tau``, ``eps = sqrt(R^2 ln(1/delta) / (2 n))``,
    ``R = log2(classes at the leaf)``.  Leaves answer with the majority class, naive Bayes, or
    adaptive naive Bayes (``"nba"``, River's and MOA's default: whichever of the two predicted
    the leaf's examples better).

    Parameters
    ----------
    grace_period
        Weight a leaf receives between split attempts (200).
    delta
        Confidence of the Hoeffding bound (1e-7).
    tau
        Tie threshold (0.05).
    leaf_prediction
        ``"mc"`` (majority class), ``"nb"`` (naive Bayes) or ``"nba"`` (adaptive).
    max_depth
        Depth at which leaves stop splitting (``None``: unlimited).
    min_samples_split
        Weight each side of a candidate split needs.
    max_features
        Features a leaf considers for its split: ``None`` (all), an int, a fraction or
        ``"sqrt"`` (``floor(sqrt(p)) + 1``); drawn anew at every leaf.
    max_leaves
        Leaf budget; when reached the structure freezes (leaves keep learning their models).
    nominal_features
        Names (or column indices) of features to treat as nominal even if their values are
        numbers; string values are nominal anyway.
    max_memory_mb
        Memory budget of the tree in MiB (default 256, as the ensembles'): the leaf cap is
        lowered so that the tree's nodes and leaves (whose class statistics grow with the
        classes and features) fit it, and a tree at its cap stops splitting while its leaves
        keep learning (see :mod:`streamforest.engine.budget`).  Categories and classes count
        too: a nominal feature keeps at most the category codes the budget holds and hashes
        later categories into that many buckets, new classes cut the tree's category room (or
        replace a tree that no longer fits, counted in the engine's ``n_resets``), and a label
        past the classes the budget holds is refused with ``ValueError``, nothing learnt
        (:class:`~streamforest.engine.classifier_engine.ClassifierEngine`).  Where it does not
        bind, the tree is the one without a budget, bit for bit.  ``None``: no budget (only
        ``max_leaves``; categories and classes are not capped).  As the template of an
        ensemble's members (:class:`~streamforest.ACTSEREnsembleClassifier`), it is not read:
        the ensemble's own ``max_memory_mb`` bounds all its trees.  A model saved before this
        parameter existed loads with ``None`` (it had no budget) and learns on as it would have.
    seed
        Seed of the random feature subsets.

    Labels may be any hashable value; ``classes_`` lists them in order of first appearance and
    a new class is learnt when it first appears (see :mod:`streamforest.engine.classifier_model`).

    Examples
    --------
    >>> from streamforest import HoeffdingTreeClassifier
    >>> model = HoeffdingTreeClassifier(grace_period=50, seed=1)
    >>> for i in range(2000):
    ...     x = {"a": (i % 10) / 10, "b": float(i % 7)}
    ...     model.learn_one(x, "high" if x["a"] > 0.45 else "low")
    >>> model.predict_one({"a": 0.9, "b": 1.0}), model.predict_one({"a": 0.1, "b": 1.0})
    ('high', 'low')
    """

    _split_rule = state.SPLIT_GAUSS
    # what the engine reads from a tree spec (no observer bins, no leaf sketches)
    max_observer_bins = 64
    leaf_quantile_k = None
    # change adaptation (ACTSER's; off for the VFDT)
    drift_detection = False
    m_min = 0
    # a tree saved before the single trees had a budget has none of its own: it had no budget
    max_memory_mb = None

    def __init__(
        self,
        grace_period: int = 200,
        delta: float = 1e-7,
        tau: float = 0.05,
        leaf_prediction: str = "nba",
        max_depth: int | None = None,
        min_samples_split: float = 1.0,
        max_features: int | float | str | None = None,
        max_leaves: int = 100_000,
        nominal_features: tuple | None = None,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        seed: int | None = None,
    ):
        self.grace_period = grace_period
        self.delta = delta
        self.tau = tau
        self.leaf_prediction = leaf_prediction
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.max_leaves = max_leaves
        self.nominal_features = nominal_features
        self.max_memory_mb = max_memory_mb
        self.seed = seed

    # ---------------------------------------------------------------------------------------------
    def _check_params(self) -> None:
        def positive(name, v, integer=False):
            kind = numbers.Integral if integer else numbers.Real
            if (
                isinstance(v, bool)
                or not isinstance(v, kind)
                or not v > 0
                or (isinstance(v, float) and not math.isfinite(v))
            ):
                raise ValueError(
                    f"{name} must be a positive {'integer' if integer else 'number'}, got {v!r}"
                )

        positive("grace_period", self.grace_period)
        if not (isinstance(self.delta, numbers.Real) and 0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if not (isinstance(self.tau, numbers.Real) and 0 <= self.tau <= 1):
            raise ValueError(f"tau must be in [0, 1], got {self.tau!r}")
        if self.leaf_prediction not in state.CLASS_LEAF_MODELS:
            raise ValueError(
                f"leaf_prediction must be one of {sorted(state.CLASS_LEAF_MODELS)}, "
                f"got {self.leaf_prediction!r}"
            )
        if self.max_depth is not None:
            positive("max_depth", self.max_depth, integer=True)
        ms = self.min_samples_split
        if not (isinstance(ms, numbers.Real) and not isinstance(ms, bool) and ms >= 0):
            raise ValueError(f"min_samples_split must be >= 0, got {ms!r}")
        positive("max_leaves", self.max_leaves, integer=True)
        mf = self.max_features
        if not (
            mf is None
            or mf == "sqrt"
            or (isinstance(mf, numbers.Integral) and not isinstance(mf, bool) and mf > 0)
            or (isinstance(mf, float) and 0 < mf <= 1)
        ):
            raise ValueError(
                f"max_features must be None, 'sqrt', a positive int or a fraction in "
                f"(0, 1], got {mf!r}"
            )
        check_memory_mb(self.max_memory_mb)
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)
        ):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")

    def _n_features_observed(self, p: int) -> int:
        mf = self.max_features
        if mf is None:
            return 0
        if mf == "sqrt":
            return min(p, int(math.floor(math.sqrt(p))) + 1)
        if isinstance(mf, float):
            return max(1, min(p, int(round(mf * p))))
        return min(p, int(mf))

    def _tree_params(self, p: int) -> state.TreeParams:
        """The compiled parameters of the tree kind (one place: split rule, leaf model and
        change detection are chosen here)."""
        return state.TreeParams(
            grace=float(self.grace_period),
            delta=float(self.delta),
            tau=float(self.tau),
            max_depth=int(self.max_depth) if self.max_depth is not None else 1 << 40,
            min_branch=float(self.min_samples_split),
            leaf_model=state.CLASS_LEAF_MODELS[self.leaf_prediction],
            lr=0.0,
            rms_decay=0.0,
            rms_eps=1.0,
            fading=1.0,
            observer=state.OBS_QO,
            tebst_scale=1.0,
            qo_sigma=0.0,
            qo_radius=1.0,
            max_features=self._n_features_observed(p),
            max_leaves=int(self.max_leaves),
            max_bins=64,
            split_rule=self._split_rule,
            m_min=int(self.m_min),
            alt_lambda=float(getattr(self, "ph_threshold", 0.0)) if self.drift_detection else 0.0,
            alt_alpha=float(getattr(self, "ph_alpha", 0.005)),
            alt_period=int(getattr(self, "alt_period", 150)),
            task=state.TASK_CLASSIFICATION,
            ph_gamma=int(getattr(self, "ph_gamma", 250)),
            alt_chi2=float(getattr(self, "alt_chi2", 3.841)),
        )

    # ---------------------------------------------------------------------------------------------
    def _nominal(self):
        return self.nominal_features

    def _make_engine(self, features):
        from ..engine.classifier_engine import ClassifierEngine

        # the tree's own budget (an ensemble passes its own to its engine: see max_memory_mb)
        return ClassifierEngine([self.clone()], features, seed=0, max_memory_mb=self.max_memory_mb)

    @property
    def n_leaves(self) -> int:
        return self.engine_.int_of(0, state.I_NLEAVES) if self.is_fitted else 1

    @property
    def n_splits(self) -> int:
        return self.engine_.int_of(0, state.I_NSPLITS) if self.is_fitted else 0
