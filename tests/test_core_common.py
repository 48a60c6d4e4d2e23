"""The compiled core's shared kernels (``streamforest._core.common``): the generator, the running
statistics and the sorts, against references (a plain-Python SplitMix64, numpy, exact sums)."""

import math

import numpy as np
import pytest

from streamforest import _core

core = _core.common


def test_generator_is_splitmix64():
    """Draws match a plain-Python SplitMix64 (the definition, not another implementation)."""
    mask = (1 << 64) - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    state = np.array([2**64 - 5], np.uint64)  # wraps on the first draw
    z = 2**64 - 5
    for _ in range(50):
        z = (z + 0x9E3779B97F4A7C15) & mask
        assert core.next_u64(state) == mix(z)
        assert int(state[0]) == z
    for n in (1, 2, 3, 7, 1000, 2**40):
        s = np.array([n], np.uint64)
        z = n
        for _ in range(20):
            z = (z + 0x9E3779B97F4A7C15) & mask
            u = (mix(z) >> 11) * (1.0 / 9007199254740992.0)
            assert core.next_below(s, n) == int(u * n) and 0 <= int(u * n) < n


def test_generator_refuses_bad_state():
    with pytest.raises(TypeError):
        core.next_float(np.array([1], np.int64))  # not the generator's type: no silent copy
    with pytest.raises(ValueError):
        core.next_float(np.zeros(0, np.uint64))
    with pytest.raises(ValueError):
        core.next_below(np.array([1], np.uint64), 0)


def test_stats_against_exact_sums():
    rng = np.random.default_rng(0)
    v = 1e9 + rng.standard_normal(100_000)
    w = rng.random(100_000) + 0.01
    s = core.stats_of(v, w)
    mean = math.fsum(w * v) / math.fsum(w)
    assert s[0] == pytest.approx(math.fsum(w), rel=1e-14)
    assert abs((s[1] + s[2]) - mean) <= 2e-7
    var = math.fsum(w * (v - mean) ** 2) / math.fsum(w)
    assert s[3] / s[0] == pytest.approx(var, rel=1e-9)
    a, b = core.stats_of(v[:30_000], w[:30_000]), core.stats_of(v[30_000:], w[30_000:])
    m = core.chan_merge(*a, *b)
    assert m[3] / m[0] == pytest.approx(var, rel=1e-9)
    back = core.chan_subtract(*s, *b)
    assert back[3] / back[0] == pytest.approx(a[3] / a[0], rel=1e-9)
    with pytest.raises(ValueError):
        core.stats_of(v, w[:10])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 9, 64, 1025])
def test_sorts_against_numpy(n):
    rng = np.random.default_rng(n)
    for values in (
        rng.standard_normal(n + 5),
        rng.integers(0, 4, n + 5).astype(np.float64),
        np.where(rng.random(n + 5) < 0.2, np.nan, rng.standard_normal(n + 5)),
    ):
        out = np.full(n + 5, -7, np.int64)
        core.argsort_into(values, n, out)
        np.testing.assert_array_equal(out[:n], np.argsort(values[:n], kind="stable"))
        assert (out[n:] == -7).all()
        work = values.copy()
        core.sort_into(work, n)
        np.testing.assert_array_equal(work[:n], np.sort(values[:n]))
        np.testing.assert_array_equal(work[n:], values[n:])
    with pytest.raises(ValueError):
        core.sort_into(np.zeros(3), 4)  # never reads past the array
