"""The compiled per-example path (``_core.per_example.OneExample``, the engine's
``example_path()``, with the feature space's ``_core.features.DictRows``) against the Python
path it stands for.

Each model is run twice on the same calls: as it is (its per-example calls of a dict are one
compiled call whenever nothing needs a decision) and with the compiled path switched off
(``_px = False``: every call takes the Python path, the reference behaviour).  The two must
give exactly the same results, raise the same errors and end in the same state (the same
pickle), whatever the dicts are: keys shared between dicts or new objects each time, ``str``
or ``int`` keys in any order, unseen keys, new keys, missing values, categories, a dict changed
between its prediction and its learning, wrong values, targets and weights.  The compiled path
must also be the one taken in the steady state, and equal the batch pass.
"""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import streamforest as sf
from streamforest.features import FeatureSpace

from .conftest import friedman1

NAN = float("nan")


def _forest(n_trees=3):
    return sf.OnlineForestRegressor(
        n_trees=n_trees, seed=3, tree=sf.HoeffdingTreeRegressor(grace_period=20)
    )


MODELS = {
    "tree": (lambda: sf.HoeffdingTreeRegressor(grace_period=20, seed=1), "point"),
    "forest": (_forest, "point"),
    "cp": (lambda: sf.CPApproximate(forest=_forest(), calibration_size=50, seed=3), "interval"),
    "qrf": (lambda: sf.OnlineQRF(forest=_forest(), k=32, seed=3), "interval"),
}


def _three(n, rng):
    """Friedman #1 rows on their first three features (the target uses five)."""
    X, y = friedman1(n, rng, p=5)
    return X[:, :3], y


def pair(name):
    """The model as it is and its twin on the Python path alone."""
    make, kind = MODELS[name]
    fast, slow = make(), make()
    slow._px = False  # (never attached: every call takes the Python path)
    return fast, slow, kind


def outcome(f, *args, **kwargs):
    """``('ok', result)`` or ``('err', type, message)`` of a call."""
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - compared, not swallowed
        return ("err", type(e), str(e))


def same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "err":
        return a[1:] == b[1:]
    return np.array_equal(np.asarray(a[1], float), np.asarray(b[1], float), equal_nan=True)


def state(model) -> bytes:
    return pickle.dumps(model)


def compiled_object(model):
    """The compiled per-example object a model keeps (its forest's engine's, for a method)."""
    px = model.__dict__.get("_px")
    return px if px else None


# --------------------------------------------------------------------------------------------------
# the steady state: the compiled path, equal to the batch pass


@pytest.mark.parametrize("keys", ["shared str", "new str", "int"])
@pytest.mark.parametrize("name", list(MODELS))
def test_dicts_take_the_compiled_path_and_equal_the_batch_pass(rng, name, keys, monkeypatch):
    """Test-then-train on dicts gives exactly the batch pass's predictions (intervals), while
    trees grow; once the trees exist the Python encoder of dicts is never called (every call
    is one compiled call), whatever the key objects are."""
    X, y = friedman1(1500, rng, p=5)
    make, kind = MODELS[name]
    batch, one = make(), make()
    if kind == "point":
        expected = batch.predict_learn_many(X, y)
    else:
        expected = batch.predict_learn_many(X, y, alpha=0.1)[1]  # (n, 2) at one level
    names = [f"x{j}" for j in range(5)]
    calls = {"python": 0}
    encode = FeatureSpace.encode_dict_into

    def counted(self, *args, **kwargs):
        calls["python"] += 1
        return encode(self, *args, **kwargs)

    monkeypatch.setattr(FeatureSpace, "encode_dict_into", counted)
    got = []
    for i, (row, t) in enumerate(zip(X.tolist(), y.tolist(), strict=True)):
        if keys == "shared str":
            x = dict(zip(names, row, strict=True))
        elif keys == "new str":
            x = {f"x{j}": v for j, v in enumerate(row)}
        else:
            x = dict(enumerate(row))
        if i == 10:
            calls["python"] = 0
            assert compiled_object(one) is not None
        got.append(one.predict_one(x) if kind == "point" else one.predict_interval_one(x, 0.1))
        one.learn_one(x, t)
    assert np.array_equal(np.array(got), expected)
    assert calls["python"] == 0
    assert np.array_equal(one.predict(X[:200]), batch.predict(X[:200]))


def test_the_compiled_path_keeps_the_engines_current_object(rng):
    """A model whose engine was given a new per-example object (its scratch made again) takes
    the Python path once, then the new object."""
    X, y = _three(300, rng)
    m = sf.HoeffdingTreeRegressor(grace_period=20, seed=1)
    ref = sf.HoeffdingTreeRegressor(grace_period=20, seed=1)
    D = [dict(enumerate(r)) for r in X.tolist()]
    for i in range(150):
        assert m.predict_one(D[i]) == ref.predict_one(D[i])
        m.learn_one(D[i], float(y[i]))
        ref.learn_one(D[i], float(y[i]))
    old = compiled_object(m)
    m.engine_._scratch()  # (as after restrict / loading: the engine's scratch made again)
    for i in range(150, 300):
        assert m.predict_one(D[i]) == ref.predict_one(D[i])
        m.learn_one(D[i], float(y[i]))
        ref.learn_one(D[i], float(y[i]))
    new = compiled_object(m)
    assert new is not None and new is not old and new is m.engine_.example_path()
    assert state(m) == state(ref)


# --------------------------------------------------------------------------------------------------
# any sequence of calls: the compiled path equals the Python path

KEYS = ["a", "b", "c", 0, 1, "new"]
values = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False),
    st.floats(-1e3, 1e3, allow_nan=False),
    st.integers(-5, 5),
    st.sampled_from([NAN, None, np.float32(1.5), np.int64(3), True]),
    st.sampled_from(["red", "blue"]),  # a category (the first one's key becomes nominal)
    st.sampled_from([float("inf"), "1.5", b"x", [1.0], np.float64(2.5)]),  # refused or not plain
)
targets = st.one_of(
    st.floats(-10, 10, allow_nan=False),
    st.floats(-10, 10, allow_nan=False),
    st.sampled_from([3, np.float64(1.5), NAN, float("inf"), "3", None]),
)
weights = st.sampled_from([1.0, 1.0, 1.0, 0.5, 0.0, 2, -1.0, NAN])


@st.composite
def sequences(draw):
    """Warm-up rows, then calls: predictions, learning (the dict predicted just before or
    another), dicts mutated between the two, key orders, unseen, new and wrong keys and
    values."""
    ops = []
    for _ in range(draw(st.integers(5, 40))):
        keys = draw(st.permutations(["a", "b", "c"]))
        if draw(st.integers(0, 4)) == 0:
            keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=5))
        x = {
            k: draw(values) if draw(st.integers(0, 5)) == 0 else draw(st.floats(0, 1)) for k in keys
        }
        kind = draw(st.sampled_from(["predict-learn", "predict-learn", "learn", "predict",
                                     "predict-mutate-learn", "levels"]))  # fmt: skip
        ops.append((kind, x, draw(targets), draw(weights), draw(st.sampled_from(["a", 0, "z"]))))
    return ops


def run(model, kind, ops, warm):
    """The results (or errors) of every call."""
    out = []
    for x, t in warm:  # (the trees exist: the compiled path from here on)
        model.learn_one(x, t)
    predict = model.predict_one if kind == "point" else model.predict_interval_one
    for op, x, t, w, key in ops:
        x = dict(x)  # (each model its own dicts: one is mutated)
        if op.startswith("predict"):
            out.append(outcome(predict, x))
        if op == "levels" and kind == "interval":
            out.append(outcome(model.predict_interval_one, x, alpha=[0.1, 0.3]))
        if op == "predict-mutate-learn":
            x[key] = 0.25 if key in x else 0.75
        if "learn" in op:
            out.append(outcome(model.learn_one, x, t, w))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(list(MODELS)), sequences())
def test_any_calls_give_the_python_paths_results_errors_and_state(name, ops):
    fast, slow, kind = pair(name)
    rng = np.random.default_rng(1)
    X, y = _three(120, rng)
    warm = [
        (dict(zip("abc", r, strict=True)), t) for r, t in zip(X.tolist(), y.tolist(), strict=True)
    ]
    a = run(fast, kind, ops, warm)
    b = run(slow, kind, ops, warm)
    for i, (ra, rb) in enumerate(zip(a, b, strict=True)):
        assert same(ra, rb), (i, ra, rb)
    assert compiled_object(fast) is not None and compiled_object(slow) is None
    assert state(fast) == state(slow)


def test_refused_calls_change_nothing(rng):
    """Wrong dicts, values, targets and weights raise the Python path's TypeError / ValueError
    through the compiled path too, and leave the model as it was."""
    X, y = _three(200, rng)
    for name in MODELS:
        fast, slow, kind = pair(name)
        for r, t in zip(X.tolist(), y.tolist(), strict=True):
            x = dict(zip("abc", r, strict=True))
            fast.learn_one(x, t)
            slow.learn_one(x, t)
        assert compiled_object(fast) is not None
        before = state(fast)
        good = {"a": 0.5, "b": 0.5, "c": 0.5}
        bad = [
            (([0.5, 0.5, 0.5], 1.0), TypeError),
            (({**good, "a": "red"}, 1.0), TypeError),
            (({**good, "b": float("inf")}, 1.0), ValueError),
            (({**good, "new": float("-inf")}, 1.0), ValueError),
            ((good, NAN), ValueError),
            ((good, float("inf")), ValueError),
            ((good, "3"), TypeError),
            ((good, 1.0, -1.0), ValueError),
            ((good, 1.0, NAN), ValueError),
        ]
        for args, error in bad:
            with pytest.raises(error):
                fast.learn_one(*args)
            assert same(outcome(fast.learn_one, *args), outcome(slow.learn_one, *args))
            assert state(fast) == before, (name, args)
        predict = fast.predict_one if kind == "point" else fast.predict_interval_one
        for x in ([0.5], {**good, "b": "red"}, {**good, "c": float("inf")}):
            with pytest.raises((TypeError, ValueError)):
                predict(x)
        assert state(fast) == before
        if kind == "interval":
            with pytest.raises(ValueError):
                fast.predict_interval_one(good, alpha=1.5)
        assert fast.predict_one(good) == slow.predict_one(good)
        assert state(fast) == before


def test_unseen_new_and_missing_keys(rng):
    """Predicting ignores a key the model never learnt (as a missing value), learning records a
    new key (the trees widen) and the compiled path takes the wider rows next; NaN and None are
    missing values; the key order does not matter."""
    X, y = _three(300, rng)
    for name in MODELS:
        fast, slow, kind = pair(name)
        predict = (lambda m, x: m.predict_one(x)) if kind == "point" else (
            lambda m, x: m.predict_interval_one(x, alpha=0.1))  # fmt: skip
        for i, (r, t) in enumerate(zip(X.tolist(), y.tolist(), strict=True)):
            x = dict(zip("abc", r, strict=True))
            if i >= 150:
                x["d"] = r[0] * r[1]  # a new feature from here on
            assert same(outcome(predict, fast, x), outcome(predict, slow, x))
            fast.learn_one(x, t)
            slow.learn_one(x, t)
        assert (
            len(fast.feature_names_in_ if kind == "point" else fast.forest_.feature_names_in_) == 4
        )
        base = {"a": 0.3, "b": 0.6, "c": 0.1, "d": 0.2}
        assert predict(fast, {**base, "unseen": 5.0}) == predict(fast, base)
        assert predict(fast, {**base, "d": NAN}) == predict(fast, {**base, "d": None})
        assert predict(fast, {**base, "d": NAN}) == predict(fast, {"a": 0.3, "b": 0.6, "c": 0.1})
        assert predict(fast, dict(reversed(base.items()))) == predict(fast, base)
        for x in ({**base, "unseen": 5.0}, {**base, "d": NAN}, {"c": 0.1, "a": 0.3}):
            assert same(outcome(predict, fast, x), outcome(predict, slow, x))
        assert state(fast) == state(slow)


def test_models_in_threads_equal_models_alone(rng):
    """Models learning and predicting per example in parallel threads (the GIL released for a
    forest's kernels) end exactly as the same models run one after another: the compiled
    objects share nothing."""
    X, y = friedman1(1500, rng, p=5)
    D = [dict(enumerate(r)) for r in X.tolist()]
    Y = y.tolist()

    def work(model, kind, out):
        predict = model.predict_one if kind == "point" else model.predict_interval_one
        for x, t in zip(D, Y, strict=True):
            out.append(predict(x))
            model.learn_one(x, t)

    names = list(MODELS) * 2
    threaded = [MODELS[n][0]() for n in names]
    results = [[] for _ in names]
    threads = [
        threading.Thread(target=work, args=(m, MODELS[n][1], r))
        for m, n, r in zip(threaded, names, results, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, m, r in zip(names, threaded, results, strict=True):
        alone, out = MODELS[n][0](), []
        work(alone, MODELS[n][1], out)
        assert np.array_equal(np.array(r), np.array(out)), n
        assert state(m) == state(alone), n
