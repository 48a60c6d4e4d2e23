"""The compiled sorts (``_core.common.argsort_into``, ``sort_into``) against numpy's."""

import numpy as np
import pytest

from streamforest import _core

argsort_into, sort_into = _core.common.argsort_into, _core.common.sort_into


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 64, 1000, 1025])
def test_matches_numpy_stable_argsort(n):
    rng = np.random.default_rng(n)
    for values in (
        rng.standard_normal(n + 5),
        rng.integers(0, 4, n + 5).astype(np.float64),  # many ties: stability decides
        np.where(rng.random(n + 5) < 0.2, np.nan, rng.standard_normal(n + 5)),  # NaN last
        np.full(n + 5, 2.5),
        -np.arange(n + 5, dtype=np.float64),
    ):
        out = np.full(n + 5, -7, dtype=np.int64)
        argsort_into(values, np.int64(n), out)
        np.testing.assert_array_equal(out[:n], np.argsort(values[:n], kind="stable"))
        assert (out[n:] == -7).all()  # nothing written past n


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 64, 1000, 1025])
def test_sort_into_matches_numpy_sort(n):
    rng = np.random.default_rng(n + 1)
    for values in (
        rng.standard_normal(n + 5),
        rng.integers(0, 4, n + 5).astype(np.float64),
        np.where(rng.random(n + 5) < 0.2, np.nan, rng.standard_normal(n + 5)),  # NaN last
        np.where(rng.random(n + 5) < 0.3, np.inf, -np.arange(n + 5, dtype=np.float64)),
        np.full(n + 5, 2.5),
    ):
        work = values.copy()
        sort_into(work, np.int64(n))
        np.testing.assert_array_equal(work[:n], np.sort(values[:n]))
        np.testing.assert_array_equal(work[n:], values[n:])  # nothing touched past n
