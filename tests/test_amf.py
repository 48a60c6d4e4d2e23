"""AMFRegressor and AMFClassifier: the compiled trees against a naive Python reference with the
same random draws, exact properties of Mondrian trees and of their aggregation, accuracy, both
APIs, validation, save/load and the interval methods and prediction sets over them."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import AMFClassifier, AMFRegressor
from streamforest.mondrian import layout
from streamforest.mondrian import state as tree_arrays
from streamforest.streams import Friedman

from .conftest import check_normalized_conformal_over

# --- a naive reference: one Python object per node, the paper's steps written out -------------
_MASK = (1 << 64) - 1


class _SplitMix:
    """streamforest.rng's SplitMix64 in Python (the same draws)."""

    def __init__(self, seed):
        self.state = seed & _MASK

    def uniform(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return float((z ^ (z >> 31)) >> 11) / 9007199254740992.0


class _Node:
    def __init__(self, parent, time, p, k):
        self.parent, self.time = parent, time
        self.left = self.right = self.feature = None
        self.threshold = self.count = self.log_weight = self.log_tree = 0.0
        self.mix = 0.5
        self.value = [0.0] * k
        self.lo, self.hi = [math.nan] * p, [math.nan] * p

    def copy_from(self, other):
        for a in ("left", "right", "feature", "threshold", "count", "log_weight", "log_tree",
                  "mix"):  # fmt: skip
            setattr(self, a, getattr(other, a))
        self.value, self.lo, self.hi = list(other.value), list(other.lo), list(other.hi)


class ReferenceTree:
    """A Mondrian tree with exponentially weighted aggregation, as the module docstring of
    the compiled core (``src/core/mondrian``) states it (``classes``: 0 for regression)."""

    def __init__(self, seed, p, classes=0, step=1.0, aggregate=True, dirichlet=0.5,
                 split_pure=False):  # fmt: skip
        self.rng, self.p, self.classes = _SplitMix(seed), p, classes
        self.step, self.aggregate, self.dirichlet, self.split_pure = (
            step, aggregate, dirichlet, split_pure)  # fmt: skip
        self.root = _Node(None, 0.0, p, max(classes, 1))

    def add_class(self):
        self.classes += 1
        stack = [self.root]
        while stack:
            v = stack.pop()
            v.value += [0.0] * (self.classes - len(v.value))
            if v.left is not None:
                stack += [v.left, v.right]

    def _node_prediction(self, v):
        if not self.classes:
            return [v.value[0]]
        d = self.dirichlet
        return [(v.value[k] + d) / (v.count + d * self.classes) for k in range(self.classes)]

    def _child(self, v, x):
        xv = x[v.feature]
        if xv != xv:
            return v.left if v.left.count >= v.right.count else v.right
        return v.left if xv <= v.threshold else v.right

    def leaf(self, x):
        v = self.root
        while v.left is not None:
            v = self._child(v, x)
        return v

    def predict(self, x):
        v = self.leaf(x)
        p = self._node_prediction(v)
        while self.aggregate and v.parent is not None:
            v = v.parent
            q = self._node_prediction(v)
            p = [v.mix * a + (1 - v.mix) * b for a, b in zip(q, p, strict=True)]
        return p

    def _take(self, v, x, y, w, weigh):
        for j in range(self.p):
            if x[j] == x[j]:
                if v.lo[j] != v.lo[j]:
                    v.lo[j] = v.hi[j] = x[j]
                else:
                    v.lo[j], v.hi[j] = min(v.lo[j], x[j]), max(v.hi[j], x[j])
        if weigh and self.aggregate:
            if self.classes:
                d = self.dirichlet
                loss = -math.log((v.value[y] + d) / (v.count + d * self.classes))
            else:
                loss = 0.5 * (v.value[0] - y) ** 2
            v.log_weight -= self.step * w * loss
        v.count += w
        if self.classes:
            v.value[y] += w
        else:
            v.value[0] += w * (y - v.value[0]) / v.count

    def learn(self, x, y, w=1.0):
        if not w > 0:
            return
        v = self.root
        if v.left is None and v.count == 0:
            self._take(v, x, y, w, False)
            v.log_tree = v.log_weight
            return
        while True:
            split = False
            if not (self.classes and not self.split_pure and v.value[y] >= v.count):
                ext = []
                for j in range(self.p):
                    e = 0.0
                    if x[j] == x[j] and v.lo[j] == v.lo[j]:
                        e = max(v.lo[j] - x[j], x[j] - v.hi[j], 0.0)
                    ext.append(e)
                total = sum(ext)
                if total > 0:
                    time = v.time - math.log1p(-self.rng.uniform()) / total
                    split = v.left is None or time < v.left.time
            if split:
                r, acc = self.rng.uniform() * total, 0.0
                for j in range(self.p):
                    if ext[j] > 0:
                        acc += ext[j]
                        if r < acc:
                            break
                u, xv = self.rng.uniform(), x[j]
                right = xv > v.hi[j]
                if right:
                    threshold = v.hi[j] + u * (xv - v.hi[j])
                else:
                    threshold = xv + u * (v.lo[j] - xv)
                old, new = (
                    _Node(v, time, self.p, len(v.value)),
                    _Node(v, time, self.p, len(v.value)),
                )
                old.copy_from(v)
                if old.left is not None:
                    old.left.parent = old.right.parent = old
                v.left, v.right = (old, new) if right else (new, old)
                v.feature, v.threshold = j, threshold
                self._take(v, x, y, w, True)
                self._take(new, x, y, w, False)
                leaf = new
                break
            self._take(v, x, y, w, True)
            if v.left is None:
                leaf = v
                break
            v = self._child(v, x)
        if not self.aggregate:
            return
        leaf.log_tree = leaf.log_weight
        v = leaf
        while v.parent is not None:  # log W = log((w + W_left W_right) / 2), a = w / (2 W)
            v = v.parent
            own, below = v.log_weight, v.left.log_tree + v.right.log_tree
            e = math.exp(-abs(below - own))
            v.log_tree = max(own, below) + math.log1p(e) - math.log(2.0)
            v.mix = 1.0 / (1.0 + e) if own > below else e / (1.0 + e)


def _seeds(seed, n_trees):
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(n_trees + 1, np.uint64)]


def _stream(n=500, p=3, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    y = 10 * np.sin(3 * X[:, 0]) + 4 * X[:, 1] + rng.normal(size=n)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


# --- the reference ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params", [{}, {"step": 0.05}, {"use_aggregation": False}], ids=["default", "step", "no-agg"]
)
def test_regressor_matches_the_reference(params):
    X, y = _stream(500, missing=0.05)
    w = np.random.default_rng(1).choice([0.0, 0.5, 1.0, 2.0], size=len(y))
    model = AMFRegressor(n_trees=3, seed=5, **params)
    got = model.predict_learn_many(X, y, w)
    seeds = _seeds(5, 3)
    step, aggregate = params.get("step", 1.0), params.get("use_aggregation", True)
    trees = [ReferenceTree(seeds[t], 3, step=step, aggregate=aggregate) for t in range(3)]
    shift = y[0]  # the trees learn the targets less the first one
    expected = np.zeros(len(y))
    for i in range(len(y)):
        if i:
            expected[i] = sum(t.predict(list(X[i]))[0] + shift for t in trees) / 3
        for t in trees:
            t.learn(list(X[i]), y[i] - shift, w[i])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    Xt = np.random.default_rng(2).uniform(size=(40, 3))
    per_tree = np.array([[t.predict(list(r))[0] + shift for t in trees] for r in Xt])
    np.testing.assert_allclose(model.tree_predictions(Xt), per_tree, atol=1e-12)


@pytest.mark.parametrize("split_pure", [False, True])
def test_classifier_matches_the_reference(split_pure):
    X, _ = _stream(400)
    rng = np.random.default_rng(3)
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=len(X)) > 0.5, "a", "b").astype(object)
    y[150::9] = "c"  # a class first seen mid-stream
    model = AMFClassifier(n_trees=3, step=0.7, dirichlet=0.3, split_pure=split_pure, seed=8)
    seeds = _seeds(8, 3)
    trees = [ReferenceTree(seeds[t], 3, 0, step=0.7, dirichlet=0.3, split_pure=split_pure)
             for t in range(3)]  # fmt: skip
    classes = []
    for i in range(len(y)):
        x = {j: float(X[i, j]) for j in range(3)}
        if i > 1:
            want = np.mean([t.predict(list(X[i])) for t in trees], axis=0)
            got = model.predict_proba_one(x)
            np.testing.assert_allclose([got[c] for c in classes], want, atol=1e-12)
        model.learn_one(x, y[i])
        if y[i] not in classes:
            classes.append(y[i])
            for t in trees:
                t.add_class()
        for t in trees:
            t.learn(list(X[i]), classes.index(y[i]))
    assert model.classes_ == classes
    Xt = np.random.default_rng(4).uniform(size=(30, 3))
    want = np.array([np.mean([t.predict(list(r)) for t in trees], axis=0) for r in Xt])
    np.testing.assert_allclose(model.predict_proba(Xt), want, atol=1e-12)
    assert list(model.predict(Xt)) == [classes[k] for k in want.argmax(axis=1)]


def _classifier(n=600, seed=5):
    X, _ = _stream(n, missing=0.03)
    y = np.where(X[:, 0] > 0.6, "a", np.where(X[:, 1] > 0.5, "b", "c"))
    return AMFClassifier(n_trees=4, seed=seed).learn_many(X, y), X


def test_classifier_probabilities_are_the_mean_of_its_trees_bit_for_bit():
    """The base's answers with AMF's combine hook: the trees' probabilities summed in tree order
    and divided by the tree count, the first most probable class on ties."""
    from streamforest.engine.classifier_model import EngineClassifier

    assert AMFClassifier._answers is EngineClassifier._answers  # only the combine step is AMF's
    model, X = _classifier()
    Xt = np.random.default_rng(9).uniform(size=(200, 3))
    trees = model.engine_.predict_trees(model.encode_predict(Xt), n_classes=3)
    want = np.zeros(trees.shape[1:])
    for t in range(trees.shape[0]):
        want += trees[t]
    want /= trees.shape[0]
    got = model.predict_proba(Xt)
    assert got.tobytes() == want.tobytes()
    assert model.predict(Xt).tolist() == [model.classes_[k] for k in want.argmax(axis=1)]
    for i in range(20):  # the per-example path gives the same numbers
        one = model.predict_proba_one({j: float(Xt[i, j]) for j in range(3)})
        assert [one[c] for c in model.classes_] == want[i].tolist()


def test_classifier_answers_a_block_of_rows_at_a_time(monkeypatch):
    """The trees' probabilities of a batch never take more than the base's bound at once, and
    the answers do not depend on the blocks."""
    from streamforest.engine import classifier_model

    model, X = _classifier()
    Xt = np.random.default_rng(9).uniform(size=(1000, 3))
    whole = model.predict_proba(Xt)
    engine = model.engine_
    sizes = []
    predict_trees = engine.predict_trees

    def recorded(Xa, n_classes=0):
        out = predict_trees(Xa, n_classes=n_classes)
        sizes.append(out.nbytes)
        return out

    bound = 8 * engine.n_trees * 3 * 64  # 64 rows of 4 trees' 3 probabilities
    monkeypatch.setattr(classifier_model, "PREDICT_BLOCK_BYTES", bound)
    monkeypatch.setattr(engine, "predict_trees", recorded)
    blocked = model.predict_proba(Xt)
    assert len(sizes) == 16 and max(sizes) <= bound
    assert blocked.tobytes() == whole.tobytes()


# --- exact properties ----------------------------------------------------------------------------
def _records(model):
    tr = model.engine_.trees
    return [tr.nodes[t, : tr.meta[t, 0]] for t in range(tr.nodes.shape[0])]


def test_range_boxes_hold_their_examples_and_weights_follow_the_recursion():
    X, y = _stream(800, p=4)
    model = AMFRegressor(n_trees=4, seed=1).learn_many(X, y)
    b = layout.VALUE + 1
    for t, rec in enumerate(_records(model)):
        tree_arrays._check_tree(rec, rec.shape[0], 4, t)
        # every row learnt lies in the box of every node on its path
        for x in X[::7]:
            v = 0
            while True:
                lo, hi = rec[v, b::2], rec[v, b + 1 :: 2]
                assert np.all((lo <= x) & (x <= hi)), (t, v)
                if rec[v, layout.LEFT] < 0:
                    break
                f = int(rec[v, layout.FEATURE])
                go = layout.LEFT if x[f] <= rec[v, layout.THRESHOLD] else 1
                v = int(rec[v, go])
        inner = np.flatnonzero(rec[:, layout.LEFT] >= 0)
        left = rec[inner, layout.LEFT].astype(int)
        right = rec[inner, layout.RIGHT].astype(int)
        lw, lt = rec[:, layout.LOG_WEIGHT], rec[:, layout.LOG_TREE]
        below = lt[left] + lt[right]
        # log W(v) = log((w(v) + W(left) W(right)) / 2), and the two weights of a node's
        # prunings, a(v) = w(v) / (2 W(v)) and W(left) W(right) / (2 W(v)), sum to 1
        np.testing.assert_allclose(lt[inner], np.logaddexp(lw[inner], below) - math.log(2))
        mix = rec[inner, layout.MIX]
        np.testing.assert_allclose(mix, 0.5 * np.exp(lw[inner] - lt[inner]))
        np.testing.assert_allclose(mix + 0.5 * np.exp(below - lt[inner]), 1.0)
        leaves = rec[:, layout.LEFT] < 0
        np.testing.assert_array_equal(lt[leaves], lw[leaves])
        # children are born when their parent splits, after it
        time = rec[:, layout.TIME]
        assert np.all(time[left] == rec[inner, layout.SPLIT_TIME])
        assert np.all(time[left] > time[inner]) and np.all(time[left] == time[right])


def test_without_aggregation_a_tree_predicts_its_leaf_mean():
    X, y = _stream(600, p=3)
    model = AMFRegressor(n_trees=3, use_aggregation=False, seed=2).learn_many(X, y)
    P = model.tree_predictions(X)
    for t in range(3):
        leaves = model.engine_.apply(t, model.encode_predict(X))
        for leaf in np.unique(leaves)[:100]:
            rows = leaves == leaf
            np.testing.assert_allclose(P[rows, t], y[rows].mean(), atol=1e-9)
    # a large step puts all the weight on the pruning that erred least: close to the leaves'
    big = AMFRegressor(n_trees=3, step=1e6, seed=2).learn_many(X, y)
    assert np.mean(np.abs(big.predict(X) - y)) < np.mean(np.abs(model.predict(X) - y)) + 0.5


def test_same_seed_same_forest_whatever_the_chunks_threads_or_api():
    X, y = _stream(700, p=3)
    one = AMFRegressor(n_trees=4, seed=9).predict_learn_many(X, y)
    threads = AMFRegressor(n_trees=4, seed=9, n_jobs=2).predict_learn_many(X, y)
    chunks = AMFRegressor(n_trees=4, seed=9)
    parts = [chunks.predict_learn_many(X[k : k + 61], y[k : k + 61]) for k in range(0, 700, 61)]
    dicts = AMFRegressor(n_trees=4, seed=9)
    per_row = []
    for i in range(len(y)):
        x = {j: float(X[i, j]) for j in range(3)}
        per_row.append(dicts.predict_one(x) if i else 0.0)
        dicts.learn_one(x, float(y[i]))
    for other in (threads, np.concatenate(parts), np.array(per_row)):
        np.testing.assert_array_equal(one, other)
    assert not np.array_equal(one, AMFRegressor(n_trees=4, seed=10).predict_learn_many(X, y))


def test_better_than_the_mean_on_friedman():
    X, y = Friedman(function=1, n=6000, seed=11).arrays()
    pred = AMFRegressor(seed=1).predict_learn_many(X, y)
    running_mean = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))])
    mae = np.mean(np.abs(pred - y)[1000:])
    assert mae < 0.65 * np.mean(np.abs(running_mean - y)[1000:]), mae


def test_classifier_learns_and_splits_pure_nodes_only_when_asked():
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(3000, 2))
    y = np.where(X[:, 0] > X[:, 1], 1, 0)
    model = AMFClassifier(seed=3)
    pred = model.predict_learn_many(X, y) if hasattr(model, "predict_learn_many") else None
    assert pred is None  # (the classifier's prequential pass is ConformalClassifier's)
    model.learn_many(X[:2000], y[:2000])
    assert np.mean(model.predict(X[2000:]) == y[2000:]) > 0.95
    proba = model.predict_proba(X[2000:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    pure = AMFClassifier(seed=3, split_pure=True).learn_many(X[:2000], y[:2000])
    assert pure.n_nodes > model.n_nodes


def test_node_limits():
    X, y = _stream(2000, p=3)
    capped = AMFRegressor(n_trees=2, max_nodes=101, seed=1).learn_many(X, y)
    assert all(r.shape[0] <= 101 for r in _records(capped))
    small = AMFRegressor(n_trees=2, max_memory_mb=0.05, seed=1).learn_many(X, y)
    assert small.memory_bytes <= 0.05 * 2**20 + 2 * 2 * tree_arrays.node_bytes(3, 1)
    assert np.isfinite(small.predict(X)).all()


# --- the APIs and their checks ------------------------------------------------------------------
def test_rejected_calls_change_nothing():
    X, y = _stream(300, p=3)
    model = AMFRegressor(n_trees=3, seed=1).learn_many(X, y)
    before = pickle.dumps(model)
    bad_y = y.copy()
    bad_y[5] = np.nan
    for call in (
        lambda: model.learn_many(X, bad_y),
        lambda: model.learn_many(np.where(X > 0.9, np.inf, X), y),
        lambda: model.learn_many(X[:, :2], y),
        lambda: model.predict(X[:, :2]),
        lambda: model.learn_one({0: 1.0, 1: np.inf}, 1.0),
        lambda: model.learn_one({0: 1.0}, float("nan")),
        lambda: model.learn_one({0: 1.0}, 1.0, w=-1.0),
        lambda: model.learn_one([1.0, 2.0], 1.0),
    ):
        with pytest.raises((ValueError, TypeError)):
            call()
        assert pickle.dumps(model) == before
    classifier = AMFClassifier(n_trees=2, seed=1).learn_many(X, X[:, 0] > 0.5)
    before = pickle.dumps(classifier)
    for call in (
        lambda: classifier.learn_many(X, [None] * len(X)),
        lambda: classifier.learn_one({0: np.inf}, True),
        lambda: classifier.predict(X[:, :1]),
    ):
        with pytest.raises((ValueError, TypeError)):
            call()
        assert pickle.dumps(classifier) == before


def test_before_learning_and_emerging_features():
    model = AMFRegressor(n_trees=2, seed=0)
    assert model.predict_one({"a": 1.0}) == 0.0
    assert model.predict(np.ones((2, 3))).tolist() == [0.0, 0.0]
    assert AMFClassifier(seed=0).predict_proba_one({"a": 1.0}) == {}
    X, y = _stream(300, p=3)
    model.learn_many(X, y)
    model.learn_one({0: 0.5, 1: 0.5, 2: 0.5, "new": 3.0, "kind": "u"}, 1.0)
    assert model.n_features_in_ == 5
    probe = X[:20]
    dicts = [model.predict_one({j: float(v) for j, v in enumerate(r)}) for r in probe]
    np.testing.assert_array_equal(model.predict(probe), dicts)
    model.learn_many(X, y)  # arrays still mean columns 0..2
    assert np.isfinite(model.predict(probe)).all()


def test_unseen_category_is_missing():
    rng = np.random.default_rng(0)
    kinds = rng.choice(["a", "b", "c"], size=400)
    xs = rng.uniform(size=400)
    y = np.where(kinds == "a", 5.0, 0.0) + xs
    model = AMFRegressor(n_trees=3, seed=1)
    for k, x, t in zip(kinds, xs, y, strict=True):
        model.learn_one({"kind": str(k), "x": float(x)}, float(t))
    unseen = model.predict_one({"kind": "zzz", "x": 0.3})
    missing = model.predict_one({"x": 0.3})
    assert unseen == missing


def test_parameters():
    for bad in ({"n_trees": 0}, {"step": 0.0}, {"step": math.inf}, {"use_aggregation": 1},
                {"max_nodes": 0}, {"max_memory_mb": -1.0}, {"lambda_value": -1.0},
                {"n_jobs": 0}):  # fmt: skip
        with pytest.raises(ValueError):
            AMFRegressor(**bad).learn_one({"a": 1.0}, 1.0)
    with pytest.raises(TypeError):
        AMFRegressor(seed="x").learn_one({"a": 1.0}, 1.0)
    for bad in ({"dirichlet": 0.0}, {"split_pure": "no"}):
        with pytest.raises(ValueError):
            AMFClassifier(**bad).learn_one({"a": 1.0}, "u")
    with pytest.warns(FutureWarning, match="n_trees"):
        assert AMFRegressor(n_estimators=4).n_trees == 4  # River's name
    m = AMFRegressor(n_trees=3, step=0.5, seed=2)
    assert m.clone().get_params() == m.get_params()
    assert repr(m) == "AMFRegressor(n_trees=3, step=0.5, seed=2)"


# --- saving ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [AMFRegressor, AMFClassifier])
def test_save_load_round_trip_continues_identically(cls, tmp_path):
    X, y = _stream(600, p=3, missing=0.02)
    if cls is AMFClassifier:
        y = np.where(y > np.median(y), "hi", "lo")
    model = cls(n_trees=3, seed=4).learn_many(X[:400], y[:400])
    path = tmp_path / "amf.sfm"
    sf.save(model, path)
    again = sf.load(path)
    assert type(again) is cls
    for m in (model, again):
        m.learn_many(X[400:], y[400:])
        for i in range(50):
            m.learn_one({j: float(X[i, j]) for j in range(3)}, y[i])
    answer = "predict_proba" if cls is AMFClassifier else "predict"
    np.testing.assert_array_equal(getattr(model, answer)(X), getattr(again, answer)(X))
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(getattr(model, answer)(X), getattr(copy, answer)(X))


def test_a_damaged_tree_is_refused(tmp_path):
    X, y = _stream(300, p=3)
    model = AMFRegressor(n_trees=2, seed=4).learn_many(X, y)
    for column, value in ((layout.LEFT, 10**6), (layout.PARENT, 3.5),
                          (layout.FEATURE, 7)):  # fmt: skip
        bad = pickle.loads(pickle.dumps(model))
        nodes = bad.engine_.trees.nodes
        inner = int(np.flatnonzero(nodes[0, :, layout.LEFT] >= 0)[1])
        nodes[0, inner, column] = value
        path = tmp_path / "bad.sfm"
        sf.save(bad, path)
        with pytest.raises(ValueError, match="bad.sfm.*malformed Mondrian trees"):
            sf.load(path)


# --- interval methods and prediction sets -------------------------------------------------------
def test_normalized_conformal_and_adaptive_over_amf():
    X, y = Friedman(function=1, n=3000, seed=2).arrays()
    check_normalized_conformal_over(AMFRegressor(n_trees=5), X, y)
    aci = sf.AdaptiveConformal(sf.NormalizedConformal(AMFRegressor(n_trees=3), seed=1))
    _, iv = aci.predict_learn_many(X[:1500], y[:1500], alpha=0.1)
    assert 0.8 < np.mean((y[500:1500] >= iv[500:, 0]) & (y[500:1500] <= iv[500:, 1])) < 0.97


def test_cp_approximate_over_a_bagged_amf_on_arrays():
    X, y = Friedman(function=1, n=2500, seed=3).arrays()
    model = sf.CPApproximate(AMFRegressor(n_trees=10, lambda_value=1.0), calibration_size=300,
                             seed=2)  # fmt: skip
    _, iv = model.predict_learn_many(X, y, alpha=0.1)
    assert np.isfinite(iv[1000:]).all()
    assert 0.8 < np.mean((y[1000:] >= iv[1000:, 0]) & (y[1000:] <= iv[1000:, 1])) < 0.99
    with pytest.raises(TypeError, match="arena"):  # its per-example path runs arena kernels
        model.learn_one({f"x{j + 1}": 0.5 for j in range(10)}, 1.0)


@pytest.mark.parametrize("method", ["OnlineQRF", "ConformalQRF", "GaussianInterval", "CPExact"])
def test_methods_that_read_hoeffding_leaves_refuse(method):
    X, y = _stream(200, p=3)
    model = getattr(sf, method)(AMFRegressor(n_trees=2), seed=1)
    with pytest.raises(TypeError, match="Mondrian"):
        model.learn_many(X, y)


def test_conformal_classifier_over_amf():
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(2500, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=2500) > 0.5, "a", "b")
    cc = sf.ConformalClassifier(AMFClassifier(n_trees=5, seed=2), conformity_score="lac", seed=1)
    covered = []
    for k in range(0, 2500, 50):  # (a chunk is scored with the model before it)
        _, _, sets = cc.predict_learn_many(X[k : k + 50], y[k : k + 50], alpha=0.1)
        classes = list(cc.classes_)
        covered += [bool(sets[i, classes.index(y[k + i])]) for i in range(len(sets))]
    assert 0.85 < np.mean(covered[1000:]) < 0.97
    assert cc.predict_set_one({0: 0.9, 1: 0.5, 2: 0.5}, alpha=0.1) == ["a"]


def test_registry_entries():
    from streamforest import registry

    m = registry.build("amf", {"n_trees": 4, "step": 0.5}, seed=3)
    assert isinstance(m, AMFRegressor) and m.n_trees == 4 and m.seed == 3
    c = registry.build("conformal-amf-classifier", {"dirichlet": 0.2}, seed=3)
    assert isinstance(c.model, AMFClassifier) and c.model.dirichlet == 0.2
