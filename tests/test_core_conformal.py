"""The compiled core's kernels of the interval methods that work on the forest's trees
(``streamforest._core.intervals``: CPApproximate's and CPExact's, src/core/intervals/conformal,
and GaussianInterval's, src/core/intervals/gaussian).

CPExact's interval is the split-conformal interval of its stored calibration scores (rank
``ceil((n + 1)(1 - alpha))``) and those scores are the out-of-bag residuals of the trees as they
are now; the empirical coverage of the conformal methods on an exchangeable stream is ``1 -
alpha`` within binomial error; the method pass equals a plain full sort under random
re-scoring; GaussianInterval's pass is its definition in plain Python (the same operations, so
the same bits); rows are stored in their calibration slots; the bindings refuse what they would
overrun, and divisions by zero raise ``ZeroDivisionError``."""

import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core

from .test_core_tree_passes import stream

CORE = _core.intervals
LEVELS = [0.001, 0.02, 0.1, 0.5, 0.98, 0.999]


# ------------------------------------------------------------------------------------------------
# models
def _obs(n_trees=4, leaf_model="adaptive", seed=1, **kw):
    tree = sf.HoeffdingTreeRegressor(grace_period=40, leaf_model=leaf_model, nominal_features=(5,))
    return sf.OnlineForestRegressor(n_trees=n_trees, tree=tree, seed=seed, **kw)


def _aborf(leaf_model="rmsprop"):
    return sf.ABORFRegressor(n_trees=4, depth=4, lambda_value=1.0, leaf_model=leaf_model,
                             nominal_features=(5,), seed=6)  # fmt: skip


MODELS = {
    # name: a factory of the model (its forest made anew)
    "cpa-obs-adaptive": lambda: sf.CPApproximate(forest=_obs(), calibration_size=40),
    "cpx-obs-adaptive": lambda: sf.CPExact(forest=_obs(), calibration_size=40),
    "cpx-aborf": lambda: sf.CPExact(forest=_aborf(), calibration_size=45),
}


def _dicts(X):
    return [{j: float(v) for j, v in enumerate(row)} for row in X]


def _random_calibration(rng, c, T, size):
    """A consistent calibration set of ``size`` members among ``c`` slots."""
    present = np.zeros(c, bool)
    present[rng.choice(c, size, replace=False)] = True
    cal = {
        "cy": rng.normal(size=c),
        "coob": (rng.random((c, T)) < 0.5).astype(np.int8),
        "cpred": rng.normal(size=(c, T)),
        "csum": np.zeros(c),
        "ccnt": np.zeros(c, np.int64),
        "score": np.where(present, np.abs(rng.normal(size=c)), 0.0),
    }
    cal["coob"][present & (cal["coob"].sum(1) == 0), 0] = 1
    cal["csum"] = np.where(cal["coob"] == 1, cal["cpred"], 0.0).sum(1)
    cal["ccnt"] = cal["coob"].sum(1).astype(np.int64)
    order = np.zeros(c, np.int64)
    pos = np.full(c, -1, np.int64)
    live = np.flatnonzero(present)
    srt = live[np.argsort(cal["score"][live], kind="stable")]
    order[:size] = srt
    pos[srt] = np.arange(size)
    ss = np.zeros(c)
    ss[:size] = cal["score"][srt]
    cal.update(order=order, pos=pos, ss=ss)
    return cal


_CAL = ("cy", "coob", "cpred", "csum", "ccnt", "score", "order", "pos", "ss")


def _events(rng, T, n, c, per_row, cap):
    ev_t = np.zeros((T, cap), np.int32)
    ev_s = np.zeros((T, cap), np.int32)
    ev_v = np.zeros((T, cap))
    ev_n = np.zeros(T, np.int64)
    for t in range(T):
        k = 0
        for i in range(n):
            for _ in range(rng.poisson(per_row)):
                if k < cap:
                    ev_t[t, k], ev_s[t, k] = i, rng.integers(c)
                    ev_v[t, k] = np.nan if rng.random() < 0.1 else rng.normal() * 3
                    k += 1
        ev_n[t] = k
    return ev_t, ev_s, ev_v, ev_n


def _learnt(name, n=600):
    """A model of ``name`` that learnt ``n`` rows of the stream, and the 200 rows after them."""
    X, y = stream(n + 200, seed=9)
    m = MODELS[name]()
    m.learn_many(X[:n], y[:n])
    return m, X[n:], y[n:]


# ------------------------------------------------------------------------------------------------
# reference tests
def _live_scores(m):
    live = m.cal_pos_ >= 0
    return np.sort(m.cal_score_[live]), live


def _conformal_half(scores, alpha):
    n = scores.shape[0]
    r = math.ceil((n + 1) * (1 - alpha) - 1e-9)
    if r > n or n == 0:
        return math.inf
    return -math.inf if r < 1 else float(scores[r - 1])


@pytest.mark.parametrize("name", ["cpx-obs-adaptive", "cpx-aborf", "cpa-obs-adaptive"])
def test_interval_is_the_conformal_interval_of_the_stored_scores(name):
    """The interval ``y_hat -+ s``, ``s`` the ``ceil((n + 1)(1 - alpha))``-th smallest stored
    score (recomputed from the members' scores by a plain sort), at every level, in batches and
    per example; CPExact's stored scores are the out-of-bag residuals of the current trees."""
    X, y = stream(1800, seed=4)
    m = MODELS[name]()
    for a in range(0, 1500, 250):
        m.learn_many(X[a : a + 250], y[a : a + 250])
        scores, live = _live_scores(m)
        assert np.array_equal(scores, m.calibration_scores)
        yhat = m.predict(X[1500:1560])
        iv = m.predict_interval(X[1500:1560], alpha=LEVELS)
        for k, alpha in enumerate(LEVELS):
            s = _conformal_half(scores, alpha)
            assert np.array_equal(iv[:, k, 0], yhat - s) and np.array_equal(iv[:, k, 1], yhat + s)
        for i in range(1560, 1570):
            lo, hi = m.predict_interval_one(_dicts(X[i : i + 1])[0], alpha=0.1)
            s = _conformal_half(scores, 0.1)
            p = m.predict(X[i : i + 1])[0]
            assert (lo, hi) == (p - s, p + s)
        if name.startswith("cpx"):  # |y - mean of the out-of-bag trees' current predictions|
            Pc = m.forest_.engine_.predict_trees(np.ascontiguousarray(m.cal_x_))
            oob = m.cal_oob_.astype(bool).T
            mean = np.where(oob, Pc, 0).sum(0)[live] / oob.sum(0)[live]
            assert np.allclose(np.abs(m.cal_y_[live] - mean), m.cal_score_[live], atol=1e-9)


@pytest.mark.parametrize("name", ["cpa", "cpx"])
def test_empirical_coverage_on_an_exchangeable_stream(name):
    """i.i.d. rows of a target the trees learn at once (a step of ``x0`` plus Gaussian noise):
    the miss rate at each level is ``alpha`` within binomial error (split conformal misses at
    most ``alpha`` and at least ``alpha - 1 / (n + 1)``).  (On a target the forest keeps
    learning, the out-of-bag scores of a few trees are wider than the forest's errors: the
    intervals over-cover.)"""
    rng = np.random.default_rng(17)
    n = 22000
    X = rng.random((n, 3))
    y = np.where(X[:, 0] > 0.5, 3.0, -3.0) + rng.standard_normal(n)
    c = 500
    cls = sf.CPApproximate if name == "cpa" else sf.CPExact
    m = cls(forest=sf.OnlineForestRegressor(n_trees=10, seed=3), calibration_size=c)
    m.learn_many(X[:2000], y[:2000])
    levels = [0.05, 0.1, 0.3]
    _, iv = m.predict_learn_many(X[2000:], y[2000:], alpha=levels)
    yy = y[2000:]
    for k, alpha in enumerate(levels):
        miss = np.mean((yy < iv[:, k, 0]) | (yy > iv[:, k, 1]))
        sd = math.sqrt(alpha * (1 - alpha) / yy.shape[0])
        assert alpha - 1 / (c + 1) - 3 * sd <= miss <= alpha + 3 * sd, (alpha, miss)


def test_conformal_pass_equals_a_full_sort_under_random_rescoring():
    """The method pass with random entrants and refresh events against a plain reference that
    keeps the same per-member sums and sorts every score at every row."""
    rng = np.random.default_rng(5)
    c, T, n = 30, 3, 2500
    alphas = np.array([0.05, 0.25, 0.5, 0.9])
    W = (rng.random((T, n)) < 0.6).astype(float)
    P = rng.normal(size=(T, n)) * 3
    y = rng.normal(size=n) * 3
    slots = np.empty(n, np.int64)
    CORE.ring_slots(np.array([0, c], np.int64), W, slots)
    ev_t, ev_s, ev_v, ev_n = _events(rng, T, n, c, 3.0, 20 * n)
    # reference: the same bookkeeping, and a full sort per row
    cy, coob, cpred = np.zeros(c), np.zeros((c, T), bool), np.zeros((c, T))
    csum, ccnt, present, score = np.zeros(c), np.zeros(c, int), np.zeros(c, bool), np.zeros(c)
    ref = np.empty((n, len(alphas)))
    cur = [0] * T
    for i in range(n):
        srt = np.sort(score[present])
        ref[i] = [_conformal_half(srt, a) for a in alphas]
        s = slots[i]
        if s >= 0:
            cy[s] = y[i]
            coob[s] = W[:, i] == 0
            cpred[s] = P[:, i]
            csum[s], ccnt[s] = 0.0, 0
            for t in range(T):
                if coob[s, t]:
                    csum[s] += P[t, i]
                    ccnt[s] += 1
            score[s] = abs(y[i] - csum[s] / ccnt[s])
            present[s] = True
        touched = []
        for t in range(T):
            while cur[t] < ev_n[t] and ev_t[t, cur[t]] == i:
                s2, v = ev_s[t, cur[t]], ev_v[t, cur[t]]
                if np.isnan(v):
                    if coob[s2, t]:
                        coob[s2, t] = False
                        csum[s2] -= cpred[s2, t]
                        ccnt[s2] -= 1
                else:
                    csum[s2] += v - cpred[s2, t]
                    cpred[s2, t] = v
                if s2 not in touched:
                    touched.append(s2)
                cur[t] += 1
        for s2 in touched:
            if present[s2]:
                if ccnt[s2] == 0:
                    present[s2] = False
                else:
                    score[s2] = abs(cy[s2] - csum[s2] / ccnt[s2])
    cal = {k: np.zeros(c, np.int64 if k in ("ccnt", "order") else float) for k in _CAL}
    cal["coob"], cal["cpred"] = np.zeros((c, T), np.int8), np.zeros((c, T))
    cal["pos"] = np.full(c, -1, np.int64)
    half = np.empty((n, len(alphas)))
    size = CORE.conformal_pass(0, *(cal[k] for k in _CAL), P, W, y, slots, ev_t, ev_s, ev_v, ev_n,
                               alphas, half)  # fmt: skip
    assert np.array_equal(half, ref)
    assert size == present.sum()
    assert np.array_equal(cal["ss"][:size], np.sort(score[present]))
    assert np.array_equal(cal["score"][present], score[present])


def test_gaussian_pass_is_its_definition():
    """Plain Python of the definition, in the kernel's order of operations: the same bits."""
    rng = np.random.default_rng(8)
    T, n = 4, 200
    P, V = rng.normal(size=(T, n)), np.abs(rng.normal(size=(T, n)))
    N = rng.integers(0, 5, (T, n)).astype(float)
    y = rng.normal(size=n)
    z = np.array([-1.96, 0.5, 2.33])
    for mode in (0, 1, 2):
        scale = np.array([0.0, 0.0])
        mean, lo, hi = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3))
        CORE.gaussian_pass(P, V, N, y, True, 2.0, mode, 0.9, z, scale, mean, lo, hi)
        s0 = s1 = 0.0
        for i in range(n):
            m = 0.0
            for t in range(T):
                m += P[t, i]
            m /= T
            b = 0.0
            for t in range(T):
                b += (P[t, i] - m) * (P[t, i] - m)
            b /= T
            var = b
            if mode != 0:
                q = [V[t, i] for t in range(T) if N[t, i] >= 2.0]
                s = 0.0
                for v in q:
                    s += v
                var = s / len(q) + b if q else math.nan
            shape = var
            if mode == 2 and s1 > 0.0:
                var = var * s0 / s1
            sd = math.sqrt(var) if not math.isnan(var) else math.nan
            assert mean[i] == m
            for a in range(3):
                want = (-math.inf, math.inf) if math.isnan(var) else (m - z[a] * sd, m + z[a] * sd)
                assert (lo[i, a], hi[i, a]) == want
            if mode == 2 and shape > 0.0:
                s0 = 0.9 * s0 + (y[i] - m) * (y[i] - m) / shape
                s1 = 0.9 * s1 + 1.0
        assert (scale[0], scale[1]) == (s0, s1)


def test_edge_cases():
    """No row, an empty calibration set (infinite intervals), one member, a level whose rank
    is below 1 or above the set."""
    T = 2
    cal = _random_calibration(np.random.default_rng(0), 5, T, 0)
    empty = np.zeros((T, 0))
    none = (None, None, None, np.zeros(T, np.int64))
    args = (*(cal[k] for k in _CAL), empty, empty, np.zeros(0), np.zeros(0, np.int64))
    assert CORE.conformal_pass(0, *args, *none, np.array([0.1]), np.zeros((0, 1))) == 0
    half = np.zeros((3, 3))
    W = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    P = np.array([[1.0, 2.0, 3.0], [9.0, 9.0, 9.0]])
    slots = np.array([0, -1, -1], np.int64)
    cal = _random_calibration(np.random.default_rng(0), 5, T, 0)
    size = CORE.conformal_pass(0, *(cal[k] for k in _CAL), P, W, np.array([4.0, 0.0, 0.0]),
                               slots, *none, np.array([0.5, 1e-12, 1 - 1e-12]), half)  # fmt: skip
    assert size == 1 and cal["ss"][0] == 3.0 and cal["order"][0] == 0 and cal["pos"][0] == 0
    assert (half[0] == np.inf).all()  # nothing calibrated before row 0
    assert half[1, 0] == 3.0  # rank ceil(2 * 0.5) = 1 of 1 score
    assert half[1, 1] == np.inf  # alpha near 0: rank 2 > 1 score
    assert half[1, 2] == -np.inf  # alpha near 1: rank 0


# ------------------------------------------------------------------------------------------------
# refusals
def test_bindings_refuse_what_they_would_overrun():
    mb, X, y = _learnt("cpx-obs-adaptive", n=400)
    e = mb.forest_.engine_
    c, T = int(mb.calibration_size), e.n_trees
    names = ("y", "oob", "pred", "sum", "cnt", "score", "order", "pos", "sorted")
    cal = [getattr(mb, f"cal_{k}_") for k in names]
    n = 8
    P, W, yy = np.zeros((T, n)), np.ones((T, n)), np.zeros(n)
    slots = np.full(n, -1, np.int64)
    none = (None, None, None, np.zeros(T, np.int64))
    half = np.zeros((n, 1))
    al = np.array([0.1])
    with pytest.raises(ValueError, match="size|sorted set"):
        CORE.conformal_pass(mb.size_ + 1, *cal, P, W, yy, slots, *none, al, half)
    with pytest.raises(ValueError, match="slots"):
        CORE.conformal_pass(mb.size_, *cal, P, W, yy, np.full(n, c, np.int64), *none, al, half)
    with pytest.raises(ValueError, match="half"):
        CORE.conformal_pass(mb.size_, *cal, P, W, yy, slots, *none, al, np.zeros((n - 1, 1)))
    with pytest.raises(TypeError):  # an output of another item type
        CORE.conformal_pass(mb.size_, *cal, P, W, yy, slots, *none, al, half.astype(np.float32))
    bad = cal[7].copy()  # a held slot without its rank: fewer held slots than the size
    bad[np.flatnonzero(bad >= 0)[0]] = -1
    with pytest.raises(ValueError, match="sorted set"):
        CORE.conformal_pass(mb.size_, *cal[:7], bad, *cal[8:], P, W, yy, slots, *none, al, half)
    ev = (np.zeros((T, 4), np.int32), np.full((T, 4), c, np.int32), np.zeros((T, 4)),
          np.full(T, 2, np.int64))  # fmt: skip
    with pytest.raises(ValueError, match="ev_s"):
        CORE.conformal_pass(mb.size_, *cal, P, W, yy, slots, *ev, al, half)
    with pytest.raises(ValueError, match="ev_n"):
        CORE.conformal_pass(mb.size_, *cal, P, W, yy, slots, *ev[:3], np.full(T, 5, np.int64),
                            al, half)  # fmt: skip
    # a zero-weight row in no tree's bag... with W all ones, enter a slot: 0 / 0
    with pytest.raises(ZeroDivisionError):
        CORE.conformal_pass(mb.size_, *[a.copy() for a in cal], P, W, yy,
                            np.zeros(n, np.int64), *none, al, half)  # fmt: skip
    # CPExact's tree pass, on copies of a model with linear leaves (its refreshes read the
    # members' rows): links followed where the pass uses them, short buffers, a wrong tree
    Xa = np.ascontiguousarray(e.features.encode_array(X[:n], False))
    lin = sf.CPExact(forest=_obs(leaf_model="linear", seed=4), calibration_size=c)
    lin.learn_many(*stream(400, seed=9))
    t = max(range(T), key=lambda t: int((lin.cal_leaf_[t] >= 0).sum()))
    heads = np.flatnonzero((lin.cal_leaf_[t] >= 0) & (lin.cal_prev_[t] == -1))
    assert heads.size and (lin.cal_leaf_[t] >= 0).sum() >= 2

    def exact_pass(w, first=-1, ev=None, tree=None, **changed):
        m = pickle.loads(pickle.dumps(lin))
        a = {k: getattr(m, f"cal_{k}_")[t].copy() for k in ("leaf", "next", "prev", "birth", "cur")}
        a.update(changed)
        ev = ev or (np.zeros(8 * c, np.int32), np.zeros(8 * c, np.int32), np.zeros(8 * c),
                    np.zeros(1, np.int64))  # fmt: skip
        sl = np.full(n, -1, np.int64)
        sl[0] = first
        stop = CORE.exact_tree_pass(
            m.forest_.engine_.arena, t if tree is None else tree, Xa, yy, w, sl, m.n_seen, 0,
            np.zeros(n), m.cal_x_, a["leaf"], a["next"], a["prev"], a["birth"], a["cur"], *ev,
        )  # fmt: skip
        return stop, ev[3][0]

    assert exact_pass(np.ones(n)) == (n, exact_pass(np.ones(n))[1])  # valid: the same twice
    assert exact_pass(np.ones(n))[1] > 0  # (the rows' leaves hold members: refreshes walk them)
    h = int(heads[0])
    leaf = lin.cal_leaf_[t].copy()
    leaf[h] = 10**6
    with pytest.raises(ValueError, match="cal_leaf"):  # a list head leaves its list
        exact_pass(np.zeros(n), first=h, leaf=leaf)
    nxt = lin.cal_next_[t].copy()
    nxt[h] = c
    with pytest.raises(ValueError, match="outside the calibration set"):
        exact_pass(np.zeros(n), first=h, next=nxt)
    birth = np.where(lin.cal_leaf_[t] >= 0, lin.n_seen + n, lin.cal_birth_[t])
    with pytest.raises(ValueError, match="cal_birth"):  # members born after the chunk
        exact_pass(np.ones(n), birth=birth)
    nxt = np.where(lin.cal_leaf_[t] >= 0, np.arange(c), lin.cal_next_[t])
    with pytest.raises(ValueError, match="cycle"):  # every member its own next
        exact_pass(np.ones(n), next=nxt)
    evb = (np.zeros(8 * c, np.int32), np.zeros(8 * c, np.int32), np.zeros(8 * c),
           np.array([8 * c + 1], np.int64))  # fmt: skip
    with pytest.raises(ValueError, match="ev_n"):
        exact_pass(np.zeros(n), ev=evb)
    with pytest.raises(IndexError):
        exact_pass(np.zeros(n), tree=T)
    with pytest.raises(TypeError):  # the events' members of another item type
        exact_pass(np.zeros(n), ev=(evb[0], evb[1].astype(np.int64), evb[2], evb[3] * 0))
    with pytest.raises(ValueError, match="room"):
        CORE.exact_tree_reset(3, lin.cal_leaf_[t].copy(), *(a[:1] for a in evb[:3]), evb[3] * 0)
    # the handle kernels: a wrong handle, a size beyond the set
    e.use_row(Xa[0])
    H, C = e.handle(), mb._calibration_handle()
    with pytest.raises(ValueError, match="handle"):
        CORE.cp_interval_one_h(C, H, e.aggregation, mb.size_, 0.1)
    with pytest.raises(ValueError, match="size"):
        CORE.cp_interval_one_h(H, C, e.aggregation, c + 1, 0.1)
    with pytest.raises(ValueError, match="size"):
        CORE.cp_learn_one_h(H, C, e.bagging, 1.0, 1.0, -1, False, c + 1)
    with pytest.raises(TypeError):
        CORE.cp_learn_one_h(H.astype(np.int32), C, e.bagging, 1.0, 1.0, -1, False, 0)
    # the per-example step: the rank of the ring's next slot, the slots its order moves
    m = MODELS["cpa-obs-adaptive"]()
    m.learn_many(*stream(600, seed=3))
    e = m.forest_.engine_
    x = np.ascontiguousarray(e.features.encode_array(X[:1], False)[0])

    def learn(m):
        return CORE.cp_learn_one(
            e.arena, e.rng, e.bagging, x, 1.0, 0.0, np.zeros(T), np.zeros(T),
            np.zeros(T, np.int8), -1, np.zeros((4, 0)), m.ring_, m.cal_y_, m.cal_oob_,
            m.cal_pred_, m.cal_sum_, m.cal_cnt_, m.cal_score_, m.cal_order_, m.cal_pos_,
            m.cal_sorted_, m.cal_x_, m.size_,
        )  # fmt: skip

    k = m.size_
    assert k == m.calibration_size  # (full: the row's slot is held, its score moves)
    m.ring_[0] = m.cal_order_[k - 1]
    bad = pickle.loads(pickle.dumps(m))
    bad.cal_pos_[bad.ring_[0]] = k
    with pytest.raises(ValueError, match="cal_pos"):
        learn(bad)
    m.cal_sorted_[:k] = 1e300  # the new score moves to the front...
    m.cal_order_[: k - 1] = k + 5  # ... past slots outside the set
    with pytest.raises(ValueError, match="cal_order"):
        learn(m)
    # GaussianInterval: short outputs, no tree (0 / 0: ZeroDivisionError)
    with pytest.raises(ValueError, match="lo"):
        CORE.gaussian_pass(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros(3),
                           False, 2.0, 1, 1.0, np.zeros(2), np.zeros(2), np.zeros(3),
                           np.zeros((3, 1)), np.zeros((3, 2)))  # fmt: skip
    with pytest.raises(ZeroDivisionError):
        CORE.gaussian_pass(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(3),
                           False, 2.0, 1, 1.0, np.zeros(2), np.zeros(2), np.zeros(3),
                           np.zeros((3, 2)), np.zeros((3, 2)))  # fmt: skip
    with pytest.raises(ValueError, match="P"):
        CORE.gaussian_tree_pass(e.arena, 0, Xa, yy, np.ones(n), 0, False, True, np.zeros(n - 1),
                                np.zeros(n), np.zeros(n))  # fmt: skip


def test_calibration_rows_are_stored_at_their_slots():
    """For a forest without trees yet (a sharded forest's driver): the rows are kept in their
    calibration slots (-1: none); the slots no row entered stay missing."""
    X, _ = stream(400, seed=2)
    d = sf.CPApproximate(forest=_obs(), calibration_size=50)
    _ = d.forest_  # (the method's state made; no tree exists yet)
    d.store_calibration_rows(np.array([3, -1], np.int64), X[:2, :5])
    d.store_calibration_rows(np.array([-1, 4], np.int64), X[:2, :5])
    assert np.array_equal(d.cal_x_[[3, 4]], X[:2, :5]) and np.isnan(d.cal_x_[5:]).all()
