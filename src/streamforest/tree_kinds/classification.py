"""The classification task of a tree (``TreeParams.task == TASK_CLASSIFICATION``): how ACTSER
(Seah's thesis, ch. 5) and the VFDT reference tree learn and predict a row (the task module
:mod:`.kernels` calls for trees of a classification kind).

The tree is the regression tree's structure (:mod:`streamforest.tree_kinds.structure`: routing,
node and leaf pools, the extremely randomised split's candidates, alternate subtrees, room
checks); what differs lives here, chosen by :class:`~streamforest.tree_kinds.state.TreeParams`
like every tree kind:

- **y** is a class index ``0 .. K-1`` (a float in the learning loops); ``K`` is the width of the
  class fields (``lf_class_weights`` ...), widened by the engine when a new class appears.
- **Leaf statistics**: class weights ``lf_class_weights``; per feature and class the weight, mean
  and m2 of the values (``lf_class_stats``; for a nominal feature only the weight of present
  values); per nominal feature, category and class a weight (``lf_nominal_class_weights``, one row
  per *nominal* feature: the ``s``-th nominal feature has row ``s``, see :func:`nominal_slot`; a
  numeric feature has none) and the number of categories seen. ``lf_stat`` keeps the statistic of
  the class index (its weight drives the grace period, ``m2 > 0`` means the leaf is impure).
- **Leaf models** (``leaf_model``): majority class (``LEAF_MC``), naive Bayes (``LEAF_NB``:
  Gaussian for numeric features, Laplace-smoothed counts for nominal ones) or adaptive naive
  Bayes (``LEAF_NBA``, Holmes et al. 2005): each leaf counts the weight each of the two predicted
  correctly (``lf_err``, before learning the example) and answers with the better one (ties:
  majority class).  The learning step needs naive Bayes' class at every such leaf; it takes it
  from :func:`_nb_class_fast` (a few logarithms per class instead of one per feature and class,
  certified equal to the per-feature loop's class, which runs when it cannot certify), so the
  model is exactly the one the per-feature loop learns.
- **Split rules**: ``SPLIT_EXTRA`` (ACTSER, thesis §5.2.1): the same two stages as ATSER's
  (:mod:`streamforest.tree_kinds.extra_split` draws the candidates), each candidate keeping the
  class weights of its two sides (``lf_candidate_classes``), scored by information gain.
  ``SPLIT_GAUSS`` (VFDT): ten thresholds between each numeric feature's smallest and largest value,
  scored by the information gain of the class weights each side would get under the per-class
  Gaussians of ``lf_class_stats`` (River's ``GaussianSplitter``), and one-versus-rest splits of
  nominal features from ``lf_nominal_class_weights``: the naive Bayes statistics serve both, no
  attribute observer.  Both split when ``IG(best) - IG(second) > eps`` or, once ``eps < tau``, on
  the best (VFDT) or on one drawn among the candidates within ``eps`` of it (ACTSER), with ``eps =
  sqrt(R^2 ln(1/delta) / (2 n))``, ``R = log2(classes seen at the leaf)``.  Children start with the
  class weights of their side and empty naive Bayes statistics.
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

import numpy as np

from ..compiled import entry, kernel
from .alternates import _adopt_alternate, _discard_alternate, _never_adapts, _start_alternate
from .class_leaves import (
    _observe_leaf,
    choose,
    init_root_class,
    leaf_proba,
    leaf_votes,
    reset_class_leaf,
)
from .class_splitting import _attempt_gauss, _choose_extra, _extra_observe, _split_extra_class
from .kinds import kind_hook, rule_part
from .room import _freeze
from .state import (
    CPH_DBAR,
    CPH_MIN,
    CPH_N,
    CPH_Q,
    CPH_SD,
    CPH_SUM,
    I_NFEAT,
    I_NLEAVES,
    I_NSEEN,
    MC_B,
    MC_C,
    MC_SEEN,
    S_M2,
    S_W,
)
from .structure import _child, route, route_from


# ------------------------------------------------------------------------------------------------
# learning
@kernel(inline="always")
def _learn_class_row(st, prm, node, x, y, w, mc, nb):
    """Learn ``(x, y, w)`` at leaf ``node`` (``mc``, ``nb``: the leaf's votes for ``x``)."""
    nfeat = st.ints[I_NFEAT]
    leaf = st.nd_leaf[node]
    _observe_leaf(st, prm, leaf, x, y, w, nfeat, mc, nb)
    if st.lf_active[leaf] == 0:
        return
    _split_rule_class_learns(st, prm, leaf, x, y, w, nfeat)


@kernel
def _extra_class_learns(st, prm, leaf, x, y, w, nfeat):
    """The extremely randomised split's part of learning a row at an active leaf (ACTSER)."""
    _extra_observe(st, prm, leaf, x, y, w, nfeat)
    if st.lf_stat[leaf, S_W] - st.lf_last[leaf] >= prm.grace and st.lf_stat[leaf, S_M2] > 0.0:
        f = _choose_extra(st, prm, leaf)
        if f >= 0:
            if st.ints[I_NLEAVES] >= prm.max_leaves:
                _freeze(st)
                return
            _split_extra_class(st, prm, leaf, f)


@kernel
def _gauss_class_learns(st, prm, leaf, x, y, w, nfeat):
    """The Gaussian split rule's part of learning a row at an active leaf (VFDT): its
    statistics are the naive Bayes ones, so only the split attempt."""
    if st.lf_stat[leaf, S_W] - st.lf_last[leaf] >= prm.grace and st.lf_stat[leaf, S_M2] > 0.0:
        _attempt_gauss(st, prm, leaf)


@kind_hook(rule_part("class_learn_at_leaf"))
def _split_rule_class_learns(st, prm, leaf, x, y, w, nfeat):
    """What the classification tree's split rule does with a row its active leaf learnt."""


@kernel(inline="always")
def page_hinkley_01(st, prm, n, err):
    """The thesis' Algorithm 5.2 at split node ``n`` for a 0/1 error; True when it fires."""
    ph = st.nd_detector
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
    for c in range(st.nd_detector.shape[1]):
        st.nd_detector[n, c] = 0.0
    for c in range(st.nd_alt_compare.shape[1]):
        st.nd_alt_compare[n, c] = 0.0


@kernel
def _adapt_class(st, prm, x, y, w, pred):
    """Change detection and adaptation along the path of ``x`` (Algorithms 5.1-5.3; see the
    module docstring).  Returns True when an adoption took the example's leaf away (the adopted
    subtree has learnt it)."""
    k = np.int64(y)
    err = 0.0 if pred == k else 1.0
    nfeat = st.ints[I_NFEAT]
    q = st.nd_alt_compare
    n = np.int64(0)  # not a literal (see "Literal constants" in tree_kinds.kernels)
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
            _learn_class_row(st, prm, an, x, y, w, amc, anb)
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
                for c in range(st.lf_class_weights.shape[1]):
                    st.lf_class_weights[leaf, c] = 0.0
                reset_class_leaf(st, leaf)
        n = _child(st, n, x)
    return False


@kind_hook(lambda kind: _adapt_class if kind.alternates else _never_adapts)
def _adapts_class(st, prm, x, y, w, pred):
    """:func:`_adapt_class` (kinds with alternate subtrees)."""


@kernel(inline="always")
def learn_class_step(st, prm, x, y, w):
    """The tree's step for one example (room already checked): predict ``x`` (for the adaptive
    leaves' counts and the node detectors), learn ``(x, y, w)`` when ``w > 0``.  Returns the
    class predicted before learning."""
    return learn_class_step_at(st, prm, route(st, x), x, y, w, np.int64(-1), np.int64(-1))


@kernel(inline="always")
def learn_class_step_at(st, prm, node, x, y, w, mc, nb):
    """:func:`learn_class_step` for a row a prediction just routed to leaf node ``node`` (the tree
    unchanged since), whose votes there it kept (``nb = -1``: not computed, see
    :func:`leaf_proba_votes`)."""
    leaf = st.nd_leaf[node]
    if nb < 0:
        mc, nb = leaf_votes(st, prm, leaf, x, st.ints[I_NFEAT])
    pred = choose(st, prm, leaf, mc, nb)
    st.ints[I_NSEEN] += 1
    if w > 0.0:
        if not (
            prm.alt_lambda > 0.0 and st.nd_feat[0] >= 0 and _adapts_class(st, prm, x, y, w, pred)
        ):
            _learn_class_row(st, prm, node, x, y, w, mc, nb)
    return pred


@kernel
def predict_proba_row(st, prm, x, out):
    """The tree's class probabilities for row ``x`` into ``out[:K]``."""
    node = route(st, x)
    leaf_proba(st, prm, st.nd_leaf[node], x, st.ints[I_NFEAT], out)


# ------------------------------------------------------------------------------------------------
# the task's interface (see streamforest.tree_kinds.kernels)
@kernel
def learn_one_row(st, prm, x, y, w):
    """Learn one row (room checked; ``y`` a class index) in a batch pass: returns False (a
    classification tree adapts in place, it has no drift signal for its owner)."""
    learn_class_step(st, prm, x, y, w)
    return False


@kernel
def learn_one_row_memo(st, prm, x, y, w, M, t):
    """Learn one row in a per-example pass: ``(class predicted before learning, False)``; a row
    of weight 0 is only counted.  Column ``t`` of the memo ``M`` (leaf node, rows seen,
    majority and naive Bayes votes; see :func:`remember`) holds the row's leaf and votes when
    the tree has not changed since a prediction left them."""
    if w <= 0.0:
        st.ints[I_NSEEN] += 1
        return 0.0, False
    if t < M.shape[1] and M[1, t] == st.ints[I_NSEEN]:  # routed and voted just before
        node, mc, nb = np.int64(M[0, t]), np.int64(M[2, t]), np.int64(M[3, t])
    else:
        node, mc, nb = route(st, x), np.int64(-1), np.int64(-1)
    # one call site: learn_class_step_at is inlined (its own kernel would re-optimise and
    # re-JIT everything it calls on a cold start)
    k = learn_class_step_at(st, prm, node, x, y, w, mc, nb)
    return float(k), False


@kernel
def predict_one_row_into(st, prm, x, out, i):
    """``out[i, :K]``: the tree's class probabilities for row ``x``."""
    predict_proba_row(st, prm, x, out[i])


@kernel(inline="always")
def remember(M, t, st, node, mc, nb):
    """Keep tree ``t``'s leaf node and votes of a row in the memo ``M`` (rows 0-3 of its
    column: leaf node, rows seen, majority class, naive Bayes class)."""
    M[0, t] = node
    M[1, t] = st.ints[I_NSEEN]
    M[2, t] = mc
    M[3, t] = nb


@kernel
def init_task_fields(st):
    """A new root leaf's class fields (see :func:`~.class_leaves.init_root_class`)."""
    init_root_class(st)
