"""A controller per group under the adaptive wrappers: every group's long-run error at alpha on
a drifting stream in batches and with delayed labels (where one marginal controller misses a
group), the pool as the marginal controller, young groups served the pool's intervals, no row
lost, the served log per group, sets, bad input and persistence."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import streamforest as sf


def _drifting(n=12000, seed=1):
    """Three groups whose noise drifts apart (one grows 1 -> e^4, one shrinks 6 -> 6 e^-3)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    t = np.arange(n) / n
    sd = np.select([g == 0, g == 1, g == 2], [np.exp(4 * t), 2 + 0 * t, 6 * np.exp(-3 * t)])
    X = np.c_[rng.random((n, 3)), g]
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 2 * t + 0.1 * sd * rng.normal(0, 1, n)
    return X, y, g


def _served(model, X, y, batch, delay):
    """Serve ``batch`` rows at a time; learn each batch once ``delay`` later rows were served."""
    n = len(y)
    out, learnt = np.empty((n, 2)), 0
    for a in range(0, n, batch):
        out[a : a + batch] = model.predict_interval(X[a : a + batch], 0.1)
        while learnt + batch <= a + batch - delay:
            model.learn_many(X[learnt : learnt + batch], y[learnt : learnt + batch])
            learnt += batch
    return (y < out[:, 0]) | (y > out[:, 1])


@pytest.mark.parametrize(("batch", "delay"), [(50, 0), (50, 100)])
def test_every_group_holds_alpha_in_batches_and_with_delays(batch, delay):
    """Batches of 50, and labels 100 rows late: with a controller per group every group's error
    rate is within 0.02 of alpha; the one marginal controller (``groups=False``) over the same
    grouped method misses a group by more."""
    X, y, g = _drifting()
    late = np.arange(len(y)) >= 500

    def worst(groups):
        # (over the bagged forest, on which this test's margins were set)
        method = sf.NormalizedConformal(forest=sf.OnlineForestRegressor(), seed=1, groups=3)
        model = sf.AdaptiveConformal(method, groups=groups)
        miss = _served(model, X, y, batch, delay)
        return max(abs(miss[late & (g == v)].mean() - 0.1) for v in range(3)), model

    per_group, model = worst(None)
    assert per_group <= 0.02, per_group
    assert model.log_stats["late"] == 0 and model.log_stats["matched"] > 11000
    marginal, _ = worst(False)
    assert marginal > 0.02, marginal


def test_the_pool_is_the_marginal_controller_and_young_groups_borrow_it():
    """Rows without a group, and a group's first rows (fewer than ceil((1 - alpha) / alpha)
    taught), are served the pool's interval: exactly the one-controller wrapper's; later rows of
    the group, their own controller's (different)."""
    X, y, g = _drifting(3000)
    G = g.astype(float)
    G[:1500][g[:1500] == 2] = np.nan  # group 2 appears at row 1500
    per = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1), groups=3)
    one = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1, groups=3), groups=False)
    Xg = X.copy()
    Xg[:, 3] = G
    a = np.concatenate([per.predict_learn_many(Xg[k : k + 25], y[k : k + 25], 0.1)[1]
                        for k in range(0, 3000, 25)])  # fmt: skip
    b = np.concatenate([one.predict_learn_many(Xg[k : k + 25], y[k : k + 25], 0.1)[1]
                        for k in range(0, 3000, 25)])  # fmt: skip
    missing = np.isnan(G)
    np.testing.assert_array_equal(a[missing], b[missing])
    first = np.flatnonzero(G == 2)
    np.testing.assert_array_equal(a[first[:9]], b[first[:9]])  # young: 9 taught at 0.1
    assert np.any(a[first[9:]] != b[first[9:]])
    gc = per.__dict__["_group_controllers"]
    cell = gc.vocab[0][2.0]
    assert gc.taught[cell, 0] == len(first)  # every row of the group taught its controller
    assert sum(gc.taught[c, 0] for c in range(1, gc.n_cells)) == int((~missing).sum())


def test_served_one_at_a_time_equals_the_prequential_pass():
    """Serving a row then learning it (the served log, a record per controller and the groups
    that served it) teaches the controllers what ``predict_learn_many`` does, bit for bit; a
    row served before its group existed teaches its group from the interval it gives then."""
    X, y, g = _drifting(600)
    a = sf.AdaptiveConformal(sf.NormalizedConformal(seed=2, groups=3))
    b = sf.AdaptiveConformal(sf.NormalizedConformal(seed=2, groups=3))
    a.predict_learn_many(X[:50], y[:50], 0.1)
    b.predict_learn_many(X[:50], y[:50], 0.1)
    for i in range(50, 600):
        served = a.predict_interval(X[i : i + 1], 0.1)
        a.learn_many(X[i : i + 1], y[i : i + 1])
        _, pre = b.predict_learn_many(X[i : i + 1], y[i : i + 1], 0.1)
        np.testing.assert_array_equal(served, pre)
    ga, gb = a.__dict__["_group_controllers"], b.__dict__["_group_controllers"]
    for k in ga.state:
        np.testing.assert_array_equal(ga.state[k], gb.state[k])
    np.testing.assert_array_equal(ga.taught, gb.taught)
    assert a.log_stats["matched"] == 550
    # a row served while its group was unknown, learnt after the group exists
    row = X[:1].copy()
    row[0, 3] = 7.0
    a.predict_interval(row, 0.1)  # (served by the pool: group 7 is not learnt yet)
    assert 7.0 not in ga.vocab[0]
    a.learn_many(X[:3], y[:3], groups=np.array([7.0, 7.0, 0.0]))
    a.learn_many(row, y[:1])
    assert ga.taught[ga.vocab[0][7.0], 0] == 3


def test_grouped_sets_hold_alpha_per_group():
    """AdaptiveConformalClassifier over grouped sets: a controller per group."""
    rng = np.random.default_rng(0)
    n = 12000
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 2)), g]
    t = np.arange(n) / n
    flip = rng.random(n) < np.select([g == 0, g == 1, g == 2], [0.02 + 0.3 * t, 0.1 + 0 * t,
                                                                0.3 - 0.25 * t])  # fmt: skip
    y = np.where(flip, X[:, 0] <= 0.5, X[:, 0] > 0.5).astype(int)
    errors = {}
    for groups in (None, False):
        model = sf.AdaptiveConformalClassifier(sf.ConformalClassifier(seed=1, groups=2),
                                               groups=groups)  # fmt: skip
        miss = []
        for a in range(0, n, 200):
            _, _, sets = model.predict_learn_many(X[a : a + 200], y[a : a + 200], 0.1)
            col = np.array([model.classes_.index(v) for v in y[a : a + 200]])
            miss.append(~sets[np.arange(len(col)), col])
        miss = np.concatenate(miss)[1000:]
        errors[groups] = max(abs(miss[g[1000:] == v].mean() - 0.1) for v in range(3))
    assert errors[None] <= 0.02 < errors[False], errors


def test_bad_groups_change_nothing_and_the_controllers_are_saved(tmp_path):
    X, y, g = _drifting(1200)
    m = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1, groups=3))
    m.predict_learn_many(X[:1000], y[:1000], 0.1)
    before = pickle.dumps(m)
    with pytest.raises(ValueError, match="values for"):
        m.learn_many(X[1000:], y[1000:], groups=np.zeros(5))
    with pytest.raises(ValueError):
        m.learn_many(X[1000:], np.full(200, np.nan))
    with pytest.raises(TypeError):
        sf.AdaptiveConformal(groups=1.5).learn_many(X, y)
    assert pickle.dumps(m) == before
    sf.save(m, tmp_path / "m.sf")
    m2 = sf.load(tmp_path / "m.sf")
    a = m.predict_learn_many(X[1000:], y[1000:], 0.1)[1]
    b = m2.predict_learn_many(X[1000:], y[1000:], 0.1)[1]
    np.testing.assert_array_equal(a, b)
