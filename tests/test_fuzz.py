"""Property-based tests over both APIs of every public estimator (issue #17).

Random calls, with random shapes, dtypes, NaN/inf positions, nominal/numeric mixes, key orders,
``alpha`` and ``q`` values and lists, on fresh and fitted models.  Every call either succeeds
with well-formed output (finite predictions; intervals with lower <= upper, finite or the
documented ``(-inf, inf)`` of a level without enough data; quantiles finite or the documented
NaN before any data) or raises ``ValueError``/``TypeError`` whose message names the argument;
after an error, and after any prediction, the model is unchanged (the same pickle).

CI runs a few hundred examples per property, derandomized (the same examples every run).  A
longer, random profile: ``STREAMFOREST_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py``.
"""

from __future__ import annotations

import math
import os
import pickle
import re
from functools import cache

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streamforest import registry

EXAMPLES = int(os.environ.get("STREAMFOREST_FUZZ_EXAMPLES", "0"))


def fuzz(n: int):
    return settings(
        max_examples=EXAMPLES or n,
        deadline=None,
        derandomize=not EXAMPLES,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


NAMES = registry.names(task="regression")
P = 3  # width of the arrays the fitted models learnt
NAN, INF = float("nan"), float("inf")
# an error message must name what was wrong: the argument, or the feature of x / X
NAMED = re.compile(
    r"\b(X|y|w|x|alpha|q|sample[ _]weights?|feature|columns?|target)\b|calibrat", re.I
)


def _build(name):
    spec = registry.get(name)
    params = {}
    if "forest" in spec.layers:  # (an SGBT forest's members are its boosting steps)
        params["n_trees" if "n_trees" in spec.parameters()["forest"] else "n_steps"] = 3
    if "n_members" in spec.param_names():  # the ATSER ensembles
        params["n_members"] = 3
    if name in ("cp-approx", "cp-exact", "conformal-qrf"):
        params["calibration_size"] = 30
    if name in ("qrf", "qrf-hdi", "conformal-qrf"):
        params["k"] = 16
    if "grace_period" in spec.param_names():
        params["grace_period"] = 20
    if "n_trees" in spec.param_names() and "forest" not in spec.layers:  # ABORF, AMF
        params["n_trees"] = 3
    if "depth" in spec.param_names():  # ABORF
        params["depth"] = 4
    return registry.build(name, params, seed=0)


@cache
def _base(name: str, state: str) -> bytes:
    """Pickle of a model: fresh, fitted on arrays, or fitted on dicts and a DataFrame with a
    nominal column."""
    m = _build(name)
    rng = np.random.default_rng(7)
    X = rng.random((150, P))
    y = 5 * X[:, 0] + np.sin(4 * X[:, 1]) + 0.1 * rng.standard_normal(150)
    if state == "arrays":
        m.learn_many(X, y)
    elif state == "named":
        for r, t in zip(X[:60], y[:60], strict=True):
            m.learn_one({"a": float(r[0]), "b": float(r[1]), "s": "uv"[int(r[2] > 0.5)]}, t)
        df = pd.DataFrame(
            {"a": X[60:, 0], "b": X[60:, 1], "s": np.where(X[60:, 2] > 0.5, "u", "v")}
        )
        m.learn_many(df, y[60:])
    return pickle.dumps(m)


# --- values -------------------------------------------------------------------------------------
moderate = st.floats(-1e6, 1e6, allow_nan=False)
special = st.sampled_from([NAN, INF, -INF, 0.0, -0.0, 1e-300])
number = st.one_of(
    moderate, moderate, moderate, special, st.integers(-(10**6), 10**6), st.booleans()
)
text = st.sampled_from(["u", "v", "w", "", "3"])
odd = st.sampled_from(
    [None, pd.NA, b"u", [1.0], {"a": 1}, np.float32(2.5), np.int64(3), 1 + 2j, 10**400]
)
cell = st.one_of(number, number, number, text, odd)
KEYS = [0, 1, 2, 3, "a", "b", "s", "z"]


@st.composite
def batches(draw):
    """``X``: mostly well-shaped (sometimes not) numeric, object, text or DataFrame batches."""
    n = draw(st.integers(0, 5))
    p = draw(st.one_of(st.just(P), st.integers(0, 5)))
    kind = draw(
        st.sampled_from(
            [
                "float",
                "float",
                "float32",
                "int",
                "bool",
                "object",
                "str",
                "frame",
                "frame",
                "list",
                "odd",
            ]
        )  # fmt: skip
    )
    if kind == "odd":
        return draw(
            st.sampled_from(
                [
                    None,
                    3.0,
                    "abc",
                    {"a": [1.0]},
                    np.zeros(3),
                    np.zeros((2, 2, 2)),
                    [[1.0, 2.0], [3.0]],
                    np.zeros((2, 3), complex),
                ]
            )  # fmt: skip
        )
    seed = draw(st.integers(0, 2**32 - 1))
    A = np.random.default_rng(seed).random((n, p))
    if kind in ("float", "float32", "frame", "list"):
        for _ in range(draw(st.integers(0, 3))):  # NaN / inf at random positions
            if n and p:
                A[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = draw(special)
    if kind == "float32":
        return A.astype(np.float32)
    if kind == "int":
        return (A * 10).astype(np.int64)
    if kind == "bool":
        return A > 0.5
    if kind == "str":
        return np.where(A > 0.5, "u", "v")
    if kind == "list":
        return A.tolist()
    if kind == "object":
        O = A.astype(object)
        for _ in range(draw(st.integers(0, 4))):
            if n and p:
                O[draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))] = draw(cell)
        return O
    names = draw(st.lists(st.sampled_from(KEYS), min_size=p, max_size=p, unique=True))
    if p > 1 and draw(st.integers(0, 9)) == 0:
        names[-1] = names[0]  # duplicate column names
    df = pd.DataFrame(A, columns=names)
    if p and len(set(names)) == p and draw(st.booleans()):  # a nominal, mixed or nullable column
        c = names[draw(st.integers(0, p - 1))]
        how = draw(st.sampled_from(["mixed", "Int64", "boolean", "category"]))
        if how == "mixed":
            df[c] = draw(st.lists(st.one_of(text, number, st.none()), min_size=n, max_size=n))
        else:
            vals = draw(st.lists(st.one_of(st.integers(0, 3), st.none()), min_size=n, max_size=n))
            df[c] = pd.array(
                [v if v is None or how != "boolean" else bool(v % 2) for v in vals],
                dtype="Int64" if how != "boolean" else "boolean",
            )
            if how == "category":
                df[c] = df[c].astype("category")
    return df


def rows_of(X) -> int:
    try:
        return len(X)
    except TypeError:
        return 1


@st.composite
def targets(draw, n):
    kind = draw(st.sampled_from(["ok", "ok", "ok", "special", "length", "odd"]))
    y = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=n)
    if kind == "special" and n:
        y[draw(st.integers(0, n - 1))] = draw(special)
    if kind == "length":
        y = y[: draw(st.integers(0, max(0, n - 1)))] if n else np.ones(2)
    if kind == "odd":
        return draw(st.sampled_from([None, "1.0", ["1.0"] * n, y.reshape(-1, 1), y.astype(str)]))
    return y if draw(st.booleans()) else y.tolist()


@st.composite
def weights(draw, n):
    kind = draw(st.sampled_from(["none", "none", "scalar", "array", "odd"]))
    if kind == "none":
        return None
    if kind == "scalar":
        return draw(st.one_of(st.floats(0, 5), special, st.just(-1.0), st.integers(0, 3)))
    if kind == "array":
        w = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).random(n) * 2
        if n and draw(st.booleans()):
            w[draw(st.integers(0, n - 1))] = draw(st.sampled_from([NAN, INF, -1.0, 0.0]))
        return w
    return draw(st.sampled_from(["2", b"2", True, [1.0, "a"], np.ones(n + 1), [[1.0]]]))


level = st.one_of(st.floats(0.01, 0.99), st.sampled_from([0.05, 0.1, 0.3]))
bad_level = st.sampled_from([0.0, 1.0, -0.1, 1.5, NAN, INF, "0.1", True, None, b"x", [[0.1]]])
alphas = st.one_of(level, level, st.lists(level, min_size=1, max_size=3), bad_level,
                   st.just([]), st.lists(st.one_of(level, bad_level), max_size=3))  # fmt: skip
quantiles = st.one_of(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=1, max_size=3),
                      bad_level, st.just([]))  # fmt: skip


@st.composite
def examples(draw):
    """``x``: a dict with keys in random order (sometimes not a dict)."""
    if draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from([None, [1.0, 2.0], "a", np.ones(3), 1.0]))
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=6))
    vals = [draw(st.one_of(moderate, moderate, cell)) for _ in keys]
    return dict(zip(keys, vals, strict=True))


# --- checks -------------------------------------------------------------------------------------
def _points(p, n=None):
    p = np.asarray(p, dtype=float)
    if n is not None:
        assert p.shape == (n,), p.shape
    assert np.isfinite(p).all(), p


def _intervals(iv):
    iv = np.asarray(iv, dtype=float)
    assert iv.shape[-1] == 2 and not np.isnan(iv).any(), iv
    lo, hi = iv[..., 0], iv[..., 1]
    assert np.all(lo <= hi), iv
    both = np.isfinite(lo) & np.isfinite(hi)
    none = (lo == -INF) & (hi == INF)
    assert np.all(both | none), iv  # finite, or the documented "not enough data" interval


def _quantiles(Q, q):
    """Quantiles: a row is NaN throughout (before any data) or has none, and grows with q
    (-inf/inf allowed: a spread not known yet)."""
    Q = np.asarray(Q, dtype=float).reshape(-1, np.size(q))
    nan = np.isnan(Q)
    assert np.all(nan.all(axis=1) | ~nan.any(axis=1)), Q
    order = np.argsort(np.ravel(q), kind="stable")
    ok = Q[~nan.any(axis=1)][:, order]
    assert np.all(ok[:, 1:] >= ok[:, :-1]), (q, Q)


def _level_shape(alpha):
    return () if isinstance(alpha, (int, float)) else (len(alpha),)


def _run(model, call, args):
    """Run one call and check its output; returns whether it may have changed the model."""
    if call in ("learn_many", "partial_fit", "fit"):
        assert getattr(model, call)(*args) is model
        return True
    if call == "learn_one":
        assert model.learn_one(*args) is None
        return True
    if call == "predict_learn_many":
        out = model.predict_learn_many(*args)
        if isinstance(out, tuple):
            _points(out[0], rows_of(args[0]))
            _intervals(out[1])
        else:
            _points(out, rows_of(args[0]))
        return True
    if call == "predict":
        _points(model.predict(*args))
    elif call == "predict_one":
        _points([model.predict_one(*args)])
    elif call == "predict_interval":
        iv = model.predict_interval(*args)
        assert iv.shape[1:] == (*_level_shape(args[1]), 2), iv.shape
        _intervals(iv)
    elif call == "predict_interval_one":
        _intervals(model.predict_interval_one(*args))
    elif call in ("predict_quantiles", "predict_quantiles_one"):
        _quantiles(getattr(model, call)(*args), args[1])
    elif call == "score":
        assert math.isfinite(model.score(*args))
    return False


CALLS = ["learn_many", "predict_learn_many", "predict", "fit", "partial_fit", "score",
         "learn_one", "predict_one"]  # fmt: skip
INTERVAL_CALLS = ["predict_interval", "predict_interval_one"]
QUANTILE_CALLS = ["predict_quantiles", "predict_quantiles_one"]


@st.composite
def scenarios(draw):
    name = draw(st.sampled_from(NAMES))
    state = draw(st.sampled_from(["fresh", "arrays", "named"]))
    model = pickle.loads(_base(name, state))
    calls = CALLS + (INTERVAL_CALLS if hasattr(model, "predict_interval") else [])
    calls += [c for c in QUANTILE_CALLS if hasattr(model, c)]
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        call = draw(st.sampled_from(calls))
        if call.endswith("_one"):
            x = draw(examples())
            if call == "learn_one":
                args = (x, draw(st.one_of(moderate, moderate, special, cell)))
                if draw(st.booleans()):
                    args += (draw(weights(1)) if draw(st.booleans()) else draw(cell),)
            elif call == "predict_interval_one":
                args = (x, draw(alphas))
            elif call == "predict_quantiles_one":
                args = (x, draw(quantiles))
            else:
                args = (x,)
        else:
            X = draw(batches())
            n = rows_of(X)
            if call in ("predict", "predict_interval", "predict_quantiles"):
                args = (X,)
                if call == "predict_interval":
                    args += (draw(alphas),)
                elif call == "predict_quantiles":
                    args += (draw(quantiles),)
            else:
                args = (X, draw(targets(n)))
                if call == "predict_learn_many" and hasattr(model, "predict_interval"):
                    args += (draw(alphas),)
                if draw(st.booleans()):
                    args += (draw(weights(n)),)
        steps.append((call, args))
    return name, state, model, steps


@fuzz(400)
@given(scenarios())
def test_every_call_succeeds_well_formed_or_fails_cleanly_and_changes_nothing(scenario):
    _check_steps(scenario, _run)


def _check_steps(scenario, run):
    """Each step's call (``run(model, call, args)`` checks its output and says whether it may
    have changed the model) succeeds, or raises ``ValueError``/``TypeError`` naming the
    argument and leaves the model as it was; a prediction never changes it."""
    name, state, model, steps = scenario
    for call, args in steps:
        before = pickle.dumps(model)
        try:
            learnt = run(model, call, args)
        except (ValueError, TypeError) as e:
            event(f"{call}: {type(e).__name__}")
            assert NAMED.search(str(e)), f"{call}: the message does not name the argument: {e}"
            assert pickle.dumps(model) == before, f"rejected {call} changed the model"
            continue
        event(f"{call}: ok")
        if not learnt:
            assert pickle.dumps(model) == before, f"{call} changed the model"


# --- key order ----------------------------------------------------------------------------------
dict_rows = st.lists(
    st.dictionaries(
        st.sampled_from(KEYS),
        st.one_of(moderate, moderate, moderate, st.sampled_from(["u", "v", None, NAN])),
        max_size=5,
    ),
    min_size=1,
    max_size=30,
)


@fuzz(200)
@given(st.sampled_from(NAMES), dict_rows, st.randoms(use_true_random=False))
def test_dict_key_order_does_not_matter(name, rows, random):
    """The same examples with their keys in another order give the same model (bit for bit),
    or the same error."""
    a, b = _build(name), _build(name)
    for i, x in enumerate(rows):
        items = list(x.items())
        random.shuffle(items)
        y = float(i % 7)
        outcomes = []
        for m, d in ((a, x), (b, dict(items))):
            try:
                m.learn_one(d, y)
                outcomes.append(None)
            except (ValueError, TypeError) as e:
                outcomes.append(type(e))  # which bad key is named first may differ
        assert outcomes[0] == outcomes[1]
    assert pickle.dumps(a) == pickle.dumps(b)
    probe = rows[0]
    assert a.predict_one(probe) == b.predict_one(dict(reversed(list(probe.items()))))


# --- classifiers and their prediction sets ------------------------------------------------------
CLASS_NAMES = registry.names(task="classification")
LABELS = [0, 1, 2, "a", "b", True, (1, "x"), 2.5]  # hashable labels of mixed types


def _build_classifier(name):
    spec = registry.get(name)
    params = {"grace_period": 20} if "grace_period" in spec.param_names() else {}
    if "n_members" in spec.param_names():
        params["n_members"] = 3
    if "calibration_size" in spec.param_names():
        params["calibration_size"] = 30
    return registry.build(name, params, seed=0)


@cache
def _class_base(name: str, state: str) -> bytes:
    """Pickle of a classifier: fresh, fitted on arrays (int labels), or on dicts and a DataFrame
    with a nominal column (string labels, a third class first seen late)."""
    m = _build_classifier(name)
    rng = np.random.default_rng(7)
    X = rng.random((150, P))
    if state == "arrays":
        m.learn_many(X, (X[:, 0] > 0.5).astype(int))
    elif state == "named":
        lab = np.where(X[:, 0] > 0.5, "hi", "lo").astype(object)
        lab[120:][X[120:, 1] > 0.7] = "top"
        for r, t in zip(X[:60], lab[:60], strict=True):
            m.learn_one({"a": float(r[0]), "b": float(r[1]), "s": "uv"[int(r[2] > 0.5)]}, t)
        df = pd.DataFrame(
            {"a": X[60:, 0], "b": X[60:, 1], "s": np.where(X[60:, 2] > 0.5, "u", "v")}
        )
        m.learn_many(df, lab[60:])
    return pickle.dumps(m)


@st.composite
def labels(draw, n):
    kind = draw(st.sampled_from(["ok", "ok", "ok", "bad", "length", "odd"]))
    y = [draw(st.sampled_from(LABELS)) for _ in range(n)]
    if kind == "bad" and n:
        y[draw(st.integers(0, n - 1))] = draw(st.sampled_from([None, NAN, [1], {"a": 1}]))
    if kind == "length":
        y = y[: draw(st.integers(0, max(0, n - 1)))] if n else [0, 1]
    if kind == "odd":
        return draw(st.sampled_from([None, "ab", np.zeros((n, 2)), 3]))
    return np.array(y, dtype=object) if draw(st.booleans()) else y


def _classes(model) -> list:
    return list(getattr(model, "classes_", []))  # absent before any learning (scikit-learn)


def _known(model, labels_out, none_ok=False):
    classes = _classes(model)
    for v in labels_out:
        known = any(v == c and type(v) is type(c) or v is c for c in classes)
        assert known or (v is None and (none_ok or not classes)), (v, classes)


def _proba(P, model, n=None, before_any=False):
    """Probabilities over ``classes_``, each row summing to 1 (or to 0 for a row predicted
    before any class was known, ``before_any``: ``predict_learn_many``)."""
    P = np.asarray(P, dtype=float)
    K = len(_classes(model))
    if n is not None:
        assert P.shape == (n, K), (P.shape, n, K)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1 + 1e-12).all(), P
    if K:
        s = P.sum(axis=-1)
        ok = np.abs(s - 1.0) <= 1e-9
        if before_any:  # zeros only up to the first row after which a class was known
            ok |= (s == 0.0) & (np.cumsum(~ok) == np.arange(1, s.size + 1))
        assert ok.all(), s


def _sets(S, model, n, alpha):
    S = np.asarray(S)
    assert S.dtype == bool and S.shape == (n, *_level_shape(alpha), len(_classes(model))), S.shape
    if S.ndim == 3 and S.shape[1] > 1:  # nested: a smaller alpha's set holds a larger one's
        order = np.argsort(alpha)
        for a, b in zip(order[:-1], order[1:], strict=True):
            assert np.all(S[:, a] >= S[:, b]) or alpha[a] == alpha[b]


def _run_classifier(model, call, args):
    """Run one call and check its output; returns whether it may have changed the model."""
    if call in ("learn_many", "partial_fit", "fit"):
        assert getattr(model, call)(*args) is model
        return True
    if call == "learn_one":
        assert model.learn_one(*args) is None
        return True
    n = rows_of(args[0])
    if call == "predict_learn_many":
        lab, P, S = model.predict_learn_many(*args)
        _known(model, lab, none_ok=True)  # a row before any class was known: None
        _proba(P, model, n, before_any=True)
        _sets(S, model, n, args[2])
        return True
    if call == "predict":
        out = model.predict(*args)
        assert out.shape == (n,)
        _known(model, out.tolist())
    elif call == "predict_one":
        _known(model, [model.predict_one(*args)])
    elif call == "predict_proba":
        _proba(model.predict_proba(*args), model, n)
    elif call == "predict_proba_one":
        d = model.predict_proba_one(*args)
        _known(model, list(d))
        if d:
            assert len(d) == len(_classes(model))
            _proba([list(d.values())], model)
    elif call == "predict_sets":
        _sets(model.predict_sets(*args), model, n, args[1])
    elif call == "predict_set_one":
        out = model.predict_set_one(*args)
        for one in out if _level_shape(args[1]) else [out]:  # a set per level of a list
            _known(model, one)
    elif call == "score":
        s = model.score(*args)
        assert 0.0 <= s <= 1.0
    return False


@st.composite
def class_scenarios(draw):
    name = draw(st.sampled_from(CLASS_NAMES))
    state = draw(st.sampled_from(["fresh", "arrays", "named"]))
    model = pickle.loads(_class_base(name, state))
    sets = hasattr(model, "predict_sets")
    calls = ["learn_many", "predict", "predict_proba", "fit", "partial_fit", "score",
             "learn_one", "predict_one", "predict_proba_one"]  # fmt: skip
    calls += ["predict_sets", "predict_set_one", "predict_learn_many"] if sets else []
    steps = []
    for _ in range(draw(st.integers(1, 3))):
        call = draw(st.sampled_from(calls))
        if call.endswith("_one"):
            x = draw(examples())
            if call == "learn_one":
                args = (x, draw(st.one_of(st.sampled_from(LABELS), cell)))
                if draw(st.booleans()):
                    args += (draw(weights(1)) if draw(st.booleans()) else draw(cell),)
            elif call == "predict_set_one":
                args = (x, draw(alphas))
            else:
                args = (x,)
        else:
            X = draw(batches())
            n = rows_of(X)
            if call in ("predict", "predict_proba", "predict_sets"):
                args = (X,) + ((draw(alphas),) if call == "predict_sets" else ())
            else:
                args = (X, draw(labels(n)))
                if call == "predict_learn_many":
                    args += (draw(alphas),)
                if draw(st.booleans()):
                    args += (draw(weights(n)),)
        steps.append((call, args))
    return name, state, model, steps


@fuzz(300)
@given(class_scenarios())
def test_every_classifier_call_succeeds_well_formed_or_fails_cleanly(scenario):
    """As the regressors' property: labels from ``classes_`` (``None`` before any class),
    probabilities in [0, 1] summing to 1 over ``classes_``, sets of the right shape and nested,
    or a ``ValueError``/``TypeError`` naming the argument with the model unchanged."""
    _check_steps(scenario, _run_classifier)


@fuzz(100)
@given(st.sampled_from(CLASS_NAMES), dict_rows, st.randoms(use_true_random=False))
def test_classifier_dict_key_order_does_not_matter(name, rows, random):
    """The regressors' key-order property for the classifiers and their sets."""
    a, b = _build_classifier(name), _build_classifier(name)
    for i, x in enumerate(rows):
        items = list(x.items())
        random.shuffle(items)
        outcomes = []
        for m, d in ((a, x), (b, dict(items))):
            try:
                m.learn_one(d, LABELS[i % 3])
                outcomes.append(None)
            except (ValueError, TypeError) as e:
                outcomes.append(type(e))
        assert outcomes[0] == outcomes[1]
    assert pickle.dumps(a) == pickle.dumps(b)
    probe = rows[0]
    reordered = dict(reversed(list(probe.items())))
    assert a.predict_proba_one(probe) == b.predict_proba_one(reordered)
