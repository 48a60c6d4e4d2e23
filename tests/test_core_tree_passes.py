"""The compiled core's tree backbone (``streamforest._core``): regression trees of the observers
rule, their passes and the engine's.

Reference tests (they stay after numba is gone): a leaf's statistic is the exact statistic of
the rows routed to it since its parent was created, routing is a plain walk of the node arrays,
a mean leaf predicts its mean, the Page-Hinkley scan is the thesis' test, the constants are the
Python state's, and the bindings refuse what they would overrun or do not run.

Port tests (``test_same_as_numba_*``, transitional): the same engines driven by the numba kernels
and by the core's (every batch pass, the per-example calls with and without the memo, the handle
kernels), every arena array compared bit for bit after each call."""

import math
import pickle

import numba
import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest import drift as D
from streamforest.engine import dispatch
from streamforest.engine import kernels as NK
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.arena import tree_at
from streamforest.tree_kinds.leaf_models import fold_leaf_model, folded_predict

CORE = _core.engine


# ------------------------------------------------------------------------------------------------
# data and engines
def stream(n, seed=0, nominal=True, nan=0.02, drift_at=None):
    """Friedman #1 on 5 features (NaN at rate ``nan``), a nominal column of 4 codes, an abrupt
    drift of the target at row ``drift_at``."""
    r = np.random.default_rng(seed)
    X = r.random((n, 6))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    y = y + 5 * X[:, 4] + r.standard_normal(n)
    X[:, 5] = r.integers(0, 4, n)
    y = y + np.where(X[:, 5] == 2, 4.0, 0.0)
    if not nominal:
        X = X[:, :5]
    if nan:
        X[:, :5][r.random((n, 5)) < nan] = np.nan
    if drift_at is not None:
        y[drift_at:] = 30 - y[drift_at:]
    return X, y


CONFIGS = {
    # name: (model factory, drift, bagging weights)
    "ebst-mean": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40, observer="ebst", leaf_model="mean", nominal_features=(5,), seed=1
    ),
    "tebst-linear": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40,
        observer="tebst",
        tebst_decimals=2,
        leaf_model="linear",
        nominal_features=(5,),
        seed=2,
    ),  # fmt: skip
    "qo-adaptive": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40, observer="qo", leaf_model="adaptive", nominal_features=(5,), seed=3
    ),
    "qo-fixed-radius-mean-drift": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40,
        observer="qo",
        qo_radius=0.05,
        leaf_model="mean",
        drift_threshold=8.0,
        nominal_features=(5,),
        seed=4,
    ),  # fmt: skip
    "ebst-adaptive-drift": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40,
        observer="ebst",
        leaf_model="adaptive",
        drift_threshold=8.0,
        max_depth=6,
        nominal_features=(5,),
        seed=5,
    ),  # fmt: skip
    "tebst-mean-budget": lambda: sf.HoeffdingTreeRegressor(
        grace_period=30,
        observer="tebst",
        tebst_decimals=2,
        leaf_model="mean",
        max_observer_bins=700,
        nominal_features=(5,),
        seed=6,
    ),  # fmt: skip
    "qo-linear-freeze": lambda: sf.HoeffdingTreeRegressor(
        grace_period=30,
        observer="qo",
        qo_radius="sigma/2",
        leaf_model="linear",
        max_leaves=7,
        nominal_features=(5,),
        seed=7,
    ),  # fmt: skip
    "qo-linear-sketch-parent": lambda: sf.HoeffdingTreeRegressor(
        grace_period=40,
        leaf_model="linear",
        leaf_quantile_k=16,
        leaf_quantile_split="parent",
        nominal_features=(5,),
        seed=12,
    ),
    "forest-ebst-mean-sketch-drift": lambda: sf.OnlineForestRegressor(
        n_trees=3,
        tree=sf.HoeffdingTreeRegressor(
            grace_period=40,
            observer="ebst",
            leaf_model="mean",
            leaf_quantile_k=24,
            nominal_features=(5,),
        ),
        drift_threshold=6.0,
        warning_fraction=0.4,
        seed=13,
    ),  # fmt: skip
    "forest-qo-adaptive": lambda: sf.OnlineForestRegressor(
        n_trees=4,
        tree=sf.HoeffdingTreeRegressor(grace_period=40, nominal_features=(5,)),
        drift_threshold=None,
        seed=8,
    ),  # fmt: skip
    "forest-ebst-linear-drift-warning": lambda: sf.OnlineForestRegressor(
        n_trees=3,
        tree=sf.HoeffdingTreeRegressor(
            grace_period=40, observer="ebst", leaf_model="linear", nominal_features=(5,)
        ),
        drift_threshold=6.0,
        warning_fraction=0.4,
        seed=9,
    ),  # fmt: skip
    "forest-tebst-mean-budget": lambda: sf.OnlineForestRegressor(
        n_trees=3,
        tree=sf.HoeffdingTreeRegressor(
            grace_period=30,
            observer="tebst",
            tebst_decimals=2,
            leaf_model="mean",
            nominal_features=(5,),
        ),
        max_memory_mb=0.3,
        drift_threshold=None,
        max_features=None,
        seed=10,
    ),  # fmt: skip
    "forest-qo-median-freeze": lambda: sf.OnlineForestRegressor(
        n_trees=3,
        tree=sf.HoeffdingTreeRegressor(grace_period=30, max_leaves=6, nominal_features=(5,)),
        aggregation="median",
        drift_threshold=None,
        seed=11,
    ),  # fmt: skip
}


def pair(make, X, y):
    """Two identical engines whose trees exist (created on the numba path) and nothing
    learnt, the model, and the encoded rows."""
    m = make()
    with dispatch.using_core(False):
        Xa, ya, wa = m.prepare_batch(X, y, None)
    e = m.engine_
    return pickle.loads(pickle.dumps(e)), pickle.loads(pickle.dumps(e)), Xa, ya, wa


def arrays_of(e):
    """Everything a pass may write: the arenas, the generators, the scratch and counts."""
    out = list(e.arena) + [e.rng, e.bg_rng, e.bg_on, e.created, e.n_resets, e.drift_counts]
    if e.bg_on.any():
        out += list(e.bg)
    return out


def same_bits(a, b) -> bool:
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


def assert_same(ea, eb, what=""):
    A, B = arrays_of(ea), arrays_of(eb)
    assert len(A) == len(B), what
    for k, (a, b) in enumerate(zip(A, B, strict=True)):
        assert same_bits(a, b), f"{what}: array {k} differs"


def _bits(r):
    return np.zeros(0) if r is None else np.asarray(r, dtype=np.float64)


def run_both(ea, eb, action, what=""):
    """``action(e, K)`` on ``ea`` with numba's kernels and on ``eb`` with the core's; the
    results and the engines compared bit for bit."""
    with dispatch.using_core(False):
        ra = action(ea, NK)
    with dispatch.using_core(True):
        rb = action(eb, dispatch.CORE)
    assert same_bits(_bits(ra), _bits(rb)), what
    assert_same(ea, eb, what)
    return ra


def drive_pass(ea, eb, n, step, what, rows=None):
    """Each tree through ``step(K, e, A, t, start) -> stop`` on both engines, call by call as
    :meth:`Engine.drive` does (background trees, growth, drift signals in between), compared
    after every call."""
    for t in range(ea.n_trees):
        i = 0
        while True:

            def one(e, K, t=t, i=i):
                A = e.arena
                bg = e.bg_on[t]
                stop = step(K, e, A, t, i)
                if bg and rows is not None and stop > i:
                    e._background_rows(t, rows, i, stop, None)
                e.after_stop(t, stop, n)
                return stop

            i = run_both(ea, eb, one, f"{what}: tree {t} from row {i}")
            if i >= n:
                break


# ------------------------------------------------------------------------------------------------
# port tests: bit for bit against the numba kernels
@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_as_numba_batch_passes(name):
    X, y = stream(2400, seed=len(name), drift_at=1500)
    ea, eb, Xa, ya, wa = pair(CONFIGS[name], X, y)
    assert_same(ea, eb, "created")
    n1, n2 = 1200, 2000
    W = ea.bagging_weights(wa[:n1])
    eb.bagging_weights(wa[:n1])
    X1, y1 = np.ascontiguousarray(Xa[:n1]), ya[:n1]
    drive_pass(ea, eb, n1, lambda K, e, A, t, i: K.learn_rows(A, t, X1, y1, W, i), "learn_rows",
               rows=(X1, y1, wa[:n1]))  # fmt: skip
    assert sum(int(ea.state(t).ints[S.I_NSPLITS]) for t in range(ea.n_trees)) > 0
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
    # (the pass of weighted aggregation: the trees' log weights, 0 without evidence, recorded)
    Xw, yw, ww = X2[:200], y2[:200], w2[:200]
    Ww = ea.bagging_weights(ww)
    eb.bagging_weights(ww)
    Pa, Pb, La, Lb = (np.full((ea.n_trees, 200), 7.0) for _ in range(4))

    def plr_lw(K, e, A, t, i):
        P, LW = (Pa, La) if K is NK else (Pb, Lb)
        return K.predict_learn_rows_lw(A, t, Xw, yw, Ww, i, P, LW)

    drive_pass(ea, eb, 200, plr_lw, "predict_learn_rows_lw", rows=(Xw, yw, ww))
    assert same_bits(Pa, Pb) and same_bits(La, Lb) and (La == 0.0).all()
    # the engine's own batch calls (dispatch included), then the results
    X3, y3 = X[n2:], y[n2:]
    with dispatch.using_core(False):
        ra = [ea.predict_learn(*_enc(ea, X3, y3)), ea.predict_trees(_enc(ea, X3, y3)[0])]
    with dispatch.using_core(True):
        rb = [eb.predict_learn(*_enc(eb, X3, y3)), eb.predict_trees(_enc(eb, X3, y3)[0])]
    for a, b in zip(ra, rb, strict=True):
        assert same_bits(a, b)
    assert_same(ea, eb, "engine passes")
    _check_exercised(name, ea)


def _enc(e, X, y):
    """Rows of the engine's features and their bagging weights (as a model's batch call)."""
    Xa = np.ascontiguousarray(e.features.encode_array(X, learn=True), dtype=np.float64)
    wa = np.ones(len(y))
    return Xa, np.asarray(y, float), e.bagging_weights(wa), wa


def _check_exercised(name, e):
    """The configuration reached what it is for (deactivations; a frozen tree; drifts)."""
    ints = [e.state(t).ints for t in range(e.n_trees)]
    if "budget" in name:
        assert sum(int(i[S.I_NDEACT]) for i in ints) > 0
    if "freeze" in name:
        assert any(int(i[S.I_FROZEN]) for i in ints)
    if "drift" in name:
        assert e.n_resets.sum() > 0 or e.drift_counts.sum() > 0
    if "sketch" in name:
        assert any(int(e.state(t).lf_sketch_levels[:, -1].sum()) > 0 for t in range(e.n_trees))


def _dicts(X):
    out = []
    for row in X:
        d = {f"x{j}": float(v) for j, v in enumerate(row[:5])}
        d["x5"] = float(row[5])
        out.append(d)
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_as_numba_per_example(name):
    """The per-example paths: ``predict_one`` then ``learn_one`` of dicts (the handle kernels,
    with the memo), ``learn_one`` alone (no memo), and the engine's calls of a row that is
    not its row buffer (``learn_one`` / ``predict_one`` kernels)."""
    X, y = stream(900, seed=7 + len(name), drift_at=500)
    ma, mb = CONFIGS[name](), CONFIGS[name]()
    with dispatch.using_core(False):
        ma.learn_many(X[:100], y[:100])
    with dispatch.using_core(True):
        mb.learn_many(X[:100], y[:100])
    assert_same(ma.engine_, mb.engine_, "first rows")
    D_ = _dicts(X)
    for i in range(100, 900):
        x, yi = D_[i], float(y[i])

        def step(e, K, m, x=x, yi=yi, i=i):
            out = []
            if i % 3 != 2:
                out.append(m.predict_one(x))  # predict_one_h; learn_one_h below uses its memo
            m.learn_one(x, yi, 1.0 + (i % 4 == 0) + 0.375 * (i % 7 == 0))
            if i % 5 == 0:  # a row that is not the row buffer: learn_one / predict_one kernels
                row = e.features.encode_dict(x, True).copy()
                out.append(e.predict_one(row))
                e.learn_one(row, yi, 1.0)
            return np.array(out + list(e.last_predictions))

        with dispatch.using_core(False):
            ra = step(ma.engine_, NK, ma)
        with dispatch.using_core(True):
            rb = step(mb.engine_, dispatch.CORE, mb)
            if i == 899:  # (the core ran the handle kernels)
                key = (NK.learn_one_h, mb.engine_.arena.kind)
                assert dispatch.ENTRY_POINTS[key] is CORE.learn_one_h
        assert same_bits(ra, rb), f"row {i}"
        if i % 50 == 0 or i == 899:
            assert_same(ma.engine_, mb.engine_, f"row {i}")
    assert_same(ma.engine_, mb.engine_, "end")


@pytest.mark.parametrize("name", ["qo-adaptive", "forest-ebst-linear-drift-warning",
                                  "forest-tebst-mean-budget"])  # fmt: skip
def test_same_as_numba_kernels_called_directly(name):
    """The engine kernels called with their arrays (``learn_one`` resuming at a tree that
    lacked room, with and without a memo; ``predict_one``, ``predict_trees``,
    ``predict_trees_memo``; ``learn_background_one``; the handle kernels ``learn_one_h`` /
    ``predict_one_h`` on handles of each engine's arrays)."""
    X, y = stream(700, seed=3, drift_at=400)
    ea, eb, Xa, ya, wa = pair(CONFIGS[name], X, y)
    T = ea.n_trees
    for i in range(700):
        x = np.ascontiguousarray(Xa[i])
        yi = float(ya[i])
        kind = i % 4

        def step(e, K, x=x, yi=yi, kind=kind):
            P = np.zeros(T)
            M = np.zeros((4, T))
            res = []
            if kind == 0:  # predict_one, then learn_one with its memo
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
            if kind == 3:  # through handles of the engine's own arrays
                e.use_row(x)
                H = e.handle()
                res.append(K.predict_one_h(H, e.arena.kind, e.aggregation))
                t0 = K.FRESH
                while True:
                    st = K.learn_one_h(H, e.arena.kind, e.bagging, yi, 1.0, t0, True)
                    res.append(st)
                    if st < 0:
                        break
                    e.make_room(st)
                    H = e.handle()
                    t0 = st
                res += list(e.last_predictions) + list(e._wt) + list(e._drifted)
                if st == K.DRIFTED:
                    for t in np.flatnonzero(e._drifted):
                        e._signal(int(t), e.int_of(int(t), S.I_DRIFT))
                return np.array(res, float)
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
            if e.bg_on.any():  # the background trees learn the row
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
        assert_same(ea, eb, f"row {i}")


def test_same_as_numba_tree_creation_and_queries():
    """``init_tree`` (a tree's root leaf), ``leaf_best_cut``, ``rebuild_hash_at``,
    ``lacks_room``, ``draw_background`` and the Page-Hinkley scan."""
    from streamforest.tree_kinds import observers

    X, y = stream(1500, seed=21)
    for make in (CONFIGS["qo-adaptive"], CONFIGS["forest-qo-adaptive"]):
        ma, mb = make(), make()
        with dispatch.using_core(False):
            ma.learn_many(X[:900], y[:900])
        with dispatch.using_core(True):
            mb.learn_many(X[:900], y[:900])
        ea, eb = ma.engine_, mb.engine_
        assert_same(ea, eb, "learnt")
        for t in range(ea.n_trees):
            st = ea.state(t)
            for leaf in np.flatnonzero(st.lf_node >= 0)[:5]:
                for j in range(6):
                    a = observers.leaf_best_cut(ea.arena, t, int(leaf), j, 5.0)
                    b = _core.tree.leaf_best_cut(eb.arena, t, int(leaf), j, 5.0)
                    assert same_bits(np.array(a, float), np.array(b, float))
                    assert_same(ea, eb, "leaf_best_cut")
            run_both(ea, eb, lambda e, K, t=t: K.lacks_room(e.arena, t), "lacks_room")
            run_both(ea, eb, lambda e, K, t=t: K.rebuild_hash_at(e.arena, t), "rebuild_hash_at")
            run_both(ea, eb, lambda e, K, t=t: K.init_tree(e.arena, t), "init_tree")
    w = np.random.default_rng(2).random(50)
    for lam in (0.0, 1.0, 6.0):
        oa, ob = np.zeros(50), np.zeros(50)
        sa, sb = np.array([7], np.uint64), np.array([7], np.uint64)
        NK.draw_background(sa, lam, w, oa, 3, 40)
        CORE.draw_background(sb, lam, w, ob, 3, 40)
        assert same_bits(oa, ob) and sa[0] == sb[0]
    r = np.random.default_rng(5)
    yv = np.concatenate([r.normal(size=600), 3 + r.normal(size=600)])
    pv = np.zeros_like(yv)
    pv[::97] = np.nan
    for warn in (0.0, 10.0):
        sa, sb = np.zeros(D.N_PH), np.zeros(D.N_PH)
        D.page_hinkley_init(sa, warn)
        D.page_hinkley_init(sb, warn)
        oa, ob = np.zeros(len(yv), np.int64), np.zeros(len(yv), np.int64)
        D.page_hinkley_scan(sa, yv, pv, 0.005, 20.0, 30, oa)
        _core.drift.page_hinkley_scan(sb, yv, pv, 0.005, 20.0, 30, ob)
        assert (oa == ob).all() and same_bits(sa, sb) and (oa > 0).any()


@numba.njit
def _numba_standardised(state, e, delta, lam, min_n, out):
    for i in range(e.shape[0]):
        out[i] = D.page_hinkley_standardised_update(state, e[i], delta, lam, min_n)


@numba.njit
def _numba_rows(state, rows, e, alpha, lam, out):
    for i in range(e.shape[0]):
        out[i] = D.page_hinkley_row_update(state, rows[i], e[i], alpha, lam)


def test_same_as_numba_drift_detector_variants():
    """The standardised Page-Hinkley test and the per-node one (rows of a 2-d state)."""
    r = np.random.default_rng(4)
    e = np.abs(np.concatenate([r.normal(size=400), 2 + r.normal(size=300)]))
    e[::50] = 40.0
    fired = 0
    for delta, lam, min_n in ((0.1, 20.0, 30), (0.005, 5.0, 5), (0.0, 2.0, 2)):
        sa, sb = np.zeros(D.N_SPH), np.zeros(D.N_SPH)
        oa, ob = np.zeros(len(e), np.bool_), np.zeros(len(e), np.int8)
        _numba_standardised(sa, e, delta, lam, min_n, oa)
        _core.drift.page_hinkley_standardised_scan(sb, e, delta, lam, min_n, ob)
        assert (oa == ob.astype(bool)).all() and same_bits(sa, sb)
        fired += int(oa.sum())
    assert fired
    rows = r.integers(0, 3, len(e))
    sa = np.zeros((3, D.N_PHN))
    sa[:, D.PHN_SD0] = [0.0, 0.5, 2.0]
    sb = sa.copy()
    oa, ob = np.zeros(len(e), np.bool_), np.zeros(len(e), np.int8)
    _numba_rows(sa, rows, e, 0.005, 15.0, oa)
    _core.drift.page_hinkley_row_scan(sb, rows, e, 0.005, 15.0, ob)
    assert (oa == ob.astype(bool)).all() and same_bits(sa, sb) and oa.any()


@numba.njit
def _numba_fold(A, t, leaf, x):
    st, prm = tree_at(A, t)
    nfeat = st.ints[S.I_NFEAT]
    a, linear = fold_leaf_model(st, prm, leaf, nfeat)
    return a, linear, folded_predict(st, a, x, nfeat), st.ft_linear.copy()


def test_same_as_numba_folded_leaf_models():
    """A leaf model folded for many rows (the interval methods' fast path) and its prediction,
    which is the leaf's own up to rounding."""
    X, y = stream(1500, seed=2)
    for lm in ("linear", "adaptive", "mean"):
        m = sf.HoeffdingTreeRegressor(grace_period=60, leaf_model=lm, nominal_features=(5,))
        m.learn_many(X, y)
        e = m.engine_
        A = e.arena
        Xa = np.ascontiguousarray(e.features.encode_array(X[:300], learn=False), np.float64)
        leaves = e.apply(0, Xa)
        pred = e.predict_trees(Xa)[0]
        for i in range(0, 300, 7):
            leaf = int(e.state(0).nd_leaf[leaves[i]])
            a, lin, p, fl = _numba_fold(A, 0, leaf, Xa[i])
            b = _core.tree.fold_leaf_model(A, 0, leaf)
            assert same_bits(np.array([a, lin], float), np.array(b, float))
            assert same_bits(fl, e.state(0).ft_linear)
            q = _core.tree.folded_predict(A, 0, b[0], Xa[i])
            assert same_bits(p, q)
            assert q == pytest.approx(pred[i], rel=1e-9, abs=1e-9)
            assert not lin or lm != "mean"


# ------------------------------------------------------------------------------------------------
# reference tests: invariants that hold whatever the core
def _walk(st, x):
    """The leaf node ``x`` reaches: the node arrays read in plain Python."""
    node = 0
    while st.nd_feat[node] >= 0:
        f = int(st.nd_feat[node])
        v = x[f] if f < len(x) else math.nan
        if math.isnan(v):
            left = st.nd_miss_left[node] == 1
        elif st.ft_nominal[f]:
            off, nl = int(st.nd_cat_off[node]), int(st.nd_cat_len[node])
            nr = int(st.nd_cat_right[node])
            lefts = set(st.cats[off : off + nl].tolist())
            rights = set(st.cats[off + nl : off + nl + nr].tolist())
            left = True if v in lefts else (False if v in rights else st.nd_miss_left[node] == 1)
        else:
            left = v <= st.nd_thr[node]
        node = int(st.nd_left[node] if left else st.nd_right[node])
    return node


def _parent_of(st):
    parent = {}
    for n in range(int(st.ints[S.I_NNODES])):
        if st.nd_feat[n] >= 0:
            parent[int(st.nd_left[n])] = n
            parent[int(st.nd_right[n])] = n
    return parent


@pytest.mark.parametrize("observer", ["ebst", "tebst", "qo"])
def test_leaf_statistics_are_those_of_the_rows_routed_there(observer):
    """Every leaf's statistic is the exact statistic of the rows learnt since its parent was
    created that the final tree routes to it (nominal splits, missing values and all); routing
    is the plain walk of the node arrays; a mean leaf predicts its mean."""
    X, y = stream(3000, seed=11)
    m = sf.HoeffdingTreeRegressor(grace_period=60, observer=observer, leaf_model="mean",
                                  nominal_features=(5,), seed=0)  # fmt: skip
    Xa, ya, wa = m.prepare_batch(X, y, None)
    e = m.engine_
    with dispatch.using_core(True):
        assert isinstance(e.passes, type(dispatch.CORE))
        e.learn(Xa, ya, e.bagging_weights(wa), wa)
        leaves = e.apply(0, Xa)
        pred = e.predict_trees(Xa)[0]
    st = e.state(0)
    assert int(st.ints[S.I_NSPLITS]) >= 4 and int(st.ints[S.I_NDEACT]) == 0
    assert any(st.ft_nominal[int(f)] for f in st.nd_feat[: int(st.ints[S.I_NNODES])] if f >= 0)
    walked = np.array([_walk(st, row) for row in Xa])
    assert (walked == leaves).all()
    parent = _parent_of(st)
    for node in np.unique(leaves):
        leaf = int(st.nd_leaf[node])
        born = int(st.nd_born[parent[int(node)]]) if int(node) in parent else 0
        rows = np.flatnonzero((leaves == node) & (np.arange(len(ya)) >= born))
        w, hi, lo, m2 = st.lf_stat[leaf]
        assert w == len(rows)
        mean = math.fsum(ya[rows]) / len(rows)
        assert hi + lo == pytest.approx(mean, rel=1e-12, abs=1e-12)
        ss = math.fsum((ya[rows] - mean) ** 2)
        assert m2 == pytest.approx(ss, rel=1e-9, abs=1e-9)
        assert (pred[leaves == node] == hi + lo).all()


def test_page_hinkley_scan_is_the_thesis_test():
    """The scan against a plain-Python reading of the thesis' algorithm (warm-up sd, clipped
    normalised errors, m_t - M_t against lambda and the warning threshold)."""
    r = np.random.default_rng(9)
    y = np.concatenate([r.normal(size=500), 2.5 + r.normal(size=400), r.normal(size=400)])
    pred = np.zeros_like(y)
    for warn, lam in ((0.0, 25.0), (8.0, 25.0)):
        state = np.zeros(D.N_PH)
        D.page_hinkley_init(state, warn)
        out = np.zeros(len(y), np.int64)
        _core.drift.page_hinkley_scan(state, y, pred, 0.005, lam, 30, out)
        expected = []
        s = dict(n=0, ym=0.0, ym2=0.0, sd=0.0, t=0, ebar=0.0, m=0.0, mmin=0.0, warned=False)
        for yi, pi in zip(y, pred, strict=True):
            s["n"] += 1
            if s["sd"] <= 0:
                d = yi - s["ym"]
                s["ym"] += d / s["n"]
                s["ym2"] += d * (yi - s["ym"])
                if s["n"] >= 30 and s["ym2"] > 0:
                    s["sd"] = math.sqrt(s["ym2"] / s["n"])
                expected.append(0)
                continue
            e = min(abs(yi - pi) / s["sd"], 2.0)
            s["t"] += 1
            s["ebar"] += (e - s["ebar"]) / s["t"]
            s["m"] = s["m"] + e - s["ebar"] - 0.005
            if s["m"] < s["mmin"]:
                s["mmin"] = s["m"]
                expected.append(3 if s["warned"] else 0)
                s["warned"] = False
            elif s["m"] - s["mmin"] > lam:
                s = dict(n=0, ym=0.0, ym2=0.0, sd=0.0, t=0, ebar=0.0, m=0.0, mmin=0.0,
                         warned=False)  # fmt: skip
                expected.append(1)
            elif warn > 0 and s["m"] - s["mmin"] > warn and not s["warned"]:
                s["warned"] = True
                expected.append(2)
            else:
                expected.append(0)
        assert out.tolist() == expected
        assert 1 in expected and (warn == 0 or 2 in expected)


def test_constants_are_the_python_states():
    for name, value in _core.tree.CONSTANTS.items():
        assert getattr(S, name) == value, name
    assert _core.drift.N_PH == D.N_PH and _core.drift.N_SPH == D.N_SPH
    assert _core.drift.N_PHN == D.N_PHN
    for name in ("DONE", "DRIFTED", "FRESH", "H_SIZE", "H_ROW"):
        assert getattr(CORE, name) == getattr(NK, name)


def test_supports_names_the_kinds_the_core_runs():
    from streamforest.tree_kinds.kinds import TreeKind

    assert _core.tree.rules()[0] == ("observers", S.SPLIT_OBSERVERS)
    plain = TreeKind()
    assert dispatch.core_runs(_tag(plain))
    assert dispatch.core_runs(_tag(TreeKind(sketch=True)))
    changes = [{"classification": True}, {"evidence": True}]  # (alternates: test_core_extra.py)
    changes += [{"bayes": True}, {"rule": "pregrown"}]
    for change in changes:
        k = TreeKind(**{**plain.__dict__, **change})
        assert not _core.tree.supports(**k.__dict__), change
        assert not dispatch.core_runs(_tag(k))
    assert not dispatch.core_runs(None)
    with dispatch.using_core(False):
        assert not dispatch.core_runs(_tag(plain))
        assert dispatch.kernels_for(_tag(plain)) is NK


def _tag(kind):
    from streamforest.tree_kinds.kinds import KindTag

    return KindTag(kind)


def test_bindings_refuse_what_they_would_overrun():
    X, y = stream(300, seed=1)
    m = CONFIGS["forest-qo-adaptive"]()
    m.learn_many(X, y)
    e = m.engine_
    A = e.arena
    Xa = np.ascontiguousarray(e.features.encode_array(X, learn=False), dtype=np.float64)
    W = np.ones((e.n_trees, 300))
    with pytest.raises(ValueError):  # rows narrower than the trees' features
        CORE.learn_rows(A, 0, np.ascontiguousarray(Xa[:, :3]), y, W, 0)
    with pytest.raises(ValueError):
        CORE.learn_rows(A, 0, Xa, y[:10], W, 0)
    with pytest.raises(ValueError):
        CORE.learn_rows(A, 0, Xa, y, W[:, :10], 0)
    with pytest.raises(IndexError):
        CORE.learn_rows(A, e.n_trees, Xa, y, W, 0)
    with pytest.raises(TypeError):  # an output array is the caller's own memory
        CORE.predict_rows(A, 0, Xa, np.zeros((e.n_trees, 300), np.float32))
    with pytest.raises((TypeError, ValueError)):
        CORE.learn_rows(tuple(A)[:4], 0, Xa, y, W, 0)
    with pytest.raises(ValueError):
        CORE.predict_rows(A, 0, Xa, np.zeros((e.n_trees, 5)))
    with pytest.raises(ValueError):
        CORE.predict_one(A, Xa[0], 0, np.zeros(1), np.zeros((4, e.n_trees)))
    with pytest.raises(ValueError):
        CORE.learn_one_h(np.zeros(5, np.int64), None, 1.0, 0.0, 1.0, -1, False)
    bad = A.pa.copy()
    bad[0, 22] = S.SPLIT_PREGROWN  # a kind the core does not run (yet)
    with pytest.raises(ValueError, match="does not run"):
        CORE.predict_rows((A.fa, A.ia, A.ba, A.lay, bad), 0, Xa, np.zeros((e.n_trees, 300)))
    empty = (np.zeros((1, 0)), np.zeros((1, 0), np.int64), np.zeros((1, 0), np.int8),
             np.zeros((1, 61, 4), np.int64), np.zeros((1, 40)))  # fmt: skip
    with pytest.raises(ValueError, match="does not exist"):
        CORE.lacks_room(empty, 0)
