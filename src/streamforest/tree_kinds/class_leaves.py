"""A classification leaf: its class weights and per-feature class statistics, and what it
predicts (majority class, naive Bayes, adaptive naive Bayes; see :mod:`.classification`).

The naive Bayes class of the learning step comes from :func:`_nb_class_fast` (a few logarithms
per class), certified equal to the per-feature loop's :func:`_nb_class`, which runs when it
cannot certify."""

from __future__ import annotations

import math

import numpy as np

from ..compiled import kernel
from ..stats import welford_update
from .state import (
    LEAF_MC,
    LEAF_NB,
    LEAF_NBA,
    SPLIT_GAUSS,
)

LOG_2PI = math.log(2.0 * math.pi)


N_THRESHOLDS = 10  # SPLIT_GAUSS: candidate thresholds per numeric feature (River's n_splits)


VAR_FLOOR = 1e-9  # relative floor of a naive Bayes variance (a constant feature in a class)


# a nominal feature's lf_class_stats row uses only the weights (3 k); the mean slot of class 0
# counts the categories seen at the leaf (the Laplace smoothing's denominator: a property of the
# leaf's examples, so the same however the stream was cut into chunks)
GS_NCATS = 1


# leaf models
@kernel(inline="always")
def _n_cats(st):
    K = st.lf_class_weights.shape[1]
    return st.lf_nominal_class_weights.shape[2] // K if K > 0 else 0


@kernel(inline="always")
def nominal_slot(st, j):
    """The row of nominal feature ``j`` in ``lf_nominal_class_weights``: the nominal features before
    it.  The feature loops count it as they go; a row past ``lf_nominal_class_weights``'s (a feature
    the tree has not been widened to) holds nothing."""
    s = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    for i in range(j):
        s += st.ft_nominal[i] != 0
    return s


@kernel(inline="always")
def _ncc(st, leaf, slot, i):
    """``lf_nominal_class_weights[leaf, slot, i]``, 0 for a slot the tree does not hold."""
    return (
        st.lf_nominal_class_weights[leaf, slot, i]
        if slot < st.lf_nominal_class_weights.shape[1]
        else 0.0
    )


@kernel(inline="always")
def _nb_score(st, leaf, x, nfeat, k, total):
    """``log p(k) + sum_j log p(x_j | k)`` at ``leaf`` (``-inf`` for a class without weight)."""
    ck = st.lf_class_weights[leaf, k]
    if ck <= 0.0:
        return -np.inf
    s = np.log(ck / total)
    K = st.lf_class_weights.shape[1]
    C = _n_cats(st)
    gs = st.lf_class_stats
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
    mc = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    best = -1.0
    present = 0
    for k in range(st.lf_class_weights.shape[1]):
        c = st.lf_class_weights[leaf, k]
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
    for k in range(st.lf_class_weights.shape[1]):
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
    K = st.lf_class_weights.shape[1]
    C = _n_cats(st)
    gs = st.lf_class_stats
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
    K = st.lf_class_weights.shape[1]
    best = np.int64(-1)  # not a literal (see "Literal constants" in tree_kinds.kernels)
    best_lo = -np.inf
    best_f = -np.inf
    u1 = -np.inf  # largest and second largest score + margin, and the class of the largest
    u2 = -np.inf
    u1k = -1
    for k in range(K):
        ck = st.lf_class_weights[leaf, k]
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
    K = st.lf_class_weights.shape[1]
    total = 0.0
    for k in range(K):
        total += st.lf_class_weights[leaf, k]
    if total <= 0.0:
        for k in range(K):
            out[k] = 1.0 / K
        return
    if not _uses_nb(st, prm, leaf):
        for k in range(K):
            out[k] = st.lf_class_weights[leaf, k] / total
        return
    top = -np.inf
    for k in range(K):
        ck = st.lf_class_weights[leaf, k]
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
    K = st.lf_class_weights.shape[1]
    total, mc, present = _class_counts(st, leaf)
    one = prm.leaf_model == LEAF_MC or present <= 1  # leaf_votes: naive Bayes is mc
    if total <= 0.0:  # as leaf_proba (and leaf_votes: nothing present)
        for k in range(K):
            out[k] = 1.0 / K
        return mc, mc
    if not _uses_nb(st, prm, leaf):
        for k in range(K):
            out[k] = st.lf_class_weights[leaf, k] / total
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
        ck = st.lf_class_weights[leaf, k]
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
    for s in range(st.lf_nominal_class_weights.shape[1]):
        for c in range(st.lf_nominal_class_weights.shape[2]):
            st.lf_nominal_class_weights[leaf, s, c] = 0.0
    for j in range(st.lf_class_stats.shape[1]):
        for c in range(st.lf_class_stats.shape[2]):
            st.lf_class_stats[leaf, j, c] = 0.0
        if st.lf_range.shape[2]:
            st.lf_range[leaf, j, 0] = np.inf
            st.lf_range[leaf, j, 1] = -np.inf
    st.lf_err[leaf, 0] = 0.0
    st.lf_err[leaf, 1] = 0.0


@kernel
def init_root_class(st):
    """The class fields of a new tree's root leaf (after :func:`~.structure.init_root`)."""
    leaf = st.nd_leaf[0]
    for k in range(st.lf_class_weights.shape[1]):
        st.lf_class_weights[leaf, k] = 0.0
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
    st.lf_class_weights[leaf, k] += w
    s = st.lf_stat
    s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3] = welford_update(
        s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3], y, w
    )
    if prm.leaf_model == LEAF_MC and prm.split_rule != SPLIT_GAUSS:
        return  # nothing reads the naive Bayes statistics
    K = st.lf_class_weights.shape[1]
    C = _n_cats(st)
    gs = st.lf_class_stats
    ranges = st.lf_range.shape[2] > 0
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
            if 0 <= code < C and slot <= st.lf_nominal_class_weights.shape[1]:
                seen = 0.0
                for c in range(K):
                    seen += st.lf_nominal_class_weights[leaf, slot - 1, code * K + c]
                if seen == 0.0:  # a category new at this leaf
                    gs[leaf, j, GS_NCATS] += 1.0
                st.lf_nominal_class_weights[leaf, slot - 1, code * K + k] += w
            continue
        gw = gs[leaf, j, 3 * k] + w
        d = v - gs[leaf, j, 3 * k + 1]
        gs[leaf, j, 3 * k + 1] += d * w / gw
        gs[leaf, j, 3 * k + 2] += w * d * (v - gs[leaf, j, 3 * k + 1])
        gs[leaf, j, 3 * k] = gw
        if ranges:
            st.lf_range[leaf, j, 0] = min(st.lf_range[leaf, j, 0], v)
            st.lf_range[leaf, j, 1] = max(st.lf_range[leaf, j, 1], v)
