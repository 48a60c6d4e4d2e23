"""Intervals calibrated per group (``groups=``): the windows against a reference written from
their definition, the coverage of every group, bad input, persistence."""

from __future__ import annotations

import math
import pickle
import threading

import numpy as np
import pytest

import streamforest as sf
from streamforest.evaluate import prequential
from streamforest.intervals import _groups

INF = float("inf")


# --- the windows against a reference -------------------------------------------------------------
def _rank_quantile(scores, alpha):
    """The split-conformal quantile of ``scores``: the ceil((n + 1)(1 - alpha))-th smallest."""
    n = len(scores)
    r = math.ceil((n + 1) * (1 - alpha) - 1e-9)
    return INF if n == 0 or r > n else sorted(scores)[r - 1]


def _score(lo, hi, y):
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return INF
    m, h = 0.5 * (lo + hi), 0.5 * (hi - lo)
    r = abs(y - m)
    return r / h if h > 0 else (0.0 if r == 0 else INF)


class _Reference:
    """The windows as groups.hpp defines them, in plain Python."""

    def __init__(self, width):
        self.width = width
        self.windows: dict = {0: []}

    def threshold(self, cells, alpha):
        pool = _rank_quantile(self.windows[0], alpha)
        qs = []
        for c in cells:
            own = _rank_quantile(self.windows.get(c, []), alpha) if c > 0 else INF
            qs.append(own if own != INF else pool)  # young or no group: the pool's
        return max(qs) if qs else pool

    def run(self, ids, lo, hi, y, learn, alphas):
        out = np.empty((len(lo), len(alphas), 2))
        for i in range(len(lo)):
            finite = math.isfinite(lo[i]) and math.isfinite(hi[i])
            m, h = (0.5 * (lo[i] + hi[i]), 0.5 * (hi[i] - lo[i])) if finite else (0.0, 0.0)
            for a, alpha in enumerate(alphas):
                q = self.threshold(ids[i], alpha)
                out[i, a] = (-INF, INF) if not finite or q == INF else (m - q * h, m + q * h)
            if learn:
                s = _score(lo[i], hi[i], y[i])
                for c in [0, *[c for c in ids[i] if c > 0]]:
                    w = self.windows.setdefault(c, [])
                    w.append(s)
                    del w[: max(0, len(w) - self.width)]
        return out


def _random_rows(rng, n, families, groups_per_family):
    cols = [rng.integers(0, groups_per_family, n).astype(float) for _ in range(families)]
    for c in cols:  # a few rows without a group
        c[rng.random(n) < 0.05] = np.nan
    m = rng.normal(0, 1, n)
    h = rng.exponential(1, n)
    h[rng.random(n) < 0.02] = 0.0
    lo, hi = m - h, m + h
    lo[:3] = -INF  # the method's first intervals: infinite
    hi[:3] = INF
    y = m + h * rng.normal(0, 1.5, n) * np.where(cols[0] == 1, 3.0, 1.0)
    at = rng.random(n) < 0.01
    y[at] = m[at]  # exactly at the centre
    return cols, lo, hi, y


@pytest.mark.parametrize("families", [1, 2, 3])
def test_windows_match_the_reference(families):
    """Every interval of a grouped pass (the young-group rule, the pool, the largest of several
    families' thresholds, the FIFO windows) equals the reference's, exactly."""
    rng = np.random.default_rng(families)
    width, alphas = 40, np.array([0.1, 0.05, 0.3])
    state = _groups.GroupCalibration(width, families)
    ref = _Reference(width)
    for chunk in (1, 7, 150, 300, 1, 60):
        cols, lo, hi, y = _random_rows(rng, chunk, families, 4)
        ids, new = state.lookup(cols, learn=True)
        state.commit(new)
        got_lo, got_hi = state.run(ids, lo, hi, y, True, alphas)
        want = ref.run(ids, lo, hi, y, True, alphas)
        np.testing.assert_array_equal(got_lo, want[..., 0])
        np.testing.assert_array_equal(got_hi, want[..., 1])
    # predicting changes nothing, and unseen values take the pool's threshold
    cols, lo, hi, y = _random_rows(rng, 50, families, 9)
    ids, new = state.lookup(cols, learn=False)
    assert new == [] and (ids[np.isin(cols[0], [4, 5, 6, 7, 8]), 0] == -1).all()
    meta = state.meta.copy()
    got_lo, got_hi = state.run(ids, lo, hi, y, False, alphas)
    want = ref.run(ids, lo, hi, y, False, alphas)
    np.testing.assert_array_equal(got_lo, want[..., 0])
    np.testing.assert_array_equal(got_hi, want[..., 1])
    np.testing.assert_array_equal(state.meta, meta)


def test_a_young_group_borrows_the_pool_until_its_quantile_exists():
    """At alpha = 0.1 a group's own quantile exists from 9 scores on: with 8 it takes the
    pool's, with 9 its own (the largest of its 9)."""
    state = _groups.GroupCalibration(100, 1)
    alphas = np.array([0.1])
    big = np.zeros((40, 1), np.int64) - 1  # 40 rows without a group, scores 0..39
    state.run(big, -np.ones(40), np.ones(40), np.arange(40.0), True, alphas)
    ids, new = state.lookup([np.ones(8)], learn=True)
    state.commit(new)
    state.run(ids, -np.ones(8), np.ones(8), np.full(8, 100.0), True, alphas)  # scores 100
    one = np.array([[1]])
    lo, hi = state.run(one, np.array([-1.0]), np.array([1.0]), np.zeros(1), False, alphas)
    pool = _rank_quantile(list(range(40)) + [100.0] * 8, 0.1)
    assert hi[0, 0] == pool  # borrowed
    state.run(one, np.array([-1.0]), np.array([1.0]), np.array([200.0]), True, alphas)
    lo, hi = state.run(one, np.array([-1.0]), np.array([1.0]), np.zeros(1), False, alphas)
    assert hi[0, 0] == 200.0  # its own: the largest of its 9 scores


def test_no_row_is_lost():
    """Every learnt row's score is in the pool's window and its group's (the last ``width`` of
    each), however the rows come (chunks, one-row calls, dicts)."""
    rng = np.random.default_rng(5)
    n = 700
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 2)), g]
    y = X[:, 0] + rng.normal(0, 0.1, n) * (1 + g)
    m = sf.NormalizedConformal(seed=3, calibration_size=150, groups=2)
    twin = sf.NormalizedConformal(seed=3, calibration_size=150)  # its intervals: the reference
    scores = []
    for a, b in ((0, 1), (1, 300), (300, 301), (301, 650)):
        m.predict_learn_many(X[a:b], y[a:b], 0.1)
        _, iv = twin.predict_learn_many(X[a:b], y[a:b], _groups.REFERENCE)
        scores += [_score(lo, hi, t) for (lo, hi), t in zip(iv, y[a:b], strict=True)]
    for i in range(650, n):
        x = {0: X[i, 0], 1: X[i, 1], 2: X[i, 2]}
        m.predict_interval_one(x, 0.1)
        m.learn_one(x, y[i])
        lo, hi = twin.predict_interval_one(x, _groups.REFERENCE)
        twin.learn_one(x, y[i])
        scores.append(_score(lo, hi, y[i]))
    st = m.group_state_
    np.testing.assert_array_equal(st.scores(None, None), np.sort(scores[-150:]))
    for v in range(3):
        own = [s for s, gi in zip(scores, g, strict=True) if gi == v]
        np.testing.assert_array_equal(st.scores(0, float(v)), np.sort(own[-150:]))


# --- every group covered -------------------------------------------------------------------------
def _group_stream(n=12000, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 3)), g]
    y = np.sin(3 * X[:, 0]) + X[:, 1] + rng.normal(0, 0.1, n) * np.array([1.0, 2.0, 6.0])[g]
    return X, y, g


def _group_errors(model, X, y, g, alpha, **kw):
    iv = np.concatenate([
        model.predict_learn_many(X[a : a + 2000], y[a : a + 2000], alpha, **kw)[1]
        for a in range(0, len(y), 2000)
    ])  # fmt: skip
    miss = (y < iv[:, 0]) | (y > iv[:, 1])
    late = np.arange(len(y)) >= 4000  # (past the forest's fastest learning)
    return np.array([miss[late & (g == v)].mean() for v in range(3)])


@pytest.mark.parametrize("method", [sf.NormalizedConformal, sf.CPApproximate])
def test_every_group_is_covered(method):
    """Noise 1:2:6 by group: the method with groups errs at alpha in every group; the same
    check fails for the marginal method (the noisy group's error is far above alpha)."""
    X, y, g = _group_stream()
    grouped = _group_errors(method(seed=1, groups=3), X, y, g, 0.1)
    assert np.abs(grouped - 0.1).max() < 0.02, grouped
    marginal = _group_errors(method(seed=1), X, y, g, 0.1)
    assert np.abs(marginal - 0.1).max() > 0.05, marginal


def test_the_groups_array_and_the_column_agree():
    X, y, g = _group_stream(3000)
    a = sf.NormalizedConformal(seed=2, groups=3).predict_learn_many(X, y, [0.1, 0.05])
    b = sf.NormalizedConformal(seed=2).predict_learn_many(X, y, [0.1, 0.05], groups=g)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])


def test_dataframe_names_and_functions_of_the_row():
    pd = pytest.importorskip("pandas")
    X, y, g = _group_stream(2000)
    df = pd.DataFrame(X, columns=["a", "b", "c", "site"])
    a = sf.CPApproximate(seed=2, groups="site").predict_learn_many(df, y, 0.1)[1]
    b = sf.CPApproximate(seed=2, groups=lambda r: r["site"]).predict_learn_many(df, y, 0.1)[1]
    c = sf.CPApproximate(seed=2, groups=3).predict_learn_many(X, y, 0.1)[1]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_several_families_cover_every_group():
    """Two overlapping families (noise by one, a second independent one): each group of each
    family errs at most alpha (the largest threshold of the row's groups)."""
    X, y, g = _group_stream(12000, seed=4)
    h = (X[:, 2] > 0.5).astype(float)
    m = sf.NormalizedConformal(seed=1, groups=[3, 2])
    Xh = X.copy()
    Xh[:, 2] = h
    iv = m.predict_learn_many(Xh, y, 0.1)[1]
    miss = ((y < iv[:, 0]) | (y > iv[:, 1]))[2000:]
    for col in (g[2000:], h[2000:]):
        for v in np.unique(col):
            assert miss[col == v].mean() < 0.115


# --- bad input, persistence, threads -------------------------------------------------------------
def test_bad_groups_are_refused_and_change_nothing():
    X, y, g = _group_stream(600)
    m = sf.CPApproximate(seed=1, groups=3)
    m.learn_many(X[:500], y[:500])
    before = pickle.dumps(m)
    with pytest.raises(ValueError, match="values for"):
        m.learn_many(X[500:], y[500:], groups=np.zeros(7))
    with pytest.raises(ValueError, match="families"):
        m.predict_learn_many(X[500:], y[500:], groups=np.zeros((100, 2)))
    with pytest.raises(ValueError):
        m.learn_many(X[500:], np.full(100, np.nan))  # a bad target: no group added either
    with pytest.raises(TypeError, match="hashable"):
        m.learn_many(X[500:], y[500:], groups=[{1}] * 100)
    with pytest.raises(ValueError, match="column index"):
        sf.CPApproximate(groups=7).learn_many(X, y)
    with pytest.raises(TypeError):
        sf.CPApproximate(groups=1.5).learn_many(X, y)
    assert pickle.dumps(m) == before


def test_unseen_and_missing_groups_take_the_pool():
    X, y, g = _group_stream(3000)
    m = sf.NormalizedConformal(seed=1, groups=3)
    m.learn_many(X, y)
    st = m.group_state_
    row = X[:1].copy()
    with m._base_calls():  # the method's own interval at the reference level
        base = m.predict_interval(row, _groups.REFERENCE)
    unseen = m.predict_interval(row, 0.1, groups=np.array([17.0]))
    x = dict(enumerate(row[0].tolist()))
    none = m.predict_interval_one(x, 0.1, groups=(None,))
    centre, half = base[0].mean(), (base[0, 1] - base[0, 0]) / 2
    q = _rank_quantile(list(st.scores(None, None)), 0.1)
    np.testing.assert_allclose(unseen[0], [centre - q * half, centre + q * half])
    np.testing.assert_allclose(none, (centre - q * half, centre + q * half))
    assert st.n_groups == 3  # predicting added no group
    m.learn_one({0: 0.1, 1: 0.2, 2: 0.3, 3: None}, 1.0)  # a None group: the pool only
    assert st.n_groups == 3


def test_saved_and_loaded_groups(tmp_path):
    X, y, g = _group_stream(3000)
    m = sf.NormalizedConformal(seed=1, groups=3)
    m.learn_many(X[:2000], y[:2000])
    sf.save(m, tmp_path / "m.sf")
    m2 = sf.load(tmp_path / "m.sf")
    a = m.predict_learn_many(X[2000:], y[2000:], [0.1, 0.05])
    b = m2.predict_learn_many(X[2000:], y[2000:], [0.1, 0.05])
    np.testing.assert_array_equal(a[1], b[1])
    assert m2.group_state_.vocab == m.group_state_.vocab
    with pytest.raises(TypeError, match="function"):
        f = sf.NormalizedConformal(groups=lambda r: r[3])
        f.learn_many(X[:100], y[:100])
        sf.save(f, tmp_path / "f.sf")


def test_a_damaged_window_is_refused(tmp_path):
    X, y, g = _group_stream(500)
    m = sf.CPApproximate(seed=1, calibration_size=50, groups=3)
    m.learn_many(X, y)
    m.group_state_.pos[1, 3] = 99
    with pytest.raises(ValueError, match="window"):
        m.predict_interval(X[:5], 0.1)


def test_threads_share_a_grouped_model():
    """Grouped calls hold the model's lock: threads learning one model end in the state of
    some sequential order (every row in the pool)."""
    X, y, g = _group_stream(4000)
    m = sf.CPApproximate(seed=1, calibration_size=5000, groups=3)
    m.learn_many(X[:100], y[:100])
    parts = [(X[a : a + 100], y[a : a + 100]) for a in range(100, 4000, 100)]

    def work(k):
        for Xp, yp in parts[k::3]:
            m.predict_learn_many(Xp, yp, 0.1)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    st = m.group_state_
    assert st.meta[0, 1] == 4000
    assert sum(st.meta[c, 1] for c in range(1, st.n_cells)) == 4000


# --- diagnostics ---------------------------------------------------------------------------------
def test_the_evaluator_reports_every_group_and_the_worst():
    """prequential(groups=...): the per-group MER and width are those of the intervals the
    model gave (counted here from a twin run), and the worst group is the one of highest MER:
    the noisy group for the marginal method."""
    X, y, g = _group_stream(5000)
    res = prequential(sf.NormalizedConformal(seed=1), (X, y), [0.1, 0.05],
                                  groups=3, chunk_size=1000)  # fmt: skip
    twin = sf.NormalizedConformal(seed=1)
    iv = np.concatenate([
        twin.predict_learn_many(X[a : a + 1000], y[a : a + 1000], [0.1, 0.05])[1]
        for a in range(0, 5000, 1000)
    ])  # fmt: skip
    fam = res.groups[3]
    for v in range(3):
        rows = g == v
        for k, alpha in enumerate((0.1, 0.05)):
            miss = (y < iv[:, k, 0]) | (y > iv[:, k, 1])
            width = (iv[:, k, 1] - iv[:, k, 0])[rows]
            width = np.where(np.isfinite(width), width, res.rho)
            got = fam["groups"][float(v)]["intervals"][alpha]
            assert got["mer"] == pytest.approx(miss[rows].mean(), abs=1e-12)
            assert got["mpiw"] == pytest.approx(width.mean(), rel=1e-9)
    assert fam["worst"][0.1]["group"] == 2.0 and fam["worst"][0.1]["mer"] > 0.15
    d = res.to_dict(windows=False)
    assert d["groups"]["3"]["worst"]["0.1"]["group"] == "2.0"
    assert "worst group at alpha 0.1: 2.0" in res.table()


def test_run_groups_on_the_command_line(tmp_path, capsys):
    pytest.importorskip("rich")
    X, y, g = _group_stream(1500)
    path = tmp_path / "d.csv"
    lines = ["a,b,c,site,target"]
    lines += [f"{r[0]},{r[1]},{r[2]},{'xyz'[int(r[3])]},{t}" for r, t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    from streamforest.cli import main

    argv = ["run", "--file", str(path), "--groups", "site", "--no-plot", "--quiet"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "by site:" in out and "worst group at alpha 0.1" in out
    assert "groups=[3]" in out  # the interval method calibrates per group too


# --- multivalid (MVP) ----------------------------------------------------------------------------
_MASK = (1 << 64) - 1


def _draw(seed, position):
    z = (seed * 0x9E3779B97F4A7C15 + position) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) * (1.0 / 9007199254740992.0)


def _mvp_threshold(cells, v, n, eta, draw):
    """Bastani et al.'s threshold, from the paper's definition (cells: the row's, with 0), the
    sums normalised by their counts as in the authors' code (whose extra weight of each cell's
    terms is not taken: see src/core/intervals/multivalid.hpp)."""
    B = v.shape[0]

    def c_value(b):
        w = np.array([1 / math.sqrt((n[b, c] + 1) * math.log2(n[b, c] + 2) ** 2) for c in cells])
        a = eta * np.array([v[b, c] for c in cells]) * w
        return float(np.sum(np.exp(a)) - np.sum(np.exp(-a)))

    prev = 0.0
    values = [c_value(b) for b in range(B)]
    for b in range(B):
        cur = values[b]
        if b and ((cur >= 0 >= prev) or (cur <= 0 <= prev)):
            z = abs(prev) + abs(cur)
            p_prev = 1.0 if z == 0 else abs(cur) / z
            return b / B - 1 / (1000 * B) if draw <= p_prev else b / B
        prev = cur
    return 1.0 if all(c <= 0 for c in values) else 0.0


def test_multivalid_matches_the_paper():
    """The compiled MVP pass against the paper's threshold rule and update, row by row, on two
    overlapping families (thresholds to rounding: its sums are logsumexp's)."""
    rng = np.random.default_rng(11)
    n, B, eta, seed = 400, 12, 2.0, 5
    rule = sf.Multivalid([0, 1], alphas=(0.1, 0.3), buckets=B, eta=eta)
    state = _groups.GroupCalibration(50, 2, rule)
    cols = [rng.integers(0, 3, n).astype(float), rng.integers(0, 2, n).astype(float)]
    cols[1][rng.random(n) < 0.1] = np.nan
    ids, new = state.lookup(cols, learn=True)
    state.commit(new)
    m, h = rng.normal(0, 1, n), rng.exponential(1, n)
    y = m + h * rng.normal(0, 1, n) * (1 + cols[0])
    lo, hi = m - h, m + h
    got_lo, got_hi = state.run_multivalid(ids, lo, hi, y, True, rule, seed)
    levels = (0.1, 0.3)
    v = np.zeros((2, B, state.n_cells))
    cnt = np.zeros((2, B, state.n_cells))
    for i in range(n):
        cells = [0, *[c for c in ids[i] if c > 0]]
        s = abs(y[i] - m[i]) / h[i]
        for r, alpha in enumerate(levels):
            tau = _mvp_threshold(cells, v[r], cnt[r], eta, _draw(seed, i * 2 + r))
            t = math.inf if tau >= 1 else tau / (1 - tau)
            assert got_hi[i, r] == pytest.approx(m[i] + t * h[i], rel=1e-12, abs=1e-12)
            b = min(int(tau * B + 0.5 / 1000), B - 1)
            for c in cells:
                v[r, b, c] += alpha - (1.0 if s > t else 0.0)
                cnt[r, b, c] += 1
    np.testing.assert_array_equal(state.mvp_n[:, :, : state.n_cells], cnt)
    np.testing.assert_allclose(state.mvp_v[:, :, : state.n_cells], v, atol=1e-9)
    assert state.n_rows == n


def _two_family_stream(rng, n: int):
    """``(X, y)``: two features, then two group columns (3 and 2 groups) whose noise multiplies
    (1:2:6 times 1:2)."""
    g, k = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = np.c_[rng.random((n, 2)), g, k]
    y = np.sin(3 * X[:, 0]) + 0.1 * np.array([1, 2, 6])[g] * np.array([1, 2])[k] * rng.normal(
        0, 1, n
    )
    return X, y


def test_multivalid_covers_every_group_of_overlapping_families():
    """Two families whose noise multiplies: every group of each within 0.02 of alpha with
    Multivalid (model seeds 1 and 2: with each cell's terms weighted by its count, as in the
    authors' code, the quietest group was over-covered by 0.022 with seed 2); Mondrian's largest
    threshold over-covers a group by more."""
    rng = np.random.default_rng(3)
    n = 20000
    X, y = _two_family_stream(rng, n)
    g, k = X[:, 2], X[:, 3]

    def worst(groups, seed=1):
        m = sf.NormalizedConformal(seed=seed, groups=groups)
        iv = np.concatenate(
            [
                m.predict_learn_many(X[a : a + 1000], y[a : a + 1000], 0.1)[1]
                for a in range(0, n, 1000)
            ]
        )
        miss = (y < iv[:, 0]) | (y > iv[:, 1])
        return max(abs(miss[col == v].mean() - 0.1) for col in (g, k) for v in np.unique(col))

    for seed in (1, 2):
        assert worst(sf.Multivalid([2, 3], alphas=(0.1,)), seed) <= 0.02
    assert worst([2, 3]) > 0.03


def test_multivalid_serves_what_it_learns():
    """predict_interval_one then learn_one: the learnt row's threshold is the one served (the
    draw is the row's position), so a one-row stream equals the prequential pass."""
    X, y, g = _group_stream(600)
    rule = sf.Multivalid(3, alphas=(0.1,), buckets=20)
    a = sf.NormalizedConformal(seed=4, groups=rule)
    b = sf.NormalizedConformal(seed=4, groups=rule)
    served = []
    for i in range(600):
        x = dict(enumerate(X[i].tolist()))
        served.append(a.predict_interval_one(x, 0.1))
        a.learn_one(x, y[i])
        b.predict_learn_many(X[i : i + 1], y[i : i + 1], 0.1)
    np.testing.assert_array_equal(a.group_state_.mvp_v, b.group_state_.mvp_v)
    with pytest.raises(ValueError, match="calibrated at"):
        a.predict_interval(X[:2], 0.2)


def test_the_adaptive_wrapper_over_a_grouped_method():
    """AdaptiveConformal over a grouped method, batches of 50: every group near alpha (the base
    calibrates per group, and the wrapper keeps a controller per group)."""
    X, y, g = _group_stream(12000)
    model = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1, groups=3))
    iv = np.concatenate(
        [
            model.predict_learn_many(X[a : a + 50], y[a : a + 50], 0.1)[1]
            for a in range(0, 12000, 50)
        ]
    )
    miss = ((y < iv[:, 0]) | (y > iv[:, 1]))[4000:]
    assert max(abs(miss[g[4000:] == v].mean() - 0.1) for v in range(3)) < 0.02


def test_a_grouped_method_is_sharded_as_its_method():
    """(The sharded results: test_sharded_grouped_method_equals_local, test_distributed.py.)"""
    from streamforest.distributed.workers import model_kind

    assert model_kind(sf.CPApproximate(groups=2)) == "cp"
    assert model_kind(sf.OnlineQRF(groups=sf.Multivalid(2))) == "qrf"
    with pytest.raises(TypeError, match="CPExact"):
        model_kind(sf.CPExact(groups=2))


def test_aci_over_a_multivalid_method_at_its_ladder():
    """ACI asks its base for a ladder of levels: a Multivalid method without them is refused
    with the levels to give; with Multivalid.aci_levels every group of two
    overlapping families is within 0.02 of alpha, a controller per group, batches of 50."""
    rng = np.random.default_rng(3)
    n = 12000
    X, y = _two_family_stream(rng, n)
    g, k = X[:, 2], X[:, 3]
    bare = sf.AdaptiveConformal(sf.NormalizedConformal(seed=1, groups=sf.Multivalid([2, 3])))
    with pytest.raises(ValueError, match=r"alphas=Multivalid.aci_levels\(0.1\)"):
        bare.predict_learn_many(X[:50], y[:50], 0.1)
    levels = sf.Multivalid.aci_levels(0.1)
    assert len(levels) == 13 and min(abs(v - 0.1) for v in levels) < 1e-12
    with pytest.raises(ValueError, match="alpha"):
        sf.Multivalid.aci_levels(1.5)
    model = sf.AdaptiveConformal(
        sf.NormalizedConformal(seed=1, groups=sf.Multivalid([2, 3], alphas=levels))
    )
    iv = np.concatenate(
        [model.predict_learn_many(X[a : a + 50], y[a : a + 50], 0.1)[1] for a in range(0, n, 50)]
    )
    miss = ((y < iv[:, 0]) | (y > iv[:, 1]))[3000:]
    for col in (g[3000:], k[3000:]):
        assert max(abs(miss[col == v].mean() - 0.1) for v in np.unique(col)) < 0.02
