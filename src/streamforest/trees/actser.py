"""ACTSER: the Adaptive Classification Tree for Streaming with Extreme Randomisation (Seah's
thesis, ch. 5)."""

from __future__ import annotations

import math
import numbers
from types import MappingProxyType

from ..engine.budget import DEFAULT_MEMORY_MB
from ..tree_kinds import state
from .hoeffding_classifier import HoeffdingTreeClassifier


class ACTSERClassifier(HoeffdingTreeClassifier):
    """Online extremely randomised classification tree (ACTSER, Seah 2021, ch. 5), a tree kind
    of the compiled forest engine.

    **Defaults and the thesis' settings.**  The defaults split sooner than the thesis' Table 5.3
    (``grace_period=25, delta=0.01``, the members' settings of
    :class:`~streamforest.ACTSEREnsembleClassifier`): with ``delta=1e-7`` a leaf waits about
    3,200 examples to break a tie between two classes, so a single tree learns a simple nominal
    concept slowly.  ``ACTSERClassifier(**ACTSERClassifier.THESIS)`` is the thesis' tree
    (Table 5.3), used by the reproduction benchmarks; the figures are in the docs' user guide
    (classification).

    - **Split** (thesis §5.2.1): a leaf buffers its first ``m_min`` examples, then draws one
      random candidate per feature (numeric: a threshold uniform between the smallest and
      largest value seen; nominal: a binary split of the categories seen, each equally likely,
      with every category first seen later sent to a random side) and keeps only the class
      weights of each candidate's two sides.  Every
      ``grace_period`` (``n_min``) of weight it splits on the candidate of largest information
      gain when ``IG(best) - IG(second) > eps`` (the Hoeffding bound, range ``log2`` of the
      classes), or once ``eps < tau`` on one drawn among those within ``eps`` of the best.
    - **Leaves** (§5.2.2): adaptive naive Bayes (majority class or Gaussian / categorical naive
      Bayes, whichever predicted the leaf's examples better).
    - **Change** (§5.2.3, ``drift_detection``): each split node runs the Page-Hinkley test on
      the 0/1 errors of the tree's predictions for the examples that pass it, normalised by
      ``sqrt(p (1 - p))`` (frozen after ``ph_gamma`` examples); when it fires an alternate
      subtree grows at the node, and McNemar's test on the examples where exactly one of the
      two is right (counted after ``alt_period / 2`` examples, tested every ``alt_period``, at
      ``chi2 > alt_chi2``) keeps the better one; an alternate still undecided after
      ``10 * alt_period`` examples is adopted if it is not worse (``b >= c``), else discarded
      (the thesis: a new tree "will only be adopted if it is not worse than the original").
      Counts: :attr:`alternate_stats`.

    Parameters
    ----------
    grace_period
        ``n_min`` (25; the thesis' single tree: 200).
    m_min
        Examples a leaf sees before drawing its random candidates (10).
    delta, tau
        Confidence of the Hoeffding bound (0.01; the thesis': 1e-7) and tie threshold (0.05).
    leaf_prediction
        ``"nba"`` (the thesis), ``"nb"`` or ``"mc"``.
    drift_detection
        Page-Hinkley detectors and alternate subtrees at the split nodes (True).
    ph_threshold, ph_alpha, ph_gamma
        The detector's ``lambda`` (50), ``alpha`` (0.005) and ``gamma`` (250).
    alt_period
        ``T_min`` (150).
    alt_chi2
        McNemar's critical value (3.841, the thesis' Algorithm 5.3).
    max_depth, min_samples_split, max_features, max_leaves, nominal_features, max_memory_mb, seed
        As in :class:`~streamforest.HoeffdingTreeClassifier` (``max_features``: features a leaf
        draws candidates for; ``"sqrt"`` is ACTSER-RForest's; ``max_memory_mb``: the tree's
        budget, 256 MiB by default, not read when the tree is the template of
        :class:`~streamforest.ACTSEREnsembleClassifier`'s members, whose own budget governs).

    Examples
    --------
    >>> from streamforest import ACTSERClassifier
    >>> model = ACTSERClassifier(grace_period=50, seed=1)
    >>> for i in range(3000):
    ...     x = {"a": (i % 10) / 10, "colour": ["red", "green", "blue"][i % 3]}
    ...     model.learn_one(x, x["colour"] == "red")
    >>> [model.predict_one({"a": 0.5, "colour": c}) for c in ("red", "blue")]
    [True, False]
    """

    _split_rule = state.SPLIT_EXTRA

    #: The thesis' settings (Table 5.3): ``ACTSERClassifier(**ACTSERClassifier.THESIS)``.
    THESIS = MappingProxyType(
        {
            "grace_period": 200,
            "m_min": 10,
            "delta": 1e-7,
            "tau": 0.05,
            "leaf_prediction": "nba",
            "drift_detection": True,
            "ph_threshold": 50.0,
            "ph_alpha": 0.005,
            "ph_gamma": 250,
            "alt_period": 150,
            "alt_chi2": 3.841,
        }
    )

    def __init__(
        self,
        grace_period: int = 25,
        m_min: int = 10,
        delta: float = 0.01,
        tau: float = 0.05,
        leaf_prediction: str = "nba",
        drift_detection: bool = True,
        ph_threshold: float = 50.0,
        ph_alpha: float = 0.005,
        ph_gamma: int = 250,
        alt_period: int = 150,
        alt_chi2: float = 3.841,
        max_depth: int | None = None,
        min_samples_split: float = 1.0,
        max_features: int | float | str | None = None,
        max_leaves: int = 100_000,
        nominal_features: tuple | None = None,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        seed: int | None = None,
    ):
        self.grace_period = grace_period
        self.m_min = m_min
        self.delta = delta
        self.tau = tau
        self.leaf_prediction = leaf_prediction
        self.drift_detection = drift_detection
        self.ph_threshold = ph_threshold
        self.ph_alpha = ph_alpha
        self.ph_gamma = ph_gamma
        self.alt_period = alt_period
        self.alt_chi2 = alt_chi2
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.max_leaves = max_leaves
        self.nominal_features = nominal_features
        self.max_memory_mb = max_memory_mb
        self.seed = seed

    def _check_params(self) -> None:
        def integer(name, v, lo, hi):
            if not (isinstance(v, numbers.Integral) and not isinstance(v, bool) and lo <= v <= hi):
                raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")

        def positive(name, v):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v < math.inf:
                raise ValueError(f"{name} must be a positive number, got {v!r}")

        integer("m_min", self.m_min, 1, 10_000)
        if not isinstance(self.drift_detection, bool):
            raise TypeError(f"drift_detection must be True or False, got {self.drift_detection!r}")
        positive("ph_threshold", self.ph_threshold)
        if not (isinstance(self.ph_alpha, numbers.Real) and 0 <= self.ph_alpha < 1):
            raise ValueError(f"ph_alpha must be a number in [0, 1), got {self.ph_alpha!r}")
        integer("ph_gamma", self.ph_gamma, 1, 10**9)
        integer("alt_period", self.alt_period, 2, 10**9)
        positive("alt_chi2", self.alt_chi2)
        super()._check_params()
