"""Gaussian baseline: the forest's predictive mean and variance, Gaussian quantiles (JMLR 2019,
§4.1.2, after Lakshminarayanan et al. 2016)."""

from __future__ import annotations

import numbers
from statistics import NormalDist

import numpy as np

import streamforest._core as _core

from ..engine.forest_interface import LEAF_PAYLOADS, TREE_MEMBERS
from ..features import check_target, weight_of
from ._label_guard import flagged_count, guard_label, guarded, new_state
from .base import IntervalRegressor, check_quantiles

_CORE = _core.intervals  # the method's kernels (src/core/intervals/gaussian.hpp)
_VARIANCES = {
    "calibrated": _CORE.CALIBRATED,
    "mixture": _CORE.MIXTURE,
    "trees": _CORE.TREES,
}


_LEAF_SPREADS = ("residual", "targets")


def _z(levels) -> np.ndarray:
    return np.array([NormalDist().inv_cdf(float(v)) for v in levels])


_NO_LEVELS = np.zeros(0)
_FLAGGED_ONE = np.ones(1, np.int8)  # one row the label guard set aside (shared, never written)


class GaussianInterval(IntervalRegressor):
    """Prediction interval ``mean +- z_{1 - alpha/2} * sd`` from the forest's predictive mean and
    variance (Gaussian quantiles).

    The JMLR paper's baseline "computes the predicted mean and variance among the trees ... and
    takes Gaussian quantiles", after Lakshminarayanan et al. (2016), whose forest baselines
    treat each tree as predicting a Gaussian (its leaf's mean and variance) and the forest as
    their mixture (Hutter et al. 2014).  Taken literally -- the variance of the trees'
    *predictions* (``variance="trees"``) -- it measures only how much the trees disagree about
    ``E[y | x]``, not the noise of ``y``: the interval shrinks as the trees agree, which is the
    paper's MER of about 0.4 at ``alpha = 0.1`` (its Table 2).  The predictive variance needs the
    spread of ``y`` *within* the leaves too:

    - ``variance="mixture"``: the mixture's variance by the law of total variance,
      ``v(x) + b(x)``, with ``b`` the variance of the trees' predictions and ``v`` the mean of
      the trees' leaf variances.  Hoeffding-tree leaves are large (a split needs statistical
      confidence), so ``v`` also holds the variation of ``E[y | x]`` across the leaf, and the
      mixture is wider than the error of the forest's mean: it over-covers (MER ~0.02 at
      ``alpha = 0.1`` on Friedman #1).
    - ``variance="calibrated"`` (default): ``kappa * (v(x) + b(x))``, the mixture's variance as
      the *shape* (it adapts to ``x``) with its scale ``kappa`` the faded mean of
      ``(y - mean)^2 / (v + b)`` over the examples learnt so far, each measured before it was
      learnt (prequential): the forest's actual squared error relative to the mixture variance.
      With Gaussian errors this covers about ``1 - alpha``; it is still a parametric baseline
      (no coverage guarantee: heavy tails or skewed noise make it invalid at small ``alpha``).

    Parameters
    ----------
    forest
        The forest (unfitted); default ``OnlineForestRegressor(n_trees=10)``.
    variance
        ``"calibrated"``, ``"mixture"`` or ``"trees"`` (see above).
    leaf_spread
        A tree's leaf variance: ``"residual"`` (default): the variance of the leaf's targets,
        scaled, when an adaptive leaf predicts with its linear model, by the squared ratio of the
        linear model's faded mean absolute error to the mean model's (the linear model explains
        part of that variance); ``"targets"``: the variance of the leaf's targets.
    min_leaf_weight
        Leaves with less weight of targets than this contribute no variance (a leaf just created
        by a split); where no tree's leaf has enough, the interval is ``(-inf, inf)``.
    scale_window
        Memory of ``kappa`` (``variance="calibrated"``): each learnt example fades the earlier
        ones by ``1 - 1/scale_window``, so ``kappa`` follows drift.
    seed
        Overrides the forest's seed when given.
    groups
        Intervals calibrated per group (online Mondrian conformal): a column name or index, a
        function of the row, a list of them (several families), or
        :class:`~streamforest.Multivalid` (overlapping families); the array calls also take a
        ``groups=`` array.  See docs/intervals.md, "Coverage per group".

    Before the forest has learnt anything the interval is ``(-inf, inf)``.

    Notes
    -----
    A label far outside the range of the labels learnt so far (more than ten times the range's
    width beyond it, after the first 32: a sensor spike, a unit slip) is set aside by a label
    guard: the row is predicted as any other, but the trees learn it with weight 0 and
    ``kappa`` does not learn its error (one label of 1e12 otherwise stayed in a leaf's mean for
    good and held ``kappa`` at millions for tens of thousands of rows).  ``n_flagged_labels``
    counts them; see docs/intervals.md, "Label glitches".
    """

    def __init__(
        self,
        forest=None,
        variance: str = "calibrated",
        leaf_spread: str = "residual",
        min_leaf_weight: float = 2.0,
        scale_window: int = 1000,
        seed: int | None = None,
        groups=None,
    ):
        self.forest = forest
        self.variance = variance
        self.leaf_spread = leaf_spread
        self.min_leaf_weight = min_leaf_weight
        self.scale_window = scale_window
        self.seed = seed
        self.groups = groups

    def forest_needs(self) -> tuple[str, ...]:
        """Each member's leaf mean and variance, read by its kernels."""
        return (LEAF_PAYLOADS, TREE_MEMBERS)

    def _check_params(self) -> None:
        self._check_common()
        if self.variance not in _VARIANCES:
            raise ValueError(f"variance must be one of {tuple(_VARIANCES)}, got {self.variance!r}")
        if self.leaf_spread not in _LEAF_SPREADS:
            raise ValueError(
                f"leaf_spread must be one of {_LEAF_SPREADS}, got {self.leaf_spread!r}"
            )
        m = self.min_leaf_weight
        if isinstance(m, bool) or not isinstance(m, numbers.Real) or not 0 <= m < np.inf:
            raise ValueError(f"min_leaf_weight must be a number >= 0, got {m!r}")
        c = self.scale_window
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or not 1 <= c <= 10**9:
            raise ValueError(f"scale_window must be a positive integer, got {c!r}")

    # a model saved before these parameters existed computed the across-tree variance only
    _BEFORE_0_2 = {
        "variance": "trees",
        "leaf_spread": "targets",
        "min_leaf_weight": 2.0,
        "scale_window": 1000,
    }

    def __setstate__(self, d) -> None:
        """Pickle and :func:`streamforest.load`: a model saved by streamforest 0.1 (no
        ``variance``) keeps the behaviour it was saved with, ``variance="trees"``."""
        self.__dict__.update(d)
        for k, v in self._BEFORE_0_2.items():
            self.__dict__.setdefault(k, v)
        if "_forest" in d and "scale_" not in d:
            self.scale_ = np.zeros(2)
        if "_forest" in d and "label_guard_" not in d:  # saved before the guard: a fresh one
            self.label_guard_ = new_state()

    def _init_state(self) -> None:
        self.scale_ = np.zeros(2)  # faded sums of (y - mean)^2 / shape and of weights
        self.label_guard_ = new_state()  # the label guard (see the class notes)

    @property
    def n_flagged_labels(self) -> int:
        """Labels the label guard has set aside (not learnt)."""
        return flagged_count(self.__dict__.get("label_guard_"))

    @property
    def scale(self) -> float:
        """``kappa``: the forest's squared error relative to the mixture variance (1 before any
        example; only ``variance="calibrated"`` uses it)."""
        s = self.__dict__.get("scale_")
        return float(s[0] / s[1]) if s is not None and s[1] > 0 else 1.0

    # ---------------------------------------------------------------------------------------------
    def _trees(self, Xa, ya, W, learn, wa=None):
        """``(P, V, N)``: per tree and row, the prediction, leaf variance and leaf weight, read
        before each row is learnt (when ``learn``, with bagging weights ``W``; ``wa`` the sample
        weights, which background trees learn with)."""
        e = self.forest_.engine_
        T, n = e.n_trees, Xa.shape[0]
        P, V, N = np.zeros((T, n)), np.zeros((T, n)), np.zeros((T, n))
        residual = self.leaf_spread == "residual"
        w = W if learn else np.zeros((T, n))

        def step(A, t, i):
            return _CORE.gaussian_tree_pass(
                A, t, Xa, ya, w[t], i, learn, residual, P[t], V[t], N[t]
            )

        e.run(step, n, rows=(Xa, ya, wa) if learn else None)
        return P, V, N

    def _learn_levels(self) -> np.ndarray:
        return np.zeros(0)  # learning alone needs no interval

    def _chunk(self, Xa, ya, wa, alphas, learn):
        flagged = None
        if learn:  # the labels through the label guard (see the class notes)
            ya, wa, flagged = guarded(self.label_guard_, ya, wa)
        return self._guarded_chunk(Xa, ya, wa, flagged, alphas, learn)

    def _guarded_chunk(self, Xa, ya, wa, flagged, alphas, learn):
        """:meth:`_chunk` of rows whose labels went through the label guard (``flagged``:
        ``None``, or the rows it flagged, whose weights ``wa`` are 0)."""
        e = self.forest_.engine_
        n = Xa.shape[0]
        mode = _VARIANCES[self.variance]
        if learn and alphas.shape[0] == 0 and mode != _CORE.CALIBRATED:
            e.learn(Xa, ya, e.bagging_weights(wa), wa)  # no interval, no scale to follow
            return np.zeros(n), np.zeros((n, 0)), np.zeros((n, 0))
        P, lo, hi = self._pass(Xa, ya, wa, _z(1 - alphas / 2), learn, flagged)
        if learn and self.n_seen == 0 and n:  # the very first row: nothing learnt yet
            lo[0], hi[0] = -np.inf, np.inf
        return e.aggregate(P), lo, hi

    def _pass(self, Xa, ya, wa, z, learn, flagged=None):
        """The trees' predictions ``P`` and ``mean -+ z * sd`` for the rows, in order (``kappa``
        does not learn the rows ``flagged`` by the label guard: their label is NaN to it)."""
        e = self.forest_.engine_
        n, A = Xa.shape[0], z.shape[0]
        P, V, N = self._trees(Xa, ya, e.bagging_weights(wa) if learn else None, learn, wa)
        mean, lo, hi = np.empty(n), np.empty((n, A)), np.empty((n, A))
        y_scale = ya if flagged is None else np.where(flagged != 0, np.nan, ya)
        _CORE.gaussian_pass(
            P, V, N, y_scale, learn, float(self.min_leaf_weight), _VARIANCES[self.variance],
            1.0 - 1.0 / int(self.scale_window), z, self.scale_, mean, lo, hi,
        )  # fmt: skip
        return P, lo, hi

    # --- one example, one compiled call ----------------------------------------------------------
    _scratch_keys = (*IntervalRegressor._scratch_keys, "_gone")

    def _one_buffers(self, A: int):
        """Scratch of the per-example kernels: ``(P, V, N)`` per tree, mean, y, and ``(1, A)``
        interval rows; plus a cache of ``z`` per set of levels."""
        s = self.__dict__.get("_gone")
        T = self.forest_.n_trees
        if s is None or s[5].shape[1] < A:
            s = self._gone = (
                np.zeros((T, 1)), np.zeros((T, 1)), np.zeros((T, 1)), np.zeros(1), np.zeros(1),
                np.zeros((1, max(A, 4))), np.zeros((1, max(A, 4))), {}, np.zeros((1, 0)),
            )  # fmt: skip
        return s

    def learn_one(self, x, y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values): one compiled call."""
        yf = check_target(y)
        wf = weight_of(w)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(GaussianInterval.learn_one, x, yf, wf)
        self._learn_row(f.encode_learn_row(x), yf, wf)

    def _learn_row(self, row, yf: float, wf: float) -> None:
        """The per-example learning of ``row``, the engine's row buffer (see the base).  A row
        the label guard flags (rare) takes the chunk pass, which keeps it out of ``kappa``."""
        yl = guard_label(self.label_guard_, yf, wf)
        if yl != yf:
            Xa = np.array(row, dtype=np.float64).reshape(1, -1)
            self._guarded_chunk(Xa, np.array([yl]), np.zeros(1), _FLAGGED_ONE, _NO_LEVELS, True)
            self._n_seen += 1
            return
        e = self.forest_.engine_
        P, V, N, mean, yb, _, _, _, none = self._one_buffers(0)
        e.learn_one(
            row, yf, wf, _CORE.gaussian_learn_one,
            (self.leaf_spread == "residual", P, V, N, float(self.min_leaf_weight),
             _VARIANCES[self.variance], 1.0 - 1.0 / int(self.scale_window), _NO_LEVELS,
             self.scale_, mean, none, none, yb),
            memo=True,
        )  # fmt: skip
        self._n_seen += 1

    def _one_kernel(self, row, alphas, lo, hi) -> None:
        A = alphas.shape[0]
        e = self.forest_.engine_
        P, V, N, mean, _, lo2, hi2, zs, _ = self._one_buffers(A)
        key = alphas.tobytes()
        z = zs.get(key)
        if z is None:
            if len(zs) > 64:
                zs.clear()
            z = zs[key] = np.ascontiguousarray(_z(1 - alphas / 2))
        args = (e.arena, row, self.leaf_spread == "residual", P, V, N,
                float(self.min_leaf_weight), _VARIANCES[self.variance], z, self.scale_, mean,
                lo2, hi2)  # fmt: skip
        _CORE.gaussian_predict_one(*args)
        lo[:A] = lo2[0, :A]
        hi[:A] = hi2[0, :A]

    def predict_quantiles_one(self, x, q):
        """Gaussian quantiles ``q`` (a number or a list) at one example: a float or a list (NaN
        before any data; -inf/inf where the variance is not known yet)."""
        qa, scalar = check_quantiles(q, closed=False)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(GaussianInterval.predict_quantiles_one, x, q, keep=False)
        out = np.full(qa.shape[0], np.nan)
        if f.is_fitted:
            e = f.engine_
            row = e.encode_one(x, False)
            P, V, N, mean, _, lo2, hi2, _, _ = self._one_buffers(qa.shape[0])
            z = np.ascontiguousarray(-_z(qa))
            args = (e.arena, row, self.leaf_spread == "residual", P, V, N,
                    float(self.min_leaf_weight), _VARIANCES[self.variance], z, self.scale_, mean,
                    lo2, hi2)  # fmt: skip
            _CORE.gaussian_predict_one(*args)
            out = lo2[0, : qa.shape[0]].copy()
            out[np.isinf(out) & (qa > 0.5)] = np.inf
        else:
            f.feature_space().encode_dict(x, learn=False)  # validates
        return float(out[0]) if scalar else [float(v) for v in out]

    def predict_quantiles(self, X, q) -> np.ndarray:
        """Gaussian quantiles ``mean + z_q * sd`` for the rows of ``X``: ``(n,)`` for a number
        ``q``, ``(n, len(q))`` for a list (NaN before any data; -inf/inf where the variance is
        not known yet)."""
        qa, scalar = check_quantiles(q, closed=False)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(GaussianInterval.predict_quantiles, X, q, keep=False)
        Xa = self._encode(X)
        n = Xa.shape[0]
        out = np.full((n, qa.shape[0]), np.nan)
        if f.is_fitted and n:
            _, out, _ = self._pass(Xa, np.zeros(n), np.ones(n), -_z(qa), learn=False)
            out[np.isinf(out) & (qa > 0.5)] = np.inf  # no variance yet: (-inf, inf)
        return out[:, 0] if scalar else out
