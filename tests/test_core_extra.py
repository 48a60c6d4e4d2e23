"""The compiled core's ATSER parts (``streamforest._core``): the extremely randomised split rule
(rules/extra) and alternate subtrees (tree/alternates), for regression trees of both rules.

Reference tests (they stay after numba is gone): a category's side is the hash of its code and
the salt; a leaf's candidates hold the exact statistics of the rows that reached it, split by
their threshold or salt; a leaf's statistic is that of the rows routed to it since its parent
was created (salted nominal splits, missing values); alternate subtrees keep the tree's counts
and pools consistent; the core runs the kinds it says it runs.

Port tests (``test_same_as_numba_*``, transitional): the harness of test_core_tree_passes.py
(two identical engines, numba's pass on one and the core's on the other, growth as the engine
does it, every arena array compared bit for bit after each call) on drifting streams where the
split nodes' detectors fire and alternates are started, adopted and discarded."""

import math

import numba
import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.engine import dispatch
from streamforest.engine import kernels as NK
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.extra_split import cat_goes_left as numba_cat_goes_left
from streamforest.tree_kinds.kinds import KindTag, TreeKind

from .test_core_tree_passes import _enc, assert_same, drive_pass, pair, run_both, same_bits

CORE = _core.engine
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
    # name: model factory (every ATSER tree compiles with alternates; "-alt": they run)
    "extra-linear-alt": _atser(grace_period=30, m_min=8, ph_threshold=8.0, alt_period=20, seed=1),
    "extra-mean-ties-alt": _atser(grace_period=25, m_min=3, tau=0.4, leaf_model="mean",
                                  ph_threshold=6.0, alt_period=15, seed=2),
    "extra-adaptive-depth-alt": _atser(grace_period=30, m_min=15, leaf_model="adaptive",
                                       ph_threshold=8.0, alt_period=25, max_depth=5, seed=3),
    "extra-linear-freeze": _atser(grace_period=20, m_min=5, drift_detection=False, max_leaves=9,
                                  seed=4),
    "extra-mean-cap-alt": _atser(grace_period=25, m_min=4, leaf_model="mean", max_leaves=6,
                                 ph_threshold=6.0, alt_period=15, seed=10),
    "extra-mean-mmin1-drift": _atser(grace_period=40, m_min=1, leaf_model="mean",
                                     drift_detection=False, drift_threshold=6.0, seed=5),
    "extra-linear-sketch-alt": _atser(grace_period=30, m_min=8, leaf_quantile_k=16,
                                      leaf_quantile_split="parent", ph_threshold=8.0,
                                      alt_period=20, seed=11),
    "observers-adaptive-alt": lambda: sf.HoeffdingTreeRegressor(
        grace_period=30, drift_detection=True, ph_threshold=8.0, alt_period=20,
        nominal_features=(5,), seed=6),
    "observers-qo-linear-budget-alt": lambda: sf.HoeffdingTreeRegressor(
        grace_period=30, observer="qo", leaf_model="linear", drift_detection=True,
        ph_threshold=10.0, alt_period=30, max_observer_bins=600, nominal_features=(5,), seed=7),
    "forest-extra-rforest-alt": lambda: sf.OnlineForestRegressor(
        n_trees=3, max_features=3, tree=sf.ATSERRegressor(
            grace_period=30, m_min=6, ph_threshold=8.0, alt_period=20, nominal_features=(5,)),
        drift_threshold=12.0, warning_fraction=0.4, seed=8),
    "forest-extra-mean-sketch-alt": lambda: sf.OnlineForestRegressor(
        n_trees=3, max_features=None, tree=sf.ATSERRegressor(
            grace_period=30, m_min=5, leaf_model="mean", leaf_quantile_k=24, ph_threshold=8.0,
            alt_period=20, nominal_features=(5,)),
        drift_threshold=None, seed=12),
    "forest-extra-obag": lambda: sf.ATSEREnsembleRegressor(
        mode="obag", n_members=3, grace_period=40, nominal_features=(5,), seed=9),
}  # fmt: skip

NO_ALTERNATES = ("extra-linear-freeze", "extra-mean-mmin1-drift")  # drift_detection=False
ALT = ("I_ALT_STARTED", "I_ALT_SWAPPED", "I_ALT_DISCARDED")


def _counts(e, names=ALT):
    return {k: sum(int(e.state(t).ints[getattr(S, k)]) for t in range(e.n_trees)) for k in names}


def _check_exercised(name, e, totals):
    """The configuration reached what it is for; ``totals`` collects the alternates' counters
    over the run (a forest's replaced trees lose theirs)."""
    c = _counts(e, ALT + ("I_NSPLITS", "I_FROZEN"))
    assert c["I_NSPLITS"] > 0
    for k in ALT:
        totals[k] = totals.get(k, 0) + c[k]
    if "-alt" in name:
        assert c["I_ALT_STARTED"] > 0 and c["I_ALT_SWAPPED"] > 0, c
    if name in NO_ALTERNATES:
        assert c["I_ALT_STARTED"] == 0
    if "freeze" in name:
        assert c["I_FROZEN"] > 0
    if "drift" in name or "rforest" in name:
        assert e.n_resets.sum() > 0 or e.drift_counts.sum() > 0
    if "sketch" in name:
        assert any(int(e.state(t).lf_sketch_levels[:, -1].sum()) > 0 for t in range(e.n_trees))
    if "budget" in name:
        assert _counts(e, ("I_NDEACT",))["I_NDEACT"] > 0


_TOTALS: dict = {}


# ------------------------------------------------------------------------------------------------
# port tests: bit for bit against the numba kernels
@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_as_numba_batch_passes(name):
    X, y = dstream(3200, seed=len(name))
    ea, eb, Xa, ya, wa = pair(CONFIGS[name], X, y)
    with dispatch.using_core(True):
        assert dispatch.core_runs(ea.arena.kind)
    assert_same(ea, eb, "created")
    n1, n2 = 1500, 2600
    W = ea.bagging_weights(wa[:n1])
    eb.bagging_weights(wa[:n1])
    X1, y1 = np.ascontiguousarray(Xa[:n1]), ya[:n1]
    drive_pass(ea, eb, n1, lambda K, e, A, t, i: K.learn_rows(A, t, X1, y1, W, i), "learn_rows",
               rows=(X1, y1, wa[:n1]))  # fmt: skip
    P = np.zeros((ea.n_trees, n1))
    for t in range(ea.n_trees):
        run_both(ea, eb, lambda e, K, t=t: K.predict_rows(e.arena, t, X1, P) or P[t].copy(),
                 "predict_rows")  # fmt: skip
        leaf = np.zeros(n1, np.int64)
        run_both(ea, eb, lambda e, K, t=t, o=leaf: K.apply_rows(e.arena, t, X1, o) or o.copy(),
                 "apply_rows")  # fmt: skip
    X2, y2, w2 = np.ascontiguousarray(Xa[n1:n2]), ya[n1:n2], wa[n1:n2]
    W2 = ea.bagging_weights(w2)
    eb.bagging_weights(w2)
    P2a, P2b = np.zeros((ea.n_trees, n2 - n1)), np.zeros((ea.n_trees, n2 - n1))

    def plr(K, e, A, t, i):
        return K.predict_learn_rows(A, t, X2, y2, W2, i, P2a if K is NK else P2b)

    drive_pass(ea, eb, n2 - n1, plr, "predict_learn_rows", rows=(X2, y2, w2))
    assert same_bits(P2a, P2b)
    X3, y3 = X[n2:], y[n2:]
    with dispatch.using_core(False):
        ra = [ea.predict_learn(*_enc(ea, X3, y3)), ea.predict_trees(_enc(ea, X3, y3)[0])]
    with dispatch.using_core(True):
        rb = [eb.predict_learn(*_enc(eb, X3, y3)), eb.predict_trees(_enc(eb, X3, y3)[0])]
    for a, b in zip(ra, rb, strict=True):
        assert same_bits(a, b)
    assert_same(ea, eb, "engine passes")
    _check_exercised(name, ea, _TOTALS)


def _dicts(X):
    return [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]


PER_EXAMPLE = ["extra-linear-alt", "extra-mean-ties-alt", "extra-linear-sketch-alt",
               "observers-adaptive-alt", "forest-extra-rforest-alt"]  # fmt: skip


@pytest.mark.parametrize("name", PER_EXAMPLE)
def test_same_as_numba_per_example(name):
    """``predict_one`` then ``learn_one`` of dicts (the handle kernels with the memo),
    ``learn_one`` alone, and the engine's calls of rows that are not its row buffer."""
    X, y = dstream(2400, seed=17 + len(name), period=500)
    ma, mb = CONFIGS[name](), CONFIGS[name]()
    with dispatch.using_core(False):
        ma.learn_many(X[:200], y[:200])
    with dispatch.using_core(True):
        mb.learn_many(X[:200], y[:200])
    assert_same(ma.engine_, mb.engine_, "first rows")
    D_ = _dicts(X)
    for i in range(200, len(y)):
        x, yi = D_[i], float(y[i])

        def step(e, m, x=x, yi=yi, i=i):
            out = []
            if i % 3 != 2:
                out.append(m.predict_one(x))
            m.learn_one(x, yi, 1.0 + (i % 4 == 0) + 0.375 * (i % 9 == 0))
            if i % 7 == 0:
                row = e.features.encode_dict(x, True).copy()
                out.append(e.predict_one(row))
                e.learn_one(row, yi, 1.0)
            return np.array(out + list(e.last_predictions))

        with dispatch.using_core(False):
            ra = step(ma.engine_, ma)
        with dispatch.using_core(True):
            rb = step(mb.engine_, mb)
        assert same_bits(ra, rb), f"row {i}"
        if i % 100 == 0:
            assert_same(ma.engine_, mb.engine_, f"row {i}")
    assert_same(ma.engine_, mb.engine_, "end")
    c = _counts(mb.engine_)  # (a forest's replaced trees lose their counts)
    assert c["I_ALT_STARTED"] > 0 and (c["I_ALT_SWAPPED"] > 0 or "forest" in name), c


@pytest.mark.parametrize("name", ["extra-linear-alt", "forest-extra-rforest-alt"])
def test_same_as_numba_kernels_called_directly(name):
    """``learn_one`` (resuming at a tree that lacked room, with and without a memo),
    ``predict_one``, ``predict_trees``, ``predict_trees_memo`` and ``learn_background_one``
    called with their arrays."""
    X, y = dstream(1600, seed=4, period=400)
    ea, eb, Xa, ya, wa = pair(CONFIGS[name], X, y)
    T = ea.n_trees
    for i in range(len(ya)):
        x = np.ascontiguousarray(Xa[i])
        yi = float(ya[i])
        kind = i % 3

        def step(e, K, x=x, yi=yi, kind=kind):
            P, M = np.zeros(T), np.zeros((4, T))
            res = []
            if kind == 0:
                res.append(K.predict_one(e.arena, x, e.aggregation, P, M))
                memo = M
            elif kind == 1:
                K.predict_trees_memo(e.arena, x, P, M)
                res += list(P) + list(M.ravel())
                memo = np.zeros((4, 0))
            else:
                K.predict_trees(e.arena, x, P)
                res += list(P)
                memo = np.zeros((4, 0))
            t0 = K.FRESH
            wt, Pl, dr = np.zeros(T), np.zeros(T), np.zeros(T, np.int8)
            while True:
                st = K.learn_one(e.arena, e.rng, e.bagging, x, yi, 1.0, wt, Pl, dr, t0, memo)
                res.append(st)
                if st < 0:
                    break
                e.make_room(st)
                t0 = st
                memo = np.zeros((4, 0)) if memo.shape[1] else memo
            res += list(Pl) + list(wt) + list(dr)
            if e.bg_on.any():
                t0 = K.FRESH
                bw = np.zeros(T)
                while True:
                    s2 = K.learn_background_one(e.bg, e.bg_on, e.bg_rng, e.bagging, x, yi, 1.0,
                                                bw, t0)  # fmt: skip
                    res.append(s2)
                    if s2 == K.DONE:
                        break
                    e.make_room(s2, bg=True)
                    t0 = s2
                res += list(bw)
            if st == K.DRIFTED:
                for t in np.flatnonzero(dr):
                    e._signal(int(t), e.int_of(int(t), S.I_DRIFT))
            return np.array(res, float)

        with dispatch.using_core(False):
            ra = step(ea, NK)
        with dispatch.using_core(True):
            rb = step(eb, dispatch.CORE)
        assert same_bits(ra, rb), f"row {i}"
        if i % 25 == 0:
            assert_same(ea, eb, f"row {i}")
    assert_same(ea, eb, "end")
    assert _counts(eb)["I_ALT_STARTED"] > 0


def test_same_as_numba_every_alternate_path_ran():
    """Over the batch configurations above, alternates were started, adopted and discarded
    (run after them: pytest keeps a file's order)."""
    if len(_TOTALS) < len(ALT):
        pytest.skip("the batch configurations did not run in this session")
    assert all(_TOTALS[k] > 0 for k in ALT), _TOTALS


@numba.njit
def _numba_sides(salts, codes, out):
    for i in range(salts.shape[0]):
        out[i] = numba_cat_goes_left(salts[i], codes[i])


def _cat_inputs():
    r = np.random.default_rng(3)
    salts = np.floor(r.random(4000) * 2.0**52)
    codes = r.integers(-1, 300, 4000).astype(float)
    edge_s = [0.0, -0.0, 1.0, 2.0**52 - 1, 2.0**53, 1e300, -1e300, math.inf, math.nan, 0.5, -3.7]
    edge_c = [-1.0, 0.0, 1.0, 1e6, 2.0**62, -2.0, 7.9, math.nan, math.inf, -math.inf, -0.0]
    s = np.concatenate([salts, np.repeat(edge_s, len(edge_c))])
    c = np.concatenate([codes, np.tile(edge_c, len(edge_s))])
    return s, c


def test_same_as_numba_cat_goes_left():
    s, c = _cat_inputs()
    a = np.zeros(len(s), np.bool_)
    _numba_sides(s, c, a)
    side = _core.tree.cat_goes_left
    b = np.array([side(float(si), float(ci)) for si, ci in zip(s, c, strict=True)])
    assert (a == b).all()
    assert 0.4 < a[:4000].mean() < 0.6


# ------------------------------------------------------------------------------------------------
# reference tests: invariants that hold whatever the core
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
    for si, ci in zip(s[:4000], c[:4000], strict=True):
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
    with dispatch.using_core(True):
        assert isinstance(e.passes, type(dispatch.CORE))
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
    with dispatch.using_core(True):
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
    assert ("extra", S.SPLIT_EXTRA) in _core.tree.rules()
    for rule in ("observers", "extra"):
        for alternates in (False, True):
            for sketch in (False, True):
                k = TreeKind(rule=rule, alternates=alternates, sketch=sketch)
                assert _core.tree.supports(**k.__dict__)
                assert dispatch.core_runs(KindTag(k))
        # (classification: the extra rule's runs, see test_core_classification.py)
        changes = [{"evidence": True}, {"bayes": True}]
        changes += [{"classification": True}] if rule == "observers" else []
        for change in changes:
            assert not _core.tree.supports(**{**TreeKind(rule=rule).__dict__, **change})
