"""The compiled core's pre-grown trees (ABORF, ``streamforest._core``): the pre-grown split rule
(building, routing by scaled values or random projections, online min-max scaling), the
evidence weights of trees and leaves, the Bayesian leaves, and the engine's evidence-weighted
aggregation.

The Bayesian posterior is the exact solution of the leaf's faded normal equations, the
evidence weights are a softmax (they sum to 1, equal predictions give exactly that value), a
folded leaf model predicts the leaf's own prediction, routing is the plain walk of the node
arrays with the scaled values, the ranges are those of the rows learnt, the kinds the core
runs, and the bindings refuse what they would overrun."""

import math

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.arena import params_at
from streamforest.tree_kinds.kinds import TreeKind, kind_of
from streamforest.trees import ABORFTreeRegressor

from .test_core_tree_passes import same_bits
from .test_core_tree_passes import stream as _stream

CORE = _core.engine
#: The leaves' constants (src/core/leaves/leaf_models.hpp and bayes.hpp; not bound): a value
#: beyond HUGE_X is missing, a feature whose values at a leaf weigh less than NIG_MIN_W or whose
#: sd there is below NIG_SD_RTOL times its mean's magnitude is not standardised (no spread).
HUGE_X = 1e100
NIG_MIN_W = 5.0
NIG_SD_RTOL = 1e-7


# ------------------------------------------------------------------------------------------------
# data and models
def stream(n, seed=0, huge=True):
    """tests/test_core_tree_passes.py's stream (Friedman #1 on 5 features with NaN, a nominal
    column of 4 codes), with a few values beyond HUGE_X (missing to the leaves, routed as they
    are, extending no range)."""
    X, y = _stream(n, seed=seed)
    if huge:
        X[7::97, 1] = 1e150
        X[11::89, 3] = -3e120
    return X, y


class _MeanLeafTree(ABORFTreeRegressor):
    leaf_model = "mean"


class _AdaptiveLeafTree(ABORFTreeRegressor):
    leaf_model = "adaptive"


class _MeanLeafABORF(sf.ABORFRegressor):
    """ABORF whose trees have mean leaves (a leaf model of any rule)."""

    _tree_class = _MeanLeafTree

    @property
    def tree(self):
        base = sf.ABORFRegressor.tree.fget(self)
        t = self._tree_class.__new__(self._tree_class)
        t.__dict__.update(base.__dict__)
        return t


class _AdaptiveLeafABORF(_MeanLeafABORF):
    _tree_class = _AdaptiveLeafTree


NOM = {"nominal_features": (5,)}
CONFIGS = {
    "oblique-linear-evidence": lambda: sf.ABORFRegressor(n_trees=3, depth=4, seed=1, **NOM),
    "axis-linear-evidence-bagging": lambda: sf.ABORFRegressor(
        n_trees=3, depth=5, oblique=False, lambda_value=1.0, seed=2, **NOM
    ),
    "oblique-linear-equal-few-points": lambda: sf.ABORFRegressor(
        n_trees=2, depth=4, weighting="equal", coef_decay=0.96, mc_points=5, seed=3, **NOM
    ),  # (5 points for 15 split nodes: most nodes take their parent's centre)
    "oblique-bayes-evidence": lambda: sf.ABORFRegressor(
        n_trees=3, depth=3, leaf_model="bayesian", seed=4, **NOM
    ),
    "axis-bayes-equal-bagging": lambda: sf.ABORFRegressor(
        n_trees=2,
        depth=3,
        oblique=False,
        leaf_model="bayesian",
        leaf_decay=1.0,
        weighting="equal",
        lambda_value=2.0,
        seed=5,
        **NOM,
    ),
    "oblique-mean-evidence": lambda: _MeanLeafABORF(n_trees=3, depth=4, seed=6, **NOM),
    "axis-adaptive-evidence-bagging": lambda: _AdaptiveLeafABORF(
        n_trees=2, depth=4, oblique=False, lambda_value=1.0, seed=7, **NOM
    ),
    "tree-axis-linear-evidence-sketch": lambda: ABORFTreeRegressor(
        depth=3, oblique=False, evidence_fading=0.999, leaf_quantile_k=16, seed=13, **NOM
    ),
    "tree-oblique-bayes-evidence": lambda: ABORFTreeRegressor(
        depth=3, bayesian=True, evidence_fading=0.999, mc_points=40, seed=11, **NOM
    ),
}


# ------------------------------------------------------------------------------------------------
# reference tests
def _learnt(name, n=1500, seed=0):
    X, y = stream(n, seed=seed)
    m = CONFIGS[name]()
    m.learn_many(X, y)
    return m, X, y


def _nig_coords(st, leaf, j):
    if st.ft_nominal[j]:
        return 0.0, 0.0
    w, hi, lo, m2 = st.lf_x[leaf, j]
    if w < NIG_MIN_W or m2 <= 0:
        return 0.0, 0.0
    sd = math.sqrt(m2 / w)
    if sd <= NIG_SD_RTOL * abs(hi + lo):
        return 0.0, 0.0
    return hi + lo, 1.0 / sd


@pytest.mark.parametrize("name", ["oblique-bayes-evidence", "axis-bayes-equal-bagging"])
def test_bayesian_posterior_is_the_solution_of_the_faded_normal_equations(name):
    """Each Bayesian leaf's coefficients solve ``(c I + T S T) beta = T s`` (``S``, ``s`` the
    faded scatter it keeps, ``T`` its standardisation) to 1e-12 relative, ``(a, b)`` are the
    inverse-gamma parameters of the same sums, and the tree predicts the posterior mean
    ``m_y + (1, z) . beta`` of a row at its leaf."""
    m, X, y = _learnt(name)
    e = m.engine_
    Xa = np.ascontiguousarray(e.features.encode_array(X, learn=False), dtype=np.float64)
    c = m.prior_precision
    checked = 0
    for t in range(e.n_trees):
        st = e.state(t)
        d = int(st.ints[S.I_NFEAT])
        leaves = e.apply(t, Xa)
        P = e.predict_trees(Xa)[t]
        for s in range(int(st.ints[S.I_NLEAVES])):
            M = st.lf_bayes[s, : d + 2, : d + 2]
            if st.lf_stat[s, S.S_W] <= 0:
                continue
            co = [_nig_coords(st, s, j) for j in range(d)]
            Tm = np.diag([1.0] + [isd for _, isd in co])
            S_ = M[1:, 1:]
            lam = c * np.eye(d + 1) + Tm @ S_ @ Tm
            rhs = Tm @ M[0, 1:]
            beta = np.linalg.solve(lam, rhs)
            got = st.lf_coef[s, : d + 1]
            assert np.abs(got - beta).max() <= 1e-12 * max(1.0, np.abs(beta).max()), (t, s)
            n = M[1, 1]
            assert st.lf_err[s, 0] == m.prior_shape + 0.5 * n
            b = m.prior_scale + 0.5 * max(M[0, 0] - beta @ lam @ beta, 0.0)
            assert abs(st.lf_err[s, 1] - b) <= 1e-12 * max(1.0, M[0, 0])
            rows = np.flatnonzero(leaves == st.lf_node[s])[:20]
            my = st.lf_stat[s, S.S_HI] + st.lf_stat[s, S.S_LO]
            for i in rows:
                z = np.array([1.0] + [(Xa[i, j] - mu) * isd if abs(Xa[i, j]) <= HUGE_X else 0.0
                                      for j, (mu, isd) in enumerate(co)])  # fmt: skip
                z[1:][np.isnan(z[1:])] = 0.0
                want = my + z @ got
                assert abs(P[i] - want) <= 1e-12 * max(1.0, abs(want)), (t, s, i)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_bayesian_scatter_is_the_faded_scatter_of_the_rows(gamma):
    """A leaf's scatter is the faded weighted scatter of ``(y - m_y, 1, x - m_x)`` of the rows
    it learnt, about its current means (the stored rows moved with the means); the posterior
    mean from it is the direct solve of the normal equations of the standardised rows."""
    r = np.random.default_rng(3)
    n = 500
    X = r.uniform(size=(n, 3)) * [1.0, 10.0, 0.1] + [0.0, 1e4, -3.0]
    y = 1e6 + X @ [1.0, -0.3, 20.0] + r.normal(size=n)
    w = r.integers(1, 3, n).astype(float)
    m = sf.ABORFRegressor(n_trees=1, depth=1, leaf_model="bayesian", leaf_decay=gamma, seed=2)
    leaf = np.zeros(n, np.int64)  # the leaf slot of each row, routed before it is learnt
    for i in range(n):
        if i:  # (the first row: no range known, the leftmost leaf)
            leaf[i] = int(m.engine_.apply(0, X[i : i + 1])[0]) - 1
        m.learn_many(X[i : i + 1], y[i : i + 1], w=w[i : i + 1])
    st = m.engine_.state(0)
    c = m.prior_precision
    checked = 0
    for s in range(2):
        at = np.flatnonzero(leaf == s)
        if at.size < 20:
            continue
        ww = w[at] * gamma ** (len(at) - 1 - np.arange(len(at)))
        mx = np.average(X[at], axis=0, weights=w[at])
        my = np.average(y[at], weights=w[at])
        V = np.column_stack([y[at] - my, np.ones(len(at)), X[at] - mx])
        M = V.T @ (ww[:, None] * V)
        got = st.lf_bayes[s, :5, :5]
        assert np.abs(got - M).max() <= 1e-9 * np.abs(M).max()
        sd = np.sqrt(np.average((X[at] - mx) ** 2, axis=0, weights=w[at]))
        Z = np.column_stack([np.ones(len(at)), (X[at] - mx) / sd])
        beta = np.linalg.solve(c * np.eye(4) + Z.T @ (ww[:, None] * Z), Z.T @ (ww * (y[at] - my)))
        np.testing.assert_allclose(st.lf_coef[s, :4], beta, rtol=1e-8, atol=1e-9)
        checked += 1
    assert checked >= 1


def test_evidence_weights_are_a_softmax():
    """The trees' weights sum to 1 and are the softmax of their log evidence; the forest's
    prediction is the weighted mean of the trees' (to rounding), exactly the common value
    when they agree, and shifting every log weight changes nothing."""
    m, X, y = _learnt("oblique-linear-evidence", n=1200)
    e = m.engine_
    lw = np.zeros(e.n_trees)
    CORE.tree_log_weights(e.arena, lw)
    assert np.all(lw == [e.state(t).evidence[S.EV_LOGW] for t in range(e.n_trees)])
    w = m.weights_
    assert abs(math.fsum(w) - 1.0) < 1e-15 and np.all(w > 0)
    np.testing.assert_allclose(w, np.exp(lw - lw.max()) / np.exp(lw - lw.max()).sum(), rtol=1e-15)
    Xa = np.ascontiguousarray(e.features.encode_array(X[:200], learn=False), dtype=np.float64)
    P = e.predict_trees(Xa)
    got = m.predict(X[:200])
    np.testing.assert_allclose(got, w @ P, rtol=1e-13, atol=1e-12)
    out = np.zeros(200)
    CORE.weighted_columns(lw[:, None].copy(), P, out)
    assert same_bits(out, got)
    for shift in (-1e3, 7.5, 1e3):
        o2 = np.zeros(200)
        CORE.weighted_columns(lw[:, None] + shift, P, o2)
        np.testing.assert_allclose(o2, out, rtol=1e-14, atol=1e-12)
    same = np.full((e.n_trees, 3), 1e6 + 0.1)
    o3 = np.zeros(3)
    CORE.weighted_columns(np.random.default_rng(1).normal(size=(e.n_trees, 3)) * 30, same, o3)
    assert np.all(o3 == 1e6 + 0.1)
    one = np.zeros(1)
    CORE.weighted_columns(np.array([[-1e300]]), np.array([[4.25]]), one)
    assert one[0] == 4.25


@pytest.mark.parametrize("name", list(CONFIGS))
def test_folded_leaf_models_predict_the_leaf(name):
    """Every leaf's model folded for many rows (a Bayesian leaf's ``bayes_fold``): the folded
    prediction of a row there is the leaf's own up to rounding (not linear: ``a`` for every
    row)."""
    m, X, y = _learnt(name, n=700, seed=5)
    e = m.engine_
    Xa = np.ascontiguousarray(e.features.encode_array(X, learn=False), dtype=np.float64)
    P = e.predict_trees(Xa)
    checked = 0
    for t in range(e.n_trees):
        leaves = e.apply(t, Xa)
        for leaf in range(int(e.state(t).ints[S.I_NLEAVES])):
            rows = np.flatnonzero(leaves == e.state(t).lf_node[leaf])
            if not rows.size:
                continue
            i = int(rows[0])
            a, linear = _core.tree.fold_leaf_model(e.arena, t, leaf)
            q = _core.tree.folded_predict(e.arena, t, a, Xa[i])
            assert (q if linear else a) == pytest.approx(P[t, i], rel=1e-9, abs=1e-9)
            checked += 1
    assert checked > 0


def _walk(st, x):
    """The leaf node ``x`` reaches: the pre-grown node arrays read in plain Python."""
    mm = st.ft_minmax
    node = 0
    while st.nd_feat[node] >= 0:
        kind = int(st.nd_cat_len[node])
        if kind == S.NODE_PROJ:
            s = 0.0
            for j in range(min(len(x), st.nd_proj.shape[1])):
                inv = mm[j, S.MM_INV]
                z = (x[j] - mm[j, S.MM_MIN]) * inv
                s += st.nd_proj[node, j] * (z if inv != 0 and z == z else st.nd_centre[node, j])
            left = s <= st.nd_thr[node]
        else:
            f = int(st.nd_feat[node])
            v = x[f] if f < len(x) else math.nan
            if kind == S.NODE_SALT:
                if math.isnan(v):
                    left = st.nd_miss_left[node] == 1
                else:
                    z = (int(st.nd_thr[node]) + (int(v) + 1) * 0x9E3779B97F4A7C15) % 2**64
                    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
                    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
                    left = ((z ^ (z >> 31)) & 1) == 0
            else:
                inv = mm[f, S.MM_INV]
                left = math.isnan(v) or inv == 0 or (v - mm[f, S.MM_MIN]) * inv <= st.nd_thr[node]
        node = int(st.nd_left[node] if left else st.nd_right[node])
    return node


@pytest.mark.parametrize("name", ["oblique-linear-evidence", "axis-adaptive-evidence-bagging"])
def test_pregrown_tree_routes_by_its_arrays_and_scales_by_the_rows_learnt(name):
    """A balanced tree in heap order (its leaves inactive, its split count), routing is the
    plain walk of its arrays with the scaled values (projections, axis tests, hashed category
    sides, missing values at the centre), and each range is that of the rows learnt (values
    beyond HUGE_X, NaN and nominal features extend none)."""
    m, X, y = _learnt(name, n=1200, seed=4)
    e = m.engine_
    Xa = np.ascontiguousarray(e.features.encode_array(X, learn=False), dtype=np.float64)
    depth = m.depth
    for t in range(e.n_trees):
        st = e.state(t)
        nodes, leaves = 2 ** (depth + 1) - 1, 2**depth
        assert int(st.ints[S.I_NNODES]) == nodes and int(st.ints[S.I_NLEAVES]) == leaves
        assert int(st.ints[S.I_NSPLITS]) == leaves - 1
        split = np.arange(leaves - 1)
        assert (st.nd_left[split] == 2 * split + 1).all()
        assert (st.nd_right[split] == 2 * split + 2).all()
        assert (st.nd_leaf[leaves - 1 : nodes] == np.arange(leaves)).all()
        assert (st.lf_active[:leaves] == 0).all() and (st.nd_feat[leaves - 1 : nodes] == -1).all()
        got = e.apply(t, Xa)
        assert got.tolist() == [_walk(st, row) for row in Xa]
        learnt = np.where(np.abs(Xa[:, :5]) <= HUGE_X, Xa[:, :5], np.nan)
        if e.bagging > 0:  # (bagging weights of zero: rows not learnt by this tree)
            continue
        np.testing.assert_array_equal(st.ft_minmax[:5, S.MM_MIN], np.nanmin(learnt, axis=0))
        np.testing.assert_array_equal(st.ft_minmax[:5, S.MM_MAX], np.nanmax(learnt, axis=0))
        assert np.isnan(st.ft_minmax[5, S.MM_MIN]) and st.ft_minmax[5, S.MM_INV] == 0.0


def test_evidence_update_is_algorithm_6_3():
    """One tree's log weight recomputed in plain Python from its prequential errors (rho = n /
    S per leaf, e_T faded by gamma_T; an empty leaf only fades e_T)."""
    X, y = stream(300, seed=9, huge=False)
    X = X[:, :5]
    X[np.isnan(X)] = 0.5
    m = sf.ABORFRegressor(n_trees=1, depth=3, seed=4)
    g, gT, L = 0.96, 0.9996, 8
    n_, s_, term, seen, e_t = np.zeros(L), np.zeros(L), np.zeros(L), np.zeros(L, bool), 0.0
    m.learn_many(X[:1], y[:1])
    seen[int(m.engine_.apply(0, X[:1])[0]) - (L - 1)] = True
    e_t = 0.0
    for i in range(1, 300):
        leaf = int(m.engine_.apply(0, X[i : i + 1])[0]) - (L - 1)
        pred = m.tree_predictions(X[i : i + 1])[0, 0]
        m.learn_many(X[i : i + 1], y[i : i + 1])
        if not seen[leaf]:
            seen[leaf] = True
            e_t *= gT
            continue
        e2 = (y[i] - pred) ** 2
        n_[leaf] = g * n_[leaf] + 1
        s_[leaf] = g * s_[leaf] + e2
        term[leaf] = 0.5 * (n_[leaf] - 5) * math.log(n_[leaf] / s_[leaf])
        e_t = gT * e_t + 0.5 * n_[leaf] * e2 / s_[leaf]
    assert seen.sum() >= 5
    ev = m.engine_.state(0).evidence
    assert abs(ev[S.EV_ERR] - e_t) < 1e-12 * e_t
    assert abs(ev[S.EV_LOGW] - (math.fsum(term) - e_t) / L) < 1e-11 * abs(e_t)


def test_supports_the_pregrown_regression_kinds():
    assert ("pregrown", S.SPLIT_PREGROWN) in [(r["name"], r["code"]) for r in _core.tree.rules()]
    base = TreeKind(rule="pregrown", evidence=True)
    for change in ({}, {"bayes": True}, {"sketch": True}):
        k = TreeKind(**{**base.__dict__, **change})
        assert _core.tree.supports(**k.__dict__)
    for change in ({"classification": True}, {"alternates": True}):
        k = TreeKind(**{**base.__dict__, **change})
        assert not _core.tree.supports(**k.__dict__), change
    for change in ({"evidence": True}, {"bayes": True}):  # the pre-grown trees' components only
        assert not _core.tree.supports(**{**TreeKind().__dict__, **change})
    for name, make in CONFIGS.items():
        m = make()
        m.learn_many(*stream(3, seed=1))
        e = m.engine_
        for t in range(e.n_trees):
            assert _core.tree.supports(**kind_of(params_at(e.arena, t)).__dict__), name


def test_bindings_refuse_what_they_would_overrun():
    m, X, y = _learnt("oblique-bayes-evidence", n=200)
    e = m.engine_
    A = e.arena
    P = np.zeros((e.n_trees, 10))
    with pytest.raises(ValueError):  # not a row of weights per tree
        CORE.weighted_columns(np.zeros((e.n_trees + 1, 10)), P, np.zeros(10))
    with pytest.raises(ValueError):
        CORE.weighted_columns(np.zeros((e.n_trees, 0)), P, np.zeros(10))
    with pytest.raises(ValueError):
        CORE.weighted_columns(np.zeros((e.n_trees, 1)), P, np.zeros(9))
    with pytest.raises(ValueError):
        CORE.weighted_columns(np.zeros((0, 1)), np.zeros((0, 3)), np.zeros(3))
    with pytest.raises(TypeError):
        CORE.weighted_columns(np.zeros((e.n_trees, 1)), P, np.zeros(10, np.float32))
    out = np.zeros(0)
    CORE.weighted_columns(np.zeros((0, 0)), np.zeros((0, 0)), out)  # nothing to do
    with pytest.raises(ValueError):
        CORE.tree_log_weights(A, np.zeros(e.n_trees - 1))
    with pytest.raises((TypeError, ValueError)):
        CORE.tree_log_weights(tuple(A)[:4], np.zeros(e.n_trees))
    # a tree whose fields cannot hold the balanced tree of its depth: refused, nothing written
    bad = A.pa.copy()
    bad[0, 3] = m.depth + 1  # max_depth
    before = [a.copy() for a in (A.fa, A.ia, A.ba)]
    with pytest.raises(ValueError, match="pre-grown tree"):
        CORE.init_tree((A.fa, A.ia, A.ba, A.lay, bad), 0)
    bad[0, 3] = 40
    with pytest.raises(ValueError, match="depth"):
        CORE.init_tree((A.fa, A.ia, A.ba, A.lay, bad), 0)
    for a, b in zip(before, (A.fa, A.ia, A.ba), strict=True):
        assert same_bits(a, b)
