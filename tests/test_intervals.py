"""Interval meta-algorithms: exactness of CPExact, validity, quantile tracking, HDI, API."""

import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.sketches import kll

from .conftest import friedman1

ALPHAS = [0.3, 0.1, 0.05]


def small_forest(n_trees=4, grace=40, leaf_model="adaptive"):
    return sf.OnlineForestRegressor(
        n_trees=n_trees, tree=sf.HoeffdingTreeRegressor(grace_period=grace, leaf_model=leaf_model)
    )


def hetero(n, rng):
    X = rng.random((n, 5))
    y = 10 * X[:, 0] + 5 * np.sin(3 * X[:, 1]) + (0.2 + 3 * X[:, 0]) * rng.standard_normal(n)
    return X, y


def brute_force_scores(m):
    """|y - mean of the OOB trees' current predictions| for every calibration member."""
    P = m.forest_.engine_.predict_trees(np.ascontiguousarray(m.cal_x_))
    oob = m.cal_oob_.astype(bool).T
    live = m.cal_pos_ >= 0
    mean = np.where(oob, P, 0).sum(0)[live] / oob.sum(0)[live]
    return np.abs(m.cal_y_[live] - mean), live


@pytest.mark.parametrize("leaf_model", ["mean", "adaptive"])
@pytest.mark.parametrize("step", [1, 37])
def test_cpexact_scores_equal_brute_force_after_every_step(leaf_model, step, rng):
    X, y = friedman1(2500, rng)
    if step == 37:  # missing values: linear leaves skip their terms
        X[rng.random(X.shape) < 0.05] = np.nan
    m = sf.CPExact(calibration_size=60, forest=small_forest(leaf_model=leaf_model), seed=2)
    worst = 0.0
    for a in range(0, 2500, step):
        m.learn_many(X[a : a + step], y[a : a + step])
        scores, live = brute_force_scores(m)
        worst = max(worst, np.abs(scores - m.cal_score_[live]).max())
        srt = m.calibration_scores
        assert np.all(np.diff(srt) >= 0) and srt.shape[0] == live.sum() == min(60, m.size_)
        # the sorted view holds exactly the members' scores, and ranks point back to slots
        assert np.array_equal(srt, np.sort(m.cal_score_[live]))
        assert np.array_equal(m.cal_order_[m.cal_pos_[live]], np.flatnonzero(live))
    assert worst <= 1e-9
    assert sum(t.n_splits for t in m.forest_.trees_) > 40  # splits happened along the way
    assert m.forest_.n_resets == 0
    # CPApproximate on the same stream does not refresh: its scores are stale
    ma = sf.CPApproximate(calibration_size=60, forest=small_forest(leaf_model=leaf_model), seed=2)
    ma.learn_many(X, y)
    scores, live = brute_force_scores(ma)
    assert np.abs(scores - ma.cal_score_[live]).max() > 1e-3


def test_cpexact_stays_exact_when_trees_are_replaced(rng):
    from .test_forest import drifting

    X, y = drifting(4000, 2000, rng)
    m = sf.CPExact(calibration_size=80, forest=small_forest(), seed=4)
    worst = 0.0
    for a in range(0, 4000, 23):
        m.learn_many(X[a : a + 23], y[a : a + 23])
        scores, live = brute_force_scores(m)
        worst = max(worst, np.abs(scores - m.cal_score_[live]).max())
        assert live.sum() == m.size_ and np.all(m.cal_oob_[live].sum(1) >= 1)
    assert m.forest_.n_resets >= 2
    assert worst <= 1e-9


@pytest.mark.parametrize(
    "make",
    [
        lambda: sf.CPApproximate(calibration_size=100, forest=small_forest(), seed=1),
        lambda: sf.CPExact(calibration_size=100, forest=small_forest(), seed=1),
        lambda: sf.OnlineQRF(forest=small_forest(), seed=1),
        lambda: sf.OnlineQRF(forest=small_forest(), interval="hdi", seed=1),
        lambda: sf.ConformalQRF(
            forest=small_forest(), calibration_size=100, aci_gamma=0.01, seed=1
        ),
        lambda: sf.GaussianInterval(forest=small_forest(), seed=1),
    ],
)
def test_prequential_is_chunk_invariant_and_matches_the_river_api(make, rng):
    X, y = friedman1(1200, rng)
    a = make()
    pa, ia = a.predict_learn_many(X, y, alpha=[0.1, 0.3])
    b = make()
    parts = [
        b.predict_learn_many(X[s], y[s], alpha=[0.1, 0.3])
        for s in np.array_split(np.arange(1200), 5)
    ]
    assert np.array_equal(pa, np.concatenate([p for p, _ in parts]))
    assert np.array_equal(ia, np.concatenate([i for _, i in parts]))
    c = make()
    for i in range(1200):  # River style: predict_interval_one then learn_one
        x = dict(enumerate(X[i]))
        if i % 97 == 0:
            lo, hi = c.predict_interval_one(x, alpha=0.1)
            assert (lo, hi) == (ia[i, 0, 0], ia[i, 0, 1])
        c.learn_one(x, y[i])
    assert ia.shape == (1200, 2, 2)
    assert np.all(ia[:, 0, 0] <= ia[:, 0, 1])
    # prediction-only calls do not change the model
    before = pickle.dumps(a)
    a.predict_interval(X[:50], alpha=0.1)
    a.predict(X[:50])
    assert pickle.dumps(a) == before


@pytest.mark.parametrize("data", [friedman1, hetero])
@pytest.mark.parametrize(
    "make",
    [
        lambda: sf.CPApproximate(seed=3),
        lambda: sf.CPExact(seed=3),
        lambda: sf.ConformalQRF(alphas=ALPHAS, seed=3),
        lambda: sf.ConformalQRF(alphas=ALPHAS, aci_gamma=0.005, seed=3),
    ],
    ids=["CPApproximate", "CPExact", "ConformalQRF", "ConformalQRF-ACI"],
)
def test_conformal_methods_are_valid_on_stationary_streams(data, make, rng):
    X, y = data(22000, rng)
    m = make()
    m.learn_many(X[:2000], y[:2000])
    _, iv = m.predict_learn_many(X[2000:], y[2000:], alpha=ALPHAS)
    yy = y[2000:]
    n = yy.shape[0]
    for a, alpha in enumerate(ALPHAS):
        mer = np.mean((yy < iv[:, a, 0]) | (yy > iv[:, a, 1]))
        assert mer <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / n), (alpha, mer)
        assert np.isfinite(iv[:, a]).all()


def test_qrf_tracks_known_conditional_quantiles(rng):
    """y = x0 + (0.1 + x0) * N(0, 1): the q-quantile is x0 + (0.1 + x0) * z_q."""
    n = 60000
    X = rng.random((n, 2))
    y = X[:, 0] + (0.1 + X[:, 0]) * rng.standard_normal(n)
    m = sf.OnlineQRF(seed=0).learn_many(X, y)
    grid = np.column_stack([np.linspace(0.05, 0.95, 19), np.full(19, 0.5)])
    qs = [0.05, 0.25, 0.5, 0.75, 0.95]
    z = np.array([-1.6449, -0.6745, 0.0, 0.6745, 1.6449])
    truth = grid[:, :1] + (0.1 + grid[:, :1]) * z
    got = m.predict_quantiles(grid, qs)
    err = np.abs(got - truth)
    # stated tolerance: mean absolute error <= 0.1 (the conditional sd ranges 0.15..1.05), worst
    # point <= 0.4 (the extreme quantiles at the grid's ends, where leaves are widest)
    assert err.mean() <= 0.1, err.mean()
    assert err.max() <= 0.4, err.max()
    assert np.all(np.diff(got, axis=1) >= 0)  # quantiles are monotone in q
    # an interval is the pair of quantiles at alpha/2 and 1 - alpha/2
    iv = m.predict_interval(grid, alpha=0.1)
    assert np.array_equal(iv, got[:, [0, 4]])


def _rows(arrays, dtype):
    """One ``(T, capacity)`` array whose row t starts with ``arrays[t]`` (the rest zeros): the
    per-tree buffers as the kernels take them."""
    out = np.zeros((len(arrays), max(max(len(a) for a in arrays), 1)), dtype)
    for t, a in enumerate(arrays):
        out[t, : len(a)] = a
    return out


def _records_from_sketches(groups):
    """Leaf-sketch records laid out as the tree pass writes them: ``(bufs, goff, glv)``."""
    T, n = len(groups[0]), len(groups)
    glv = np.zeros((T, n, kll.LV_WIDTH), np.int64)
    goff = np.zeros((T, n), np.int64)
    bufs = [[] for _ in range(T)]
    pos = [0] * T
    for i, row in enumerate(groups):
        for t, (vals, w) in enumerate(row):
            s = sf.KLLSketch(200, seed=i * T + t)
            s.update_many(vals, w)
            glv[t, i] = s._lv[0]
            items = s._items[0, s._lv[0, 1] :]
            goff[t, i] = pos[t]
            bufs[t].append(items)
            pos[t] += items.shape[0]
    return _rows([np.concatenate(b) for b in bufs], np.float64), goff, glv


def query(rec, mask, mein, qs, masses, out_q, out_lo, out_hi):
    _core.quantile.mixture_query(
        *rec, mask, mein, qs, masses, out_q, out_lo, out_hi, 0, rec[1].shape[1]
    )


def _record_items(rec, i, mein):
    """Values and mixture weights of row i's retained items, straight from the records."""
    bufs, goff, glv = rec
    T = glv.shape[0]
    vals, wts = [], []
    for t in range(T):
        n_t = glv[t, i, kll.LV_N]
        for h in range(glv[t, i, 0]):
            s, e = glv[t, i, h + 1], glv[t, i, h + 2]
            off = goff[t, i] - glv[t, i, 1]
            vals.append(bufs[t][off + s : off + e])
            wts.append(np.full(e - s, 2.0**h / n_t / T if mein else 2.0**h))
    return np.concatenate(vals), np.concatenate(wts)


def test_mixture_quantiles_equal_brute_force_weighted_quantiles(rng):
    groups = []
    for _ in range(40):  # sizes on both sides of the sketch capacity
        groups.append(
            [(rng.gamma(1.0 + t, size=m), rng.integers(1, 4, size=m))
             for t, m in enumerate(rng.integers(5, 3000, size=5))]
        )  # fmt: skip
    rec = _records_from_sketches(groups)
    qs = np.array([0.0, 0.05, 0.3, 0.5, 0.77, 0.95, 1.0])
    mask = np.ones((5, 40), np.int8)
    for mein in (True, False):
        out = np.empty((40, qs.shape[0]))
        query(rec, mask, mein, qs, np.zeros(0), out, out, out)
        for i in range(40):
            v, w = _record_items(rec, i, mein)
            o = np.argsort(v, kind="stable")
            cum = np.cumsum(w[o])
            for k, q in enumerate(qs):
                j = np.searchsorted(cum, q * cum[-1] * (1 - 1e-12))
                assert out[i, k] == v[o][min(j, v.shape[0] - 1)], (mein, i, q)
        # a tree left out by the mask does not count
        m2 = mask.copy()
        m2[0] = 0
        out2 = np.empty((40, qs.shape[0]))
        query(rec, m2, mein, qs, np.zeros(0), out2, out2, out2)
        assert not np.array_equal(out, out2)


@pytest.mark.parametrize("shape", ["skewed", "bimodal"])
def test_hdi_never_wider_than_equal_tailed_and_holds_the_mass(shape, rng):
    groups = []
    for _ in range(60):
        row = []
        for _t in range(4):
            m = rng.integers(20, 3000)
            if shape == "skewed":
                v = rng.lognormal(0, 1.0, size=m)
            else:
                v = np.where(rng.random(m) < 0.3, rng.normal(0, 0.3, m), rng.normal(6, 1, m))
            row.append((v, rng.integers(1, 3, size=m)))
        groups.append(row)
    rec = _records_from_sketches(groups)
    mask = np.ones((4, 60), np.int8)
    masses = np.array([0.5, 0.8, 0.9, 0.95])
    qs = np.ascontiguousarray(np.stack([(1 - masses) / 2, 1 - (1 - masses) / 2], 1).ravel())
    et = np.empty((60, 8))
    lo = np.empty((60, 4))
    hi = np.empty((60, 4))
    query(rec, mask, True, qs, masses, et, lo, hi)
    width_et = et[:, 1::2] - et[:, 0::2]
    assert np.all(hi - lo <= width_et + 1e-12)
    if shape == "skewed":  # strictly shorter on a skewed mixture
        assert np.mean(hi - lo < 0.95 * width_et) > 0.9
    # the HDI holds at least the mass of the mixture (checked on the mixture's items)
    for i in range(60):
        v, w = _record_items(rec, i, True)
        for k, mass in enumerate(masses):
            inside = w[(v >= lo[i, k]) & (v <= hi[i, k])].sum()
            assert inside >= mass * w.sum() * (1 - 1e-9)


def test_intervals_before_data_are_infinite_and_levels_are_checked(rng):
    X, y = friedman1(10, rng)
    for m in (sf.OnlineQRF(), sf.CPApproximate(), sf.ConformalQRF(alphas=(0.1,))):
        iv = m.predict_interval(X, alpha=0.1)
        assert iv.shape == (10, 2) and np.all(iv[:, 0] == -np.inf) and np.all(iv[:, 1] == np.inf)
        assert m.predict_interval_one({0: 1.0}, alpha=[0.1, 0.2]) == [(-np.inf, np.inf)] * 2
    cp = sf.CPApproximate(calibration_size=50)
    cp.learn_many(X[:5], y[:5])  # fewer scores than 1/alpha - 1: still infinite
    assert np.all(np.isinf(cp.predict_interval(X, alpha=0.05)))
    # ConformalQRF answers levels it does not calibrate (see test_cqr_levels)
    iv = sf.ConformalQRF(alphas=(0.1,)).learn_many(X, y).predict_interval(X, alpha=0.2)
    assert iv.shape == (10, 2)
    for bad in (0.0, 1.0, -0.1, [0.1, 2], "0.1", []):
        with pytest.raises((ValueError, TypeError)):
            sf.OnlineQRF().predict_interval(X, alpha=bad)
    assert np.isnan(sf.OnlineQRF().predict_quantiles(X, 0.5)).all()


def test_calibration_memory_is_bounded(rng):
    X, y = friedman1(5000, rng)
    m = sf.CPExact(calibration_size=200, forest=small_forest(), seed=0).learn_many(X, y)
    assert m.size_ == 200
    assert m._own_bytes() < 200 * (4 * 8 * 5 + 8 * 5 + 64) + 200 * 10 * 8


@pytest.mark.parametrize("cls", [sf.CPApproximate, sf.CPExact, sf.OnlineQRF, sf.ConformalQRF])
def test_bad_input_loses_nothing(cls, rng):
    X, y = friedman1(600, rng)
    m = cls(forest=small_forest(), seed=0).learn_many(X, y)
    before = pickle.dumps(m)
    for bad in [
        lambda: m.learn_many(X[:, :4], y),
        lambda: m.learn_many(X, y[:5]),
        lambda: m.learn_many(np.where(X > 0.9, np.inf, X), y),
        lambda: m.learn_one({0: 0.5}, float("nan")),
        lambda: m.learn_one({0: "text"}, 1.0),
        lambda: m.predict_learn_many(X, y, alpha=1.5),
        lambda: m.predict_interval(X[:, :3], alpha=0.1),
        lambda: m.predict_interval(X, alpha=[0.1, None]),
    ]:
        with pytest.raises((ValueError, TypeError)):
            bad()
        assert pickle.dumps(m) == before
    for bad_params in [dict(seed="1"), dict(forest="forest")]:
        with pytest.raises((ValueError, TypeError)):
            cls(**bad_params).learn_many(X, y)


@pytest.mark.parametrize(
    "cls",
    [
        sf.CPApproximate,
        sf.CPExact,
        sf.OnlineQRF,
        lambda forest, seed: sf.OnlineQRF(forest=forest, interval="hdi", seed=seed),
    ],
)
def test_pipeline_on_threads_changes_nothing(cls, rng):
    """With n_jobs=2 a chunk is scored on its own thread while the trees learn the next one;
    the results must be those of the sequential order (drifts included: trees are replaced)."""
    from .test_forest import drifting

    X, y = drifting(30_000, 15_000, rng)
    runs = []
    for jobs in (1, 2):
        m = cls(forest=sf.OnlineForestRegressor(n_trees=4, seed=3, n_jobs=jobs), seed=3)
        p, iv = m.predict_learn_many(X, y, alpha=[0.1, 0.3])
        cal = getattr(m, "calibration_scores", np.zeros(0))
        runs.append((p, iv, cal, m.forest_.n_resets))
    assert np.array_equal(runs[0][0], runs[1][0]) and np.array_equal(runs[0][1], runs[1][1])
    assert np.array_equal(runs[0][2], runs[1][2])
    assert runs[0][3] == runs[1][3] >= 1


@pytest.mark.parametrize("cls", [sf.CPApproximate, sf.CPExact])
def test_conformal_ranks_within_a_pass_equal_a_full_sort(cls, rng):
    """Within one pass only the largest scores are kept sorted (a top part refilled from the
    rest); a pass of one row starts from the full sorted order.  Both must give the same
    intervals at every row, at low and high levels, with members leaving after drifts."""
    from .test_forest import drifting

    X, y = drifting(2500, 1200, rng)
    alphas = [0.02, 0.1, 0.3, 0.6]
    make = lambda: cls(calibration_size=150, forest=small_forest(), seed=5)  # noqa: E731
    whole = make()
    pw, iw = whole.predict_learn_many(X, y, alpha=alphas)
    rows = make()
    parts = [rows.predict_learn_many(X[i : i + 1], y[i : i + 1], alpha=alphas) for i in range(2500)]
    assert np.array_equal(pw, np.concatenate([p for p, _ in parts]))
    assert np.array_equal(iw, np.concatenate([i for _, i in parts]))
    assert np.isfinite(iw[-1]).all() and whole.forest_.n_resets >= 1
    assert np.array_equal(whole.calibration_scores, rows.calibration_scores)


def test_conformal_pass_equals_a_full_sort_under_random_rescoring():
    """The compiled conformal pass against a plain reference that sorts every score at every
    row, with members re-scored wildly many times per row, dropped out-of-bag trees and members
    leaving: exercises the top part's refills and its bound on the rest."""
    from streamforest._core import intervals as conformal_kernels

    rng = np.random.default_rng(11)
    c, T, n = 40, 3, 3000
    alphas = np.array([0.05, 0.25, 0.5, 0.9])
    W = (rng.random((T, n)) < 0.6).astype(float)  # 0: out of bag
    P = rng.normal(size=(T, n)) * 3
    y = rng.normal(size=n) * 3
    slots = np.full(n, -1, np.int64)
    head = 0
    for i in range(n):
        if (W[:, i] == 0).any():
            slots[i], head = head, (head + 1) % c
    # reference: the same bookkeeping, and a full sort per row
    cy, coob, cpred = np.zeros(c), np.zeros((c, T), bool), np.zeros((c, T))
    csum, ccnt, present = np.zeros(c), np.zeros(c, int), np.zeros(c, bool)
    score = np.zeros(c)
    events = [[] for _ in range(T)]
    ref = np.empty((n, len(alphas)))
    for i in range(n):
        live = np.sort(score[present])
        m = len(live)
        for a, al in enumerate(alphas):
            r = int(np.ceil((m + 1) * (1 - al) - 1e-9))
            ref[i, a] = np.inf if (r > m or m == 0) else (-np.inf if r < 1 else live[r - 1])
        s = slots[i]
        if s >= 0:
            cy[s] = y[i]
            coob[s] = W[:, i] == 0
            cpred[s] = P[:, i]
            csum[s] = sum(P[t, i] for t in range(T) if coob[s, t])
            ccnt[s] = coob[s].sum()
            score[s] = abs(y[i] - csum[s] / ccnt[s])
            present[s] = True
        touched = []
        for t in range(T):
            for mm in np.flatnonzero(present & coob[:, t]):
                u = rng.random()
                if u < 0.01:  # tree replaced: no longer out of bag
                    events[t].append((i, mm, np.nan))
                    coob[mm, t] = False
                    csum[mm] -= cpred[mm, t]
                    ccnt[mm] -= 1
                elif u < 0.5:
                    v = rng.normal() * 4
                    events[t].append((i, mm, v))
                    csum[mm] += v - cpred[mm, t]
                    cpred[mm, t] = v
                else:
                    continue
                if mm not in touched:
                    touched.append(mm)
        for mm in touched:
            if present[mm]:
                if ccnt[mm] == 0:
                    present[mm] = False
                else:
                    score[mm] = abs(cy[mm] - csum[mm] / ccnt[mm])
    ev_t = _rows([[e[0] for e in ev] for ev in events], np.int32)
    ev_s = _rows([[e[1] for e in ev] for ev in events], np.int32)
    ev_v = _rows([[e[2] for e in ev] for ev in events], np.float64)
    ev_n = np.array([len(ev) for ev in events], np.int64)
    half = np.empty((n, len(alphas)))
    order, pos, ss = np.zeros(c, np.int64), np.full(c, -1, np.int64), np.zeros(c)
    args = (np.zeros(c), np.zeros((c, T), np.int8), np.zeros((c, T)), np.zeros(c))
    size = conformal_kernels.conformal_pass(
        0,
        *args,
        np.zeros(c, np.int64),
        np.zeros(c),
        order,
        pos,
        ss,
        P,
        W,
        y,
        slots,
        ev_t,
        ev_s,
        ev_v,
        ev_n,
        alphas,
        half,
    )
    assert min(ev_n) > 10_000 and not present.all()  # heavy re-scoring, members left
    assert size == present.sum()
    assert np.array_equal(half, ref)
    assert np.array_equal(ss[:size], np.sort(score[present]))


@pytest.mark.parametrize("jobs", [1, 2])
def test_qrf_chunks_from_the_record_budget_change_nothing(jobs, rng, monkeypatch):
    """OnlineQRF sizes a call's chunks from a budget of leaf-sketch copies: with a budget of
    almost nothing (256-row chunks), a call of up to two chunks' rows runs as one chunk, a
    longer one as equal chunks (with n_jobs=2, each scored while the trees learn the next, the
    last on the forest's threads).  The results are those of one call on all rows."""
    X, y = friedman1(3000, rng)

    def make(n_jobs):
        f = sf.OnlineForestRegressor(
            n_trees=4, n_jobs=n_jobs, tree=sf.HoeffdingTreeRegressor(grace_period=40)
        )
        return sf.OnlineQRF(forest=f, seed=2)

    whole = make(1)
    pw, iw = whole.predict_learn_many(X, y, alpha=[0.1, 0.3])
    monkeypatch.setattr(sf.OnlineQRF, "_record_budget", 1)
    stages = []
    tree_stage = sf.OnlineQRF._tree_stage

    def counted(self, Xa, *args):
        stages.append(Xa.shape[0])
        return tree_stage(self, Xa, *args)

    monkeypatch.setattr(sf.OnlineQRF, "_tree_stage", counted)
    parts = make(jobs)
    cuts = [0, 400, 2400, 3000]  # one chunk of 400; 8 of 250; 3 of 200
    out = [
        parts.predict_learn_many(X[a:b], y[a:b], alpha=[0.1, 0.3])
        for a, b in zip(cuts[:-1], cuts[1:], strict=True)
    ]
    assert stages == [400] + [250] * 8 + [200] * 3
    assert np.array_equal(pw, np.concatenate([p for p, _ in out]))
    assert np.array_equal(iw, np.concatenate([i for _, i in out]))


@pytest.mark.parametrize(
    "method, forest",
    [(sf.CPApproximate, "aborf"), (sf.CPApproximate, "amf"), (sf.CPExact, "aborf")],
)  # (CPExact needs leaf payloads: AMF is refused for that, tests/test_forest_interface.py)
def test_out_of_bag_methods_refuse_a_forest_without_bagging(method, forest, rng):
    """ABORF and AMF learn every row in every tree by default (lambda_value = 0): a
    calibration set of out-of-bag rows would stay empty and every interval infinite.  The
    conformal methods refuse such a forest, naming lambda_value, before learning anything; with
    lambda_value > 0 they calibrate (finite intervals)."""
    X, y = friedman1(1500, rng)
    make = {"aborf": sf.ABORFRegressor, "amf": sf.AMFRegressor}[forest]
    model = method(forest=make(n_trees=3, seed=1), calibration_size=200, seed=1)
    with pytest.raises(ValueError, match="lambda_value"):
        model.learn_many(X, y)
    with pytest.raises(ValueError, match="lambda_value"):
        model.learn_one(dict(enumerate(X[0])), float(y[0]))
    assert model.n_seen == 0
    if method is sf.CPExact:
        return  # (CPExact over ABORF learning: a kind no other test compiles)
    good = method(forest=make(n_trees=3, lambda_value=1.0, seed=1), calibration_size=200, seed=1)
    good.learn_many(X[:1000], y[:1000])
    assert np.all(np.isfinite(good.predict_interval(X[1000:], alpha=0.1)))
