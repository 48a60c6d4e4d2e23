"""The recommended default interval method, NormalizedConformal: validity at several levels on
i.i.d. streams, agreement with a computation from the forest's own prequential predictions,
nestedness, both APIs, and a calibration set that survives tree replacement."""

import numpy as np
import pytest

import streamforest as sf
from streamforest import registry

from .conftest import friedman1


def small_forest(seed=0, **kw):
    return sf.OnlineForestRegressor(
        n_trees=4, tree=sf.HoeffdingTreeRegressor(grace_period=50), seed=seed, **kw
    )


def hetero(n, rng):
    X = rng.random((n, 4))
    y = 10 * X[:, 0] + 5 * np.sin(3 * X[:, 1]) + (0.2 + 3 * X[:, 0]) * rng.standard_normal(n)
    return X, y


def binomial_slack(alpha, n, z=4.0):
    return z * np.sqrt(alpha * (1 - alpha) / n)


@pytest.mark.parametrize("normalize", ["residuals", "trees", "none"])
def test_coverage_within_binomial_bounds_at_several_levels(normalize):
    rng = np.random.default_rng(1)
    X, y = hetero(5000, rng)
    alphas = [0.3, 0.1, 0.05, 0.02]
    m = sf.NormalizedConformal(forest=small_forest(1), normalize=normalize, calibration_size=500)
    _, iv = m.predict_learn_many(X, y, alpha=alphas)
    s = slice(1000, None)  # after the calibration set filled and the forest settled
    for a, al in enumerate(alphas):
        miss = (y[s] < iv[s, a, 0]) | (y[s] > iv[s, a, 1])
        n = miss.size
        assert abs(miss.mean() - al) <= binomial_slack(al, n) + 0.01, (normalize, al, miss.mean())


def test_intervals_adapt_to_x_with_the_residual_spread():
    """Noise grows with x0: the residual-normalised widths must grow with it (the plain scores
    give one width everywhere)."""
    rng = np.random.default_rng(2)
    X, y = hetero(6000, rng)
    m = sf.NormalizedConformal(forest=small_forest(2), normalize="residuals")
    m.learn_many(X, y)
    Xt = rng.random((400, 4))
    w = np.diff(m.predict_interval(Xt, alpha=0.1), axis=1)[:, 0]
    low, high = w[Xt[:, 0] < 0.2].mean(), w[Xt[:, 0] > 0.8].mean()
    assert high > 1.5 * low
    plain = sf.NormalizedConformal(forest=small_forest(2), normalize="none", error_span=0)
    plain.learn_many(X, y)
    wp = np.diff(plain.predict_interval(Xt, alpha=0.1), axis=1)[:, 0]
    assert np.ptp(wp) < 1e-9 * max(1.0, wp.mean())


def test_plain_scores_match_the_forests_prequential_residuals():
    """normalize='none', error_span=0: the half-width at each row is the conformal rank of the
    absolute residuals of the forest's own prequential predictions over the last c rows."""
    rng = np.random.default_rng(3)
    X, y = friedman1(700, rng, p=5)
    c = 200
    m = sf.NormalizedConformal(
        forest=small_forest(3), normalize="none", center="forest", error_span=0,
        calibration_size=c, batch_scores=False, guard=False,
    )  # fmt: skip
    pred, iv = m.predict_learn_many(X, y, alpha=[0.2, 0.05])
    ref = small_forest(3).predict_learn_many(X, y - y[0]) + y[0]  # (the target shift)
    np.testing.assert_allclose(pred, ref, rtol=0, atol=1e-12)
    res = np.abs(y - ref)
    for i in (1, 3, 50, 199, 200, 450, 699):
        past = np.sort(res[max(0, i - c) : i])
        n = past.size
        for a, al in enumerate([0.2, 0.05]):
            r = int(np.ceil((n + 1) * (1 - al) - 1e-9))
            want = np.inf if r > n else past[r - 1]
            assert iv[i, a, 1] - pred[i] == pytest.approx(want, rel=1e-12), (i, al)
    np.testing.assert_allclose(m.calibration_scores, np.sort(res[-c:]), rtol=1e-12)


def test_boosted_centre_is_the_forest_plus_a_bias_forest_of_its_signed_residuals():
    """center='boosted': each row's centre (the point prediction, the middle of its interval) is
    the forest's prequential prediction plus that of a clone (seed + 2) learning the forest's
    signed prequential residuals (both learning the targets less the first one, added back);
    it errs less than the forest alone on a target the coarse leaves miss, and ``predict`` /
    ``predict_one`` return the same centres."""
    rng = np.random.default_rng(8)
    X, y = friedman1(3000, rng, p=5)
    m = sf.NormalizedConformal(forest=small_forest(3))
    pred, iv = m.predict_learn_many(X, y, alpha=0.1)
    shift = y[0]
    assert m.target_shift_ == shift
    base = small_forest(3).predict_learn_many(X, y - shift)
    first_out = np.ones(len(y))
    first_out[0] = 0.0  # the first residual (0: the first target is the shift) is not learnt
    bias = small_forest(5).predict_learn_many(X, (y - shift) - base, first_out)
    np.testing.assert_allclose(pred, base + bias + shift, rtol=0, atol=1e-9)
    base = base + shift
    np.testing.assert_allclose((iv[100:, 0] + iv[100:, 1]) / 2, pred[100:], rtol=1e-9)
    s = slice(1000, None)
    assert np.mean(np.abs(y - pred)[s]) < 0.95 * np.mean(np.abs(y - base)[s])
    Xt = rng.random((10, 5))
    p = m.predict(Xt)
    centre = m.forest_.predict(Xt) + m._bias.predict(Xt) + shift
    np.testing.assert_allclose(p, centre, rtol=1e-12)
    one = [m.predict_one({j: float(v) for j, v in enumerate(r)}) for r in Xt]
    np.testing.assert_allclose(one, p, rtol=1e-12)
    np.testing.assert_allclose(m.predict_interval(Xt, alpha=0.1).mean(axis=1), p, rtol=1e-9)


def test_a_model_saved_before_the_centre_existed_keeps_the_forests_centre():
    """State without ``center`` (saved by the code before it; pickle and streamforest.load
    both set state through ``__setstate__``) keeps the centre it learnt with."""
    rng = np.random.default_rng(10)
    X, y = hetero(600, rng)
    m = sf.NormalizedConformal(forest=small_forest(3), center="forest", offset=1.0)
    m.learn_many(X, y)
    d = m.__getstate__()
    del d["center"]
    old = sf.NormalizedConformal.__new__(sf.NormalizedConformal)
    old.__setstate__(d)
    assert old.center == "forest"
    Xt = rng.random((20, 4))
    np.testing.assert_allclose(
        old.predict(Xt), m.forest_.predict(Xt) + m.target_shift_, rtol=0, atol=0
    )
    np.testing.assert_allclose(
        old.predict_interval(Xt, alpha=0.1), m.predict_interval(Xt, alpha=0.1), rtol=0, atol=0
    )


def test_a_model_saved_before_the_target_shift_keeps_its_forests_units():
    """State without ``target_shift_`` (saved before the forests learnt the targets less the
    first one) loads with a shift of 0: its forests' predictions are its centres, as before."""
    rng = np.random.default_rng(12)
    X, y = hetero(600, rng)
    m = sf.NormalizedConformal(forest=small_forest(3), center="forest")
    m.learn_many(X, y)
    assert m.target_shift_ == y[0]
    d = m.__getstate__()
    del d["target_shift_"]
    old = sf.NormalizedConformal.__new__(sf.NormalizedConformal)
    old.__setstate__(d)
    assert old.target_shift_ == 0.0
    Xt = rng.random((20, 4))
    np.testing.assert_array_equal(old.predict(Xt), m.forest_.predict(Xt))
    old.learn_many(X[:100], y[:100])  # keeps learning in its units
    assert old.target_shift_ == 0.0


def test_young_error_level_includes_the_rows_own_residual():
    """normalize='none': row k's score is its residual over the error level, which for the
    first LEVEL_WARMUP rows is the mean of the residuals up to and including row k (so the
    score is at most k + 1), then the mean of the earlier residuals.  A spike after a few
    small residuals would otherwise score in the tens."""
    from streamforest import _core

    LEVEL_WARMUP = _core.intervals.LEVEL_WARMUP

    rng = np.random.default_rng(9)
    X = rng.random((400, 4))
    y = X[:, 0] + 0.01 * rng.standard_normal(400)
    y[[3, 7, 40]] += 50.0
    m = sf.NormalizedConformal(forest=small_forest(3), normalize="none", center="forest")
    pred, _ = m.predict_learn_many(X, y, alpha=0.1)
    r = np.abs(y - pred)
    want = np.empty(400)
    for k in range(400):
        lev = r[: k + 1].mean() if k < LEVEL_WARMUP else r[:k].mean()
        want[k] = r[k] / lev if r[k] else 0.0  # (row 0: its target is the shift, residual 0)
    np.testing.assert_allclose(m.cal_score_[:400], want, rtol=1e-9)
    assert np.all(want[:LEVEL_WARMUP] <= np.arange(1, LEVEL_WARMUP + 1) + 1e-9)
    assert r[3] / r[:3].mean() > 50  # what the old rule (the earlier residuals only) scored


def test_nested_never_crossing_any_level():
    rng = np.random.default_rng(4)
    X, y = hetero(2500, rng)
    m = sf.NormalizedConformal(forest=small_forest(4))
    alphas = [0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005]
    _, iv = m.predict_learn_many(X, y, alpha=alphas)
    later = m.predict_interval(rng.random((300, 4)), alpha=alphas)
    for arr in (iv, later):
        lo, hi = arr[:, :, 0], arr[:, :, 1]
        assert np.all(lo[:, 1:] <= lo[:, :-1])  # a smaller alpha: the lower bound no higher
        assert np.all(hi[:, 1:] >= hi[:, :-1])
        assert np.isfinite(arr[-1]).all()
        assert np.all(arr[:, :, 0] <= arr[:, :, 1])


def test_per_example_api_equals_the_array_api():
    rng = np.random.default_rng(5)
    X, y = hetero(400, rng)
    a = sf.NormalizedConformal(forest=small_forest(5), normalize="residuals")
    b = sf.NormalizedConformal(forest=small_forest(5), normalize="residuals")
    ivs = []
    for i in range(len(y)):
        x = {j: float(v) for j, v in enumerate(X[i])}
        ivs.append(a.predict_interval_one(x, alpha=0.1))
        a.learn_one(x, float(y[i]))
    _, iv = b.predict_learn_many(X, y, alpha=0.1)
    np.testing.assert_allclose(np.array(ivs), iv, rtol=1e-12)
    Xt = rng.random((20, 4))
    one = [a.predict_interval_one({j: float(v) for j, v in enumerate(r)}, 0.1) for r in Xt]
    np.testing.assert_allclose(np.array(one), b.predict_interval(Xt, alpha=0.1), rtol=1e-12)


def test_calibration_survives_forced_tree_replacement():
    """Abrupt changes with a hair-trigger drift detector replace trees again and again: the
    calibration set stays full after ``calibration_size`` rows, and no interval at a level
    ``>= 1 / (c + 1)`` is infinite after them (one below is, as the rank exceeds c)."""
    rng = np.random.default_rng(6)
    n, c = 4000, 300
    X = rng.random((n, 4))
    shift = np.where((np.arange(n) // 700) % 2 == 1, 40.0, 0.0)
    y = 10 * X[:, 0] + shift + rng.standard_normal(n)
    forest = small_forest(6, drift_threshold=5.0, warning_fraction=None)
    m = sf.NormalizedConformal(forest=forest, calibration_size=c)
    sizes = []
    ivs = []
    for a in range(0, n, 100):
        ivs.append(m.predict_interval(X[a : a + 100], alpha=[0.1, 0.01, 1 / (c + 1) + 1e-9]))
        m.learn_many(X[a : a + 100], y[a : a + 100])
        sizes.append(m.size_)
    assert m.drift_stats_["replacements"] >= 4
    iv = np.concatenate(ivs)
    assert np.all(np.array(sizes[c // 100 :]) == c)
    assert np.all(np.isfinite(iv[c:]))
    tiny = m.predict_interval(X[:5], alpha=0.5 / (c + 1))
    assert np.all(np.isinf(tiny))


def test_window_recovers_after_abrupt_change():
    """The running error level widens the intervals quickly after a jump in the noise."""
    rng = np.random.default_rng(7)
    n = 6000
    X = rng.random((n, 4))
    noise = np.where(np.arange(n) < 3000, 0.5, 3.0)
    y = 10 * X[:, 0] + noise * rng.standard_normal(n)
    m = sf.NormalizedConformal(forest=small_forest(7), normalize="none")
    _, iv = m.predict_learn_many(X, y, alpha=0.1)
    miss = (y < iv[:, 0]) | (y > iv[:, 1])
    assert miss[3600:4100].mean() <= 0.1 + binomial_slack(0.1, 500)


@pytest.mark.parametrize(
    "kw",
    [
        {"calibration_size": 0},
        {"normalize": "x"},
        {"center": "mean"},
        {"offset": 0.0},
        {"error_span": -1},
    ],
)
def test_bad_parameters(kw):
    m = sf.NormalizedConformal(**kw)
    with pytest.raises(ValueError, match=next(iter(kw))):
        m.learn_many(np.zeros((3, 2)), np.zeros(3))


def test_default_model_of_the_command_line():
    assert registry.DEFAULT == "normalized-cp-sgbt"
    assert isinstance(registry.build(registry.DEFAULT), sf.NormalizedConformal)


def test_weighted_quantile_matches_a_direct_reference():
    """The drift guard's recency-weighted conformal quantile (weights rho ** age, the test
    point's weight 1 at +inf) equals a direct computation, with the ring partly filled and
    wrapped around."""
    from streamforest import _core

    normalized_kernels = _core.intervals
    ss_insert, ss_update = _core.intervals.ss_insert, _core.intervals.ss_update

    rng = np.random.default_rng(4)
    c, rho = 50, 0.9
    order, pos, ss = np.zeros(c, np.int64), np.full(c, -1, np.int64), np.zeros(c)
    size, head, ages = 0, 0, []
    vals = rng.exponential(size=130)
    for t, v in enumerate(vals):
        if pos[head] >= 0:
            ss_update(order, pos, ss, size, v, head)
        else:
            ss_insert(order, pos, ss, size, v, head)
            size += 1
        head = (head + 1) % c
        if t in (0, 7, 49, 50, 129):
            win = vals[max(0, t + 1 - c) : t + 1]
            w = rho ** np.arange(win.size)[::-1]
            o = np.argsort(win, kind="stable")
            cum = np.cumsum(w[o]) / (w.sum() + 1.0)
            for al in (0.3, 0.1, 0.02):
                k = np.searchsorted(cum, 1 - al - 1e-12)
                want = win[o][k] if k < win.size else (win.max() if t >= c - 1 else np.inf)
                got = normalized_kernels.weighted_half_width(ss, order, size, head, c, rho, al)
                ages.append(got == want)
    assert all(ages)


def sorted_stream(n, seed):
    """Rows in the order of their targets (a sorted file)."""
    rng = np.random.default_rng(seed)
    X, y = hetero(n, rng)
    o = np.argsort(y)
    return X[o], y[o]


def chunked_error_rate(m, X, y, alphas, start=1000):
    err = []
    for a in range(0, len(y), 50):
        if a >= start:
            iv = m.predict_interval(X[a : a + 50], alpha=alphas)
            yy = y[a : a + 50, None]
            err.append((yy < iv[:, :, 0]) | (yy > iv[:, :, 1]))
        m.learn_many(X[a : a + 50], y[a : a + 50])
    return np.concatenate(err).mean(0)


def test_time_order_rules_keep_a_sorted_stream_within_binomial_bounds():
    """Rows sorted by their target, predicted then learnt in batches of 50: the default (batch
    scores + drift guard) keeps the error rate within a binomial bound of alpha; the plain
    rule (row-by-row scores, no guard) does not, at any of the levels (measured: 0.217 /
    0.107 / 0.055 against 0.268 / 0.153 / 0.090).  The stream is not exchangeable, so the
    bound is a yardstick: 3.5 standard deviations (the forests' learning of ``y`` less its
    first value moved the default's rate at 0.2 from 0.209 to 0.217; over seeds 5-14 its mean
    went from 0.2123 to 0.2149)."""
    X, y = sorted_stream(6000, 5)
    alphas = [0.2, 0.1, 0.05]
    n = 5000
    new = chunked_error_rate(sf.NormalizedConformal(forest=small_forest(1)), X, y, alphas)
    plain = chunked_error_rate(
        sf.NormalizedConformal(forest=small_forest(1), batch_scores=False, guard=False),
        X, y, alphas,
    )  # fmt: skip
    for a, al in enumerate(alphas):
        assert new[a] <= al + binomial_slack(al, n, z=3.5), (al, new[a])
        assert plain[a] > al + binomial_slack(al, n, z=3.5), (al, plain[a])


def test_guard_fires_on_a_sorted_stream_and_stays_nested():
    """On a sorted stream the guard's statistic passes its threshold; the intervals it gives
    are nested over many alphas and never narrower than without the guard (same forests)."""
    from streamforest import _core

    normalized_kernels = _core.intervals

    X, y = sorted_stream(3000, 6)
    on = sf.NormalizedConformal(forest=small_forest(2))
    off = sf.NormalizedConformal(forest=small_forest(2), guard=False)
    fired = False
    alphas = np.array([0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01])
    for a in range(0, 3000, 50):
        if a >= 500 and on.guard_[1] > normalized_kernels.GUARD_H:
            fired = True
            iv = on.predict_interval(X[a : a + 50], alpha=alphas)
            w = iv[:, :, 1] - iv[:, :, 0]
            assert np.all(np.diff(w, axis=1) >= 0)
            assert np.all(iv[:, 1:, 0] <= iv[:, :-1, 0]) and np.all(iv[:, 1:, 1] >= iv[:, :-1, 1])
            np.testing.assert_array_less(
                off.predict_interval(X[a : a + 50], alpha=alphas)[:, :, 1] - 1e-9,
                iv[:, :, 1] + 1e-9,
            )
        on.learn_many(X[a : a + 50], y[a : a + 50])
        off.learn_many(X[a : a + 50], y[a : a + 50])
    assert fired


def test_guard_rarely_fires_on_exchangeable_rows():
    """Shuffled rows: the guard's CUSUM of uniform ranks stays below its threshold almost
    always, so the widths are those of the plain rule."""
    from streamforest import _core

    normalized_kernels = _core.intervals

    rng = np.random.default_rng(7)
    X, y = hetero(5000, rng)
    m = sf.NormalizedConformal(forest=small_forest(3))
    on = 0
    for a in range(0, 5000, 50):
        m.learn_many(X[a : a + 50], y[a : a + 50])
        on += m.guard_[1] > normalized_kernels.GUARD_H
    assert on <= 5


def test_a_model_saved_before_the_time_order_rules_keeps_its_scores():
    """State without ``batch_scores`` / ``guard`` / ``guard_`` (saved by the code before them)
    loads as a model with both off: it keeps learning exactly like one built with them off."""
    rng = np.random.default_rng(11)
    X, y = hetero(900, rng)
    kw = dict(forest=small_forest(4), batch_scores=False, guard=False)
    ref, m = sf.NormalizedConformal(**kw), sf.NormalizedConformal(**kw)
    ref.learn_many(X[:600], y[:600])
    m.learn_many(X[:600], y[:600])
    d = m.__getstate__()
    for k in ("batch_scores", "guard", "guard_"):
        del d[k]
    old = sf.NormalizedConformal.__new__(sf.NormalizedConformal)
    old.__setstate__(d)
    assert old.batch_scores is False and old.guard is False
    for a in range(600, 900, 50):
        np.testing.assert_array_equal(
            old.predict_interval(X[a : a + 50], alpha=[0.1, 0.01]),
            ref.predict_interval(X[a : a + 50], alpha=[0.1, 0.01]),
        )
        old.learn_many(X[a : a + 50], y[a : a + 50])
        ref.learn_many(X[a : a + 50], y[a : a + 50])


@pytest.mark.parametrize("center", ["boosted", "forest"])
def test_one_example_at_a_time_is_the_one_row_chunk(center, rng):
    """The per-example path (each of the three forests through its engine's per-example call)
    gives exactly what a one-row chunk gives: the same intervals before each row, the same
    calibration set, level and guard after, through tree growth, a feature that appears midway
    (wider than the auxiliary forests' rows) and list-of-levels calls (the chunk path)."""
    from streamforest.intervals.base import IntervalRegressor

    X, y = hetero(1500, rng)
    D = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    for i in range(900, 1500):
        D[i]["late"] = float(X[i, 0] * 2)

    def make():
        return sf.NormalizedConformal(forest=small_forest(3), center=center, seed=3)

    fast, ref = make(), make()
    for i, (d, v) in enumerate(zip(D, y.tolist(), strict=True)):
        alpha = [0.1, 0.3] if i % 50 == 7 else 0.1
        got = fast.predict_interval_one(d, alpha)
        assert got == IntervalRegressor.predict_interval_one(ref, d, alpha), i
        fast.learn_one(d, v)
        IntervalRegressor.learn_one(ref, d, v)
    assert "_one" in fast.__dict__ and "_one" not in ref.__dict__  # the fast path ran
    assert fast.size_ == ref.size_ == 1000
    for k in ("cal_score_", "cal_sorted_", "cal_spread_", "level_", "guard_"):
        assert np.array_equal(getattr(fast, k), getattr(ref, k)), k
    Xt = np.c_[X[:50], X[:50, 0] * 2]
    assert np.array_equal(fast.predict_interval(Xt, 0.1), ref.predict_interval(Xt, 0.1))
