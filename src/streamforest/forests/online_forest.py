"""Online bagging forest of Hoeffding regression trees (Oza bagging, ARF-style subspaces and
background trees)."""

from __future__ import annotations

import math
import numbers

from ..engine import forest_interface
from ..engine.budget import DEFAULT_MEMORY_MB
from ..engine.core import Engine
from ..engine.forest_interface import RegressionForest
from ..trees import HoeffdingTreeRegressor
from .hoeffding_trees import HoeffdingTrees


class OnlineForestRegressor(HoeffdingTrees, RegressionForest):
    """Online bagging forest of regression trees.

    Each tree learns each example with weight ``k * w``, ``k ~ Poisson(lambda_value)`` (online
    bagging; ``w`` the sample weight), and observes a fresh random subset of ``max_features``
    features at every leaf.  The forest predicts the mean (or median) of its trees.

    The forest interface (what the interval methods and the other meta-models use of a forest)
    is :class:`~streamforest.engine.forest_interface.RegressionForest`; this forest has every
    capability: leaf payloads, tree settings (``tree_template``, ``configure_trees``), bagged
    tree members and tree shards.

    Parameters
    ----------
    n_trees
        Number of trees.
    lambda_value
        Rate of the Poisson bagging weights: 1 is Oza's bagging (and the JMLR paper's conformal
        forests); 6 is Leveraging Bagging / ARF's choice.
    max_features
        Features observed per leaf, as in :class:`HoeffdingTreeRegressor`; the default ``"sqrt"``
        is ``floor(sqrt(p)) + 1`` (ARF).  ``None``: all.
    aggregation
        ``"mean"`` or ``"median"`` of the tree predictions.
    tree
        Template of the trees (its ``max_features``, ``seed``, ``drift_threshold`` and
        ``drift_delta`` are replaced); default ``HoeffdingTreeRegressor()``.
    drift_threshold
        Threshold ``lambda`` of each tree's drift detector, the Page-Hinkley test as Seah (2021,
        §4.2.2) and FIMT-DD specify it (defaults ``lambda = 50``, ``alpha = 0.005``) on the
        tree's prequential absolute error normalised by the targets' sd when the detector
        started, each error clipped at 2 sds (see :func:`streamforest.drift.page_hinkley_update`).
        A tree whose detector fires is replaced: by its background tree if it has one, else by a
        fresh tree.  ``None``: no detection.
    drift_delta
        The test's tolerance ``alpha`` (in target sds per example).
    warning_fraction
        A lower threshold of the same statistic, ``warning_fraction * drift_threshold``, gives
        a *warning*: a background tree starts, learns the following examples with its own
        bagging weights, and replaces the tree at a drift (ARF-style); it is discarded if the
        statistic falls back to zero first (the rise of the error is cancelled).  ``None``: no
        background trees (a drift resets the tree).  Counts: :attr:`drift_stats_`.  False alarms
        on shuffled real data sets: the docs' drift guide.
    max_memory_mb
        Memory budget of the whole forest, in MiB (default 256: with it a default OnlineQRF
        or CPApproximate levels off below 512 MB of process memory on an unbounded stream,
        with an MAE within 2% of the unbounded forest's; see the benchmarks page, "Memory
        soak").  ``None``: only each tree's
        own caps.  The budget is split evenly among the trees, and with warnings armed each
        tree keeps a sixteenth of its share for its background tree (one that replaces its
        tree grows on to the tree's caps).  A tree's part goes to observer bins (three
        quarters, half with leaf sketches: ``max_observer_bins``, their hash table counted)
        and to leaves (the rest, ``max_leaves``: a leaf's size depends on the number of
        features and on a leaf sketch; its two nodes included), with the byte sizes of the
        layout (:mod:`streamforest.engine.budget`).  Arrays grow by doubling, never past
        those caps, so the trees stay within the budget.  :attr:`memory_bytes` counts them by
        the pages their fields lie on (what the process holds: up to two partial pages per
        tree and arena array more than the fields, shared with the room beside them) and
        the feature space on top (its names and category keys, ~180 bytes a feature, bounded
        by the feature cap: at most ~3 MiB); an OnlineQRF's own ``memory_bytes`` adds its
        scratch, ~30 MiB of copied leaf sketches.
        When the bins run out, the least promising leaves (smallest error reduction
        potential) stop observing, as in MOA and River, and the most promising of them
        observe again when splits free bins; they keep predicting and learning their leaf
        models.  A tree at its leaf cap freezes its structure and keeps learning its leaves.
        Set when a tree is created.
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows (the compiled loops
        release the GIL).  Results do not depend on it.
    seed
        Seed of the bagging weights and of the trees' seeds: the same seed gives the same forest.

    Examples are dicts (``learn_one``) or rows of a 2-d array or DataFrame (``learn_many``), in
    any mix; :mod:`streamforest.features` gives the rules (missing values, nominal values,
    emerging features, and which features a plain array's columns are).

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import OnlineForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(5000, 3)); y = 10 * (X[:, 0] > 0.5) + rng.normal(size=5000)
    >>> forest = OnlineForestRegressor(n_trees=5, seed=1).learn_many(X, y)
    >>> [round(float(v)) for v in forest.predict([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]])]
    [10, 0]
    """

    forest_capabilities = frozenset({
        forest_interface.LEAF_PAYLOADS, forest_interface.TREE_SETTINGS,
        forest_interface.TREE_MEMBERS, forest_interface.TREE_SHARDS,
    })  # fmt: skip

    def __init__(
        self,
        n_trees: int = 10,
        lambda_value: float = 1.0,
        max_features: int | float | str | None = "sqrt",
        aggregation: str = "mean",
        tree: HoeffdingTreeRegressor | None = None,
        drift_threshold: float | None = 50.0,
        drift_delta: float = 0.005,
        warning_fraction: float | None = 0.3,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_trees = n_trees
        self.lambda_value = lambda_value
        self.max_features = max_features
        self.aggregation = aggregation
        self.tree = tree
        self.drift_threshold = drift_threshold
        self.drift_delta = drift_delta
        self.warning_fraction = warning_fraction
        self.max_memory_mb = max_memory_mb
        self.n_jobs = n_jobs
        self.seed = seed

    # ---------------------------------------------------------------------------------------------
    def _check_params(self) -> None:
        n = self.n_trees
        if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= 1000):
            raise ValueError(f"n_trees must be an integer in [1, 1000], got {n!r}")
        lam = self.lambda_value
        if not (isinstance(lam, numbers.Real) and 0 < lam <= 50 and math.isfinite(lam)):
            raise ValueError(f"lambda_value must be a number in (0, 50], got {lam!r}")
        if self.aggregation not in ("mean", "median"):
            raise ValueError(f"aggregation must be 'mean' or 'median', got {self.aggregation!r}")
        if self.tree is not None and not isinstance(self.tree, HoeffdingTreeRegressor):
            raise TypeError(
                f"tree must be a HoeffdingTreeRegressor template, got {type(self.tree).__name__}"
            )
        self._check_engine_params()

    def configure_trees(self, **overrides) -> None:
        """Tree parameters a meta-algorithm imposes (e.g. leaf sketches); before learning only."""
        if self.__dict__.get("engine_") is not None:
            raise RuntimeError("the forest has already started learning")
        self._tree_overrides = dict(overrides)

    def tree_template(self) -> HoeffdingTreeRegressor:
        """The tree the forest's trees are clones of (``tree``, or the default tree)."""
        return self.tree if self.tree is not None else HoeffdingTreeRegressor()

    def _make_engine(self, features) -> Engine:
        specs, seed = self.tree_specs(self.n_trees)
        return Engine(
            specs,
            features,
            bagging=float(self.lambda_value),
            seed=seed,
            aggregation=self.aggregation,
            max_memory_mb=self.max_memory_mb,
            n_jobs=self.n_jobs,
            warning=float(self.warning_fraction or 0.0) * float(self.drift_threshold or 0.0),
        )

    def __setstate__(self, d):
        self.__dict__.update(d)
        if "warning_fraction" not in d:  # saved before background trees (format version 1)
            tree = d.get("tree")
            self.drift_delta = tree.drift_delta if tree is not None else 0.1
            self.warning_fraction = None

    # ---------------------------------------------------------------------------------------------
    @property
    def n_leaves(self) -> int:
        return sum(t.n_leaves for t in self.trees_) if self.is_fitted else self.n_trees
