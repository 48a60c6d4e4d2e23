"""The two-stage extremely randomised split of ATSER (Seah's thesis, ch. 4, Algorithms 4.2-4.3).

A split rule of the compiled tree (``TreeParams.split_rule == SPLIT_EXTRA``), used instead of the
attribute observers of :mod:`streamforest.tree_kinds.observers`:

1. A new leaf buffers its first ``m_min`` examples (``TreeState.lf_buffer``: target, weight,
   features).  At the ``m_min``-th it draws **one random candidate per feature** it may split on
   (``lf_mask``: all features, or a random subset for ATSER-RForest): a numeric threshold uniform
   between the smallest and largest value buffered, or for a nominal feature a random *salt* that
   sends every category to a fixed random side (:func:`cat_goes_left`; a category first seen
   later, at the leaf or at the split node it becomes, also goes to a random side).  The
   buffered examples are replayed into the candidates' side statistics.
2. Every later example updates, per candidate, the target statistic of the side its value falls
   on (``lf_candidate``): O(1) per feature, no observer, no sorting.
3. Every ``grace_period`` (``n_min``) of weight the leaf compares the candidates by variance
   reduction ``VR = var(P) - w_L/w_P var(L) - w_R/w_P var(R)`` (``P = L + R``, the examples with
   the feature present) and splits on the best when ``VR(second) / VR(best) < 1 - eps``,
   ``eps = sqrt(ln(1/delta) / (2 n))`` (the ratio lies in [0, 1], so the range is 1).  When
   ``eps < tau`` the candidates within the bound of the best, ``VR >= (1 - eps) VR(best)``, tie
   and one of them is drawn at random (the thesis' tie rule).

Examples whose value of the chosen feature is missing follow the heavier side, as in the
observer rule.  Each side needs ``min_branch`` weight for a candidate to count.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..rng import mix64, next_below, next_float
from ..stats import chan_merge, welford_update
from .state import (
    I_NATTEMPTS,
    I_NFEAT,
    S_W,
    XB_W,
    XB_Y,
    XC_LHI,
    XC_LLO,
    XC_LM2,
    XC_LW,
    XC_RHI,
    XC_RLO,
    XC_RM2,
    XC_RW,
    XC_THR,
)

_SALT_RANGE = 1 << 52  # salts are integers stored exactly in a float64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@entry(inline="always")
def cat_goes_left(salt, code):
    """The fixed random side of category ``code`` (a float code, -1 for unseen) under a
    candidate's (or split node's) ``salt``: a hash of both, so no per-category storage."""
    z = np.uint64(np.int64(salt)) + np.uint64(np.int64(code) + 1) * _GOLDEN
    return (mix64(z) & np.uint64(1)) == np.uint64(0)


@kernel(inline="always")
def _goes_left(nominal, thr, v):
    if nominal:
        return cat_goes_left(thr, v)
    return v <= thr


@kernel(inline="always")
def _add_to_side(xc, leaf, j, left, y, w):
    if left:
        xc[leaf, j, XC_LW], xc[leaf, j, XC_LHI], xc[leaf, j, XC_LLO], xc[leaf, j, XC_LM2] = (
            welford_update(
                xc[leaf, j, XC_LW],
                xc[leaf, j, XC_LHI],
                xc[leaf, j, XC_LLO],
                xc[leaf, j, XC_LM2],
                y,
                w,
            )  # fmt: skip
        )
    else:
        xc[leaf, j, XC_RW], xc[leaf, j, XC_RHI], xc[leaf, j, XC_RLO], xc[leaf, j, XC_RM2] = (
            welford_update(
                xc[leaf, j, XC_RW],
                xc[leaf, j, XC_RHI],
                xc[leaf, j, XC_RLO],
                xc[leaf, j, XC_RM2],
                y,
                w,
            )  # fmt: skip
        )


@kernel
def _draw_candidates(st, leaf, nfeat):
    """Stage 1: one random candidate per allowed feature from the buffered examples, which are
    then replayed into the candidates' side statistics."""
    buf = st.lf_buffer
    xc = st.lf_candidate
    n = st.lf_nexamples[leaf]
    for j in range(nfeat):
        for c in range(xc.shape[2]):
            xc[leaf, j, c] = 0.0
        xc[leaf, j, XC_THR] = np.nan
        if st.lf_mask[leaf, j] == 0:
            continue
        nominal = st.ft_nominal[j] == 1
        lo = np.inf
        hi = -np.inf
        for i in range(n):
            v = buf[leaf, 2 + j, i]
            if not np.isnan(v):
                lo = min(lo, v)
                hi = max(hi, v)
        if nominal:
            if lo < np.inf:
                xc[leaf, j, XC_THR] = np.float64(next_below(st.rng, _SALT_RANGE))
        elif lo < hi:
            thr = lo + next_float(st.rng) * (hi - lo)
            xc[leaf, j, XC_THR] = thr if thr < hi else lo
        thr = xc[leaf, j, XC_THR]
        if np.isnan(thr) or xc.shape[2] <= XC_RM2:  # (a classifier's: no side statistics)
            continue
        for i in range(n):
            v = buf[leaf, 2 + j, i]
            if not np.isnan(v):
                _add_to_side(xc, leaf, j, _goes_left(nominal, thr, v), buf[leaf, XB_Y, i],
                             buf[leaf, XB_W, i])  # fmt: skip


@kernel
def extra_observe(st, prm, leaf, x, y, w, nfeat):
    """Stage 1 or 2 for example ``(x, y, w)`` at ``leaf`` (``w > 0``)."""
    n = st.lf_nexamples[leaf]
    if n < prm.m_min:
        buf = st.lf_buffer
        buf[leaf, XB_Y, n] = y
        buf[leaf, XB_W, n] = w
        for j in range(nfeat):
            buf[leaf, 2 + j, n] = x[j]
        st.lf_nexamples[leaf] = n + 1
        if n + 1 == prm.m_min:
            _draw_candidates(st, leaf, nfeat)
        return
    xc = st.lf_candidate
    for j in range(nfeat):
        thr = xc[leaf, j, XC_THR]
        v = x[j]
        if np.isnan(thr) or np.isnan(v):
            continue
        _add_to_side(xc, leaf, j, _goes_left(st.ft_nominal[j] == 1, thr, v), y, w)


@kernel(inline="always")
def _variance_reduction(xc, leaf, j, min_branch):
    """VR of candidate j (``-1`` when a side has less than ``min_branch`` weight)."""
    lw, lm2 = xc[leaf, j, XC_LW], xc[leaf, j, XC_LM2]
    rw, rm2 = xc[leaf, j, XC_RW], xc[leaf, j, XC_RM2]
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    pw, _, _, pm2 = chan_merge(lw, xc[leaf, j, XC_LHI], xc[leaf, j, XC_LLO], lm2,
                               rw, xc[leaf, j, XC_RHI], xc[leaf, j, XC_RLO], rm2)  # fmt: skip
    # var(P) - wL/wP var(L) - wR/wP var(R), with var = m2 / w
    return (pm2 - lm2 - rm2) / pw


@kernel
def choose_extra_split(st, prm, leaf):
    """Stage 3: the feature to split ``leaf`` on, or -1 (see the module docstring)."""
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    if st.lf_nexamples[leaf] < prm.m_min:
        return -1
    nfeat = st.ints[I_NFEAT]
    xc = st.lf_candidate
    best1 = 0.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    for j in range(nfeat):
        if np.isnan(xc[leaf, j, XC_THR]):
            continue
        vr = _variance_reduction(xc, leaf, j, prm.min_branch)
        if vr > best1:
            best2 = best1
            best1 = vr
            f1 = j
        elif vr > best2:
            best2 = vr
    if f1 < 0 or best1 <= 0.0:
        return -1
    n = st.lf_stat[leaf, S_W] - st.lf_inherited[leaf, S_W]
    eps = np.sqrt(np.log(1.0 / prm.delta) / (2.0 * n))
    if best2 / best1 < 1.0 - eps:
        return f1
    if eps >= prm.tau:
        return -1
    tied = 0
    for j in range(nfeat):
        if not np.isnan(xc[leaf, j, XC_THR]):
            if _variance_reduction(xc, leaf, j, prm.min_branch) >= (1.0 - eps) * best1:
                tied += 1
    pick = next_below(st.rng, tied)
    for j in range(nfeat):
        if not np.isnan(xc[leaf, j, XC_THR]):
            if _variance_reduction(xc, leaf, j, prm.min_branch) >= (1.0 - eps) * best1:
                if pick == 0:
                    return j
                pick -= 1
    return f1


@kernel(inline="always")
def extra_sides(st, leaf, j):
    """``(threshold or salt, left statistic, right statistic)`` of candidate j of ``leaf``."""
    xc = st.lf_candidate
    return (
        xc[leaf, j, XC_THR],
        xc[leaf, j, XC_LW], xc[leaf, j, XC_LHI], xc[leaf, j, XC_LLO], xc[leaf, j, XC_LM2],
        xc[leaf, j, XC_RW], xc[leaf, j, XC_RHI], xc[leaf, j, XC_RLO], xc[leaf, j, XC_RM2],
    )  # fmt: skip
