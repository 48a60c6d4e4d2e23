"""Leaf models of the online regression tree: mean, linear (RMSProp) and adaptive.

- ``mean``: the weighted mean of the targets that reached the leaf.
- ``linear``: a linear model on inputs standardised per leaf as in FIMT,
  ``x' = (x - mean_x) / (3 sd_x)``, trained by RMSProp (Seah's thesis eqs. 4.5-4.6, with
  ``eta = lr``, ``gamma = rms_decay``, ``mu = rms_eps``).  It models the *standardised residual*
  of the leaf mean: ``y_hat = mean_y + sd_y * (b + sum_j w_j x'_j)``.  Anchoring on the leaf mean
  makes the model start from the mean model and keeps the RMSProp step size (about ``lr`` per
  update) meaningful whatever the scale of y; the thesis' raw-scale intercept would need
  ``mean_y / lr`` updates to reach the mean.  Missing values and nominal features contribute 0.
  A sample weight ``w`` multiplies the step.  (Mean leaves keep no feature statistics.)  A
  value beyond ``HUGE_X`` (1e100) is missing to the leaf models, as NaN is.
  The parameters live in units of the leaf's spread ``sd_y``, which moves as examples arrive:
  each time it does, the coefficients are rescaled by ``sd_old / sd_new`` so that the learnt
  term ``sd_y * (b + sum_j w_j x'_j)`` changes by the gradient step only (without it a young
  leaf whose spread grew from its first few examples' to the leaf's own multiplied its
  inherited slopes by that growth: errors of twice the target's range with sample weight 3).
- ``adaptive``: whichever of the two has the smaller faded absolute error at the leaf
  (``err <- fading * err + w * |error|``, errors measured before the leaf learns the example).
- ``bayesian`` (``LEAF_BAYES``, ABORF's pre-grown trees only; Seah's thesis §6.2.1-6.2.2):
  conjugate Bayesian linear regression with a normal-inverse-gamma prior, see below.

**Bayesian leaves.**  The model of a leaf is ``y - m_y = (1, z) . beta + eps``, ``eps ~ N(0,
sigma^2)``, on the inputs standardised per leaf, ``z_j = (x_j - mean_j) / sd_j`` (eq. 6.8; the
leaf's running weighted mean and sd of each numeric feature, in ``lf_x``; a feature without
spread at the leaf, a nominal feature or a missing value has ``z_j = 0``), with an intercept, the
prior ``beta | sigma^2 ~ N(0, sigma^2 / c I)`` (``Lambda_0 = c I``, ``beta_0 = 0``), ``sigma^2 ~
IG(a_0, b_0)`` (eqs. 6.9-6.17).  ``m_y`` is the leaf's running weighted target mean (``lf_stat``,
0 for an empty leaf): the thesis' model has ``m_y = 0``, so its prior shrinks the intercept
towards 0 and an offset ``o`` of the targets moved predictions by about ``o c / n`` (an error of
5,000 at ``o = 1e6``); centred on the leaf's mean, the prior shrinks towards it, and an offset
changes no prediction beyond rounding.  Forgetting (eqs. 6.32-6.33): each example's likelihood
is raised to ``gamma^age`` (``age`` = examples the leaf learnt since, ``gamma`` = ``nig_decay``)
and to its weight ``w``, so that ``Lambda = c I + sum_i w_i gamma^age_i z_i z_i^T`` and ``Lambda
beta = sum_i w_i gamma^age_i z_i (y_i - m_y)`` (eqs. 6.41-6.42); the inverse-gamma parameters
are the same weighted sums, ``a = a_0 + 1/2 sum_i w_i gamma^age_i`` and ``b = b_0 + 1/2 (sum_i
w_i gamma^age_i (y_i - m_y)^2 - beta^T Lambda beta)`` (the thesis instead inflates the variance
of ``sigma^2`` about its mean, ``a' = 2 + gamma (a - 2)``, ``b' = b (a' - 1) / (a - 1)``, eqs.
6.34-6.35, which is defined for ``a > 2`` only while ``a`` starts at ``a_0 = 0.001``; both
settle at about the same ``a``, 12.5 and 14 with ``gamma = 0.96``).  The leaf keeps the faded
weighted scatter of ``v = (y - m_y, 1, x - m_x)`` about its current means (``lf_bayes``, a
rank-one update per example: ``M <- gamma M + w v v^T``, the stored rows moved with the means as
they change, see :func:`bayes_learn`; in raw units the squares of targets near 1e15 rounded by
more than their spread) and solves the posterior (``beta`` into ``lf_coef``, ``(a, b)`` into
``lf_err``) after each update in its current standardised coordinates (an ``O(D^3)`` Cholesky
factorisation, as the thesis' implementation; a rank-one update of the inverse does not apply
because the prior ``c I`` is not faded, §6.2.3, and the coordinates move), so the posterior is
exactly the batch posterior of the weighted examples standardised by the leaf's current means
and sds.  A missing value
enters the scatter at the leaf's mean of that feature; the rows a leaf learnt before the first
value of a feature (missing, or before the feature emerged) are moved to that first value when it
arrives (not left at 0, which depends on the feature's units).  The leaf predicts the posterior mean
``m_y + (1, z) . beta`` (an empty leaf: 0).  With the tree's evidence on (``ev_fade > 0``) a
leaf that is not empty also computes, before learning an example, the log density of its
posterior predictive, a Student t with ``2 a`` degrees of freedom, location ``m_y + (1, z) .
beta`` and squared scale ``b / a (1 + (1, z)^T Lambda^-1 (1, z))``, and leaves it in
``lf_evidence[leaf, LEV_TERM]`` for :func:`streamforest.tree_kinds.pregrown.evidence_update`
(an empty leaf predicts nothing: the row adds no term).

On a split the children inherit the parent's linear model, its RMSProp state, its normaliser and
its faded errors; the coefficients are rescaled so that each child's initial linear function is
exactly the parent's (see :func:`inherit_linear`).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import kernel
from ..stats import add_to_mean, welford_update
from .kinds import kind_hook
from .state import LEAF_ADAPTIVE, LEAF_BAYES, LEAF_MEAN, LEV_TERM, S_HI, S_LO, S_M2, S_W

# A feature value beyond this magnitude is missing to the leaf models (linear and Bayesian), as
# NaN is: its square would overflow the feature statistics and the Bayesian scatter (one row
# with a feature at 1e300 left inf - inf = NaN coefficients, then NaN predictions for good).
# Routing still uses the value.  No ordinary value comes near it (results unchanged).
HUGE_X = 1e100
# While learning, a standardised input is clipped to this magnitude, so that the squared
# gradient of RMSProp stays finite (a value just below HUGE_X at a leaf of tiny spread)
MAX_LEARN_Z = 1e50


# ------------------------------------------------------------------------------------------------
# the Bayesian leaves' steps, compiled only for kinds with Bayesian leaves (``TreeKind.bayes``);
# other kinds never take them (their leaf_model is not LEAF_BAYES)
@kernel
def _no_bayes_value(st, leaf, x, nfeat):
    return np.nan


@kernel
def _no_bayes_fold(st, leaf, nfeat):
    return np.nan


@kernel
def _no_bayes_learning(st, prm, leaf, x, y, w, nfeat):
    return None


@kind_hook(lambda kind: bayes_predict if kind.bayes else _no_bayes_value)
def bayes_predict_step(st, leaf, x, nfeat):
    """:func:`bayes_predict` (kinds with Bayesian leaves)."""


@kind_hook(lambda kind: bayes_fold if kind.bayes else _no_bayes_fold)
def bayes_fold_step(st, leaf, nfeat):
    """:func:`bayes_fold` (kinds with Bayesian leaves)."""


@kind_hook(lambda kind: bayes_learn if kind.bayes else _no_bayes_learning)
def bayes_learn_step(st, prm, leaf, x, y, w, nfeat):
    """:func:`bayes_learn` (kinds with Bayesian leaves)."""


@kernel(inline="always")
def target_mean_sd(st, leaf):
    w = st.lf_stat[leaf, S_W]
    if w <= 0.0:
        return 0.0, 0.0
    mean = st.lf_stat[leaf, S_HI] + st.lf_stat[leaf, S_LO]
    m2 = st.lf_stat[leaf, S_M2]
    return mean, np.sqrt(m2 / w) if m2 > 0.0 else 0.0


@kernel(inline="always")
def standardised(st, leaf, j, x):
    """FIMT standardisation of feature ``j`` at ``leaf``; 0 for missing (NaN or beyond
    ``HUGE_X``) or unknown spread."""
    if not abs(x) <= HUGE_X or st.ft_nominal[j]:
        return 0.0
    w = st.lf_x[leaf, j, S_W]
    m2 = st.lf_x[leaf, j, S_M2]
    if w <= 0.0 or m2 <= 0.0:
        return 0.0
    return (x - (st.lf_x[leaf, j, S_HI] + st.lf_x[leaf, j, S_LO])) / (3.0 * np.sqrt(m2 / w))


@kernel(inline="always")
def linear_raw(st, leaf, x, nfeat):
    """``b + sum_j w_j x'_j`` (the standardised residual) at ``leaf`` for row ``x``."""
    c = st.lf_coef
    z = c[leaf, 0]
    for j in range(nfeat):
        if c[leaf, j + 1] != 0.0:
            z += c[leaf, j + 1] * standardised(st, leaf, j, x[j])
    return z


@kernel
def predict_leaf(st, prm, leaf, x, nfeat):
    lm = prm.leaf_model
    if lm == LEAF_BAYES:
        return bayes_predict_step(st, leaf, x, nfeat)
    mean, sd = target_mean_sd(st, leaf)
    if lm == LEAF_MEAN or sd == 0.0:
        return mean
    if lm == LEAF_ADAPTIVE and st.lf_err[leaf, 1] >= st.lf_err[leaf, 0]:
        return mean
    return mean + sd * linear_raw(st, leaf, x, nfeat)


@kernel(inline="always")
def _spread_after(st, leaf, y, w):
    """The leaf's target spread once ``(y, w)`` has entered its statistic."""
    s = st.lf_stat
    w1, _, _, m2 = welford_update(s[leaf, S_W], s[leaf, S_HI], s[leaf, S_LO], s[leaf, S_M2], y, w)
    return np.sqrt(m2 / w1) if m2 > 0.0 and w1 > 0.0 else 0.0


@kernel(inline="always")
def learn_leaf_model(st, prm, leaf, x, y, w, nfeat):
    """Update the leaf's model(s) with ``(x, y, w)``; the target statistic is updated elsewhere."""
    lm = prm.leaf_model
    if lm == LEAF_BAYES:
        bayes_learn_step(st, prm, leaf, x, y, w, nfeat)
        return
    if lm != LEAF_MEAN:
        mean, sd = target_mean_sd(st, leaf)
        if sd > 0.0:
            # standardise each feature once (kept in the scratch column ft_linear[:, 0])
            xs_ = st.ft_linear
            c = st.lf_coef
            z = c[leaf, 0]
            for j in range(nfeat):
                xs_[j, 0] = min(max(standardised(st, leaf, j, x[j]), -MAX_LEARN_Z), MAX_LEARN_Z)
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
            g = st.lf_rmsprop
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
    _feature_stats(st, leaf, x, w, nfeat)


@kernel(inline="always")
def _feature_stats(st, leaf, x, w, nfeat):
    """Add ``(x_j, w)`` to each numeric feature's statistic at ``leaf`` (missing values skipped):
    :func:`~streamforest.stats.welford_update` written out so that the step ``w / (w_j + w)``
    is divided once for the features whose weights are equal (all of them, unless some values
    were missing): the same operations on the same operands, so the same bits."""
    s = st.lf_x
    w_prev = -1.0
    w_new = 0.0
    step = 0.0
    for j in range(nfeat):
        xj = x[j]
        if abs(xj) <= HUGE_X and not st.ft_nominal[j]:  # (not missing: NaN fails it)
            wj = s[leaf, j, 0]
            if wj != w_prev:
                w_prev = wj
                w_new = wj + w
                step = w / w_new
            hi = s[leaf, j, 1]
            lo = s[leaf, j, 2]
            d = (xj - hi) - lo
            hi, lo = add_to_mean(hi, lo, d * step)
            s[leaf, j, 0] = w_new
            s[leaf, j, 1] = hi
            s[leaf, j, 2] = lo
            s[leaf, j, 3] = s[leaf, j, 3] + w * d * ((xj - hi) - lo)


MAX_INHERIT_RATIO = 5.0  # a child with less than 1/5 of its parent's spread starts afresh


@kernel
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
            st.lf_rmsprop[child, j] = st.lf_rmsprop[parent, j]
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


@kernel(inline="always")
def fold_leaf_model(st, prm, leaf, nfeat):
    """Fold the leaf's model into ``y = a + sum_j ft_linear[j, 0] * (x_j - ft_linear[j, 1])`` (terms
    with a missing ``x_j`` or a zero coefficient skipped): the same function as
    :func:`predict_leaf`, cheap to evaluate on many rows of one leaf.  Returns ``(a, linear)``;
    with ``linear`` False the prediction is ``a`` for every row."""
    lm = prm.leaf_model
    if lm == LEAF_BAYES:
        return bayes_fold_step(st, leaf, nfeat), True
    mean, sd = target_mean_sd(st, leaf)
    if (
        lm == LEAF_MEAN
        or sd == 0.0
        or (lm == LEAF_ADAPTIVE and st.lf_err[leaf, 1] >= st.lf_err[leaf, 0])
    ):
        return mean, False
    c = st.lf_coef
    fl = st.ft_linear
    for j in range(nfeat):
        fl[j, 0] = 0.0
        w = st.lf_x[leaf, j, S_W]
        m2 = st.lf_x[leaf, j, S_M2]
        if c[leaf, j + 1] != 0.0 and not st.ft_nominal[j] and w > 0.0 and m2 > 0.0:
            fl[j, 0] = sd * c[leaf, j + 1] / (3.0 * np.sqrt(m2 / w))
            fl[j, 1] = st.lf_x[leaf, j, S_HI] + st.lf_x[leaf, j, S_LO]
    return mean + sd * c[leaf, 0], True


@kernel(inline="always")
def folded_predict(st, a, x, nfeat):
    fl = st.ft_linear
    z = a
    for j in range(nfeat):
        b = fl[j, 0]
        if b != 0.0:
            xj = x[j]
            if abs(xj) <= HUGE_X:  # (not missing: NaN fails it)
                z += b * (xj - fl[j, 1])
    return z


# ------------------------------------------------------------------------------------------------
# Bayesian leaves (LEAF_BAYES; see the module docstring)
NIG_SD_RTOL = 1e-7  # a feature's sd at a leaf below this times its mean's magnitude: no spread
# the weight of a feature's values at a leaf before their spread standardises it: the sd of two
# or three examples can be arbitrarily small (two Friedman rows 2e-6 apart made z = 2.6e5 for the
# next row and a tree predict 49,000); until then the leaf's model leaves the feature out
NIG_MIN_W = 5.0


@kernel(inline="always")
def _nig_coords(st, leaf, j):
    """``(mean, 1 / sd)`` of feature ``j`` at ``leaf``; ``1 / sd`` is 0 (``z_j = 0``) for a
    nominal feature, one without spread at the leaf (an ``sd`` below ``NIG_SD_RTOL`` times the
    mean's magnitude is rounding), or one whose values at the leaf weigh less than
    ``NIG_MIN_W``."""
    if st.ft_nominal[j]:
        return 0.0, 0.0
    w = st.lf_x[leaf, j, S_W]
    m2 = st.lf_x[leaf, j, S_M2]
    if w < NIG_MIN_W or m2 <= 0.0:
        return 0.0, 0.0
    mean = st.lf_x[leaf, j, S_HI] + st.lf_x[leaf, j, S_LO]
    sd = np.sqrt(m2 / w)
    if sd <= NIG_SD_RTOL * abs(mean):
        return 0.0, 0.0
    return mean, 1.0 / sd


@kernel(inline="always")
def _centre(st, leaf):
    """The leaf's running target mean ``m_y`` as its compensated pair ``(hi, lo)`` (``(0, 0)``
    for an empty leaf): the Bayesian leaf's target is ``y - m_y``."""
    if st.lf_stat[leaf, S_W] <= 0.0:
        return 0.0, 0.0
    return st.lf_stat[leaf, S_HI], st.lf_stat[leaf, S_LO]


@kernel
def bayes_predict(st, leaf, x, nfeat):
    """The posterior mean ``m_y + (1, z) . beta`` of ``x`` at ``leaf`` (``beta`` in ``lf_coef``,
    solved after the leaf's last example in the coordinates it still has)."""
    c = st.lf_coef
    z = c[leaf, 0]
    for j in range(nfeat):
        b = c[leaf, j + 1]
        if b != 0.0:  # 0 for a feature without spread (exactly, see nig_solve)
            xj = x[j]
            if abs(xj) <= HUGE_X:  # (not missing: NaN fails it)
                mu, isd = _nig_coords(st, leaf, j)
                z += b * ((xj - mu) * isd)
    hi, lo = _centre(st, leaf)
    return hi + (lo + z)


@kernel
def bayes_fold(st, leaf, nfeat):
    """:func:`fold_leaf_model` of a Bayesian leaf: ``m_y + beta_0 + sum_j (beta_j / sd_j) (x_j -
    mean_j)``."""
    c = st.lf_coef
    fl = st.ft_linear
    for j in range(nfeat):
        mu, isd = _nig_coords(st, leaf, j)
        fl[j, 0] = c[leaf, j + 1] * isd
        fl[j, 1] = mu
    hi, lo = _centre(st, leaf)
    return hi + (lo + c[leaf, 0])


@kernel(inline="always")
def _forward_solve(A, P, col):
    """``u = L^-1 A[:P, col]`` in place (``L`` the lower Cholesky factor in ``A[:P, :P]``);
    returns ``|u|^2``."""
    uu = 0.0
    for i in range(P):
        v = A[i, col]
        for k in range(i):
            v -= A[i, k] * A[k, col]
        v /= A[i, i]
        A[i, col] = v
        uu += v * v
    return uu


@kernel
def nig_solve(st, prm, leaf, nfeat):
    """The leaf's posterior in its current standardised coordinates, from its scatter
    ``lf_bayes[leaf]`` (about the leaf's means, see :func:`bayes_learn`): ``Lambda = c I + T S T``
    (``S`` the scatter of ``(1, x - mean)``, ``T = diag(1, 1 / sd)`` the standardisation)
    factorised in place in ``ft_bayes[:P, :P]`` (lower Cholesky factor, ``P = nfeat + 1``),
    ``beta`` in column ``ft_bayes.shape[1] - 3``; each feature's ``(1 / sd, mean)`` in
    ``ft_linear``.  Returns ``(a, b)``."""
    M = st.lf_bayes
    A = st.ft_bayes
    fl = st.ft_linear
    kr = A.shape[1] - 3
    P = nfeat + 1
    c = prm.nig_c
    n = M[leaf, 1, 1]
    for j in range(nfeat):
        mu, isd = _nig_coords(st, leaf, j)
        fl[j, 0] = isd
        fl[j, 1] = mu
    A[0, 0] = n + c
    A[0, kr] = M[leaf, 0, 1]
    for j in range(nfeat):
        i = j + 1
        isd = fl[j, 0]
        if isd == 0.0:  # z_j = 0: a row of the prior only
            for k in range(i):
                A[i, k] = 0.0
            A[i, i] = c
            A[i, kr] = 0.0
            continue
        A[i, 0] = M[leaf, 1, 2 + j] * isd
        A[i, kr] = M[leaf, 0, 2 + j] * isd
        for k in range(j + 1):
            A[i, k + 1] = M[leaf, 2 + j, 2 + k] * isd * fl[k, 0]
        A[i, i] += c
    # Cholesky factorisation in place (Lambda = L L^T, L in the lower triangle)
    for i in range(P):
        for k in range(i + 1):
            v = A[i, k]
            for m in range(k):
                v -= A[i, m] * A[k, m]
            if i == k:
                A[i, i] = np.sqrt(v) if v > 0.0 else np.sqrt(c)  # (c I bounds it below)
            else:
                A[i, k] = v / A[k, k]
    # beta = Lambda^-1 r: L u = r, then L^T beta = u; beta^T Lambda beta = |u|^2
    uu = _forward_solve(A, P, kr)
    for i in range(P - 1, -1, -1):
        v = A[i, kr]
        for k in range(i + 1, P):
            v -= A[k, i] * A[k, kr]
        A[i, kr] = v / A[i, i]
    a = prm.nig_a0 + 0.5 * n
    b = prm.nig_b0 + 0.5 * max(M[leaf, 0, 0] - uu, 0.0)
    return a, b


@kernel
def nig_log_predictive(st, prm, leaf, x, y, nfeat):
    """Log density at ``y`` of the leaf's posterior predictive for ``x`` (before it learns
    them): Student t, ``2 a`` degrees of freedom, location ``m_y + (1, z) . beta``, squared scale
    ``b / a (1 + (1, z)^T Lambda^-1 (1, z))``."""
    a, b = nig_solve(st, prm, leaf, nfeat)
    A = st.ft_bayes
    fl = st.ft_linear
    kr = A.shape[1] - 3
    kz = kr + 1
    P = nfeat + 1
    A[0, kz] = 1.0
    for j in range(nfeat):
        xj = x[j]
        isd = fl[j, 0]
        A[j + 1, kz] = (xj - fl[j, 1]) * isd if (isd != 0.0 and abs(xj) <= HUGE_X) else 0.0
    m = 0.0
    for i in range(P):
        m += A[i, kr] * A[i, kz]
    q = _forward_solve(A, P, kz)  # |L^-1 (1, z)|^2
    nu = 2.0 * a
    s2 = b / a * (1.0 + q)
    hi, lo = _centre(st, leaf)
    e = ((y - hi) - lo) - m
    return (
        math.lgamma(0.5 * (nu + 1.0))
        - math.lgamma(0.5 * nu)
        - 0.5 * np.log(nu * np.pi * s2)
        - 0.5 * (nu + 1.0) * np.log1p(e * e / (nu * s2))
    )


@kernel(inline="always")
def _nig_shift(M, leaf, k, r, n):
    """Move column ``k`` of every row in the scatter by ``r``: ``M <- E M E^T`` with ``E = I + r
    e_k e_1^T`` (the intercept is column 1)."""
    for i in range(n):
        M[leaf, k, i] += r * M[leaf, 1, i]
    for i in range(n):
        M[leaf, i, k] += r * M[leaf, i, 1]


@kernel
def bayes_learn(st, prm, leaf, x, y, w, nfeat):
    """Learn ``(x, y, w)`` at a Bayesian leaf: (the log predictive density first, with the
    evidence on and the leaf not empty), the feature statistics, the faded scatter about the
    leaf's new means, then the posterior's coefficients into ``lf_coef`` and ``(a, b)`` into
    ``lf_err``.

    The scatter holds ``v = (y - m_y, 1, x - m_x)``, ``m_y`` and ``m_x`` the leaf's running
    means (``lf_stat``, ``lf_x``) after its last example, so that an offset of ``y`` or of a
    feature cancels before any product is formed (raw units: at ``y ~ 1e15`` the squares'
    rounding was larger than the spread).  When a mean moves from ``m`` to ``m'`` the stored
    rows move with it (:func:`_nig_shift` by ``m - m'``); a feature's first value at the leaf
    moves nothing: the rows before sit at it."""
    ts = st.lf_stat
    if prm.ev_fade > 0.0:
        st.lf_evidence[leaf, LEV_TERM] = (
            nig_log_predictive(st, prm, leaf, x, y, nfeat) if ts[leaf, S_W] > 0.0 else 0.0
        )
    M = st.lf_bayes
    n_m = nfeat + 2
    # the target's mean after the row, as the caller's statistic will have it (same operands)
    _, hi1, lo1, _ = welford_update(ts[leaf, 0], ts[leaf, 1], ts[leaf, 2], ts[leaf, 3], y, w)
    if ts[leaf, S_W] > 0.0:  # (an empty leaf's scatter is 0: nothing to move)
        r = (ts[leaf, S_HI] - hi1) + (ts[leaf, S_LO] - lo1)
        if r != 0.0:
            _nig_shift(M, leaf, 0, r, n_m)
    s = st.lf_x
    for j in range(nfeat):
        xj = x[j]
        if abs(xj) <= HUGE_X and not st.ft_nominal[j]:  # (not missing: NaN fails it)
            w0, hi0, lo0 = s[leaf, j, 0], s[leaf, j, 1], s[leaf, j, 2]
            s[leaf, j, 0], s[leaf, j, 1], s[leaf, j, 2], s[leaf, j, 3] = welford_update(
                w0, hi0, lo0, s[leaf, j, 3], xj, w
            )
            if w0 > 0.0:  # (its first value here: the rows before sit at it)
                r = (hi0 - s[leaf, j, 1]) + (lo0 - s[leaf, j, 2])
                if r != 0.0:
                    _nig_shift(M, leaf, 2 + j, r, n_m)
    A = st.ft_bayes
    kv = A.shape[1] - 1
    A[0, kv] = (y - hi1) - lo1
    A[1, kv] = 1.0
    for j in range(nfeat):
        xj = x[j]
        v = 0.0  # nominal, or missing: at the leaf's mean
        if abs(xj) <= HUGE_X and not st.ft_nominal[j]:
            v = (xj - s[leaf, j, 1]) - s[leaf, j, 2]
        A[j + 2, kv] = v
    g = prm.nig_decay
    for i in range(n_m):
        wi = w * A[i, kv]
        for k in range(i + 1):
            v = g * M[leaf, i, k] + wi * A[k, kv]
            M[leaf, i, k] = v
            M[leaf, k, i] = v
    a, b = nig_solve(st, prm, leaf, nfeat)
    kr = A.shape[1] - 3
    for i in range(nfeat + 1):
        st.lf_coef[leaf, i] = A[i, kr]
    st.lf_err[leaf, 0] = a
    st.lf_err[leaf, 1] = b


def centre_raw_scatter(st) -> None:
    """Convert the Bayesian leaves of tree state ``st`` (numpy views, changed in place) saved
    before their scatter was kept about the leaf's means (files of format 4 and 5: a raw-unit
    scatter of ``(y, 1, x)``, a prior mean of 0 for ``y``): each scatter is moved to the leaf's
    current means (``E M E^T``, ``E = I - m e_1^T``) and each intercept lowered by the leaf's
    target mean, so that the leaf predicts as it did until it learns its next example (which
    solves its posterior with the prior about the mean)."""
    M = st.lf_bayes
    if M.shape[1] == 0:
        return
    n = M.shape[1]
    for leaf in range(M.shape[0]):
        w = st.lf_stat[leaf, S_W]
        if not (w > 0.0 and M[leaf, 1, 1] > 0.0):
            continue
        shift = np.zeros(n)
        shift[0] = st.lf_stat[leaf, S_HI] + st.lf_stat[leaf, S_LO]
        k = min(n - 2, st.lf_x.shape[1])
        known = (st.lf_x[leaf, :k, S_W] > 0.0) & (st.ft_nominal[:k] == 0)
        shift[2 : 2 + k] = np.where(known, st.lf_x[leaf, :k, S_HI] + st.lf_x[leaf, :k, S_LO], 0.0)
        E = np.eye(n)
        E[:, 1] -= shift
        M[leaf] = E @ M[leaf] @ E.T
        st.lf_coef[leaf, 0] -= shift[0]
