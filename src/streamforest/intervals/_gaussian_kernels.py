"""Compiled tree pass of the Gaussian baseline (GaussianInterval): each tree's prediction for a
row and the spread of the targets in the leaf the row reaches, both read before the tree learns
the row (so the chunked pass gives exactly the row-by-row, prequential result)."""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..engine.kernels import FRESH, learn_one
from ..tree_kinds.arena import tree_at
from ..tree_kinds.kernels import has_room, needs_step
from ..tree_kinds.leaf_models import predict_leaf
from ..tree_kinds.regression import learn_at
from ..tree_kinds.state import I_NFEAT, LEAF_ADAPTIVE, S_M2, S_W
from ..tree_kinds.structure import route


@kernel(inline="always")
def _leaf_variance(st, prm, leaf, residual):
    """Variance of the targets that reached ``leaf`` (their weighted M2 / weight); with
    ``residual``, an adaptive leaf that predicts with its linear model scales it by the squared
    ratio of the linear model's faded absolute error to the mean model's (both faded alike, so
    the ratio is that of their mean absolute errors: the linear model's residual spread)."""
    w = st.lf_stat[leaf, S_W]
    if w <= 0.0:
        return 0.0
    v = st.lf_stat[leaf, S_M2] / w
    if residual and prm.leaf_model == LEAF_ADAPTIVE:
        e_mean = st.lf_err[leaf, 0]
        e_lin = st.lf_err[leaf, 1]
        if 0.0 < e_lin < e_mean:  # the leaf predicts with its linear model
            r = e_lin / e_mean
            v *= r * r
    return v


@entry(nogil=True, _nrt=False)
def gaussian_tree_pass(A, t, X, y, w, start, learn, residual, P, V, N):
    """Tree ``t``: ``P[i]`` its prediction for row i, ``V[i]`` the variance of the targets in the
    leaf row i reaches (see :func:`_leaf_variance`), ``N[i]`` that leaf's weight of targets, all
    taken before learning row i (with weight ``w[i]``, when ``learn``).  Stops before a row when
    the tree lacks room, and after a row that made its drift detector fire."""
    st, prm = tree_at(A, t)
    nfeat = st.ints[I_NFEAT]
    for i in range(start, X.shape[0]):
        if learn and needs_step(prm, w[i]) and not has_room(st, prm):
            return i
        x = X[i]
        node = route(st, x)
        leaf = st.nd_leaf[node]
        P[i] = predict_leaf(st, prm, leaf, x, nfeat)
        V[i] = _leaf_variance(st, prm, leaf, residual)
        N[i] = st.lf_stat[leaf, S_W]
        if learn and learn_at(st, prm, node, x, y[i], w[i], P[i]):
            return i + 1
    return X.shape[0]


TREES, MIXTURE, CALIBRATED = 0, 1, 2


@entry(nogil=True)
def gaussian_pass(P, V, N, y, learn, min_weight, mode, fading, z, scale, mean, lo, hi):
    """Rows in order.  Per row i, from the trees' predictions ``P[:, i]``, leaf variances
    ``V[:, i]`` and leaf weights ``N[:, i]``: ``mean[i]`` the mean of the predictions, ``b`` their
    variance across trees, ``v`` the mean leaf variance of the trees whose leaf holds at least
    ``min_weight`` of targets, and the variance

    - ``TREES``: ``b``;
    - ``MIXTURE``: ``v + b``, the variance of the mixture of the trees' Gaussians (law of total
      variance);
    - ``CALIBRATED``: ``kappa * (v + b)`` with ``kappa = scale[0] / scale[1]`` (1 while
      ``scale[1]`` is 0), the faded mean of ``(y - mean)^2 / (v + b)`` over the rows learnt
      before.  When ``learn``, row i then adds its ratio: ``scale <- fading * scale + (ratio,
      1)``.

    The interval at level a is ``mean[i] +- z[a] * sd``; ``(-inf, inf)`` when the variance needs
    a leaf variance and no tree qualifies."""
    T, n = P.shape
    A = z.shape[0]
    for i in range(n):
        m = 0.0
        for t in range(T):
            m += P[t, i]
        m /= T
        b = 0.0
        for t in range(T):
            d = P[t, i] - m
            b += d * d
        b /= T
        mean[i] = m
        var = b
        if mode != TREES:
            k = 0
            s = 0.0
            for t in range(T):
                if N[t, i] >= min_weight:
                    s += V[t, i]
                    k += 1
            var = s / k + b if k > 0 else np.nan
        shape = var
        if mode == CALIBRATED and scale[1] > 0.0:
            var = var * scale[0] / scale[1]
        if np.isnan(var):
            for a in range(A):
                lo[i, a] = -np.inf
                hi[i, a] = np.inf
        else:
            sd = np.sqrt(var)
            for a in range(A):
                lo[i, a] = m - z[a] * sd
                hi[i, a] = m + z[a] * sd
        if learn and mode == CALIBRATED and shape > 0.0:  # NaN compares False
            r = y[i] - m
            scale[0] = fading * scale[0] + r * r / shape
            scale[1] = fading * scale[1] + 1.0


# ------------------------------------------------------------------------------------------------
# one example, one compiled call
@entry(nogil=True, _nrt=False)
def gaussian_trees_one(A, x, residual, P, V, N):
    """For row ``x``, every tree's prediction, leaf variance and leaf weight into column 0 of
    ``P``, ``V``, ``N`` (``(n_trees, 1)``), as :func:`gaussian_tree_pass` takes them."""
    for t in range(A.lay.shape[0]):
        st, prm = tree_at(A, t)
        node = route(st, x)
        leaf = st.nd_leaf[node]
        P[t, 0] = predict_leaf(st, prm, leaf, x, st.ints[I_NFEAT])
        V[t, 0] = _leaf_variance(st, prm, leaf, residual)
        N[t, 0] = st.lf_stat[leaf, S_W]


@entry(nogil=True)
def gaussian_predict_one(A, x, residual, P, V, N, min_weight, mode, z, scale, mean, lo, hi):
    """The interval of row ``x`` at the levels of ``z`` (into ``lo``, ``hi``: ``(1, levels)``);
    returns the forest's mean prediction."""
    gaussian_trees_one(A, x, residual, P, V, N)
    gaussian_pass(P, V, N, mean, np.bool_(False), min_weight, mode, 1.0, z, scale, mean, lo, hi)
    return mean[0]


@entry(nogil=True)
def gaussian_learn_one(A, frng, lam, x, y, w, wt, Pt, drifted, t0, M, residual, P, V, N,
                       min_weight, mode, fading, z0, scale, mean, lo, hi, yb):  # fmt: skip
    """The engine's per-example step for GaussianInterval (see ``Engine.learn_one``): the
    trees' predictions and leaf variances are read before they learn the row, then the trees
    learn it, then the calibration scale follows (as :func:`gaussian_pass` when learning)."""
    if t0 == FRESH:
        gaussian_trees_one(A, x, residual, P, V, N)
    status = learn_one(A, frng, lam, x, y, w, wt, Pt, drifted, t0, M)
    if status >= 0:
        return status, Pt
    yb[0] = y
    gaussian_pass(P, V, N, yb, np.bool_(True), min_weight, mode, fading, z0, scale, mean, lo, hi)
    return status, Pt
