"""KLL sketch: accuracy against exact ranks and Apache DataSketches, weights, merging."""

import numpy as np
import pytest

from streamforest import KLLSketch, _core
from streamforest.sketches import kll

SK = _core.sketch  # the sketches' compiled kernels (src/core/sketch)

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
    ns = [int(st.lf_sketch_levels[s, LV_N]) for s in leaves]
    if mode == "empty":
        assert ns == [0, 0]
    else:
        assert ns == [n_before, n_before]
        a, b = leaves
        assert np.array_equal(st.lf_sketch_levels[a], st.lf_sketch_levels[b])
        lo = st.lf_sketch_levels[a, 1]
        assert np.array_equal(st.lf_sketch[a, lo:], st.lf_sketch[b, lo:])


# ------------------------------------------------------------------------------------------------
# the batch and buffered update paths, serialisation, merging across processes
def _state(s: KLLSketch):
    s._flush()
    lv = s._lv[0]
    return lv.copy(), s._items[0, lv[1] :].copy(), int(s._rng[0]), s._bounds.copy()


def _bits(x):
    x = np.asarray(x)
    return x.view(np.int64) if x.dtype == np.float64 else x


def _same(a, b):
    """The same sketch bit for bit (-0.0 is not 0.0): levels, items, random state, bounds."""
    return all(
        np.array_equal(_bits(x), _bits(y)) for x, y in zip(_state(a), _state(b), strict=True)
    )


def _one_insertion_per_value(k, values, weights, seed):
    """The sketch of one compiled ``kll_update`` per value (the forest's kernel)."""
    s = KLLSketch(k, seed=seed)
    v = np.asarray(values, np.float64)
    SK.update_many(s._items, s._lv, v, np.asarray(weights, np.int64), s._capt, s._rng)
    if len(v):
        s._bounds[:] = v.min(), v.max()
    return s


@pytest.mark.parametrize("n", [7, 150, 600, 5_000, 120_000])
def test_batch_and_buffered_updates_equal_one_insertion_per_value(n):
    """update_many (sort-and-merge batches) and update (buffered) give exactly the sketch of
    one compiled insertion per value: same items, levels, random draws, answers."""
    _quantiles = SK.quantiles

    rng = np.random.default_rng(n)
    v = np.round(rng.normal(size=n), 3)  # ties included, and -0.0 beside 0.0
    one_by_one = _one_insertion_per_value(200, v, np.ones(n), seed=9)
    batch = KLLSketch(200, seed=9)
    for part in np.array_split(v, 3):
        batch.update_many(part)
    buffered = KLLSketch(200, seed=9)
    for x in v.tolist():
        buffered.update(x)
    assert buffered.n == n
    assert _same(batch, one_by_one) and _same(buffered, one_by_one)
    # queries from the cached sorted view equal the compiled run walk
    walk = np.empty(len(QS))
    _quantiles(one_by_one._items, one_by_one._lv, QS, walk)
    assert np.array_equal(batch.quantile(QS), walk)
    assert [batch.quantile(float(q)) for q in QS] == walk.tolist()
    lv = one_by_one._lv[0]
    for x in (-1.0, 0.0, 0.5, 3.0):
        exact = sum(
            int(np.searchsorted(one_by_one._items[0, lv[h + 1] : lv[h + 2]], x, side="right")) << h
            for h in range(int(lv[kll.LV_H]))
        )
        assert batch.rank(x) == exact / n


def test_buffered_updates_with_weights_and_signed_zeros_equal_one_insertion_per_value():
    """update(x) and update(x, w) mixed, for several k, with many ties of -0.0 and 0.0 (equal
    but not the same bits) and more values than one buffer holds: bit for bit the sketch of
    one compiled kll_update per value in the same order, with the same weights; reading the
    sketch in between (which puts the buffered values in) changes nothing."""
    from streamforest.sketches.sketch import BUFFER

    rng = np.random.default_rng(5)
    for trial in range(8):
        k = int(rng.choice([8, 50, 200]))
        n = int(rng.integers(BUFFER // 2, 3 * BUFFER))
        v = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0, 0.5, 2.0**-1074]), size=n)
        mask = rng.random(n) < 0.5
        v[mask] = np.round(rng.normal(size=int(mask.sum())), 2)  # more ties, some -0.0
        w = np.where(rng.random(n) < 0.05, rng.integers(2, 50, size=n), 1)
        s = KLLSketch(k, seed=trial)
        for i, (x, wi) in enumerate(zip(v.tolist(), w.tolist(), strict=True)):
            if wi == 1:
                s.update(x)
            else:
                s.update(x, wi)
            if i % 997 == 0:
                s.quantile(0.5)
        reference = _one_insertion_per_value(k, v, w, seed=trial)
        assert len(s._buf) == BUFFER  # room for BUFFER values once two came one at a time
        assert s.n == int(w.sum())
        assert _same(s, reference), (trial, k, n)
        mixed = KLLSketch(k, seed=trial)  # a whole array and single values in turn
        for part in np.array_split(np.arange(n), 5):
            if part[0] % 2:
                mixed.update_many(v[part], w[part])
            else:
                for x, wi in zip(v[part].tolist(), w[part].tolist(), strict=True):
                    mixed.update(x, wi)
        assert _same(mixed, reference), (trial, k, n)
    arrays_only = KLLSketch(50, seed=0)
    arrays_only.update_many(np.arange(10_000.0))
    arrays_only.update(1.0)
    assert len(arrays_only._buf) == 1  # no buffer room taken by a sketch fed arrays


def test_bytes_round_trip_answers_and_continues_identically():
    rng = np.random.default_rng(4)
    s = KLLSketch(64, seed=3)
    s.update_many(rng.normal(size=30_000))
    s.update_many(rng.normal(size=500), rng.integers(1, 5, size=500))
    s.update(0.25)  # still pending when serialised
    data = s.to_bytes()
    assert data[:5] == b"SFKLL" and data[5] == 1
    t = KLLSketch.from_bytes(data)
    assert (t.k, t.n, t.num_retained, t.min, t.max) == (s.k, s.n, s.num_retained, s.min, s.max)
    assert np.array_equal(t.quantile(QS), s.quantile(QS)) and t.rank(0.1) == s.rank(0.1)
    more = rng.normal(size=20_000)
    s.update_many(more)
    t.update_many(more)
    assert _same(s, t) and t.to_bytes() == s.to_bytes()
    empty = KLLSketch.from_bytes(KLLSketch(16).to_bytes())
    assert empty.n == 0 and np.isnan(empty.quantile(0.5))


def test_from_bytes_refuses_what_is_not_a_sketch():
    s = KLLSketch(32, seed=0)
    s.update_many(np.arange(1000.0))
    good = bytearray(s.to_bytes())
    with pytest.raises(ValueError, match="no SFKLL header"):
        KLLSketch.from_bytes(b"pickle" + bytes(good))
    future = bytearray(good)
    future[5] = 2
    with pytest.raises(ValueError, match="format version 2; this streamforest reads version 1"):
        KLLSketch.from_bytes(bytes(future))
    with pytest.raises(ValueError, match="corrupt"):
        KLLSketch.from_bytes(bytes(good[:-8]))
    bad_n = bytearray(good)
    bad_n[10] ^= 1  # n's lowest byte: the levels no longer weigh n
    with pytest.raises(ValueError, match="levels weigh"):
        KLLSketch.from_bytes(bytes(bad_n))
    unsorted = bytearray(good)
    unsorted[-16:] = unsorted[-8:] + unsorted[-16:-8]  # swap the top level's last two items
    with pytest.raises(ValueError, match="not sorted"):
        KLLSketch.from_bytes(bytes(unsorted))


CHILD = """
import sys
import numpy as np
from streamforest import KLLSketch
part, seed = int(sys.argv[1]), int(sys.argv[2])
v = np.random.default_rng(seed).permutation(np.arange(200_000, dtype=float))
s = KLLSketch(200, seed=part + 1)
for chunk in np.array_split(v[part::2], 10):
    s.update_many(chunk)
sys.stdout.write(s.to_bytes().hex())
"""


def test_merge_of_sketches_built_in_two_processes():
    import subprocess
    import sys

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(p), "11"], stdout=subprocess.PIPE, text=True
        )  # fmt: skip
        for p in (0, 1)
    ]
    parts = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0
        parts.append(KLLSketch.from_bytes(bytes.fromhex(out)))
    merged = KLLSketch(200, seed=0)
    for part in parts:
        merged.merge(part)
    n = 200_000
    assert merged.n == n and merged.min == 0 and merged.max == n - 1
    # values are 0..n-1: the exact normalised rank of a value is (value + 1) / n
    got = merged.quantile(QS)
    assert np.abs((got + 1) / n - QS).max() <= BOUND
    probes = np.linspace(0, n - 1, 57)
    assert max(abs(merged.rank(x) - (x + 1) / n) for x in probes) <= BOUND


def test_rank_error_of_quantiles_and_ranks_against_datasketches_same_data():
    """On the same data, the normalised rank errors of both implementations stay within the KLL
    bound for k (DataSketches: 1.65% for k = 200, all quantiles at once, 99% confidence), and
    ours is of the same size as DataSketches'."""
    rng = np.random.default_rng(21)
    v = rng.lognormal(size=N)  # skewed, distinct values
    ordered = np.sort(v)
    probes = ordered[rng.integers(0, N, 200)]
    ours_q, ours_r = [], []
    for seed in range(5):
        s = KLLSketch(200, seed=seed)
        s.update_many(v)
        ours_q.append(np.abs(np.searchsorted(ordered, s.quantile(QS), "right") / N - QS).max())
        exact = np.searchsorted(ordered, probes, "right") / N
        ours_r.append(np.abs(np.array([s.rank(x) for x in probes]) - exact).max())
    theirs_q, theirs_r = [], []
    for _ in range(5):
        d = ds.kll_doubles_sketch(200)
        d.update(v)
        q = np.array(d.get_quantiles(QS))
        theirs_q.append(np.abs(np.searchsorted(ordered, q, "right") / N - QS).max())
        exact = np.searchsorted(ordered, probes, "right") / N
        theirs_r.append(np.abs(np.array([d.get_rank(x) for x in probes]) - exact).max())
    assert max(ours_q) <= BOUND and max(ours_r) <= BOUND, (ours_q, ours_r)
    assert max(theirs_q) <= BOUND and max(theirs_r) <= BOUND
    assert np.mean(ours_q) <= 2 * np.mean(theirs_q) + 0.002
    assert np.mean(ours_r) <= 2 * np.mean(theirs_r) + 0.002


def test_pickle_and_copy_carry_pending_values():
    import copy
    import pickle

    s = KLLSketch(32, seed=1)
    for x in range(100):
        s.update(float(x))
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert other.n == 100 and np.array_equal(other.quantile(QS), s.quantile(QS))
        assert _same(other, s)


def test_batched_merge_equals_one_insertion_per_item():
    def one_by_one(items, lv, o_items, o_lv, capt, rng):
        """Each item of level ``h`` of the other sketch inserted into level ``h`` (a weight of
        ``2**h`` is one insertion there)."""
        for h in range(o_lv[0, kll.LV_H]):
            for i in range(o_lv[0, h + 1], o_lv[0, h + 2]):
                SK.kll_update(items, lv, 0, float(o_items[0, i]), 1 << h, capt, rng)

    rng = np.random.default_rng(0)
    for trial in range(12):
        k = int(rng.choice([8, 50, 200]))
        x = np.round(rng.normal(size=int(rng.integers(1, 40_000))), 2)
        a, b = KLLSketch(k, seed=trial), KLLSketch(k, seed=trial)
        a.update_many(x)
        b.update_many(x)
        other = KLLSketch(k, seed=99)
        other.update_many(np.round(rng.normal(size=int(rng.integers(1, 60_000))), 2))
        a.merge(other)
        one_by_one(b._items, b._lv, other._items, other._lv, b._capt, b._rng)
        b._bounds[:] = min(b.min, other.min), max(b.max, other.max)
        b._view = None
        assert _same(a, b), (trial, k)


def test_one_level_queries_equal_the_compiled_walk_and_refuse_bad_levels():
    """quantile(q) of one level (its level table and its bisection) and rank(x) give exactly the
    compiled walk's answers and the exact weighted ranks, for many k, sizes and tied values;
    levels outside [0, 1], NaN levels and NaN ranks are refused."""
    import math

    _quantiles = SK.quantiles

    rng = np.random.default_rng(1)
    for trial in range(12):
        k = int(rng.choice([8, 50, 200, 1000]))
        v = np.round(rng.normal(size=int(rng.integers(1, 100_000))), int(rng.integers(0, 4)))
        s = KLLSketch(k, seed=trial)
        s.update_many(v)
        edges = [0.0, 1.0, 5e-324, 1 - 2**-53, -0.0]
        qs = np.concatenate([rng.random(1000), np.linspace(0, 1, 1001), edges])
        walk = np.empty(len(qs))
        _quantiles(s._items, s._lv, qs, walk)
        first = [s.quantile(float(q)) for q in qs]  # the first query builds the sorted view,
        again = [s.quantile(float(q)) for q in qs]  # the second the level table
        assert s._qscale > 0
        assert first == walk.tolist() and again == walk.tolist(), trial
        assert np.array_equal(s.quantile(qs), walk)
        for bad in (1.0000000000000002, -5e-324, math.nan, math.inf, -math.inf, 2.0):
            with pytest.raises(ValueError, match="in \\[0, 1\\]"):
                s.quantile(bad)
        lv = s._lv[0]
        for x in [*rng.normal(size=50).tolist(), float(v.max()), float(v.min()), 1e9, -1e9]:
            exact = sum(
                int(np.searchsorted(s._items[0, lv[h + 1] : lv[h + 2]], x, side="right")) << h
                for h in range(int(lv[kll.LV_H]))
            )
            assert s.rank(x) == exact / s.n, (trial, x)
        with pytest.raises(ValueError, match="NaN"):
            s.rank(math.nan)
    e = KLLSketch(200)
    assert math.isnan(e.quantile(0.5)) and math.isnan(e.quantile(0.5)) and math.isnan(e.rank(1.0))
    e.update(3.0)
    assert e.quantile(0.5) == 3.0 and e.quantile(0.2) == 3.0
    e.update(1.0)  # a change after the table was built: the table is dropped
    assert e.quantile(0.2) == 1.0 and e.rank(2.0) == 0.5


def _exact_rank(s, x):
    lv = s._lv[0]
    weight = sum(
        int(np.searchsorted(s._items[0, lv[h + 1] : lv[h + 2]], x, side="right")) << h
        for h in range(int(lv[kll.LV_H]))
    )
    return weight / s.n


def test_rank_table_equals_exact_weighted_ranks_everywhere():
    """rank(x) of a sketch ranked often (its bucket table, and the bisection of the buckets
    with an item) equals the exact weighted rank of the retained items at every item, just
    beside each, between them, outside the range and at +-inf, for skewed, narrow, wide and
    one-valued data; an update after the table is built is seen by the next rank."""
    import math

    rng = np.random.default_rng(3)
    data = {
        "uniform": rng.random(50_000),
        "lognormal": rng.lognormal(0, 3, 30_000),  # most items in a few buckets
        "ties": np.round(rng.normal(size=40_000), 1),
        "narrow": 1.0 + rng.random(20_000) * 1e-12,
        "wide": rng.choice([-1.7e308, 1.7e308], 500),  # max - min overflows: no table
        "tiny": rng.choice([0.0, 5e-324, 1e-323], 3000),  # the buckets would be too narrow
        "one value": np.full(1000, 2.5),
    }
    for name, v in data.items():
        s = KLLSketch(int(rng.choice([8, 200])), seed=1)
        s.update_many(v)
        items = np.unique(s._items[0, s._lv[0, 1] :])
        probes = np.concatenate([items, np.nextafter(items, -np.inf), np.nextafter(items, np.inf),
                                 (items[:-1] + items[1:]) / 2, rng.choice(v, 200),
                                 [items[0] - 1, items[-1] + 1, -0.0, 0.0]])  # fmt: skip
        probes = probes[np.isfinite(probes)].tolist() + [1e300, -1e300, math.inf, -math.inf]
        for _ in range(2):  # the sorted arrays first, then the table
            for x in probes:
                assert s.rank(x) == _exact_rank(s, x), (name, x)
        assert (s._rtable[2] > 0) == (name not in ("wide", "tiny", "one value")), name
        s.update(float(items[0]))  # a change: the table is not used
        assert s.rank(float(items[0])) == _exact_rank(s, float(items[0])), name
        with pytest.raises(ValueError, match="NaN"):
            s.rank(math.nan)


def test_update_refuses_what_is_not_a_finite_number_and_changes_nothing():
    s = KLLSketch(32, seed=0)
    s.update_many(np.arange(100.0))
    s.update(0.5)
    before = s.to_bytes()
    for bad, err in ((float("nan"), ValueError), (float("inf"), ValueError), (10**400, ValueError),
                     ("1.5", TypeError), (None, TypeError), ([1.0], TypeError)):  # fmt: skip
        with pytest.raises(err):
            s.update(bad)
    with pytest.raises(ValueError, match="weights"):
        s.update(1.0, 0)
    assert s.to_bytes() == before
    s.update(np.float32(2.0))  # numpy scalars and ints are numbers
    s.update(7)
    s.update(np.array(3.0))
    assert s.n == 104


# ------------------------------------------------------------------------------------------------
# leaf sketches (trees' leaves, OnlineQRF): a row of leaf_row_capacity items whatever the levels
def _leaf_sketch(values, weights, k=200, seed=0):
    from streamforest import rng as _rng

    width = kll.leaf_row_capacity(k)
    items = np.zeros((1, width))
    lv = np.zeros((1, kll.LV_WIDTH), np.int64)
    lv[0, kll.LV_H], lv[0, 1], lv[0, 2] = 1, width, width  # kll_reset
    SK.update_many(items, lv, np.asarray(values, float), np.asarray(weights, np.int64),
                   kll.leaf_capacity_table(k), _rng.new_state(seed))  # fmt: skip
    return items[0], lv[0]


def _inclusive_quantiles(items, lv, qs):
    vals, wts = [], []
    for h in range(lv[kll.LV_H]):
        s, e = lv[h + 1], lv[h + 2]
        assert np.all(np.diff(items[s:e]) >= 0)  # every level sorted
        vals.append(items[s:e])
        wts.append(np.full(e - s, 2.0**h))
    v, w = np.concatenate(vals), np.concatenate(wts)
    o = np.argsort(v, kind="stable")
    cw = np.cumsum(w[o])
    return v[o][np.minimum(np.searchsorted(cw, qs * cw[-1]), v.size - 1)]


def test_leaf_sketch_table_fits_its_row_and_is_exact_while_young():
    width = kll.leaf_row_capacity(200)
    assert width == 160 < kll.row_capacity(200) / 4  # 769 items before, then 256
    t = kll.leaf_capacity_table(200)
    nominal = kll.capacity_table(200)
    assert np.array_equal(t[0], nominal[0])
    tops = [int(t[1 + H, 0]) for H in range(1, kll.MAX_LEVELS + 1)]
    assert tops[0] == width  # one level: exact up to its row
    # k_H never grows while every level keeps MIN_WIDTH items (20 levels in 160 items); past
    # that (a weight of millions) the lowest levels keep 2 and the top gets the rest
    floor_levels = width // kll.MIN_WIDTH
    assert (np.diff(tops[:floor_levels]) <= 0).all()
    for H in range(1, kll.MAX_LEVELS + 1):
        caps = t[1 + H, :H]
        assert t[1, H] == caps.sum() <= width
        assert caps.min() >= (kll.MIN_WIDTH if H <= floor_levels else 2)
        assert not t[1 + H, H:].any()
    assert 48 <= tops[7] <= 56  # eight levels: k_H ~ 52
    with pytest.raises(ValueError):
        kll.leaf_capacity_table(200, width=kll.LEAF_MIN_ROW - 1)
    for k in (8, 20, 65535):  # any valid k has a table that fits
        tk = kll.leaf_capacity_table(k)
        assert (tk[1, 1:] <= kll.leaf_row_capacity(k)).all()


def _naive_leaf_table(k, width):
    """The leaf capacity table by the plain search: ``k_H`` down from ``k`` one by one."""
    t = np.zeros((kll.MAX_LEVELS + 2, kll.MAX_LEVELS + 1), dtype=np.int64)
    t[0] = kll.capacity_table(k)[0]
    geo = (2.0 / 3.0) ** np.arange(kll.MAX_LEVELS + 1)
    for H in range(1, kll.MAX_LEVELS + 1):
        kh, floor = k, kll.MIN_WIDTH
        while True:
            caps = np.maximum(floor, (kh * geo[:H] + 0.5).astype(np.int64))
            if caps.sum() <= width:
                break
            if kh > floor:
                kh -= 1
            else:
                assert floor > 2
                kh, floor = k, 2
        t[1 + H, :H] = caps
        t[1, H] = caps.sum()
    return t


@pytest.mark.parametrize("k", [8, 9, 20, 200, 333, 700])
def test_leaf_capacity_table_equals_the_plain_search(k):
    for width in sorted({kll.LEAF_MIN_ROW, kll.LEAF_MIN_ROW + 7, kll.leaf_row_capacity(k), 500}):
        np.testing.assert_array_equal(
            kll.leaf_capacity_table(k, width), _naive_leaf_table(k, width)
        )


def test_leaf_sketch_is_exact_while_young():
    vals = np.random.default_rng(1).normal(size=150)
    items, lv = _leaf_sketch(vals, np.ones(150))
    assert lv[kll.LV_N] == 150 and kll.leaf_row_capacity(200) - lv[1] == 150
    qs = np.array([0.0, 0.1, 0.5, 0.9, 1.0])
    srt = np.sort(vals)
    exact = srt[np.maximum(0, np.ceil(qs * 150).astype(int) - 1)]
    np.testing.assert_array_equal(_inclusive_quantiles(items, lv, qs), exact)


@pytest.mark.parametrize("order", ["random", "sorted", "zoom_in"])
def test_leaf_sketch_rank_error_against_exact_ranks(order):
    """A leaf sketch that saw 100k (unit or Poisson bagging) weights keeps its 160 items, the
    exact total weight, and a rank error within twice DataSketches' k = 200 bound (measured
    worst over 99 quantiles: 2.5% random, 1.9% sorted, 3.05% zoom-in order; 1.0-1.7% with
    rows of 256 items, 0.7% at full width; its accuracy is that of k_H ~ 50)."""
    v = orders()[order]
    rng = np.random.default_rng(5)
    for weights in (np.ones(N, np.int64), rng.poisson(1.0, N)):
        errs = []
        for seed in range(2):
            items, lv = _leaf_sketch(v, weights, seed=seed)
            assert lv[kll.LV_N] == weights.sum()
            assert kll.leaf_row_capacity(200) - lv[1] <= kll.leaf_capacity_table(200)[1, lv[0]]
            est = _inclusive_quantiles(items, lv, QS)
            cum = np.cumsum(weights)  # values are 0..N-1 in some order: rank by weight
            order_w = np.zeros(N)
            order_w[v.astype(int)] = weights
            rank = np.cumsum(order_w)[est.astype(int)] / cum[-1]
            errs.append(np.abs(rank - QS).max())
        assert max(errs) <= 2 * BOUND, (order, errs)


def test_qrf_saved_with_full_width_leaf_rows_loads_answers_and_learns(tmp_path):
    """An OnlineQRF saved before leaf sketches were cut to 1.28 k items (tests/data, written at
    e489e81: rows of 769 items, the two-row capacity table) loads, answers the quantiles it
    did, learns on in its own rows (the kernels take either table), and saves and loads
    bit-identical; a new model's leaf rows are 160 items."""
    from pathlib import Path

    import streamforest as sf
    from streamforest import streams

    data = Path(__file__).parent / "data"
    m = sf.load(data / "qrf_leaf_rows_769.sfm")
    X, y = streams.Friedman(function=1, n=3000, seed=0).arrays()
    qs = [0.05, 0.5, 0.95]
    np.testing.assert_array_equal(
        m.predict_quantiles(X[2500:2600], qs), np.load(data / "qrf_leaf_rows_769.npy")
    )
    e = m.forest_.engine_

    def layouts():
        return {
            (e.state(t).lf_sketch.shape[1], e.state(t).sketch_capacity.shape)
            for t in range(e.n_trees)
        }

    assert layouts() == {(kll.row_capacity(200), (2, kll.MAX_LEVELS + 1))}
    n0 = sum(int(e.state(t).lf_sketch_levels[:, kll.LV_N].sum()) for t in range(e.n_trees))
    m.learn_many(X[2500:], y[2500:])
    assert layouts() == {(kll.row_capacity(200), (2, kll.MAX_LEVELS + 1))}
    assert sum(int(e.state(t).lf_sketch_levels[:, kll.LV_N].sum()) for t in range(e.n_trees)) > n0
    q = m.predict_quantiles(X[:300], qs)
    assert np.isfinite(q).all() and (np.diff(q, axis=1) >= 0).all()
    sf.save(m, tmp_path / "a.sfm")
    m2 = sf.load(tmp_path / "a.sfm")
    np.testing.assert_array_equal(m2.predict_quantiles(X[:300], qs), q)
    for t in range(e.n_trees):
        for a, b in zip(e.state(t), m2.forest_.engine_.state(t), strict=True):
            np.testing.assert_array_equal(a, b)
    fresh = sf.OnlineQRF(forest=sf.OnlineForestRegressor(n_trees=2, seed=0))
    fresh.learn_many(X[:500], y[:500])
    fe = fresh.forest_.engine_
    assert {fe.state(t).lf_sketch.shape[1] for t in range(2)} == {kll.leaf_row_capacity(200)}
    assert fe.state(0).sketch_capacity.shape == (kll.MAX_LEVELS + 2, kll.MAX_LEVELS + 1)


# ------------------------------------------------------------------------------------------------
# update(x): buffered values (sketch.BUFFER) and level 0's unsorted runs (_sketch_kernels._settle)
def _readers(other):
    """What can read a sketch, each as a function of it returning comparable results."""
    import copy
    import pickle

    def merged_into(s):
        t = KLLSketch(s.k, seed=5)
        t.update_many(np.arange(-50.0, 50.0))
        t.merge(s)
        return t.to_bytes()

    def merging(s):
        s.merge(other)
        return s.to_bytes()

    def continued(s):
        s.update_many(np.linspace(-3.0, 3.0, 777))
        return s.to_bytes()

    return {
        "len": len,
        "n": lambda s: s.n,
        "min max": lambda s: (_bits(s.min), _bits(s.max)),
        "num_retained": lambda s: s.num_retained,
        "quantiles": lambda s: _bits(s.quantile(QS)).tolist(),
        "quantile": lambda s: _bits(s.quantile(0.37)),
        "rank": lambda s: s.rank(0.3),
        "repr": repr,
        "to_bytes": lambda s: s.to_bytes(),
        "pickle": lambda s: pickle.loads(pickle.dumps(s)).to_bytes(),
        "deepcopy": lambda s: copy.deepcopy(s).to_bytes(),
        "merge into another": merged_into,
        "merge another in": merging,
        "update_many after": continued,
    }


@pytest.mark.parametrize("k,n", [(8, 1), (8, 30_000), (50, 2048), (50, 2049), (200, 5_000)])
def test_single_updates_are_invisible_to_every_reader(k, n):
    """A sketch fed update(x) one value at a time (values collected, then inserted in runs, some
    left unsorted in level 0) answers every reader, read first after pending values, exactly as
    the sketch fed the same values by update_many, with the same seed: the same bits of every
    answer, of to_bytes, of a pickled or copied sketch, of merges either way."""
    rng = np.random.default_rng(n)
    v = np.round(rng.normal(size=n), 2)  # ties
    v[rng.random(n) < 0.01] = -0.0  # runs with signed zeros take the insertion path
    other = KLLSketch(k, seed=11)
    other.update_many(rng.normal(size=3000))
    values = v.tolist()
    for name, read in _readers(other).items():
        reference = KLLSketch(k, seed=3)
        reference.update_many(v)
        single = KLLSketch(k, seed=3)
        for x in values:
            single.update(x)
        assert read(single) == read(reference), name
        assert single.to_bytes() == reference.to_bytes(), name
    reference = KLLSketch(k, seed=3)
    reference.update_many(v)
    by_class = KLLSketch(k, seed=3)  # KLLSketch.update(s, x) is the same buffer
    for x in values:
        KLLSketch.update(by_class, x)
    assert by_class.to_bytes() == reference.to_bytes()


def test_sorting_networks_sort():
    """The sketches' level-0 networks sort every 0/1 input of 16 (0-1 principle: then they sort
    everything) and random inputs of both sizes, ties and infinities included."""
    sort = {16: SK.sort16, 32: SK.sort32}
    zero_one = (np.arange(1 << 16)[:, None] >> np.arange(16)) & 1
    for row in zero_one[::7]:
        y = row.astype(float)
        SK.sort16(y)
        assert np.all(np.diff(y) >= 0)
    rng = np.random.default_rng(1)
    for trial in range(300):
        for n, f in sort.items():
            x = np.round(rng.normal(size=n), int(trial % 3))
            x[rng.random(n) < 0.2] = np.inf
            y = x.copy()
            f(y)
            assert np.array_equal(y, np.sort(x)), (n, trial)


def test_a_sketch_with_pending_values_is_freed():
    """update is a closure set on the sketch that holds the sketch (a reference cycle, as a
    bound method kept on the instance would be): a dropped sketch, buffer and all, is freed by
    the cycle collector."""
    import gc
    import weakref

    s = KLLSketch(50, seed=0)
    for x in range(3000):
        s.update(float(x))
    s.update(np.float32(1.5))  # the slow path too
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None


def _check_one_value_queries(s, label):
    """Every one-value query of ``s``, asked enough times to build and use its tables (and
    through ``KLLSketch.quantile``/``.rank``), answers exactly as the array path and the exact
    weighted ranks; bad levels and NaN ranks are refused.  Returns the answers (the same
    levels and, for the same items, the same values every call)."""
    import math

    rng = np.random.default_rng(0)

    lv = s._lv[0]  # not s.n: reading it would put the pending values in
    items = np.unique(s._items[0, lv[1] :]) if lv[kll.LV_N] else np.array([0.0])
    qs = [*rng.random(300).tolist(), 0.0, -0.0, 1.0, 5e-324, 1 - 2**-53, 0.5, 0.25]
    qs += (np.arange(0, 4097) / 4096).tolist()  # every bucket edge of the smallest table
    xs = [*rng.choice(items, 100).tolist(), *np.nextafter(items[:50], np.inf).tolist()]
    xs += [float(items[0]) - 1, float(items[-1]) + 1, 1e300, -1e300, math.inf, -math.inf, -0.0]
    # first (values may be pending: the tables of before a change must not answer), then
    # through the array path, then again: the sorted arrays first, then the tables
    first = [s.quantile(q) for q in qs], [s.rank(x) for x in xs]
    want_q = s.quantile(np.array(qs)).tolist()
    want_r = [_exact_rank(s, x) if s.n else math.nan for x in xs]
    for got_q, got_r in (first, ([s.quantile(q) for q in qs], [s.rank(x) for x in xs])):
        np.testing.assert_array_equal(got_q, want_q, err_msg=label)
        np.testing.assert_array_equal(got_r, want_r, err_msg=label)
    got_q, got_r = [s.quantile(q) for q in qs], [s.rank(x) for x in xs]
    np.testing.assert_array_equal(got_q, want_q, err_msg=label)
    np.testing.assert_array_equal(got_r, want_r, err_msg=label)
    assert [KLLSketch.quantile(s, q) for q in qs[:50]] == got_q[:50] or not s.n, label
    assert [KLLSketch.rank(s, x) for x in xs[:50]] == got_r[:50] or not s.n, label
    if s.n:
        assert s._qscale > 0, label  # the level table was built and used
    for bad in (1.0000000000000002, 1.0001, 1 + 2**-12, 2.0, -5e-324, -0.5, math.nan, math.inf,
                -math.inf):  # fmt: skip
        with pytest.raises(ValueError, match="in \\[0, 1\\]"):
            s.quantile(bad)
    with pytest.raises(ValueError, match="NaN"):
        s.rank(math.nan)
    with pytest.raises(TypeError, match="quantile levels must be numbers"):
        s.quantile("0.5")
    with pytest.raises(TypeError, match="rank needs a number"):
        s.rank("1")
    assert s.quantile(np.float32(0.5)) == want_q[qs.index(0.5)] or not s.n, label
    assert s.quantile(1) == want_q[qs.index(1.0)] or not s.n, label
    return got_q, got_r


def test_one_value_query_tables_follow_every_change():
    """quantile(q) and rank(x) of one value (closures on the sketch with their tables in cells)
    answer exactly as the array path / the exact weighted ranks after every kind of change made
    after the tables were built and used: update (buffered, weighted), update_many, merge either
    way, and in a pickled, deep-copied, copied or from_bytes sketch (each then changed too)."""
    import copy
    import pickle

    rng = np.random.default_rng(5)
    for k in (8, 200):
        s = KLLSketch(k, seed=1)
        other = KLLSketch(k, seed=2)
        other.update_many(rng.normal(3, 1, 20_000))
        _check_one_value_queries(s, "empty")
        s.update_many(np.round(rng.normal(size=30_000), 2))
        _check_one_value_queries(s, "update_many")
        s.update(10.0)
        _check_one_value_queries(s, "update")
        for x in rng.normal(size=3000).tolist():
            s.update(x)
        _check_one_value_queries(s, "update x 3000")
        s.update(-20.0, weight=5)
        _check_one_value_queries(s, "weighted update")
        s.merge(other)
        _check_one_value_queries(s, "merge other in")
        before = _check_one_value_queries(other, "other")
        other.merge(s)
        after = _check_one_value_queries(other, "merged into other")
        assert before != after
        for name, twin in (
            ("pickle", pickle.loads(pickle.dumps(s))),
            ("deepcopy", copy.deepcopy(s)),
            ("from_bytes", KLLSketch.from_bytes(s.to_bytes())),
            ("copy", copy.copy(s)),  # last: a shallow copy shares the sketch's arrays
        ):
            a = _check_one_value_queries(twin, name)
            assert a == _check_one_value_queries(s, name + ", the original")
            twin.update_many(rng.normal(-3, 1, 5000))
            if name != "copy":
                assert _check_one_value_queries(s, name + " changed, the original") == a
            _check_one_value_queries(twin, name + " changed")


def test_query_functions_held_past_their_sketch_keep_it():
    """A sketch's update, quantile and rank still work when the sketch itself is gone (a
    temporary, or dropped after taking the function), as bound methods would; a sketch whose
    functions are not held is freed by the cycle collector."""
    import gc
    import math
    import weakref

    a = KLLSketch(50, seed=1)
    a.update_many(np.arange(10_000.0))
    data = a.to_bytes()
    assert KLLSketch.from_bytes(data).quantile(0.5) == a.quantile(0.5)
    assert KLLSketch.from_bytes(data).rank(5000.0) == a.rank(5000.0)
    assert math.isnan(KLLSketch(8).quantile(0.5)) and math.isnan(KLLSketch(8).rank(1.0))
    q, r = KLLSketch.from_bytes(data).quantile, KLLSketch.from_bytes(data).rank
    gc.collect()
    assert [q(x / 40) for x in range(41)] == [a.quantile(x / 40) for x in range(41)]
    assert [r(x * 300.0) for x in range(41)] == [a.rank(x * 300.0) for x in range(41)]
    u = KLLSketch(8).update
    for x in range(5000):
        u(float(x))
    u(np.float32(1.5))  # the slow path reaches the sketch
    with pytest.raises(ValueError, match="finite"):
        u(math.nan)
    del q, r, u
    s = KLLSketch(50, seed=0)
    s.update_many(np.arange(5000.0))
    for i in range(40):
        s.quantile(i / 40)
        s.rank(i * 100.0)
    s.update(3.0)
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None


def test_many_runs_quantile_is_the_scan_bit_for_bit():
    """The heap walk over many runs (a forest's leaf sketches) returns exactly what the scan
    of the runs' heads returns, at both ends, with ties within and across runs (rounded
    values), weights of several magnitudes, and few runs (where it is the scan)."""
    from streamforest.sketches.kll import SCAN_RUNS

    runs_quantile, runs_quantile_many = SK.runs_quantile, SK.runs_quantile_many

    rng = np.random.default_rng(7)
    qs = np.r_[0.0, 1e-9, np.linspace(0.01, 0.99, 41), 0.5, 1.0 - 1e-12, 1.0]
    for nruns in (1, 3, SCAN_RUNS, SCAN_RUNS + 1, 40, 90):
        for rounding in (None, 1):
            lens = rng.integers(1, 40, nruns)
            runs = [np.sort(rng.normal(size=n)) for n in lens]
            if rounding is not None:
                runs = [np.round(r, rounding) for r in runs]
            buf = np.concatenate(runs)
            re_ = np.cumsum(lens).astype(np.int64)
            rs = (re_ - lens).astype(np.int64)
            rw = rng.choice([1.0, 2.0, 4.0, 8.0], nruns)  # KLL levels' weights: exact sums
            if rounding is None:
                rw /= rng.integers(1, 30)
            total = float((rw * lens).sum())
            hv, cur, heap = np.empty(nruns), np.empty(nruns, np.int64), np.empty(nruns, np.int64)
            exact = np.arange(1.0, total, max(1.0, total // 37)) / total  # cum == target
            for q in np.r_[qs, exact]:
                a = runs_quantile(buf, rs, re_, rw, np.int64(nruns), total, q, hv, cur)
                b = runs_quantile_many(buf, rs, re_, rw, np.int64(nruns), total, q, hv, cur, heap)
                assert a == b or (np.isnan(a) and np.isnan(b)), (nruns, rounding, q, a, b)
