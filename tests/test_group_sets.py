"""Prediction sets calibrated per group (``ConformalClassifier(groups=...)``): the windows on the
conformity scores against a reference written from their definition, the coverage of every
group, no row lost, bad input, persistence."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest.intervals import _groups

from .test_groups import _rank_quantile

INF = float("inf")


class _SetReference:
    """The group windows on scores, as groups.hpp defines them (a young group or a row with no
    group in a family takes the pool's threshold; several families: the largest)."""

    def __init__(self, width):
        self.width = width
        self.windows: dict = {0: []}

    def run(self, ids, scores, use, alphas):
        thr = np.empty((len(scores), len(alphas)))
        for i in range(len(scores)):
            for a, alpha in enumerate(alphas):
                pool = _rank_quantile(self.windows[0], alpha)
                qs = []
                for c in ids[i]:
                    own = _rank_quantile(self.windows.get(c, []), alpha) if c > 0 else INF
                    qs.append(own if own != INF else pool)
                thr[i, a] = max(qs) if qs else pool
            if use[i]:
                for c in [0, *[c for c in ids[i] if c > 0]]:
                    w = self.windows.setdefault(c, [])
                    w.append(scores[i])
                    del w[: max(0, len(w) - self.width)]
        return thr


@pytest.mark.parametrize("families", [1, 2])
def test_set_windows_match_the_reference(families):
    """Every threshold of the compiled sets' pass (young groups borrowing the pool, rows with no
    group, the largest of several families, FIFO windows, rows without a score skipped) equals
    the reference's, exactly."""
    rng = np.random.default_rng(families)
    width, alphas = 30, np.array([0.1, 0.05, 0.3])
    state = _groups.GroupCalibration(width, families)
    ref = _SetReference(width)
    for chunk in (1, 5, 120, 260, 1, 40):
        cols = [rng.integers(0, 4, chunk).astype(float) for _ in range(families)]
        for c in cols:
            c[rng.random(chunk) < 0.05] = np.nan
        scores = rng.random(chunk) * np.where(cols[0] == 1, 3.0, 1.0)
        use = rng.random(chunk) > 0.1
        ids, new = state.lookup(cols, learn=True)
        state.commit(new)
        got = state.run_sets(ids, scores, use, True, alphas)
        np.testing.assert_array_equal(got, ref.run(ids, scores, use, alphas))
    meta = state.meta.copy()
    got = state.run_sets(ids, scores, use, False, alphas)  # predicting: nothing enters
    np.testing.assert_array_equal(state.meta, meta)
    np.testing.assert_array_equal(got, ref.run(ids, scores, np.zeros(len(use), bool), alphas))


def _label_stream(n=16000, seed=0):
    """Three groups whose labels are flipped 2%, 10% and 30% of the time."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 3)), g]
    clean = (X[:, 0] + X[:, 1] > 1).astype(int)
    flip = rng.random(n) < np.array([0.02, 0.1, 0.3])[g]
    y = np.where(flip, 1 - clean, clean).astype(str)
    return X, y, g


def _set_errors(model, X, y, g, alphas, chunk=1000, **kw):
    """Each group's share of sets missing the label (rows after the first 2000), per level."""
    missed = []
    for a in range(0, len(y), chunk):
        _, _, sets = model.predict_learn_many(X[a : a + chunk], y[a : a + chunk], list(alphas),
                                              **kw)  # fmt: skip
        index = {c: k for k, c in enumerate(model.classes_)}
        cols = np.array([index[v] for v in y[a : a + chunk]])
        missed.append(~sets[np.arange(len(cols)), :, cols])
    miss = np.concatenate(missed)
    late = np.arange(len(y)) >= 2000
    return np.array(
        [[miss[late & (g == v), k].mean() for v in range(3)] for k in range(len(alphas))]
    )


def test_every_group_is_covered_by_the_sets():
    """Label noise 2/10/30% by group: with groups every group's sets miss at about alpha; the
    marginal sets miss the noisy group far more often (the same check fails for them)."""
    X, y, g = _label_stream()
    alphas = (0.1, 0.05)
    grouped = _set_errors(sf.ConformalClassifier(seed=1, groups=3), X, y, g, alphas)
    assert np.abs(grouped - np.array(alphas)[:, None]).max() < 0.015, grouped
    marginal = _set_errors(sf.ConformalClassifier(seed=1), X, y, g, alphas)
    assert np.abs(marginal - np.array(alphas)[:, None]).max() > 0.05, marginal


def test_multivalid_sets_cover_every_group():
    X, y, g = _label_stream(seed=2)
    rule = sf.Multivalid(3, alphas=(0.1, 0.05))
    errors = _set_errors(sf.ConformalClassifier(seed=1, groups=rule), X, y, g, (0.1, 0.05))
    assert np.abs(errors - np.array([[0.1], [0.05]])).max() < 0.02, errors
    m = sf.ConformalClassifier(seed=1, groups=rule)
    m.learn_many(X[:100], y[:100])
    with pytest.raises(ValueError, match="calibrated at"):
        m.predict_sets(X[:5], 0.2)


def test_no_row_is_lost_and_the_pool_is_the_marginal_set():
    """The pool's window is the marginal calibration set, and each group's window holds the
    scores of its last rows, whether rows come in chunks or one at a time (a twin without groups
    and a calibration set as long as the stream records every row's score in order)."""
    X, y, g = _label_stream(900, seed=3)
    m = sf.ConformalClassifier(seed=4, calibration_size=120, groups=3)
    twin = sf.ConformalClassifier(seed=4, calibration_size=10**5)
    for a, b in ((0, 1), (1, 300), (300, 301), (301, 800)):
        m.learn_many(X[a:b], y[a:b])
        twin.learn_many(X[a:b], y[a:b])
    for i in range(800, 900):
        x = dict(enumerate(X[i].tolist()))
        m.learn_one(x, y[i])
        twin.learn_one(x, y[i])
    scores = twin.calibration_scores_  # (every row but the first: the model knew no class)
    rows = np.arange(1, 900)
    st = m.group_state_
    np.testing.assert_array_equal(st.scores(None, None), np.sort(m.calibration_scores_))
    np.testing.assert_array_equal(st.scores(None, None), np.sort(scores[-120:]))
    for v in range(3):
        np.testing.assert_array_equal(st.scores(0, float(v)), np.sort(scores[g[rows] == v][-120:]))


def test_the_groups_array_the_column_and_one_row_calls_agree():
    X, y, g = _label_stream(1500, seed=5)
    a = sf.ConformalClassifier(seed=2, groups=3).predict_learn_many(X, y, [0.1, 0.05])
    b = sf.ConformalClassifier(seed=2).predict_learn_many(X, y, [0.1, 0.05], groups=g)
    np.testing.assert_array_equal(a[2], b[2])
    one = sf.ConformalClassifier(seed=2, groups=3)
    one.learn_many(X[:1000], y[:1000])
    whole = sf.ConformalClassifier(seed=2, groups=3)
    whole.learn_many(X[:1000], y[:1000])
    for i in range(1000, 1010):
        x = dict(enumerate(X[i].tolist()))
        s = whole.predict_sets(X[i : i + 1], 0.1)[0]
        got = one.predict_set_one(x, 0.1)
        assert sorted(got) == sorted(c for c, k in zip(whole.classes_, s, strict=True) if k)


def test_a_young_group_and_an_unseen_one_take_the_pool():
    X, y, g = _label_stream(3000, seed=6)
    m = sf.ConformalClassifier(seed=1, groups=3)
    m.learn_many(X, y)
    pool = m.thresholds([0.1])
    row = X[:1]
    with_pool = m.predict_sets(row, 0.1, groups=np.array([7.0]))  # never learnt
    st = m.group_state_
    assert st.n_groups == 3
    # the threshold it used is the pool's: the sets at that threshold
    proba = m.predict_proba(row)
    assert with_pool.shape == proba.shape
    ids, _ = st.lookup([np.array([7.0])], learn=False)
    thr = st.run_sets(ids, np.zeros(1), np.ones(1, bool), False, np.array([0.1]))
    assert thr[0, 0] == pool[0]
    m.learn_many(X[:5], y[:5], groups=np.full(5, 9.0))  # a young group: 5 scores
    ids, _ = st.lookup([np.array([9.0])], learn=False)
    thr = st.run_sets(ids, np.zeros(1), np.ones(1, bool), False, np.array([0.1]))
    assert ids[0, 0] > 0 and thr[0, 0] == m.thresholds([0.1])[0]


def test_bad_groups_are_refused_and_change_nothing(tmp_path):
    X, y, g = _label_stream(700, seed=7)
    m = sf.ConformalClassifier(seed=1, groups=3)
    m.learn_many(X[:600], y[:600])
    before = pickle.dumps(m)
    with pytest.raises(ValueError, match="values for"):
        m.learn_many(X[600:], y[600:], groups=np.zeros(3))
    with pytest.raises(ValueError, match="families"):
        m.predict_learn_many(X[600:], y[600:], groups=np.zeros((100, 2)))
    with pytest.raises(TypeError, match="hashable"):
        m.learn_many(X[600:], y[600:], groups=[{1}] * 100)
    with pytest.raises(ValueError, match="column index"):
        sf.ConformalClassifier(groups=9).learn_many(X, y)
    assert pickle.dumps(m) == before
    sf.save(m, tmp_path / "m.sf")
    m2 = sf.load(tmp_path / "m.sf")
    np.testing.assert_array_equal(
        m.predict_learn_many(X[600:], y[600:], 0.1)[2],
        m2.predict_learn_many(X[600:], y[600:], 0.1)[2],
    )


def test_threads_share_a_grouped_set_model():
    """Grouped calls hold the model's lock: threads learning one model end with every scored
    row in the pool and in its group."""
    import threading

    X, y, g = _label_stream(2100, seed=8)
    m = sf.ConformalClassifier(seed=1, calibration_size=5000, groups=3)
    m.learn_many(X[:100], y[:100])
    parts = [(X[a : a + 100], y[a : a + 100]) for a in range(100, 2100, 100)]

    def work(k):
        for Xp, yp in parts[k::3]:
            m.predict_learn_many(Xp, yp, 0.1)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    st = m.group_state_
    # (the first chunk has no score: the model knew no class before it)
    assert st.meta[0, 1] == 2000 == len(m.calibration_scores_)
    assert sum(st.meta[c, 1] for c in range(1, st.n_cells)) == 2000
