"""Leaf models of the online regression tree: mean, linear (RMSProp) and adaptive.

- ``mean``: the weighted mean of the targets that reached the leaf.
- ``linear``: a linear model on inputs standardised per leaf as in FIMT,
  ``x' = (x - mean_x) / (3 sd_x)``, trained by RMSProp (Seah's thesis eqs. 4.5-4.6, with
  ``eta = lr``, ``gamma = rms_decay``, ``mu = rms_eps``).  It models the *standardised residual*
  of the leaf mean: ``y_hat = mean_y + sd_y * (b + sum_j w_j x'_j)``.  Anchoring on the leaf mean
  makes the model start from the mean model and keeps the RMSProp step size (about ``lr`` per
  update) meaningful whatever the scale of y; the thesis' raw-scale intercept would need
  ``mean_y / lr`` updates to reach the mean.  Missing values and nominal features contribute 0.
  A sample weight ``w`` multiplies the step.  (Mean leaves keep no feature statistics.)
  The parameters live in units of the leaf's spread ``sd_y``, which moves as examples arrive:
  each time it does, the coefficients are rescaled by ``sd_old / sd_new`` so that the learnt
  term ``sd_y * (b + sum_j w_j x'_j)`` changes by the gradient step only (without it a young
  leaf whose spread grew from its first few examples' to the leaf's own multiplied its
  inherited slopes by that growth: errors of twice the target's range with sample weight 3).
- ``adaptive``: whichever of the two has the smaller faded absolute error at the leaf
  (``err <- fading * err + w * |error|``, errors measured before the leaf learns the example).

On a split the children inherit the parent's linear model, its RMSProp state, its normaliser and
its faded errors; the coefficients are rescaled so that each child's initial linear function is
exactly the parent's (see :func:`inherit_linear`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..stats import welford_update
from ._state import LEAF_ADAPTIVE, LEAF_MEAN, S_HI, S_LO, S_M2, S_W


@njit(cache=True, inline="always")
def target_mean_sd(st, leaf):
    w = st.lf_stat[leaf, S_W]
    if w <= 0.0:
        return 0.0, 0.0
    mean = st.lf_stat[leaf, S_HI] + st.lf_stat[leaf, S_LO]
    m2 = st.lf_stat[leaf, S_M2]
    return mean, np.sqrt(m2 / w) if m2 > 0.0 else 0.0


@njit(cache=True, inline="always")
def standardised(st, leaf, j, x):
    """FIMT standardisation of feature ``j`` at ``leaf``; 0 for missing or unknown spread."""
    if np.isnan(x) or st.ft_nominal[j]:
        return 0.0
    w = st.lf_x[leaf, j, S_W]
    m2 = st.lf_x[leaf, j, S_M2]
    if w <= 0.0 or m2 <= 0.0:
        return 0.0
    return (x - (st.lf_x[leaf, j, S_HI] + st.lf_x[leaf, j, S_LO])) / (3.0 * np.sqrt(m2 / w))


@njit(cache=True, inline="always")
def linear_raw(st, leaf, x, nfeat):
    """``b + sum_j w_j x'_j`` (the standardised residual) at ``leaf`` for row ``x``."""
    c = st.lf_coef
    z = c[leaf, 0]
    for j in range(nfeat):
        if c[leaf, j + 1] != 0.0:
            z += c[leaf, j + 1] * standardised(st, leaf, j, x[j])
    return z


@njit(cache=True, inline="always")
def predict_leaf(st, prm, leaf, x, nfeat):
    mean, sd = target_mean_sd(st, leaf)
    lm = prm.leaf_model
    if lm == LEAF_MEAN or sd == 0.0:
        return mean
    if lm == LEAF_ADAPTIVE and st.lf_err[leaf, 1] >= st.lf_err[leaf, 0]:
        return mean
    return mean + sd * linear_raw(st, leaf, x, nfeat)


@njit(cache=True, inline="always")
def _spread_after(st, leaf, y, w):
    """The leaf's target spread once ``(y, w)`` has entered its statistic."""
    s = st.lf_stat
    w1, _, _, m2 = welford_update(s[leaf, S_W], s[leaf, S_HI], s[leaf, S_LO], s[leaf, S_M2], y, w)
    return np.sqrt(m2 / w1) if m2 > 0.0 and w1 > 0.0 else 0.0


@njit(cache=True, inline="always")
def learn_leaf_model(st, prm, leaf, x, y, w, nfeat):
    """Update the leaf's model(s) with ``(x, y, w)``; the target statistic is updated elsewhere."""
    lm = prm.leaf_model
    if lm != LEAF_MEAN:
        mean, sd = target_mean_sd(st, leaf)
        if sd > 0.0:
            # standardise each feature once (kept in the scratch column ft_lin[:, 0])
            xs_ = st.ft_lin
            c = st.lf_coef
            z = c[leaf, 0]
            for j in range(nfeat):
                xs_[j, 0] = standardised(st, leaf, j, x[j])
                if c[leaf, j + 1] != 0.0:
                    z += c[leaf, j + 1] * xs_[j, 0]
            if lm == LEAF_ADAPTIVE:
                f = prm.fading
                st.lf_err[leaf, 0] = f * st.lf_err[leaf, 0] + w * abs(y - mean)
                st.lf_err[leaf, 1] = f * st.lf_err[leaf, 1] + w * abs(y - (mean + sd * z))
            e = z - (y - mean) / sd  # gradient of 0.5 * e**2 w.r.t. the raw output
            if prm.coef_decay != 1.0:  # ABORF (thesis Alg. 6.2): previous steps fade
                for j in range(nfeat + 1):
                    c[leaf, j] *= prm.coef_decay
            g = st.lf_rms
            dec = prm.rms_decay
            g[leaf, 0] = dec * g[leaf, 0] + (1.0 - dec) * e * e
            c[leaf, 0] -= prm.lr * w * e / np.sqrt(g[leaf, 0] + prm.rms_eps)
            for j in range(nfeat):
                xs = xs_[j, 0]
                if xs != 0.0:
                    gj = e * xs
                    g[leaf, j + 1] = dec * g[leaf, j + 1] + (1.0 - dec) * gj * gj
                    c[leaf, j + 1] -= prm.lr * w * gj / np.sqrt(g[leaf, j + 1] + prm.rms_eps)
            # the example is about to enter the target statistic (by the caller): keep the
            # learnt function ``sd * (b + sum_j w_j x'_j)`` as it is when the spread moves
            sd_new = _spread_after(st, leaf, y, w)
            if sd_new > 0.0 and sd_new != sd:
                r = sd / sd_new
                for j in range(nfeat + 1):
                    c[leaf, j] *= r
    else:
        return
    # feature statistics: the normaliser of the linear model
    for j in range(nfeat):
        xj = x[j]
        if not np.isnan(xj) and not st.ft_nominal[j]:
            s = st.lf_x
            s[leaf, j, 0], s[leaf, j, 1], s[leaf, j, 2], s[leaf, j, 3] = welford_update(
                s[leaf, j, 0], s[leaf, j, 1], s[leaf, j, 2], s[leaf, j, 3], xj, w
            )


MAX_INHERIT_RATIO = 5.0  # a child with less than 1/5 of its parent's spread starts afresh


@njit(cache=True)
def inherit_linear(st, parent, child, p_mean, p_sd):
    """Copy the parent's model state into ``child`` (whose target statistic is already set).

    With the child's mean ``m_c`` and spread ``s_c``, ``b_c = (b_p s_p + m_p - m_c) / s_c`` and
    ``w_c = w_p s_p / s_c`` reproduce the parent's linear function exactly at split time.  A
    child whose spread is below ``1 / MAX_INHERIT_RATIO`` of the parent's (e.g. a side of a
    few heavily weighted examples) starts with a zero model instead (added when the model was
    not yet rescaled as the spread moves, see :func:`learn_leaf_model`: the rescaled
    coefficients then multiplied the parent's slopes by ``s_c_later / s_c`` as the child's
    spread recovered, errors of 10x the target's range with Poisson(3) weights; kept as a
    guard against spreads estimated from a handful of examples).
    """
    if child != parent:  # element loops: a slice-to-slice copy would allocate a temporary
        for j in range(st.lf_coef.shape[1]):
            st.lf_coef[child, j] = st.lf_coef[parent, j]
            st.lf_rms[child, j] = st.lf_rms[parent, j]
        for j in range(st.lf_x.shape[1]):
            for c in range(4):
                st.lf_x[child, j, c] = st.lf_x[parent, j, c]
        st.lf_err[child, 0] = st.lf_err[parent, 0]
        st.lf_err[child, 1] = st.lf_err[parent, 1]
    c_mean, c_sd = target_mean_sd(st, child)
    if p_sd > 0.0 and c_sd * MAX_INHERIT_RATIO > p_sd:
        r = p_sd / c_sd
        st.lf_coef[child, 0] = (st.lf_coef[child, 0] * p_sd + p_mean - c_mean) / c_sd
        for j in range(1, st.lf_coef.shape[1]):
            st.lf_coef[child, j] *= r
    else:
        st.lf_coef[child, :] = 0.0


@njit(cache=True, inline="always")
def fold_leaf_model(st, prm, leaf, nfeat):
    """Fold the leaf's model into ``y = a + sum_j ft_lin[j, 0] * (x_j - ft_lin[j, 1])`` (terms
    with a missing ``x_j`` or a zero coefficient skipped): the same function as
    :func:`predict_leaf`, cheap to evaluate on many rows of one leaf.  Returns ``(a, linear)``;
    with ``linear`` False the prediction is ``a`` for every row."""
    mean, sd = target_mean_sd(st, leaf)
    lm = prm.leaf_model
    if (
        lm == LEAF_MEAN
        or sd == 0.0
        or (lm == LEAF_ADAPTIVE and st.lf_err[leaf, 1] >= st.lf_err[leaf, 0])
    ):
        return mean, False
    c = st.lf_coef
    fl = st.ft_lin
    for j in range(nfeat):
        fl[j, 0] = 0.0
        w = st.lf_x[leaf, j, S_W]
        m2 = st.lf_x[leaf, j, S_M2]
        if c[leaf, j + 1] != 0.0 and not st.ft_nominal[j] and w > 0.0 and m2 > 0.0:
            fl[j, 0] = sd * c[leaf, j + 1] / (3.0 * np.sqrt(m2 / w))
            fl[j, 1] = st.lf_x[leaf, j, S_HI] + st.lf_x[leaf, j, S_LO]
    return mean + sd * c[leaf, 0], True


@njit(cache=True, inline="always")
def folded_predict(st, a, x, nfeat):
    fl = st.ft_lin
    z = a
    for j in range(nfeat):
        b = fl[j, 0]
        if b != 0.0:
            xj = x[j]
            if not np.isnan(xj):
                z += b * (xj - fl[j, 1])
    return z
