"""The single trees' memory budget (issue 33): ``max_memory_mb`` of
:class:`~streamforest.HoeffdingTreeClassifier`, :class:`~streamforest.ACTSERClassifier`,
:class:`~streamforest.HoeffdingTreeRegressor` and :class:`~streamforest.ATSERRegressor`.

A single tree is an engine of one tree: its budget is the engine's (the classifiers':
``streamforest.engine.classifier_engine.ClassifierEngine``, categories and classes counted), so
a tree learns a nominal feature of many thousand ids or hundreds of classes within it; where the
budget does not bind the tree is the unbounded one; a tree saved before the parameter existed
loads without a budget; as a forest's template the parameter is not read (the forest's governs).
"""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import persistence
from streamforest.engine.budget import DEFAULT_MEMORY_MB

from .conftest import id_rows, ids_stream, trees_bytes

CLASSIFIERS = (sf.HoeffdingTreeClassifier, sf.ACTSERClassifier)
REGRESSORS = (sf.HoeffdingTreeRegressor, sf.ATSERRegressor)


def _dict(ids, X, i):  # (the features of _rows' columns: 0, 1, 2)
    return {0: f"u{ids[i]}", 1: float(X[i, 0]), 2: float(X[i, 1])}


def _learn(m, ids, X, y, a, b, api):
    if api == "many":
        m.learn_many(id_rows(ids, X, a, b), y[a:b])
    else:
        for i in range(a, b):
            m.learn_one(_dict(ids, X, i), y[i])


# --- classifiers: categories and classes within the budget ---------------------------------------
@pytest.mark.parametrize("api", ["one", "many"])
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_tree_learns_many_categories_within_its_budget(cls, api):
    """20k user ids in 10k rows: without a budget the tree's leaves hold several MiB of category
    weights (4-9 MiB at 12k rows); with 1 MiB it stays within it at every step, codes at most
    its cap and hashes later ids, and still learns the concept (chance: 0.5)."""
    mb, n = 1.0, 10_000
    ids, X, y = ids_stream(n, 20_000, 2)
    m = cls(max_memory_mb=mb, seed=0)
    correct = 0
    for a in range(0, n, 1000):
        if a:
            if api == "many":
                correct += int(np.sum(m.predict(id_rows(ids, X, a, a + 1000)) == y[a : a + 1000]))
            else:
                correct += sum(m.predict_one(_dict(ids, X, i)) == y[i] for i in range(a, a + 1000))
        _learn(m, ids, X, y, a, a + 1000, api)
        assert m.engine_.memory_bytes <= mb * 2**20
    assert m.engine_.max_memory_mb == mb
    fs = m.features_
    assert fs.max_codes is not None and fs.code_limits[0] == fs.max_codes  # ids past it hashed
    assert fs.max_categories <= max(fs.max_codes, 1000) < 20_000
    assert correct / (n - 1000) > 0.58


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_tree_learns_hundreds_of_classes_within_its_budget(cls):
    """300 classes and 5k ids, arriving in chunks and one by one: a code costs 300 weights a
    leaf; the tree stays within 1 MiB and knows every class."""
    mb, n = 1.0, 3000
    ids, X, y = ids_stream(n, 5000, 300)
    m = cls(max_memory_mb=mb, seed=0)
    for a in range(0, n, 500):
        _learn(m, ids, X, y, a, a + 500, "many" if a < 1500 else "one")
        assert m.engine_.memory_bytes <= mb * 2**20
    assert m.n_classes_ > 290
    assert m.predict_proba(id_rows(ids, X, 0, 20)).shape == (20, m.n_classes_)


@pytest.mark.parametrize("api", ["one", "many"])
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_labels_past_a_trees_budget_are_refused_and_nothing_is_learnt(cls, api):
    m = cls(max_memory_mb=0.05, seed=0)
    m.learn_many(np.random.default_rng(0).random((50, 3)), np.arange(50) % 2)
    cap = m.engine_.max_classes()
    assert 2 < cap < 10_000
    seen = m.n_leaves, list(m.classes_), m.features_.version
    labels = np.arange(cap + 5)
    X = np.random.default_rng(1).random((cap + 5, 3))
    with pytest.raises(ValueError, match=r"max_memory_mb=0\.05 over its one tree holds at most"):
        if api == "many":
            m.learn_many(X, labels)
        else:
            for i, v in enumerate(labels):
                m.learn_one({0: X[i, 0], 1: X[i, 1], 2: X[i, 2]}, int(v))
    if api == "many":
        assert (m.n_leaves, list(m.classes_), m.features_.version) == seen
    else:  # the examples before the refused one were learnt
        assert m.n_classes_ == cap
    assert trees_bytes(m) <= 0.05 * 2**20


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_under_the_default_budget_a_tree_is_the_unbounded_one(cls):
    """A stream far below 256 MiB: the default tree predicts bit for bit as one without a budget
    (the category cap and the leaf cap are never reached), in both APIs."""
    ids, X, y = ids_stream(3000, 60, 3)
    params = {"grace_period": 50, "delta": 0.01, "seed": 0}
    models = [cls(**params), cls(max_memory_mb=None, **params)]
    for m in models:
        _learn(m, ids, X, y, 0, 2000, "many")
        _learn(m, ids, X, y, 2000, 2600, "one")
    assert models[0].engine_.max_memory_mb == DEFAULT_MEMORY_MB
    assert models[0].features_.max_codes > 1000 and models[1].features_.max_codes is None
    rows = id_rows(ids, X, 2600, 3000)
    np.testing.assert_array_equal(models[0].predict_proba(rows), models[1].predict_proba(rows))
    assert models[0].n_leaves == models[1].n_leaves > 1


# --- saved and loaded ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_a_saved_tree_keeps_its_budget_and_learns_on_identically(cls, tmp_path):
    mb = 0.5
    ids, X, y = ids_stream(6000, 20_000, 2)
    m = cls(max_memory_mb=mb, seed=0)
    _learn(m, ids, X, y, 0, 4000, "many")
    assert m.features_.code_limits[0] is not None  # past its category cap
    path = tmp_path / "tree.sfm"
    sf.save(m, path)
    assert persistence.read_manifest(path)["params"]["max_memory_mb"] == mb
    loaded, copied = sf.load(path), pickle.loads(pickle.dumps(m))
    for model in (m, loaded, copied):
        assert model.max_memory_mb == model.engine_.max_memory_mb == mb
        assert model.features_.max_codes == m.features_.max_codes
    for model in (m, loaded, copied):
        _learn(model, ids, X, y, 4000, 5000, "many")
        _learn(model, ids, X, y, 5000, 5500, "one")
        assert trees_bytes(model) <= mb * 2**20
    rows = id_rows(ids, X, 5500, 6000)
    np.testing.assert_array_equal(m.predict_proba(rows), loaded.predict_proba(rows))
    np.testing.assert_array_equal(m.predict_proba(rows), copied.predict_proba(rows))


def _as_saved_before_the_budget(m):
    """``m`` as a file written before the single trees had ``max_memory_mb``: neither the model
    nor its engine's tree spec holds it, and its engine has no budget."""
    del m.max_memory_mb
    e = m.__dict__.get("engine_")
    if e is not None:
        e.max_memory_mb = None
        for spec in e.specs:
            del spec.max_memory_mb
    return m


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS, ids=lambda c: c.__name__)
def test_a_tree_saved_before_the_budget_loads_without_one(cls):
    """Such a tree had no budget: it loads with ``max_memory_mb=None`` (saved or pickled,
    fitted or not) and learns on as a tree without a budget does."""
    rng = np.random.default_rng(0)
    X = rng.random((1500, 3))
    y = X[:, 0] > 0.5 if cls in CLASSIFIERS else 3 * X[:, 0] + rng.standard_normal(1500)
    old = cls(max_memory_mb=None, grace_period=50, seed=0).learn_many(X[:1000], y[:1000])
    _as_saved_before_the_budget(old)
    unbounded = cls(max_memory_mb=None, grace_period=50, seed=0).learn_many(X[:1400], y[:1400])
    expected = unbounded.predict(X[1400:])
    for loaded in (
        persistence.load(io.BytesIO(persistence._dumps(old))),
        pickle.loads(pickle.dumps(old)),
    ):
        assert loaded.max_memory_mb is None and loaded.engine_.max_memory_mb is None
        assert loaded.get_params()["max_memory_mb"] is None
        assert loaded.clone().max_memory_mb is None
        loaded.learn_many(X[1000:1400], y[1000:1400])
        np.testing.assert_array_equal(loaded.predict(X[1400:]), expected)
    unfitted = _as_saved_before_the_budget(cls(seed=0))
    assert pickle.loads(pickle.dumps(unfitted)).max_memory_mb is None
    assert persistence.load(io.BytesIO(persistence._dumps(unfitted))).max_memory_mb is None


# --- the parameter --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS, ids=lambda c: c.__name__)
def test_max_memory_mb_is_checked_as_the_forests_is(cls):
    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20) % 2
    for bad in (0, -1.0, math.inf, math.nan, True, "256"):
        with pytest.raises(ValueError, match="max_memory_mb must be None or a positive number"):
            cls(max_memory_mb=bad).learn_many(X, y)
    for good in (None, 1, 0.5):
        model = cls(max_memory_mb=good).learn_many(X, y)
        assert model.engine_.max_memory_mb == good
    assert cls().get_params()["max_memory_mb"] == cls().clone().max_memory_mb == 256.0


# --- regressors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, mb", [(REGRESSORS[0], 0.25), (REGRESSORS[1], 0.1)],
                         ids=[c.__name__ for c in REGRESSORS])  # fmt: skip
def test_a_regression_tree_stays_within_its_budget(cls, mb):
    """A tree that would grow past twice its budget (observer bins and leaves) stops at its
    caps, in both APIs, and keeps learning its leaves."""
    X, y = sf.streams.Friedman(function=1, n=12_000, seed=0).arrays()
    unbounded = cls(max_memory_mb=None, grace_period=50, seed=0).learn_many(X[:8000], y[:8000])
    assert unbounded.memory_bytes > 2 * mb * 2**20
    m = cls(max_memory_mb=mb, grace_period=50, seed=0)
    for a in range(0, 8000, 1000):
        m.learn_many(X[a : a + 1000], y[a : a + 1000])
        assert m.engine_.memory_bytes <= mb * 2**20
    for i in range(8000, 9000):
        m.learn_one(dict(enumerate(X[i].tolist())), float(y[i]))
    assert m.engine_.memory_bytes <= mb * 2**20 and m.n_leaves > 1
    error = np.mean(np.abs(m.predict(X[9000:]) - y[9000:]))
    assert error < np.mean(np.abs(y[9000:] - y[:8000].mean()))


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_under_the_default_budget_a_regression_tree_is_the_unbounded_one(cls):
    X, y = sf.streams.Friedman(function=1, n=5000, seed=1).arrays()
    models = [cls(seed=0), cls(max_memory_mb=None, seed=0)]
    for m in models:
        m.learn_many(X[:4000], y[:4000])
        for i in range(4000, 4500):
            m.learn_one(dict(enumerate(X[i].tolist())), float(y[i]))
    np.testing.assert_array_equal(models[0].predict(X[4500:]), models[1].predict(X[4500:]))


# --- as a template --------------------------------------------------------------------------------
def test_a_forests_template_budget_is_not_read():
    """The forest's budget bounds its trees; its template's ``max_memory_mb`` changes nothing."""
    X, y = sf.streams.Friedman(function=1, n=3000, seed=2).arrays()
    forests = [
        sf.OnlineForestRegressor(n_trees=3, tree=sf.HoeffdingTreeRegressor(max_memory_mb=t),
                                 max_memory_mb=2, seed=0)
        for t in (256, 0.001, None)
    ]  # fmt: skip
    for f in forests:
        f.learn_many(X[:2500], y[:2500])
        assert f.engine_.max_memory_mb == 2
    for f in forests[1:]:
        np.testing.assert_array_equal(f.predict(X[2500:]), forests[0].predict(X[2500:]))


def test_an_ensembles_members_follow_the_ensembles_budget():
    """The members' template has the trees' default, unread: the ensemble's budget governs."""
    ensemble = sf.ACTSEREnsembleClassifier(n_members=2, max_memory_mb=None, seed=0)
    assert ensemble.tree.max_memory_mb == 256.0
    ids, X, y = ids_stream(2000, 20_000, 2)
    ensemble.learn_many(id_rows(ids, X, 0, 2000), y[:2000])
    assert ensemble.engine_.max_memory_mb is None and ensemble.features_.max_codes is None


# --- widening a classification tree: the new nominal class counts written where they go -------
def _class_tree(leaves=40, cats=300, classes=3, seed=1):
    """A classification tree state with one nominal row of random nominal class counts."""
    from streamforest.rng import new_state
    from streamforest.tree_kinds import state

    st = state.allocate(3, new_state(0), nodes=2 * leaves, leaves=leaves, bins=64, cats=64,
                        n_classes=classes, n_cats=cats)  # fmt: skip
    st.ft_nominal[0] = 1
    st.ints[state.I_NFEAT] = 3
    st = state.fit_classes(st, classes, cats)  # its row for the nominal feature
    rng = np.random.default_rng(seed)
    st.lf_nominal_class_weights[:] = rng.random(st.lf_nominal_class_weights.shape)
    st.lf_class_stats[:] = rng.random(st.lf_class_stats.shape)
    return st


def _store_traced(A, t, st, before):
    """``arena.store`` of ``st`` (``before``: the loaded state it came from) and the peak traced
    allocation less the arena arrays it allocated (a lengthened arena: address space)."""
    import tracemalloc

    from streamforest.tree_kinds import arena

    kept = [a is b for a, b in zip(st, before, strict=True)]
    tracemalloc.start()
    try:
        B = arena.store(A, t, st, kept=kept, release_old=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    new = sum(b.nbytes for a, b in zip((A.fa, A.ia, A.ba), (B.fa, B.ia, B.ba), strict=True)
              if b is not a)  # fmt: skip
    return B, peak - new


@pytest.mark.parametrize("change", ["class", "codes", "cut", "leaves"])
def test_widening_writes_the_nominal_counts_in_place(change):
    """A widening (a new class, a doubled or cut category room, more leaf slots) writes the new
    nominal class counts straight into the arena (``state.Deferred``): the same tree as built
    apart, and no allocation of the field's size on the way (it was built apart and then
    copied: the process held the old field, the new one and its copy, about three times a
    tree of a classifier under a budget)."""
    from streamforest.tree_kinds import arena, state

    A = arena.store(arena.empty(2), 0, _class_tree(seed=2))
    A = arena.store(A, 1, _class_tree())
    before = arena.load(A, 1)
    ref = {k: np.array(v) for k, v in before._asdict().items()}
    ref = state.TreeState(**ref)
    if change == "leaves":
        expect = state.grow(ref, leaves=80)
        st = state.grow(before, leaves=80, deferred=True)
    else:
        K, C = {"class": (4, 300), "codes": (3, 600), "cut": (3, 100)}[change]
        expect = state.fit_classes(ref, K, C)
        st = state.fit_classes(before, K, C, deferred=True)
    assert isinstance(st.lf_nominal_class_weights, state.Deferred)
    field = st.lf_nominal_class_weights.nbytes
    B, peak = _store_traced(A, 1, st, before)
    got = arena.load(B, 1)
    for name in state.TreeState._fields:
        np.testing.assert_array_equal(getattr(got, name), getattr(expect, name), err_msg=name)
    np.testing.assert_array_equal(arena.load(B, 0).lf_nominal_class_weights,
                                  _class_tree(seed=2).lf_nominal_class_weights)  # fmt: skip
    assert peak < 0.25 * field, (peak, field)


def test_many_widenings_compact_the_row_in_place():
    """Class after class (each widening leaves the old counts as a hole): the row is packed
    again in place once holes dominate (``arena.store``'s compaction with a Deferred field),
    the tree stays what building it apart gives and the row no wider than twice its fields."""
    from streamforest.tree_kinds import arena, state

    A = arena.store(arena.empty(1), 0, _class_tree(leaves=8, cats=50, classes=2))
    expect = state.TreeState(**{k: np.array(v) for k, v in arena.load(A, 0)._asdict().items()})
    for K in range(3, 30):
        before = arena.load(A, 0)
        st = state.fit_classes(before, K, 50, deferred=True)
        A = arena.store(A, 0, st, kept=[a is b for a, b in zip(st, before, strict=True)])
        expect = state.fit_classes(expect, K, 50)
        got = arena.load(A, 0)
        for name in ("lf_nominal_class_weights", "lf_class_stats", "lf_class_weights", "ints"):
            np.testing.assert_array_equal(getattr(got, name), getattr(expect, name))
        ends = A.lay[0, :, 0] + A.lay[0, :, 1] * A.lay[0, :, 2] * A.lay[0, :, 3]
        is_float = [a.dtype == np.float64 for a in got]
        floats = sum(a.size for a in got if a.dtype == np.float64)
        assert ends[is_float].max() <= 2 * floats + 64


def test_a_widening_adds_about_the_widened_tree_to_the_process():
    """End to end (Linux): the step that widens a single tree to a new class raises the
    process's peak resident memory by less than 1.4 times the widened tree's ``memory_bytes``
    (its new nominal class counts; the old ones were resident before).  Built apart and then
    copied, the new counts took twice that."""
    from pathlib import Path

    clear, status = Path("/proc/self/clear_refs"), Path("/proc/self/status")
    if not (clear.exists() and status.exists()):
        pytest.skip("needs Linux's /proc/self/clear_refs")

    def mib(key):
        for line in status.read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
        return math.nan

    ids, X, _ = ids_stream(20_000, 20_000, 2)
    y = np.array([f"c{v}" for v in np.floor(8 * X[:, 0]).astype(int).tolist()], dtype=object)
    m = sf.HoeffdingTreeClassifier(max_memory_mb=256, seed=0, grace_period=50)
    m.learn_many(id_rows(ids, X, 0, 20_000), y)
    x = _dict(ids, X, 0)
    m.learn_one(x, "c0")
    try:
        clear.write_text("5")
    except OSError:
        pytest.skip("cannot reset the peak resident memory")
    rss = mib("VmRSS")
    m.learn_one(x, "new")  # a ninth class: every leaf's nominal class counts widen
    peak = mib("VmHWM") - rss
    tree = m.memory_bytes / 2**20
    assert tree > 16, tree  # a tree large enough for the measure to mean something
    assert peak < 1.4 * tree, (peak, tree)
