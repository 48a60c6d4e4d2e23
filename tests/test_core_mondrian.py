"""The compiled core's aggregated Mondrian forests (``streamforest._core.mondrian``): the trees'
invariants (boxes hold the rows learnt, counts add up, the aggregation weights follow their
recursion), predictions against a plain Python walk of the records, the per-example and batch
passes against each other, and refused arguments."""

import math

import numpy as np
import pytest

from streamforest import _core
from streamforest.mondrian import layout
from streamforest.mondrian import state as tree_arrays

core = _core.mondrian


# --- helpers: a forest's arrays and the passes the engine runs over them ------------------------
def _params(classes=0, step=1.0, aggregate=True, dirichlet=0.5, split_pure=False, max_nodes=0):
    p = np.zeros(layout.N_PARAMS)
    p[layout.P_STEP] = step
    p[layout.P_AGGREGATE] = 1.0 if aggregate else 0.0
    p[layout.P_DIRICHLET] = dirichlet
    p[layout.P_SPLIT_PURE] = 1.0 if split_pure else 0.0
    p[layout.P_MAX_NODES] = max_nodes
    p[layout.P_CLASSES] = classes
    return p


class Forest:
    """A forest's arrays and scratch, as :class:`~streamforest.mondrian.engine.MondrianEngine`
    holds them; ``passes`` is the module that runs them (``_core.mondrian``)."""

    def __init__(self, passes, n_trees, n_features, params, seed=0, capacity=4):
        self.passes, self.params = passes, params
        self.K = max(int(params[layout.P_CLASSES]), 1)
        self.P = n_features
        seeds = np.random.SeedSequence(seed).generate_state(n_trees, np.uint64)
        self.trees = tree_arrays.allocate([int(s) for s in seeds], capacity, n_features, self.K)
        self.extension = np.zeros((n_trees, max(n_features, 1)))
        self.saved = np.zeros((n_trees, max(n_features, 1)))

    @property
    def T(self):
        return self.trees.nodes.shape[0]

    def grow(self):
        C = self.trees.nodes.shape[1]
        self.trees = tree_arrays.resized(self.trees, self.K, 2 * C, self.P, self.K)

    def learn(self, X, y, W, predict=False):
        """Every tree learns the rows (tree-major, growing when a pass stops for room); returns
        the predictions made before learning when ``predict``."""
        n = X.shape[0]
        out = np.zeros((self.T, n)) if predict else np.zeros((1, 1))
        for t in range(self.T):
            start = 0
            while True:
                tr = self.trees
                start = self.passes.learn_rows(tr.nodes, tr.meta, tr.tree_rng, self.extension,
                                               self.saved, self.params, t, X, y, W, start,
                                               predict, out)  # fmt: skip
                if start == n:
                    break
                self.grow()
        return out

    def learn_one(self, nominal, row, y, weights, predict, shift):
        """One example, every tree in order (the engine's ``_one``); returns (most nodes,
        predictions)."""
        most = int(self.trees.meta[:, layout.N_NODES].max())
        if most + 2 > self.trees.nodes.shape[1]:
            self.grow()
        tr = self.trees
        clean, out = np.zeros(self.P), np.zeros(self.T)
        most = self.passes.learn_one(tr.nodes, tr.meta, tr.tree_rng, self.extension, self.saved,
                                     self.params, nominal, row, clean, y, weights, predict, shift,
                                     out)  # fmt: skip
        return most, out

    def predict(self, X):
        P = np.zeros((self.T, X.shape[0]))
        for t in range(self.T):
            self.passes.predict_rows(self.trees.nodes, self.params, t, X, P)
        return P

    def predict_classes(self, X):
        P = np.zeros((self.T, X.shape[0], self.K))
        for t in range(self.T):
            self.passes.predict_class_rows(self.trees.nodes, self.params, t, X, P)
        return P

    def records(self, t):
        return self.trees.nodes[t, : self.trees.meta[t, layout.N_NODES]]


def _rows(n, p, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = X.sum(axis=1) + 0.3 * rng.standard_normal(n)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


def _classes(X, K):
    s = np.nan_to_num(X).sum(axis=1)
    return np.floor((np.argsort(np.argsort(s)) * K) / X.shape[0]).astype(np.float64)


# --- plain Python walks of the records ----------------------------------------------------------
def _leaf(rec, x):
    v = 0
    while rec[v, layout.LEFT] >= 0:
        left, right = int(rec[v, layout.LEFT]), int(rec[v, layout.RIGHT])
        xv = x[int(rec[v, layout.FEATURE])]
        if xv != xv:
            v = left if rec[left, layout.COUNT] >= rec[right, layout.COUNT] else right
        else:
            v = left if xv <= rec[v, layout.THRESHOLD] else right
    return v


def _predict_value(rec, x, aggregate=True):
    v = _leaf(rec, x)
    p = float(rec[v, layout.VALUE])
    while aggregate and v != 0:
        v = int(rec[v, layout.PARENT])
        a = float(rec[v, layout.MIX])
        p = a * float(rec[v, layout.VALUE]) + (1.0 - a) * p
    return p


def _predict_classes(rec, x, K, d, aggregate=True):
    def own(v):
        den = float(rec[v, layout.COUNT]) + d * K
        return [(float(rec[v, layout.VALUE + k]) + d) / den for k in range(K)]

    v = _leaf(rec, x)
    p = own(v)
    while aggregate and v != 0:
        v = int(rec[v, layout.PARENT])
        a = float(rec[v, layout.MIX])
        p = [a * q + (1.0 - a) * r for q, r in zip(own(v), p, strict=True)]
    return p


# --- reference tests ----------------------------------------------------------------------------
def test_constants_are_the_python_layout():
    for name in ("LEFT", "RIGHT", "FEATURE", "THRESHOLD", "COUNT", "MIX", "PARENT", "TIME",
                 "SPLIT_TIME", "LOG_WEIGHT", "LOG_TREE", "LEFT_TREE", "RIGHT_TREE", "VALUE",
                 "N_NODES", "N_SEEN", "P_STEP", "P_AGGREGATE", "P_DIRICHLET", "P_SPLIT_PURE",
                 "P_MAX_NODES", "P_CLASSES", "N_PARAMS"):  # fmt: skip
        assert getattr(core, name) == getattr(layout, name), name


@pytest.mark.parametrize("classes", [0, 3])
def test_trees_hold_their_rows_and_follow_the_weights_recursion(classes):
    X, y = _rows(400, 4, seed=1)
    if classes:
        y = _classes(X, classes)
    f = Forest(core, 3, 4, _params(classes=classes), seed=2)
    f.learn(X, y, np.ones((3, 400)))
    b = layout.VALUE + max(classes, 1)
    for t in range(3):
        rec = f.records(t)
        n = rec.shape[0]
        assert n > 20 and f.trees.meta[t, layout.N_SEEN] == 400
        tree_arrays._check_tree(rec, n, 4, t)
        # every row learnt lies in the box of every node on its path
        for x in X:
            v = 0
            while True:
                assert np.all((rec[v, b::2] <= x) & (x <= rec[v, b + 1 :: 2])), (t, v)
                if rec[v, layout.LEFT] < 0:
                    break
                left = x[int(rec[v, layout.FEATURE])] <= rec[v, layout.THRESHOLD]
                v = int(rec[v, layout.LEFT if left else layout.RIGHT])
        inner = np.flatnonzero(rec[:, layout.LEFT] >= 0)
        left = rec[inner, layout.LEFT].astype(int)
        right = rec[inner, layout.RIGHT].astype(int)
        # a node has seen what its children have (unit weights: exact)
        count = rec[:, layout.COUNT]
        assert np.array_equal(count[inner], count[left] + count[right])
        assert count[0] == 400
        if classes:
            values = rec[:, layout.VALUE : layout.VALUE + classes]
            assert np.array_equal(values[inner], values[left] + values[right])
            assert np.array_equal(values.sum(axis=1), count)
        lw, lt = rec[:, layout.LOG_WEIGHT], rec[:, layout.LOG_TREE]
        # the copies of the children's subtree weights are theirs, exactly
        assert np.array_equal(rec[inner, layout.LEFT_TREE], lt[left])
        assert np.array_equal(rec[inner, layout.RIGHT_TREE], lt[right])
        below = lt[left] + lt[right]
        np.testing.assert_allclose(lt[inner], np.logaddexp(lw[inner], below) - math.log(2),
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(rec[inner, layout.MIX], 0.5 * np.exp(lw[inner] - lt[inner]),
                                   rtol=1e-9)  # fmt: skip
        leaves = rec[:, layout.LEFT] < 0
        assert np.array_equal(lt[leaves], lw[leaves])
        assert np.all(lw <= 0.0)  # losses only take weight away
        time = rec[:, layout.TIME]
        assert np.all(time[left] == rec[inner, layout.SPLIT_TIME])
        assert np.all(time[left] > time[inner]) and np.all(np.isinf(rec[leaves, layout.SPLIT_TIME]))


def test_regression_value_is_the_mean_of_the_targets():
    X, y = _rows(50, 2, seed=3)
    f = Forest(core, 1, 2, _params(), seed=4)
    f.learn(X, y, np.ones((1, 50)))
    assert math.isclose(f.trees.nodes[0, 0, layout.VALUE], y.mean(), rel_tol=1e-12)
    # log weight of the root: minus the squared losses of its prequential predictions
    mean, loss = 0.0, 0.0
    for i, yi in enumerate(y):
        if i:
            loss += 0.5 * (mean - yi) ** 2
        mean += (yi - mean) / (i + 1)
    assert math.isclose(f.trees.nodes[0, 0, layout.LOG_WEIGHT], -loss, rel_tol=1e-12)


@pytest.mark.parametrize("aggregate", [True, False])
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_predictions_are_the_walk_of_the_records(aggregate, missing):
    X, y = _rows(300, 3, seed=5, missing=missing)
    f = Forest(core, 2, 3, _params(aggregate=aggregate), seed=6)
    f.learn(X, y, np.ones((2, 300)))
    Xt, _ = _rows(100, 3, seed=7, missing=missing)
    P = f.predict(Xt)
    leaves = np.zeros(100, np.int64)
    for t in range(2):
        rec = f.records(t)
        expected = [_predict_value(rec, x, aggregate) for x in Xt]
        assert P[t].tolist() == expected
        core.apply_rows(f.trees.nodes, t, Xt, leaves)
        assert leaves.tolist() == [_leaf(rec, x) for x in Xt]


@pytest.mark.parametrize("aggregate", [True, False])
def test_class_probabilities_are_the_walk_of_the_records(aggregate):
    X, _ = _rows(300, 3, seed=8, missing=0.1)
    y = _classes(X, 4)
    d = 0.7
    f = Forest(core, 2, 3, _params(classes=4, dirichlet=d, aggregate=aggregate), seed=9)
    f.learn(X, y, np.ones((2, 300)))
    Xt, _ = _rows(60, 3, seed=10, missing=0.1)
    P = f.predict_classes(Xt)
    for t in range(2):
        rec = f.records(t)
        for i, x in enumerate(Xt):
            assert P[t, i].tolist() == _predict_classes(rec, x, 4, d, aggregate)
    np.testing.assert_allclose(P.sum(axis=2), 1.0, rtol=1e-12)
    mean, best = np.zeros((60, 4)), np.zeros(60, np.int64)
    core.mean_probabilities(P, mean, best)
    assert np.array_equal(mean, (P[0] + P[1]) / 2)
    assert np.array_equal(best, mean.argmax(axis=1))  # (argmax: the first on ties too)


def test_a_tiny_tree_by_hand():
    # two rows on one feature: the root splits between them, each leaf holds one row
    f = Forest(core, 1, 1, _params(), seed=11)
    f.learn(np.array([[0.0], [1.0]]), np.array([2.0, 4.0]), np.ones((1, 2)))
    rec = f.records(0)
    assert rec.shape[0] == 3
    assert 0.0 <= rec[0, layout.THRESHOLD] < 1.0 and rec[0, layout.FEATURE] == 0
    left, right = int(rec[0, layout.LEFT]), int(rec[0, layout.RIGHT])
    assert rec[left, layout.VALUE] == 2.0 and rec[right, layout.VALUE] == 4.0
    assert rec[0, layout.VALUE] == 3.0 and rec[0, layout.COUNT] == 2.0
    # the root lost the loss of predicting 4 by 2; the old leaf moved, the new one never lost
    assert rec[0, layout.LOG_WEIGHT] == -2.0
    assert rec[left, layout.LOG_WEIGHT] == 0.0 and rec[right, layout.LOG_WEIGHT] == 0.0
    # log W(root) = log((e^-2 + 1) / 2), a = e^-2 / (e^-2 + 1)
    assert math.isclose(rec[0, layout.LOG_TREE], math.log((math.exp(-2) + 1) / 2), rel_tol=1e-14)
    a = rec[0, layout.MIX]
    assert math.isclose(a, math.exp(-2) / (math.exp(-2) + 1), rel_tol=1e-14)
    P = f.predict(np.array([[-5.0], [5.0], [np.nan]]))
    assert P[0, 0] == a * 3.0 + (1 - a) * 2.0 and P[0, 1] == a * 3.0 + (1 - a) * 4.0
    assert P[0, 2] == P[0, 0]  # missing: the child with more weight, left on ties


def test_per_example_calls_build_the_batch_trees():
    X, y = _rows(200, 3, seed=12, missing=0.05)
    params = _params(max_nodes=41)
    a = Forest(core, 3, 3, params, seed=13)
    b = Forest(core, 3, 3, params, seed=13)
    W = np.random.default_rng(14).poisson(1.0, (3, 200)).astype(np.float64)
    Pa = a.learn(X, y, W, predict=True)
    nominal = np.zeros(3, np.int8)
    for i in range(200):
        most, out = b.learn_one(nominal, X[i], y[i], np.ascontiguousarray(W[:, i]), True, 0.5)
        assert most == b.trees.meta[:, 0].max()
        assert np.array_equal(out, Pa[:, i] + 0.5)
    assert np.array_equal(a.trees.meta, b.trees.meta)
    used = a.trees.meta[:, 0].max()
    assert 30 < used <= 41
    assert np.array_equal(a.trees.tree_rng, b.trees.tree_rng)
    an, bn = a.trees.nodes[:, :used], b.trees.nodes[:, :used]
    assert np.array_equal(an.view(np.uint64), bn.view(np.uint64))
    Xt, _ = _rows(20, 3, seed=15)
    P = a.predict(Xt)
    out = np.zeros(3)
    for i in range(20):
        m = core.predict_one(a.trees.nodes, params, nominal, Xt[i], np.zeros(3), 1.5, out)
        assert np.array_equal(out, P[:, i] + 1.5) and m == (out[0] + out[1] + out[2]) / 3


def test_cleaning_rows():
    nominal = np.array([0, 1, 1], np.int8)
    X = np.array([[-1.0, -1.0, 2.0], [np.nan, 0.0, -3.0]])
    core.clean_rows(nominal, X)
    assert np.array_equal(X, [[-1.0, np.nan, 2.0], [np.nan, 0.0, np.nan]], equal_nan=True)
    # a short row gets NaN for the features it lacks, a long one is cut
    f = Forest(core, 1, 3, _params(), seed=0)
    clean, out = np.zeros(3), np.zeros(1)
    core.predict_one(f.trees.nodes, f.params, nominal, np.array([-2.0]), clean, 0.0, out)
    assert np.array_equal(clean, [-2.0, np.nan, np.nan], equal_nan=True)
    core.predict_one(f.trees.nodes, f.params, nominal, np.array([1.0, -2.0, 3.0, 4.0]), clean,
                     0.0, out)  # fmt: skip
    assert np.array_equal(clean, [1.0, np.nan, 3.0], equal_nan=True)


def test_empty_trees_and_zero_weights_change_nothing():
    f = Forest(core, 2, 2, _params(classes=3), seed=0)
    before = [a.copy() for a in f.trees]
    X = np.ones((5, 2))
    f.learn(X, np.zeros(5), np.zeros((2, 5)))
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(before, f.trees, strict=True))
    scratch, mean = np.zeros(3), np.zeros(3)
    best = core.predict_proba_one(f.trees.nodes, f.params, np.zeros(2, np.int8), X[0],
                                  np.zeros(2), scratch, mean)  # fmt: skip
    assert best == 0 and np.array_equal(mean, np.full(3, 1 / 3))


def test_refused_arguments():
    f = Forest(core, 2, 2, _params(classes=2), seed=0)
    tr, p = f.trees, f.params
    X, y, W = np.zeros((3, 2)), np.zeros(3), np.ones((2, 3))
    ext, sv, P = f.extension, f.saved, np.zeros((1, 1))

    def learn(**kw):
        args = dict(nodes=tr.nodes, meta=tr.meta, rng=tr.tree_rng, extension=ext, saved=sv,
                    params=p, t=0, X=X, y=y, W=W, start=0, predict=False, P=P)  # fmt: skip
        args.update(kw)
        return core.learn_rows(*args.values())

    with pytest.raises(ValueError, match="class index"):
        learn(y=np.array([0.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="class index"):
        learn(y=np.array([0.0, 0.5, 1.0]))
    assert learn(y=np.array([0.0, 7.0, 1.0]), W=np.array([[1.0, 0.0, 1.0]] * 2)) == 3  # (w=0)
    with pytest.raises(ValueError, match="records"):
        learn(X=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="W"):
        learn(W=np.ones((2, 2)))
    with pytest.raises(ValueError, match="y"):
        learn(y=np.zeros(2))
    with pytest.raises(ValueError, match="P"):
        learn(predict=True)
    with pytest.raises(IndexError):
        learn(t=2)
    with pytest.raises(ValueError, match="extension"):
        learn(extension=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="params"):
        learn(params=np.zeros(5))
    with pytest.raises(ValueError, match="class count"):
        learn(params=_params(classes=1.5))
    with pytest.raises(ValueError, match="Dirichlet"):
        learn(params=_params(classes=2, dirichlet=0.0))
    with pytest.raises(TypeError):
        learn(nodes=tr.nodes.astype(np.float32))
    with pytest.raises(TypeError):
        learn(meta=tr.meta.astype(np.int32))
    with pytest.raises(TypeError):
        learn(nodes=np.asfortranarray(tr.nodes))
    with pytest.raises(ValueError, match="3-d"):
        learn(nodes=tr.nodes[0])
    bad = tr.meta.copy()
    bad[1, 0] = tr.nodes.shape[1] + 1
    with pytest.raises(ValueError, match="node count"):
        learn(meta=bad)
    # one example: room for a split is needed unless the tree is at its limit
    full = tr.meta.copy()
    full[:, 0] = tr.nodes.shape[1] - 1
    args = [tr.nodes, full, tr.tree_rng, ext, sv, p, np.zeros(2, np.int8), X[0], np.zeros(2),
            1.0, np.ones(2), False, 0.0, np.zeros(2)]  # fmt: skip
    with pytest.raises(ValueError, match="room"):
        core.learn_one(*args)
    args[5] = _params(classes=2, max_nodes=tr.nodes.shape[1] - 1)
    core.learn_one(*args)
    args[9] = 2.0
    with pytest.raises(ValueError, match="class index"):
        core.learn_one(*args)
    with pytest.raises(ValueError, match="more classes"):
        core.predict_class_rows(tr.nodes, p, 0, X, np.zeros((2, 3, 3)))
    with pytest.raises(ValueError, match="no tree"):
        core.mean_probabilities(np.zeros((0, 3, 2)), np.zeros((3, 2)), np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="columns"):
        g = Forest(core, 1, 3, _params(), seed=0)
        g.learn(*_rows(30, 3, seed=1), np.ones((1, 30)))
        core.apply_rows(g.trees.nodes, 0, np.zeros((2, 1)), np.zeros(2, np.int64))


def test_overflowing_extensions_split_on_no_feature():
    """Two features each extended by 1e308: their sum is infinite without an infinite one, so
    no feature is drawn (-1) and the split reads the row's last feature (``x[-1]``, as the
    kernels always did); the trees still predict their records' walk."""
    X = np.array([[1e308, 1e308], [0.0, 0.0], [1e307, -1.0], [np.nan, 5e307], [-1e308, 0.0]])
    y = np.arange(5.0)
    f = Forest(core, 4, 2, _params(), seed=3)
    f.learn(X, y, np.ones((4, 5)), True)
    nodes = f.trees.nodes
    assert ((nodes[..., layout.LEFT] >= 0) & (nodes[..., layout.FEATURE] == -1)).any(axis=1).all()
    Xt = np.array([[0.0, 1e308], [1e308, 0.0], [np.nan, np.nan]])
    P = f.predict(Xt)
    for t in range(4):
        assert P[t].tolist() == [_predict_value(f.records(t), x) for x in Xt]
