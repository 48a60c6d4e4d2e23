"""The online Hoeffding regression tree (FIMT-style) with E-BST, TE-BST or QO observers."""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping

import numpy as np

from .. import rng as _rng
from ..base import Estimator
from ..features import FeatureSpace, check_target, check_targets, check_weight, check_weights
from ..stats import RunningStats
from . import _kernels as K
from . import _state as S
from .observers import rebuild_hash


class HoeffdingTreeRegressor(Estimator):
    """Incremental regression tree (FIMT / Hoeffding tree) compiled with numba.

    Each leaf accumulates target statistics and one attribute observer per feature.  Every
    ``grace_period`` units of weight a leaf compares split candidates by variance reduction (VR)
    and splits when ``VR(runner-up) / VR(best) < 1 - eps`` or ``eps < tau``, with
    ``eps = sqrt(ln(1/delta) / (2 n))``.  Details: :mod:`streamforest.trees._kernels` (routing,
    splits, memory), :mod:`streamforest.trees.observers` (observers, thresholds) and
    :mod:`streamforest.trees.leaf_models` (leaf models).

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
        ``8 * row_capacity(k)`` more bytes (about 6 KB at k=200).  Sample weights are rounded
        stochastically to integers for the sketch.
    leaf_quantile_split
        What the two children of a split start their sketch with: ``"empty"`` or ``"parent"``
        (a copy of the parent's sketch, which it keeps accumulating into).
    drift_threshold, drift_delta
        ``None``, or the threshold ``lambda`` of a Page-Hinkley test on the tree's prequential
        absolute error, standardised by its own running mean and sd, with tolerance ``delta``
        (in sds); when it fires the tree is replaced by a fresh one (``n_resets`` counts it).
        Learning then predicts every row first, for the detector.
    seed
        Seed of the random feature subsets; the same seed gives the same model.

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
        drift_delta: float = 0.1,
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
        if self.leaf_model not in S.LEAF_MODELS:
            raise ValueError(
                f"leaf_model must be one of {sorted(S.LEAF_MODELS)}, got {self.leaf_model!r}"
            )
        if self.observer not in S.OBSERVERS:
            raise ValueError(
                f"observer must be one of {sorted(S.OBSERVERS)}, got {self.observer!r}"
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

    def _tree_params(self, p: int) -> S.TreeParams:
        r = self.qo_radius
        sigma = {"sigma/2": 2.0, "sigma/3": 3.0}.get(r, 0.0) if isinstance(r, str) else 0.0
        radius = float(self.qo_cold_radius) if sigma else float(r)
        return S.TreeParams(
            grace=float(self.grace_period),
            delta=float(self.delta),
            tau=float(self.tau),
            max_depth=int(self.max_depth) if self.max_depth is not None else 1 << 40,
            min_branch=float(self.min_samples_split),
            leaf_model=S.LEAF_MODELS[self.leaf_model],
            lr=float(self.learning_rate),
            rms_decay=float(self.rms_decay),
            rms_eps=float(self.rms_eps),
            fading=float(self.adaptive_fading),
            observer=S.OBSERVERS[self.observer],
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
        )

    # ---------------------------------------------------------------------------------------------
    # state
    @property
    def _fitted(self) -> bool:
        return getattr(self, "state_", None) is not None

    def _features(self) -> FeatureSpace:
        fs = getattr(self, "features_", None)
        if fs is None:
            self._check_params()
            fs = self.features_ = FeatureSpace(self.nominal_features)
            self.state_ = None
        return fs

    def _sync_features(self) -> None:
        """Create the state, or widen it, to match the feature space."""
        fs = self.features_
        p = len(fs)
        if p == 0:
            return
        if self.state_ is None:
            self.params_ = self._tree_params(p)
            st = S.allocate(
                p,
                _rng.new_state(self._state_seed()),
                sketch_k=int(self.leaf_quantile_k or 0),
                bins=min(4096, int(self.max_observer_bins)),
            )
            st.ft_nominal[:p] = fs.nominal
            K.init_root(st, self.params_)
            self.state_ = st
        st = self.state_
        if st.ints[S.I_NFEAT] < p:
            pc = st.ft_nominal.shape[0]
            if p > pc:
                st = S.grow(st, features=max(p, 2 * pc))
            st.ft_nominal[:p] = fs.nominal
            # new features are observed by every existing leaf (see _choose_features)
            st.lf_mask[:, st.ints[S.I_NFEAT] : p] = 1
            prm = self.params_
            new_scale = 1.0 / prm.qo_radius if prm.observer == S.OBS_QO else prm.tebst_scale
            st.lf_scale[:, st.ints[S.I_NFEAT] : p] = new_scale
            st.ints[S.I_NFEAT] = p
            self.params_ = self._tree_params(p)
            self.state_ = st
        st.ints[S.I_MAXCAT] = fs.max_categories

    def _state_seed(self) -> int | None:
        """Seed of the current state: ``seed``, or one derived from it after each reset."""
        k = self.__dict__.get("n_resets_", 0)
        if self.seed is None or k == 0:
            return self.seed
        return int(np.random.SeedSequence([int(self.seed), k]).generate_state(1, np.uint64)[0])

    def _reset(self) -> None:
        """Replace the tree by a fresh one (same features and parameters)."""
        self.n_resets_ = self.__dict__.get("n_resets_", 0) + 1
        self.state_ = None
        self._sync_features()

    def _after_stop(self, stop: int, n: int) -> bool:
        """After a kernel returned ``stop`` (of ``n`` rows): replace the tree if its drift
        detector fired (returns True), else grow it if it stopped early for lack of room."""
        if self.state_.ints[S.I_DRIFT]:
            self._reset()
            return True
        if stop < n and K.lacks_room(self.state_, self.params_):
            self._make_room()
        return False

    def _load_kernels(self) -> None:
        """Load (or compile) kernels that only run when the tree grows, so a timed run does not
        pay for them; rehashing the observer bins in place changes nothing."""
        if self._fitted:
            rebuild_hash(self.state_)

    @property
    def n_resets(self) -> int:
        """Times the drift detector replaced the tree."""
        return self.__dict__.get("n_resets_", 0)

    def _make_room(self) -> None:
        st, prm = self.state_, self.params_
        ints = st.ints
        kw = {}
        if ints[S.I_NNODES] + 2 > st.nd_feat.shape[0]:
            kw["nodes"] = 2 * st.nd_feat.shape[0]
        if ints[S.I_LEAF_NFREE] == 0 and ints[S.I_LEAF_HW] + 1 > st.lf_node.shape[0]:
            kw["leaves"] = 2 * st.lf_node.shape[0]
        if ints[S.I_CAT_USED] + ints[S.I_MAXCAT] > st.cats.shape[0]:
            kw["cats"] = 2 * (st.cats.shape[0] + ints[S.I_MAXCAT])
        n_bins = st.bn.shape[0]
        if n_bins - ints[S.I_BINS_LIVE] < ints[S.I_NFEAT] and n_bins < prm.max_bins:
            kw["bins"] = min(prm.max_bins, 2 * n_bins)
        if not kw:
            raise RuntimeError("internal error: the tree asked for room it does not need")
        st = S.grow(st, **kw)
        if "bins" in kw:
            rebuild_hash(st)
        self.state_ = st

    def _run(self, X, y, w, out=None) -> None:
        i = 0
        n = X.shape[0]
        while True:
            if out is None:
                i = K.learn_batch(self.state_, self.params_, X, y, w, i)
            else:
                i = K.predict_learn_batch(self.state_, self.params_, X, y, w, i, out)
            self._after_stop(i, n)
            if i >= n:
                return

    # ---------------------------------------------------------------------------------------------
    # River-style API
    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values) with sample weight ``w``."""
        yf = check_target(y)
        wa = check_weight(w)
        row = self._features().encode_dict(x, learn=True)
        self._sync_features()
        if self.state_ is None:  # no feature seen yet: the example still counts at the root
            return self._learn_featureless(yf, wa[0])
        X = row.reshape(1, -1)
        self._run(X, np.array([yf]), wa)

    def _learn_featureless(self, y: float, w: float) -> None:
        """Examples without any feature: only their target mean is kept (bounded memory)."""
        if getattr(self, "featureless_", None) is None:
            self.featureless_ = RunningStats()
        if w > 0:
            self.featureless_.update(y, w)

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Prediction for one example; 0.0 before anything was learnt."""
        if not self._fitted:
            if not isinstance(x, Mapping):
                raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
            return self._featureless_prediction()
        row = self.features_.encode_dict(x, learn=False)
        out = np.empty(1)
        K.predict_batch(self.state_, self.params_, row.reshape(1, -1), out)
        return float(out[0])

    def _featureless_prediction(self) -> float:
        fl = getattr(self, "featureless_", None)
        return fl.mean if fl is not None else 0.0

    # ---------------------------------------------------------------------------------------------
    # array API
    def learn_many(self, X, y, w=None) -> HoeffdingTreeRegressor:
        """Learn the rows of ``X`` (2-d array or DataFrame) in order, with optional weights."""
        Xa, ya, wa = self._prepare(X, y, w)
        if self.state_ is not None and Xa.shape[0]:
            self._run(Xa, ya, wa)
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions for the rows of ``X``."""
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        if not self._fitted:
            self._features().encode_array(X, learn=False)  # validates
            return np.full(n, self._featureless_prediction())
        Xa = self.features_.encode_array(X, learn=False)
        Xa = self._pad(Xa)
        out = np.empty(Xa.shape[0])
        K.predict_batch(self.state_, self.params_, Xa, out)
        return out

    def predict_learn_many(self, X, y, w=None) -> np.ndarray:
        """Prequential pass: predict each row, then learn it; returns the predictions.

        Equivalent to ``predict_one`` then ``learn_one`` per row, in one compiled loop.
        """
        Xa, ya, wa = self._prepare(X, y, w, defer=True)
        out = np.empty(Xa.shape[0])
        if Xa.shape[0]:
            self._sync_features()
            self._run(Xa, ya, wa, out)
        return out

    def _prepare(self, X, y, w, defer: bool = False):
        fs = self._features()
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        ya = check_targets(y, n)
        wa = check_weights(w, n)
        Xa = fs.encode_array(X, learn=True)
        if not defer:
            self._sync_features()
        Xa = np.ascontiguousarray(Xa, dtype=np.float64)
        return Xa, ya, wa

    def _pad(self, Xa: np.ndarray) -> np.ndarray:
        p = self.state_.ints[S.I_NFEAT]
        if Xa.shape[1] < p:
            Xa = np.hstack([Xa, np.full((Xa.shape[0], p - Xa.shape[1]), np.nan)])
        return np.ascontiguousarray(Xa, dtype=np.float64)

    def apply(self, X) -> np.ndarray:
        """Id of the leaf node each row of ``X`` reaches."""
        if not self._fitted:
            n = X.shape[0] if hasattr(X, "shape") else len(X)
            return np.zeros(n, dtype=np.int64)
        Xa = self._pad(self.features_.encode_array(X, learn=False))
        out = np.empty(Xa.shape[0], dtype=np.int64)
        K.apply_batch(self.state_, Xa, out)
        return out

    # ---------------------------------------------------------------------------------------------
    # inspection
    def _int(self, i: int) -> int:
        return int(self.state_.ints[i]) if self._fitted else 0

    @property
    def n_leaves(self) -> int:
        return self._int(S.I_NLEAVES) if self._fitted else 1

    @property
    def n_nodes(self) -> int:
        return self._int(S.I_NNODES) if self._fitted else 1

    @property
    def n_splits(self) -> int:
        return self._int(S.I_NSPLITS)

    @property
    def height(self) -> int:
        if not self._fitted:
            return 0
        st = self.state_
        return int(st.nd_depth[: st.ints[S.I_NNODES]].max())

    @property
    def n_features_in_(self) -> int:
        return len(self.features_) if getattr(self, "features_", None) is not None else 0

    @property
    def feature_names_in_(self) -> list:
        return list(self.features_.names) if getattr(self, "features_", None) is not None else []

    @property
    def memory_bytes(self) -> int:
        """Bytes of the compiled state's arrays (allocated capacity)."""
        return S.nbytes(self.state_) if self._fitted else 0

    def leaf_stats(self, node: int) -> tuple[float, float, float]:
        """``(weight, mean, variance)`` of the targets that reached leaf ``node``."""
        w, mean, m2 = K.leaf_target_stats(self.state_, node)
        return w, mean, (m2 / w if w > 0 else 0.0)

    def splits(self) -> list[dict]:
        """The split nodes, root first: for each, its ``node`` id, ``feature`` name, ``threshold``
        (numeric: ``x <= threshold`` goes left) or ``left_categories`` / ``right_categories``
        (nominal), ``missing_left`` (where missing values and unseen categories go) and the
        ``left`` and ``right`` child ids."""
        if not self._fitted:
            return []
        st = self.state_
        out = []
        names = self.features_.names
        for node in range(int(st.ints[S.I_NNODES])):
            f = int(st.nd_feat[node])
            if f < 0:
                continue
            d = {
                "node": node,
                "feature": names[f],
                "missing_left": bool(st.nd_miss_left[node]),
                "left": int(st.nd_left[node]),
                "right": int(st.nd_right[node]),
            }
            if st.ft_nominal[f]:
                inv = {c: v for v, c in self.features_.categories[f].items()}
                off, nl, nr = (
                    int(st.nd_cat_off[node]),
                    int(st.nd_cat_len[node]),
                    int(st.nd_cat_nr[node]),
                )
                d["left_categories"] = [inv[int(c)] for c in st.cats[off : off + nl]]
                d["right_categories"] = [inv[int(c)] for c in st.cats[off + nl : off + nl + nr]]
            else:
                d["threshold"] = float(st.nd_thr[node])
            out.append(d)
        return out
