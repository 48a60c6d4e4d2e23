"""Compiled passes of OnlineQRF: each tree copies the leaf sketch every row reaches (before
learning the row), then the mixture of the trees' copies is queried for quantiles and
highest-density intervals.  A tree's copies at row ``i`` are taken before it learns row ``i`` and
trees are independent, so the chunked passes give exactly the row-by-row (prequential) result;
:func:`query_one` reads the leaves in place for one row.

The numba original of the compiled core's ``src/core/intervals/quantile`` (``streamforest._core
.quantile``, same names and arguments, which OnlineQRF calls for the tree kinds the core runs):
kept for ``STREAMFOREST_CORE=numba`` and as the reference tests/test_core_quantile.py checks the
core against bit for bit."""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..engine.handle import h1
from ..engine.kernels import engine_views
from ..sketches.kll import (
    LV_N,
    LV_WIDTH,
    append_runs,
    level_runs,
    runs_quantile_many,
    runs_sorted,
    shortest_interval,
)
from ..tree_kinds.arena import flat_floats, float_start, tree_at
from ..tree_kinds.kernels import has_room, needs_step
from ..tree_kinds.leaf_models import predict_leaf
from ..tree_kinds.regression import learn_at
from ..tree_kinds.state import I_NFEAT, TreeState
from ..tree_kinds.structure import route

_LF_SK = TreeState._fields.index("lf_sketch")  # the leaf sketches' field (a float one)


# ------------------------------------------------------------------------------------------------
# OnlineQRF: copy each row's leaf sketch, then query the mixture of the trees' leaf sketches
@entry(nogil=True, _nrt=False)
def sketch_tree_pass(A, t, X, y, w, start, learn, P, gbuf, gpos, goff, glv):
    """Tree ``t``: ``P[i]`` its prediction for row i; a copy of the sketch of the leaf row i
    reaches (its retained items appended to ``gbuf`` at ``goff[i]``, its level row in
    ``glv[i]``), both taken before learning row i (with weight ``w[i]``, when ``learn``).  Stops
    before a row when the tree or ``gbuf`` lacks room."""
    st, prm = tree_at(A, t)
    cap = st.lf_sketch.shape[1]
    nfeat = st.ints[I_NFEAT]
    for i in range(start, X.shape[0]):
        if gbuf.shape[0] - gpos[0] < cap or (
            learn and needs_step(prm, w[i]) and not has_room(st, prm)
        ):
            return i
        x = X[i]
        node = route(st, x)
        leaf = st.nd_leaf[node]
        P[i] = predict_leaf(st, prm, leaf, x, nfeat)
        H = st.lf_sketch_levels[leaf, 0]
        for j in range(H + 2):  # level count and boundaries
            glv[i, j] = st.lf_sketch_levels[leaf, j]
        glv[i, LV_N] = st.lf_sketch_levels[leaf, LV_N]
        p = gpos[0]
        goff[i] = p
        for j in range(st.lf_sketch_levels[leaf, 1], cap):
            gbuf[p] = st.lf_sketch[leaf, j]
            p += 1
        gpos[0] = p
        if learn and learn_at(st, prm, node, x, y[i], w[i], P[i]):
            return i + 1
    return X.shape[0]


@kernel(inline="always")
def _gather_runs(bufs, goff, glv, mask, i, meinshausen, buf, rs, re, rw):
    """Copy row i's leaf sketches of the trees with ``mask[t, i]`` into ``buf`` as sorted runs
    (one per level, weights as chosen); returns ``(runs, total weight)``."""
    T = glv.shape[0]
    teff = 0
    for t in range(T):
        if mask[t, i] and glv[t, i, LV_N] > 0:
            teff += 1
    nr = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    nb = 0
    total = 0.0
    for t in range(T):
        nt = glv[t, i, LV_N]
        if not (mask[t, i] and nt > 0):
            continue
        mult = 1.0 / (nt * teff) if meinshausen else 1.0
        nb, nr = append_runs(bufs[t], goff[t, i] - glv[t, i, 1], glv[t, i], mult, buf, nb, rs,
                             re, rw, nr)  # fmt: skip
        total += mult * nt
    return nr, total


@entry(nogil=True)
def mixture_query(bufs, goff, glv, mask, meinshausen, qs, masses, out_q, out_lo, out_hi, r0, r1):
    """For rows ``r0..r1``: quantiles ``qs`` (into ``out_q``) and highest-density intervals of
    the masses ``masses`` (into ``out_lo``, ``out_hi``) of the trees' leaf-sketch mixture.
    ``bufs (T, capacity)``: row t holds tree t's sketch copies (row i's at ``goff[t, i]``; one
    array, so the kernel's type does not depend on the number of trees)."""
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
            out_q[i, k] = runs_quantile_many(buf, rs, re, rw, nr, total, qs[k], hv, cur, heap)
        if masses.shape[0]:
            m = runs_sorted(buf, rs, re, rw, nr, heap, cur, sv, sw)
            for k in range(masses.shape[0]):
                out_lo[i, k], out_hi[i, k] = shortest_interval(sv, sw, m, masses[k])


# ------------------------------------------------------------------------------------------------
# one row, read in place from the leaves
@kernel(inline="always")
def _gather_leaf_runs(A, x, meinshausen, leaves, rs, re, rw):
    """As :func:`_gather_runs` for row ``x``, the runs read in place: ``rs``, ``re`` index
    :func:`~streamforest.tree_kinds.arena.flat_floats` (the leaf sketches' items are not copied)."""
    T = A.lay.shape[0]
    teff = 0
    for t in range(T):
        st, _ = tree_at(A, t)
        leaves[t] = st.nd_leaf[route(st, x)]
        if st.lf_sketch_levels[leaves[t], LV_N] > 0:
            teff += 1
    nr = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    total = 0.0
    for t in range(T):
        st, _ = tree_at(A, t)
        leaf = leaves[t]
        nt = st.lf_sketch_levels[leaf, LV_N]
        if nt <= 0:
            continue
        mult = 1.0 / (nt * teff) if meinshausen else 1.0
        start = float_start(A, t, _LF_SK) + leaf * st.lf_sketch.shape[1]
        nr = level_runs(st.lf_sketch_levels[leaf], start, mult, rs, re, rw, nr)
        total += mult * nt
    return nr, total


@entry(nogil=True, _nrt=False)
def query_one_h(H, kind, Q, meinshausen, qs, masses, out_q, out_lo, out_hi):
    """:func:`query_one` of an engine handle ``H`` (its arena and row) and a handle ``Q`` of the
    scratch arrays (``leaves`` to ``sw``, in that order; see :mod:`streamforest.engine.handle`)."""
    A, _, x, _, _, _, _, _ = engine_views(H, kind)
    query_one(A, x, meinshausen, qs, masses, out_q, out_lo, out_hi, h1(Q, 0, np.int64),
              h1(Q, 2, np.int64), h1(Q, 4, np.int64), h1(Q, 6, np.float64), h1(Q, 8, np.int64),
              h1(Q, 10, np.float64), h1(Q, 12, np.int64), h1(Q, 14, np.float64),
              h1(Q, 16, np.float64))  # fmt: skip


@entry(nogil=True, _nrt=False)
def interval_one_h(H, kind, Q, meinshausen, qs, masses, out_q, out_lo, out_hi):
    """``(lower, upper)`` of one level: :func:`query_one_h` with two quantiles ``qs`` (an
    equal-tailed interval) or one mass (a highest-density one), a missing bound (NaN: no data)
    made infinite."""
    query_one_h(H, kind, Q, meinshausen, qs, masses, out_q, out_lo, out_hi)
    if qs.shape[0]:
        lo, hi = out_q[0], out_q[1]
    else:
        lo, hi = out_lo[0], out_hi[0]
    if lo != lo:
        lo = -np.inf
    if hi != hi:
        hi = np.inf
    return lo, hi


@entry(nogil=True, _nrt=False)
def interval_one_hp(H, kind, Q, P, meinshausen):
    """:func:`interval_one_h` with the arrays of its level packed in a third handle ``P``
    (``qs``, ``masses``, ``out_q``, ``out_lo``, ``out_hi``, in that order): OnlineQRF's
    per-example interval, whose level arrays are packed once per level (a call then unboxes
    three arrays, not eight)."""
    f = np.float64
    return interval_one_h(H, kind, Q, meinshausen, h1(P, 0, f), h1(P, 2, f), h1(P, 4, f),
                          h1(P, 6, f), h1(P, 8, f))  # fmt: skip


@entry(nogil=True, _nrt=False)
def query_one(A, x, meinshausen, qs, masses, out_q, out_lo, out_hi, leaves, rs, re, rw, heap, hv,
              cur, sv, sw):  # fmt: skip
    """For one row ``x``: quantiles ``qs`` (into ``out_q``) and highest-density intervals of the
    masses (into ``out_lo``, ``out_hi``) of the mixture of the trees' leaf sketches, read in
    place; the same values as :func:`mixture_query` on copies.  The rest are scratch arrays
    (``sv``, ``sw``: ``n_trees`` times a leaf sketch's capacity; ``rs``, ``re``, ``rw``,
    ``heap``, ``hv``, ``cur``: ``n_trees * (LV_WIDTH - 3)``; ``leaves``: ``n_trees``)."""
    nr, total = _gather_leaf_runs(A, x, meinshausen, leaves, rs, re, rw)
    items = flat_floats(A)
    for k in range(qs.shape[0]):
        out_q[k] = runs_quantile_many(items, rs, re, rw, nr, total, qs[k], hv, cur, heap)
    if masses.shape[0]:
        m = runs_sorted(items, rs, re, rw, nr, heap, cur, sv, sw)
        for k in range(masses.shape[0]):
            out_lo[k], out_hi[k] = shortest_interval(sv, sw, m, masses[k])
