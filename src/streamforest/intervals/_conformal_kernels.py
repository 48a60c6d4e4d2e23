"""Compiled passes of the conformal methods CPApproximate and CPExact (JMLR 2019, section 3.1).

A chunk runs in two steps: a *tree pass* per tree (predict each row before learning it and, for
CPExact, keep the tree's out-of-bag predictions of the calibration members current, recording
each change as an event), then a *method pass* over the rows in stream order that computes the
half-widths from the calibration scores and updates the calibration set.  Trees are independent
given their bagging weights, so this is exactly the row-by-row result.  :func:`cp_learn_one` and
:func:`cp_predict_one` do one row in one call (the per-example API).
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..engine.handle import h1, h2
from ..engine.kernels import aggregate_at, engine_views, learn_one, predict_trees_memo
from ..sorting import argsort_into
from ..tree_kinds.arena import tree_at
from ..tree_kinds.kernels import has_room, needs_step
from ..tree_kinds.leaf_models import fold_leaf_model, folded_predict, predict_leaf
from ..tree_kinds.regression import learn_at
from ..tree_kinds.state import I_NFEAT, I_NSPLITS
from ..tree_kinds.structure import route
from .scores import conformal_rank, sorted_half_width, ss_insert, ss_update

# ------------------------------------------------------------------------------------------------
# CPApproximate / CPExact method pass
# The top part is kept as *negated* scores in ascending order (``nts``), so that the
# ascending helpers above serve it: ``-nts[0]`` is its largest score, ``-nts[tn - 1]`` its
# smallest.
TOP_MARGIN = 16  # members kept in the top part beyond what the ranks need


@kernel(inline="always")
def _top_remove(tord, nts, tpos, tn, s):
    p = tpos[s]
    for k in range(p, tn - 1):
        nts[k] = nts[k + 1]
        tord[k] = tord[k + 1]
        tpos[tord[k]] = k
    tpos[s] = -1
    return tn - 1


@kernel(inline="always")
def _needed(size, alphas):
    """How many of the largest scores the levels' ranks reach into."""
    need = 0
    for a in range(alphas.shape[0]):
        r = conformal_rank(size, alphas[a])
        if 1 <= r <= size:
            need = max(need, size - r + 1)
    return need


@entry(nogil=True)
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
    idx = np.empty(m, dtype=np.int64)
    argsort_into(scr_s, np.int64(m), idx)
    for q in range(m - 1, m - 1 - want, -1):  # largest first: each goes to the end
        s = scr_o[idx[q]]
        nts[tn] = -scr_s[idx[q]]
        tord[tn] = s
        tpos[s] = tn
        tn += 1
    return tn


@entry(nogil=True)
def conformal_pass(size, cy, coob, cpred, csum, ccnt, score, order, pos, ss, P, W, y, slots,
                   ev_t, ev_s, ev_v, ev_n, alphas, half):  # fmt: skip
    """Rows in order: ``half[i, a]`` from the scores before row i, then row i enters the
    calibration set (evicting its slot's occupant) with the stored OOB predictions ``P[:, i]``,
    then the trees' refreshed predictions of time i (events, CPExact: ``ev_t``, ``ev_s``,
    ``ev_v`` are ``(T, capacity)`` arrays, row t tree t's events, ``ev_n[t]`` of them; ``None``:
    no events, CPApproximate, compiled without their loop) are applied.
    Each member keeps the sum and count of its OOB predictions, updated per event.  Returns
    the new size.

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
    tn = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
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
                tn = ss_insert(tord, tpos, nts, tn, -v, s)
        nt = 0
        if ev_t is not None:  # CPExact's events (None, CPApproximate: a branch numba prunes)
            for t in range(T):
                k = cur[t]
                if k >= ev_n[t]:  # no event left for this tree
                    continue
                et = ev_t[t]
                es = ev_s[t]
                evv = ev_v[t]
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
                    ss_update(tord, tpos, nts, tn, -v, s2)
                score[s2] = v
            else:
                score[s2] = v
                if tn > 0 and v > -nts[tn - 1]:
                    tn = ss_insert(tord, tpos, nts, tn, -v, s2)
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
    idx = np.empty(m, dtype=np.int64)
    argsort_into(scr_s, np.int64(m), idx)
    for k in range(m):
        order[k] = scr_o[idx[k]]
        ss[k] = scr_s[idx[k]]
        pos[order[k]] = k
    return size


@entry(nogil=True)
def copy_entrants(slots, X, cx):
    """The features of the rows that entered the calibration set, into their slots of ``cx``."""
    for i in range(X.shape[0]):
        if slots[i] >= 0:
            for j in range(X.shape[1]):
                cx[slots[i], j] = X[i, j]


# ------------------------------------------------------------------------------------------------
# CPExact tree pass: keep each tree's out-of-bag predictions of the calibration members current
@kernel(inline="always")
def _member_x(X, cx, cbirth, g0, m):
    b = cbirth[m]
    return X[b - g0] if b >= g0 else cx[m]


@kernel(inline="always")
def _link(st, cleaf, cnext, cprev, m, leaf):
    h = st.lf_aux[leaf]
    cnext[m] = h
    cprev[m] = -1
    if h >= 0:
        cprev[h] = m
    st.lf_aux[leaf] = m
    cleaf[m] = leaf


@kernel(inline="always")
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


@kernel
def _refresh(st, prm, leaf, X, cx, cbirth, g0, cnext, ccur, i, ev_t, ev_s, ev_v, ev_n):
    """Recompute the tree's prediction for the calibration members at ``leaf``; append an
    event for each that changed."""
    m = st.lf_aux[leaf]
    if m < 0:
        return
    nfeat = st.ints[I_NFEAT]
    a, linear = fold_leaf_model(st, prm, leaf, nfeat)
    fl = st.ft_linear
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


@entry(nogil=True, _nrt=False)
def exact_tree_pass(A, t, X, y, w, slots, g0, start, P, cx, cleaf, cnext, cprev, cbirth, ccur,
                    ev_t, ev_s, ev_v, ev_n):  # fmt: skip
    """Tree ``t`` through the rows (prediction into ``P``, then learning with weights ``w``),
    keeping its out-of-bag predictions of the calibration members current: the members it is
    out of bag for are linked per leaf; after each learnt row the leaf's members are re-predicted
    (re-routed after a split) and every changed prediction is an event ``(row, member, value)``
    appended to ``ev_*``."""
    st, prm = tree_at(A, t)
    c = cx.shape[0]
    cap = ev_t.shape[0]
    nfeat = st.ints[I_NFEAT]
    for i in range(start, X.shape[0]):
        if (needs_step(prm, w[i]) and not has_room(st, prm)) or ev_n[0] + 2 * c > cap:
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
        nsplit = st.ints[I_NSPLITS]
        drifted = learn_at(st, prm, node, x, y[i], w[i], P[i])
        if w[i] > 0.0:
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
        if drifted:
            return i + 1
    return X.shape[0]


@entry
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
# one row (the per-example API of CPApproximate)
@kernel(inline="always")
def _enter(size, cy, coob, cpred, csum, ccnt, score, order, pos, ss, P, wt, y, s):
    """The row enters slot ``s`` (replacing its occupant) with the predictions ``P`` of the trees
    for which it is out of bag (``wt[t] == 0``); the sorted order is updated in place.  Returns
    the new size."""
    cy[s] = y
    sm = 0.0
    cnt = 0
    for t in range(P.shape[0]):
        oob = wt[t] == 0.0
        coob[s, t] = 1 if oob else 0
        cpred[s, t] = P[t]
        if oob:
            sm += P[t]
            cnt += 1
    csum[s] = sm
    ccnt[s] = cnt
    v = abs(y - sm / cnt)
    score[s] = v
    if pos[s] >= 0:
        ss_update(order, pos, ss, size, v, s)
        return size
    ss_insert(order, pos, ss, size, v, s)
    return size + 1


@entry(nogil=True, _nrt=False, inline="always")
def cp_learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M, ring, cy, coob, cpred, csum,
                 ccnt, score, order, pos, ss, cx, size):  # fmt: skip
    """CPApproximate, one example: every tree learns ``(x, y)`` (see
    :func:`streamforest.engine.kernels.learn_one`); when the row is out of bag for some tree it
    enters the calibration set at the ring's next slot (features stored in ``cx``).  Returns
    ``(status, size)``, the status as :func:`~streamforest.engine.kernels.learn_one`'s (a tree
    that lacks room: call again from it once grown)."""
    status = learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M)
    if status >= 0:
        return status, size
    oob = False
    for t in range(P.shape[0]):
        if wt[t] == 0.0:
            oob = True
    if oob:
        s = ring[0]
        ring[0] = (s + 1) % ring[1]
        for j in range(x.shape[0]):
            cx[s, j] = x[j]
        size = _enter(size, cy, coob, cpred, csum, ccnt, score, order, pos, ss, P, wt, y, s)
    return status, size


@entry(nogil=True, _nrt=False)
def cp_learn_one_h(H, kind, C, lam, y, w, t0, memo, size):
    """:func:`cp_learn_one` of an engine handle ``H`` and a calibration handle ``C`` (the
    arrays of :meth:`CPApproximate._calibration_handle`, in that order)."""
    A, frng, x, wt, P, drifted, M, M0 = engine_views(H, kind)
    return cp_learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M if memo else M0,
                        h1(C, 0, np.int64), h1(C, 2, np.float64), h2(C, 4, np.int8),
                        h2(C, 7, np.float64), h1(C, 10, np.float64), h1(C, 12, np.int64),
                        h1(C, 14, np.float64), h1(C, 16, np.int64), h1(C, 18, np.int64),
                        h1(C, 20, np.float64), h2(C, 22, np.float64), size)  # fmt: skip


@entry(nogil=True, _nrt=False)
def cp_predict_one_h(H, kind, C, agg, size, alphas, lo, hi):
    """:func:`cp_predict_one` of an engine handle ``H`` and a calibration handle ``C``."""
    A, _, x, _, P, _, M, _ = engine_views(H, kind)
    return cp_predict_one(A, x, agg, P, M, h1(C, 20, np.float64), size, alphas, lo, hi)


@entry(nogil=True, _nrt=False)
def cp_interval_one_h(H, kind, C, agg, size, alpha):
    """``(lower, upper)`` of :func:`cp_predict_one_h` at one level ``alpha`` (the same
    arithmetic), returned instead of written."""
    A, _, x, _, P, _, M, _ = engine_views(H, kind)
    predict_trees_memo(A, x, P, M)
    yhat = aggregate_at(A, P, agg)
    half = sorted_half_width(h1(C, 20, np.float64), size, alpha)
    return yhat - half, yhat + half


@entry(nogil=True, _nrt=False, inline="always")
def cp_predict_one(A, x, agg, P, M, ss, size, alphas, lo, hi):
    """The forest's prediction for row ``x`` and its conformal interval at each level (leaf
    nodes and tree predictions also in the engine's memo ``M``)."""
    predict_trees_memo(A, x, P, M)
    yhat = aggregate_at(A, P, agg)
    for a in range(alphas.shape[0]):
        half = sorted_half_width(ss, size, alphas[a])
        lo[a] = yhat - half
        hi[a] = yhat + half
    return yhat
