"""Online bagging forest of Hoeffding regression trees (Oza bagging, ARF-style subspaces)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import rng as _rng
from ..base import Estimator
from ..features import FeatureSpace, check_target, check_targets, check_weight, check_weights
from ..sketches import kll
from ..trees import HoeffdingTreeRegressor
from ..trees import _kernels as TK
from ..trees import _state as S
from . import _kernels as FK


class OnlineForestRegressor(Estimator):
    """Online bagging forest of regression trees, compiled with numba.

    Each tree learns each example with weight ``k * w``, ``k ~ Poisson(lambda_value)`` (online
    bagging; ``w`` the sample weight), and observes a fresh random subset of ``max_features``
    features at every leaf.  The forest predicts the mean (or median) of its trees.

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
        Template of the trees (its ``max_features`` and ``seed`` are replaced); default
        ``HoeffdingTreeRegressor()``.
    drift_threshold
        Page-Hinkley threshold of each tree's drift detector (see
        :class:`HoeffdingTreeRegressor`); a tree whose prequential error rises is replaced by a
        fresh one (ARF-style, without background trees).  ``None``: no detection.
    max_memory_mb
        Memory budget of the whole forest (``None``: only each tree's own caps).  It is split
        evenly among the trees, and each tree's share (halved, as arrays grow by doubling) is
        split evenly between observer bins (``max_observer_bins``) and leaves (``max_leaves``,
        whose size depends on the number of features and on a leaf sketch).  A tree at its leaf
        cap freezes its structure and keeps learning its leaves.  Set when a tree is created.
    n_jobs
        Threads that run trees in parallel on chunks of at least 2048 rows (the compiled loops
        release the GIL).  Results do not depend on it.
    seed
        Seed of the bagging weights and of the trees' seeds: the same seed gives the same forest.

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

    def __init__(
        self,
        n_trees: int = 10,
        lambda_value: float = 1.0,
        max_features: int | float | str | None = "sqrt",
        aggregation: str = "mean",
        tree: HoeffdingTreeRegressor | None = None,
        drift_threshold: float | None = 50.0,
        max_memory_mb: float | None = 2048.0,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_trees = n_trees
        self.lambda_value = lambda_value
        self.max_features = max_features
        self.aggregation = aggregation
        self.tree = tree
        self.drift_threshold = drift_threshold
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
        mm = self.max_memory_mb
        if mm is not None and not (isinstance(mm, numbers.Real) and mm > 0 and math.isfinite(mm)):
            raise ValueError(f"max_memory_mb must be None or a positive number, got {mm!r}")
        if not (isinstance(self.n_jobs, numbers.Integral) and 1 <= self.n_jobs <= 64):
            raise ValueError(f"n_jobs must be an integer in [1, 64], got {self.n_jobs!r}")
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")

    def _configure_trees(self, **overrides) -> None:
        """Tree parameters a meta-algorithm imposes (e.g. leaf sketches); before learning only."""
        if getattr(self, "trees_", None):
            raise RuntimeError("the forest has already started learning")
        self._tree_overrides = dict(overrides)

    def _features(self) -> FeatureSpace:
        fs = getattr(self, "features_", None)
        if fs is None:
            self._check_params()
            template = self.tree if self.tree is not None else HoeffdingTreeRegressor()
            seeds = np.random.SeedSequence(self.seed).generate_state(self.n_trees + 1, np.uint64)
            overrides = getattr(self, "_tree_overrides", {})
            self.trees_ = []
            fs = self.features_ = FeatureSpace(template.nominal_features)
            for t in range(self.n_trees):
                tree = template.clone(
                    max_features=self.max_features,
                    seed=int(seeds[t]),
                    drift_threshold=self.drift_threshold,
                    **overrides,
                )
                tree._check_params()
                tree.features_ = fs
                tree.state_ = None
                self.trees_.append(tree)
            self.rng_ = _rng.new_state(int(seeds[-1]))
        return fs

    def _sync(self) -> None:
        if len(self.features_) == 0:
            raise ValueError("no feature has been seen yet: an example needs at least one feature")
        for tree in self.trees_:
            if tree.state_ is None:
                self._apply_memory_budget(tree, len(self.features_))
            tree._sync_features()

    def _apply_memory_budget(self, tree: HoeffdingTreeRegressor, p: int) -> None:
        """Cap a new tree's bins and leaves so the forest stays within ``max_memory_mb``."""
        if self.max_memory_mb is None:
            return
        share = self.max_memory_mb * 2**20 / self.n_trees / 2  # allocation <= 2x use
        k = tree.leaf_quantile_k
        sketch = 8 * (kll.row_capacity(k) + kll.LV_WIDTH) if k else 0
        # per leaf slot: stats, models, feature statistics, observers' heads; two nodes per leaf
        leaf_bytes = 8 * (12 + 2 * (p + 1) + 4 * p + 3 * p) + p + sketch + 2 * 8 * 13
        bin_bytes = 8 * 11 + 4 * 8 + 2 * 8  # bin row, hash slots (load <= 1/2), split scratch
        tree.max_observer_bins = int(min(tree.max_observer_bins, max(64, share / 2 / bin_bytes)))
        tree.max_leaves = int(min(tree.max_leaves, max(2, share / 2 / leaf_bytes)))

    @property
    def _fitted(self) -> bool:
        return bool(getattr(self, "trees_", None)) and self.trees_[0].state_ is not None

    @property
    def params_(self) -> S.TreeParams:
        return self.trees_[0].params_

    @staticmethod
    def _drive_tree(tree: HoeffdingTreeRegressor, step, n: int, before=None, on_reset=None) -> None:
        """Call ``step(state, params, start) -> stop`` until all ``n`` rows are done.  After each
        call: ``before(stop)`` if given (a pass grows its own buffers there), then the tree is
        grown if it stopped for lack of room, or replaced if its drift detector fired (then
        ``on_reset(stop)`` if given)."""
        i = 0
        while True:
            i = step(tree.state_, tree.params_, i)
            if before is not None:
                before(i)
            if tree._after_stop(i, n) and on_reset is not None:
                on_reset(i)
            if i >= n:
                return

    def _each_tree(self, run, n: int) -> None:
        """``run(t, tree)`` for every tree, on ``n_jobs`` threads when the chunk is large."""
        if self.n_jobs > 1 and n >= 2048:
            with ThreadPoolExecutor(self.n_jobs) as ex:
                list(ex.map(lambda tt: run(*tt), enumerate(self.trees_)))
        else:
            for t, tree in enumerate(self.trees_):
                run(t, tree)

    def _bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """``(n_trees, n)`` bagging weights of the next ``n`` rows (advances the generator)."""
        out = np.empty((self.n_trees, wa.shape[0]))
        FK.draw_weights(self.rng_, float(self.lambda_value), wa, out)
        return out

    def _prepare(self, X, y, w):
        fs = self._features()
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        ya = check_targets(y, n)
        wa = check_weights(w, n)
        Xa = fs.encode_array(X, learn=True)
        if n:
            self._sync()
        return self._pad(Xa), ya, wa

    def _pad(self, Xa: np.ndarray) -> np.ndarray:
        p = len(self.features_)
        if Xa.shape[1] < p:
            Xa = np.hstack([Xa, np.full((Xa.shape[0], p - Xa.shape[1]), np.nan)])
        return np.ascontiguousarray(Xa, dtype=np.float64)

    def _encode_predict(self, X) -> np.ndarray:
        return self._pad(self._features().encode_array(X, learn=False))

    def _aggregate(self, P: np.ndarray) -> np.ndarray:
        """Forest prediction from ``(n_trees, n)`` tree predictions."""
        return np.median(P, axis=0) if self.aggregation == "median" else P.mean(axis=0)

    # ---------------------------------------------------------------------------------------------
    # array API
    def learn_many(self, X, y, w=None) -> OnlineForestRegressor:
        """Learn the rows of ``X`` in order (optional sample weights ``w``)."""
        self._learn_encoded(*self._prepare(X, y, w))
        return self

    def _learn_encoded(self, Xa, ya, wa) -> None:
        n = Xa.shape[0]
        if not n:
            return
        W = self._bagging_weights(wa)

        def run(t, tree):
            self._drive_tree(tree, lambda st, prm, i: TK.learn_batch(st, prm, Xa, ya, W[t], i), n)

        self._each_tree(run, n)

    def tree_predictions(self, X) -> np.ndarray:
        """``(n, n_trees)`` array of each tree's prediction (0 before any learning)."""
        return self._tree_predictions_encoded(self._encode_predict(X)).T

    def _tree_predictions_encoded(self, Xa) -> np.ndarray:
        """``(n_trees, n)`` predictions."""
        n = Xa.shape[0]
        out = np.zeros((self.n_trees, n))
        if self._fitted and n:
            self._each_tree(
                lambda t, tree: TK.predict_batch(tree.state_, tree.params_, Xa, out[t]), n
            )
        return out

    def predict(self, X) -> np.ndarray:
        """Mean (or median) of the trees' predictions for the rows of ``X``."""
        return self._aggregate(self._tree_predictions_encoded(self._encode_predict(X)))

    def predict_learn_many(self, X, y, w=None) -> np.ndarray:
        """Prequential pass (predict each row, then learn it); returns the predictions."""
        return self._aggregate(self._predict_learn_encoded(*self._prepare(X, y, w))[0])

    def _predict_learn_encoded(self, Xa, ya, wa):
        """``(P, W)``: ``(n_trees, n)`` predictions made before learning each row, and the
        bagging weights used."""
        n = Xa.shape[0]
        P = np.zeros((self.n_trees, n))
        W = self._bagging_weights(wa)
        if n:

            def run(t, tree):
                self._drive_tree(
                    tree,
                    lambda st, prm, i: TK.predict_learn_batch(st, prm, Xa, ya, W[t], i, P[t]),
                    n,
                )

            self._each_tree(run, n)
        return P, W

    # ---------------------------------------------------------------------------------------------
    # River-style API
    def _encode_one(self, x, learn: bool) -> np.ndarray:
        row = self._features().encode_dict(x, learn=learn)
        if learn:
            self._sync()
        return self._pad(row.reshape(1, -1))

    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values) with sample weight ``w``."""
        yf = check_target(y)
        wa = check_weight(w)
        self._learn_encoded(self._encode_one(x, learn=True), np.array([yf]), wa)

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Prediction for one example; 0.0 before anything was learnt."""
        Xa = self._encode_one(x, learn=False)
        return float(self._aggregate(self._tree_predictions_encoded(Xa))[0])

    # ---------------------------------------------------------------------------------------------
    @property
    def n_leaves(self) -> int:
        return sum(t.n_leaves for t in self.trees_) if self._fitted else self.n_trees

    @property
    def n_resets(self) -> int:
        """Trees replaced after a detected drift so far."""
        return sum(t.n_resets for t in self.trees_) if self._fitted else 0

    def _load_kernels(self) -> None:
        """See :meth:`HoeffdingTreeRegressor._load_kernels`."""
        for tree in getattr(self, "trees_", [])[:1]:
            tree._load_kernels()

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees' compiled state (allocated capacity)."""
        return sum(t.memory_bytes for t in self.trees_) if self._fitted else 0
