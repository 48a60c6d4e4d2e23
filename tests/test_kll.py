"""KLL sketch: accuracy against exact ranks and Apache DataSketches, weights, merging."""

import numpy as np
import pytest

from streamforest import KLLSketch
from streamforest.sketches import kll

ds = pytest.importorskip("datasketches")

N = 100_000
QS = np.linspace(0.01, 0.99, 99)
BOUND = ds.kll_doubles_sketch.get_normalized_rank_error(200, True)  # all-quantiles bound, ~1.65%


def orders():
    v = np.arange(N, dtype=float)
    rng = np.random.default_rng(7)
    zoom = np.empty(N)  # converging from both ends (adversarial for compactors)
    zoom[0::2] = v[: N // 2]
    zoom[1::2] = v[::-1][: N // 2]
    return {
        "sorted": v,
        "reversed": v[::-1].copy(),
        "random": rng.permutation(v),
        "zoom_in": zoom,
        "blocks": np.concatenate([rng.permutation(b) for b in np.split(v, 100)][::-1]),
    }


def rank_errors(quantiles):
    """|true normalised rank - q| of the returned items (values are 0..N-1 so rank = value)."""
    return np.abs((quantiles + 0.5) / N - QS)


@pytest.mark.parametrize("order", list(orders()))
def test_rank_error_within_datasketches_bound(order):
    v = orders()[order]
    errs = []
    for seed in range(3):
        s = KLLSketch(200, seed=seed)
        s.update_many(v)
        assert s.n == N
        errs.append(rank_errors(s.quantile(QS)).max())
    d = ds.kll_doubles_sketch(200)
    d.update(v)
    ref = rank_errors(np.array([d.get_quantile(q) for q in QS])).max()
    assert max(errs) <= BOUND, (order, errs, BOUND)
    # and of the same order as the reference implementation's own error
    assert np.mean(errs) <= 2 * ref + 0.004, (order, errs, ref)


def test_retained_items_match_datasketches():
    for n in (150, 1000, 10_000, 100_000):
        s = KLLSketch(200, seed=0)
        s.update_many(np.arange(n, dtype=float))
        d = ds.kll_doubles_sketch(200)
        d.update(np.arange(n, dtype=float))
        assert abs(s.num_retained - d.num_retained) <= 0.1 * d.num_retained + 8
        assert s.num_retained <= kll.row_capacity(200)


def test_exact_below_capacity():
    s = KLLSketch(200, seed=0)
    vals = np.random.default_rng(1).normal(size=150)
    s.update_many(vals)
    srt = np.sort(vals)
    for q in (0.0, 0.1, 0.5, 0.9, 1.0):
        # inclusive rule: smallest item whose cumulative count reaches q * n
        k = max(0, int(np.ceil(q * 150)) - 1)
        assert s.quantile(q) == srt[k]


def test_weighted_update_equals_repeated_in_weight_and_accuracy():
    rng = np.random.default_rng(3)
    v = rng.permutation(np.arange(20_000, dtype=float))
    w = rng.poisson(3.0, size=v.shape[0]) + 1
    s = KLLSketch(200, seed=1)
    s.update_many(v, w)
    assert s.n == int(w.sum())
    # exact weighted ranks
    order = np.argsort(v)
    cum = np.cumsum(w[order]) / w.sum()
    got = s.quantile(QS)
    true_rank = cum[np.searchsorted(v[order], got)]
    assert np.abs(true_rank - QS).max() <= BOUND + 1.0 / 200


def test_merge_of_partitions():
    v = np.random.default_rng(5).permutation(np.arange(N, dtype=float))
    parts = np.array_split(v, 7)
    merged = KLLSketch(200, seed=0)
    for i, p in enumerate(parts):
        s = KLLSketch(200, seed=i + 1)
        s.update_many(p)
        before = s.quantile(QS)
        merged.merge(s)
        assert np.array_equal(s.quantile(QS), before)  # the merged-in sketch is untouched
    assert merged.n == N
    assert rank_errors(merged.quantile(QS)).max() <= BOUND


def test_bad_input():
    s = KLLSketch(200)
    with pytest.raises(ValueError):
        s.update(float("nan"))
    with pytest.raises(ValueError):
        s.update_many([1.0, 2.0], [1, 0])
    with pytest.raises(ValueError):
        s.quantile(1.5)
    with pytest.raises(ValueError):
        KLLSketch(4)
    assert s.n == 0 and np.isnan(s.quantile(0.5))


@pytest.mark.parametrize("mode", ["empty", "parent"])
def test_leaf_sketches_at_a_split(mode):
    """Children of a split start with an empty sketch, or with a copy of the parent's."""
    from streamforest import HoeffdingTreeRegressor
    from streamforest.sketches.kll import LV_N

    rng = np.random.default_rng(0)
    tree = HoeffdingTreeRegressor(
        grace_period=50, leaf_model="mean", leaf_quantile_k=64, leaf_quantile_split=mode, seed=0
    )
    n_before = 0
    for i in range(5000):
        x = rng.random()
        tree.learn_many(np.array([[x]]), np.array([10.0 * (x > 0.5) + rng.normal()]))
        if tree.n_splits:
            n_before = i + 1
            break
    assert tree.n_splits == 1
    st = tree.state_
    leaves = [int(st.nd_leaf[n]) for n in (1, 2)]
    ns = [int(st.lf_skl[s, LV_N]) for s in leaves]
    if mode == "empty":
        assert ns == [0, 0]
    else:
        assert ns == [n_before, n_before]
        a, b = leaves
        assert np.array_equal(st.lf_skl[a], st.lf_skl[b])
        lo = st.lf_skl[a, 1]
        assert np.array_equal(st.lf_sk[a, lo:], st.lf_sk[b, lo:])
