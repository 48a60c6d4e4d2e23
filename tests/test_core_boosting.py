"""The compiled core's streaming gradient-boosted trees (``streamforest._core.boosting``): the
model's prediction is its base score plus the learning rate times each step's tree's
prediction, summed in step order in Python; the prequential pass is the boosting loop replayed
in Python over separate trees; the bindings refuse what they would overrun."""

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.boosting.sgbt import default_tree

CB = _core.boosting


def stream(n, seed=0, nan=0.02, jump_at=None):
    """A nonlinear stream on 5 features whose concept changes half way (NaN at rate ``nan``;
    a jump of the target at ``jump_at``)."""
    r = np.random.default_rng(seed)
    X = r.uniform(size=(n, 5))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2] + r.normal(size=n)
    h = n // 2
    y[h:] = 20 * (X[h:, 3] - 0.5) ** 2 - 8 * X[h:, 4] + r.normal(size=n - h)
    if jump_at is not None:
        y[jump_at:] += 40.0
    if nan:
        X[r.random((n, 5)) < nan] = np.nan
    return X, y


CONFIGS = {
    "defaults": lambda: sf.SGBTRegressor(seed=1),
    "drift": lambda: sf.SGBTRegressor(n_steps=6, learning_rate=0.5, drift_threshold=5.0, seed=2),
    "linear-all-features-budget": lambda: sf.SGBTRegressor(
        n_steps=12,
        learning_rate=0.3,
        feature_fraction=None,
        tree=sf.HoeffdingTreeRegressor(
            grace_period=30, delta=0.05, tau=0.05, leaf_model="linear", max_depth=4
        ),
        max_memory_mb=0.65,  # (a few leaves deactivated under the budget)
        seed=3,
    ),
    "atser-steps": lambda: sf.SGBTRegressor(
        n_steps=5, learning_rate=0.4, tree=sf.ATSERRegressor(grace_period=30, m_min=5), seed=4
    ),
}


def same_bits(a, b) -> bool:
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


def dicts(m, X):
    names = list(m.feature_names_in_)
    return [dict(zip(names, map(float, row), strict=True)) for row in X]


# ------------------------------------------------------------------------------------------------
# reference tests
@pytest.mark.parametrize("name", list(CONFIGS))
def test_prediction_is_the_scaled_sum_of_the_steps(name):
    """``predict`` (and ``predict_one``) is ``base + sum_t lr * f_t(x)`` summed in step order,
    recomputed in Python from each step's tree's prediction."""
    X, y = stream(1200, seed=7, jump_at=800 if "drift" in name else None)
    m = CONFIGS[name]().learn_many(X, y)
    lr = float(m.learning_rate)
    Xt, _ = stream(100, seed=8, nan=0.1)
    steps = m.tree_predictions(Xt)  # (n, n_steps), each step's tree's own prediction
    ref = np.empty(len(Xt))
    for i in range(len(Xt)):
        s = 0.0
        for t in range(steps.shape[1]):
            s += lr * float(steps[i, t])
        ref[i] = s + m.engine_.base_score
    assert same_bits(m.predict(Xt), ref)
    D = dicts(m, Xt)
    assert same_bits(np.array([m.predict_one(d) for d in D]), ref)


def _replay(X, y, n_steps, lr, seed, ff=0.75):
    """The boosting loop in Python over separate trees of the same specs (each step's seed as
    SGBTRegressor derives it): for each row the prediction before learning it, then step t
    learns ``(y - base) - F_t`` and ``F_{t+1} = F_t + lr * f_t(x)`` with the step's tree after
    learning (``base`` the first target)."""
    seeds = np.random.SeedSequence(seed).generate_state(n_steps + 1, np.uint64)
    trees = [default_tree().clone(max_features=ff, seed=int(seeds[t])) for t in range(n_steps)]
    names = [f"f{j}" for j in range(X.shape[1])]
    out = np.empty(len(y))
    base = float(y[0])
    for i in range(len(y)):
        x = dict(zip(names, map(float, X[i]), strict=True))
        raw = pre = 0.0
        for tree in trees:
            pre += lr * tree.predict_one(x)
            tree.learn_one(x, float((y[i] - base) - raw))
            raw += lr * tree.predict_one(x)
        out[i] = pre + base if i else pre
    return out


def test_prequential_pass_replays_the_boosting_loop():
    """``predict_learn_many`` is the boosting loop replayed in Python over separate trees, bit
    for bit (no memory budget: the steps' trees grow as the separate ones do)."""
    X, y = stream(500, seed=3, nan=0.0)
    ref = _replay(X, y, n_steps=5, lr=0.3, seed=7)
    m = sf.SGBTRegressor(  # (the replay has no whole-step drift test)
        n_steps=5, learning_rate=0.3, drift_threshold=None, seed=7, max_memory_mb=None
    )
    got = m.predict_learn_many(X, y)
    assert same_bits(got, ref)


def test_refusals():
    """Wrong shapes, states and trees are refused before a pass runs."""
    X, y = stream(300, seed=1)
    m = sf.SGBTRegressor(n_steps=3, seed=1).learn_many(X, y)
    e = m.engine_
    Xa = np.ascontiguousarray(m.encode_predict(X[:10]))
    x = np.ascontiguousarray(Xa[0])
    acc, dr = np.zeros(CB.ACC_SIZE), np.zeros(3, np.int8)
    g = np.zeros(_core.common.GUARD_SIZE)  # the label guard's state
    assert CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, CB.FRESH, acc, dr, g) in (CB.DONE, CB.DRIFTED)
    with pytest.raises(ValueError, match="acc"):
        CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, CB.FRESH, np.zeros(2), dr, g)
    with pytest.raises(ValueError, match="guard"):
        CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, CB.FRESH, acc, dr, np.zeros(2))
    with pytest.raises(ValueError, match="guard"):
        CB.boost_rows(e.arena, Xa, np.zeros(10), np.ones(10), 0.1, 0, CB.FRESH, acc, dr,
                      np.zeros(2), np.zeros(10))  # fmt: skip
    with pytest.raises(ValueError, match="drifted"):
        CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, CB.FRESH, acc, np.zeros(2, np.int8), g)
    with pytest.raises(TypeError):
        CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, CB.FRESH, acc, np.zeros(3, np.int64), g)
    with pytest.raises(ValueError, match="t0"):
        CB.boost_one(e.arena, x, 1.0, 1.0, 0.1, -2, acc, dr, g)
    with pytest.raises(ValueError, match="columns"):
        CB.boost_one(e.arena, x[:2].copy(), 1.0, 1.0, 0.1, CB.FRESH, acc, dr, g)
    with pytest.raises(ValueError, match="columns"):
        CB.boost_predict_one(e.arena, x[:2].copy(), 0.1)
    out = np.zeros(10)
    y10, w10 = np.zeros(10), np.ones(10)
    r = CB.boost_rows(e.arena, Xa, y10, w10, 0.1, 0, CB.FRESH, acc, dr, g, out)
    assert r == (10, CB.DONE)
    assert CB.boost_rows(e.arena, Xa, y10, w10, 0.1, 12, CB.FRESH, acc, dr, g, out) == (10, CB.DONE)
    with pytest.raises(ValueError, match="start"):
        CB.boost_rows(e.arena, Xa, y10, w10, 0.1, -1, CB.FRESH, acc, dr, g, out)
    with pytest.raises(ValueError, match="out"):
        CB.boost_rows(e.arena, Xa, y10, w10, 0.1, 0, CB.FRESH, acc, dr, g, np.zeros(9))
    with pytest.raises(ValueError, match="w"):
        CB.boost_rows(e.arena, Xa, y10, w10[:9].copy(), 0.1, 0, CB.FRESH, acc, dr, g, out)
    with pytest.raises(ValueError, match="out"):
        CB.boost_predict_rows(e.arena, Xa, 0.1, np.zeros(9))
    with pytest.raises(TypeError):
        CB.boost_predict_rows(e.arena, Xa, 0.1, np.zeros(10, np.float32))
    with pytest.raises(TypeError):
        CB.boost_predict_one((1, 2), x, 0.1)
    # classification trees are not boosting steps
    c = sf.HoeffdingTreeClassifier(seed=1)
    c.learn_many(X[:100, :], (y[:100] > y.mean()).astype(int))
    with pytest.raises(ValueError, match="classification"):
        CB.boost_predict_one(c.engine_.arena, x, 0.1)
    # (the engine's own per-example prediction: the base score added)
    lr = e.learning_rate
    assert CB.boost_predict_one(e.arena, x, lr) + e.base_score == e.predict_one(x)
