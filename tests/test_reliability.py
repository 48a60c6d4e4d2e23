"""Reliability (issue #17): a rejected call changes nothing, and emerging dict features do not
break the array API."""

import pickle

import numpy as np
import pandas as pd
import pytest

import streamforest as sf
from streamforest import registry


def data(n, rng, p=4):
    X = rng.random((n, p))
    return X, 10 * X[:, 0] + 5 * np.sin(3 * X[:, -1]) + rng.standard_normal(n)


def _small(name):
    """A small model of every registry entry (3 trees, few calibration scores)."""
    spec = registry.get(name)
    params = {}
    if "forest" in spec.layers:  # (an SGBT forest's members are its boosting steps)
        params["n_trees" if "n_trees" in spec.parameters()["forest"] else "n_steps"] = 3
    if "n_members" in spec.param_names():  # the ATSER ensembles
        params["n_members"] = 3
    if name in ("cp-approx", "cp-exact", "conformal-qrf"):
        params["calibration_size"] = 50
    if name in ("qrf", "qrf-hdi", "conformal-qrf"):
        params["k"] = 16
    return registry.build(name, params, seed=0)


NAMES = registry.names(task="regression")
INTERVALS = [n for n in NAMES if registry.get(n).layers[0] == "method"]


def _state(model) -> bytes:
    return pickle.dumps(model)


# --- defect 1: a rejected call changes the model -------------------------------------------------
@pytest.mark.parametrize("name", INTERVALS)
def test_a_rejected_call_records_no_schema(name, rng):
    # the case: ConformalQRF().predict_learn_many(X, y, alpha=0.2) raised (alpha not
    # calibrated; main now answers any alpha) after recording X's 4 columns, and a later
    # 5-column learn_many failed.  Any late rejection did the same.
    X, y = data(200, rng, p=4)
    y_bad = y.copy()
    y_bad[-1] = np.nan
    fresh = _small(name)
    before = _state(fresh)
    with pytest.raises(ValueError, match="y must be finite"):
        fresh.predict_learn_many(X, y_bad, alpha=0.2)
    assert _state(fresh) == before and fresh.n_features_in_ == 0
    X5, y5 = data(200, rng, p=5)
    fresh.learn_many(X5, y5)  # the rejected 4-column call fixed nothing
    assert fresh.n_features_in_ == 5

    fitted = _small(name).learn_many(X, y)
    df = pd.DataFrame(X, columns=[0, 1, 2, 3]).assign(new=1.0, cat="a")
    x = {**{j: 0.5 for j in range(4)}, "new": 1.0, "bad": [1.0]}  # "bad": not a number
    before = _state(fitted)
    for call in (
        lambda: fitted.predict_learn_many(df, y_bad, alpha=0.2),
        lambda: fitted.predict_learn_many(df, y, alpha=[0.1, 1.2]),
        lambda: fitted.learn_many(df.assign(new=np.inf), y),
        lambda: fitted.learn_one(x, 1.0),  # AdaptiveConformal's controllers learnt first
    ):
        with pytest.raises((ValueError, TypeError)):
            call()
        assert _state(fitted) == before
    assert fitted.feature_names_in_ == [0, 1, 2, 3]


def _bad_calls(model, X, y):
    """Calls that must be rejected, each with input that is only partly bad (a new column or
    key comes with it, so a call that records before validating is caught)."""
    n = len(y)
    df = pd.DataFrame(X, columns=range(X.shape[1])).assign(extra=2.0, cat="c")
    df_inf = df.assign(extra=np.inf)
    y_nan = y.copy()
    y_nan[-1] = np.nan
    x = {j: float(v) for j, v in enumerate(X[0])}
    x_new = {**x, "extra": 1.0, "cat": "q"}
    calls = [
        ("learn_many inf", lambda: model.learn_many(df_inf, y)),
        ("learn_many y nan", lambda: model.learn_many(df, y_nan)),
        ("learn_many w", lambda: model.learn_many(df, y, w=-np.ones(n))),
        ("learn_many short y", lambda: model.learn_many(df, y[:-1])),
        ("predict_learn_many inf", lambda: model.predict_learn_many(df_inf, y)),
        ("predict_learn_many y nan", lambda: model.predict_learn_many(df, y_nan)),
        ("learn_one w", lambda: model.learn_one(x_new, 1.0, w=-1.0)),
        ("learn_one y", lambda: model.learn_one(x_new, float("nan"))),
        ("learn_one x", lambda: model.learn_one({**x_new, "bad": [1, 2]}, 1.0)),
        ("learn_one inf", lambda: model.learn_one({**x_new, 0: np.inf}, 1.0)),
        ("predict width", lambda: model.predict(X[:, :-1])),
        ("predict 1-d", lambda: model.predict(X[0])),
        ("predict_one", lambda: model.predict_one([1.0, 2.0])),
        ("fit y nan", lambda: model.fit(X, y_nan)),
        ("fit w", lambda: model.fit(X, y, sample_weight=-np.ones(n))),
        ("partial_fit", lambda: model.partial_fit(df, y_nan)),
        ("set_params", lambda: model.set_params(seed=3, nope=1)),
        # a model that has learnt checks a new value at once (the others when learning starts)
        (
            "set_params value",
            lambda: model.set_params(
                **{"seed" if "seed" in model.get_params() else "method": "nope"}
            ),
        ),
        ("score", lambda: model.score(X, y[:-1])),
    ]
    if hasattr(model, "predict_interval"):
        calls += [
            ("predict_learn_many alpha", lambda: model.predict_learn_many(df, y, alpha=1.5)),
            ("predict_learn_many alpha list", lambda: model.predict_learn_many(df, y, [0.1, 0])),
            ("predict_interval alpha", lambda: model.predict_interval(X, alpha=0)),
            ("predict_interval width", lambda: model.predict_interval(X[:, :-1])),
            ("predict_interval_one", lambda: model.predict_interval_one(x, alpha=-1)),
            ("set_params nested", lambda: model.set_params(seed=3, forest__nope=1)),
        ]
    if hasattr(model, "predict_quantiles"):
        calls += [("predict_quantiles", lambda: model.predict_quantiles(X, q=1.5))]
    if hasattr(model, "predict_quantiles_one"):
        calls += [("predict_quantiles_one", lambda: model.predict_quantiles_one(x, q=[0.5, 2]))]
    return calls


@pytest.mark.parametrize("fitted", [False, True], ids=["fresh", "fitted"])
@pytest.mark.parametrize("name", NAMES)
def test_rejected_calls_change_nothing(name, fitted, rng):
    X, y = data(300, rng, p=4)
    model = _small(name)
    if fitted:
        model.learn_many(X, y)
    before = _state(model)
    probe = model.predict(X[:20])
    for what, call in _bad_calls(model, X[:50], y[:50]):
        if ("width" in what or "value" in what) and not fitted:
            continue  # before learning, any width is fine (and values are checked then)
        with pytest.raises((ValueError, TypeError)):
            call()
        assert _state(model) == before, f"{what} changed the model"
    np.testing.assert_array_equal(model.predict(X[:20]), probe)
    if not fitted:  # a rejected call fixes no schema: any width is still accepted
        X3, y3 = data(100, rng, p=3)
        model.learn_many(X3, y3)
        assert model.n_features_in_ == 3


@pytest.mark.parametrize("name", NAMES)
def test_predicting_before_learning_creates_no_state(name, rng):
    X, y = data(100, rng, p=4)
    model = _small(name)
    before = _state(model)
    model.predict(X[:5])
    model.predict_one({0: 1.0})
    if hasattr(model, "predict_interval"):
        model.predict_interval(X[:5], alpha=0.3)
        model.predict_interval_one({0: 1.0}, alpha=0.3)
    assert _state(model) == before
    # so a parameter set afterwards is the one learning uses
    layers = registry.get(name).layers
    if "forest" in layers:
        forest_params = registry.get(name).parameters()["forest"]
        count = "n_trees" if "n_trees" in forest_params else "n_steps"  # (SGBT: its steps)
        key, forest = {
            "forest": (count, lambda m: m),
            "method": (f"forest__{count}", lambda m: m.forest_),
            "adaptive": (f"model__forest__{count}", lambda m: m.model_.forest_),
        }[layers[0]]
        model.set_params(**{key: 2})
        model.learn_many(X, y)
        assert forest(model).engine_.n_trees == 2


# --- defect 3: a stray dict key breaks the array API ---------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_emerging_dict_features_do_not_break_arrays(name, rng):
    X, y = data(400, rng, p=5)
    model = _small(name).learn_many(X[:300], y[:300])
    model.learn_one({**{j: float(v) for j, v in enumerate(X[0])}, "z": 1.0, "s": "a"}, y[0])
    assert model.n_features_in_ == 7
    # arrays keep meaning columns 0..4; the later features are missing in them
    probe = X[300:]
    as_dicts = np.array([model.predict_one({j: float(v) for j, v in enumerate(r)}) for r in probe])
    np.testing.assert_array_equal(model.predict(probe), as_dicts)
    frame = pd.DataFrame(probe).assign(z=np.nan, s=None)
    np.testing.assert_array_equal(model.predict(probe), model.predict(frame))
    if hasattr(model, "predict_interval"):
        np.testing.assert_array_equal(
            model.predict_interval(probe, alpha=0.1), model.predict_interval(frame, alpha=0.1)
        )
    model.learn_many(X[300:350], y[300:350])  # learning from arrays goes on too
    model.predict_learn_many(X[350:], y[350:])
    for width in (4, 6, 7):
        with pytest.raises(ValueError, match="X has .* columns but the arrays this model learnt"):
            model.predict(rng.random((3, width)))
    # the rule survives saving
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(probe), model.predict(probe))


def test_arrays_after_dicts_mean_the_features_known_when_they_were_learnt(rng):
    X, y = data(300, rng, p=2)
    model = sf.OnlineForestRegressor(n_trees=3, seed=0)
    for r, t in zip(X[:100], y[:100], strict=True):
        model.learn_one({"a": r[0], "b": r[1]}, t)
    model.learn_many(X[100:200], y[100:200])  # columns: a, b
    model.learn_one({"a": 0.5, "b": 0.5, "c": 3.0}, 1.0)
    model.learn_many(X[200:], y[200:])  # still a, b
    expected = [model.predict_one({"a": r[0], "b": r[1]}) for r in X[:20]]
    np.testing.assert_array_equal(model.predict(X[:20]), expected)


def test_array_columns_missing_at_first_keep_their_position():
    # column 0 holds no value in the first batch: it is learnt later, still as column 0
    A = np.array([[None, "a", 1.0], [None, "b", 2.0]] * 50, dtype=object)
    B = np.array([[0.5, "a", 1.0], [1.5, "b", 2.0]] * 50, dtype=object)
    y = np.arange(100.0)
    model = sf.HoeffdingTreeRegressor(grace_period=20, seed=0)
    model.learn_many(A, y).learn_many(B, y)
    frame = pd.DataFrame({0: [0.5, 1.5], 1: ["a", "b"], 2: [1.0, 2.0]})
    np.testing.assert_array_equal(model.predict(B[:2]), model.predict(frame))
    assert model.feature_names_in_ == [1, 2, 0]


def test_array_rule_survives_save_and_older_files_load(tmp_path, rng):
    X, y = data(200, rng, p=3)
    model = sf.HoeffdingTreeRegressor(seed=0).learn_many(X, y)
    model.learn_one({0: 0.1, 1: 0.2, 2: 0.3, "z": 1.0}, 1.0)
    sf.save(model, tmp_path / "m.sf")
    loaded = sf.load(tmp_path / "m.sf")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # a file written before arrays had their own columns: arrays take every feature, as then
    del model.features_.array_names
    sf.save(model, tmp_path / "old.sf")
    old = sf.load(tmp_path / "old.sf")
    assert old.features_.array_names is None
    assert old.predict(np.c_[X, np.full(len(X), np.nan)]).shape == (len(X),)


# --- defects the fuzzing (tests/test_fuzz.py) found, pinned ------------------------------------
def test_a_batch_without_features_is_refused_or_kept_as_a_mean():
    y = np.array([1.0, 2.0, 3.0])
    for name in INTERVALS + ["forest"]:  # CPApproximate's pass crashed the interpreter
        model = _small(name)
        call = model.predict_learn_many if name == "forest" else model.learn_many
        with pytest.raises(ValueError, match="no feature has been seen yet"):
            call(np.zeros((3, 0)), y)
    tree = _small("tree")  # learnt nothing (IndexError); now keeps the targets' mean
    np.testing.assert_array_equal(tree.predict_learn_many(np.zeros((3, 0)), y), [0.0, 1.0, 1.5])
    tree.learn_many(pd.DataFrame(index=range(3)), y)
    assert tree.predict_one({}) == 2.0


@pytest.mark.parametrize("name", NAMES)
def test_odd_values_are_named_errors_or_missing(name, rng):
    X, y = data(100, rng, p=3)
    model = _small(name).learn_many(X, y)
    before = _state(model)
    bad = [
        (ValueError, "R² needs at least one", lambda: model.score(X[:0], y[:0])),
        (ValueError, "y must be finite", lambda: model.score(X[:3], [1.0, np.nan, 2.0])),
        (TypeError, "X must be a 2-d array", lambda: model.fit([[1.0, 2.0], [3.0]], [1, 2])),
        (
            ValueError,
            "feature 0 is too large for a float",
            lambda: model.learn_one({0: 10**400}, 1),
        ),
        (ValueError, "y must be finite", lambda: model.learn_one({0: 1.0}, 10**400)),
        (TypeError, "sample weight w must be a number", lambda: model.learn_one({0: 1.0}, 1, True)),
        (
            ValueError,
            r"duplicate column names \[0\]",
            lambda: model.predict(pd.DataFrame(X, columns=[0, 1, 0])),
        ),
    ]
    if hasattr(model, "predict_interval"):
        bad.append(
            (TypeError, "alpha must be a number", lambda: model.predict_interval(X, [0.1, [[0.2]]]))
        )
    if hasattr(model, "predict_quantiles"):
        bad.append((TypeError, "q must be a number", lambda: model.predict_quantiles(X, "0.5")))
    for error, message, call in bad:
        with pytest.raises(error, match=message):
            call()
        assert _state(model) == before
    # pandas' missing value of nullable dtypes is missing, as NaN is
    nullable = pd.DataFrame(X).astype({0: "Float64"})
    nullable.iloc[:5, 0] = pd.NA
    floats = pd.DataFrame(X)
    floats.iloc[:5, 0] = np.nan
    np.testing.assert_array_equal(model.predict(nullable), model.predict(floats))
    model.learn_many(nullable, y)
    assert model.predict_one({0: pd.NA, 1: 0.5, 2: 0.5}) == model.predict_one({1: 0.5, 2: 0.5})


def test_equal_trees_pickle_the_same(rng):
    X, y = data(200, rng)
    a, b = (sf.HoeffdingTreeRegressor(seed=0).learn_many(X, y) for _ in range(2))
    assert _state(a) == _state(b)
