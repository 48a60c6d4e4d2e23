"""The classifiers' two APIs: labels, probabilities, new classes, bad input, equivalence of the
per-example and chunk paths, persistence, scikit-learn and River conventions."""

from __future__ import annotations

import copy
import io
import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import streams
from streamforest.tree_kinds import state as TS

MAKERS = {
    "bin_hash": lambda: sf.HoeffdingTreeClassifier(grace_period=40, seed=3),
    "actser": lambda: sf.ACTSERClassifier(grace_period=40, alt_period=40, ph_threshold=5.0, seed=3),
    "seeds": lambda: sf.ACTSEREnsembleClassifier(mode="seeds", n_members=4, seed=3),
    "rforest": lambda: sf.ACTSEREnsembleClassifier(mode="rforest", n_members=4, seed=3),
}


def mixed_rows(n: int, seed: int):
    """Numeric and nominal features, a concept that changes at mid-stream, string labels."""
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n)
    col = rng.choice(np.array(["red", "green", "blue", "grey"], dtype=object), n)
    y = np.where((a > 0.4) ^ (col == "red"), "yes", "no").astype(object)
    y[n // 2 :] = np.where(b[n // 2 :] > 0.5, "yes", "no")
    y[rng.random(n) < 0.05] = "maybe"
    a[rng.random(n) < 0.05] = np.nan
    X = np.empty((n, 3), dtype=object)
    X[:, 0], X[:, 1], X[:, 2] = a, b, col
    return X, y


def dicts(X):
    """Rows as dicts (a NaN value is a missing one, as in the DataFrame)."""
    return [dict(zip(("a", "b", "col"), r, strict=True)) for r in X.tolist()]


X_TRAIN, Y_TRAIN = mixed_rows(3000, 1)
X_TEST, _ = mixed_rows(400, 2)


@pytest.fixture(scope="module")
def learnt():
    out = {}
    for name, make in MAKERS.items():
        m = make()
        for x, y in zip(dicts(X_TRAIN), Y_TRAIN, strict=True):
            m.learn_one(x, y)
        out[name] = m
    return out


@pytest.mark.parametrize("name", list(MAKERS))
def test_per_example_and_chunks_give_the_same_model(name, learnt):
    """learn_one row by row and learn_many in uneven chunks reach the same trees."""
    m = MAKERS[name]()
    cols = ["a", "b", "col"]
    import pandas as pd

    df = pd.DataFrame(X_TRAIN, columns=cols)
    df["a"] = df["a"].astype(float)
    df["b"] = df["b"].astype(float)
    for s in range(0, len(Y_TRAIN), 337):
        m.learn_many(df.iloc[s : s + 337], Y_TRAIN[s : s + 337])
    one = learnt[name]
    test = pd.DataFrame(X_TEST, columns=cols).astype({"a": float, "b": float})
    assert m.classes_ == one.classes_
    assert np.array_equal(m.predict_proba(test), one.predict_proba(test))
    assert m.predict(test).tolist() == one.predict(test).tolist()
    for t in range(m.engine_.n_trees):  # the same trees (their arena rows may be laid out apart)
        a, b = m.engine_.state(t), one.engine_.state(t)
        hw = a.ints[TS.I_LEAF_HW]
        assert np.array_equal(a.ints, b.ints)
        for f in (
            "lf_class_weights",
            "lf_class_stats",
            "lf_nominal_class_weights",
            "lf_stat",
            "lf_err",
        ):
            assert np.array_equal(getattr(a, f)[:hw], getattr(b, f)[:hw]), f
        assert np.array_equal(a.nd_thr, b.nd_thr, equal_nan=True)


@pytest.mark.parametrize("name", list(MAKERS))
def test_probabilities_follow_classes(name, learnt):
    m = learnt[name]
    firsts = list(dict.fromkeys(Y_TRAIN.tolist()))  # labels in order of first appearance
    assert m.classes_ == firsts and sorted(firsts) == ["maybe", "no", "yes"]
    import pandas as pd

    test = pd.DataFrame(X_TEST, columns=["a", "b", "col"]).astype({"a": float, "b": float})
    P = m.predict_proba(test)
    assert P.shape == (len(X_TEST), 3)
    assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0)
    for i, x in enumerate(dicts(X_TEST)[:50]):
        d = m.predict_proba_one(x)
        assert list(d) == m.classes_
        assert np.allclose([d[c] for c in m.classes_], P[i], rtol=0, atol=1e-12)
        assert m.predict_one(x) == m.predict(test.iloc[[i]])[0]
    if name in ("bin_hash", "actser"):  # one tree: the label of largest probability
        assert m.predict(test).tolist() == [m.classes_[k] for k in P.argmax(axis=1)]


def test_a_new_class_mid_stream_is_learnt():
    """A class that first appears after 2000 examples gets a column and is predicted where it
    lives."""
    rng = np.random.default_rng(5)
    for make in (MAKERS["bin_hash"], MAKERS["actser"], MAKERS["rforest"]):
        m = make()
        for i in range(6000):
            x = {"u": rng.random(), "v": rng.random()}
            if i < 2000:
                y = int(x["u"] > 0.5)
            else:
                y = 2 if x["v"] > 0.7 else int(x["u"] > 0.5)
            m.learn_one(x, y)
        assert sorted(m.classes_[:2]) == [0, 1] and m.classes_[2] == 2
        grid = rng.random((500, 2))
        truth = np.where(grid[:, 1] > 0.7, 2, (grid[:, 0] > 0.5).astype(int))
        pred = m.predict(grid)
        assert pred.dtype.kind == "i"
        assert np.mean(pred == truth) > 0.85
        assert np.mean(pred[truth == 2] == 2) > 0.8
        assert m.predict_proba(grid).shape == (500, 3)


@pytest.mark.parametrize("label", [True, 7, "x", (1, "a"), 2.5])
def test_labels_of_any_hashable_type(label):
    m = sf.HoeffdingTreeClassifier(grace_period=20)
    other = "other"
    for i in range(400):
        m.learn_one({"a": float(i % 2)}, label if i % 2 else other)
    assert m.predict_one({"a": 1.0}) == label
    assert m.predict_one({"a": 0.0}) == other
    assert set(m.predict_proba_one({"a": 1.0})) == {label, other}


def test_before_learning():
    for make in MAKERS.values():
        m = make()
        assert m.predict_one({"a": 1.0}) is None
        assert m.predict_proba_one({"a": 1.0}) == {}
        assert "engine_" not in m.__dict__  # predicting keeps no state


@pytest.mark.parametrize("name", list(MAKERS))
def test_bad_input_leaves_the_model_unchanged(name, learnt):
    m = copy.deepcopy(learnt[name])
    before = pickle.dumps(m)
    bad = [
        (({"a": 0.5}, None), ValueError),
        (({"a": 0.5}, float("nan")), ValueError),
        (({"a": 0.5}, ["list"]), TypeError),
        (({"a": math.inf}, "yes"), ValueError),
        (({"a": "text"}, "yes"), TypeError),  # a string for a numeric feature
        ((["not a dict"], "yes"), TypeError),
        (({"a": 0.5}, "yes", -1.0), ValueError),  # negative weight
    ]
    for args, err in bad:
        with pytest.raises(err):
            m.learn_one(*args)
        assert pickle.dumps(m) == before, args
    for X, y, err in [
        (np.zeros((3, 3)), ["a", "b"], ValueError),  # wrong length
        (np.zeros((3, 3)), ["a", None, "b"], ValueError),
        (np.zeros((3, 5)), ["a", "b", "c"], ValueError),  # wrong width
        (np.array([[0.1, np.inf, "red"]], dtype=object), ["yes"], ValueError),
    ]:
        with pytest.raises(err):
            m.learn_many(X, y)
        assert pickle.dumps(m) == before
    fresh = MAKERS[name]()
    with pytest.raises(ValueError):
        fresh.learn_one({}, "a")  # no feature at all
    with pytest.raises(ValueError):
        fresh.learn_one({"a": 1.0}, None)
    assert "engine_" not in fresh.__dict__


@pytest.mark.parametrize("name", list(MAKERS))
def test_pickle_deepcopy_and_save_load_predict_identically(name, learnt):
    m = learnt[name]
    X = np.array([r for r in X_TEST.tolist()], dtype=object)
    want = m.predict_proba(X)
    buf = io.BytesIO()
    sf.save(m, buf)
    buf.seek(0)
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), sf.load(buf)):
        assert np.array_equal(other.predict_proba(X), want)
        assert other.predict(X).tolist() == m.predict(X).tolist()
        x = dicts(X_TEST)[0]
        assert other.predict_proba_one(x) == m.predict_proba_one(x)


def test_sklearn_api():
    X, y = streams.SEA(function=1, noise=0.0, seed=2).arrays(3000)
    m = sf.ACTSERClassifier(grace_period=50, seed=1)
    assert m.fit(X[:2000], y[:2000]) is m
    acc = m.score(X[2000:], y[2000:])
    assert acc > 0.9
    assert acc == pytest.approx(np.mean(m.predict(X[2000:]) == y[2000:]))
    params = m.get_params()
    assert params["grace_period"] == 50 and params["m_min"] == 10
    m2 = sf.ACTSERClassifier().set_params(**params)
    m2.partial_fit(X[:1000], y[:1000]).partial_fit(X[1000:2000], y[1000:2000])
    assert np.array_equal(m2.predict_proba(X[2000:]), m.predict_proba(X[2000:]))
    with pytest.raises(ValueError):
        sf.ACTSERClassifier(m_min=0).learn_one({"a": 1.0}, 1)
    with pytest.raises(ValueError):
        sf.ACTSEREnsembleClassifier(mode="bag").learn_one({"a": 1.0}, 1)
    with pytest.raises(ValueError):
        sf.HoeffdingTreeClassifier(leaf_prediction="mean").learn_one({"a": 1.0}, 1)


def test_progressive_val_score_in_river():
    """River's evaluation with River's metrics gives what our own prequential loop gives."""
    pytest.importorskip("river")
    from river import evaluate, metrics

    from streamforest.river import RiverClassifier

    data = list(streams.Agrawal(function=1, seed=4).take(1500))
    makers = (
        lambda: sf.ACTSERClassifier(seed=1),
        lambda: sf.ACTSEREnsembleClassifier(n_members=5, seed=1),
    )
    majority = max(np.mean([y for _, y in data]), 1 - np.mean([y for _, y in data]))
    for make in makers:
        acc, ll = metrics.Accuracy(), metrics.LogLoss()
        evaluate.progressive_val_score(data, RiverClassifier(make()), acc)
        evaluate.progressive_val_score(data, RiverClassifier(make()), ll)
        m = make()
        hits = 0
        for x, y in data:
            hits += m.predict_one(x) == y  # None before learning: River skips that row
            m.learn_one(x, y)
        assert acc.get() == pytest.approx(hits / (len(data) - 1))
        assert acc.get() > majority + 0.05
        assert 0 < ll.get() < math.log(2)  # better than a coin's log loss


@pytest.mark.parametrize(
    "labels",
    [
        np.array([3, 1, 3, 2, 1, 7]),
        np.array([2.5, -0.0, 0.0, 2.5, 1.0, -1.0]),
        np.array(["b", "a", "b", "c", "a", "d"]),
        np.array([True, False, False, True, True, False]),
    ],
)
def test_label_arrays_register_classes_as_label_lists(labels):
    """learn_many with a numpy array of labels (indexed per distinct label) registers the classes
    in order of first appearance, with the first occurrence's value, as with a list."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(labels.shape[0] * 50, 2))
    y = np.tile(labels, 50)
    a = sf.ACTSEREnsembleClassifier(n_members=3, seed=1).learn_many(X, y)
    b = sf.ACTSEREnsembleClassifier(n_members=3, seed=1).learn_many(X, y.tolist())
    assert a.classes_ == b.classes_ == list(dict.fromkeys(labels.tolist()))
    assert [type(c) for c in a.classes_] == [type(c) for c in b.classes_]
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    # an int label equal to a known bool/float class is that class (as a dict lookup)
    before = list(a.classes_)
    a.learn_many(X[:3], np.array([labels[0]] * 3))
    assert a.classes_ == before


def test_pandas_missing_labels_are_missing_labels():
    """pd.NA and pd.NaT are hashable but no class: refused like None and NaN, nothing learnt."""
    pd = pytest.importorskip("pandas")
    m = sf.ACTSERClassifier(grace_period=20, seed=0)
    for missing in (pd.NA, pd.NaT):
        with pytest.raises(ValueError, match="y must be a class label.*missing label"):
            m.learn_one({0: 0.0}, missing)
        with pytest.raises(ValueError, match="missing label"):
            m.learn_many(np.zeros((2, 1)), pd.array([1, None], dtype="Int64"))
    m.learn_one({0: 0.0}, "a")  # the refused calls left nothing behind
    assert m.classes_ == ["a"]


def test_a_missing_label_in_an_array_registers_nothing():
    m = sf.ACTSEREnsembleClassifier(n_members=2, seed=1)
    m.learn_many(np.zeros((2, 1)), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="missing label"):
        m.learn_many(np.zeros((3, 1)), np.array([5.0, np.nan, 6.0]))
    assert m.classes_ == [1.0, 2.0]
    with pytest.raises(ValueError, match="labels for 3 rows"):
        m.learn_many(np.zeros((3, 1)), np.array([1, 2]))
