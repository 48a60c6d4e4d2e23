"""Compiled learning and prediction of classification trees (``TreeParams.task ==
TASK_CLASSIFICATION``): ACTSER (Seah's thesis, ch. 5) and the VFDT reference tree.

The tree is the regression tree's structure (:mod:`streamforest.trees._kernels`: routing, node and
leaf pools, the extremely randomised split's candidates, alternate subtrees, room checks); what
differs lives here, chosen by :class:`~streamforest.trees._state.TreeParams` like every tree kind:

- **y** is a class index ``0 .. K-1`` (a float in the learning loops); ``K`` is the width of the
  class fields (``lf_cc`` ...), widened by the engine when a new class appears.
- **Leaf statistics**: class weights ``lf_cc``; per feature and class the weight, mean and m2 of
  the values (``lf_gs``; for a nominal feature only the weight of present values); per nominal
  feature, category and class a weight (``lf_ncc``, one row per *nominal* feature: the ``s``-th
  nominal feature has row ``s``, see :func:`nominal_slot`; a numeric feature has none) and the
  number of categories seen.
  ``lf_stat`` keeps the statistic of the class index (its weight drives the grace period,
  ``m2 > 0`` means the leaf is impure).
- **Leaf models** (``leaf_model``): majority class (``LEAF_MC``), naive Bayes (``LEAF_NB``:
  Gaussian for numeric features, Laplace-smoothed counts for nominal ones) or adaptive naive
  Bayes (``LEAF_NBA``, Holmes et al. 2005): each leaf counts the weight each of the two predicted
  correctly (``lf_err``, before learning the example) and answers with the better one (ties:
  majority class).  The learning step needs naive Bayes' class at every such leaf; it takes it
  from :func:`_nb_class_fast` (a few logarithms per class instead of one per feature and class,
  certified equal to the per-feature loop's class, which runs when it cannot certify), so the
  model is exactly the one the per-feature loop learns.
- **Split rules**: ``SPLIT_EXTRA`` (ACTSER, thesis §5.2.1): the same two stages as ATSER's
  (:mod:`streamforest.trees.extra_split` draws the candidates), each candidate keeping the class
  weights of its two sides (``lf_xcc``), scored by information gain.  ``SPLIT_GAUSS`` (VFDT):
  ten thresholds between each numeric feature's smallest and largest value, scored by the
  information gain of the class weights each side would get under the per-class Gaussians of
  ``lf_gs`` (River's ``GaussianSplitter``), and one-versus-rest splits of nominal features from
  ``lf_ncc``: the naive Bayes statistics serve both, no attribute observer.  Both split when
  ``IG(best) - IG(second) > eps`` or, once ``eps < tau``, on the best (VFDT) or on one drawn among
  the candidates within ``eps`` of it (ACTSER), with ``eps = sqrt(R^2 ln(1/delta) / (2 n))``,
  ``R = log2(classes seen at the leaf)``.  Children start with the class weights of their side
  and empty naive Bayes statistics.
- **Change** (thesis §5.2.3, Algorithms 5.2-5.3; ``alt_lambda > 0``): every split node runs the
  Page-Hinkley test on the 0/1 errors of the tree's predictions for the examples that pass it,
  normalised by ``sqrt(p (1 - p))`` (``p`` the node's error rate, frozen after ``ph_gamma``
  examples).  When it fires the node grows an alternate subtree; after ``alt_period / 2``
  examples each example where exactly one of the two is right counts for it (McNemar's ``b``,
  ``c``); every ``alt_period`` examples ``chi2 = (b - c)^2 / (b + c) > alt_chi2`` keeps the better
  one.  After ``10 alt_period`` examples without a decision the alternate is adopted when it is
  not worse (``b >= c``) and discarded otherwise: the thesis adopts an undecided alternate
  ("neither tree is found to be better") and says a new tree "will only be adopted if it is not
  worse than the original"; its detector (unit-variance errors, ``lambda = 50``,
  ``alpha = 0.005``) fires about every 3,000 examples a node sees on a stationary stream, so the
  undecided case is common and adopting every one of them lost accuracy (ACTSER-Seeds, 10
  members, 50k rows, 3 seeds: SEA 0.8570 -> 0.8594, Agrawal 0.9303 either way, RandomRBF drift
  0.5942 either way).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import entry, kernel
from ..rng import next_below
from ..stats import welford_update
from ._kernels import (
    _adopt_alternate,
    _child,
    _discard_alternate,
    _freeze,
    _grow_children,
    _room,
    _start_alternate,
    route,
    route_from,
)
from ._state import (
    CPH_DBAR,
    CPH_MIN,
    CPH_N,
    CPH_Q,
    CPH_SD,
    CPH_SUM,
    I_CAT_USED,
    I_NATTEMPTS,
    I_NFEAT,
    I_NLEAVES,
    I_NSEEN,
    LEAF_MC,
    LEAF_NB,
    LEAF_NBA,
    MC_B,
    MC_C,
    MC_SEEN,
    S_M2,
    S_W,
    SPLIT_GAUSS,
    XB_W,
    XB_Y,
    XC_THR,
)
from .extra_split import cat_goes_left, extra_observe
from .tree_kind import kind_hook

LOG_2PI = math.log(2.0 * math.pi)
N_THRESHOLDS = 10  # SPLIT_GAUSS: candidate thresholds per numeric feature (River's n_splits)
VAR_FLOOR = 1e-9  # relative floor of a naive Bayes variance (a constant feature in a class)
# a nominal feature's lf_gs row uses only the weights (3 k); the mean slot of class 0 counts the
# categories seen at the leaf (the Laplace smoothing's denominator: a property of the leaf's
# examples, so the same however the stream was cut into chunks)
GS_NCATS = 1


# ------------------------------------------------------------------------------------------------
# leaf models
@kernel(inline="always")
def _n_cats(st):
    K = st.lf_cc.shape[1]
    return st.lf_ncc.shape[2] // K if K > 0 else 0


@kernel(inline="always")
def nominal_slot(st, j):
    """The row of nominal feature ``j`` in ``lf_ncc``: the nominal features before it.  The
    feature loops count it as they go; a row past ``lf_ncc``'s (a feature the tree has not been
    widened to) holds nothing."""
    s = np.int64(0)  # not a literal (see "Literal constants" in trees._kernels)
    for i in range(j):
        s += st.ft_nominal[i] != 0
    return s


@kernel(inline="always")
def _ncc(st, leaf, slot, i):
    """``lf_ncc[leaf, slot, i]``, 0 for a slot the tree does not hold."""
    return st.lf_ncc[leaf, slot, i] if slot < st.lf_ncc.shape[1] else 0.0


@kernel(inline="always")
def _nb_score(st, leaf, x, nfeat, k, total):
    """``log p(k) + sum_j log p(x_j | k)`` at ``leaf`` (``-inf`` for a class without weight)."""
    ck = st.lf_cc[leaf, k]
    if ck <= 0.0:
        return -np.inf
    s = np.log(ck / total)
    K = st.lf_cc.shape[1]
    C = _n_cats(st)
    gs = st.lf_gs
    slot = 0
    for j in range(nfeat):
        nominal = st.ft_nominal[j] != 0
        slot += nominal
        v = x[j]
        if np.isnan(v):
            continue
        wk = gs[leaf, j, 3 * k]
        if nominal:
            code = np.int64(v)
            n = _ncc(st, leaf, slot - 1, code * K + k) if 0 <= code < C else 0.0
            s += np.log((n + 1.0) / (wk + max(gs[leaf, j, GS_NCATS], 1.0)))
        elif wk > 0.0:
            mean = gs[leaf, j, 3 * k + 1]
            var = max(gs[leaf, j, 3 * k + 2] / wk, VAR_FLOOR * (1.0 + mean * mean))
            d = v - mean
            s -= 0.5 * (d * d / var + np.log(var) + LOG_2PI)
    return s


@kernel(inline="always")
def _class_counts(st, leaf):
    """``(total weight, majority class, classes present)`` of ``leaf``'s class weights (the
    first of the largest weights: ties go to the lower class)."""
    total = 0.0
    mc = np.int64(0)  # not a literal (see "Literal constants" in trees._kernels)
    best = -1.0
    present = 0
    for k in range(st.lf_cc.shape[1]):
        c = st.lf_cc[leaf, k]
        total += c
        present += c > 0.0
        if c > best:
            best = c
            mc = k
    return total, mc, present


@kernel
def leaf_votes(st, prm, leaf, x, nfeat):
    """``(majority class, naive Bayes class)`` at ``leaf`` (the majority class twice for
    majority-class leaves; class 0 at an empty leaf)."""
    total, mc, present = _class_counts(st, leaf)
    if prm.leaf_model == LEAF_MC or present <= 1:  # one class: naive Bayes agrees
        return mc, mc
    nb = _nb_class_fast(st, leaf, x, nfeat, total)
    if nb >= 0:
        return mc, nb
    return mc, _nb_class(st, leaf, x, nfeat, total, np.int64(mc))  # never a literal callee


@kernel
def _nb_class(st, leaf, x, nfeat, total, mc):
    """The naive Bayes class at ``leaf``: the first class of largest :func:`_nb_score` (``mc``
    when every class has weight 0)."""
    nb = mc
    bs = -np.inf
    for k in range(st.lf_cc.shape[1]):
        sc = _nb_score(st, leaf, x, nfeat, k, total)
        if sc > bs:
            bs = sc
            nb = k
    return nb


@kernel(inline="always")
def _nb_score_fast(st, leaf, x, nfeat, k, lc):
    """``(score, margin)``: :func:`_nb_score` of class ``k`` (``lc = log p(k)``) with three or
    four logarithms instead of one per feature, and a bound on its rounding difference from
    :func:`_nb_score` (see :func:`_nb_class_fast`)."""
    K = st.lf_cc.shape[1]
    C = _n_cats(st)
    gs = st.lf_gs
    q = 0.0
    pbig = 1.0
    psmall = 1.0
    pnom = 1.0
    lbig = 0.0
    lsmall = 0.0
    lnom = 0.0
    nnum = 0
    nnom = 0
    slot = 0
    for j in range(nfeat):
        nominal = st.ft_nominal[j] != 0
        slot += nominal
        v = x[j]
        if np.isnan(v):
            continue
        wk = gs[leaf, j, 3 * k]
        if nominal:
            code = np.int64(v)
            n = _ncc(st, leaf, slot - 1, code * K + k) if 0 <= code < C else 0.0
            pnom *= (n + 1.0) / (wk + max(gs[leaf, j, GS_NCATS], 1.0))  # in (0, 1]
            if pnom < 1e-150:
                lnom += np.log(pnom)
                pnom = 1.0
            nnom += 1
        elif wk > 0.0:
            mean = gs[leaf, j, 3 * k + 1]
            var = max(gs[leaf, j, 3 * k + 2] / wk, VAR_FLOOR * (1.0 + mean * mean))
            d = v - mean
            q += d * d / var
            if var >= 1.0:
                pbig *= var
                if pbig > 1e150:
                    lbig += np.log(pbig)
                    pbig = 1.0
            else:
                psmall *= var
                if psmall < 1e-150:
                    lsmall += np.log(psmall)
                    psmall = 1.0
            nnum += 1
    lbig += np.log(pbig)
    lsmall += np.log(psmall)
    lnom += np.log(pnom)
    f = lc + lnom - 0.5 * (q + lbig + lsmall + nnum * LOG_2PI)
    mag = 1.0 + abs(lc) - lnom + q + lbig - lsmall + nnum * LOG_2PI
    return f, (nnum + nnom + 8) * 1e-13 * mag


@kernel
def _nb_class_fast(st, leaf, x, nfeat, total):
    """:func:`_nb_class` with three or four logarithms per class instead of one per feature, or
    -1 when it cannot certify the answer.

    The learning step needs only the naive Bayes *class* (for the adaptive leaf's counts), not
    its probabilities.  Per class the feature terms are gathered as a sum of ``d^2 / var`` and
    products (the variances >= 1, those < 1, the nominal likelihoods), each product flushed into
    a logarithm before it could leave [1e-150, 1e150] (no overflow, no subnormal):
    :func:`_nb_score_fast`.  The score then differs from :func:`_nb_score`'s only by rounding:
    with ``F`` terms and ``M`` a bound on the sum of their magnitudes (the variances' logarithms
    are bounded by ``log P_ge1 - log P_lt1``), each is within ``(3 F + 10) u M`` of the exact
    value of the same formula (unit roundoff ``u`` = 1.1e-16), and the margin used,
    ``(F + 8) 1e-13 M``, is over 100 times their sum.  The best class is returned only when its
    score minus its margin beats every other class's score plus its margin:
    :func:`_nb_score`'s first maximum is then that class, so the model's state and predictions
    are exactly those of the per-feature loop (which runs otherwise: ties and near-ties, a
    non-finite score)."""
    K = st.lf_cc.shape[1]
    best = np.int64(-1)  # not a literal (see "Literal constants" in trees._kernels)
    best_lo = -np.inf
    best_f = -np.inf
    u1 = -np.inf  # largest and second largest score + margin, and the class of the largest
    u2 = -np.inf
    u1k = -1
    for k in range(K):
        ck = st.lf_cc[leaf, k]
        if ck <= 0.0:
            continue
        f, tol = _nb_score_fast(st, leaf, x, nfeat, k, np.log(ck / total))
        if not (np.isfinite(f) and np.isfinite(tol)):
            return -1
        best, best_f, best_lo, u1, u2, u1k = _certify_step(k, f, tol, best, best_f, best_lo, u1,
                                                           u2, u1k)  # fmt: skip
    return best if _certified(best, best_lo, u1, u2, u1k) else -1


@kernel(inline="always")
def _normalise_scores(out, K, top):
    """``out[:K]``, log scores whose largest is ``top``, turned into probabilities in place."""
    s = 0.0
    for k in range(K):
        out[k] = np.exp(out[k] - top) if out[k] > -np.inf else 0.0
        s += out[k]
    for k in range(K):
        out[k] /= s


@kernel(inline="always")
def _certify_step(k, f, tol, best, best_f, best_lo, u1, u2, u1k):
    """Class ``k``'s score ``f`` (margin ``tol``) into the running state of the certification
    (:func:`_nb_class_fast`): the best class so far, its score and its score minus margin, the
    largest and second largest score plus margin and the class of the largest."""
    if f > best_f:
        best_f = f
        best_lo = f - tol
        best = k
    hi = f + tol
    if hi > u1:
        u2 = u1
        u1 = hi
        u1k = k
    elif hi > u2:
        u2 = hi
    return best, best_f, best_lo, u1, u2, u1k


@kernel(inline="always")
def _certified(best, best_lo, u1, u2, u1k):
    """The best class's score minus margin beats every other class's score plus margin."""
    other = u2 if u1k == best else u1
    return best_lo > other


@kernel(inline="always")
def _uses_nb(st, prm, leaf):
    lm = prm.leaf_model
    return lm == LEAF_NB or (lm == LEAF_NBA and st.lf_err[leaf, 1] > st.lf_err[leaf, 0])


@kernel(inline="always")
def choose(st, prm, leaf, mc, nb):
    """The leaf model's class from the two votes."""
    return nb if _uses_nb(st, prm, leaf) else mc


@kernel
def leaf_proba(st, prm, leaf, x, nfeat, out):
    """Class probabilities at ``leaf`` for row ``x`` into ``out[:K]`` (uniform at an empty
    leaf).  Naive Bayes scores come from :func:`_nb_score_fast` (within about 1e-13 of
    :func:`_nb_score`'s relative to the terms' magnitudes; the per-feature loop when one is not
    finite)."""
    K = st.lf_cc.shape[1]
    total = 0.0
    for k in range(K):
        total += st.lf_cc[leaf, k]
    if total <= 0.0:
        for k in range(K):
            out[k] = 1.0 / K
        return
    if not _uses_nb(st, prm, leaf):
        for k in range(K):
            out[k] = st.lf_cc[leaf, k] / total
        return
    top = -np.inf
    for k in range(K):
        ck = st.lf_cc[leaf, k]
        if ck <= 0.0:
            out[k] = -np.inf
            continue
        f, tol = _nb_score_fast(st, leaf, x, nfeat, k, np.log(ck / total))
        out[k] = f if np.isfinite(f) and np.isfinite(tol) else _nb_score(st, leaf, x, nfeat, k,
                                                                          total)  # fmt: skip
        top = max(top, out[k])
    _normalise_scores(out, K, top)


@kernel
def leaf_proba_votes(st, prm, leaf, x, nfeat, out):
    """:func:`leaf_proba` into ``out[:K]`` and ``(majority class, naive Bayes class or -1)``:
    the naive Bayes class is :func:`leaf_votes`' when the leaf answers with naive Bayes (its
    scores are the ones the probabilities come from, so it costs nothing more), -1 (not
    computed) otherwise.  A per-example prediction keeps the votes for the learning step that
    follows (:func:`learn_step_at`)."""
    K = st.lf_cc.shape[1]
    total, mc, present = _class_counts(st, leaf)
    one = prm.leaf_model == LEAF_MC or present <= 1  # leaf_votes: naive Bayes is mc
    if total <= 0.0:  # as leaf_proba (and leaf_votes: nothing present)
        for k in range(K):
            out[k] = 1.0 / K
        return mc, mc
    if not _uses_nb(st, prm, leaf):
        for k in range(K):
            out[k] = st.lf_cc[leaf, k] / total
        return mc, (mc if one else np.int64(-1))
    # naive Bayes answers: leaf_proba's scores, and _nb_class_fast's choice from the same scores
    top = -np.inf
    nb = np.int64(-1)
    best_lo = -np.inf
    best_f = -np.inf
    u1 = -np.inf
    u2 = -np.inf
    u1k = -1
    certified = True
    for k in range(K):
        ck = st.lf_cc[leaf, k]
        if ck <= 0.0:
            out[k] = -np.inf
            continue
        f, tol = _nb_score_fast(st, leaf, x, nfeat, k, np.log(ck / total))
        if np.isfinite(f) and np.isfinite(tol):
            out[k] = f
            nb, best_f, best_lo, u1, u2, u1k = _certify_step(k, f, tol, nb, best_f, best_lo, u1,
                                                             u2, u1k)  # fmt: skip
        else:
            certified = False
            out[k] = _nb_score(st, leaf, x, nfeat, k, total)
        top = max(top, out[k])
    _normalise_scores(out, K, top)
    if one:
        return mc, mc
    if not (certified and _certified(nb, best_lo, u1, u2, u1k)):
        nb = _nb_class(st, leaf, x, nfeat, total, np.int64(mc))
    return mc, nb


@kernel(inline="always")
def argmax(p, K):
    best = 0
    for k in range(1, K):
        if p[k] > p[best]:
            best = k
    return best


@kernel
def reset_class_leaf(st, leaf):
    """Empty naive Bayes statistics, ranges and adaptive counts of a new leaf (its class weights
    are set by its creator)."""
    for s in range(st.lf_ncc.shape[1]):
        for c in range(st.lf_ncc.shape[2]):
            st.lf_ncc[leaf, s, c] = 0.0
    for j in range(st.lf_gs.shape[1]):
        for c in range(st.lf_gs.shape[2]):
            st.lf_gs[leaf, j, c] = 0.0
        if st.lf_rng.shape[2]:
            st.lf_rng[leaf, j, 0] = np.inf
            st.lf_rng[leaf, j, 1] = -np.inf
    st.lf_err[leaf, 0] = 0.0
    st.lf_err[leaf, 1] = 0.0


@kernel
def init_root_class(st):
    """The class fields of a new tree's root leaf (after :func:`~._kernels.init_root`)."""
    leaf = st.nd_leaf[0]
    for k in range(st.lf_cc.shape[1]):
        st.lf_cc[leaf, k] = 0.0
    reset_class_leaf(st, leaf)


@kernel
def _observe_leaf(st, prm, leaf, x, y, w, nfeat, mc, nb):
    """The leaf's class weight, statistics and adaptive counts learn ``(x, y, w)``."""
    k = np.int64(y)
    if prm.leaf_model == LEAF_NBA:
        if mc == k:
            st.lf_err[leaf, 0] += w
        if nb == k:
            st.lf_err[leaf, 1] += w
    st.lf_cc[leaf, k] += w
    s = st.lf_stat
    s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3] = welford_update(
        s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3], y, w
    )
    if prm.leaf_model == LEAF_MC and prm.split_rule != SPLIT_GAUSS:
        return  # nothing reads the naive Bayes statistics
    K = st.lf_cc.shape[1]
    C = _n_cats(st)
    gs = st.lf_gs
    ranges = st.lf_rng.shape[2] > 0
    slot = 0
    for j in range(nfeat):
        nominal = st.ft_nominal[j] != 0
        slot += nominal
        v = x[j]
        if np.isnan(v):
            continue
        if nominal:
            gs[leaf, j, 3 * k] += w
            code = np.int64(v)
            if 0 <= code < C and slot <= st.lf_ncc.shape[1]:
                seen = 0.0
                for c in range(K):
                    seen += st.lf_ncc[leaf, slot - 1, code * K + c]
                if seen == 0.0:  # a category new at this leaf
                    gs[leaf, j, GS_NCATS] += 1.0
                st.lf_ncc[leaf, slot - 1, code * K + k] += w
            continue
        gw = gs[leaf, j, 3 * k] + w
        d = v - gs[leaf, j, 3 * k + 1]
        gs[leaf, j, 3 * k + 1] += d * w / gw
        gs[leaf, j, 3 * k + 2] += w * d * (v - gs[leaf, j, 3 * k + 1])
        gs[leaf, j, 3 * k] = gw
        if ranges:
            st.lf_rng[leaf, j, 0] = min(st.lf_rng[leaf, j, 0], v)
            st.lf_rng[leaf, j, 1] = max(st.lf_rng[leaf, j, 1], v)


# ------------------------------------------------------------------------------------------------
# information gain
# ``v log2 v`` of the whole numbers below XLX_N, the values the compiled ``v * np.log2(v)``
# gives (both call the C library's log2; tests/test_actser.py checks every entry against
# the compiled expression): class weights are whole numbers with unit sample weights and Poisson
# bagging, so an information gain reads its terms here instead of taking a logarithm each
# (on WISDM's 44 features and 6 classes a split attempt took 792 of them)
XLX_N = 4096
XLX = np.array([0.0] + [float(i) * math.log2(float(i)) for i in range(1, XLX_N)])


@kernel(inline="always")
def _xlx(v):
    """``v log2 v`` (0 for ``v <= 0``): from the table :data:`XLX` for whole ``v < XLX_N``,
    the same value bit for bit."""
    if 0.0 <= v < XLX_N:
        i = np.int64(v)
        if i == v:
            return XLX[i]
    return v * np.log2(v) if v > 0.0 else 0.0


@kernel(inline="always")
def _gain(pw, lw, rw, sp, sl, sr):
    """Information gain of a split from the side weights and the sums ``sum c log2 c`` of the
    class weights of the parent (``P = L + R``) and of each side."""
    return (_xlx(pw) - _xlx(lw) - _xlx(rw) - sp + sl + sr) / pw


@kernel(inline="always")
def _bound(st, prm, leaf):
    """The Hoeffding bound ``eps`` on information gains at ``leaf``."""
    n_seen = 0
    for k in range(st.lf_cc.shape[1]):
        if st.lf_cc[leaf, k] > 0.0:
            n_seen += 1
    r = np.log2(max(n_seen, 2))
    n = st.lf_stat[leaf, S_W] - st.lf_inh[leaf, S_W]
    return np.sqrt(r * r * np.log(1.0 / prm.delta) / (2.0 * n))


@kernel(inline="always")
def _candidate_gain(st, leaf, j, K, min_branch):
    """IG of ACTSER's candidate on feature ``j`` (``-1`` when a side is lighter than
    ``min_branch``)."""
    xcc = st.lf_xcc
    lw = 0.0
    rw = 0.0
    sp = 0.0
    sl = 0.0
    sr = 0.0
    for k in range(K):
        a = xcc[leaf, j, 2 * k]
        b = xcc[leaf, j, 2 * k + 1]
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(a + b)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel(inline="always")
def _side_stat(w, s1, s2):
    """``(w, mean, m2)`` of the class index from ``w``, ``sum k c_k`` and ``sum k^2 c_k``."""
    if w <= 0.0:
        return 0.0, 0.0, 0.0
    m = s1 / w
    return w, m, max(0.0, s2 - w * m * m)


# ------------------------------------------------------------------------------------------------
# ACTSER's split (SPLIT_EXTRA)
@kernel(inline="always")
def _goes_left(st, j, thr, v):
    if st.ft_nominal[j]:
        return cat_goes_left(thr, v)
    return v <= thr


@kernel
def _replay_candidates(st, leaf, nfeat):
    """The candidates just drawn from the buffered examples get their class weights."""
    xcc = st.lf_xcc
    buf = st.lf_buf
    for j in range(nfeat):
        for c in range(xcc.shape[2]):
            xcc[leaf, j, c] = 0.0
        thr = st.lf_xc[leaf, j, XC_THR]
        if np.isnan(thr):
            continue
        for i in range(st.lf_nex[leaf]):
            v = buf[leaf, 2 + j, i]
            if not np.isnan(v):
                k = np.int64(buf[leaf, XB_Y, i])
                side = 0 if _goes_left(st, j, thr, v) else 1
                xcc[leaf, j, 2 * k + side] += buf[leaf, XB_W, i]


@kernel
def _extra_observe(st, prm, leaf, x, y, w, nfeat):
    n = st.lf_nex[leaf]
    if n < prm.m_min:
        extra_observe(st, prm, leaf, x, y, w, nfeat)  # buffers; draws the candidates at m_min
        if st.lf_nex[leaf] == prm.m_min:
            _replay_candidates(st, leaf, nfeat)
        return
    k = np.int64(y)
    for j in range(nfeat):
        thr = st.lf_xc[leaf, j, XC_THR]
        v = x[j]
        if np.isnan(thr) or np.isnan(v):
            continue
        side = 0 if _goes_left(st, j, thr, v) else 1
        st.lf_xcc[leaf, j, 2 * k + side] += w


@kernel
def _choose_extra(st, prm, leaf):
    """The feature of ACTSER's split at ``leaf``, or -1 (see the module docstring).  Each
    candidate's gain is computed once (into the ``ft_spread`` scratch, zeroed again after)."""
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    if st.lf_nex[leaf] < prm.m_min:
        return -1
    K = st.lf_cc.shape[1]
    nfeat = st.ints[I_NFEAT]
    gains = st.ft_spread
    best1 = 0.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal (see "Literal constants" in trees._kernels)
    for j in range(nfeat):
        if np.isnan(st.lf_xc[leaf, j, XC_THR]):
            gains[j] = -np.inf
            continue
        g = _candidate_gain(st, leaf, j, K, prm.min_branch)
        gains[j] = g
        if g > best1:
            best2 = best1
            best1 = g
            f1 = j
        elif g > best2:
            best2 = g
    out = -1
    if f1 >= 0 and best1 > 0.0:
        eps = _bound(st, prm, leaf)
        if best1 - best2 > eps:
            out = f1
        elif eps < prm.tau:
            tied = 0
            for j in range(nfeat):
                if gains[j] >= best1 - eps:
                    tied += 1
            pick = next_below(st.rng, tied)
            out = f1
            for j in range(nfeat):
                if gains[j] >= best1 - eps:
                    if pick == 0:
                        out = j
                        break
                    pick -= 1
    for j in range(nfeat):
        gains[j] = 0.0
    return out


@kernel
def _split_extra(st, prm, leaf, f):
    """Split ``leaf`` on its candidate of feature ``f``; the children start with its sides'
    class weights."""
    K = st.lf_cc.shape[1]
    node = st.lf_node[leaf]
    st.nd_thr[node] = st.lf_xc[leaf, f, XC_THR]
    if st.ft_nominal[f] == 1:
        st.nd_cat_off[node] = 0
        st.nd_cat_len[node] = -1  # categories go to the salt's random sides (route)
        st.nd_cat_nr[node] = 0
    l0 = l1 = l2 = r0 = r1 = r2 = 0.0
    for k in range(K):
        a = st.lf_xcc[leaf, f, 2 * k]
        b = st.lf_xcc[leaf, f, 2 * k + 1]
        l0 += a
        l1 += k * a
        l2 += k * k * a
        r0 += b
        r1 += k * b
        r2 += k * k * b
    lw, lm, lm2 = _side_stat(l0, l1, l2)
    rw, rm, rm2 = _side_stat(r0, r1, r2)
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lm, 0.0, lm2, rw, rm, 0.0, rm2)
    right = st.nd_leaf[st.nd_right[node]]
    for k in range(K):  # the left child keeps the parent's slot, whose candidates are intact
        st.lf_cc[right, k] = st.lf_xcc[leaf, f, 2 * k + 1]
        st.lf_cc[leaf, k] = st.lf_xcc[leaf, f, 2 * k]
    _children_start(st, node, leaf, right)


@kernel
def _children_start(st, node, left, right):
    reset_class_leaf(st, left)
    reset_class_leaf(st, right)
    for c in range(st.nd_ph.shape[1]):  # the split node's detector starts now
        st.nd_ph[node, c] = 0.0


# ------------------------------------------------------------------------------------------------
# VFDT's split (SPLIT_GAUSS), from the naive Bayes statistics
@kernel(inline="always")
def _gauss_left(st, leaf, j, k, thr):
    """The weight of class ``k`` at or below ``thr`` on feature ``j`` under its Gaussian."""
    gs = st.lf_gs
    w = gs[leaf, j, 3 * k]
    if w <= 0.0:
        return 0.0
    mean = gs[leaf, j, 3 * k + 1]
    sd = np.sqrt(gs[leaf, j, 3 * k + 2] / w)
    if sd <= 0.0:
        return w if mean <= thr else 0.0
    return w * 0.5 * (1.0 + math.erf((thr - mean) / (sd * math.sqrt(2.0))))


@kernel
def _threshold_gain(st, leaf, j, K, thr, min_branch):
    lw = rw = sp = sl = sr = 0.0
    for k in range(K):
        w = st.lf_gs[leaf, j, 3 * k]
        a = _gauss_left(st, leaf, j, k, thr)
        b = max(0.0, w - a)
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(w)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel
def _category_gain(st, leaf, j, slot, K, code, min_branch):
    """IG of the split sending category ``code`` of nominal feature ``j`` (row ``slot`` of
    ``lf_ncc``) left, the rest right."""
    lw = rw = sp = sl = sr = 0.0
    for k in range(K):
        w = st.lf_gs[leaf, j, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k)
        b = max(0.0, w - a)
        lw += a
        rw += b
        sl += _xlx(a)
        sr += _xlx(b)
        sp += _xlx(w)
    if lw < min_branch or rw < min_branch or lw <= 0.0 or rw <= 0.0:
        return -1.0
    return _gain(lw + rw, lw, rw, sp, sl, sr)


@kernel
def _best_of_feature(st, prm, leaf, j, K):
    """``(IG, threshold or category code)`` of the best split of feature ``j`` at ``leaf``."""
    best = -1.0
    arg = np.nan
    if st.ft_nominal[j]:
        slot = nominal_slot(st, j)
        for code in range(_n_cats(st)):
            g = _category_gain(st, leaf, j, slot, K, code, prm.min_branch)
            if g > best:
                best = g
                arg = np.float64(code)
        return best, arg
    lo = st.lf_rng[leaf, j, 0]
    hi = st.lf_rng[leaf, j, 1]
    if not lo < hi:
        return best, arg
    for i in range(1, N_THRESHOLDS + 1):
        thr = lo + (hi - lo) * i / (N_THRESHOLDS + 1)
        g = _threshold_gain(st, leaf, j, K, thr, prm.min_branch)
        if g > best:
            best = g
            arg = thr
    return best, arg


@kernel
def _attempt_gauss(st, prm, leaf):
    st.ints[I_NATTEMPTS] += 1
    st.lf_last[leaf] = st.lf_stat[leaf, S_W]
    K = st.lf_cc.shape[1]
    best1 = 0.0
    best2 = 0.0
    f1 = np.int64(-1)  # not a literal (see "Literal constants" in trees._kernels)
    arg1 = np.nan
    for j in range(st.ints[I_NFEAT]):
        if st.lf_mask[leaf, j] == 0:
            continue
        g, arg = _best_of_feature(st, prm, leaf, j, K)
        if g > best1:
            best2 = best1
            best1 = g
            f1 = j
            arg1 = arg
        elif g > best2:
            best2 = g
    if f1 < 0 or best1 <= 0.0:
        return
    eps = _bound(st, prm, leaf)
    if best1 - best2 > eps or eps < prm.tau:
        if st.ints[I_NLEAVES] >= prm.max_leaves:
            _freeze(st)
            return
        _split_gauss(st, prm, leaf, f1, arg1)


@kernel
def _split_gauss(st, prm, leaf, f, arg):
    K = st.lf_cc.shape[1]
    node = st.lf_node[leaf]
    nominal = st.ft_nominal[f] == 1
    code = np.int64(arg) if nominal else 0
    slot = nominal_slot(st, f)
    l0 = l1 = l2 = r0 = r1 = r2 = 0.0
    for k in range(K):
        w = st.lf_gs[leaf, f, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k) if nominal else _gauss_left(st, leaf, f, k, arg)
        b = max(0.0, w - a)
        l0 += a
        l1 += k * a
        l2 += k * k * a
        r0 += b
        r1 += k * b
        r2 += k * k * b
    if nominal:  # the category left, every other one seen here right, unseen ones as missing
        off = st.ints[I_CAT_USED]
        st.cats[off] = np.float64(code)
        nr = 0
        for c in range(_n_cats(st)):
            if c == code:
                continue
            seen = 0.0
            for k in range(K):
                seen += _ncc(st, leaf, slot, c * K + k)
            if seen > 0.0:
                st.cats[off + 1 + nr] = np.float64(c)
                nr += 1
        st.ints[I_CAT_USED] = off + 1 + nr
        st.nd_cat_off[node] = off
        st.nd_cat_len[node] = 1
        st.nd_cat_nr[node] = nr
        st.nd_thr[node] = np.nan
    else:
        st.nd_thr[node] = arg
    lw, lm, lm2 = _side_stat(l0, l1, l2)
    rw, rm, rm2 = _side_stat(r0, r1, r2)
    st.ft_spread[:] = 0.0
    _grow_children(st, prm, leaf, f, lw, lm, 0.0, lm2, rw, rm, 0.0, rm2)
    right = st.nd_leaf[st.nd_right[node]]
    for k in range(K):  # the parent's statistics are still in the left child's slot
        w = st.lf_gs[leaf, f, 3 * k]
        a = _ncc(st, leaf, slot, code * K + k) if nominal else _gauss_left(st, leaf, f, k, arg)
        st.lf_cc[right, k] = max(0.0, w - a)
        st.lf_cc[leaf, k] = a
    _children_start(st, node, leaf, right)


# ------------------------------------------------------------------------------------------------
# learning
@kernel
def _learn_row(st, prm, node, x, y, w, mc, nb):
    """Learn ``(x, y, w)`` at leaf ``node`` (``mc``, ``nb``: the leaf's votes for ``x``)."""
    nfeat = st.ints[I_NFEAT]
    leaf = st.nd_leaf[node]
    _observe_leaf(st, prm, leaf, x, y, w, nfeat, mc, nb)
    if st.lf_active[leaf] == 0:
        return
    _split_rule_learns(st, prm, leaf, x, y, w, nfeat)


@kernel
def _extra_learns(st, prm, leaf, x, y, w, nfeat):
    """The extremely randomised split's part of learning a row at an active leaf (ACTSER)."""
    _extra_observe(st, prm, leaf, x, y, w, nfeat)
    if st.lf_stat[leaf, S_W] - st.lf_last[leaf] >= prm.grace and st.lf_stat[leaf, S_M2] > 0.0:
        f = _choose_extra(st, prm, leaf)
        if f >= 0:
            if st.ints[I_NLEAVES] >= prm.max_leaves:
                _freeze(st)
                return
            _split_extra(st, prm, leaf, f)


@kernel
def _gauss_learns(st, prm, leaf, x, y, w, nfeat):
    """The Gaussian split rule's part of learning a row at an active leaf (VFDT): its
    statistics are the naive Bayes ones, so only the split attempt."""
    if st.lf_stat[leaf, S_W] - st.lf_last[leaf] >= prm.grace and st.lf_stat[leaf, S_M2] > 0.0:
        _attempt_gauss(st, prm, leaf)


@kind_hook(lambda kind: _extra_learns if kind.rule == "extra" else _gauss_learns)
def _split_rule_learns(st, prm, leaf, x, y, w, nfeat):
    """What the classification tree's split rule does with a row its active leaf learnt."""


@kernel(inline="always")
def page_hinkley_01(st, prm, n, err):
    """The thesis' Algorithm 5.2 at split node ``n`` for a 0/1 error; True when it fires."""
    ph = st.nd_ph
    ph[n, CPH_N] += 1.0
    ph[n, CPH_Q] += err
    t = ph[n, CPH_N]
    p = ph[n, CPH_Q] / t
    if t < prm.ph_gamma:
        ph[n, CPH_SD] = np.sqrt(p * (1.0 - p))
    sd = ph[n, CPH_SD]
    d = (err - p) / sd if sd > 0.0 else 0.0
    ph[n, CPH_DBAR] += (d - ph[n, CPH_DBAR]) / t
    ph[n, CPH_SUM] += d - ph[n, CPH_DBAR] - prm.alt_alpha
    if ph[n, CPH_SUM] < ph[n, CPH_MIN]:
        ph[n, CPH_MIN] = ph[n, CPH_SUM]
    return ph[n, CPH_SUM] - ph[n, CPH_MIN] > prm.alt_lambda


@entry(inline="always")
def mcnemar_verdict(b, c, seen, period, crit):
    """What a node does with its alternate after ``seen`` examples, ``b`` of them right only by
    the alternate and ``c`` only by the original subtree: 1 adopt, -1 discard, 0 wait (decisions
    every ``period`` examples; see the module docstring)."""
    if seen % period != 0.0:
        return 0
    chi2 = (b - c) ** 2 / (b + c) if b + c > 0.0 else 0.0
    if chi2 > crit:
        return 1 if b > c else -1
    if seen >= 10.0 * period:
        return 1 if b >= c else -1
    return 0


@kernel(inline="always")
def _restart(st, n):
    for c in range(st.nd_ph.shape[1]):
        st.nd_ph[n, c] = 0.0
    for c in range(st.nd_q.shape[1]):
        st.nd_q[n, c] = 0.0


@kernel
def _adapt(st, prm, x, y, w, pred):
    """Change detection and adaptation along the path of ``x`` (Algorithms 5.1-5.3; see the
    module docstring).  Returns True when an adoption took the example's leaf away (the adopted
    subtree has learnt it)."""
    k = np.int64(y)
    err = 0.0 if pred == k else 1.0
    nfeat = st.ints[I_NFEAT]
    q = st.nd_q
    n = np.int64(0)  # not a literal (see "Literal constants" in trees._kernels)
    while st.nd_feat[n] >= 0:
        a = st.nd_alt[n]
        if a >= 0:
            an = route_from(st, a, x)
            aleaf = st.nd_leaf[an]
            amc, anb = leaf_votes(st, prm, aleaf, x, nfeat)
            ap = choose(st, prm, aleaf, amc, anb)
            q[n, MC_SEEN] += 1.0
            if q[n, MC_SEEN] > prm.alt_period / 2:
                if ap == k and pred != k:
                    q[n, MC_B] += 1.0
                elif pred == k and ap != k:
                    q[n, MC_C] += 1.0
            _learn_row(st, prm, an, x, y, w, amc, anb)
            verdict = mcnemar_verdict(q[n, MC_B], q[n, MC_C], q[n, MC_SEEN], prm.alt_period,
                                      prm.alt_chi2)  # fmt: skip
            if verdict > 0:
                _adopt_alternate(st, n)
                _restart(st, n)
                return True
            if verdict < 0:
                _discard_alternate(st, n)
                _restart(st, n)
        elif page_hinkley_01(st, prm, n, err):
            _start_alternate(st, prm, n)
            _restart(st, n)
            a = st.nd_alt[n]
            if a >= 0:
                leaf = st.nd_leaf[a]
                for c in range(st.lf_cc.shape[1]):
                    st.lf_cc[leaf, c] = 0.0
                reset_class_leaf(st, leaf)
        n = _child(st, n, x)
    return False


@kernel
def _never_adapts(st, prm, x, y, w, pred):
    return False


@kind_hook(lambda kind: _adapt if kind.alternates else _never_adapts)
def _adapts(st, prm, x, y, w, pred):
    """:func:`_adapt` (kinds with alternate subtrees)."""


@kernel
def learn_step(st, prm, x, y, w):
    """The tree's step for one example (room already checked): predict ``x`` (for the adaptive
    leaves' counts and the node detectors), learn ``(x, y, w)`` when ``w > 0``.  Returns the
    class predicted before learning."""
    node = route(st, x)
    leaf = st.nd_leaf[node]
    mc, nb = leaf_votes(st, prm, leaf, x, st.ints[I_NFEAT])
    pred = choose(st, prm, leaf, mc, nb)
    st.ints[I_NSEEN] += 1
    if w > 0.0:
        if not (prm.alt_lambda > 0.0 and st.nd_feat[0] >= 0 and _adapts(st, prm, x, y, w, pred)):
            _learn_row(st, prm, node, x, y, w, mc, nb)
    return pred


@kernel
def learn_step_at(st, prm, node, x, y, w, mc, nb):
    """:func:`learn_step` for a row a prediction just routed to leaf node ``node`` (the tree
    unchanged since), whose votes there it kept (``nb = -1``: not computed, see
    :func:`leaf_proba_votes`)."""
    leaf = st.nd_leaf[node]
    if nb < 0:
        mc, nb = leaf_votes(st, prm, leaf, x, st.ints[I_NFEAT])
    pred = choose(st, prm, leaf, mc, nb)
    st.ints[I_NSEEN] += 1
    if w > 0.0:
        if not (prm.alt_lambda > 0.0 and st.nd_feat[0] >= 0 and _adapts(st, prm, x, y, w, pred)):
            _learn_row(st, prm, node, x, y, w, mc, nb)
    return pred


@kernel
def predict_proba_row(st, prm, x, out):
    """The tree's class probabilities for row ``x`` into ``out[:K]``."""
    node = route(st, x)
    leaf_proba(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT], out)


@entry(nogil=True, _nrt=False)
def learn_batch(st, prm, X, y, w, start):
    """Learn rows ``start..`` of ``X``; returns the row it stopped before (``len(X)``: all)."""
    for i in range(start, X.shape[0]):
        if w[i] <= 0.0:
            st.ints[I_NSEEN] += 1
            continue
        if not _room(st, prm):
            return i
        learn_step(st, prm, X[i], y[i], w[i])
    return X.shape[0]


@entry(nogil=True, _nrt=False)
def predict_proba_batch(st, prm, X, out):
    """``out[i, :K]``: the class probabilities of row ``i``."""
    for i in range(X.shape[0]):
        predict_proba_row(st, prm, X[i], out[i])
