"""Split correctness: children's statistics equal direct recomputation, thresholds separate
exactly what was counted left, QO agrees with E-BST."""

import numpy as np
import pytest

from streamforest import HoeffdingTreeRegressor
from streamforest.stats import RunningStats

OBSERVERS = [
    dict(observer="qo", qo_radius="sigma/3"),
    dict(observer="qo", qo_radius=0.1),
    dict(observer="ebst"),
    dict(observer="tebst", tebst_decimals=1),
]


def assert_leaves_match_routed_examples(model, X, y, w=None):
    """Every leaf's target statistic equals the one computed directly from the examples routed to
    it among those learnt since its parent was created (all of them below the root)."""
    leaves = model.apply(X)
    assert len(np.unique(leaves)) == model.n_leaves
    parent = {s["left"]: s["node"] for s in model.splits()}
    parent.update({s["right"]: s["node"] for s in model.splits()})
    born = model.state_.nd_born
    rows = np.arange(len(y))
    for leaf in np.unique(leaves):
        since = born[parent[leaf]] if leaf in parent else 0
        sel = (leaves == leaf) & (rows >= since)
        direct = RunningStats.of(y[sel], None if w is None else w[sel])
        lw, mean, var = model.leaf_stats(int(leaf))
        assert lw == pytest.approx(direct.w, rel=1e-12)
        assert mean == pytest.approx(direct.mean, rel=1e-9, abs=1e-9)
        assert var == pytest.approx(direct.variance(), rel=1e-8, abs=1e-9)


@pytest.mark.parametrize("obs", OBSERVERS, ids=lambda d: "-".join(map(str, d.values())))
def test_child_statistics_equal_direct_recomputation(obs, rng):
    n = 3000
    X = rng.random((n, 4))
    X[:, 1] = np.round(X[:, 1], 2)  # many ties
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0.6, 5.0, -2.0) + rng.standard_normal(n)
    w = rng.poisson(1.0, n).astype(float)
    model = HoeffdingTreeRegressor(grace_period=100, max_depth=3, leaf_model="mean", seed=1, **obs)
    model.learn_many(X, y, w)
    assert model.n_splits >= 2
    assert_leaves_match_routed_examples(model, X, y, w)


@pytest.mark.parametrize("obs", OBSERVERS, ids=lambda d: "-".join(map(str, d.values())))
def test_child_statistics_with_missing_values(obs, rng):
    n = 3000
    X = rng.random((n, 3))
    y = np.where(X[:, 0] > 0.4, 4.0, 0.0) + 0.1 * rng.standard_normal(n)
    X[rng.random(n) < 0.2, 0] = np.nan  # missing values of the split feature
    model = HoeffdingTreeRegressor(grace_period=100, max_depth=2, leaf_model="mean", seed=3, **obs)
    model.learn_many(X, y)
    assert any(s["feature"] == 0 for s in model.splits())
    assert_leaves_match_routed_examples(model, X, y)


def test_qo_threshold_separates_exactly_the_slots_counted_left():
    """Radius 1: slot 0 holds {0.0, 0.9}, slot 1 holds {1.0}.  The midpoint of the prototypes
    (0.45 and 1.0) is 0.725 < 0.9, which would send slot 0's 0.9 values right although they were
    counted left; the threshold must lie in [0.9, 1.0)."""
    X = np.array([[0.0], [0.9], [1.0]] * 400)
    y = np.array([0.0, 0.0, 10.0] * 400)
    model = HoeffdingTreeRegressor(
        grace_period=300,
        max_depth=1,
        observer="qo",
        qo_radius=1.0,
        leaf_model="mean",
        min_samples_split=1,
    )
    model.learn_many(X, y)
    (split,) = model.splits()
    assert 0.9 <= split["threshold"] < 1.0
    assert model.predict(np.array([[0.9], [1.0]])).tolist() == [0.0, 10.0]
    assert_leaves_match_routed_examples(model, X, y)


@pytest.mark.parametrize("step", [0.23, 0.5, 0.71])
def test_qo_and_ebst_pick_the_same_feature_and_nearby_threshold(step, rng):
    n = 2000
    X = rng.random((n, 5))
    y = np.where(X[:, 2] <= step, 1.0, 3.0)
    radius = 0.05
    found = {}
    for obs in (dict(observer="qo", qo_radius=radius), dict(observer="ebst")):
        m = HoeffdingTreeRegressor(grace_period=200, max_depth=1, leaf_model="mean", **obs)
        m.learn_many(X, y)
        (s,) = m.splits()
        found[obs["observer"]] = s
    assert found["qo"]["feature"] == found["ebst"]["feature"] == 2
    assert abs(found["qo"]["threshold"] - found["ebst"]["threshold"]) <= radius
    assert abs(found["ebst"]["threshold"] - step) < 0.01


def test_nominal_split_groups_categories_and_routes_unseen_to_heavier_side(rng):
    cats = np.array(["a", "b", "c", "d", "e"])
    effect = {"a": 0.0, "b": 5.0, "c": 0.2, "d": 5.1, "e": -0.1}
    n = 2000
    # 'e' is rare, so the heavier side is {a, c, e}; unseen 'z' must follow it
    p = np.array([0.3, 0.15, 0.3, 0.15, 0.1])
    model = HoeffdingTreeRegressor(grace_period=200, max_depth=1, leaf_model="mean", seed=0)
    data = []
    for _ in range(n):
        c = rng.choice(cats, p=p)
        x = {"color": c, "noise": float(rng.random())}
        t = effect[c] + 0.1 * rng.standard_normal()
        data.append((x, t))
        model.learn_one(x, t)
    (s,) = model.splits()
    assert s["feature"] == "color"
    assert {frozenset(s["left_categories"]), frozenset(s["right_categories"])} == {
        frozenset("ace"),
        frozenset("bd"),
    }
    heavy = "left" if s["missing_left"] else "right"
    assert set(s[f"{heavy}_categories"]) == set("ace")
    assert model.predict_one({"color": "z", "noise": 0.5}) == pytest.approx(
        model.predict_one({"color": "a", "noise": 0.5})
    )
    assert model.predict_one({"color": "b", "noise": 0.5}) == pytest.approx(5.05, abs=0.2)
    # statistics of the children are those of the routed examples
    lo = [t for x, t in data if x["color"] in s["left_categories"]]
    w, mean, var = model.leaf_stats(s["left"])
    assert w == len(lo) and mean == pytest.approx(np.mean(lo)) and var == pytest.approx(np.var(lo))


def test_hoeffding_tie_rule_splits_exactly_when_eps_drops_below_tau(rng):
    """Two identical columns tie exactly (VR2 / VR1 = 1), so only the tie rule can split: with
    delta = 1e-7 and tau = 0.05, eps < tau needs n > ln(1e7) / (2 * 0.05**2) = 3223.6, so the
    attempts at 200, 400, ..., 3200 examples must not split and the one at 3400 must."""
    X = rng.random((3400, 1))
    X = np.hstack([X, X])
    y = np.where(X[:, 0] > 0.5, 1.0, 0.0) + 0.1 * rng.standard_normal(3400)
    m = HoeffdingTreeRegressor(grace_period=200, leaf_model="mean", max_depth=1, seed=0)
    m.learn_many(X[:3399], y[:3399])
    assert m.n_leaves == 1
    m.learn_many(X[3399:], y[3399:])
    assert m.n_leaves == 2


def test_clear_winner_splits_at_first_attempt(rng):
    X = rng.random((200, 3))
    y = np.where(X[:, 1] > 0.5, 1.0, 0.0) + 0.1 * rng.standard_normal(200)
    m = HoeffdingTreeRegressor(grace_period=200, leaf_model="mean", max_depth=1)
    m.learn_many(X, y)
    assert [s["feature"] for s in m.splits()] == [1]
