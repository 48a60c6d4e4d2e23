"""The tree's APIs: determinism, pickling, bad input, emerging features, budgets, leaf models."""

import pickle

import numpy as np
import pytest

from streamforest import HoeffdingTreeRegressor

from .conftest import friedman1


def test_same_seed_same_model_and_different_seed_differs(rng):
    X, y = friedman1(4000, rng)
    kw = dict(grace_period=100, max_features="sqrt", leaf_model="adaptive")
    a = HoeffdingTreeRegressor(seed=7, **kw).learn_many(X, y)
    b = HoeffdingTreeRegressor(seed=7, **kw).learn_many(X, y)
    c = HoeffdingTreeRegressor(seed=8, **kw).learn_many(X, y)
    Xt, _ = friedman1(500, rng)
    assert np.array_equal(a.predict(Xt), b.predict(Xt))
    assert pickle.dumps(a.state_) == pickle.dumps(b.state_)
    assert not np.array_equal(a.predict(Xt), c.predict(Xt))


@pytest.mark.parametrize("leaf_model", ["mean", "linear", "adaptive"])
def test_pickle_round_trip_is_bit_identical_and_keeps_learning_identically(leaf_model, rng):
    X, y = friedman1(3000, rng)
    m = HoeffdingTreeRegressor(grace_period=100, leaf_model=leaf_model, seed=0)
    m.learn_many(X[:2000], y[:2000])
    m2 = pickle.loads(pickle.dumps(m))
    assert np.array_equal(m.predict(X), m2.predict(X))
    m.learn_many(X[2000:], y[2000:])
    m2.learn_many(X[2000:], y[2000:])
    assert np.array_equal(m.predict(X), m2.predict(X))


def test_clone_is_fresh_with_same_params(rng):
    X, y = friedman1(1000, rng)
    m = HoeffdingTreeRegressor(grace_period=50, observer="ebst", seed=3).learn_many(X, y)
    c = m.clone()
    assert c.get_params() == m.get_params()
    assert repr(c) == "HoeffdingTreeRegressor(grace_period=50, observer='ebst', seed=3)"
    assert c.predict_one({0: 0.5}) == 0.0
    c.learn_many(X, y)
    assert np.array_equal(c.predict(X), m.predict(X))
    assert m.clone(grace_period=10).grace_period == 10


def test_learn_one_matches_learn_many_and_predict_learn_many(rng):
    X, y = friedman1(1500, rng)
    one = HoeffdingTreeRegressor(grace_period=100, leaf_model="linear", seed=1)
    preds_one = []
    for row, t in zip(X, y, strict=True):
        x = {i: v for i, v in enumerate(row)}
        preds_one.append(one.predict_one(x))
        one.learn_one(x, t)
    many = HoeffdingTreeRegressor(grace_period=100, leaf_model="linear", seed=1)
    preds_many = many.predict_learn_many(X, y)
    assert np.array_equal(np.array(preds_one), preds_many)
    batch = HoeffdingTreeRegressor(grace_period=100, leaf_model="linear", seed=1)
    for k in range(0, 1500, 400):  # chunked learning equals one pass
        batch.learn_many(X[k : k + 400], y[k : k + 400])
    assert np.array_equal(batch.predict(X), many.predict(X))


def _snapshot(m):
    return pickle.dumps(m)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda m: m.learn_one({"a": 1.0, "b": 2.0}, float("nan")), ValueError),
        (lambda m: m.learn_one({"a": 1.0, "b": 2.0}, float("inf")), ValueError),
        (lambda m: m.learn_one({"a": 1.0, "b": 2.0}, "3"), TypeError),
        (lambda m: m.learn_one({"a": "red", "b": 2.0}, 1.0), TypeError),
        (lambda m: m.learn_one({"a": float("inf"), "b": 2.0}, 1.0), ValueError),
        (lambda m: m.learn_one({"a": 1.0, "new": float("-inf")}, 1.0), ValueError),
        (lambda m: m.learn_one({"a": 1.0}, 1.0, w=-1.0), ValueError),
        (lambda m: m.learn_one({"a": 1.0}, 1.0, w=float("nan")), ValueError),
        (lambda m: m.learn_one([1.0, 2.0], 1.0), TypeError),
        (lambda m: m.learn_many(np.ones((3, 3)), np.ones(3)), ValueError),
        (lambda m: m.learn_many(np.ones((3, 2)), np.ones(4)), ValueError),
        (lambda m: m.learn_many(np.ones((3, 2)), np.array([1.0, np.nan, 1.0])), ValueError),
        (lambda m: m.learn_many(np.array([[1.0, np.inf]]), np.ones(1)), ValueError),
        (lambda m: m.learn_many(np.array([["x", "y"]]), np.ones(1)), TypeError),
        (lambda m: m.learn_many(np.ones((2, 2)), np.ones(2), w=np.array([1.0, -2.0])), ValueError),
        (lambda m: m.learn_many(np.ones(4), np.ones(4)), ValueError),
        (lambda m: m.predict(np.ones((3, 5))), ValueError),
        (lambda m: m.predict_one({"a": "red"}), TypeError),
    ],
)
def test_bad_input_raises_clearly_and_changes_nothing(call, error, rng):
    m = HoeffdingTreeRegressor(grace_period=20, seed=0)
    for _ in range(100):
        m.learn_one({"a": float(rng.random()), "b": float(rng.random())}, float(rng.random()))
    before = _snapshot(m)
    with pytest.raises(error) as exc:
        call(m)
    assert str(exc.value)
    assert _snapshot(m) == before


def test_bad_hyperparameters_are_reported_when_learning_starts():
    with pytest.raises(ValueError, match="observer"):
        HoeffdingTreeRegressor(observer="bst").learn_one({"a": 1.0}, 1.0)
    with pytest.raises(ValueError, match="qo_radius"):
        HoeffdingTreeRegressor(qo_radius="sigma/4").learn_one({"a": 1.0}, 1.0)
    with pytest.raises(ValueError, match="grace_period"):
        HoeffdingTreeRegressor(grace_period=0).learn_many(np.ones((2, 1)), np.ones(2))


def test_emerging_and_missing_features(rng):
    m = HoeffdingTreeRegressor(grace_period=50, leaf_model="mean", seed=0)
    for i in range(600):
        x = {"a": float(rng.random())}
        if i >= 200:
            x["b"] = float(rng.random())  # emerges later and drives the target
        y = 5.0 * (x.get("b", 0.0) > 0.5)
        m.learn_one(x, y)
    assert m.feature_names_in_ == ["a", "b"]
    assert any(s["feature"] == "b" for s in m.splits())
    assert m.predict_one({"a": 0.3, "b": 0.9}) > 4.0
    assert m.predict_one({"a": 0.3, "b": 0.1}) < 1.0
    # unknown features at prediction are ignored; missing ones follow the documented rule
    p_missing = m.predict_one({"a": 0.3})
    assert (
        p_missing
        == m.predict_one({"a": 0.3, "zzz": 1.0})
        == m.predict_one({"a": 0.3, "b": None})
        == m.predict_one({"a": 0.3, "b": float("nan")})
    )


def test_dataframe_columns_are_matched_by_name(rng):
    pd = pytest.importorskip("pandas")
    X, y = friedman1(2000, rng)
    cols = [f"x{i}" for i in range(10)]
    m = HoeffdingTreeRegressor(grace_period=100, seed=0).learn_many(
        pd.DataFrame(X, columns=cols), y
    )
    shuffled = pd.DataFrame(X, columns=cols)[cols[::-1]]
    assert np.array_equal(m.predict(shuffled), m.predict(X))


def test_observer_memory_budget_is_respected_on_a_long_stream(rng):
    budget = 3000
    m = HoeffdingTreeRegressor(
        observer="ebst", grace_period=100, max_observer_bins=budget, leaf_model="mean", seed=0
    )
    live = []
    for _ in range(10):
        X, y = friedman1(5000, rng)
        m.learn_many(X, y)
        live.append(int(m.state_.ints[4]))  # bins in use
    assert max(live) <= budget
    assert m.state_.bins.shape[0] <= budget
    assert m.state_.ints[9] > 0  # leaves were deactivated to stay within it
    X, y = friedman1(2000, rng)
    # and the tree still learns: clearly better than predicting the mean
    assert np.mean(np.abs(m.predict(X) - y)) < 0.8 * np.mean(np.abs(y - y.mean()))


def test_max_leaves_freezes_structure(rng):
    X, y = friedman1(20000, rng)
    m = HoeffdingTreeRegressor(grace_period=50, max_leaves=8, leaf_model="mean", seed=0)
    m.learn_many(X, y)
    assert m.n_leaves == 8
    assert m.state_.ints[4] == 0  # every observer freed


def test_max_depth(rng):
    X, y = friedman1(20000, rng)
    m = HoeffdingTreeRegressor(grace_period=50, max_depth=3, seed=0).learn_many(X, y)
    assert m.height <= 3 and m.n_leaves > 1


def test_linear_leaves_beat_mean_leaves_on_a_linear_target(rng):
    n = 20000
    X = rng.random((n, 3))
    y = 3 * X[:, 0] - 2 * X[:, 1] + 0.05 * rng.standard_normal(n)
    mae = {}
    for lm in ("mean", "linear", "adaptive"):
        p = HoeffdingTreeRegressor(leaf_model=lm, grace_period=200, seed=0).predict_learn_many(X, y)
        mae[lm] = np.mean(np.abs(p[n // 2 :] - y[n // 2 :]))
    assert mae["linear"] < 0.7 * mae["mean"]
    assert mae["adaptive"] < 0.8 * mae["mean"]


def test_sample_weights_equal_repeated_examples_for_statistics(rng):
    X = rng.random((300, 2))
    y = X[:, 0] + rng.standard_normal(300)
    k = rng.integers(1, 4, 300)
    a = HoeffdingTreeRegressor(grace_period=10_000, leaf_model="mean").learn_many(X, y, k)
    b = HoeffdingTreeRegressor(grace_period=10_000, leaf_model="mean").learn_many(
        np.repeat(X, k, axis=0), np.repeat(y, k)
    )
    wa, ma, va = a.leaf_stats(0)
    wb, mb, vb = b.leaf_stats(0)
    assert wa == wb and ma == pytest.approx(mb, rel=1e-12) and va == pytest.approx(vb, rel=1e-10)


def test_predict_before_learning_is_zero():
    m = HoeffdingTreeRegressor()
    assert m.predict_one({"a": 1.0}) == 0.0
    assert m.predict(np.ones((2, 3))).tolist() == [0.0, 0.0]
