"""AdaptiveConformal in the protocols users run (batches, delayed labels, River's delay): the
controllers learn from the intervals that were served; the methods after ACI against reference
computations (the papers' authors' implementations where installed) and on drifting streams."""

import math
import warnings

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core

OK = _core.intervals  # the online methods' compiled pass and its state's layout


def small_base():
    forest = sf.OnlineForestRegressor(n_trees=4, tree=sf.HoeffdingTreeRegressor(grace_period=40))
    return sf.CPApproximate(calibration_size=200, forest=forest, seed=1)


def autocorrelated(n, rng):
    """A target that wanders (a random walk) beside a learnable part; the trees follow the
    walk as they learn, so the errors of a learnt model are smaller than those met at test time
    and come in runs."""
    X = rng.random((n, 4))
    X[:, 3] = np.arange(n) / n
    y = 5.0 * X[:, 0] + np.cumsum(rng.standard_normal(n)) + 0.3 * rng.standard_normal(n)
    return X, y


def miss(y, iv):
    return (y < iv[..., 0]) | (y > iv[..., 1])


def run_protocol(model, X, y, batch=1, delay=0, alpha=0.1):
    """Serve the intervals of ``batch`` rows at a time; learn each row ``delay`` rows after it
    was served (0: once its batch was served).  Returns the served intervals."""
    n = y.shape[0]
    out = np.empty((n, 2))
    learnt = 0
    for s in range(0, n, batch):
        e = min(n, s + batch)
        out[s:e] = model.predict_interval(X[s:e], alpha)
        upto = max(0, e - delay) if delay else e
        if upto > learnt:
            model.learn_many(X[learnt:upto], y[learnt:upto])
            learnt = upto
    if learnt < n:
        model.learn_many(X[learnt:], y[learnt:])
    return out


PROTOCOLS = [(50, 0), (1, 100)]


@pytest.mark.parametrize("batch,delay,gamma", [(50, 0, 0.005), (1, 100, 0.05)])
def test_aci_holds_its_bound_on_what_was_served(batch, delay, gamma, rng):
    """Gibbs & Candes' long-run bound holds for the served intervals, with the lag between a
    row's serving and its label (``batch - 1 + delay`` labels) added to ``gamma``'s term: in
    batches of 50 at ``gamma = 0.005`` (lags up to 49, the step never capped) and with labels
    100 rows late at ``gamma = 0.05`` (the step capped at ``LAG_GAIN / 101``, constant).
    Feeding the controller the errors of the intervals it would give after learning
    (``log_size=0``, the wrapper's behaviour before the log) misses alpha by over twice the
    bound (measured 0.22 and 0.44-0.46 against the served feedback's 0.100-0.102 and
    0.109-0.110 on two seeds)."""
    X, y = autocorrelated(5000, rng)
    alpha = 0.1
    m = sf.AdaptiveConformal(small_base(), alphas=alpha, gamma=gamma)
    mer = miss(y, run_protocol(m, X, y, batch, delay, alpha)).mean()
    bound = m.long_run_bound(y.shape[0], delay=batch - 1 + delay)[alpha]
    assert abs(mer - alpha) <= min(bound, 0.02), (mer, bound)
    old = sf.AdaptiveConformal(small_base(), alphas=alpha, gamma=gamma, log_size=0)
    mer_old = miss(y, run_protocol(old, X, y, batch, delay, alpha)).mean()
    assert abs(mer_old - alpha) > 2 * bound, mer_old


def test_stale_labels_take_capped_steps(rng):
    """A label learnt ``lag`` rows after its row was served moves ACI's level by
    ``min(gamma, LAG_GAIN / (1 + lag)) (alpha - err)``, ``err`` the miss of the interval served:
    stale feedback with a fixed step is a delayed integrator that swings between the whole line
    and narrow intervals (ACI in batches of 1000 on ``wind``: MER 0.134, worst window 0.35)."""
    X, y = autocorrelated(1400, rng)
    alpha, gamma = 0.1, 0.05
    m = sf.AdaptiveConformal(small_base(), alphas=alpha, gamma=gamma)
    run_protocol(m, X[:1000], y[:1000], 1, 0, alpha)
    iv = m.predict_interval(X[1000:], alpha)  # 400 rows served, then learnt one by one
    err = miss(y[1000:], iv)
    for k in range(400):
        before = m.alpha_t[alpha]
        m.learn_many(X[1000 + k : 1001 + k], y[1000 + k : 1001 + k])
        step = min(gamma, OK.LAG_GAIN / (1 + k))  # (k rows learnt since it was served)
        assert m.alpha_t[alpha] - before == pytest.approx(step * (alpha - err[k]), abs=1e-12)
    assert m.log_stats["matched"] == 1400 - 1  # (the first row: served before any learning)


@pytest.mark.parametrize("method", ["pid", "agaci", "sfogd", "dtaci", "saocp"])
@pytest.mark.parametrize("batch,delay", PROTOCOLS)
def test_every_method_holds_alpha_in_batches_and_with_delays(method, batch, delay, rng):
    X, y = autocorrelated(5000, rng)
    alpha = 0.1
    m = sf.AdaptiveConformal(small_base(), alphas=alpha, method=method)
    iv = run_protocol(m, X, y, batch, delay, alpha)
    mer = miss(y[500:], iv[500:]).mean()
    assert abs(mer - alpha) <= 0.02, mer
    # rows served before the model learnt anything are not logged (their intervals are the
    # unfitted model's, infinite): at most the first batch and the delay's rows
    st = m.log_stats
    assert st["late"] == 0 and st["logged"] == 0, st
    assert st["matched"] + st["unmatched"] == 5000 and st["unmatched"] <= batch + delay + 1, st


@pytest.mark.parametrize("method", ["dtaci", "saocp", "agaci"])
@pytest.mark.parametrize("batch,delay", PROTOCOLS)
def test_corrected_methods_hold_alpha_on_what_was_served(method, batch, delay, rng):
    """DtACI, SAOCP and AgACI (their served-miss corrections; AgACI's since it missed alpha by
    0.02-0.04 in batches of 1000 on the Friedman stream) within 0.01 of alpha in batches of 50
    and 0.015 with labels 100 rows late
    (measured 0.097 / 0.100 DtACI, 0.101 / 0.110 SAOCP over these 4,500 rows; at 10,000 rows the
    delayed DtACI gave 0.089: within 0.01 is not reached with a delay at this length).
    Stale by a batch or a delay, their experts alone do not hold it (before the served-miss
    correction: MER 0.20 / 0.18 for DtACI, 0.22 / 0.31 for SAOCP, though each DtACI expert's own
    served MER was 0.10); and fed the errors of the intervals the wrapper gives after learning
    the earlier rows (``log_size=0``, the wrapper before the served log) they miss it by far."""
    X, y = autocorrelated(5000, rng)
    alpha = 0.1
    m = sf.AdaptiveConformal(small_base(), alphas=alpha, method=method)
    mer = miss(y[500:], run_protocol(m, X, y, batch, delay, alpha)[500:]).mean()
    assert abs(mer - alpha) <= (0.015 if delay else 0.01), mer
    old = sf.AdaptiveConformal(small_base(), alphas=alpha, method=method, log_size=0)
    mer_old = miss(y[500:], run_protocol(old, X, y, batch, delay, alpha)[500:]).mean()
    assert abs(mer_old - alpha) > 0.1, mer_old


def test_prequential_protocols_agree(rng):
    """Serving one row and learning it at once is the prequential pass, bit for bit."""
    X, y = autocorrelated(600, rng)
    for method in ("aci", "pid", "dtaci", "agaci", "sfogd", "saocp", "nexcp"):
        a = sf.AdaptiveConformal(small_base(), alphas=[0.1, 0.2], method=method)
        _, ia = a.predict_learn_many(X, y, alpha=0.1)
        b = sf.AdaptiveConformal(small_base(), alphas=[0.1, 0.2], method=method)
        ib = run_protocol(b, X, y, 1, 0)
        assert np.array_equal(ia, ib), method


def test_late_and_unmatched_labels_are_counted_and_handled(rng):
    X, y = autocorrelated(400, rng)
    m = sf.AdaptiveConformal(small_base(), log_size=20)
    with pytest.warns(RuntimeWarning, match="log_size"):
        run_protocol(m, X, y, 1, 50)
    st = m.log_stats
    # rows 0..50 were served before the model learnt anything (not logged: unmatched); rows
    # 51..379 were learnt after 20 newer rows were served (evicted: late); the last 20 not
    assert st["late"] == 329 and st["matched"] == 20 and st["unmatched"] == 51
    # a row learnt without being served: unmatched (the interval it would get now)
    m.learn_many(X[:3] + 1.0, y[:3])
    assert m.log_stats["unmatched"] == 51 + 3
    strict = sf.AdaptiveConformal(small_base(), unmatched="raise")
    strict.predict_interval(X[:10])
    strict.learn_many(X[:10], y[:10])
    with pytest.raises(ValueError, match="never served"):
        strict.learn_many(X[10:12], y[10:12])
    assert strict.n_seen == 10  # (the refused call learnt nothing)
    skip = sf.AdaptiveConformal(small_base(), method="sfogd", unmatched="skip")
    skip.learn_many(X[:100], y[:100])
    assert skip.st_[0, OK.STEPS] == 0 and skip.n_seen == 100
    # asking twice for a row with nothing learnt in between logs it once
    again = sf.AdaptiveConformal(small_base())
    again.learn_many(X[100:110], y[100:110])  # (rows served before any learning are not logged)
    again.predict_interval(X[:5])
    again.predict_interval(X[:5], alpha=[0.1, 0.2])
    assert again.log_stats["logged"] == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again.learn_many(X[:5], y[:5])
    assert again.log_stats["matched"] == 5


def test_river_delayed_protocol(rng):
    """River's progressive_val_score with a delay: the adapter serves each row's interval when
    it predicts it, and the controllers learn from it when the label comes."""
    river = pytest.importorskip("river")
    from river import evaluate, metrics

    from streamforest.river import RiverRegressor

    class MER(metrics.base.RegressionMetric):
        def __init__(self):
            self.n = self.k = 0

        def update(self, y_true, y_pred, w=1.0):
            self.n += 1
            self.k += not (y_pred.lower <= y_true <= y_pred.upper)

        def revert(self, y_true, y_pred, w=1.0):
            raise NotImplementedError

        def get(self):
            return self.k / max(self.n, 1)

        @property
        def bigger_is_better(self):
            return False

    X, y = autocorrelated(3000, rng)
    alpha, gamma, delay = 0.1, 0.05, 100
    data = [(dict(enumerate(X[i])), float(y[i])) for i in range(3000)]
    model = sf.AdaptiveConformal(small_base(), alphas=alpha, gamma=gamma)
    metric = MER()
    evaluate.progressive_val_score(data, RiverRegressor(model, interval=True), metric, delay=delay)
    assert river is not None and metric.n == 3000
    st = model.log_stats  # (the first `delay` rows were served before any learning: not logged)
    assert st["matched"] == 3000 - delay and st["unmatched"] == delay
    bound = (max(alpha, 1 - alpha) + gamma * (1 + delay)) / (gamma * 3000)
    assert abs(metric.get() - alpha) <= bound


# --- reference computations --------------------------------------------------------------------
def run_kernel(method, scores, alpha, scale=0.0, rho=0.99, W=None):
    """The compiled pass on residual scores (a point base interval at 0, additive scores, the
    threshold floored at 0 as the reference implementation): the served thresholds."""
    n = scores.shape[0]
    K = 8
    gammas = 0.001 * 2.0 ** np.arange(8)
    W = W or n + 1
    st = np.zeros((1, OK.N_SCALARS))
    st[0, OK.CLOCK] = 1.0
    shape = {OK.SAOCP: (128, OK.N_SAOCP_FIELDS), OK.DTACI: (K, 2), OK.AGACI: (K, 9)}
    ex = np.zeros((1, *shape.get(method, (1, 1))))
    if method == OK.DTACI:
        ex[0, :, 0] = alpha
    denom = ((1 - alpha) ** 2 * alpha**3 + alpha**2 * (1 - alpha) ** 3) / 3
    eta = np.array([math.sqrt(3 / 100) * math.sqrt((math.log(800) + 2) / denom)])
    lo, hi = np.zeros((n, 1)), np.zeros((n, 1))
    out_lo, out_hi = np.empty((n, 1)), np.empty((n, 1))
    rec = np.zeros((n, 1, 5 + 2 * K))
    OK.online_pass(method, False, 0.0, 0.0, lo, hi, np.zeros(n), scores, np.ones(n, np.int8),
                   rec, np.array([alpha]), np.ones(1, np.bool_), gammas, eta, 1 / 200, 0.0, 8.0,
                   scale, rho, True, st, np.zeros((1, W)), ex, np.zeros(1, np.int64), out_lo,
                   out_hi, np.empty(1), np.empty(1), np.empty(W), np.empty((2, K)))  # fmt: skip
    return out_hi[:, 0]


def reference_scores(rng, n=1500):
    """Residuals whose scale drifts (a level shift and a burst)."""
    s = np.abs(rng.standard_normal(n))
    s[n // 3 :] *= 3.0
    s[2 * n // 3 : 2 * n // 3 + 200] *= 4.0
    return s


@pytest.mark.parametrize("name", ["ScaleFreeOGD", "SAOCP", "FACI"])
def test_against_the_authors_implementation(name, rng):
    """SF-OGD, SAOCP (Bhatnagar et al. 2023) and DtACI (Gibbs & Candes 2022, as FACI) against
    Salesforce's ``online-conformal``, the implementation of Bhatnagar et al., on the same
    scores: the same thresholds at every step."""
    pytest.importorskip("online_conformal")
    import importlib

    import pandas as pd

    cls = getattr(importlib.import_module(f"online_conformal.{oc_module[name]}"), name)
    s = reference_scores(rng)
    alpha, max_scale = 1 - 0.9, 5.0  # (the reference's alpha is 1 - coverage, in floating point)
    kw = {} if name == "FACI" else {"max_scale": max_scale}
    ref = cls(model=None, train_data=None, coverage=1 - alpha, **kw)
    want = []
    for v in s:
        want.append(ref.predict(horizon=1)[1])
        ref.update(pd.Series([v]), pd.Series([0.0]), horizon=1)
    method = {"ScaleFreeOGD": OK.SFOGD, "SAOCP": OK.SAOCP, "FACI": OK.DTACI}[name]
    got = run_kernel(method, s, alpha, scale=max_scale)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12)


oc_module = {"ScaleFreeOGD": "ogd", "SAOCP": "saocp", "FACI": "faci"}


def test_nexcp_is_the_weighted_conformal_quantile(rng):
    """Barber et al. 2023: weights rho ** age on the last W scores, the test point's weight 1
    at +inf, the smallest score whose normalised cumulative weight reaches 1 - alpha."""
    s = reference_scores(rng, 400)
    alpha, rho, W = 0.1, 0.97, 150
    got = run_kernel(OK.NEXCP, s, alpha, rho=rho, W=W)
    for t in range(s.shape[0]):
        past = s[max(0, t - W) : t]
        w = rho ** np.arange(past.shape[0])[::-1]
        order = np.argsort(past, kind="stable")
        cum = np.cumsum(w[order]) / (w.sum() + 1.0)
        k = np.flatnonzero(cum >= 1 - alpha)
        want = past[order[k[0]]] if k.size else np.inf
        assert got[t] == want, t


def test_agaci_aggregates_its_experts(rng):
    """AgACI's bound is a convex combination of its experts' bounds (BOA's weights), so it lies
    between the narrowest and the widest expert, and its experts are ACI on their own misses."""
    s = reference_scores(rng, 800)
    got = run_kernel(OK.AGACI, s, 0.1)
    assert np.all(np.isfinite(got))
    assert abs(np.mean(s > got) - 0.1) < 0.03


def test_benchmark_hindsight_bound_is_the_narrowest_per_window_threshold(monkeypatch, rng):
    """``benchmarks/online_conformal.py``'s hindsight bound (the narrowest per-window thresholds
    at ``alpha`` times the rows' misses, which the docs compare the controllers' widths with)
    equals an exhaustive search over every way of sharing the misses between the windows."""
    import importlib.util
    import itertools
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "online_conformal.py"
    spec = importlib.util.spec_from_file_location("online_conformal_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr(bench, "WINDOW", 4)
    monkeypatch.setattr(bench, "first_scored", lambda batch, delay: 0)
    alpha = 0.25
    for _ in range(60):
        n = int(rng.integers(9, 14))
        h = rng.uniform(0.5, 2.0, n)
        y = rng.standard_normal(n) * rng.uniform(0.2, 3.0, n)
        iv = np.stack([-h, h], axis=1)[:, None, :]  # (centre 0, level alpha only)
        levels = np.array([alpha])
        out = bench.run_hindsight("window", np.zeros(n), iv, levels, y, alpha, 1, 0)
        misses = round(alpha * n)
        assert miss(y, out).sum() == misses
        score = np.abs(y) / h
        windows = [np.arange(s, min(s + 4, n)) for s in range(0, n, 4)]
        # (a window with k misses has the threshold its (k+1)-th largest score)
        cost = [np.append(np.sort(score[w])[::-1], 0.0) * 2 * h[w].sum() for w in windows]
        best = min(
            sum(c[k] for c, k in zip(cost, share, strict=True))
            for share in itertools.product(*[range(c.shape[0]) for c in cost])
            if sum(share) == misses
        )
        assert np.sum(out[:, 1] - out[:, 0]) == pytest.approx(best, rel=1e-6)
        constant = bench.run_hindsight("constant", np.zeros(n), iv, levels, y, alpha, 1, 0)
        assert np.allclose(constant[:, 1] / h, np.quantile(score, 1 - alpha))
