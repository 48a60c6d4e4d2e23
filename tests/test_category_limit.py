"""A classifier's memory under its budget for any number of categories and classes (issue 33).

The policy (``streamforest.engine.classifier_engine.ClassifierEngine``): a tree's category room
grows only while it fits the tree's share with ``budget.CATEGORY_LEAVES`` leaves and those it
holds; the feature space codes at most a fresh tree's room per nominal feature and hashes every
later category into that many buckets (``features.category_bucket``, the same in every process);
new classes cut a tree's room, or replace a tree whose leaves in use no longer fit; a label past
the classes a two-leaf tree can hold is refused.  Under the budget nothing changes.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

import streamforest as sf
from streamforest import persistence
from streamforest.engine import budget
from streamforest.features import FeatureSpace, category_bucket
from streamforest.tree_kinds import state as S

from .conftest import id_rows, ids_stream, trees_bytes


def _dict(ids, X, i):
    return {"user": f"u{ids[i]}", "x0": float(X[i, 0]), "x1": float(X[i, 1])}


def _model(mb, members=4):
    return sf.ACTSEREnsembleClassifier(n_members=members, max_memory_mb=mb, seed=0)


def _trees_in_share(m):
    e = m.engine_
    share = e.max_memory_mb * 2**20 / e.forest_trees
    return all(e.tree_bytes(t) <= share for t in range(e.n_trees) if e.created[t])


# --- category buckets ---------------------------------------------------------------------------
# categories of many kinds, as source (evaluated here and in other processes)
CATEGORIES = """["u1", "", "é", b"raw", 7, -3, 2**70, 1.5, float("inf"), (1, "a"), ("a", (2,)),
               frozenset({1, 2}), True, np.int64(9), np.float32(0.25), np.str_("np")]"""


def test_category_buckets_are_the_same_in_every_process():
    """Python salts ``hash`` of str and bytes per process: the buckets do not depend on it."""
    here = [category_bucket(v, 1000) for v in eval(CATEGORIES)]
    code = (
        "import numpy as np\n"
        "from streamforest.features import category_bucket\n"
        f"print([category_bucket(v, 1000) for v in {CATEGORIES}])\n"
    )
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             check=True)  # fmt: skip
        assert out.stdout.strip() == repr(here)
    assert len(set(here)) > 10 and all(0 <= b < 1000 for b in here)


def test_equal_categories_share_a_bucket_and_buckets_spread():
    """Categories a dict takes as one key get one bucket; distinct ones spread over them."""
    for group in (
        [1, 1.0, True, np.int64(1), np.float64(1.0)],
        [0, False, 0.0],
        [(1, 2), (1.0, 2)],
    ):
        assert len({category_bucket(v, 97) for v in group}) == 1
    counts = np.bincount([category_bucket(f"user{i}", 50) for i in range(50_000)], minlength=50)
    assert counts.min() > 850 and counts.max() < 1150  # 1,000 a bucket, give or take 5 sd
    with pytest.raises(ZeroDivisionError):
        category_bucket("a", 0)


def test_feature_space_codes_up_to_its_cap_then_buckets_in_both_apis():
    names = [f"u{i}" for i in range(40)]
    one, many = FeatureSpace(), FeatureSpace()
    for fs in (one, many):
        fs.set_max_codes(8)
    rows = [one.encode_dict({"user": v, "x": 1.0}, True) for v in names]
    codes_one = [int(r[0]) for r in rows]
    A = np.array([[v, 1.0] for v in names], dtype=object)
    codes_many = many.encode_array(A, True)[:, 0].astype(int).tolist()
    expected = list(range(8)) + [category_bucket(v, 8) for v in names[8:]]
    assert codes_one == codes_many == expected
    for fs in (one, many):
        assert fs.categories[0] == {v: i for i, v in enumerate(names[:8])}  # no more are kept
        assert fs.code_limits == [8, None] and fs.max_categories == 8
    # predicting: a category never learnt is its bucket once the feature is past its cap
    assert one.encode_dict({"user": "never"}, False)[0] == category_bucket("never", 8)
    assert one.encode_array(np.array([["never", 0.5]], dtype=object), False)[0, 0] == (
        category_bucket("never", 8)
    )
    # a lower cap later: features past the cap keep their buckets, the others stop earlier
    one.set_max_codes(3)
    row = one.encode_dict({"user": "again", "other": "a"}, True)
    assert row[0] == category_bucket("again", 8)
    for v in "bcdef":
        one.encode_dict({"other": v}, True)
    assert one.categories[2] == {"a": 0, "b": 1, "c": 2} and one.code_limits[2] == 3


def test_feature_space_without_a_cap_and_bad_input_are_unchanged():
    fs = FeatureSpace()
    A = np.array([[f"u{i}"] for i in range(300)], dtype=object)
    assert fs.encode_array(A, True)[:, 0].tolist() == list(range(300))
    assert fs.max_codes is None and fs.code_limits == [None]
    capped = FeatureSpace()
    capped.set_max_codes(2)
    capped.encode_dict({"u": "a"}, True)
    capped.encode_dict({"u": "b"}, True)
    before = (dict(capped.categories[0]), list(capped.code_limits), capped.version)
    with pytest.raises(TypeError, match="not hashable"):
        capped.encode_dict({"u": ["a", "list"]}, True)
    A = np.empty((1, 1), dtype=object)
    A[0, 0] = ["x"]
    with pytest.raises(TypeError, match="not hashable"):
        capped.encode_array(A, True)
    assert (dict(capped.categories[0]), list(capped.code_limits), capped.version) == before


# --- the budget -----------------------------------------------------------------------------------
def test_category_room_is_the_most_codes_that_fit():
    units = budget.unit_bytes(3, m_min=10, alternates=True, n_classes=5, n_cats=0, n_nominal=2)
    for share, slots in ((2e5, 0), (1e6, 0), (1e6, 120), (1e7, 300)):
        c = budget.category_room(share, units, 2, 5, True, 64, 100, False, 32, slots, 0)

        def size(codes, slots=slots):
            u = budget.with_categories(units, 2, 5, codes)
            return budget.classifier_tree_bytes(32, u, True, 64, 100, False, slots, 0)

        assert c >= 0 and size(c) <= share < size(c + 1)
        full = budget.unit_bytes(3, m_min=10, alternates=True, n_classes=5, n_cats=c, n_nominal=2)
        assert budget.classifier_tree_bytes(32, full, True, 64, 100) <= share
    assert budget.category_room(1e3, units, 2, 5, True) == -1
    K = budget.class_room(
        1e6,
        budget.unit_bytes(3, m_min=10, alternates=True, n_classes=1),
        budget.unit_bytes(3, m_min=10, alternates=True, n_classes=2),
        True,
    )
    at = budget.unit_bytes(3, m_min=10, alternates=True, n_classes=K)
    over = budget.unit_bytes(3, m_min=10, alternates=True, n_classes=K + 1)
    assert (
        budget.classifier_tree_bytes(2, at, True)
        <= 1e6
        < budget.classifier_tree_bytes(2, over, True)
    )


@pytest.mark.parametrize("api", ["one", "many"])
def test_many_categories_stay_in_budget(api):
    """20k user ids in 12k rows, 4 trees in 2 MiB: without the cap a leaf would hold 320 kB of
    category weights; the model stays in budget at every step and keeps learning."""
    mb, n = 2.0, 12_000
    ids, X, y = ids_stream(n, 20_000, 2)
    m = _model(mb)
    correct = 0
    if api == "many":
        for a in range(0, n, 1000):
            rows = id_rows(ids, X, a, a + 1000)
            if a:
                correct += int(np.sum(m.predict(rows) == y[a : a + 1000]))
            m.learn_many(rows, y[a : a + 1000])
            assert trees_bytes(m) <= mb * 2**20 and _trees_in_share(m)
    else:
        for i in range(n):
            x = _dict(ids, X, i)
            correct += i >= 1000 and m.predict_one(x) == y[i]
            m.learn_one(x, y[i])
            if i % 500 == 499:
                assert trees_bytes(m) <= mb * 2**20 and _trees_in_share(m)
    fs = m.features_
    cap = fs.max_codes
    assert fs.code_limits[0] == cap and fs.max_categories <= max(cap, 1000)  # (user: column 0)
    e = m.engine_
    rooms = [e.state(t).lf_nominal_class_weights.shape[2] // 2 for t in range(4)]
    assert all(r <= cap for r in rooms) and min(rooms) > 100
    assert correct / (n - 1000) > 0.6  # the first numeric feature's half of the concept at least


@pytest.mark.parametrize("api", ["one", "many"])
def test_many_classes_and_categories_stay_in_budget(api):
    """300 classes and 5k ids: a category code costs 300 weights a leaf; 300 classes arrive one
    by one (per example) or in a chunk; the model stays in budget."""
    mb, n = 3.0, 4000
    ids, X, y = ids_stream(n, 5000, 300)
    m = _model(mb)
    for a in range(0, n, 500):
        if api == "many":
            m.learn_many(id_rows(ids, X, a, a + 500), y[a : a + 500])
        else:
            for i in range(a, a + 500):
                m.learn_one(_dict(ids, X, i), y[i])
        assert trees_bytes(m) <= mb * 2**20 and _trees_in_share(m)
    assert m.n_classes_ > 290
    e = m.engine_
    assert all(e.state(t).lf_class_weights.shape[1] == m.n_classes_ for t in range(4))
    assert m.predict(id_rows(ids, X, 0, 50)).shape == (50,)


def test_new_classes_cut_the_room_or_replace_trees_past_their_share():
    """Trees grown to their caps with 2 classes: 120 classes make every leaf 60 times wider.
    Without the policy the ensemble held several times its budget."""
    mb, members = 1.0, 2
    rng = np.random.default_rng(0)
    X = rng.random((30_000, 5))
    y = (np.floor(32 * X[:, 0]) % 2).astype(int)
    m = sf.ACTSEREnsembleClassifier(n_members=members, max_memory_mb=mb, drift_detection=False,
                                    seed=1)  # fmt: skip
    for a in range(0, 30_000, 5000):
        m.learn_many(X[a : a + 5000], y[a : a + 5000])
    e = m.engine_
    leaves = [e.int_of(t, S.I_NLEAVES) for t in range(members)]
    assert min(leaves) > 50
    y2 = rng.integers(0, 120, 3000)
    y2[:120] = np.arange(120)
    m.learn_many(X[:3000], y2)
    assert trees_bytes(m) <= mb * 2**20 and _trees_in_share(m)
    assert e.n_resets.sum() > 0  # their leaves alone were past their share: fresh trees
    m.learn_many(X[3000:9000], rng.integers(0, 120, 6000))
    assert trees_bytes(m) <= mb * 2**20


@pytest.mark.parametrize("api", ["one", "many"])
def test_classes_past_the_budget_are_refused_and_nothing_is_learnt(api):
    m = sf.ACTSEREnsembleClassifier(n_members=5, max_memory_mb=0.1, seed=0)
    m.learn_many(np.random.default_rng(0).random((50, 3)), np.arange(50) % 2)
    cap = m.engine_.max_classes()
    assert 2 < cap < 1000
    fs = m.features_
    before = (list(m.classes_), len(fs), fs.version, m.engine_.int_of(0, S.I_NSEEN))
    labels = np.arange(cap + 5)
    X = np.random.default_rng(1).random((cap + 5, 3))
    with pytest.raises(ValueError, match=r"max_memory_mb=0\.1 over 5 trees holds at most"):
        if api == "many":
            m.learn_many(X, labels)
        else:
            for i, v in enumerate(labels):
                m.learn_one({0: X[i, 0], 1: X[i, 1], 2: X[i, 2], "new": "cat"}, int(v))
    if api == "many":
        assert (list(m.classes_), len(fs), fs.version, m.engine_.int_of(0, S.I_NSEEN)) == before
    else:  # the examples before the refused one were learnt (the cap counts the 4 features)
        assert m.n_classes_ == m.engine_.max_classes() < cap and "new" in fs.index
        seen, version = m.engine_.int_of(0, S.I_NSEEN), fs.version
        with pytest.raises(ValueError, match="classes are more than"):
            m.learn_one({0: 0.5, "newer": "x"}, "another")
        assert m.engine_.int_of(0, S.I_NSEEN) == seen and fs.version == version
        assert "newer" not in fs.index and "another" not in m.classes_
    assert trees_bytes(m) <= 0.1 * 2**20
    m.learn_many(X[:10], np.arange(10) % 2)  # known classes still learn


# --- unchanged under the budget, and saved --------------------------------------------------------
def test_under_the_budget_a_capped_model_is_the_unbounded_one():
    """A stream far below the budget: the model with the default budget predicts exactly as
    the one without (caps and the category cap never reached), in both APIs."""
    ids, X, y = ids_stream(3000, 60, 3)
    models = [_model(256), _model(None)]
    for m in models:
        for a in range(0, 2000, 500):
            m.learn_many(id_rows(ids, X, a, a + 500), y[a : a + 500])
        for i in range(2000, 2600):
            m.learn_one(_dict(ids, X, i), y[i])
    assert models[0].features_.max_codes > 1000 and models[1].features_.max_codes is None
    assert models[0].features_.categories == models[1].features_.categories
    rows = id_rows(ids, X, 2600, 3000)
    np.testing.assert_array_equal(models[0].predict_proba(rows), models[1].predict_proba(rows))


def test_a_model_past_its_cap_saves_loads_and_learns_on_identically(tmp_path):
    ids, X, y = ids_stream(8000, 20_000, 2)
    m = _model(1.0, members=3)
    for a in range(0, 6000, 1000):
        m.learn_many(id_rows(ids, X, a, a + 1000), y[a : a + 1000])
    fs = m.features_
    assert fs.code_limits[0] is not None  # buckets in use
    path = tmp_path / "m.sfm"
    sf.save(m, path)
    assert persistence.read_manifest(path)["format_version"] == persistence.FORMAT_VERSION == 7
    other = sf.load(path)
    assert other.features_.code_limits == fs.code_limits
    assert other.features_.max_codes == fs.max_codes
    for mm in (m, other):
        mm.learn_many(id_rows(ids, X, 6000, 7000), y[6000:7000])
        for i in range(7000, 7500):
            mm.learn_one(_dict(ids, X, i), y[i])
    rows = id_rows(ids, X, 7500, 8000)
    np.testing.assert_array_equal(m.predict_proba(rows), other.predict_proba(rows))
    assert trees_bytes(other) <= 1.0 * 2**20


def test_a_damaged_category_cap_is_refused_on_load():
    ids, X, y = ids_stream(3000, 5000, 2)
    m = _model(0.5, members=2).learn_many(id_rows(ids, X, 0, 3000), y)
    for attr, bad in (("max_codes", 0), ("code_limits", [10**9, None, None])):
        saved = getattr(m.features_, attr)
        setattr(m.features_, attr, bad)
        data = persistence._dumps(m)
        setattr(m.features_, attr, saved)
        with pytest.raises(ValueError, match="categor"):
            persistence.load(io.BytesIO(data))


def test_models_that_learnt_the_same_rows_pickle_and_save_to_the_same_bytes():
    """Rows of trees whose room was cut or moved hold holes; the pages given back read 0 and the
    rest of a hole is set to 0, so what a save or a pickle copies does not depend on where the
    arrays were allocated."""
    import pickle

    ids, X, y = ids_stream(4500, 20_000, 3)
    models = []
    for k in range(3):
        shift = np.ones(1000 * k + 7)  # other allocations before: other addresses
        m = _model(1.0, members=3)
        for a in range(0, 4000, 1000):
            m.learn_many(id_rows(ids, X, a, a + 1000), y[a : a + 1000])
        for i in range(4000, 4500):
            m.learn_one(_dict(ids, X, i), y[i])
        models.append(m)
        del shift
    assert len({pickle.dumps(m) for m in models}) == 1
    assert len({persistence._dumps(m) for m in models}) == 1
