"""SGBTRegressor: the boosting loop against a naive Python reference, accuracy, both APIs,
reproducibility, save/load, errors and the interval methods over it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import HoeffdingTreeRegressor, SGBTRegressor
from streamforest.boosting.sgbt import default_tree
from streamforest.streams import Friedman

from .conftest import check_normalized_conformal_over


def _stream(n=600, seed=3):
    """A small nonlinear stream whose concept changes half way (the trees' alternates act)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2] + rng.normal(size=n)
    h = n // 2
    y[h:] = 20 * (X[h:, 3] - 0.5) ** 2 - 8 * X[h:, 4] + rng.normal(size=n - h)
    return X, y


def _reference(X, y, n_steps, lr, seed, ff=0.75):
    """The boosting loop in Python over separate trees of the same specs (each step's seed as
    SGBTRegressor derives it): for each row, the prediction before learning it, then each step
    learns ``y - F`` and ``F += lr * f(x)`` with the step's tree after learning (``F`` from the
    first target)."""
    seeds = np.random.SeedSequence(seed).generate_state(n_steps + 1, np.uint64)
    trees = [
        default_tree().clone(max_features=ff, seed=int(seeds[t]), max_leaves=100_000)
        for t in range(n_steps)
    ]
    names = [f"f{j}" for j in range(X.shape[1])]
    out = np.empty(len(y))
    base = y[0]  # the raw score starts at the first target
    for i in range(len(y)):
        x = dict(zip(names, X[i], strict=True))
        raw = pre = 0.0
        for tree in trees:
            pre += lr * tree.predict_one(x)
            tree.learn_one(x, float((y[i] - base) - raw))
            raw += lr * tree.predict_one(x)
        out[i] = pre + base if i else pre  # row 0: predicted before any target was known
    return out, trees, names


def test_matches_naive_reference():
    X, y = _stream()
    ref, trees, names = _reference(X, y, n_steps=6, lr=0.3, seed=7)
    m = SGBTRegressor(
        n_steps=6, learning_rate=0.3, drift_threshold=None, seed=7, max_memory_mb=None
    )  # (the reference has no whole-step drift test)
    got = m.predict_learn_many(X, y)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)
    # the same trees: each step's predictions, and the model's as lr * their sum
    Xt = np.random.default_rng(1).uniform(size=(50, 5))
    steps = np.column_stack([t.predict(Xt) for t in trees])
    np.testing.assert_allclose(m.tree_predictions(Xt), steps, atol=1e-9)
    boosted = sum(0.3 * steps[:, t] for t in range(6)) + y[0]
    np.testing.assert_allclose(m.predict(Xt), boosted, atol=1e-9)
    assert sum(t.n_leaves for t in trees) == m.n_leaves > 6  # the trees grew


def test_dict_api_matches_array_api():
    X, y = _stream(400)
    a = SGBTRegressor(n_steps=5, learning_rate=0.3, seed=2)
    pa = a.predict_learn_many(X, y)
    b = SGBTRegressor(n_steps=5, learning_rate=0.3, seed=2)
    names = [f"f{j}" for j in range(5)]
    pb = []
    for i in range(len(y)):
        x = dict(zip(names, X[i], strict=True))
        pb.append(b.predict_one(x) if i else 0.0)
        b.learn_one(x, float(y[i]))
    np.testing.assert_array_equal(pa, np.array(pb))
    Xt = np.random.default_rng(5).uniform(size=(20, 5))
    np.testing.assert_array_equal(a.predict(Xt), b.predict(Xt))
    c = SGBTRegressor(n_steps=5, learning_rate=0.3, seed=2)
    for k in range(0, len(y), 37):  # chunks of any size: the same model
        c.learn_many(X[k : k + 37], y[k : k + 37])
    np.testing.assert_array_equal(a.predict(Xt), c.predict(Xt))


def test_better_than_a_single_tree():
    X, y = Friedman(function=1, n=6000, seed=11).arrays()
    tree = HoeffdingTreeRegressor(seed=1).predict_learn_many(X, y)
    boosted = SGBTRegressor(n_steps=20, learning_rate=0.3, seed=1).predict_learn_many(X, y)
    mae_tree = np.mean(np.abs(tree - y)[1000:])
    mae_boost = np.mean(np.abs(boosted - y)[1000:])
    assert mae_boost < 0.8 * mae_tree, (mae_boost, mae_tree)


def test_seed_reproducible():
    X, y = _stream(500)
    p1 = SGBTRegressor(n_steps=8, seed=4).predict_learn_many(X, y)
    p2 = SGBTRegressor(n_steps=8, seed=4).predict_learn_many(X, y)
    p3 = SGBTRegressor(n_steps=8, seed=5).predict_learn_many(X, y)
    np.testing.assert_array_equal(p1, p2)
    assert not np.array_equal(p1, p3)


def test_save_load_round_trip(tmp_path):
    X, y = _stream(500)
    m = SGBTRegressor(n_steps=6, learning_rate=0.3, seed=3)
    m.learn_many(X[:300], y[:300])
    path = tmp_path / "sgbt.sf"
    sf.save(m, path)
    m2 = sf.load(path)
    assert isinstance(m2, SGBTRegressor)
    np.testing.assert_array_equal(m.predict(X[300:]), m2.predict(X[300:]))
    # both go on learning the same
    np.testing.assert_array_equal(
        m.predict_learn_many(X[300:], y[300:]), m2.predict_learn_many(X[300:], y[300:])
    )
    m3 = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(m.predict(X[:50]), m3.predict(X[:50]))


def test_drift_threshold_resets_steps():
    X, y = _stream(3000, seed=9)
    y[1500:] += 40.0  # a jump every step's error sees
    m = SGBTRegressor(n_steps=4, learning_rate=0.5, drift_threshold=5.0, seed=1)
    m.learn_many(X, y)
    assert m.n_resets > 0
    assert m.drift_stats_["drifts"] == m.n_resets
    m2 = SGBTRegressor(n_steps=4, learning_rate=0.5, drift_threshold=5.0, seed=1)
    names = [f"f{j}" for j in range(5)]
    for i in range(len(y)):
        m2.learn_one(dict(zip(names, X[i], strict=True)), float(y[i]))
    assert m2.n_resets == m.n_resets
    np.testing.assert_array_equal(m.predict(X[:40]), m2.predict(X[:40]))


@pytest.mark.parametrize(
    "params, err",
    [
        ({"n_steps": 0}, ValueError),
        ({"n_steps": 2.5}, ValueError),
        ({"learning_rate": 0.0}, ValueError),
        ({"learning_rate": 1.5}, ValueError),
        ({"feature_fraction": 0.0}, ValueError),
        ({"tree": "fimt"}, TypeError),
        ({"drift_threshold": -1.0}, ValueError),
        ({"seed": "x"}, TypeError),
    ],
)
def test_bad_parameters(params, err):
    with pytest.raises(err):
        SGBTRegressor(**params).learn_one({"a": 1.0}, 1.0)


def test_bad_input():
    m = SGBTRegressor(n_steps=3, seed=0)
    with pytest.raises(TypeError, match="x"):
        m.learn_one([1.0, 2.0], 1.0)
    with pytest.raises(ValueError):
        m.learn_one({"a": 1.0}, float("nan"))
    with pytest.raises(ValueError):
        m.learn_many(np.ones((3, 2)), np.ones(4))
    assert m.predict_one({"a": 1.0}) == 0.0  # before learning


def test_normalized_conformal_over_sgbt():
    X, y = Friedman(function=1, drift="gra", n=3000, seed=2).arrays()
    forest = SGBTRegressor(n_steps=8, learning_rate=0.3)
    pred, _ = check_normalized_conformal_over(forest, X, y, strict_centre=True)
    again = sf.NormalizedConformal(SGBTRegressor(n_steps=8, learning_rate=0.3), seed=1)
    p2, _ = again.predict_learn_many(X[:2000], y[:2000], alpha=0.1)
    np.testing.assert_array_equal(pred, p2)


def _restarting_sgbt():
    """A small SGBT whose steps restart when their error rises (``drift_threshold``): the kind
    of base of the issue-#31 setting (``benchmarks/learners.py``, ``INTERVAL_SETTINGS``)."""
    return SGBTRegressor(n_steps=10, learning_rate=0.25, drift_threshold=50.0, seed=5)


def test_row_scores_over_sgbt_centre_is_sgbts_own_prequential_prediction():
    # center="forest", batch_scores=False: the interval's centre is, row by row, the SGBT's
    # prediction before it learnt the row (what SGBTRegressor alone predicts test-then-train);
    # the method's target shift (the first target) and SGBT's base score (its first target)
    # cancel, so the two agree bit for bit after the first row (the only row predicted before
    # any target was known)
    X, y = Friedman(function=1, drift="gra", n=1500, seed=6).arrays()
    alone = _restarting_sgbt().predict_learn_many(X, y)
    m = sf.NormalizedConformal(_restarting_sgbt(), center="forest", batch_scores=False)
    # in batches (with batch_scores=True a fitted model's batch is scored before learning it)
    pred = np.concatenate([m.predict_learn_many(X[a : a + 500], y[a : a + 500])[0]
                           for a in range(0, 1500, 500)])  # fmt: skip
    np.testing.assert_array_equal(pred[1:], alone[1:])
    assert m.forest_.drift_stats_["replacements"] > 0  # (the drift test acted on the gra stream)


def test_row_scores_over_a_restarting_sgbt_cover_an_iid_stream():
    # exchangeable rows: the error rate of the row-scored intervals is alpha within binomial
    # bounds at several levels, even though the steps' drift tests may restart steps
    X, y = Friedman(function=1, n=5000, seed=8).arrays()
    m = sf.NormalizedConformal(_restarting_sgbt(), center="forest", batch_scores=False)
    alphas = [0.05, 0.1, 0.2]
    iv = np.concatenate([m.predict_learn_many(X[a : a + 1000], y[a : a + 1000], alpha=alphas)[1]
                         for a in range(0, 5000, 1000)])  # fmt: skip
    rows = slice(500, None)  # (after the first calibration scores)
    for a, alpha in enumerate(alphas):
        miss = float(np.mean((y[rows] < iv[rows, a, 0]) | (y[rows] > iv[rows, a, 1])))
        assert abs(miss - alpha) <= 4 * np.sqrt(alpha * (1 - alpha) / 4500), (alpha, miss)


@pytest.mark.parametrize("method", ["CPApproximate", "OnlineQRF", "GaussianInterval"])
def test_tree_wise_interval_methods_refuse(method):
    X, y = _stream(300)
    model = getattr(sf, method)(SGBTRegressor(n_steps=3), seed=1)
    with pytest.raises(TypeError, match="not a bagged forest"):
        model.learn_many(X, y)


def test_registry_entry():
    from streamforest import registry

    m = registry.build("sgbt", {"n_steps": 4, "learning_rate": 0.5}, seed=3)
    assert isinstance(m, SGBTRegressor) and m.n_steps == 4 and m.seed == 3


def test_adaptive_conformal_over_sgbt(tmp_path):
    X, y = Friedman(function=1, n=1500, seed=4).arrays()
    inner = sf.NormalizedConformal(SGBTRegressor(n_steps=5, learning_rate=0.3), seed=2)
    model = sf.AdaptiveConformal(inner, alphas=(0.1,))
    pred, iv = model.predict_learn_many(X[:1200], y[:1200], alpha=0.1)
    assert np.isfinite(iv[600:]).all()
    path = tmp_path / "aci.sf"
    sf.save(model, path)
    back = sf.load(path)
    np.testing.assert_array_equal(
        model.predict_interval(X[1200:], 0.1), back.predict_interval(X[1200:], 0.1)
    )
