"""Memory bounded on growing streams (issue 48): the adaptive wrappers' served log keeps a fixed
number of compact records whatever the rows' width, and the levels they track are capped (the
least recently asked forgotten, warned once; a call asking for too many refused, nothing
changed)."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import streamforest as sf
from streamforest.intervals import adaptive
from streamforest.intervals._served_log import ServedLog, row_keys

#: (read with a default so that these tests run, and fail, on a version without the cap)
MAX_ASKED_LEVELS = getattr(adaptive, "MAX_ASKED_LEVELS", 16)


def _forest():
    return sf.OnlineForestRegressor(n_trees=3, tree=sf.HoeffdingTreeRegressor(grace_period=40))


def _learnt(log_size=100, **kw):
    rng = np.random.default_rng(0)
    m = sf.AdaptiveConformal(sf.CPApproximate(calibration_size=50, forest=_forest(), seed=1),
                             log_size=log_size, **kw)  # fmt: skip
    X = rng.random((200, 2))
    m.learn_many(X, X.sum(axis=1))
    return m, rng


def _wide_row(rng, width=100):
    return {f"f{j}": float(v) for j, v in enumerate(rng.random(width))}


def test_predict_only_wide_dicts_keep_the_served_log_bounded_and_counted():
    """Serving 3,000 rows of 100 features (nothing learnt) with ``log_size=100``: the log holds
    100 records, the memory traced while serving the last 2,000 rows is a few hundred bytes a
    row (an evicted row's digest, until ``memory`` of them are kept; a whole row is ~10 KB:
    before, every served and every evicted row's dict was kept, ~20 MB here), and
    ``memory_bytes`` grows by at least what was traced."""
    tracemalloc.start()  # (from the start: what is freed later was traced when allocated)
    try:
        m, rng = _learnt()
        for _ in range(1000):
            m.predict_interval_one(_wide_row(rng), alpha=0.1)
        before = tracemalloc.get_traced_memory()[0]
        mb_before = m.memory_bytes
        for _ in range(2000):
            m.predict_interval_one(_wide_row(rng), alpha=0.1)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert m.log_stats["logged"] == 100
    assert grown < 2000 * 300, grown
    assert m.memory_bytes - mb_before >= grown - 50_000
    assert all(isinstance(k, int) for k in m._log.by_key)  # (digests, not rows)


def test_the_served_log_forgets_evicted_keys_past_its_memory():
    """Past ``memory`` evicted keys the log's size stops growing: the same ``nbytes`` (within
    a dict resize) after 15,000 and after 30,000 rows served."""
    log = ServedLog(100, 6)
    rec = np.zeros((1, 1, 6))
    sizes = []
    for i in range(30_000):
        log.add([i * 7919 + 1], rec, i)
        if i + 1 in (15_000, 30_000):
            sizes.append(log.nbytes)
            assert len(log.evicted) <= log.memory
    assert len(log) == 100
    assert sizes[1] <= 1.2 * sizes[0]


def test_the_served_log_matches_labels_as_before():
    """Rows are still matched by their values: an int and the equal float, -0.0 and 0.0 are the
    same row; another value is another row; a dict with non-string names works too."""
    m, _ = _learnt()
    before = m.log_stats
    m.predict_interval_one({"a": 1, "b": -0.0}, alpha=0.1)
    m.predict_interval_one({"c": "u", "b": 2.0}, alpha=0.1)
    m.learn_one({"a": 1.0, "b": 0.0}, 3.0)
    m.learn_one({"c": "u", "b": 2.0}, 3.0)
    m.learn_one({"a": 1.5, "b": 0.0}, 3.0)
    after = {k: v - before[k] for k, v in m.log_stats.items()}
    assert after == {"matched": 2, "late": 0, "unmatched": 1, "logged": 0}


def test_levels_asked_for_are_capped_the_least_recently_asked_forgotten_warned_once():
    m, rng = _learnt()
    asked = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(40):
            a = 0.2 + 0.005 * i
            asked.append(a)
            X = rng.random((20, 2))
            m.predict_learn_many(X, X.sum(axis=1), alpha=[0.1, a])
    levels = sorted(m.levels_.tolist())
    assert len(levels) == 1 + MAX_ASKED_LEVELS
    assert np.allclose(levels, sorted([0.1, *asked[-MAX_ASKED_LEVELS:]]))
    assert m.alpha_t_.shape[0] == m.win_.shape[0] == m.st_.shape[0] == len(levels)
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == 1
    # asked again, a level is tracked again (from its initial state), and calls go on
    X = rng.random((20, 2))
    m.predict_learn_many(X, X.sum(axis=1), alpha=asked[0])
    assert np.any(np.abs(m.levels_ - asked[0]) <= 1e-12)
    assert len(m.levels_) == 1 + MAX_ASKED_LEVELS


def test_a_call_asking_for_too_many_levels_is_refused_and_changes_nothing():
    a, rng = _learnt()
    b, _ = _learnt()
    X = rng.random((30, 2))
    too_many = [0.2 + 0.01 * k for k in range(MAX_ASKED_LEVELS + 1)]
    with pytest.raises(ValueError, match="levels besides alphas"):
        a.predict_learn_many(X, X.sum(axis=1), alpha=too_many)
    assert np.array_equal(a.levels_, b.levels_) and a.n_seen == b.n_seen
    ra = a.predict_learn_many(X, X.sum(axis=1), alpha=too_many[:MAX_ASKED_LEVELS])
    rb = b.predict_learn_many(X, X.sum(axis=1), alpha=too_many[:MAX_ASKED_LEVELS])
    assert np.array_equal(ra[1], rb[1]) and np.array_equal(ra[0], rb[0])


def test_group_controllers_forget_the_forgotten_levels():
    rng = np.random.default_rng(3)
    m = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1, groups=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i in range(30):
            X = rng.random((40, 2))
            X[:, 1] = rng.integers(0, 3, 40)
            m.predict_learn_many(X, X[:, 0] * 3 + X[:, 1], alpha=0.2 + 0.01 * i)
    gc = m._group_controllers
    assert gc.levels.shape[0] <= 1 + MAX_ASKED_LEVELS
    assert set(np.round(gc.levels, 12)) <= set(np.round(m.levels_, 12))


def test_a_record_served_before_its_level_was_forgotten_is_learnt_as_unmatched():
    """A served row's record has a column per tracked level: after a level is forgotten and
    another started (the same count of levels), the record is not read as the new level's (the
    label teaches as ``unmatched`` says); with the levels unchanged it is read."""
    x = {"x0": 0.3, "x1": 0.4}
    modes = []
    for forget in (False, True):
        m, rng = _learnt()
        for i in range(MAX_ASKED_LEVELS):
            X = rng.random((5, 2))
            m.predict_learn_many(X, X.sum(axis=1), alpha=0.3 + 0.01 * i)
        m.predict_interval_one(x, alpha=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            X = rng.random((5, 2))
            m.predict_learn_many(X, X.sum(axis=1), alpha=0.49 if forget else 0.3)
        assert len(m.levels_) == 1 + MAX_ASKED_LEVELS
        modes.append(int(m._feedback(row_keys(x, True), 1)[0][0]))
        m.learn_one(x, 0.7)
    assert modes == [2, 1]  # (2: from the record; 1: as unmatched="current")


def test_the_set_wrapper_caps_its_levels_too():
    rng = np.random.default_rng(4)
    m = sf.AdaptiveConformalClassifier()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i in range(30):
            X = rng.random((30, 2))
            y = np.where(X[:, 0] > 0.5, "a", "b").astype(object)
            m.predict_learn_many(X, y, alpha=0.2 + 0.01 * i)
    assert len(m.levels_) == 1 + MAX_ASKED_LEVELS
