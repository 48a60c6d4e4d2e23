"""ATSER: the Adaptive Tree for Streaming with Extreme Randomisation (Seah's thesis, ch. 4)."""

from __future__ import annotations

import numbers
from types import MappingProxyType

from ..engine.budget import DEFAULT_MEMORY_MB
from ..tree_kinds import state
from .hoeffding import HoeffdingTreeRegressor


class ATSERRegressor(HoeffdingTreeRegressor):
    """Online extremely randomised regression tree (ATSER, Seah 2021, ch. 4; Table 4.2 defaults).

    A tree kind of the compiled forest engine: the same tree as
    :class:`~streamforest.HoeffdingTreeRegressor` with another split rule and leaf model.

    - **Split** (two stages, :mod:`streamforest.tree_kinds.extra_split`): a leaf buffers its first
      ``m_min`` examples, then draws one random candidate per feature (numeric: a threshold
      uniform between the smallest and largest value seen; nominal: every category, including
      those first seen later, sent to a random side) and keeps only each candidate's two side
      statistics, O(1) per feature and example.  Every ``grace_period`` (``n_min``) of weight
      it splits on the best candidate by variance reduction when the Hoeffding bound on the
      ratio ``VR(second) / VR(best)`` allows (``delta``), or, once ``eps < tau``, on one drawn
      among the tied best.  No attribute observers: memory per leaf is O(features).
    - **Leaves**: linear models trained by RMSProp on FIMT-standardised inputs (thesis
      eqs. 4.5-4.6: ``learning_rate`` 0.01, ``rms_decay`` 0.9, ``rms_eps`` 1e-8), passed down to
      the children on a split.  (Nominal features are used for splits; in the linear model they
      contribute 0 rather than one-hot terms.)
    - **Drift** (thesis §4.2.2-4.2.3, on by default): Page-Hinkley at every split node on the
      tree's errors, alternate subtrees grown on detection, compared by faded squared error every
      ``alt_period`` examples, adopted when better, discarded by the thesis' rule
      (``drift_detection`` of :class:`~streamforest.HoeffdingTreeRegressor`).  Independently,
      ``drift_threshold`` makes the owner replace the whole tree (forests).

    Use it alone, as the tree of a forest (:class:`~streamforest.ATSEREnsembleRegressor`, or
    ``OnlineForestRegressor(tree=ATSERRegressor())``) and under every interval method.

    Parameters
    ----------
    grace_period
        ``n_min``: weight a leaf receives between split attempts (200).
    m_min
        Examples a leaf sees before drawing its random candidates (10).
    delta
        Confidence of the Hoeffding bound on the VR ratio (1e-6).
    tau
        Tie threshold: once ``eps < tau`` the candidates within the bound of the best tie (0.05).
    leaf_model
        ``"linear"`` (the thesis), ``"mean"`` or ``"adaptive"``.
    learning_rate, rms_decay, rms_eps
        RMSProp of the linear leaves (``eta``, ``gamma_beta``, ``mu``).
    max_depth, min_samples_split, max_features, max_leaves, nominal_features, leaf_quantile_k,
    leaf_quantile_split, drift_threshold, drift_delta, drift_detection, ph_threshold, ph_alpha,
    alt_fading, alt_period, max_memory_mb, seed
        As in :class:`~streamforest.HoeffdingTreeRegressor` (``max_features``: features a leaf
        draws candidates for; ``None`` is all, the thesis' ``k = F``; ``max_memory_mb``: the
        tree's budget, 256 MiB by default, not read when the tree is the template of a forest's
        trees, :class:`~streamforest.ATSEREnsembleRegressor`'s or ``OnlineForestRegressor``'s,
        whose own budget governs).

    Examples
    --------
    >>> from streamforest import ATSERRegressor
    >>> model = ATSERRegressor(grace_period=50, seed=1)
    >>> for i in range(2000):
    ...     x = {"a": (i % 10) / 10, "b": float(i % 7)}
    ...     model.learn_one(x, 3.0 if x["a"] > 0.45 else -3.0)
    >>> [round(model.predict_one({"a": a, "b": 1.0}), 1) for a in (0.9, 0.1)]
    [3.0, -3.0]
    """

    _split_rule = state.SPLIT_EXTRA
    # observer parameters of the Hoeffding tree: unused by this split rule
    observer = "qo"
    qo_radius = "sigma/3"
    qo_cold_radius = 0.01
    tebst_decimals = 3
    max_observer_bins = 1_000_000
    adaptive_fading = 0.995

    #: The thesis' settings (Table 4.2; today's defaults): ``ATSERRegressor(**THESIS)``.
    THESIS = MappingProxyType(
        {
            "grace_period": 200,
            "m_min": 10,
            "delta": 1e-6,
            "tau": 0.05,
            "leaf_model": "linear",
            "learning_rate": 0.01,
            "rms_decay": 0.9,
            "rms_eps": 1e-8,
            "drift_detection": True,
            "ph_threshold": 50.0,
            "ph_alpha": 0.005,
            "alt_fading": 0.995,
            "alt_period": 150,
        }
    )

    def __init__(
        self,
        grace_period: int = 200,
        m_min: int = 10,
        delta: float = 1e-6,
        tau: float = 0.05,
        leaf_model: str = "linear",
        learning_rate: float = 0.01,
        rms_decay: float = 0.9,
        rms_eps: float = 1e-8,
        max_depth: int | None = None,
        min_samples_split: float = 5.0,
        max_features: int | float | str | None = None,
        max_leaves: int = 100_000,
        nominal_features: tuple | None = None,
        leaf_quantile_k: int | None = None,
        leaf_quantile_split: str = "empty",
        drift_threshold: float | None = None,
        drift_delta: float = 0.005,
        drift_detection: bool = True,
        ph_threshold: float = 50.0,
        ph_alpha: float = 0.005,
        alt_fading: float = 0.995,
        alt_period: int = 150,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        seed: int | None = None,
    ):
        self.grace_period = grace_period
        self.m_min = m_min
        self.delta = delta
        self.tau = tau
        self.leaf_model = leaf_model
        self.learning_rate = learning_rate
        self.rms_decay = rms_decay
        self.rms_eps = rms_eps
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.max_leaves = max_leaves
        self.nominal_features = nominal_features
        self.leaf_quantile_k = leaf_quantile_k
        self.leaf_quantile_split = leaf_quantile_split
        self.drift_threshold = drift_threshold
        self.drift_delta = drift_delta
        self.drift_detection = drift_detection
        self.ph_threshold = ph_threshold
        self.ph_alpha = ph_alpha
        self.alt_fading = alt_fading
        self.alt_period = alt_period
        self.max_memory_mb = max_memory_mb
        self.seed = seed

    def _check_params(self) -> None:
        m = self.m_min
        if not (isinstance(m, numbers.Integral) and not isinstance(m, bool) and 1 <= m <= 10_000):
            raise ValueError(f"m_min must be an integer in [1, 10000], got {m!r}")
        super()._check_params()
