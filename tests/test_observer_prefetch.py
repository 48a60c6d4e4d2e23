"""Prefetch hints of the observers (trees/observers.py): they touch the slots and bins a row
will need at its leaf, and change nothing."""

import numpy as np
from numba import njit

from streamforest import HoeffdingTreeRegressor
from streamforest.trees.observers import prefetch, prefetch_bins, prefetch_slots


@njit(cache=False)
def _hints(st, prm, leaf, x):
    return prefetch_slots(st, prm, leaf, x), prefetch_bins(st, prm, leaf, x)


@njit(cache=False)
def _prefetch_everywhere(a):
    for i in range(a.size):
        prefetch(a, i)
    return a.size


def test_prefetch_reads_nothing_out_of_place():
    a = np.arange(12.0).reshape(3, 4)
    assert _prefetch_everywhere(a) == 12
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4))


def test_hints_count_the_observed_features_and_change_nothing():
    rng = np.random.default_rng(0)
    X = rng.random((3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = 5 * np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) + rng.normal(0, 0.1, 3000)
    m = HoeffdingTreeRegressor(grace_period=100, max_features=3, seed=1)
    m.learn_many(X[:2000], y[:2000])
    st, prm = m.state_, m.engine_.params(0)
    before = [np.array(a, copy=True) for a in st]
    checked = 0
    for x in X[2000:2300]:
        leaf = int(st.nd_leaf[int(m.apply(x.reshape(1, -1))[0])])
        slots, bins = _hints(st, prm, leaf, x)
        observed = st.lf_mask[leaf, : x.shape[0]] == 1
        expected = int(np.sum(observed & ~np.isnan(x))) if st.lf_active[leaf] else 0
        assert slots == expected
        assert 0 <= bins <= slots
        checked += slots > 0
    assert checked > 200
    for a, b in zip(before, st, strict=True):
        np.testing.assert_array_equal(a, b)
