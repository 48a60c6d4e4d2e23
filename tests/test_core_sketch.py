"""The compiled core's KLL sketches (``streamforest._core.sketch``): against exact ranks of the
stream, the inclusive-quantile definition and brute force, their edge cases and bad
arguments."""

import math

import numpy as np
import pytest

from streamforest import _core
from streamforest.rng import new_state
from streamforest.sketches import kll

core = _core.sketch
LV_H, LV_N, LV_WIDTH = core.LV_H, core.LV_N, core.LV_WIDTH


def bound(k):
    """DataSketches' normalised rank error of KLL at 99% confidence, all quantiles at once."""
    return 2.446 / k**0.9433


class Sketch:
    """A sketch's arrays as KLLSketch holds them (row 0), updated by the core."""

    def __init__(self, k=200, seed=0, leaf=False):
        self.capt = kll.leaf_capacity_table(k) if leaf else kll.capacity_table(k)
        cap = kll.leaf_row_capacity(k) if leaf else kll.row_capacity(k)
        self.items = np.zeros((1, cap))
        self.lv = np.zeros((1, LV_WIDTH), np.int64)
        core.kll_reset(self.items, self.lv, 0)
        self.rng = new_state(seed)
        self.bounds = np.array([math.inf, -math.inf])

    def update(self, values, weights=None):
        v = np.ascontiguousarray(values, np.float64)
        if weights is None:
            return core.update_unit(self.items, self.lv, v, self.capt, self.rng, self.bounds)
        w = np.ascontiguousarray(weights, np.int64)
        core.update_many(self.items, self.lv, v, w, self.capt, self.rng)
        return True

    def merge(self, other):
        core.merge_sketch(self.items, self.lv, self.bounds, other.items, other.lv, other.bounds,
                          self.capt, self.rng)  # fmt: skip

    def quantiles(self, qs):
        out = np.empty(len(qs))
        core.quantiles(self.items, self.lv, np.ascontiguousarray(qs, np.float64), out)
        return out

    def sorted_view(self):
        cap = self.items.shape[1]
        v, c = np.empty(cap), np.empty(cap)
        m = core.sorted_view(self.items, self.lv, v, c)
        return v[:m], c[:m]

    @property
    def n(self):
        return int(self.lv[0, LV_N])

    def levels(self):
        """The levels' items (level 0 first)."""
        lv = self.lv[0]
        return [self.items[0, lv[h + 1] : lv[h + 2]] for h in range(int(lv[LV_H]))]

    def state(self):
        lv = self.lv[0]
        return lv.copy(), self.items[0, lv[1] :].copy(), int(self.rng[0]), self.bounds.copy()


def inclusive(levels, qs):
    """The inclusive quantiles of retained levels: the smallest item whose cumulative weight
    (items sorted, level h weighing 2**h; exact integer sums) reaches ``q`` of the total."""
    v = np.concatenate(levels)
    w = np.concatenate([np.full(len(x), 2.0**h) for h, x in enumerate(levels)])
    order = np.argsort(v, kind="stable")
    v, cum = v[order], np.cumsum(w[order])
    if not len(v):
        return np.full(len(qs), np.nan)
    return np.array([v[np.searchsorted(cum, q * cum[-1], side="left")] for q in qs])


def stream_rank_error(stream_sorted, x, q):
    """Distance of ``q`` from the normalised ranks the stream gives item ``x``."""
    n = len(stream_sorted)
    lo = np.searchsorted(stream_sorted, x, side="left") / n
    hi = np.searchsorted(stream_sorted, x, side="right") / n
    return max(0.0, lo - q, q - hi)


def check_invariants(s):
    """Sorted levels within the capacity, weights adding up to n."""
    lv = s.lv[0]
    H = int(lv[LV_H])
    assert 1 <= H <= core.MAX_LEVELS and lv[H + 1] == s.items.shape[1]
    assert s.items.shape[1] - lv[1] <= s.capt[1, H]
    assert sum(len(x) << h for h, x in enumerate(s.levels())) == s.n
    for x in s.levels():
        assert np.all(np.diff(x) >= 0)


# ------------------------------------------------------------------------------------------------
# reference tests
QS = np.linspace(0.01, 0.99, 99)


@pytest.mark.parametrize("order", ["sorted", "reversed", "random", "zoom"])
@pytest.mark.parametrize("k", [50, 200])
def test_rank_error_within_the_kll_bound(order, k):
    n = 60_000
    v = np.arange(n, dtype=float)
    rng = np.random.default_rng(1)
    if order == "reversed":
        v = v[::-1].copy()
    elif order == "random":
        v = rng.permutation(v)
    elif order == "zoom":
        z = np.empty(n)
        z[0::2], z[1::2] = v[: n // 2], v[::-1][: n // 2]
        v = z
    exact = np.sort(v)
    for seed in range(2):
        s = Sketch(k, seed)
        for part in np.array_split(v, 7):
            assert s.update(part)
        check_invariants(s)
        assert s.n == n and tuple(s.bounds) == (0.0, n - 1.0)
        got = s.quantiles(QS)
        assert np.array_equal(got, inclusive(s.levels(), QS))
        errs = [stream_rank_error(exact, x, q) for x, q in zip(got, QS, strict=True)]
        assert max(errs) <= bound(k), (order, k, max(errs))
        values, cum = s.sorted_view()
        for x in rng.choice(v, 50):  # ranks read from the sorted view
            i = np.searchsorted(values, x, side="right")
            r = cum[i - 1] / s.n if i else 0.0
            assert abs(r - (x + 1) / n) <= bound(k)


def test_weights_count_as_repeated_values():
    rng = np.random.default_rng(2)
    v = rng.normal(size=20_000)
    w = rng.integers(1, 40, size=v.size)
    s = Sketch(200, seed=3)
    for part in np.array_split(np.arange(v.size), 4):
        s.update(v[part], w[part])
    check_invariants(s)
    assert s.n == int(w.sum())
    expanded = np.sort(np.repeat(v, w))
    got = s.quantiles(QS)
    assert np.array_equal(got, inclusive(s.levels(), QS))
    assert max(stream_rank_error(expanded, x, q) for x, q in zip(got, QS, strict=True)) <= bound(
        200
    )
    # a weight is one insertion per set bit: weight 2**j lands on level j
    t = Sketch(64)
    t.update([5.0], [2**20])
    assert t.n == 2**20 and [len(x) for x in t.levels()] == [0] * 20 + [1]


def test_merged_sketches_keep_the_bound_and_every_weight():
    rng = np.random.default_rng(4)
    v = rng.permutation(100_000).astype(float)
    parts = np.array_split(v, 5)
    sketches = []
    for i, p in enumerate(parts):
        s = Sketch(200, seed=i)
        s.update(p)
        sketches.append(s)
    merged = sketches[0]
    for other in sketches[1:]:
        before = other.state()
        merged.merge(other)
        after = other.state()
        assert all(np.array_equal(a, b) for a, b in zip(before[:2], after[:2], strict=True))
    check_invariants(merged)
    assert merged.n == v.size and tuple(merged.bounds) == (0.0, v.size - 1.0)
    got = merged.quantiles(QS)
    exact = np.sort(v)
    assert max(stream_rank_error(exact, x, q) for x, q in zip(got, QS, strict=True)) <= bound(200)
    empty = Sketch(200)
    empty.merge(Sketch(200))
    assert empty.n == 0 and np.isnan(empty.quantiles([0.5])[0])


@pytest.mark.parametrize("n", [1, 2, 3, 10, 150])
def test_quantiles_of_tiny_inputs_are_exact(n):
    rng = np.random.default_rng(n)
    v = np.round(rng.normal(size=n), 1)
    s = Sketch(200, seed=0)
    s.update(v)
    x = np.sort(v)
    qs = np.r_[0.0, np.linspace(0, 1, 101), 1.0]
    # the smallest item whose cumulative count reaches q * n: index ceil(q * n) - 1 (0 for q = 0)
    expected = [x[max(math.ceil(q * n) - 1, 0)] for q in qs]
    assert s.quantiles(qs).tolist() == expected
    values, cum = s.sorted_view()
    assert values.tolist() == x.tolist() and cum.tolist() == list(range(1, n + 1))


def test_empty_sketch_and_signed_zeros():
    s = Sketch(50)
    assert np.isnan(s.quantiles([0.0, 0.5, 1.0])).all()
    assert len(s.sorted_view()[0]) == 0 and core.kll_retained(s.items, s.lv, 0) == 0
    # -0.0 and 0.0 keep the order they came in (what one insertion per value does)
    s.update([0.0, -0.0, 1.0, -0.0, 0.0])
    bits = np.signbit(s.sorted_view()[0]).tolist()
    assert bits == [False, True, True, False, False]
    big = Sketch(8)
    big.update([1.7e308, -1.7e308, 5e-324] * 40)
    check_invariants(big)
    assert tuple(big.bounds) == (-1.7e308, 1.7e308)


def test_nan_and_infinity_are_refused_and_change_nothing():
    s = Sketch(32, seed=1)
    s.update(np.arange(100.0))
    before = s.state()
    for bad in (math.nan, math.inf, -math.inf):
        assert not s.update([1.0, bad, 2.0])
        after = s.state()
        assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    # the leaf sketches (kll_update) take what the tree gives: a NaN goes to the front of its
    # level (no item compares at or below it) and the sketch stays usable
    t = Sketch(16, leaf=True)
    for x in (3.0, math.nan, 1.0, 2.0):
        core.kll_update(t.items, t.lv, 0, x, 1, t.capt, t.rng)
    assert t.n == 4
    assert np.array_equal(t.levels()[0], [1.0, 2.0, np.nan, 3.0], equal_nan=True)


def test_leaf_table_sketch_fits_its_row_and_is_exact_while_young():
    k = 200
    width = kll.leaf_row_capacity(k)
    rng = np.random.default_rng(6)
    v = rng.normal(size=width)
    s = Sketch(k, leaf=True)
    for x in v:
        core.kll_update(s.items, s.lv, 0, x, 1, s.capt, s.rng)
    assert s.lv[0, LV_H] == 1 and np.array_equal(s.levels()[0], np.sort(v))
    for x in rng.normal(size=50_000):
        core.kll_update(s.items, s.lv, 0, x, int(rng.integers(1, 4)), s.capt, s.rng)
    check_invariants(s)
    assert s.items.shape[1] == width


def test_rows_reset_copy_and_count():
    capt = kll.capacity_table(8)
    items = np.zeros((3, kll.row_capacity(8)))
    lv = np.zeros((3, LV_WIDTH), np.int64)
    for r in range(3):
        core.kll_reset(items, lv, r)
    rng = new_state(0)
    for x in range(1000):
        core.kll_update(items, lv, 1, float(x), 1, capt, rng)
    core.kll_copy(items, lv, 1, 2)
    assert np.array_equal(lv[1], lv[2])
    assert np.array_equal(items[1, lv[1, 1] :], items[2, lv[2, 1] :])
    assert core.kll_n(lv, 2) == 1000 and core.kll_n(lv, 0) == 0
    core.kll_reset(items, lv, 1)
    assert core.kll_n(lv, 1) == 0 and core.kll_retained(items, lv, 1) == 0


def test_runs_queries_are_the_inclusive_quantile_of_the_union():
    rng = np.random.default_rng(8)
    for nruns in (1, 5, core.SCAN_RUNS, 40):
        lens = rng.integers(1, 30, nruns)
        buf = np.concatenate([np.sort(np.round(rng.normal(size=n), 1)) for n in lens])
        re = np.cumsum(lens).astype(np.int64)
        rs = re - lens
        rw = rng.choice([1.0, 2.0, 4.0], nruns)  # exact sums
        total = float((rw * lens).sum())
        v = buf
        w = np.repeat(rw, lens)
        order = np.argsort(v, kind="stable")
        sv, cum = v[order], np.cumsum(w[order])
        hv, cur, heap = np.empty(nruns), np.empty(nruns, np.int64), np.empty(nruns, np.int64)
        for q in np.r_[0.0, np.linspace(0, 1, 57), 1.0]:
            expected = sv[np.searchsorted(cum, q * total)]
            assert core.runs_quantile(buf, rs, re, rw, nruns, total, q, hv, cur) == expected
            got = core.runs_quantile_many(buf, rs, re, rw, nruns, total, q, hv, cur, heap)
            assert got == expected
        out_v, out_w = np.empty(len(buf)), np.empty(len(buf))
        m = core.runs_sorted(buf, rs, re, rw, nruns, heap, cur, out_v, out_w)
        assert m == len(buf) and np.array_equal(out_v, np.sort(buf))
        # the weights follow their items: the same multiset of (value, weight) pairs
        assert sorted(zip(out_v, out_w, strict=True)) == sorted(zip(v, w, strict=True))
    assert np.isnan(core.runs_quantile(np.zeros(1), *[np.zeros(1, np.int64)] * 2, np.ones(1), 0,
                                       1.0, 0.5, np.zeros(1), np.zeros(1, np.int64)))  # fmt: skip


def _brute_hdi(v, w, mass):
    total = sum(w)
    need = mass * total * (1.0 - 1e-12)
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


def test_shortest_interval_is_the_shortest_of_enough_mass():
    rng = np.random.default_rng(9)
    for trial in range(200):
        m = int(rng.integers(1, 40))
        v = np.sort(np.round(rng.normal(size=m) * 3, int(trial % 2)))
        w = rng.choice([0.5, 1.0, 2.0], m)  # exact sums, whatever the order
        for mass in (1e-9, 0.1, 0.5, 0.9, 1.0):
            assert core.shortest_interval(v, w, m, mass) == _brute_hdi(v.tolist(), w.tolist(), mass)
    lo, hi = core.shortest_interval(np.zeros(3), np.ones(3), 0, 0.9)
    assert math.isnan(lo) and math.isnan(hi)


def test_sorting_networks_sort():
    # every 0/1 input of 16 (0-1 principle), random ones of 32 with ties and infinities
    for pattern in range(1 << 16):
        x = ((pattern >> np.arange(16)) & 1).astype(float)
        y = x.copy()
        core.sort16(y)
        assert np.array_equal(y, np.sort(x))
    rng = np.random.default_rng(10)
    for trial in range(2000):
        x = np.round(rng.normal(size=32), trial % 3)
        x[rng.random(32) < 0.2] = np.inf
        y = x.copy()
        core.sort32(y)
        assert np.array_equal(y, np.sort(x))


def test_bad_arguments_are_refused():
    s = Sketch(50)
    s.update(np.arange(500.0))
    v = np.ones(3)
    with pytest.raises(TypeError):  # item types are exact
        core.update_unit(s.items.astype(np.float32), s.lv, v, s.capt, s.rng, s.bounds)
    with pytest.raises(TypeError):
        core.update_unit(s.items, s.lv.astype(np.int32), v, s.capt, s.rng, s.bounds)
    with pytest.raises(TypeError):
        core.update_unit(s.items, s.lv, v, s.capt, s.rng.astype(np.int64), s.bounds)
    with pytest.raises(TypeError):  # an output that is not C-contiguous
        core.update_unit(np.asfortranarray(np.zeros((2, s.items.shape[1]))), s.lv, v, s.capt,
                         s.rng, s.bounds)  # fmt: skip
    with pytest.raises(ValueError):  # a level row of another width
        core.update_unit(s.items, s.lv[:, :-1].copy(), v, s.capt, s.rng, s.bounds)
    with pytest.raises(ValueError):  # a row narrower than the table asks
        core.update_unit(s.items[:, 10:].copy(), s.lv, v, s.capt, s.rng, s.bounds)
    bad_capt = s.capt.copy()
    bad_capt[0, 3] = 1
    with pytest.raises(ValueError):
        core.update_unit(s.items, s.lv, v, bad_capt, s.rng, s.bounds)
    with pytest.raises(ValueError):
        core.update_unit(s.items, s.lv, v, s.capt[:, :-1].copy(), s.rng, s.bounds)
    for corrupt in ((LV_H, 0), (LV_H, 40), (1, -1), (1, s.items.shape[1] + 1)):
        lv = s.lv.copy()
        lv[0, corrupt[0]] = corrupt[1]
        with pytest.raises(ValueError):
            core.update_unit(s.items, lv, v, s.capt, s.rng, s.bounds)
    with pytest.raises(ValueError):
        core.update_unit(s.items, s.lv, v, s.capt, s.rng, np.zeros(1))
    with pytest.raises(ValueError):  # fewer weights than values
        core.update_many(s.items, s.lv, v, np.ones(2, np.int64), s.capt, s.rng)
    with pytest.raises(ValueError):  # a weight the level row has no room for
        core.update_many(s.items, s.lv, v, np.array([1, 2**32, 1]), s.capt, s.rng)
    with pytest.raises(ValueError):
        core.kll_update(s.items, s.lv, 0, 1.0, 2**40, s.capt, s.rng)
    with pytest.raises(IndexError):
        core.kll_update(s.items, s.lv, 1, 1.0, 1, s.capt, s.rng)
    with pytest.raises(IndexError):
        core.kll_copy(s.items, s.lv, 0, 5)
    with pytest.raises(ValueError):
        s.merge(s)  # a sketch into itself
    with pytest.raises(ValueError):
        core.quantiles(s.items, s.lv, np.ones(3), np.zeros(2))
    with pytest.raises(ValueError):
        core.sorted_view(s.items, s.lv, np.zeros(10), np.zeros(10))
    assert s.n == 500  # nothing ran
    buf, rs, re, rw = np.arange(10.0), np.array([0, 5]), np.array([5, 11]), np.ones(2)
    hv, cur, heap = np.zeros(2), np.zeros(2, np.int64), np.zeros(2, np.int64)
    with pytest.raises(ValueError):  # a run past the buffer
        core.runs_quantile(buf, rs, re, rw, 2, 10.0, 0.5, hv, cur)
    with pytest.raises(ValueError):  # an empty run (the walks read every run's head)
        core.runs_quantile_many(buf, rs, np.array([0, 5]), rw, 2, 10.0, 0.5, hv, cur, heap)
    with pytest.raises(ValueError):  # more runs than arrays
        core.runs_sorted(buf, rs, np.array([5, 10]), rw, 3, heap, cur, np.zeros(10), np.zeros(10))
    with pytest.raises(ValueError):  # output too small
        core.runs_sorted(buf, rs, np.array([5, 10]), rw, 2, heap, cur, np.zeros(9), np.zeros(10))
    with pytest.raises(ValueError):
        core.shortest_interval(buf, rw, 5, 0.5)
    with pytest.raises(ValueError):
        core.sort32(np.zeros(16))


def test_kll_sketch_merged_with_itself_is_merged_with_a_copy():
    import copy

    from streamforest import KLLSketch

    a = KLLSketch(50, seed=1)
    a.update_many(np.arange(1000.0))
    b = copy.deepcopy(a)
    a.merge(a)
    b.merge(copy.deepcopy(b))
    assert a.n == 2000 and a.to_bytes() == b.to_bytes()
    assert a.quantile([0.1, 0.5, 0.9]).tolist() == b.quantile([0.1, 0.5, 0.9]).tolist()
