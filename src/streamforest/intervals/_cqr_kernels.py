"""Compiled method pass of the conformalized quantile forest (ConformalQRF)."""

from __future__ import annotations

import numpy as np

from ..compiled import entry
from .scores import sorted_half_width, ss_insert, ss_update


# ------------------------------------------------------------------------------------------------
# conformalized QRF method pass
@entry(nogil=True)
def cqr_levels_pass(
    size,
    ring,
    cscore,
    order,
    pos,
    ss,
    base_lo,
    base_hi,
    oob_lo,
    oob_hi,
    W,
    y,
    learn,
    alphas,
    aci_gamma,
    alpha_t,
    half,
    req,
    req_base,
    req_half,
):
    """Rows in order.  ``base_lo/hi[i, a]``: the QRF interval of row i at ``alphas[a]`` from all
    trees; ``oob_lo/hi``: from the trees for which row i is out of bag (NaN if none).  Per
    level a: ``half[i, a]`` (the widening, possibly negative) is the conformal quantile at level
    ``alpha_t[a]`` of the scores ``max(lo - y, y - hi)``; then, when learning, ACI updates
    ``alpha_t[a] += gamma * (alphas[a] - err)`` and row i enters the calibration set.

    It also answers levels that are not calibrated: for each requested
    level ``req[r]``, ``req_half[i, r]`` is the conformal quantile of the scores of the calibrated
    level ``req_base[r]`` at the rank of ``req[r]`` (shifted by that level's ACI offset
    ``alpha_t - alphas``), read at the same moment as ``half[i]`` (before row i enters the
    calibration set)."""
    A = alphas.shape[0]
    R = req.shape[0]
    c = ring[1]
    for i in range(y.shape[0]):
        for a in range(A):
            half[i, a] = sorted_half_width(ss[a], size, alpha_t[a])
        for r in range(R):
            b = req_base[r]
            req_half[i, r] = sorted_half_width(ss[b], size, req[r] + alpha_t[b] - alphas[b])
        if not learn:
            continue
        if aci_gamma > 0.0:
            for a in range(A):
                lo = base_lo[i, a] - half[i, a]
                hi = base_hi[i, a] + half[i, a]
                err = 0.0 if (lo <= y[i] <= hi) else 1.0
                alpha_t[a] += aci_gamma * (alphas[a] - err)
        oob = False
        for t in range(W.shape[0]):
            if W[t, i] == 0.0:
                oob = True
        if not oob or np.isnan(oob_lo[i, 0]):
            continue
        s = ring[0]
        ring[0] = (s + 1) % c
        evict = pos[0, s] >= 0
        for a in range(A):
            cscore[a, s] = max(oob_lo[i, a] - y[i], y[i] - oob_hi[i, a])
            if evict:  # the new member replaces the evicted one in the sorted order
                ss_update(order[a], pos[a], ss[a], size, cscore[a, s], s)
            else:
                ss_insert(order[a], pos[a], ss[a], size, cscore[a, s], s)
        if not evict:
            size += 1
    return size
