"""The compiled core's batch leaf-weight forests (``streamforest._core.batch``): tree walks,
means and the Meinshausen mixture's quantiles and highest-density intervals against plain
Python definitions, and bad arguments refused."""

import numpy as np
import pytest

from streamforest import _core

core = _core.batch


def random_forest(rng, T, n_features, depth):
    """Padded arrays of ``T`` random trees (``-1`` children at leaves)."""
    W = 2 ** (depth + 1) - 1
    left = np.full((T, W), -1, np.int64)
    right = np.full((T, W), -1, np.int64)
    feature = np.zeros((T, W), np.int64)
    threshold = np.zeros((T, W))
    value = rng.normal(size=(T, W))
    for t in range(T):
        count = 1
        frontier = [(0, 0)]
        while frontier:
            node, d = frontier.pop()
            if d < depth and rng.random() < 0.8:
                left[t, node], right[t, node] = count, count + 1
                feature[t, node] = rng.integers(0, n_features)
                threshold[t, node] = rng.normal()
                frontier += [(count, d + 1), (count + 1, d + 1)]
                count += 2
    return left, right, feature, threshold, value


def walk(left, right, feature, threshold, x, t):
    node = 0
    while left[t, node] >= 0:
        node = left[t, node] if x[feature[t, node]] <= threshold[t, node] else right[t, node]
    return node


def test_apply_and_mean_walk_the_trees():
    rng = np.random.default_rng(0)
    left, right, feature, threshold, value = random_forest(rng, 7, 3, 6)
    X = rng.normal(size=(200, 3))
    X[0, :] = threshold[0, 0]  # equal to a threshold goes left
    X[1, 0] = np.nan  # NaN compares false: right
    out = np.empty((200, 7), np.int64)
    core.forest_apply(left, right, feature, threshold, X, out)
    for i in range(200):
        for t in range(7):
            assert out[i, t] == walk(left, right, feature, threshold, X[i], t)
    mean = np.empty(200)
    core.forest_mean(value, out, mean)
    for i in range(200):
        s = 0.0
        for t in range(7):
            s += value[t, out[i, t]]
        assert mean[i] == s / 7


def _mixture(buf, start, stop, leaves_row):
    """The Meinshausen weights of one row: each tree holding data weighs the same, shared
    equally by its leaf's targets."""
    runs = [(start[t, j], stop[t, j]) for t, j in enumerate(leaves_row) if stop[t, j] > start[t, j]]
    v, w = [], []
    for s, e in runs:
        v += buf[s:e].tolist()
        w += [1.0 / ((e - s) * len(runs))] * (e - s)
    return np.array(v), np.array(w)


def _brute_hdi(v, w, mass):
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    need = mass * w.sum() * (1.0 - 1e-12)
    best = (v[0], v[-1])
    for i in range(len(v)):
        acc = 0.0
        for j in range(i, len(v)):
            acc += w[j]
            if acc >= need:
                if v[j] - v[i] < best[1] - best[0]:
                    best = (v[i], v[j])
                break
    return best


def test_leaf_mixture_quantiles_and_intervals_are_their_definitions():
    """Leaves of 1, 2, 4 or 8 targets and 1, 2 or 4 trees holding data: every weight a binary
    fraction, every sum exact, so the inclusive quantile and the shortest interval are those
    of the weighted targets computed any way."""
    rng = np.random.default_rng(1)
    T, W = 4, 6
    sizes = rng.choice([0, 1, 2, 4, 8], size=(T, W))
    sizes[:, 0] = rng.choice([1, 2, 4, 8], T)
    start, stop = np.zeros((T, W), np.int64), np.zeros((T, W), np.int64)
    chunks, pos = [], 0
    for t in range(T):
        for j in range(W):
            chunks.append(np.sort(np.round(rng.normal(size=sizes[t, j]), 1)))
            start[t, j], stop[t, j] = pos, pos + sizes[t, j]
            pos += sizes[t, j]
    buf = np.concatenate(chunks)
    leaves = rng.integers(0, W, size=(300, T)).astype(np.int64)
    leaves[:, 0] = 0  # tree 0 always holds data
    holding = (stop[np.arange(T), leaves] > start[np.arange(T), leaves]).sum(axis=1)
    leaves = leaves[holding != 3]  # 1, 2 or 4 trees: exact weights
    n = len(leaves)
    qs = np.r_[0.0, np.linspace(0, 1, 33), 1.0]
    masses = np.array([0.25, 0.5, 0.8, 0.9, 1.0])
    out_q, lo, hi = np.empty((n, len(qs))), np.empty((n, 5)), np.empty((n, 5))
    core.leaf_mixture_query(buf, start, stop, leaves, qs, masses, out_q, lo, hi)
    for i in range(n):
        v, w = _mixture(buf, start, stop, leaves[i])
        order = np.argsort(v, kind="stable")
        sv, cum = v[order], np.cumsum(w[order])
        assert cum[-1] == 1.0
        expected = [sv[np.searchsorted(cum, q)] for q in qs]
        assert out_q[i].tolist() == expected, i
        for k, mass in enumerate(masses):
            assert (lo[i, k], hi[i, k]) == _brute_hdi(v, w, mass), (i, mass)


def test_no_data_gives_nan():
    start = stop = np.zeros((2, 3), np.int64)
    leaves = np.zeros((4, 2), np.int64)
    out_q, lo, hi = np.empty((4, 1)), np.empty((4, 1)), np.empty((4, 1))
    core.leaf_mixture_query(np.zeros(0), start, stop, leaves, np.array([0.5]), np.array([0.9]),
                            out_q, lo, hi)  # fmt: skip
    assert np.isnan(out_q).all() and np.isnan(lo).all() and np.isnan(hi).all()


def test_bad_arguments_are_refused():
    rng = np.random.default_rng(2)
    left, right, feature, threshold, value = random_forest(rng, 3, 2, 3)
    X = rng.normal(size=(5, 2))
    out = np.empty((5, 3), np.int64)
    with pytest.raises(TypeError):  # not an array
        core.forest_apply(left.tolist(), right, feature, threshold, X, out)
    with pytest.raises(TypeError):
        core.forest_apply(left, right, feature, threshold, X, out.astype(np.float64))
    with pytest.raises(ValueError):
        core.forest_apply(left, right[:, :-1].copy(), feature, threshold, X, out)
    with pytest.raises(ValueError):
        core.forest_apply(left, right, feature, threshold, X, np.empty((4, 3), np.int64))
    bad = left.copy()
    bad[0, 0] = 10**6  # a child outside the tree
    with pytest.raises(ValueError):
        core.forest_apply(bad, right, feature, threshold, X, out)
    cyc_l, cyc_r = left.copy(), right.copy()
    cyc_l[0, 0], cyc_r[0, 0] = 0, 0  # a cycle
    with pytest.raises(ValueError):
        core.forest_apply(cyc_l, cyc_r, feature, threshold, X, out)
    badf = feature.copy()
    badf[:, 0] = 5  # a feature outside X
    with pytest.raises(ValueError):
        core.forest_apply(left, right, badf, threshold, X, out)
    core.forest_apply(left, right, feature, threshold, X, out)
    with pytest.raises(ValueError):
        core.forest_mean(value, out + 100, np.empty(5))
    with pytest.raises(ValueError):
        core.forest_mean(value, out, np.empty(4))
    start = np.zeros((3, left.shape[1]), np.int64)
    stop = np.ones((3, left.shape[1]), np.int64)
    qs, masses = np.array([0.5]), np.array([0.9])
    o = np.empty((5, 1))
    core.leaf_mixture_query(np.zeros(1), start, stop, out, qs, masses, o, o.copy(), o.copy())
    with pytest.raises(ValueError):  # leaves' targets past the buffer
        core.leaf_mixture_query(np.zeros(0), start, stop, out, qs, masses, o, o.copy(), o.copy())
    with pytest.raises(ValueError):  # a leaf outside the trees
        core.leaf_mixture_query(np.zeros(1), start, stop, out + 100, qs, masses, o, o, o)
    with pytest.raises(ValueError):  # outputs too small
        core.leaf_mixture_query(np.zeros(1), start, stop, out, qs, masses, o[:4], o, o)
