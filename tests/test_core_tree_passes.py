"""The compiled core's tree backbone (``streamforest._core``): regression trees of the observers
rule, their passes and the engine's.

A leaf's statistic is the exact statistic of the rows routed to it since its parent was
created, routing is a plain walk of the node arrays, a mean leaf predicts its mean, a folded
leaf model predicts the leaf's own prediction, the Page-Hinkley scan is the thesis' test, the
constants are the Python state's, and the bindings refuse what they would overrun or do not
run.  The other test_core_*.py files take their stream and ``same_bits`` from here."""

import math

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest import drift as D
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.kinds import TreeKind

CORE = _core.engine


# ------------------------------------------------------------------------------------------------
# data
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


def same_bits(a, b) -> bool:
    """Equal to the bit (NaN payloads and the sign of zero included), of one shape and type."""
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


# ------------------------------------------------------------------------------------------------
# reference tests
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


def test_folded_leaf_models_predict_the_leaf():
    """A leaf model folded for many rows (the interval methods' fast path): its prediction is
    the leaf's own up to rounding, and a mean leaf folds to a constant."""
    X, y = stream(1500, seed=2)
    for lm in ("linear", "adaptive", "mean"):
        m = sf.HoeffdingTreeRegressor(grace_period=60, leaf_model=lm, nominal_features=(5,))
        m.learn_many(X, y)
        e = m.engine_
        A = e.arena
        Xa = np.ascontiguousarray(e.features.encode_array(X[:300], learn=False), np.float64)
        leaves = e.apply(0, Xa)
        pred = e.predict_trees(Xa)[0]
        assert int(e.state(0).ints[S.I_NSPLITS]) > 0
        for i in range(0, 300, 7):
            leaf = int(e.state(0).nd_leaf[leaves[i]])
            a, linear = _core.tree.fold_leaf_model(A, 0, leaf)
            q = _core.tree.folded_predict(A, 0, a, Xa[i])
            assert q == pytest.approx(pred[i], rel=1e-9, abs=1e-9)
            assert not linear or lm != "mean"


def test_constants_are_the_python_states():
    for name, value in _core.tree.CONSTANTS.items():
        assert getattr(S, name) == value, name
    assert _core.drift.N_PH == D.N_PH and _core.drift.N_SPH == D.N_SPH
    assert _core.drift.N_PHN == D.N_PHN


def test_supports_names_the_kinds_the_core_runs():
    assert ("observers", S.SPLIT_OBSERVERS) in [(r["name"], r["code"]) for r in _core.tree.rules()]
    plain = TreeKind()
    assert _core.tree.supports(**plain.__dict__)
    assert _core.tree.supports(**TreeKind(sketch=True).__dict__)
    changes = [{"classification": True}, {"evidence": True}]  # (alternates: test_core_extra.py)
    changes += [{"bayes": True}]  # (with the observers rule: the pre-grown trees' components)
    for change in changes:
        k = TreeKind(**{**plain.__dict__, **change})
        assert not _core.tree.supports(**k.__dict__), change


def test_bindings_refuse_what_they_would_overrun():
    X, y = stream(300, seed=1)
    m = sf.OnlineForestRegressor(
        n_trees=4,
        tree=sf.HoeffdingTreeRegressor(grace_period=40, nominal_features=(5,)),
        drift_threshold=None,
        seed=8,
    )
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
        CORE.learn_one_h(np.zeros(5, np.int64), 1.0, 0.0, 1.0, -1, False)
    bad = A.pa.copy()
    bad[0, 22] = 9  # a split rule the core does not have
    with pytest.raises(ValueError, match="does not run"):
        CORE.predict_rows((A.fa, A.ia, A.ba, A.lay, bad), 0, Xa, np.zeros((e.n_trees, 300)))
    ro = A.fa.copy()
    ro.flags.writeable = False  # the passes write the trees' rows
    with pytest.raises(TypeError):
        CORE.lacks_room((ro, A.ia, A.ba, A.lay, A.pa), 0)
    with pytest.raises(TypeError):  # not C-contiguous
        CORE.lacks_room((np.asfortranarray(A.fa), A.ia, A.ba, A.lay, A.pa), 0)
    with pytest.raises(TypeError):
        CORE.lacks_room((A.fa, A.ia.astype(np.int32), A.ba, A.lay, A.pa), 0)
    empty = (np.zeros((1, 0)), np.zeros((1, 0), np.int64), np.zeros((1, 0), np.int8),
             np.zeros((1, 61, 4), np.int64), np.zeros((1, 40)))  # fmt: skip
    with pytest.raises(ValueError, match="does not exist"):
        CORE.lacks_room(empty, 0)
