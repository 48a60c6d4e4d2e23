"""Compiled passes of the interval meta-algorithms.

Each method works on a chunk of rows in two steps (see :mod:`streamforest.forests._kernels` for
why trees run tree-major):

1. a *tree pass* per tree: predict each row (before learning it), record what the method needs
   from the tree at that moment, then learn the row with the tree's bagging weight;
2. a *method pass* over the rows in stream order that combines the trees' records into the
   intervals and updates the method's own state (calibration set, ACI levels).

Because a tree's records at row ``i`` are taken before it learns row ``i`` and trees are
independent, this gives exactly the row-by-row (prequential) result.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..sketches.kll import LV_N, LV_WIDTH, runs_quantile, runs_sorted, shortest_interval
from ..trees._kernels import _learn_row, _room, drift_step, route
from ..trees._state import I_NFEAT, I_NSEEN, I_NSPLITS
from ..trees.leaf_models import fold_leaf_model, folded_predict, predict_leaf


# ------------------------------------------------------------------------------------------------
# OnlineQRF: copy each row's leaf sketch, then query the mixture of the trees' leaf sketches
@njit(cache=True, nogil=True, _nrt=False)
def sketch_tree_pass(st, prm, X, y, w, start, learn, P, gbuf, gpos, goff, glv):
    """``P[i]``: the tree's prediction for row i; a copy of the sketch of the leaf row i reaches
    (its retained items appended to ``gbuf`` at ``goff[i]``, its level row in ``glv[i]``), both
    taken before learning row i.  Stops before a row when the tree or ``gbuf`` lacks room."""
    cap = st.lf_sk.shape[1]
    nfeat = st.ints[I_NFEAT]
    for i in range(start, X.shape[0]):
        if gbuf.shape[0] - gpos[0] < cap or (learn and not _room(st, prm)):
            return i
        x = X[i]
        node = route(st, x)
        leaf = st.nd_leaf[node]
        P[i] = predict_leaf(st, prm, leaf, x, nfeat)
        H = st.lf_skl[leaf, 0]
        for j in range(H + 2):  # level count and boundaries
            glv[i, j] = st.lf_skl[leaf, j]
        glv[i, LV_N] = st.lf_skl[leaf, LV_N]
        p = gpos[0]
        goff[i] = p
        for j in range(st.lf_skl[leaf, 1], cap):
            gbuf[p] = st.lf_sk[leaf, j]
            p += 1
        gpos[0] = p
        if learn:
            st.ints[I_NSEEN] += 1
            if w[i] > 0.0:
                _learn_row(st, prm, node, x, y[i], w[i])
            if prm.drift_lambda > 0.0 and drift_step(st, prm, y[i], P[i]):
                return i + 1
    return X.shape[0]


@njit(cache=True, inline="always")
def _gather_runs(bufs, goff, glv, mask, i, meinshausen, buf, rs, re, rw):
    """Copy row i's leaf sketches of the trees with ``mask[t, i]`` into ``buf`` as sorted runs
    (one per level, weights as chosen); returns ``(runs, total weight)``."""
    T = glv.shape[0]
    teff = 0
    for t in range(T):
        if mask[t, i] and glv[t, i, LV_N] > 0:
            teff += 1
    nr = 0
    nb = 0
    total = 0.0
    for t in range(T):
        nt = glv[t, i, LV_N]
        if not (mask[t, i] and nt > 0):
            continue
        src = bufs[t]
        mult = 1.0 / (nt * teff) if meinshausen else 1.0
        off = goff[t, i] - glv[t, i, 1]
        for h in range(glv[t, i, 0]):
            s = glv[t, i, h + 1]
            e = glv[t, i, h + 2]
            if e > s:
                rs[nr] = nb
                for j in range(off + s, off + e):
                    buf[nb] = src[j]
                    nb += 1
                re[nr] = nb
                rw[nr] = mult * float(np.int64(1) << h)
                nr += 1
        total += mult * nt
    return nr, total


@njit(cache=True, nogil=True)
def mixture_query(bufs, goff, glv, mask, meinshausen, qs, masses, out_q, out_lo, out_hi, r0, r1):
    """For rows ``r0..r1``: quantiles ``qs`` (into ``out_q``) and highest-density intervals of
    the masses ``masses`` (into ``out_lo``, ``out_hi``) of the trees' leaf-sketch mixture.
    ``bufs[t]`` holds tree t's sketch copies (row i's at ``goff[t, i]``)."""
    T = glv.shape[0]
    cap = 0
    for t in range(T):
        for i in range(r0, r1):
            cap = max(cap, glv[t, i, 1 + glv[t, i, 0]] - glv[t, i, 1])
    R = T * (LV_WIDTH - 3)
    buf = np.empty(T * cap)
    rs = np.empty(R, np.int64)
    re = np.empty(R, np.int64)
    rw = np.empty(R)
    heap = np.empty(R, np.int64)
    hv = np.empty(R)
    cur = np.empty(R, np.int64)
    sv = np.empty(T * cap if masses.shape[0] else 0)
    sw = np.empty(T * cap if masses.shape[0] else 0)
    for i in range(r0, r1):
        nr, total = _gather_runs(bufs, goff, glv, mask, i, meinshausen, buf, rs, re, rw)
        for k in range(qs.shape[0]):
            out_q[i, k] = runs_quantile(buf, rs, re, rw, nr, total, qs[k], hv, cur)
        if masses.shape[0]:
            m = runs_sorted(buf, rs, re, rw, nr, heap, cur, sv, sw)
            for k in range(masses.shape[0]):
                out_lo[i, k], out_hi[i, k] = shortest_interval(sv, sw, m, masses[k])


# ------------------------------------------------------------------------------------------------
# calibration set: FIFO ring of slots, scores kept sorted: order[k] is the slot of the k-th
# smallest score, ss[k] that score (contiguous, for fast scans), pos[slot] its rank (-1: empty)
@njit(cache=True, inline="always")
def _ss_insert(order, pos, ss, n, v, s):
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if ss[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    for k in range(n, lo, -1):
        order[k] = order[k - 1]
        ss[k] = ss[k - 1]
        pos[order[k]] = k
    order[lo] = s
    ss[lo] = v
    pos[s] = lo
    return n + 1


@njit(cache=True, inline="always")
def _ss_update(order, pos, ss, n, v, s):
    p = pos[s]
    while p > 0 and ss[p - 1] > v:
        order[p] = order[p - 1]
        ss[p] = ss[p - 1]
        pos[order[p]] = p
        p -= 1
    while p < n - 1 and ss[p + 1] < v:
        order[p] = order[p + 1]
        ss[p] = ss[p + 1]
        pos[order[p]] = p
        p += 1
    order[p] = s
    ss[p] = v
    pos[s] = p


@njit(cache=True, inline="always")
def conformal_rank(n, alpha):
    """``ceil((n + 1)(1 - alpha))``: the rank (1-based, ascending) of the half-width among ``n``
    scores; above ``n`` the interval is infinite."""
    return np.int64(np.ceil((n + 1) * (1.0 - alpha) - 1e-9))


@njit(cache=True, inline="always")
def sorted_half_width(ss, n, alpha):
    """The :func:`conformal_rank`-th smallest of the sorted scores ``ss[:n]`` (``inf`` when that
    exceeds ``n``)."""
    r = conformal_rank(n, alpha)
    if r > n or n == 0:
        return np.inf
    if r < 1:
        return -np.inf
    return ss[r - 1]


@njit(cache=True)
def ring_slots(ring, W, slots):
    """Slot of each row that enters the calibration set (out-of-bag for some tree), else -1.
    ``ring = [head, capacity]``; advances the head."""
    c = ring[1]
    for i in range(W.shape[1]):
        oob = False
        for t in range(W.shape[0]):
            if W[t, i] == 0.0:
                oob = True
        if oob:
            slots[i] = ring[0]
            ring[0] = (ring[0] + 1) % c
        else:
            slots[i] = -1


# ------------------------------------------------------------------------------------------------
# CPApproximate / CPExact method pass
# The top part is kept as *negated* scores in ascending order (``nts``), so that the
# ascending helpers above serve it: ``-nts[0]`` is its largest score, ``-nts[tn - 1]`` its
# smallest.
TOP_MARGIN = 16  # members kept in the top part beyond what the ranks need


@njit(cache=True, inline="always")
def _top_remove(tord, nts, tpos, tn, s):
    p = tpos[s]
    for k in range(p, tn - 1):
        nts[k] = nts[k + 1]
        tord[k] = tord[k + 1]
        tpos[tord[k]] = k
    tpos[s] = -1
    return tn - 1


@njit(cache=True, inline="always")
def _needed(size, alphas):
    """How many of the largest scores the levels' ranks reach into."""
    need = 0
    for a in range(alphas.shape[0]):
        r = conformal_rank(size, alphas[a])
        if 1 <= r <= size:
            need = max(need, size - r + 1)
    return need


@njit(cache=True, nogil=True)
def _refill(tord, nts, tpos, tn, present, score, c, target, scr_s, scr_o):
    """Bring the top part up to ``target`` members with the largest scores of the rest."""
    m = 0
    for s in range(c):
        if present[s] and tpos[s] < 0:
            scr_s[m] = score[s]
            scr_o[m] = s
            m += 1
    want = min(target - tn, m)
    if want <= 0:
        return tn
    idx = np.argsort(scr_s[:m])
    for q in range(m - 1, m - 1 - want, -1):  # largest first: each goes to the end
        s = scr_o[idx[q]]
        nts[tn] = -scr_s[idx[q]]
        tord[tn] = s
        tpos[s] = tn
        tn += 1
    return tn


@njit(cache=True, nogil=True)
def conformal_pass(size, cy, coob, cpred, csum, ccnt, score, order, pos, ss, P, W, y, slots,
                   ev_t, ev_s, ev_v, ev_n, alphas, half):  # fmt: skip
    """Rows in order: ``half[i, a]`` from the scores before row i, then row i enters the
    calibration set (evicting its slot's occupant) with the stored OOB predictions ``P[:, i]``,
    then the trees' refreshed predictions of time i (events, CPExact; ``ev_*[t]`` tree t's)
    are applied.  Each member keeps the sum and count of its OOB predictions, updated per
    event.  Returns the new size.

    The levels' ranks only reach the largest scores (``alpha = 0.1``: the top tenth), so
    during the pass only a *top part* is kept sorted: the members with the largest scores,
    a few more than the ranks need, every other score being <= its minimum.  A re-scored
    member outside it and staying below its minimum costs O(1); the top part is refilled
    from the rest when it runs short.  The half-widths are exactly those of a fully sorted
    order, which is rebuilt at the end (``order``, ``pos``, ``ss``) for later predictions."""
    T, n = P.shape
    c = cy.shape[0]
    A = alphas.shape[0]
    cur = np.zeros(T, np.int64)
    touched = np.empty(c, np.int64)
    mark = np.zeros(c, np.int8)
    present = np.zeros(c, np.int8)
    tord = np.empty(c + 1, np.int64)
    nts = np.empty(c + 1)
    tpos = np.full(c, -1, np.int64)
    scr_s = np.empty(c)
    scr_o = np.empty(c, np.int64)
    for s in range(c):
        if pos[s] >= 0:
            present[s] = 1
    tn = 0
    for i in range(n):
        need = _needed(size, alphas)
        if tn < need:
            tn = _refill(tord, nts, tpos, tn, present, score, c, need + TOP_MARGIN, scr_s, scr_o)
        for a in range(A):
            r = conformal_rank(size, alphas[a])
            if r > size or size == 0:
                half[i, a] = np.inf
            elif r < 1:
                half[i, a] = -np.inf
            else:
                half[i, a] = -nts[size - r]
        s = slots[i]
        if s >= 0:
            cy[s] = y[i]
            sm = 0.0
            cnt = 0
            for t in range(T):
                oob = W[t, i] == 0.0
                coob[s, t] = 1 if oob else 0
                cpred[s, t] = P[t, i]
                if oob:
                    sm += P[t, i]
                    cnt += 1
            csum[s] = sm
            ccnt[s] = cnt
            v = abs(y[i] - sm / cnt)
            score[s] = v
            if present[s]:
                if tpos[s] >= 0:
                    tn = _top_remove(tord, nts, tpos, tn, s)
            else:
                present[s] = 1
                size += 1
            if tn > 0 and v > -nts[tn - 1]:
                tn = _ss_insert(tord, tpos, nts, tn, -v, s)
        nt = 0
        for t in range(T):
            et = ev_t[t]
            es = ev_s[t]
            evv = ev_v[t]
            k = cur[t]
            while k < ev_n[t] and et[k] == i:
                s2 = es[k]
                v = evv[k]
                if np.isnan(v):
                    if coob[s2, t]:
                        coob[s2, t] = 0
                        csum[s2] -= cpred[s2, t]
                        ccnt[s2] -= 1
                else:
                    csum[s2] += v - cpred[s2, t]
                    cpred[s2, t] = v
                if mark[s2] == 0:
                    mark[s2] = 1
                    touched[nt] = s2
                    nt += 1
                k += 1
            cur[t] = k
        for k in range(nt):
            s2 = touched[k]
            mark[s2] = 0
            if not present[s2]:
                continue
            if ccnt[s2] == 0:
                present[s2] = 0
                size -= 1
                if tpos[s2] >= 0:
                    tn = _top_remove(tord, nts, tpos, tn, s2)
                continue
            v = abs(cy[s2] - csum[s2] / ccnt[s2])
            if tpos[s2] >= 0:
                # rest <= min(top) must hold: the bound is the smallest other top member (or
                # this member's old score when it is the only one)
                p = tpos[s2]
                if p != tn - 1:
                    low = -nts[tn - 1]
                elif tn >= 2:
                    low = -nts[tn - 2]
                else:
                    low = score[s2]
                if v < low:
                    tn = _top_remove(tord, nts, tpos, tn, s2)
                else:
                    _ss_update(tord, tpos, nts, tn, -v, s2)
                score[s2] = v
            else:
                score[s2] = v
                if tn > 0 and v > -nts[tn - 1]:
                    tn = _ss_insert(tord, tpos, nts, tn, -v, s2)
        if tn > need + 4 * TOP_MARGIN:  # keep the top part small: its minimum goes to the rest
            while tn > need + TOP_MARGIN:
                tpos[tord[tn - 1]] = -1
                tn -= 1
    # the full sorted view for later predictions and inspection
    m = 0
    for s in range(c):
        pos[s] = -1
        if present[s]:
            scr_s[m] = score[s]
            scr_o[m] = s
            m += 1
    idx = np.argsort(scr_s[:m])
    for k in range(m):
        order[k] = scr_o[idx[k]]
        ss[k] = scr_s[idx[k]]
        pos[order[k]] = k
    return size


@njit(cache=True, nogil=True)
def copy_entrants(slots, X, cx):
    """The features of the rows that entered the calibration set, into their slots of ``cx``."""
    for i in range(X.shape[0]):
        if slots[i] >= 0:
            for j in range(X.shape[1]):
                cx[slots[i], j] = X[i, j]


# ------------------------------------------------------------------------------------------------
# CPExact tree pass: keep each tree's out-of-bag predictions of the calibration members current
@njit(cache=True, inline="always")
def _member_x(X, cx, cbirth, g0, m):
    b = cbirth[m]
    return X[b - g0] if b >= g0 else cx[m]


@njit(cache=True, inline="always")
def _link(st, cleaf, cnext, cprev, m, leaf):
    h = st.lf_aux[leaf]
    cnext[m] = h
    cprev[m] = -1
    if h >= 0:
        cprev[h] = m
    st.lf_aux[leaf] = m
    cleaf[m] = leaf


@njit(cache=True, inline="always")
def _unlink(st, cleaf, cnext, cprev, m):
    p = cprev[m]
    nx = cnext[m]
    if p >= 0:
        cnext[p] = nx
    else:
        st.lf_aux[cleaf[m]] = nx
    if nx >= 0:
        cprev[nx] = p
    cleaf[m] = -1


@njit(cache=True, inline="always")
def _refresh(st, prm, leaf, X, cx, cbirth, g0, cnext, ccur, i, ev_t, ev_s, ev_v, ev_n):
    """Recompute the tree's prediction for the calibration members at ``leaf``; append an
    event for each that changed."""
    m = st.lf_aux[leaf]
    if m < 0:
        return
    nfeat = st.ints[I_NFEAT]
    a, linear = fold_leaf_model(st, prm, leaf, nfeat)
    fl = st.ft_lin
    a0 = a  # the folded model as a0 + sum_j b_j x_j: a plain dot product per member
    if linear:
        for j in range(nfeat):
            a0 -= fl[j, 0] * fl[j, 1]
    k = ev_n[0]  # kept in a register over the loop
    while m >= 0:
        v = a
        if linear:
            x = _member_x(X, cx, cbirth, g0, m)
            v = a0
            for j in range(nfeat):
                v += fl[j, 0] * x[j]
            if v != v:  # a missing value: its term is skipped, as predict_leaf does
                v = folded_predict(st, a, x, nfeat)
        if v != ccur[m]:
            ccur[m] = v
            ev_t[k] = i
            ev_s[k] = m
            ev_v[k] = v
            k += 1
        m = cnext[m]
    ev_n[0] = k


@njit(cache=True, nogil=True, _nrt=False)
def exact_tree_pass(  # noqa: PLR0913
    st,
    prm,
    X,
    y,
    w,
    slots,
    g0,
    start,
    P,
    cx,
    cleaf,
    cnext,
    cprev,
    cbirth,
    ccur,
    ev_t,
    ev_s,
    ev_v,
    ev_n,
):
    c = cx.shape[0]
    cap = ev_t.shape[0]
    nfeat = st.ints[I_NFEAT]
    for i in range(start, X.shape[0]):
        if not _room(st, prm) or ev_n[0] + 2 * c > cap:
            return i
        x = X[i]
        node = route(st, x)
        leaf = st.nd_leaf[node]
        P[i] = predict_leaf(st, prm, leaf, x, nfeat)
        s = slots[i]
        if s >= 0:
            if cleaf[s] >= 0:
                _unlink(st, cleaf, cnext, cprev, s)
            if w[i] == 0.0:
                cbirth[s] = g0 + i
                ccur[s] = P[i]
                _link(st, cleaf, cnext, cprev, s, leaf)
        st.ints[I_NSEEN] += 1
        if w[i] > 0.0:
            nsplit = st.ints[I_NSPLITS]
            _learn_row(st, prm, node, x, y[i], w[i])
            if st.ints[I_NSPLITS] != nsplit:  # the leaf split: its members move to the children
                m = st.lf_aux[leaf]
                rslot = st.nd_leaf[st.nd_right[node]]
                st.lf_aux[leaf] = -1
                st.lf_aux[rslot] = -1
                while m >= 0:
                    nx = cnext[m]
                    child = st.nd_leaf[route(st, _member_x(X, cx, cbirth, g0, m))]
                    _link(st, cleaf, cnext, cprev, m, child)
                    m = nx
                _refresh(st, prm, leaf, X, cx, cbirth, g0, cnext, ccur, i, ev_t, ev_s, ev_v, ev_n)
                _refresh(st, prm, rslot, X, cx, cbirth, g0, cnext, ccur, i, ev_t, ev_s, ev_v, ev_n)
            else:
                _refresh(st, prm, leaf, X, cx, cbirth, g0, cnext, ccur, i, ev_t, ev_s, ev_v, ev_n)
        if prm.drift_lambda > 0.0 and drift_step(st, prm, y[i], P[i]):
            return i + 1
    return X.shape[0]


@njit(cache=True)
def exact_tree_reset(i, cleaf, ev_t, ev_s, ev_v, ev_n):
    """Tree t was replaced by a fresh tree after row i (drift).  The calibration members it was
    out of bag for drop it from their out-of-bag sets (event value NaN); a member left with no
    out-of-bag tree leaves the calibration set (its scores described a replaced model)."""
    for m in range(cleaf.shape[0]):
        if cleaf[m] < 0:
            continue
        cleaf[m] = -1
        k = ev_n[0]
        ev_t[k] = i
        ev_s[k] = m
        ev_v[k] = np.nan
        ev_n[0] = k + 1


# ------------------------------------------------------------------------------------------------
# conformalized QRF method pass
@njit(cache=True, nogil=True)
def cqr_pass(
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
):
    """Rows in order.  ``base_lo/hi[i, a]``: the QRF interval of row i at ``alphas[a]`` from all
    trees; ``oob_lo/hi``: from the trees for which row i is out of bag (NaN if none).  Per
    level a: ``half[i, a]`` (the widening, possibly negative) is the conformal quantile at level
    ``alpha_t[a]`` of the scores ``max(lo - y, y - hi)``; then, when learning, ACI updates
    ``alpha_t[a] += gamma * (alphas[a] - err)`` and row i enters the calibration set."""
    A = alphas.shape[0]
    c = ring[1]
    for i in range(y.shape[0]):
        for a in range(A):
            half[i, a] = sorted_half_width(ss[a], size, alpha_t[a])
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
                _ss_update(order[a], pos[a], ss[a], size, cscore[a, s], s)
            else:
                _ss_insert(order[a], pos[a], ss[a], size, cscore[a, s], s)
        if not evict:
            size += 1
    return size
