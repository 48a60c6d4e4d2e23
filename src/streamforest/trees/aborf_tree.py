"""One tree of ABORF: balanced, grown before data with random splits (Seah's thesis, ch. 6)."""

from __future__ import annotations

import math
import numbers

from ..tree_kinds import state
from ..tree_kinds.pregrown import MAX_DEPTH, mc_point_count
from .hoeffding import HoeffdingTreeRegressor


class ABORFTreeRegressor(HoeffdingTreeRegressor):
    """A pre-grown random regression tree with RMSProp linear leaves (ABORF's member tree).

    A tree kind of the compiled forest engine (split rule ``"pregrown"``,
    :mod:`streamforest.tree_kinds.pregrown`): when the model first learns, a balanced tree of depth
    ``depth`` is built before any example, each split through the Monte Carlo centre of its cell
    along a random direction (``oblique=True``) or a random feature; its structure never changes.
    Inputs are min-max scaled online per tree.  Each leaf learns a linear model by RMSProp
    (``learning_rate`` ``eta`` = 0.25, ``rms_decay`` ``gamma`` = 0.96) on inputs standardised
    per leaf, around the leaf's mean (see :mod:`streamforest.tree_kinds.leaf_models`);
    ``coef_decay`` scales the coefficients before each step (thesis Algorithm 6.2 uses
    ``gamma``; off by default, see :class:`~streamforest.ABORFRegressor`).
    With ``evidence_fading > 0`` the tree keeps the evidence weight of Algorithm 6.3 (used by
    :class:`~streamforest.ABORFRegressor` to weight its trees).  ``bayesian=True``: the leaves are
    instead the thesis' conjugate Bayesian linear models (§6.2.1-6.2.2, normal-inverse-gamma prior
    ``Lambda_0 = prior_precision I``, ``IG(prior_shape, prior_scale)``, forgetting ``bayes_decay``;
    :mod:`streamforest.tree_kinds.leaf_models`) and the evidence is the faded sum of their log
    posterior predictive densities (:func:`streamforest.tree_kinds.pregrown.evidence_update`); each
    leaf then also keeps a ``(D + 2) x (D + 2)`` scatter matrix.  No observers, no split attempts,
    no drift detection: memory is fixed, about ``2**depth * (100 + 70 * features)`` bytes.

    Parameters
    ----------
    depth
        ``Q``: depth of the balanced tree (``2**depth`` leaves).
    oblique
        Random-projection splits (True) or axis-aligned splits (False).
    learning_rate, rms_decay, rms_eps, coef_decay
        RMSProp of the linear leaves (``eta``, ``gamma``, ``epsilon``, and the coefficients'
        decay, 1 for none).
    evidence_fading
        ``gamma_T`` of the tree's evidence weight, 0 for none.
    evidence_decay
        ``gamma`` of each leaf's faded count and squared errors in the evidence (Algorithm 6.3
        lines 5-6).
    mc_points
        Monte Carlo points that place the node centres; ``None``: the thesis' ``3 * 2**(D - 1)``
        within bounds (:func:`streamforest.tree_kinds.pregrown.mc_point_count`).
    bayesian
        Bayesian leaves (thesis §6.2.1-6.2.2) instead of RMSProp ones (§6.2.3).
    prior_precision, prior_shape, prior_scale, bayes_decay
        The Bayesian leaves' prior ``c`` (``Lambda_0 = c I``, must be > 0), ``a_0`` and ``b_0``,
        and their forgetting ``gamma`` (1: none).
    nominal_features, leaf_quantile_k, leaf_quantile_split, seed
        As in :class:`~streamforest.HoeffdingTreeRegressor`.
    max_features, drift_threshold
        Must be ``None`` (accepted so that forests can pass them).
    """

    _split_rule = state.SPLIT_PREGROWN
    # parameters of the Hoeffding tree this kind does not use
    grace_period = 200
    delta = 1e-7
    tau = 0.05
    leaf_model = "linear"
    observer = "qo"
    qo_radius = "sigma/3"
    qo_cold_radius = 0.01
    tebst_decimals = 3
    min_samples_split = 5.0
    max_leaves = 1 << MAX_DEPTH
    max_observer_bins = 64
    adaptive_fading = 0.995
    drift_delta = 0.1
    drift_detection = False
    ph_threshold = 50.0
    ph_alpha = 0.005
    alt_fading = 0.995
    alt_period = 150
    max_memory_mb = None  # (its memory is fixed by its depth: no budget of its own)
    # defaults of the parameters added since (for trees saved before them)
    bayesian = False
    prior_precision = 0.1
    prior_shape = 0.001
    prior_scale = 0.001
    bayes_decay = 0.96

    def __init__(
        self,
        depth: int = 10,
        oblique: bool = True,
        learning_rate: float = 0.25,
        rms_decay: float = 0.96,
        rms_eps: float = 1e-8,
        coef_decay: float = 1.0,
        evidence_fading: float = 0.0,
        evidence_decay: float = 0.96,
        mc_points: int | None = None,
        bayesian: bool = False,
        prior_precision: float = 0.1,
        prior_shape: float = 0.001,
        prior_scale: float = 0.001,
        bayes_decay: float = 0.96,
        nominal_features: tuple | None = None,
        leaf_quantile_k: int | None = None,
        leaf_quantile_split: str = "empty",
        max_features: None = None,
        drift_threshold: None = None,
        seed: int | None = None,
    ):
        self.depth = depth
        self.oblique = oblique
        self.learning_rate = learning_rate
        self.rms_decay = rms_decay
        self.rms_eps = rms_eps
        self.coef_decay = coef_decay
        self.evidence_fading = evidence_fading
        self.evidence_decay = evidence_decay
        self.mc_points = mc_points
        self.bayesian = bayesian
        self.prior_precision = prior_precision
        self.prior_shape = prior_shape
        self.prior_scale = prior_scale
        self.bayes_decay = bayes_decay
        self.nominal_features = nominal_features
        self.leaf_quantile_k = leaf_quantile_k
        self.leaf_quantile_split = leaf_quantile_split
        self.max_features = max_features
        self.drift_threshold = drift_threshold
        self.seed = seed

    @property
    def max_depth(self) -> int:
        return self.depth

    def _check_params(self) -> None:
        d = self.depth
        if not (isinstance(d, numbers.Integral) and not isinstance(d, bool)) or not (
            1 <= d <= MAX_DEPTH
        ):
            raise ValueError(f"depth must be an integer in [1, {MAX_DEPTH}], got {d!r}")
        if not isinstance(self.oblique, bool):
            raise TypeError(f"oblique must be True or False, got {self.oblique!r}")
        for name, lo, hi in (("coef_decay", 0.0, 1.0), ("evidence_decay", 0.0, 1.0)):
            v = getattr(self, name)
            if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and lo < v <= hi):
                raise ValueError(f"{name} must be a number in (0, 1], got {v!r}")
        ef = self.evidence_fading
        if not (isinstance(ef, numbers.Real) and not isinstance(ef, bool) and 0 <= ef <= 1):
            raise ValueError(f"evidence_fading must be a number in [0, 1], got {ef!r}")
        m = self.mc_points
        if m is not None and not (
            isinstance(m, numbers.Integral) and not isinstance(m, bool) and 1 <= m <= 1 << 24
        ):
            raise ValueError(f"mc_points must be None or an integer in [1, 2**24], got {m!r}")
        if self.max_features is not None:
            raise ValueError("max_features must be None: a pre-grown tree uses every feature")
        if self.drift_threshold is not None:
            raise ValueError("drift_threshold must be None: ABORF adapts through its weights")
        if not isinstance(self.bayesian, bool):
            raise TypeError(f"bayesian must be True or False, got {self.bayesian!r}")
        for name in ("prior_precision", "prior_shape", "prior_scale"):
            v = getattr(self, name)
            if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and 0 < v < math.inf):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        bd = self.bayes_decay
        if not (isinstance(bd, numbers.Real) and not isinstance(bd, bool) and 0 < bd <= 1):
            raise ValueError(f"bayes_decay must be a number in (0, 1], got {bd!r}")
        lr = self.learning_rate
        if not (isinstance(lr, numbers.Real) and lr > 0 and math.isfinite(lr)):
            raise ValueError(f"learning_rate must be a positive number, got {lr!r}")
        super()._check_params()

    def _tree_params(self, p: int) -> state.TreeParams:
        prm = super()._tree_params(p)
        m = self.mc_points if self.mc_points is not None else mc_point_count(p, self.depth)
        return prm._replace(
            oblique=1 if self.oblique else 0,
            mc_points=int(m),
            coef_decay=float(self.coef_decay),
            ev_fade=float(self.evidence_fading),
            ev_decay=float(self.evidence_decay),
            leaf_model=state.LEAF_BAYES if self.bayesian else prm.leaf_model,
            nig_c=float(self.prior_precision),
            nig_a0=float(self.prior_shape),
            nig_b0=float(self.prior_scale),
            nig_decay=float(self.bayes_decay),
        )
