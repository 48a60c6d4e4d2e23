"""The compiled core's classification trees (``streamforest._core``): the classification task,
its leaves (majority class, naive Bayes, adaptive naive Bayes), the Gaussian split rule of VFDT
and the classifier engine's votes.

A leaf's class weights are the counts of the rows the tree routes to it, a tree's and a
forest's class probabilities sum to 1, a majority leaf answers its class frequencies, a naive
Bayes leaf the plain-Python naive Bayes, the votes are the majority of the trees' classes with
ties broken by the mean probability, the core runs the kinds it says it runs, and the bindings
refuse what they would overrun."""

import math

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.tree_kinds import state as S
from streamforest.tree_kinds.kinds import TreeKind

from .test_core_tree_passes import _parent_of

CORE = _core.engine


# ------------------------------------------------------------------------------------------------
# data and models
def class_stream(n, seed=0, n_classes=4, new_class_at=None, nan=0.02, n_cats=40, drift_at=None):
    """Five numeric features (NaN at rate ``nan``), a nominal column of 4 codes (NaN too) and
    one of ``n_cats`` codes; ``n_classes`` classes from the quantiles of a score of them, only
    classes 0 and 1 before row ``new_class_at``, the classes reversed from row ``drift_at``."""
    r = np.random.default_rng(seed)
    X = r.random((n, 7))
    X[:, 5] = r.integers(0, 4, n)
    X[:, 6] = r.integers(0, n_cats, n)
    s = X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * (X[:, 5] == 2) + 0.6 * (X[:, 6] % 5 == 1)
    s = s + 0.1 * r.standard_normal(n)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))
    if drift_at is not None:
        y[drift_at:] = (n_classes - 1) - y[drift_at:]
    if new_class_at is not None:
        y[:new_class_at] = np.minimum(y[:new_class_at], 1)
    if nan:
        X[:, :5][r.random((n, 5)) < nan] = np.nan
        X[:, 5][r.random(n) < nan] = np.nan
    return X, y


def _ht(**kw):
    base = dict(grace_period=30, delta=0.05, tau=0.2, nominal_features=(5, 6), seed=1)
    return lambda: sf.HoeffdingTreeClassifier(**{**base, **kw})


def _actser(**kw):
    base = dict(delta=0.1, tau=0.3, nominal_features=(5, 6), seed=1)
    return lambda: sf.ACTSERClassifier(**{**base, **kw})


def _dict(X, i):
    d = {f"x{j}": float(X[i, j]) for j in range(6)}
    if not math.isnan(X[i, 6]):
        d["x6"] = f"c{int(X[i, 6])}"  # (a string: nominal) and missing from some rows
    return d


# ------------------------------------------------------------------------------------------------
# reference tests
def _fit(make, X, y):
    m = make()
    m.learn_many(X, y)
    return m


@pytest.mark.parametrize("rule", ["gauss", "extra"])
def test_class_weights_are_the_counts_of_the_rows_routed_there(rule):
    """On nominal features without missing values a Gaussian tree's splits send one category
    left and every other one its leaf saw right (an extremely randomised one each category to
    its salt's side), and the children start with the class weights of their sides: every
    leaf's class weights are exactly the counts of the rows learnt since its parent was
    created that the final tree routes to it (single tree, unit weights, no alternates)."""
    r = np.random.default_rng(8)
    n = 4000
    X = np.column_stack([r.integers(0, 6, n), r.integers(0, 30, n), r.integers(0, 3, n)])
    X = X.astype(float)
    y = ((X[:, 0] == 1) + 2 * (X[:, 1] % 3 == 0) + (r.random(n) < 0.1)) % 3
    if rule == "gauss":
        make = _ht(nominal_features=(0, 1, 2), leaf_prediction="mc")
    else:
        make = _actser(nominal_features=(0, 1, 2), leaf_prediction="mc", drift_detection=False)
    m = _fit(make, X, y)
    e = m.engine_
    st = e.state(0)
    assert int(st.ints[S.I_NSPLITS]) >= 4
    Xa = m.encode_predict(X)
    leaves = e.apply(0, Xa)
    ya = np.array([m._class_index[v] for v in y.tolist()])
    parent = _parent_of(st)
    for node in np.unique(leaves):
        leaf = int(st.nd_leaf[node])
        born = int(st.nd_born[parent[int(node)]]) if int(node) in parent else 0
        rows = (leaves == node) & (np.arange(n) >= born)
        counts = np.bincount(ya[rows], minlength=len(m.classes_))
        assert (st.lf_class_weights[leaf] == counts).all(), node
        assert st.lf_stat[leaf, S.S_W] == counts.sum()
    assert any(int(node) in parent and int(st.nd_born[parent[int(node)]]) > 0 for node in leaves)
    P = m.predict_proba(X)  # majority leaves: their class frequencies, exactly
    for node in np.unique(leaves):
        c = st.lf_class_weights[int(st.nd_leaf[node])]
        assert (P[leaves == node] == c / c.sum()).all()


@pytest.mark.parametrize("leaf", ["mc", "nb", "nba"])
def test_probabilities_sum_to_one(leaf):
    X, y = class_stream(2500, seed=9)
    m = _fit(_ht(leaf_prediction=leaf), X, y)
    P = m.predict_proba(X)
    labels = m.predict(X)
    one = [m.predict_proba_one(_dict(X, i)) for i in range(0, 2500, 50)]
    assert P.shape == (2500, 4) and (P >= 0).all()
    assert max(abs(math.fsum(p) - 1.0) for p in P) < 1e-12
    assert max(abs(math.fsum(d.values()) - 1.0) for d in one) < 1e-12
    cls = np.array(m.classes_)[np.argmax(P, axis=1)]  # one tree: its most probable class
    assert (labels == cls).all()


def test_naive_bayes_leaf_is_naive_bayes():
    """A tree that has not split: its naive Bayes probabilities are the plain-Python naive
    Bayes of the rows (Gaussian likelihoods with the variance floor, Laplace-smoothed counts
    over the categories seen), and its majority-class probabilities the class frequencies."""
    r = np.random.default_rng(3)
    n = 300
    X = np.column_stack([r.normal(size=n), r.normal(2.0, 3.0, n), r.integers(0, 5, n)])
    y = (X[:, 0] + (X[:, 2] == 1) > 0.3).astype(int) + (X[:, 1] > 4)
    X[r.random(n) < 0.05, 0] = np.nan
    m = _fit(_ht(grace_period=10**6, leaf_prediction="nb", nominal_features=(2,)), X, y)
    assert m.n_splits == 0
    classes = m.classes_
    ya = np.array([classes.index(v) for v in y.tolist()])
    codes = m.encode_predict(X)[:, 2]
    K = len(classes)
    prior = np.bincount(ya, minlength=K) / n
    ncats = len(np.unique(codes))
    Xt = np.array([[0.1, 2.0, 1.0], [np.nan, -1.0, 3.0], [2.0, 9.0, 0.0]])
    P = m.predict_proba(Xt)
    for row, p in zip(m.encode_predict(Xt), P, strict=True):
        s = []
        for k in range(K):
            sc = math.log(prior[k])
            for j in (0, 1):
                v = X[ya == k, j]
                v = v[~np.isnan(v)]
                mean = math.fsum(v) / len(v)
                var = max(math.fsum((v - mean) ** 2) / len(v), 1e-9 * (1 + mean * mean))
                if not math.isnan(row[j]):
                    sc -= 0.5 * ((row[j] - mean) ** 2 / var + math.log(var) + math.log(2 * math.pi))
            cnt = int(np.sum(codes[ya == k] == row[2]))
            sc += math.log((cnt + 1) / (np.sum(ya == k) + ncats))
            s.append(sc)
        q = np.exp(np.array(s) - max(s))
        assert p == pytest.approx(q / q.sum(), rel=1e-9, abs=1e-12)


def test_votes_are_the_majority_of_the_trees_classes():
    """``vote_rows``: the mean of the trees' probabilities, and the class most trees find most
    probable (the first of their largest), ties of votes to the larger mean probability."""
    r = np.random.default_rng(11)
    T, n, K = 7, 200, 4
    PT = r.dirichlet(np.ones(K), size=(T, n))
    PT[:, :50] = np.round(PT[:, :50] * 3) / 3
    mean, votes, cls = np.zeros((n, K)), np.zeros(K), np.zeros(n, np.int64)
    CORE.vote_rows(PT, mean, votes, cls)
    for i in range(n):
        mu = np.array([math.fsum(PT[:, i, k] / T) for k in range(K)])
        assert mean[i] == pytest.approx(mu, rel=1e-14, abs=1e-15)
        count = np.bincount([int(np.argmax(PT[t, i])) for t in range(T)], minlength=K)
        best = max(range(K), key=lambda k: (count[k], mean[i, k], -k))
        assert cls[i] == best


def test_supports_classification_kinds_of_the_gauss_and_extra_rules():
    assert ("gauss", S.SPLIT_GAUSS) in [(r["name"], r["code"]) for r in _core.tree.rules()]
    gauss = TreeKind(rule="gauss", classification=True)
    assert _core.tree.supports(**gauss.__dict__)
    for alternates in (False, True):  # (the extra rule always runs with alternates)
        extra = TreeKind(rule="extra", classification=True, alternates=alternates)
        assert _core.tree.supports(**extra.__dict__)
    for change in ({"classification": False}, {"sketch": True}, {"evidence": True}):
        assert not _core.tree.supports(**{**gauss.__dict__, **change}), change
    # the observers rule has no classification part
    assert not _core.tree.supports(**TreeKind(classification=True).__dict__)


def test_bindings_refuse_what_they_would_overrun():
    X, y = class_stream(400, seed=1)
    m = _fit(_ht(), X, y)
    e = m.engine_
    A = e.arena
    Xa = m.encode_predict(X)
    ya = np.array([m._class_index[v] for v in y.tolist()], float)
    W = np.ones((1, 400))
    K = len(m.classes_)
    bad = ya.copy()
    bad[7] = K  # not a class of the tree
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_rows(A, 0, Xa, bad, W, 0)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_rows(A, 0, Xa, bad, W, 0)
    W0 = W.copy()
    W0[0, 7] = 0.0  # a row of weight 0 is not learnt: its label is not read
    CORE.learn_rows(A, 0, Xa[:10], bad[:10], np.ascontiguousarray(W0[:, :10]), 0)
    T = e.n_trees
    args = (e.rng, e.bagging, Xa[0], -1.0, 1.0, np.zeros(T), np.zeros(T), np.zeros(T, np.int8))
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_one(A, *args, CORE.FRESH, np.zeros((4, 0)))
    with pytest.raises(ValueError):  # a memo of 3 rows: the votes need 4
        CORE.learn_one(A, e.rng, e.bagging, Xa[0], 0.0, 1.0, np.zeros(T), np.zeros(T),
                       np.zeros(T, np.int8), CORE.FRESH, np.zeros((3, T)))  # fmt: skip
    with pytest.raises(ValueError):  # class probabilities do not fit one column
        CORE.predict_rows(A, 0, Xa, np.zeros((T, 400)))
    with pytest.raises(ValueError):
        CORE.predict_rows(A, 0, Xa, np.zeros((T, 400, K - 1)))
    for f in (CORE.predict_trees, lambda A_, x, P: CORE.predict_one(A_, x, 0, P, np.zeros((4, T)))):
        with pytest.raises(ValueError, match="classification"):  # regression values only
            f(A, Xa[0], np.zeros(T))
    with pytest.raises(ValueError, match="classification"):
        CORE.predict_learn_rows(A, 0, Xa, ya, W, 0, np.zeros((T, 400)))
    PT, mean, votes, M = np.zeros((T, 1, K)), np.zeros(K), np.zeros(K), np.zeros((4, T))
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0], np.zeros((T, 1, K - 1)), mean, votes, M)
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0, :3], PT, mean, votes, M)
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0], PT, mean[:1], votes, M)
    with pytest.raises(TypeError):
        CORE.predict_proba_one(A, Xa[0], PT.astype(np.float32), mean, votes, M)
    with pytest.raises(ValueError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((4, 3)), np.zeros(3), np.zeros(5, np.int64))
    with pytest.raises(ValueError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((5, 3)), np.zeros(2), np.zeros(5, np.int64))
    with pytest.raises(TypeError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((5, 3)), np.zeros(3), np.zeros(5, np.int32))
    for query in (lambda: _core.tree.leaf_best_cut(A, 0, 0, 0, 1.0),
                  lambda: _core.tree.fold_leaf_model(A, 0, 0),
                  lambda: _core.tree.folded_predict(A, 0, 0.0, Xa[0])):  # fmt: skip
        with pytest.raises(ValueError, match="classification tree"):
            query()
    reg = sf.HoeffdingTreeRegressor(grace_period=50, seed=0)
    reg.learn_many(np.nan_to_num(X[:, :5]), np.nan_to_num(X[:, 0]))
    with pytest.raises(ValueError, match="not a classification tree"):
        CORE.predict_proba_one(reg.engine_.arena, np.zeros(5), PT, mean, votes, M)
