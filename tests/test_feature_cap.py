"""The feature cap: a model under a memory budget takes new feature names only while its trees,
widened, stay in their shares (issue #48: a 10k-key dict asked SGBT for 27 GiB, a new name on
every row grew a forest without bound and ever slower).

Each test fails on the code before the cap: the models there took every name, and their
``memory_bytes`` passed the budget (or a ``MemoryError`` broke them for good).
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import streamforest as sf
from streamforest import FeatureCapWarning
from streamforest.engine import budget

from .conftest import trees_bytes


def _fs(model):
    """The feature space of a model or of the forest inside it."""
    inner = model
    while "features_" not in inner.__dict__:
        inner = inner.forest_ if hasattr(inner, "forest_") else inner.model_
    return inner.features_


def _new_name_rows(n, start=0, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(start, start + n):
        a = float(rng.random())
        yield {"a": a, "b": float(rng.random()), f"f{i}": float(rng.random())}, 3 * a


def _learn_quietly(model, rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FeatureCapWarning)
        for x, y in rows:
            model.learn_one(x, y)


# --- the room: what the trees hold, the budget's caps ---------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"sketch_k": 200}, {"m_min": 10, "alternates": True},
                                {"n_classes": 3, "ranges": True}])  # fmt: skip
def test_units_are_linear_in_the_features(kw):
    """units_at extrapolates the units from 1 and 2 features: equal to the layout's own
    (measured_units allocates tiny trees of that many features), as unit_bytes gives them."""
    one, two = budget.measured_units(1, **kw), budget.measured_units(2, **kw)
    for p in (3, 17, 250, 3000):
        assert budget.units_at(one, two, p) == budget.measured_units(p, **kw)
        assert budget.unit_bytes(p, **kw) == budget.measured_units(p, **kw)


def test_the_room_is_the_most_features_that_fit():
    """feature_room against a direct search: at the room the tree fits its share (what it holds,
    or its caps, whichever is more, laid out at that width), one feature more does not."""
    rng = np.random.default_rng(3)
    kw = {"sketch_k": 200}
    one, two = budget.unit_bytes(1, **kw), budget.unit_bytes(2, **kw)

    def caps_of(u, share):
        return budget.tree_caps(share, u, True, sketch=True)

    def total(q, held, share):
        u = budget.unit_bytes(q, **kw)
        leaves, bins = caps_of(u, share)
        if leaves < budget.FEATURE_LEAVES and q > budget.FEW_FEATURES:
            return np.inf
        if held[0] <= leaves + 1 and held[1] <= 2 * (leaves + 1) and held[2] <= bins:
            return 0.0  # within its caps: the caps keep it in its share
        slots, nodes = max(held[0], leaves + 1), max(held[1], 2 * (leaves + 1))
        return (u.fixed + (slots - 1) * u.leaf + (nodes - 1) * u.node
                + budget.bins_bytes(max(held[2], bins), u) - budget.bins_bytes(1, u))  # fmt: skip

    for _ in range(25):
        share = float(rng.uniform(0.2, 8) * 2**20)
        held = (int(rng.integers(1, 2000)), int(rng.integers(1, 4000)), int(rng.integers(64, 5000)))
        p = int(rng.integers(1, 20))
        room = budget.feature_room(share, one, two, p, held, lambda u, s=share: caps_of(u, s))
        assert room >= p
        if room > p:
            assert total(room, held, share) <= share
        assert room == budget.MAX_FEATURES or total(room + 1, held, share) > share


# --- a wide dict, a new name on every row ---------------------------------------------------------
def test_a_dict_of_10k_keys_is_learnt_within_the_budget():
    """SGBT met one dict of thousands of keys: MemoryError (27 GiB) and broken for good.  Now it
    takes the names that fit, ignores the rest (said once, counted) and stays in its budget."""
    mb = 16.0
    m = sf.SGBTRegressor(n_steps=10, max_memory_mb=mb, seed=0)
    rng = np.random.default_rng(0)
    wide = {f"k{j:05d}": float(v) for j, v in enumerate(rng.random(10_000))}
    with pytest.warns(FeatureCapWarning, match="ignored from now on"):
        m.learn_one(wide, 1.0)
    fs = _fs(m)
    assert 0 < len(fs) < 10_000 and len(fs) == fs.max_features
    assert fs.n_ignored_names == 10_000 - len(fs)
    assert fs.names == sorted(wide)[: len(fs)]  # the names in their canonical order
    assert trees_bytes(m) <= mb * 2**20
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureCapWarning)  # said once
        for i in range(300):
            x = dict(wide, k00000=float(i % 7))
            m.learn_one(x, float(i % 7))
    assert trees_bytes(m) <= mb * 2**20
    assert abs(m.predict_one(dict(wide, k00000=3.0)) - 3.0) < 1.5  # it learns the kept names


@pytest.mark.parametrize("make", [
    lambda: sf.OnlineForestRegressor(n_trees=3, max_memory_mb=4, seed=0),
    lambda: sf.OnlineQRF(forest=sf.OnlineForestRegressor(n_trees=3, max_memory_mb=4), seed=0),
    lambda: sf.AMFRegressor(n_trees=3, max_memory_mb=4, seed=0),
    lambda: sf.ATSERRegressor(max_memory_mb=2, seed=0),
], ids=["forest", "qrf", "amf", "atser"])  # fmt: skip
def test_a_new_name_on_every_row_stays_within_the_budget(make):
    m = make()
    budget_bytes = 4 * 2**20 if not isinstance(m, sf.ATSERRegressor) else 2 * 2**20
    rows = _new_name_rows(2500)
    with pytest.warns(FeatureCapWarning):
        for i, (x, y) in enumerate(rows):
            m.learn_one(x, y)
            if i % 100 == 99:
                assert trees_bytes(m) <= budget_bytes, i
    fs = _fs(m)
    cap = len(fs)
    assert cap == fs.max_features < 2502 and fs.n_ignored_names == 2502 - cap
    # past the cap nothing widens: more rows keep the features, and still learn
    _learn_quietly(m, _new_name_rows(300, start=5000))
    assert len(fs) == cap and trees_bytes(m) <= budget_bytes
    assert np.isfinite(m.predict_one({"a": 0.5, "b": 0.5}))


def test_a_classifier_with_a_new_name_on_every_row_stays_within_its_budget():
    m = sf.HoeffdingTreeClassifier(max_memory_mb=1, seed=0)
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FeatureCapWarning)
        for i in range(2500):
            a = float(rng.random())
            m.learn_one({"a": a, f"f{i}": 1.0}, "hi" if a > 0.5 else "lo")
            if i % 100 == 99:
                assert trees_bytes(m) <= 2**20, i
    fs = m.features_
    assert len(fs) == fs.max_features < 2501 and fs.n_ignored_names == 2501 - len(fs)
    assert m.predict_one({"a": 0.9}) == "hi" and m.predict_one({"a": 0.1}) == "lo"


def test_without_a_budget_every_name_is_a_feature():
    m = sf.HoeffdingTreeRegressor(max_memory_mb=None, seed=0)
    _learn_quietly(m, _new_name_rows(300))
    assert m.features_.max_features is None and len(m.features_) == 302


@pytest.mark.parametrize("memory", [None, 4], ids=["no-budget", "budget"])
@pytest.mark.parametrize("cls", [sf.CPExact, sf.CPApproximate])
def test_the_calibration_rows_widen_a_logarithmic_number_of_times(cls, memory):
    """A new name on every row: the calibration set's stored rows (``cal_x_``) widen by doubling
    (not past the feature cap), so the stream costs linear time (one feature at a time, each
    row copied the whole set: quadratic); every stored row keeps its features, the rest NaN."""
    m = cls(forest=sf.OnlineForestRegressor(n_trees=3, max_memory_mb=memory),
            calibration_size=200, seed=0)  # fmt: skip
    rows = list(_new_name_rows(600))
    widths = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FeatureCapWarning)
        for x, y in rows:
            m.learn_one(x, y)
            if not widths or m.cal_x_.shape[1] != widths[-1]:
                widths.append(m.cal_x_.shape[1])
    p = len(m.forest_.features_)
    cap = m.forest_.features_.max_features
    assert widths[-1] >= p and (widths[-1] <= 2 * p if cap is None else widths[-1] == cap)
    assert len(widths) <= int(np.log2(p)) + 3, widths
    assert all(b <= 2 * a or a < 3 for a, b in zip(widths, widths[1:], strict=False))
    assert np.isnan(m.cal_x_[:, p:]).all()
    assert m.memory_bytes >= m.forest_.memory_bytes + m.cal_x_.nbytes


# --- arrays, frames, files ------------------------------------------------------------------------
def test_a_plain_array_wider_than_the_cap_is_refused_and_nothing_is_learnt():
    m = sf.SGBTRegressor(n_steps=10, max_memory_mb=4, seed=0)
    X = np.random.default_rng(0).random((5, 5000))
    with pytest.raises(ValueError, match=r"X has 5000 columns, more than the \d+ features"):
        m.learn_many(X, np.ones(5))
    assert not m.is_fitted and len(m.feature_names_in_) == 0  # (the first call: undone)
    m.learn_many(X[:, :10], np.ones(5))  # a narrower one is learnt
    assert len(m.features_) == 10


def test_dataframe_columns_past_the_cap_are_ignored():
    pd = pytest.importorskip("pandas")
    m = sf.SGBTRegressor(n_steps=10, max_memory_mb=4, seed=0)
    m.learn_many(pd.DataFrame({"a": [0.1, 0.9], "b": [1.0, 2.0]}), [1.0, 2.0])
    wide = pd.DataFrame(np.random.default_rng(0).random((3, 4000)),
                        columns=[f"c{j}" for j in range(4000)])  # fmt: skip
    with pytest.warns(FeatureCapWarning):
        m.learn_many(wide, [1.0, 2.0, 3.0])
    fs = m.features_
    assert len(fs) == fs.max_features < 4002
    assert fs.n_ignored_names == 4002 - len(fs)
    assert trees_bytes(m) <= 4 * 2**20


def test_the_cap_is_saved_and_a_tampered_cap_is_refused():
    m = sf.OnlineForestRegressor(n_trees=2, max_memory_mb=2, seed=0)
    _learn_quietly(m, _new_name_rows(1500))
    buf = io.BytesIO()
    sf.save(m, buf)
    loaded = sf.load(io.BytesIO(buf.getvalue()))
    a, b = m.features_, loaded.features_
    assert (b.max_features, b.n_ignored_names, b.names) == (a.max_features, a.n_ignored_names,
                                                            a.names)  # fmt: skip
    for bad in (len(a) - 1, 10**12, -1, 2.5):
        m.features_.max_features = bad
        buf = io.BytesIO()
        sf.save(m, buf)
        with pytest.raises(ValueError, match="feature cap|max_features"):
            sf.load(io.BytesIO(buf.getvalue()))
    m.features_.max_features = a.max_features


def test_a_nan_feature_name_is_refused_and_nothing_is_learnt():
    """A NaN key (no NaN equals another) added a feature on every row."""
    m = sf.HoeffdingTreeRegressor(seed=0)
    m.learn_one({"a": 1.0}, 1.0)
    before = (list(m.features_.names), m.features_.version)
    for name in (float("nan"), np.float32("nan")):
        with pytest.raises(ValueError, match="feature name is NaN"):
            m.learn_one({"a": 2.0, name: 1.0}, 2.0)
    assert (list(m.features_.names), m.features_.version) == before
    assert m.predict_one({"a": 2.0, float("nan"): 1.0}) == m.predict_one({"a": 2.0})


@pytest.mark.parametrize("make", [
    lambda: sf.SGBTRegressor(n_steps=5, max_memory_mb=None, seed=0),
    lambda: sf.OnlineForestRegressor(n_trees=3, max_memory_mb=None, seed=0),
    lambda: sf.AMFRegressor(n_trees=3, max_memory_mb=None, seed=0),
], ids=["sgbt", "forest", "amf"])  # fmt: skip
def test_a_widening_that_runs_out_of_memory_changes_nothing(make, monkeypatch):
    """SGBT without a budget met a wide dict: MemoryError, and every later call raised it again
    (the features were recorded, the trees never widened).  Now the call is refused and the
    model is as it was: it learns on, as its twin that never saw the call."""
    from streamforest.mondrian import state as amf_state
    from streamforest.tree_kinds import state as tree_state

    m, twin = make(), make()
    rows = list(_new_name_rows(200))
    for x, y in rows[:100]:
        m.learn_one({"a": x["a"], "b": x["b"]}, y)
        twin.learn_one({"a": x["a"], "b": x["b"]}, y)
    calls = {"n": 0}

    def fail_on(k, real):
        def wrapped(*a, **kw):
            calls["n"] += 1
            if calls["n"] == k:
                raise MemoryError("Unable to allocate 27 GiB (simulated)")
            return real(*a, **kw)

        return wrapped

    # a tree's growth: the second tree's (the first was widened already); AMF's: all at once
    monkeypatch.setattr(tree_state, "grow", fail_on(2, tree_state.grow))
    monkeypatch.setattr(amf_state, "resized", fail_on(1, amf_state.resized))
    wide = {f"k{j}": 1.0 for j in range(50)}
    with pytest.raises(MemoryError):
        m.learn_one(dict(wide, a=0.5, b=0.5), 1.0)
    monkeypatch.undo()
    assert m.feature_names_in_ == ["a", "b"]
    for x, y in rows[100:]:
        m.learn_one({"a": x["a"], "b": x["b"]}, y)
        twin.learn_one({"a": x["a"], "b": x["b"]}, y)
    X = np.random.default_rng(5).random((50, 2))
    np.testing.assert_array_equal(m.predict(X), twin.predict(X))
    m.learn_one(dict(wide, a=0.5, b=0.5), 1.0)  # the same call, with memory, is learnt
    assert len(m.feature_names_in_) == 52
