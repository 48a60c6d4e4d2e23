"""AdaptiveConformal: the prequential protocol (batch = row by row), ACI's long-run bound on a
drifting and an adversarial sequence, PID's saturation bound, nestedness, validity on i.i.d."""

import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest.evaluate import prequential

from .conftest import friedman1


def small_forest(n_trees=4, grace=40):
    return sf.OnlineForestRegressor(
        n_trees=n_trees, tree=sf.HoeffdingTreeRegressor(grace_period=grace)
    )


BASES = {
    "CPApproximate": lambda: sf.CPApproximate(calibration_size=100, forest=small_forest(), seed=1),
    "CPExact": lambda: sf.CPExact(calibration_size=100, forest=small_forest(), seed=1),
    "OnlineQRF": lambda: sf.OnlineQRF(forest=small_forest(), seed=1),
    "ConformalQRF": lambda: sf.ConformalQRF(
        forest=small_forest(), calibration_size=100, alphas=(0.1,), seed=1
    ),
    "GaussianInterval": lambda: sf.GaussianInterval(forest=small_forest(), seed=1),
}


def shifting(n, rng):
    """Friedman #1 with an abrupt mean shift (+15) at n/3 and the noise sd x5 from 2n/3."""
    X, y = friedman1(n, rng)
    y[n // 3 :] += 15.0
    k = 2 * n // 3
    y[k:] += 4.0 * rng.standard_normal(n - k)
    return X, y


def miss(y, iv):
    return (y < iv[..., 0]) | (y > iv[..., 1])


@pytest.mark.parametrize("method", ["aci", "pid"])
@pytest.mark.parametrize("base", list(BASES))
def test_batch_equals_row_by_row_and_chunks(method, base, rng):
    X, y = shifting(900, rng)
    alphas = [0.1, 0.3]

    def make():
        return sf.AdaptiveConformal(BASES[base](), alphas=alphas, method=method, gamma=0.05)

    a = make()
    pa, ia = a.predict_learn_many(X, y, alpha=alphas)
    b = make()
    parts = [b.predict_learn_many(X[s], y[s], alpha=alphas) for s in np.array_split(range(900), 4)]
    assert np.array_equal(pa, np.concatenate([p for p, _ in parts]))
    assert np.array_equal(ia, np.concatenate([i for _, i in parts]))
    c = make()  # River style: predict_interval_one, then learn_one
    for i in range(900):
        x = dict(enumerate(X[i]))
        got = c.predict_interval_one(x, alpha=alphas)
        assert got == [tuple(ia[i, 0]), tuple(ia[i, 1])], i
        c.learn_one(x, y[i])
    d = make().learn_many(X, y)  # learning alone learns the same
    for m in (b, c, d):
        if method == "aci":
            assert m.alpha_t == a.alpha_t
        else:
            assert np.array_equal(m.p_, a.p_) and np.array_equal(m.isum_, a.isum_)
    assert np.array_equal(
        d.predict_interval(X[:40], alpha=alphas), a.predict_interval(X[:40], alphas)
    )
    # prediction-only calls that do not serve change nothing, also at a level that is not
    # tracked; serving logs the rows and changes nothing else
    before = pickle.dumps(a)
    a.predict_interval(X[:50], alpha=[0.05, 0.1], log=False)
    a.predict_interval_one(dict(enumerate(X[0])), alpha=0.2, log=False)
    a.predict(X[:5])
    assert pickle.dumps(a) == before
    a.predict_interval(X[:50], alpha=[0.05, 0.1])
    assert a.log_stats["logged"] == 50 and a.alpha_t == d.alpha_t


@pytest.mark.parametrize("gamma", [0.005, 0.05])
def test_aci_long_run_bound_on_a_drifting_stream(gamma, rng):
    """Gibbs & Candes Prop. 4.1 on a stream with a mean shift and a variance change: over the
    ``T`` rows that teach (from the first one the base gave a finite interval: before it the
    unfitted base's infinite intervals say nothing of the level), the MER of the one tracked
    level is alpha - (alpha_T+1 - alpha_1) / (gamma T), exactly, hence within (max(alpha, 1 -
    alpha) + gamma) / (gamma T) of alpha; alpha_t stays in [-gamma, 1 + gamma]."""
    X, y = shifting(12000, rng)
    alpha = 0.1
    m = sf.AdaptiveConformal(
        sf.CPApproximate(calibration_size=200, forest=small_forest(), seed=0),
        alphas=alpha,
        gamma=gamma,
    )
    errs, ivs = [], []
    for s in np.array_split(np.arange(12000), 6):
        _, iv = m.predict_learn_many(X[s], y[s], alpha=alpha)
        errs.append(miss(y[s], iv))
        ivs.append(iv)
        assert -gamma <= m.alpha_t[alpha] <= 1 + gamma
    first = int(np.flatnonzero(np.isfinite(np.concatenate(ivs)).all(axis=1))[0])
    assert 0 < first < 100
    mer = np.concatenate(errs)[first:].mean()
    T = 12000 - first
    assert mer == pytest.approx(alpha - (m.alpha_t[alpha] - alpha) / (gamma * T), abs=1e-9)
    bound = (max(alpha, 1 - alpha) + gamma) / (gamma * T)
    assert m.long_run_bound(T)[alpha] == pytest.approx(bound)
    assert abs(mer - alpha) <= bound
    # the plain method is not within that bound here (the shift breaks exchangeability)
    plain = sf.CPApproximate(calibration_size=200, forest=small_forest(), seed=0)
    _, ivp = plain.predict_learn_many(X, y, alpha=alpha)
    assert abs(miss(y, ivp).mean() - alpha) > bound


def test_aci_bound_on_an_adversarial_sequence(rng):
    """A sequence built against the method: y falls just outside the wrapper's interval whenever
    alpha_t < 0.5 (while the interval stays within 1e4), inside it otherwise (outside a point
    interval: alpha_t >= 1 reports the empty set as the point prediction).  ACI still holds the
    long-run bound."""
    X, _ = friedman1(3000, rng)
    gamma, alpha = 0.02, 0.2
    m = sf.AdaptiveConformal(
        sf.GaussianInterval(forest=small_forest(), seed=0), alphas=alpha, gamma=gamma
    )
    errs = []
    for i in range(3000):
        x = dict(enumerate(X[i]))
        lo, hi = m.predict_interval_one(x, alpha)
        if not np.isfinite(hi - lo):
            yi = m.predict_one(x)
        elif hi == lo or (m.alpha_t[alpha] < 0.5 and abs(hi) < 1e4):  # (y stays representable)
            yi = hi + 1.0
        else:
            yi = (lo + hi) / 2
        errs.append(not (lo <= yi <= hi))
        m.learn_one(x, yi)
    # (the first row, served by the unfitted base its infinite interval, teaches nothing)
    mer, T = float(np.mean(errs[1:])), 2999
    assert abs(mer - alpha) <= (max(alpha, 1 - alpha) + gamma) / (gamma * T)
    assert mer == pytest.approx(alpha - (m.alpha_t[alpha] - alpha) / (gamma * T), abs=1e-9)


def test_aci_infinite_and_empty_rules(rng):
    X, y = friedman1(400, rng)
    m = sf.AdaptiveConformal(sf.GaussianInterval(forest=small_forest(), seed=0), alphas=0.1)
    m.learn_many(X, y)
    m.alpha_t_[0] = -0.001  # alpha_t <= 0: the whole line
    assert np.all(np.isinf(m.predict_interval(X[:20], 0.1)))
    m.alpha_t_[0] = 1.0  # alpha_t >= 1: empty, reported as the point prediction
    iv = m.predict_interval(X[:20], 0.1)
    assert np.array_equal(iv[:, 0], m.predict(X[:20])) and np.array_equal(iv[:, 0], iv[:, 1])
    _, iv = m.predict_learn_many(X[:1], y[:1], 0.1)  # an empty interval is an error
    assert m.alpha_t[0.1] == pytest.approx(1.0 + 0.005 * (0.1 - 1))


def test_pid_integrator_saturates_and_bounds_the_long_run_error(rng):
    """Over a base that under-covers for good (the across-tree Gaussian, MER ~0.4 at 0.1) and with
    a slow tracker, the integrator has to do the work; with a small saturation constant it turns
    the interval infinite once the errors' sum reaches (pi/2) csat (t + 1) / log(t + 1), so that
    sum stays within that plus one, and the MER within the documented bound."""
    X, y = friedman1(6000, rng)
    alpha, csat = 0.1, 0.05

    def base():
        return sf.GaussianInterval(forest=small_forest(), variance="trees", seed=0)

    m = sf.AdaptiveConformal(base(), alphas=alpha, method="pid", gamma=0.001, ki=0.1, csat=csat)
    _, iv = m.predict_learn_many(X, y, alpha=alpha)
    _, ivb = base().predict_learn_many(X, y, alpha=alpha)
    counted = np.isfinite(ivb).all(axis=1)
    T = int(counted.sum())
    assert m.steps_[0] == 6000 and T > 5990  # (steps: the integrator's t, every learnt row)
    err = miss(y, iv)
    assert m.isum_[0] == pytest.approx(err[counted].sum() - alpha * T, abs=1e-6)
    assert not err[~counted].any()
    c = (math.pi / 2) * csat * 6001 / math.log(6001)
    assert abs(m.isum_[0]) <= c + 1
    mer = err[counted].mean()
    assert abs(mer - alpha) <= (c + 1) / T < 0.01
    assert miss(y, ivb).mean() > 0.3  # the base alone
    assert np.isinf(iv[counted]).any()  # the integrator saturated


@pytest.mark.parametrize("method", ["aci", "pid"])
def test_levels_are_nested_and_each_tracked(method, rng):
    X, y = shifting(6000, rng)
    alphas = [0.3, 0.05, 0.1]
    m = sf.AdaptiveConformal(
        sf.OnlineQRF(forest=small_forest(), seed=2), alphas=alphas, method=method, gamma=0.05
    )
    _, iv = m.predict_learn_many(X, y, alpha=alphas)
    order = np.argsort(alphas)  # ascending alpha: descending width, each inside the previous
    lo, hi = iv[:, order, 0], iv[:, order, 1]
    assert np.all(lo[:, 1:] >= lo[:, :-1]) and np.all(hi[:, 1:] <= hi[:, :-1])
    for r, alpha in enumerate(alphas):  # every level near its own alpha
        assert abs(miss(y[1000:], iv[1000:, r]).mean() - alpha) < 0.25 * alpha + 0.01
    # a new level asked for while learning is tracked from then on
    m.predict_learn_many(X[:10], y[:10], alpha=0.2)
    assert sorted(m.levels_) == [0.05, 0.1, 0.2, 0.3]


@pytest.mark.parametrize("method", ["aci", "pid"])
def test_valid_base_on_iid_data_stays_near_alpha(method, rng):
    X, y = friedman1(16000, rng)
    for alpha in (0.1, 0.05):
        m = sf.AdaptiveConformal(sf.CPApproximate(seed=3), alphas=alpha, method=method)
        _, iv = m.predict_learn_many(X, y, alpha=alpha)
        mer = miss(y[2000:], iv[2000:]).mean()
        sd = math.sqrt(alpha * (1 - alpha) / 14000)
        assert abs(mer - alpha) <= 4 * sd + 0.1 * alpha, (alpha, mer)
        assert np.isfinite(iv[2000:]).all()


def test_parameters_are_checked(rng):
    X, y = friedman1(30, rng)
    for bad, err, match in [
        (dict(method="faci"), ValueError, "method must be one of"),
        (dict(unmatched="drop"), ValueError, "unmatched must be one of"),
        (dict(log_size=-1), ValueError, "log_size"),
        (dict(rho=0), ValueError, "rho"),
        (dict(gamma=0), ValueError, "gamma"),  # (0 only for the served-miss corrections)
        (dict(method="dtaci", gamma=-0.1), ValueError, "gamma"),
        (dict(gamma=1.5), ValueError, "gamma"),
        (dict(alphas=[0.1, 1.0]), ValueError, "alpha"),
        (dict(ki=-1), ValueError, "ki"),
        (dict(csat=0), ValueError, "csat"),
        (dict(window=1), ValueError, "window"),
        (dict(model=sf.OnlineForestRegressor()), TypeError, "interval method"),
        (dict(model=sf.AdaptiveConformal()), TypeError, "interval method"),
    ]:
        with pytest.raises(err, match=match):
            sf.AdaptiveConformal(**bad).learn_many(X, y)
    with pytest.raises(ValueError, match="alpha"):
        sf.AdaptiveConformal().predict_interval(X, alpha=0.0)
    for method in ("dtaci", "saocp", "agaci"):  # gamma=0: the papers' methods (no correction)
        sf.AdaptiveConformal(method=method, gamma=0).learn_many(X, y)


def test_reproducible_picklable_saved_and_evaluated(rng, tmp_path):
    X, y = shifting(3000, rng)

    def make():
        return sf.AdaptiveConformal(
            sf.CPExact(calibration_size=100, forest=small_forest(), seed=5), alphas=[0.1, 0.2]
        )

    a, b = make(), make()
    pa, ia = a.predict_learn_many(X[:2000], y[:2000], alpha=[0.1, 0.2])
    pb, ib = b.predict_learn_many(X[:2000], y[:2000], alpha=[0.1, 0.2])
    assert np.array_equal(ia, ib) and np.array_equal(pa, pb)
    c = pickle.loads(pickle.dumps(a))
    sf.save(a, tmp_path / "m.sfm")
    d = sf.load(tmp_path / "m.sfm")
    assert type(d) is sf.AdaptiveConformal and d.alpha_t == a.alpha_t
    rest = [m.predict_learn_many(X[2000:], y[2000:], alpha=[0.1, 0.2])[1] for m in (a, c, d)]
    assert np.array_equal(rest[0], rest[1]) and np.array_equal(rest[0], rest[2])
    # the evaluator drives it like an interval method (its own pass, per chunk)
    e = make()
    r = prequential(e, (X, y), alphas=[0.1, 0.2], chunk_size=700, window=500)
    _, iv = make().predict_learn_many(X, y, alpha=[0.1, 0.2])
    assert r.totals["intervals"]["0.1"]["mer"] == pytest.approx(miss(y, iv[:, 0]).mean())
    assert r.alphas == (0.1, 0.2) and len(r.windows()["end"]) == 6
    fresh = make().fit(X[:500], y[:500])  # scikit-learn style
    assert fresh.n_seen == 500 and fresh.clone().n_seen == 0
