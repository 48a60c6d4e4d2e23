"""The online bagging forest: bagging weights, determinism, chunk and thread invariance, API."""

import pickle

import numpy as np
import pytest

from streamforest import HoeffdingTreeRegressor, OnlineForestRegressor, _core
from streamforest.rng import new_state

from .conftest import friedman1, trees_bytes

SMALL = dict(n_trees=4, tree=HoeffdingTreeRegressor(grace_period=50))


@pytest.mark.parametrize("lam", [1.0, 6.0])
def test_bagging_weights_are_poisson(lam):
    out = np.empty((10, 20000))
    _core.engine.draw_weights(new_state(3), lam, np.ones(20000), out)
    k = out.ravel()
    assert abs(k.mean() - lam) < 4 * np.sqrt(lam / k.size)
    assert abs(k.var() - lam) < 0.05 * lam
    assert abs(np.mean(k == 0) - np.exp(-lam)) < 4 * np.sqrt(np.exp(-lam) / k.size) + 1e-4
    # sample weights scale the draws
    out2 = np.empty((10, 20000))
    _core.engine.draw_weights(new_state(3), lam, np.full(20000, 2.0), out2)
    assert np.array_equal(out2, 2 * out)


def test_chunking_threads_and_seed(rng):
    X, y = friedman1(6000, rng)
    Xt, _ = friedman1(300, rng)
    a = OnlineForestRegressor(seed=5, **SMALL).learn_many(X, y)
    b = OnlineForestRegressor(seed=5, n_jobs=2, **SMALL)
    for part in np.array_split(np.arange(6000), 7):
        b.learn_many(X[part], y[part])
    c = OnlineForestRegressor(seed=6, **SMALL).learn_many(X, y)
    assert np.array_equal(a.predict(Xt), b.predict(Xt))
    assert not np.array_equal(a.predict(Xt), c.predict(Xt))
    d = pickle.loads(pickle.dumps(a))
    assert np.array_equal(a.predict(Xt), d.predict(Xt))


def test_prequential_equals_predict_then_learn(rng):
    X, y = friedman1(1500, rng)
    a = OnlineForestRegressor(seed=1, **SMALL)
    pa = a.predict_learn_many(X, y)
    b = OnlineForestRegressor(seed=1, **SMALL)
    pb = np.empty(1500)
    for i in range(1500):
        pb[i] = b.predict_one(dict(enumerate(X[i])))
        b.learn_one(dict(enumerate(X[i])), y[i])
    assert np.allclose(pa, pb, rtol=0, atol=1e-12)


def test_forest_beats_a_single_tree(rng):
    X, y = friedman1(30000, rng)
    Xt, yt = friedman1(3000, rng)
    tree = HoeffdingTreeRegressor(seed=0).learn_many(X, y)
    forest = OnlineForestRegressor(seed=0).learn_many(X, y)
    e_tree = np.abs(tree.predict(Xt) - yt).mean()
    e_forest = np.abs(forest.predict(Xt) - yt).mean()
    assert e_forest < 0.95 * e_tree, (e_forest, e_tree)
    # each tree sees a random feature subspace per leaf: trees differ
    P = forest.tree_predictions(Xt)
    assert P.shape == (3000, 10) and np.std(P, axis=1).mean() > 0.01
    assert np.allclose(forest.predict(Xt), P.mean(axis=1))
    med = forest.clone(aggregation="median").learn_many(X, y)
    assert np.allclose(med.predict(Xt), np.median(med.tree_predictions(Xt), axis=1))


def test_bad_input_loses_nothing(rng):
    X, y = friedman1(500, rng)
    m = OnlineForestRegressor(seed=0, **SMALL).learn_many(X, y)
    before = pickle.dumps(m)
    for bad in [
        lambda: m.learn_many(X[:, :3], y),
        lambda: m.learn_many(X, y[:10]),
        lambda: m.learn_many(np.where(X > 0.5, np.inf, X), y),
        lambda: m.learn_many(X, np.full(500, np.nan)),
        lambda: m.learn_one({0: "a string?"}, 1.0),
        lambda: m.learn_one({0: 0.1}, float("inf")),
        lambda: m.learn_many(X, y, w=-np.ones(500)),
    ]:
        with pytest.raises((ValueError, TypeError)):
            bad()
        assert pickle.dumps(m) == before
    for bad_params in [dict(n_trees=0), dict(lambda_value=-1), dict(aggregation="max"),
                       dict(n_jobs=0), dict(tree="tree")]:  # fmt: skip
        with pytest.raises((ValueError, TypeError)):
            OnlineForestRegressor(**bad_params).learn_many(X, y)


def test_unfitted_forest_predicts_zero():
    m = OnlineForestRegressor()
    assert np.array_equal(m.predict(np.zeros((3, 2))), np.zeros(3))
    with pytest.raises(ValueError, match="feature"):
        m.learn_one({}, 1.0)


def drifting(n, change, rng):
    """Friedman #1, then from ``change`` on a different concept (features permuted, scaled)."""
    X, y = friedman1(n, rng)
    Xs = X[change:, ::-1]
    y[change:] = (
        10 * np.sin(np.pi * Xs[:, 0] * Xs[:, 1]) + 20 * (Xs[:, 2] - 0.5) ** 2 + 30 * Xs[:, 3]
    ) + rng.standard_normal(n - change)
    return X, y


def test_drift_detector_replaces_trees_after_a_change_only(rng):
    X, y = drifting(40000, 25000, rng)
    f = OnlineForestRegressor(seed=1)
    pred = f.predict_learn_many(X, y)
    resets = [t.n_resets for t in f.trees_]
    assert all(r >= 1 for r in resets), resets
    g = OnlineForestRegressor(seed=1, drift_threshold=None)
    pg = g.predict_learn_many(X, y)
    assert g.n_resets == 0
    after = slice(27000, 35000)
    assert np.abs(pred - y)[after].mean() < 0.8 * np.abs(pg - y)[after].mean()
    # stationary: no false alarm in 10 trees x 60k rows
    Xs, ys = friedman1(60000, rng)
    assert OnlineForestRegressor(seed=2).learn_many(Xs, ys).n_resets == 0
    # replacing trees keeps runs reproducible and independent of chunking
    h = OnlineForestRegressor(seed=1, n_jobs=2)
    ph = np.concatenate(
        [h.predict_learn_many(X[s], y[s]) for s in np.array_split(np.arange(40000), 9)]
    )
    assert np.array_equal(ph, pred)
    # a single tree can detect too
    t = HoeffdingTreeRegressor(drift_threshold=50, seed=0).learn_many(X, y)
    assert t.n_resets >= 1


def test_memory_budget_bounds_the_forest(rng):
    from streamforest import OnlineQRF

    X, y = friedman1(60000, rng)
    budget = 8.0
    kw = dict(n_trees=4, tree=HoeffdingTreeRegressor(grace_period=50), seed=0)
    capped = OnlineQRF(forest=OnlineForestRegressor(max_memory_mb=budget, **kw)).learn_many(X, y)
    free = OnlineQRF(forest=OnlineForestRegressor(max_memory_mb=None, **kw)).learn_many(X, y)
    assert trees_bytes(capped) <= budget * 2**20
    assert free.forest_.memory_bytes > budget * 2**20  # the budget was binding
    assert capped.forest_.n_leaves < free.forest_.n_leaves
    Xt, yt = friedman1(2000, rng)  # a capped forest still learns and predicts
    assert np.abs(capped.predict(Xt) - yt).mean() < np.abs(yt - yt.mean()).mean()
