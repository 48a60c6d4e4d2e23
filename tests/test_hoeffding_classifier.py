"""The VFDT classifier: its naive Bayes leaves against a direct computation, its Gaussian and
nominal splits, and its accuracy beside River's Hoeffding tree."""

from __future__ import annotations

import math

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core, streams

VAR_FLOOR = _core.tree.checks.VAR_FLOOR


def _naive_bayes(X, y, cats, x_num, x_cat, classes):
    """Gaussian (population variance) and Laplace-smoothed categorical naive Bayes."""
    logp = []
    n_cats = len(set(cats.tolist()))
    for k in classes:
        sel = y == k
        s = math.log(sel.mean())
        for j in range(X.shape[1]):
            v = X[sel, j]
            mean, var = v.mean(), v.var()
            var = max(var, VAR_FLOOR * (1 + mean * mean))
            s -= 0.5 * ((x_num[j] - mean) ** 2 / var + math.log(var) + math.log(2 * math.pi))
        s += math.log((np.sum(cats[sel] == x_cat) + 1) / (sel.sum() + n_cats))
        logp.append(s)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return p / p.sum()


def test_naive_bayes_leaf_matches_a_direct_computation():
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 3, n)
    X = rng.normal(loc=y[:, None] * [1.0, -0.5], scale=[1.0, 2.0], size=(n, 2))
    cats = rng.choice(np.array(["p", "q", "r", "s"]), n, p=[0.4, 0.3, 0.2, 0.1])
    m = sf.HoeffdingTreeClassifier(grace_period=10**9, leaf_prediction="nb")  # one leaf
    for i in range(n):
        m.learn_one({"u": X[i, 0], "v": X[i, 1], "c": cats[i]}, int(y[i]))
    assert m.n_leaves == 1
    for x_num, x_cat in [((0.3, -1.0), "q"), ((2.5, 0.4), "s"), ((-1.0, 3.0), "p")]:
        want = _naive_bayes(X, y, cats, x_num, x_cat, m.classes_)
        got = m.predict_proba_one({"u": x_num[0], "v": x_num[1], "c": x_cat})
        assert np.allclose([got[k] for k in m.classes_], want, rtol=1e-9, atol=1e-12)


def test_majority_and_adaptive_leaves():
    rng = np.random.default_rng(1)
    m = sf.HoeffdingTreeClassifier(grace_period=10**9, leaf_prediction="mc")
    ys = rng.choice(["a", "b", "c"], 500, p=[0.5, 0.3, 0.2])
    for y in ys:
        m.learn_one({"u": rng.random()}, y)
    p = m.predict_proba_one({"u": 0.5})
    for k in ("a", "b", "c"):
        assert p[k] == pytest.approx(np.mean(ys == k))
    # adaptive: NB wins where the classes separate by a feature the single leaf cannot split on
    nba = sf.HoeffdingTreeClassifier(grace_period=10**9)
    hits = 0
    for i in range(2000):
        u = rng.random()
        y = int(u > 0.5)
        hits += i >= 1000 and nba.predict_one({"u": u}) == y
        nba.learn_one({"u": u}, y)
    assert hits / 1000 > 0.9


def test_gaussian_split_threshold_and_nominal_split():
    rng = np.random.default_rng(2)
    m = sf.HoeffdingTreeClassifier(grace_period=100, leaf_prediction="mc", seed=1)
    X = rng.random((4000, 2))
    y = (X[:, 0] > 0.3).astype(int)
    m.learn_many(X, y)
    st = m.engine_.state(0)
    assert st.nd_feat[0] == 0 and abs(st.nd_thr[0] - 0.3) < 0.1  # ten thresholds: 1/11 apart
    assert m.score(X, y) > 0.9
    # nominal: one category against the rest
    c = sf.HoeffdingTreeClassifier(grace_period=100, leaf_prediction="mc", seed=1)
    col = rng.choice(np.array(["a", "b", "c", "d", "e"], dtype=object), 4000)
    Xc = np.empty((4000, 2), dtype=object)
    Xc[:, 0], Xc[:, 1] = col, rng.random(4000)
    yc = np.where(col == "c", "yes", "no")
    c.learn_many(Xc, yc)
    assert c.n_splits >= 1
    test = np.array([["c", 0.5], ["a", 0.5], ["e", 0.1]], dtype=object)
    test[:, 1] = test[:, 1].astype(float)
    assert c.predict(test).tolist() == ["yes", "no", "no"]


def test_accuracy_beside_rivers_hoeffding_tree():
    """Same stream, prequential: within two points of River's HoeffdingTreeClassifier (same
    split criterion, grace period, bound and leaves; the Gaussian split scores are River's)."""
    river = pytest.importorskip("river")
    from river import tree

    for stream in (streams.SEA(function=1, seed=3), streams.Agrawal(function=1, seed=3)):
        data = list(stream.take(8000))
        ours, theirs = sf.HoeffdingTreeClassifier(), tree.HoeffdingTreeClassifier()
        a = b = 0
        for x, y in data:
            a += ours.predict_one(x) == y
            b += theirs.predict_one(x) == y
            ours.learn_one(x, y)
            theirs.learn_one(x, y)
        assert a / len(data) > b / len(data) - 0.02
    assert river is not None
