"""The compiled core's ATSER parts (``streamforest._core``): the extremely randomised split rule
(rules/extra) and alternate subtrees (tree/alternates), for regression trees of both rules.

A category's side is the hash of its code and the salt; a leaf's candidates hold the exact
statistics of the rows that reached it, split by their threshold or salt; a leaf's statistic is
that of the rows routed to it since its parent was created (salted nominal splits, missing
values); alternate subtrees keep the tree's counts and pools consistent; the core runs the kinds
it says it runs."""

import math

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.kinds import TreeKind

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


# ------------------------------------------------------------------------------------------------
# data and models
def dstream(n, seed=0, nan=0.02, period=700):
    """Friedman #1 on 5 features (NaN at rate ``nan``) and a nominal column of 5 codes; the
    target's concept changes every ``period`` rows (flipped, then shifted on one half), so
    that the split nodes' detectors fire."""
    r = np.random.default_rng(seed)
    X = r.random((n, 6))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    y = y + 5 * X[:, 4] + r.standard_normal(n)
    X[:, 5] = r.integers(0, 5, n)
    y = y + np.where(X[:, 5] == 2, 4.0, 0.0)
    phase = (np.arange(n) // period) % 3
    y = np.where(phase == 1, 30 - y, y)
    y = np.where(phase == 2, y + 8 * np.where(X[:, 0] > 0.5, 1, -1), y)
    if nan:
        X[:, :5][r.random((n, 5)) < nan] = np.nan
    return X, y


def _atser(**kw):
    return lambda: sf.ATSERRegressor(nominal_features=(5,), **kw)


CONFIGS = {
    # name: model factory (alternates run)
    "extra-linear-alt": _atser(grace_period=30, m_min=8, ph_threshold=8.0, alt_period=20, seed=1),
    "observers-adaptive-alt": lambda: sf.HoeffdingTreeRegressor(
        grace_period=30, drift_detection=True, ph_threshold=8.0, alt_period=20,
        nominal_features=(5,), seed=6),
}  # fmt: skip

ALT = ("I_ALT_STARTED", "I_ALT_SWAPPED", "I_ALT_DISCARDED")


def _cat_inputs():
    r = np.random.default_rng(3)
    return np.floor(r.random(4000) * 2.0**52), r.integers(-1, 300, 4000).astype(float)


# ------------------------------------------------------------------------------------------------
# reference tests
def _mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def ref_goes_left(salt, code):
    """A category's side: the hash of (salt, code + 1), in plain Python integers."""
    z = (int(salt) + (int(code) + 1) * GOLDEN) & M64
    return _mix64(z) & 1 == 0


def test_cat_goes_left_is_the_hash_of_salt_and_code():
    s, c = _cat_inputs()
    for si, ci in zip(s, c, strict=True):
        assert _core.tree.cat_goes_left(si, ci) == ref_goes_left(si, ci)
    # a category's side is fixed by the salt; every salt sends about half of them each way
    codes = np.arange(-1, 200, dtype=float)
    for salt in (0.0, 12345.0, 2.0**51 + 3):
        sides = [_core.tree.cat_goes_left(salt, ci) for ci in codes]
        assert sides == [_core.tree.cat_goes_left(salt, ci) for ci in codes]
        assert 60 < sum(sides) < 140
    with pytest.raises(TypeError):
        _core.tree.cat_goes_left("a", 1.0)


def _goes_left(st, node, x):
    f = int(st.nd_feat[node])
    v = x[f] if f < len(x) else math.nan
    if math.isnan(v):
        return st.nd_miss_left[node] == 1
    if st.ft_nominal[f]:
        if st.nd_cat_len[node] < 0:
            return ref_goes_left(st.nd_thr[node], v)
        off, nl = int(st.nd_cat_off[node]), int(st.nd_cat_len[node])
        nr = int(st.nd_cat_right[node])
        if v in set(st.cats[off : off + nl].tolist()):
            return True
        if v in set(st.cats[off + nl : off + nl + nr].tolist()):
            return False
        return st.nd_miss_left[node] == 1
    return v <= st.nd_thr[node]


def _walk(st, x, node=0):
    while st.nd_feat[node] >= 0:
        node = int(st.nd_left[node] if _goes_left(st, node, x) else st.nd_right[node])
    return node


def _learnt_extra_tree(leaf_model="mean", m_min=6, drift=False, seed=0, n=3000):
    X, y = dstream(n, seed=seed, nan=0.05)
    m = sf.ATSERRegressor(grace_period=40, m_min=m_min, leaf_model=leaf_model,
                          drift_detection=drift, ph_threshold=8.0, alt_period=20,
                          nominal_features=(5,), seed=seed)  # fmt: skip
    Xa, ya, wa = m.prepare_batch(X, y, None)
    e = m.engine_
    e.learn(Xa, ya, e.bagging_weights(wa), wa)
    leaves = e.apply(0, Xa)
    pred = e.predict_trees(Xa)[0]
    return e, Xa, ya, leaves, pred


@pytest.mark.parametrize("m_min", [2, 6, 25])
def test_extra_leaves_and_candidates_hold_the_rows_routed_there(m_min):
    """Every leaf's statistic is the exact statistic of the rows learnt since its parent was
    created that the final tree routes to it; routing (salted nominal sides included) is the
    plain walk; a leaf that saw ``m_min`` rows since it was born buffered them and has one
    candidate per feature whose threshold lies within the buffered values, whose sides hold
    exactly its rows with the feature present split by it (nominal: by the salt's sides)."""
    e, Xa, ya, leaves, pred = _learnt_extra_tree(m_min=m_min, seed=m_min % 4)
    st = e.state(0)
    nn = int(st.ints[S.I_NNODES])
    assert int(st.ints[S.I_NSPLITS]) >= 4
    assert any(st.ft_nominal[int(f)] and st.nd_cat_len[n] == -1
               for n, f in enumerate(st.nd_feat[:nn]) if f >= 0)  # fmt: skip
    walked = np.array([_walk(st, row) for row in Xa])
    assert (walked == leaves).all()
    parent = {}
    for n in range(nn):
        if st.nd_feat[n] >= 0:
            parent[int(st.nd_left[n])] = n
            parent[int(st.nd_right[n])] = n
    checked = 0
    for node in np.unique(leaves):
        leaf = int(st.nd_leaf[node])
        born = int(st.nd_born[parent[int(node)]]) if int(node) in parent else 0
        rows = np.flatnonzero((leaves == node) & (np.arange(len(ya)) >= born))
        w, hi, lo, m2 = st.lf_stat[leaf]
        assert w == len(rows)
        mean = math.fsum(ya[rows]) / len(rows)
        assert hi + lo == pytest.approx(mean, rel=1e-12, abs=1e-12)
        assert m2 == pytest.approx(math.fsum((ya[rows] - mean) ** 2), rel=1e-9, abs=1e-9)
        assert (pred[leaves == node] == hi + lo).all()
        rows = rows[rows >= int(st.nd_born[node])]  # the candidates: since the leaf was born
        nex = int(st.lf_nexamples[leaf])
        assert nex == min(len(rows), m_min)
        if nex < m_min or not st.lf_active[leaf]:
            continue
        buf = st.lf_buffer[leaf]
        assert (buf[S.XB_Y, :m_min] == ya[rows[:m_min]]).all()
        for j in range(Xa.shape[1]):
            thr = st.lf_candidate[leaf, j, S.XC_THR]
            first = Xa[rows[:m_min], j]
            present = first[~np.isnan(first)]
            if not st.ft_nominal[j]:
                if len(present) == 0 or present.min() == present.max():
                    assert math.isnan(thr)
                    continue
                assert present.min() <= thr < present.max()
            elif len(present) == 0:
                assert math.isnan(thr)
                continue
            v = Xa[rows, j]
            ok = ~np.isnan(v)
            if st.ft_nominal[j]:
                assert thr == int(thr) and 0 <= thr < 2.0**52
                left = np.array([ref_goes_left(thr, c) for c in v[ok]], bool)
            else:
                left = v[ok] <= thr
            yl, yr = ya[rows[ok]][left], ya[rows[ok]][~left]
            c = st.lf_candidate[leaf, j]
            assert c[S.XC_LW] == len(yl) and c[S.XC_RW] == len(yr)
            for side, ys in ((S.XC_LHI, yl), (S.XC_RHI, yr)):
                if len(ys):
                    assert c[side] + c[side + 1] == pytest.approx(
                        math.fsum(ys) / len(ys), rel=1e-12, abs=1e-12
                    )
            checked += 1
    assert checked > 0


def _reachable(st):
    """Nodes of the main tree and of its alternates (main, alternate)."""
    main, alt = set(), set()
    stack = [(0, False)]
    while stack:
        n, in_alt = stack.pop()
        (alt if in_alt else main).add(n)
        if st.nd_alt[n] >= 0:
            stack.append((int(st.nd_alt[n]), True))
        if st.nd_feat[n] >= 0:
            stack += [(int(st.nd_left[n]), in_alt), (int(st.nd_right[n]), in_alt)]
    return main, alt


@pytest.mark.parametrize("name", ["extra-linear-alt", "observers-adaptive-alt"])
def test_alternates_keep_the_tree_consistent(name):
    """Learning a drifting stream row by row on the core: after every 50 rows the nodes of the
    tree and of its alternates are disjoint from the free list, alternates hang only off the
    main tree's split nodes and are marked as such, the counts of leaves, alternates and free
    nodes are those of the arrays, and every alternate started was adopted, discarded, is live
    or went with a subtree an adoption freed."""
    X, y = dstream(3000, seed=11)
    m = CONFIGS[name]()
    m.learn_many(X[:10], y[:10])
    for i in range(10, 3000, 50):
        m.learn_many(X[i : i + 50], y[i : i + 50])
        st = m.engine_.state(0)
        ints = st.ints
        main, alt = _reachable(st)
        assert not main & alt
        free, f = set(), int(ints[S.I_NODE_FREE])
        while f >= 0:
            free.add(f)
            f = int(st.nd_left[f])
        assert len(free) == int(ints[S.I_NODE_NFREE])
        assert not (main | alt) & free
        assert len(main | alt | free) == int(ints[S.I_NNODES])
        assert all(st.nd_isalt[n] == 0 for n in main)
        assert all(st.nd_isalt[n] == 1 for n in alt)
        owners = [n for n in main if st.nd_alt[n] >= 0]
        assert all(st.nd_feat[n] >= 0 for n in owners)
        assert all(st.nd_alt[n] < 0 for n in alt)
        assert len(owners) == int(ints[S.I_NALTS])
        leaves = [n for n in main | alt if st.nd_feat[n] < 0]
        assert len(leaves) == int(ints[S.I_NLEAVES]) == int((st.lf_node >= 0).sum())
        assert all(st.lf_node[st.nd_leaf[n]] == n for n in leaves)
        started, swapped, discarded = (int(ints[getattr(S, k)]) for k in ALT)
        assert started >= swapped + discarded + int(ints[S.I_NALTS])
    assert swapped > 0 and started > swapped


def test_supports_the_atser_kinds():
    """Regression trees of both rules, with or without alternates and sketches, run on the
    core; the pre-grown trees' components (evidence, Bayesian leaves) do not come with them."""
    assert ("extra", S.SPLIT_EXTRA) in [(r["name"], r["code"]) for r in _core.tree.rules()]
    for rule in ("observers", "extra"):
        for alternates in (False, True):
            for sketch in (False, True):
                k = TreeKind(rule=rule, alternates=alternates, sketch=sketch)
                assert _core.tree.supports(**k.__dict__)
        # (classification: the extra rule's runs, see test_core_classification.py)
        changes = [{"evidence": True}, {"bayes": True}]
        changes += [{"classification": True}] if rule == "observers" else []
        for change in changes:
            assert not _core.tree.supports(**{**TreeKind(rule=rule).__dict__, **change})
