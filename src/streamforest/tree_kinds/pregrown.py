"""Pre-grown random trees of ABORF (Seah's thesis, ch. 6, §6.2.1 and Algorithms 6.1-6.3).

A split rule of the compiled tree (``TreeParams.split_rule == SPLIT_PREGROWN``): the tree is a
balanced binary tree of depth ``Q`` (``TreeParams.max_depth``) built when it is created, before
any data, and its structure never changes; learning happens in its ``2**Q`` leaves (linear models)
and in the tree's evidence weight.

**Building** (:func:`build_pregrown`, thesis §6.2.1).  ``M`` points uniform in ``[0, 1]^D`` (``D``
the features known when the tree is created; ``M`` is ``TreeParams.mc_points``, see
:func:`mc_point_count`) are drawn from the tree's generator and passed down level by level.  Each
split node gets the centre of mass ``c`` of the points that reach it (Monte Carlo estimate of the
centre of its cell; a node no point reaches takes its parent's centre) and one split through it:

- *projection* (``oblique``, the thesis' choice): ``tau_j ~ U[-1, 1]`` for each numeric feature,
  ``u = tau / |tau|``; ``x`` goes left when ``u . x <= u . c`` (eqs. 6.1-6.5);
- *axis-aligned* (``oblique=False``, the thesis' univariate comparison, Table 6.6): a numeric
  feature ``f`` drawn uniformly, ``x_f <= c_f``;
- *nominal* (thesis: "randomly assigning categories to each side of the split"): with
  probability ``D_nominal / D`` the node splits on a nominal feature drawn uniformly; each
  category goes to a fixed random side, a hash of the node's salt and the category code
  (:func:`~streamforest.tree_kinds.extra_split.cat_goes_left`, as ATSER's nominal candidates), so
  categories first seen later get a side too.  Monte Carlo points go to a random side (a hash of
  the salt and the point's index), as a random half of the categories would send them.

**Scaling** (eq. 6.6): the tree keeps the running min and max of each numeric feature over the
examples it learnt (``TreeState.ft_minmax``) and routes ``(x - min) / (max - min)``.  The range is
extended by an example *after* it is learnt, so the prediction made before learning a row is the
one :func:`route` gives for it at that moment (the thesis scales with the example included; it
differs only for an example outside the range seen so far, which is routed with a scaled value
outside ``[0, 1]`` instead of at its edge).

A value beyond ``HUGE_X`` (1e100, missing to the leaf models) extends no range: one row with a
feature at 1e300 squashed every later row's scaled value of that feature to 0, and the trees'
routing with it, for good.  Such a value is still routed as it is (far out on its side; a scaled
value that overflows to infinity, or a projection that becomes NaN, sends the row to one side: a
routing, never a prediction, that is not finite).

**Missing values and later features**: a missing value, or a feature whose range is still
unknown (fewer than two distinct values), takes the coordinate of the node's centre, so it
pushes neither way (an axis-aligned node then sends the row left: ``c_f <= c_f``); a missing
nominal value goes to a side drawn when the tree was built.  Features that emerge after the tree
was built have weight 0 in every projection and are never split on; the leaf models use them.

**Evidence** (Algorithm 6.3, leaf-level ``rho``): for the example's leaf, with ``e = y - y_hat``
(the tree's prediction before learning), ``n <- gamma n + w``, ``S <- gamma S + w e**2``,
``rho = n / S`` (eq. 6.54; the algorithm's listing prints ``e**2 / S``, which does not estimate
the noise precision the derivation needs), ``e_T <- gamma_T e_T + w rho e**2 / 2``, and the log of
the scaling term ``b_T`` replaces the leaf's previous ``(n - D) / 2 log rho`` by the new one.  The
tree's log weight is ``(-e_T + log b_T) / |leaves|`` (the power likelihood ``1 / |Omega_T|``); the
forest's prediction is the mean of the trees' predictions weighted by ``exp`` of it, normalised
(Algorithm 6.1, line 7).  ``D`` is the number of features known when the leaf learns.  This is
the leaf level of ``rho`` that Algorithm 6.3 lists; the thesis' tables use the ensemble level
(one ``rho`` from every tree's errors, §6.5.1), which makes each tree's weight depend on the
other trees' errors row by row, while the engine runs every tree on its own.  An example that
reaches an empty leaf only fades ``e_T``: the leaf made no prediction (its 0 is no estimate, and
counted an error of the targets' own size: with ``y`` offset by 1e6, the first rows of each leaf
outweighed every later error, and the forest's error rose by half).

**Bayesian leaves** (``leaf_model == LEAF_BAYES``, thesis §6.2.1-6.2.2, see
:mod:`streamforest.tree_kinds.leaf_models`): the tree's evidence is its marginal likelihood, kept as
the faded sum of the log posterior predictive densities of the examples it learnt, each computed
by its leaf before learning it: ``e_T <- gamma_T e_T - w log p(y | x, leaf)``, log weight ``-e_T /
|leaves|`` (with ``gamma = gamma_T = 1`` the sum is the log of eq. 6.21, the product of the
leaves' evidences, by the chain rule; the thesis' eq. 6.38 mixes the evidence itself with weight
``gamma_T / (1 + gamma_T)``, about 1/2 per example, where this fades its log as Algorithm 6.3
does); a row reaching an empty leaf adds no term, as above.
"""

from __future__ import annotations

import numpy as np

from ..compiled import entry, kernel
from ..rng import next_below, next_float
from ..sketches.kll import kll_reset
from .arena import tree_state
from .extra_split import cat_goes_left
from .leaf_models import HUGE_X
from .state import (
    EV_ERR,
    EV_LOGB,
    EV_LOGW,
    I_LEAF_HW,
    I_NFEAT,
    I_NLEAVES,
    I_NNODES,
    I_NSPLITS,
    LEAF_BAYES,
    LEV_N,
    LEV_SSE,
    LEV_TERM,
    MM_INV,
    MM_MAX,
    MM_MIN,
    NODE_AXIS,
    NODE_PROJ,
    NODE_SALT,
    S_W,
)

MAX_DEPTH = 16
MC_CAP = 1 << 16  # at most this many Monte Carlo points ...
MC_FLOATS = 1 << 22  # ... and points * features (32 MB of coordinates while building)
_SALT_RANGE = 1 << 52
_TINY = 1e-300  # floor of a leaf's faded squared error (log rho stays finite)


def mc_point_count(n_features: int, depth: int) -> int:
    """Monte Carlo points that place the node centres of a tree of ``depth`` on ``n_features``
    features: the thesis' ``3 * 2**(D - 1)``, at least ``2**(depth + 1)`` (about four points per
    deepest split node; for small ``D`` the thesis' count leaves most deep nodes without a point),
    capped at ``2**16`` and at ``2**22 / D`` coordinates (the thesis' count doubles with every
    feature), but never below that floor."""
    floor = 1 << (depth + 1)
    thesis = 3 << (n_features - 1) if n_features <= 40 else 1 << 42
    cap = max(floor, min(MC_CAP, MC_FLOATS // max(1, n_features)))
    return int(min(max(thesis, floor), cap))


def pregrown_size(depth: int) -> tuple[int, int]:
    """``(nodes, leaves)`` of the balanced tree of ``depth``."""
    return (1 << (depth + 1)) - 1, 1 << depth


# ------------------------------------------------------------------------------------------------
# building
@entry
def draw_points(rng, m, d):
    """The ``(m, d)`` Monte Carlo points, uniform in ``[0, 1]^d``, drawn row by row from ``rng``
    (advanced): the first draws of a pre-grown tree's generator."""
    pts = np.empty((m, d))
    for i in range(m):
        for j in range(d):
            pts[i, j] = next_float(rng)
    return pts


@kernel
def _point_goes_left(st, node, pts, i):
    kind = st.nd_cat_len[node]
    if kind == NODE_PROJ:
        s = 0.0
        for j in range(pts.shape[1]):
            s += st.nd_proj[node, j] * pts[i, j]
        return s <= st.nd_thr[node]
    if kind == NODE_SALT:
        return cat_goes_left(st.nd_thr[node], np.float64(i))
    return pts[i, st.nd_feat[node]] <= st.nd_thr[node]


@kernel
def _draw_split(st, prm, node, d):
    """Node ``node``'s split through its centre ``nd_centre[node]``."""
    rng = st.rng
    ctr = st.nd_centre
    f = next_below(rng, d)
    st.nd_feat[node] = f
    st.nd_miss_left[node] = 1
    if st.ft_nominal[f]:
        st.nd_cat_len[node] = NODE_SALT
        st.nd_thr[node] = np.float64(next_below(rng, _SALT_RANGE))
        st.nd_miss_left[node] = 1 if next_float(rng) < 0.5 else 0
        return
    if prm.oblique == 0:
        # f is uniform among the numeric features, given that it is one
        st.nd_cat_len[node] = NODE_AXIS
        st.nd_thr[node] = ctr[node, f]
        return
    st.nd_cat_len[node] = NODE_PROJ
    norm = 0.0
    while norm == 0.0:
        for j in range(d):
            t = 0.0
            if not st.ft_nominal[j]:
                t = 2.0 * next_float(rng) - 1.0
            st.nd_proj[node, j] = t
            norm += t * t
    norm = np.sqrt(norm)
    thr = 0.0
    for j in range(d):  # the sum child_pregrown makes for a row at the centre: it goes left
        u = st.nd_proj[node, j] / norm
        st.nd_proj[node, j] = u
        thr += u * ctr[node, j]
    st.nd_thr[node] = thr


@kernel
def build_pregrown(st, prm):
    """Grow the balanced tree of depth ``prm.max_depth`` in heap order (node k's children are
    ``2k + 1`` and ``2k + 2``; leaf slot ``s`` is node ``2**Q - 1 + s``), its leaves empty."""
    q = prm.max_depth
    d = st.ints[I_NFEAT]
    m = prm.mc_points
    pts = draw_points(st.rng, m, d)
    pos = np.zeros(m, np.int64)
    width_max = 1 << q
    sums = np.zeros((width_max, d))
    cnt = np.zeros(width_max, np.int64)
    for depth in range(q + 1):
        width = 1 << depth
        first = width - 1
        sums[:width, :] = 0.0
        cnt[:width] = 0
        for i in range(m):
            k = pos[i] - first
            cnt[k] += 1
            for j in range(d):
                sums[k, j] += pts[i, j]
        for k in range(width):
            node = first + k
            st.nd_depth[node] = depth
            if cnt[k] > 0:
                for j in range(d):
                    st.nd_centre[node, j] = sums[k, j] / cnt[k]
            elif node == 0:
                st.nd_centre[node, :d] = 0.5
            else:
                parent = (node - 1) // 2
                for j in range(d):
                    st.nd_centre[node, j] = st.nd_centre[parent, j]
            if depth < q:
                _draw_split(st, prm, node, d)
                st.nd_left[node] = 2 * node + 1
                st.nd_right[node] = 2 * node + 2
                st.nd_leaf[node] = -1
        if depth < q:
            for i in range(m):
                node = pos[i]
                pos[i] = 2 * node + (1 if _point_goes_left(st, node, pts, i) else 2)
    n_leaves = 1 << q
    first = n_leaves - 1
    for s in range(n_leaves):
        node = first + s
        st.nd_feat[node] = -1
        st.nd_left[node] = -1
        st.nd_right[node] = -1
        st.nd_leaf[node] = s
        st.nd_alt[node] = -1
        st.lf_node[s] = node
        st.lf_active[s] = 0  # no observers, no split attempts
        st.lf_mask[s, :] = 0
        if prm.sketch_k > 0:
            kll_reset(st.lf_sketch, st.lf_sketch_levels, s)
    st.ints[I_NNODES] = 2 * n_leaves - 1
    st.ints[I_NLEAVES] = n_leaves
    st.ints[I_LEAF_HW] = n_leaves
    st.ints[I_NSPLITS] = n_leaves - 1


# ------------------------------------------------------------------------------------------------
# routing and learning
@kernel(inline="always")
def _scaled(st, j, v):
    """Feature j's value ``v`` min-max scaled, NaN when missing or its range is unknown."""
    inv = st.ft_minmax[j, MM_INV]
    if np.isnan(v) or inv == 0.0:
        return np.nan
    return (v - st.ft_minmax[j, MM_MIN]) * inv


@kernel
def child_pregrown(st, node, x):
    """The child of split node ``node`` of a pre-grown tree that row ``x`` goes to."""
    kind = st.nd_cat_len[node]
    if kind == NODE_PROJ:
        # branch-free (a weight of 0 adds 0: inputs are finite, inf is refused): vectorises
        mm = st.ft_minmax
        u = st.nd_proj
        c = st.nd_centre
        s = 0.0
        for j in range(min(x.shape[0], u.shape[1])):
            inv = mm[j, MM_INV]
            z = (x[j] - mm[j, MM_MIN]) * inv
            s += u[node, j] * (z if (inv != 0.0 and z == z) else c[node, j])
        go_left = s <= st.nd_thr[node]
    else:
        f = st.nd_feat[node]
        v = x[f] if f < x.shape[0] else np.nan
        if kind == NODE_SALT:
            if np.isnan(v):
                go_left = st.nd_miss_left[node] == 1
            else:
                go_left = cat_goes_left(st.nd_thr[node], v)
        else:
            z = _scaled(st, f, v)
            go_left = np.isnan(z) or z <= st.nd_thr[node]
    return st.nd_left[node] if go_left else st.nd_right[node]


@kernel
def update_scaling(st, x, nfeat):
    """Extend each numeric feature's range with row ``x`` (after the tree learnt it); a missing
    value (NaN, or beyond ``HUGE_X``) extends nothing."""
    mm = st.ft_minmax
    for j in range(nfeat):
        v = x[j]
        if not abs(v) <= HUGE_X or st.ft_nominal[j]:
            continue
        lo = mm[j, MM_MIN]
        hi = mm[j, MM_MAX]
        if not (v < lo or v > hi or np.isnan(lo)):
            continue
        if np.isnan(lo) or v < lo:
            lo = v
            mm[j, MM_MIN] = v
        if np.isnan(hi) or v > hi:
            hi = v
            mm[j, MM_MAX] = v
        mm[j, MM_INV] = 1.0 / (hi - lo) if hi > lo else 0.0


@kernel
def evidence_update(st, prm, leaf, y, w, pred, nfeat):
    """Algorithm 6.3 for an example ``(y, w)`` that reached ``leaf``, ``pred`` the tree's
    prediction for it before learning (see the module docstring).  Bayesian leaves: the tree's
    faded log evidence, ``e_T <- gamma_T e_T - w log p(y | x, the leaf's posterior before)``
    (the log predictive density the leaf computed), log weight ``-e_T / |leaves|``."""
    ev = st.evidence
    le = st.lf_evidence
    if st.lf_stat[leaf, S_W] <= w:  # the leaf was empty: it made no prediction, no error
        ev[EV_ERR] = prm.ev_fade * ev[EV_ERR]
        ev[EV_LOGW] = (ev[EV_LOGB] - ev[EV_ERR]) / st.ints[I_NLEAVES]
        return
    if prm.leaf_model == LEAF_BAYES:  # the leaf left its log predictive density of y there
        ev[EV_ERR] = prm.ev_fade * ev[EV_ERR] - w * le[leaf, LEV_TERM]
        ev[EV_LOGW] = -ev[EV_ERR] / st.ints[I_NLEAVES]
        return
    e2 = (y - pred) ** 2
    g = prm.ev_decay
    n = g * le[leaf, LEV_N] + w
    sse = max(g * le[leaf, LEV_SSE] + w * e2, _TINY)
    le[leaf, LEV_N] = n
    le[leaf, LEV_SSE] = sse
    term = 0.5 * (n - nfeat) * (np.log(n) - np.log(sse))
    ev[EV_LOGB] += term - le[leaf, LEV_TERM]
    le[leaf, LEV_TERM] = term
    ev[EV_ERR] = prm.ev_fade * ev[EV_ERR] + 0.5 * w * n * e2 / sse
    ev[EV_LOGW] = (ev[EV_LOGB] - ev[EV_ERR]) / st.ints[I_NLEAVES]


# ------------------------------------------------------------------------------------------------
# the forest's weights
@entry(nogil=True, _nrt=False)
def log_weights(A, out):
    """Each tree's log evidence weight (``0`` for trees without evidence), into ``out``."""
    for t in range(A.lay.shape[0]):
        out[t] = tree_state(A, t).evidence[EV_LOGW]


@kernel(inline="always")
def weighted_mean(lw, p):
    """``sum_t w_t p_t`` with ``w = softmax(lw)`` (``lw`` and ``p`` of the same length), summed
    as ``p_0 + sum_t w_t (p_t - p_0)``: equal predictions give exactly that value, and an
    offset common to them cancels before the weights multiply."""
    top = lw[0]
    for t in range(1, lw.shape[0]):
        top = max(top, lw[t])
    ref = p[0]
    num = 0.0
    den = 0.0
    for t in range(lw.shape[0]):
        a = np.exp(lw[t] - top)
        num += a * (p[t] - ref)
        den += a
    return ref + num / den


@kernel(inline="always")
def weighted_mean_at(A, p):
    """:func:`weighted_mean` of the tree predictions ``p`` with the log weights of the trees of
    arena ``A`` (read twice, no scratch: compiled callers may not allocate), summed as there."""
    T = A.lay.shape[0]
    top = tree_state(A, 0).evidence[EV_LOGW]
    for t in range(1, T):
        top = max(top, tree_state(A, t).evidence[EV_LOGW])
    ref = p[0]
    num = 0.0
    den = 0.0
    for t in range(T):
        a = np.exp(tree_state(A, t).evidence[EV_LOGW] - top)
        num += a * (p[t] - ref)
        den += a
    return ref + num / den


@kernel
def route_pregrown(st, node, x):
    while st.nd_feat[node] >= 0:
        node = child_pregrown(st, node, x)
    return node


@kernel
def room_pregrown(st, prm):
    """A pre-grown tree (grown before data, no observers) never needs room."""
    return True
