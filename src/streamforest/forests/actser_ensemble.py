"""The ACTSER ensembles of Seah's thesis (§5.3): ACTSER-Seeds and ACTSER-RForest."""

from __future__ import annotations

import numbers
from types import MappingProxyType

import numpy as np

from ..engine.budget import DEFAULT_MEMORY_MB, check_memory_mb
from ..engine.classifier_model import EngineClassifier
from ..trees import ACTSERClassifier

MODES = {"seeds": None, "rforest": "sqrt"}  # mode: features a leaf draws candidates for


class ACTSEREnsembleClassifier(EngineClassifier):
    """An ensemble of :class:`~streamforest.ACTSERClassifier` trees (thesis §5.3): one engine
    of ``n_members`` trees and no ensemble-level drift handling (the trees adapt themselves).

    - ``mode="seeds"`` (ACTSER-Seeds): members differ only by their seed.
    - ``mode="rforest"`` (ACTSER-RForest): each leaf draws candidates for a random subset of the
      features (``floor(sqrt(F)) + 1``; the thesis writes ``sqrt(F)``), drawn anew at every leaf
      (the thesis: "for each split, only a subset of features are considered").

    ``predict`` is the majority vote of the members' classes (ties: the class of higher mean
    probability), ``predict_proba`` the mean of their probabilities.

    **Defaults that differ from the thesis** (Table 5.3, §5.3: every tree sees every example once,
    ``delta = 1e-7``): each tree learns each example with a ``Poisson(6)`` weight
    (``lambda_value=6``, online bagging as in ARF) and splits with ``delta = 0.01``.  Why: the
    thesis' settings are tuned for streams of millions of rows; with them a tree needs about
    ``R^2 ln(1/delta) / (2 tau^2)`` examples to break a tie (thousands with two classes), so on
    shorter streams the members stay stumps and their naive Bayes leaves do all the work; each
    change gains accuracy on every stream of ``benchmarks/classification.py`` (the table is on
    the docs' classification benchmark page).

    ``ACTSEREnsembleClassifier(**ACTSEREnsembleClassifier.THESIS)`` (``lambda_value=0,
    delta=1e-7``) gives the thesis' ensembles.

    Parameters
    ----------
    mode
        ``"seeds"`` or ``"rforest"``.
    n_members
        Number of trees (25, the thesis').
    grace_period
        The members' ``n_min`` (25 in the thesis' ensembles), in weight: with bagging a leaf
        attempts a split after about ``grace_period / lambda_value`` examples.
    delta
        Confidence of the members' Hoeffding bound (0.01; the thesis' 1e-7, see above).
    lambda_value
        Rate of the Poisson bagging weights (6, as ARF's; 0: every tree learns every example
        with its weight, the thesis' ensembles).
    ph_threshold
        The members' Page-Hinkley ``lambda`` (50, the thesis').  With it the detectors of a
        stationary stream fire every few thousand examples a node sees (the errors are
        normalised to unit variance), and the alternate subtrees they start, most discarded
        later, take about half the learning time; a larger ``lambda`` learns faster at about
        the same accuracy on stationary streams and loses accuracy on drifting ones (the docs'
        classification benchmark page).
    m_min, tau, leaf_prediction, drift_detection, nominal_features
        Of the member trees (see :class:`~streamforest.ACTSERClassifier`).
    max_memory_mb
        Memory budget of the whole ensemble in MiB (default 256, as the regression forests'),
        split evenly among the members: each tree's leaves are capped so that its nodes and
        leaves (whose class statistics grow with the classes and features) fit its share;
        a tree at its cap stops splitting and its leaves keep learning (see
        :mod:`streamforest.engine.budget`).  When a class or category first appears the caps
        are computed again for the wider leaves.  Categories and classes count too: a nominal
        feature keeps at most the category codes a tree's share holds and hashes later
        categories into that many buckets, new classes cut the trees' category room (or replace
        a tree that no longer fits), and a label past the classes the budget holds is refused
        (:class:`~streamforest.engine.classifier_engine.ClassifierEngine`).  ``None``: no budget
        (each member still stops at 100,000 leaves; categories and classes are not capped).
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows; results do not
        depend on it.
    seed
        Seed of the members' seeds and of the bagging weights: the same seed gives the same
        ensemble.

    Examples
    --------
    >>> import numpy as np
    >>> from streamforest import ACTSEREnsembleClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(4000, 3)); y = np.where(X[:, 0] > 0.5, "a", "b")
    >>> model = ACTSEREnsembleClassifier(mode="rforest", n_members=5, seed=1).learn_many(X, y)
    >>> model.predict([[0.9, 0.5, 0.5], [0.1, 0.5, 0.5]]).tolist()
    ['a', 'b']
    """

    #: The thesis' ensembles (§5.3, Table 5.3): ``ACTSEREnsembleClassifier(**THESIS)``.
    THESIS = MappingProxyType(
        {
            "n_members": 25,
            "grace_period": 25,
            "m_min": 10,
            "delta": 1e-7,
            "tau": 0.05,
            "leaf_prediction": "nba",
            "drift_detection": True,
            "ph_threshold": 50.0,
            "lambda_value": 0.0,
        }
    )

    def __init__(
        self,
        mode: str = "seeds",
        n_members: int = 25,
        grace_period: int = 25,
        m_min: int = 10,
        delta: float = 0.01,
        tau: float = 0.05,
        leaf_prediction: str = "nba",
        drift_detection: bool = True,
        ph_threshold: float = 50.0,
        nominal_features: tuple | None = None,
        lambda_value: float = 6.0,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        n_jobs: int = 1,
        seed: int | None = None,
    ):
        self.mode = mode
        self.n_members = n_members
        self.grace_period = grace_period
        self.m_min = m_min
        self.delta = delta
        self.tau = tau
        self.leaf_prediction = leaf_prediction
        self.drift_detection = drift_detection
        self.ph_threshold = ph_threshold
        self.nominal_features = nominal_features
        self.lambda_value = lambda_value
        self.max_memory_mb = max_memory_mb
        self.n_jobs = n_jobs
        self.seed = seed

    @property
    def tree(self) -> ACTSERClassifier:
        """The members' template (seed and feature subsets set per member)."""
        return ACTSERClassifier(
            grace_period=self.grace_period,
            m_min=self.m_min,
            delta=self.delta,
            tau=self.tau,
            leaf_prediction=self.leaf_prediction,
            drift_detection=self.drift_detection,
            ph_threshold=self.ph_threshold,
            max_features=MODES.get(self.mode),
            nominal_features=self.nominal_features,
        )

    def _check_params(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {sorted(MODES)}, got {self.mode!r}")
        n = self.n_members
        if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and 1 <= n <= 1000):
            raise ValueError(f"n_members must be an integer in [1, 1000], got {n!r}")
        lam = self.lambda_value
        if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not 0 <= lam <= 50:
            raise ValueError(f"lambda_value must be a number in [0, 50], got {lam!r}")
        check_memory_mb(self.max_memory_mb)
        j = self.n_jobs
        if not (isinstance(j, numbers.Integral) and not isinstance(j, bool) and 1 <= j <= 64):
            raise ValueError(f"n_jobs must be an integer in [1, 64], got {j!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)
        ):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")
        self.tree._check_params()

    def __setstate__(self, d):
        self.__dict__.update(d)
        if "max_memory_mb" not in d:  # saved before classifiers had a budget: its engine has none
            self.max_memory_mb = None

    def _random_without_seed(self) -> bool:
        return self.seed is None

    def _nominal(self):
        return self.nominal_features

    def _make_engine(self, features):
        from ..engine.classifier_engine import ClassifierEngine

        seeds = np.random.SeedSequence(self.seed).generate_state(self.n_members + 1, np.uint64)
        template = self.tree
        specs = [template.clone(seed=int(seeds[t])) for t in range(self.n_members)]
        return ClassifierEngine(specs, features, bagging=float(self.lambda_value),
                                seed=int(seeds[-1]), n_jobs=self.n_jobs,
                                max_memory_mb=self.max_memory_mb)  # fmt: skip
