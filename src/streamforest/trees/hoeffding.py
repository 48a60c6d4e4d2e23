"""The online Hoeffding regression tree (FIMT-style) with E-BST, TE-BST or QO observers."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..engine.budget import DEFAULT_MEMORY_MB, check_memory_mb
from ..engine.regressor_model import EngineRegressor
from ..stats import RunningStats
from ..tree_kinds import state
from ..tree_kinds.inspection import TreeInspection


class HoeffdingTreeRegressor(TreeInspection, EngineRegressor):
    """Incremental regression tree (FIMT / Hoeffding tree).

    Each leaf accumulates target statistics and one attribute observer per feature.  Every
    ``grace_period`` units of weight a leaf compares split candidates by variance reduction (VR)
    and splits when ``VR(runner-up) / VR(best) < 1 - eps`` or ``eps < tau``, with
    ``eps = sqrt(ln(1/delta) / (2 n))``.  Details: :mod:`streamforest.tree_kinds.kernels` (routing,
    splits, memory), :mod:`streamforest.tree_kinds.observers` (observers, thresholds) and
    :mod:`streamforest.tree_kinds.leaf_models` (leaf models).

    Parameters
    ----------
    grace_period
        Weight a leaf must receive between split attempts.
    delta
        Confidence of the Hoeffding bound (its ``1 - delta``).
    tau
        Tie threshold: split when ``eps`` falls below it even if the two best candidates tie.
    leaf_model
        ``"mean"``, ``"linear"`` (RMSProp on FIMT-standardised inputs) or ``"adaptive"`` (the one
        with the smaller faded error at each leaf).
    observer
        Numeric attribute observer: ``"ebst"``, ``"tebst"`` or ``"qo"``.
    qo_radius
        QO quantization radius: a positive number, or ``"sigma/2"`` / ``"sigma/3"`` for the
        standard deviation of the feature (as seen by the parent leaf) over 2 or 3.
    qo_cold_radius
        Radius of the root's observers under ``"sigma/k"`` (no statistics exist yet): QO paper §5.2.
    tebst_decimals
        Decimals kept by the TE-BST observer.
    max_depth
        Depth at which leaves stop growing (``None``: unlimited).
    min_samples_split
        Weight each side of a split candidate must have (River's name for it).
    max_features
        Features observed per leaf: ``None`` (all), an int, a float fraction, or ``"sqrt"``
        (``floor(sqrt(p)) + 1``, as ARF); a new random subset is drawn at every leaf.
    max_leaves
        Leaf budget; when reached the structure freezes and the observers are freed.
    max_observer_bins
        Memory budget of the observers, in bins (about 120 bytes each); when it is full the least
        promising leaves stop observing.
    learning_rate, rms_decay, rms_eps
        RMSProp parameters of the linear leaves (thesis eq. 4.5-4.6: 0.01, 0.9, 1e-8).
    adaptive_fading
        Fading factor of the errors compared by ``"adaptive"`` leaves.
    nominal_features
        Names (or column indices, for plain arrays) of features to treat as nominal even if their
        values are numbers.  String-valued features are nominal anyway.
    leaf_quantile_k
        ``None``, or the ``k`` of a KLL sketch of the targets kept in every leaf (quantile
        regression forests, :class:`streamforest.OnlineQRF`); each leaf then holds
        ``8 * (kll.leaf_row_capacity(k) + kll.LV_WIDTH)`` more bytes (about 1.6 kB at k=200).
        Sample weights are rounded stochastically to integers for the sketch.
    leaf_quantile_split
        What the two children of a split start their sketch with: ``"empty"`` or ``"parent"``
        (a copy of the parent's sketch, which it keeps accumulating into).
    drift_threshold, drift_delta
        ``None``, or the threshold ``lambda`` of the tree's Page-Hinkley test on its prequential
        absolute error (the thesis' test, :func:`streamforest.drift.page_hinkley_update`: errors
        in units of the targets' sd when the detector started, clipped at 2, tolerance
        ``drift_delta``, the thesis' alpha); when it fires the owner replaces the tree (a single
        tree restarts empty and ``n_resets`` counts it; a forest swaps in a background tree).
        Learning then predicts every row first, for the detector.
    drift_detection
        FIMT-DD's change adaptation inside the tree (thesis §4.2.2-4.2.3): every split node
        runs a Page-Hinkley test (threshold ``ph_threshold``, tolerance ``ph_alpha``) on the
        absolute error of the tree's prediction for the examples that pass it (bottom-up), in
        units of the target sd at the node's split; when it fires the node grows an alternate
        subtree (at most one per node, none inside alternates) from the examples that follow.
        Every ``alt_period`` examples the alternate's faded squared error (fading
        ``alt_fading``) is compared with the node's subtree's: ``Q = log(S_org / S_alt) > 0``
        adopts the alternate (the old subtree is freed); after ``10 * grace_period`` examples
        an alternate whose ``Q`` fell below its running mean is discarded (the thesis' rule,
        read as "the alternate is getting worse").  Counts: ``alternate_stats``.
    ph_threshold, ph_alpha, alt_fading, alt_period
        The thesis' (Table 4.2) lambda = 50, alpha = 0.005, gamma_Q = 0.995, N_Q = 150.
    max_memory_mb
        Memory budget of the tree in MiB (default 256, as the forests'): ``max_leaves`` and
        ``max_observer_bins`` are lowered so that the tree's nodes, leaves and observer bins fit
        it (see :mod:`streamforest.engine.budget`; a tree at its leaf cap freezes its structure
        and its leaves keep learning).  Where it does not bind, the tree is the one without a
        budget, bit for bit.  ``None``: only ``max_leaves`` and ``max_observer_bins``.  As the
        template of a forest's trees (``OnlineForestRegressor(tree=...)``, SGBT's steps) it is
        not read: the forest's own ``max_memory_mb`` bounds all its trees.  A tree saved before
        this parameter existed loads with ``None`` (it had no budget).
    seed
        Seed of the random feature subsets; the same seed gives the same model.

    Examples are dicts (``learn_one``) or rows of a 2-d array or DataFrame (``learn_many``), in
    any mix; :mod:`streamforest.features` gives the rules (missing values, nominal values,
    emerging features, and which features a plain array's columns are).

    Examples
    --------
    >>> from streamforest import HoeffdingTreeRegressor
    >>> model = HoeffdingTreeRegressor(grace_period=50, seed=1)
    >>> for i in range(500):
    ...     x = {"a": (i % 10) / 10, "b": float(i % 7)}
    ...     model.learn_one(x, 3.0 if x["a"] > 0.45 else -3.0)
    >>> round(model.predict_one({"a": 0.9, "b": 1.0}), 3), model.n_leaves
    (3.0, 2)
    """

    _split_rule = (
        state.SPLIT_OBSERVERS
    )  # the tree kind's split rule (see streamforest.tree_kinds.rules)
    # parameters added after format 1: a tree spec loaded from such a file has none of its own
    drift_detection = False
    ph_threshold = 50.0
    ph_alpha = 0.005
    alt_fading = 0.995
    alt_period = 150
    max_memory_mb = None  # (saved before the single trees had a budget: it had none)

    def __init__(
        self,
        grace_period: int = 200,
        delta: float = 1e-7,
        tau: float = 0.05,
        leaf_model: str = "adaptive",
        observer: str = "qo",
        qo_radius: float | str = "sigma/3",
        qo_cold_radius: float = 0.01,
        tebst_decimals: int = 3,
        max_depth: int | None = None,
        min_samples_split: float = 5.0,
        max_features: int | float | str | None = None,
        max_leaves: int = 100_000,
        max_observer_bins: int = 1_000_000,
        learning_rate: float = 0.01,
        rms_decay: float = 0.9,
        rms_eps: float = 1e-8,
        adaptive_fading: float = 0.995,
        nominal_features: tuple | None = None,
        leaf_quantile_k: int | None = None,
        leaf_quantile_split: str = "empty",
        drift_threshold: float | None = None,
        drift_delta: float = 0.005,
        drift_detection: bool = False,
        ph_threshold: float = 50.0,
        ph_alpha: float = 0.005,
        alt_fading: float = 0.995,
        alt_period: int = 150,
        max_memory_mb: float | None = DEFAULT_MEMORY_MB,
        seed: int | None = None,
    ):
        self.grace_period = grace_period
        self.delta = delta
        self.tau = tau
        self.leaf_model = leaf_model
        self.observer = observer
        self.qo_radius = qo_radius
        self.qo_cold_radius = qo_cold_radius
        self.tebst_decimals = tebst_decimals
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.max_features = max_features
        self.max_leaves = max_leaves
        self.max_observer_bins = max_observer_bins
        self.learning_rate = learning_rate
        self.rms_decay = rms_decay
        self.rms_eps = rms_eps
        self.adaptive_fading = adaptive_fading
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

    # ---------------------------------------------------------------------------------------------
    # hyper-parameters
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
        if self.leaf_model not in state.LEAF_MODELS:
            raise ValueError(
                f"leaf_model must be one of {sorted(state.LEAF_MODELS)}, got {self.leaf_model!r}"
            )
        if self.observer not in state.OBSERVERS:
            raise ValueError(
                f"observer must be one of {sorted(state.OBSERVERS)}, got {self.observer!r}"
            )
        r = self.qo_radius
        if isinstance(r, str):
            if r not in ("sigma/2", "sigma/3"):
                raise ValueError(
                    f"qo_radius must be a positive number, 'sigma/2' or 'sigma/3', got {r!r}"
                )
        else:
            positive("qo_radius", r)
        positive("qo_cold_radius", self.qo_cold_radius)
        if not (
            isinstance(self.tebst_decimals, numbers.Integral) and 0 <= self.tebst_decimals <= 12
        ):
            raise ValueError(
                f"tebst_decimals must be an integer in [0, 12], got {self.tebst_decimals!r}"
            )
        if self.max_depth is not None:
            positive("max_depth", self.max_depth, integer=True)
        if not (isinstance(self.min_samples_split, numbers.Real) and self.min_samples_split >= 0):
            raise ValueError(f"min_samples_split must be >= 0, got {self.min_samples_split!r}")
        positive("max_leaves", self.max_leaves, integer=True)
        positive("max_observer_bins", self.max_observer_bins, integer=True)
        if self.max_observer_bins < 64:
            raise ValueError("max_observer_bins must be at least 64")
        positive("learning_rate", self.learning_rate)
        if not (0 <= self.rms_decay < 1):
            raise ValueError(f"rms_decay must be in [0, 1), got {self.rms_decay!r}")
        positive("rms_eps", self.rms_eps)
        if not (0 < self.adaptive_fading <= 1):
            raise ValueError(f"adaptive_fading must be in (0, 1], got {self.adaptive_fading!r}")
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
        qk = self.leaf_quantile_k
        if qk is not None and not (
            isinstance(qk, numbers.Integral) and not isinstance(qk, bool) and 8 <= qk <= 65535
        ):
            raise ValueError(
                f"leaf_quantile_k must be None or an integer in [8, 65535], got {qk!r}"
            )
        if self.leaf_quantile_split not in ("empty", "parent"):
            raise ValueError(
                f"leaf_quantile_split must be 'empty' or 'parent', got {self.leaf_quantile_split!r}"
            )
        if self.drift_threshold is not None:
            positive("drift_threshold", self.drift_threshold)
        if not (isinstance(self.drift_delta, numbers.Real) and self.drift_delta >= 0):
            raise ValueError(f"drift_delta must be a number >= 0, got {self.drift_delta!r}")
        if not isinstance(self.drift_detection, (bool, np.bool_)):
            raise TypeError(f"drift_detection must be True or False, got {self.drift_detection!r}")
        positive("ph_threshold", self.ph_threshold)
        if not (isinstance(self.ph_alpha, numbers.Real) and 0 <= self.ph_alpha < 1):
            raise ValueError(f"ph_alpha must be a number in [0, 1), got {self.ph_alpha!r}")
        if not (isinstance(self.alt_fading, numbers.Real) and 0 < self.alt_fading <= 1):
            raise ValueError(f"alt_fading must be in (0, 1], got {self.alt_fading!r}")
        positive("alt_period", self.alt_period, integer=True)
        check_memory_mb(self.max_memory_mb)
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
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
        r = self.qo_radius
        sigma = {"sigma/2": 2.0, "sigma/3": 3.0}.get(r, 0.0) if isinstance(r, str) else 0.0
        radius = float(self.qo_cold_radius) if sigma else float(r)
        return state.TreeParams(
            grace=float(self.grace_period),
            delta=float(self.delta),
            tau=float(self.tau),
            max_depth=int(self.max_depth) if self.max_depth is not None else 1 << 40,
            min_branch=float(self.min_samples_split),
            leaf_model=state.LEAF_MODELS[self.leaf_model],
            lr=float(self.learning_rate),
            rms_decay=float(self.rms_decay),
            rms_eps=float(self.rms_eps),
            fading=float(self.adaptive_fading),
            observer=state.OBSERVERS[self.observer],
            tebst_scale=float(10.0**self.tebst_decimals),
            qo_sigma=sigma,
            qo_radius=radius,
            max_features=self._n_features_observed(p),
            max_leaves=int(self.max_leaves),
            max_bins=int(self.max_observer_bins),
            drift_lambda=float(self.drift_threshold or 0.0),
            drift_delta=float(self.drift_delta),
            sketch_k=int(self.leaf_quantile_k or 0),
            sketch_split=1 if self.leaf_quantile_split == "parent" else 0,
            split_rule=self._split_rule,
            m_min=int(getattr(self, "m_min", 0)),
            alt_lambda=float(self.ph_threshold) if self.drift_detection else 0.0,
            alt_alpha=float(self.ph_alpha),
            alt_fade=float(self.alt_fading),
            alt_period=int(self.alt_period),
        )

    # ---------------------------------------------------------------------------------------------
    # engine: one tree, no bagging
    def _nominal(self):
        return self.nominal_features

    def _make_engine(self, features):
        from ..engine.core import Engine

        # no bagging: the engine's generator is never drawn from; a fixed seed keeps the saved
        # state a function of the parameters and the data (two equal trees pickle the same).
        # The tree's own budget (a forest passes its own to its engine: see max_memory_mb)
        return Engine([self.clone()], features, seed=0, max_memory_mb=self.max_memory_mb)

    def learn_featureless(self, y: float, w: float) -> None:
        """Examples without any feature: only their target mean is kept (bounded memory)."""
        if getattr(self, "featureless_", None) is None:
            self.featureless_ = RunningStats()
        if w > 0:
            self.featureless_.update(y, w)

    def _featureless_prediction(self) -> float:
        fl = getattr(self, "featureless_", None)
        return fl.mean if fl is not None else 0.0

    @property
    def state_(self) -> state.TreeState | None:
        """The compiled state (numpy views of the engine's arena), ``None`` before learning."""
        return self.engine_.state(0) if self.is_fitted else None

    @property
    def params_(self) -> state.TreeParams | None:
        return self.engine_.params(0) if self.is_fitted else None

    @property
    def n_resets(self) -> int:
        """Times the drift detector replaced the tree."""
        e = self.__dict__.get("engine_")
        return int(e.n_resets[0]) if e is not None else 0

    def apply(self, X) -> np.ndarray:
        """Id of the leaf node each row of ``X`` reaches."""
        if "features_" not in self.__dict__:
            return self._first_call(HoeffdingTreeRegressor.apply, X, keep=False)
        Xa = self.encode_predict(X)
        if not self.is_fitted:
            return np.zeros(Xa.shape[0], dtype=np.int64)
        return self.engine_.apply(0, Xa)
