"""Batch QRF and HDI-Forest: agreement with a brute-force weighted quantile / shortest interval,
agreement with scikit-learn's forest, held-out coverage, HDI width <= equal-tailed width, the
scikit-learn estimator checks, validation and persistence."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.base import clone  # noqa: E402
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import streamforest as sf  # noqa: E402

CLASSES = (sf.QuantileForestRegressor, sf.HDIForestRegressor)


def skewed(n, rng):
    X = rng.random((n, 3))
    y = 2 * X[:, 0] + (0.2 + X[:, 1]) * rng.exponential(size=n)
    return X, y


def heteroscedastic(n, rng):
    X = rng.random((n, 4))
    y = 3 * X[:, 0] + np.sin(4 * X[:, 1]) + (0.3 + X[:, 2]) * rng.normal(size=n)
    return X, y


def meinshausen_weights(model, X_train, x):
    """Dense weights of the training rows at ``x`` from leaf co-membership (via scikit-learn's
    own ``apply``-equivalent leaves of the model)."""
    L = model.apply(X_train)
    lx = model.apply(x[None, :])[0]
    same = L == lx
    return (same / same.sum(axis=0)).mean(axis=1)


def brute_quantile_ok(v, w, q, y):
    """``v`` is the inclusive q-quantile of (y, w): weight below v < q*total <= weight up to v."""
    total = w.sum()
    below = w[y < v].sum()
    upto = w[y <= v].sum()
    eps = 1e-9 * total
    return v in set(y[w > 0]) and below <= q * total + eps and upto >= q * total - eps


def brute_shortest(y, w, mass):
    """Smallest width of ``[y_i, y_j]`` (i <= j over the sorted support) holding >= mass."""
    keep = w > 0
    order = np.argsort(y[keep], kind="stable")
    v, ww = y[keep][order], w[keep][order]
    need = mass * ww.sum() * (1 - 1e-12)
    c = np.concatenate([[0.0], np.cumsum(ww)])
    best = np.inf
    for i in range(len(v)):
        for j in range(i, len(v)):
            if c[j + 1] - c[i] >= need:
                best = min(best, v[j] - v[i])
                break
    return best


@pytest.mark.parametrize("kind", ["random_forest", "extra_trees"])
def test_leaves_and_mean_match_scikit_learn(kind):
    rng = np.random.default_rng(0)
    X, y = heteroscedastic(400, rng)
    Xt = rng.random((200, 4))
    m = sf.QuantileForestRegressor(n_estimators=15, forest=kind, seed=3).fit(X, y)
    cls = RandomForestRegressor if kind == "random_forest" else ExtraTreesRegressor
    ref = cls(
        n_estimators=15, min_samples_leaf=5, max_features=1.0, bootstrap=True, random_state=3
    ).fit(X, y)
    np.testing.assert_array_equal(m.apply(Xt), ref.apply(Xt))
    np.testing.assert_allclose(m.predict(Xt), ref.predict(Xt), rtol=1e-12, atol=1e-12)


def test_quantiles_and_hdi_agree_with_brute_force():
    rng = np.random.default_rng(1)
    X, y = skewed(300, rng)
    y[:40] = np.round(y[:40], 1)  # some ties
    Xt = rng.random((12, 3))
    qs = [0.0, 0.05, 0.25, 0.5, 0.8, 0.95, 1.0]
    alphas = [0.3, 0.1, 0.02]
    hdi = sf.HDIForestRegressor(n_estimators=8, min_samples_leaf=7, seed=2).fit(X, y)
    qrf = sf.QuantileForestRegressor(n_estimators=8, min_samples_leaf=7, seed=2).fit(X, y)
    Q = hdi.predict_quantiles(Xt, qs)
    np.testing.assert_array_equal(Q, qrf.predict_quantiles(Xt, qs))
    H = hdi.predict_interval(Xt, alphas)
    E = qrf.predict_interval(Xt, alphas)
    for i, x in enumerate(Xt):
        w = meinshausen_weights(hdi, X, x)
        assert w.sum() == pytest.approx(1.0)
        for k, q in enumerate(qs):
            assert brute_quantile_ok(Q[i, k], w, q, y), (i, q)
        for a, alpha in enumerate(alphas):
            lo, hi = H[i, a]
            inside = w[(y >= lo) & (y <= hi)].sum()
            assert inside >= (1 - alpha) * (1 - 1e-9)
            assert hi - lo == pytest.approx(brute_shortest(y, w, 1 - alpha), abs=1e-12)
            assert brute_quantile_ok(E[i, a, 0], w, alpha / 2, y)
            assert brute_quantile_ok(E[i, a, 1], w, 1 - alpha / 2, y)


def test_hdi_never_wider_than_equal_tailed_and_narrower_on_skewed_data():
    rng = np.random.default_rng(2)
    X, y = skewed(2000, rng)
    Xt, _ = skewed(500, rng)
    kw = dict(n_estimators=30, min_samples_leaf=10, seed=4)
    H = sf.HDIForestRegressor(**kw).fit(X, y).predict_interval(Xt, [0.1, 0.3])
    E = sf.QuantileForestRegressor(**kw).fit(X, y).predict_interval(Xt, [0.1, 0.3])
    wh, we = H[..., 1] - H[..., 0], E[..., 1] - E[..., 0]
    # the equal-tailed interval holds >= 1 - alpha, so the shortest one is never wider
    assert np.all(wh <= we + 1e-12)
    assert np.all(wh.mean(axis=0) < 0.9 * we.mean(axis=0))  # exponential noise: much shorter


@pytest.mark.parametrize("alpha", [0.1, 0.3])
def test_held_out_coverage(alpha):
    """QRF's coverage on held-out i.i.d. rows lies within binomial bounds (4 sigma) of 1 - alpha.
    HDI's shortest interval of an empirical distribution picks up sampling fluctuations and
    under-covers by a few points (measured 1.5 to 2.5 points here); it is held to the same
    upper bound and a lower bound 4 points looser."""
    n = 4000
    cover = {cls: [] for cls in CLASSES}
    for seed in range(2):
        rng = np.random.default_rng(10 + seed)
        X, y = heteroscedastic(n, rng)
        Xt, yt = heteroscedastic(n, rng)
        for cls in CLASSES:
            iv = cls(n_estimators=40, min_samples_leaf=20, seed=seed).fit(X, y)
            iv = iv.predict_interval(Xt, alpha)
            cover[cls].append(np.mean((yt >= iv[:, 0]) & (yt <= iv[:, 1])))
    sd = np.sqrt(alpha * (1 - alpha) / (2 * n))
    qrf = np.mean(cover[sf.QuantileForestRegressor])
    hdi = np.mean(cover[sf.HDIForestRegressor])
    assert abs(qrf - (1 - alpha)) <= 4 * sd, qrf
    assert 1 - alpha - 4 * sd - 0.04 <= hdi <= 1 - alpha + 4 * sd, hdi


@parametrize_with_checks(
    [
        sf.QuantileForestRegressor(n_estimators=10, seed=0),
        sf.HDIForestRegressor(n_estimators=10, forest="extra_trees", seed=0),
    ],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": "bootstrap and min_samples_leaf count "
        "rows, not weights (scikit-learn's RandomForestRegressor fails it too)"
    },
)
def test_scikit_learn_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("cls", CLASSES)
def test_bad_input_and_parameters(cls):
    rng = np.random.default_rng(3)
    X, y = heteroscedastic(200, rng)
    with pytest.raises(NotFittedError):
        cls().predict_interval(X, 0.1)
    m = cls(n_estimators=5, seed=0).fit(X, y)
    before = pickle.dumps(m)
    bad = X[:3].copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        m.predict_interval(bad, 0.1)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:3, :2])
    with pytest.raises(ValueError, match="alpha"):
        m.predict_interval(X[:3], 1.5)
    with pytest.raises(TypeError, match="alpha"):
        m.predict_interval(X[:3], "0.1")
    with pytest.raises(ValueError, match="q must be"):
        m.predict_quantiles(X[:3], [0.5, 2.0])
    with pytest.raises(ValueError, match="forest"):
        cls(forest="gbm").fit(X, y)
    with pytest.raises(ValueError, match="n_estimators"):
        cls(n_estimators=0).fit(X, y)
    assert pickle.dumps(m) == before


@pytest.mark.parametrize("cls", CLASSES)
def test_params_clone_pickle_deepcopy_and_save_load(cls):
    rng = np.random.default_rng(4)
    X, y = skewed(300, rng)
    m = cls(n_estimators=6, min_samples_leaf=3, seed=5)
    assert clone(m).get_params() == m.get_params()
    assert m.set_params(min_samples_leaf=4).min_samples_leaf == 4
    m.fit(X, y)
    ref = m.predict_interval(X[:50], [0.05, 0.2])
    buf = io.BytesIO()
    sf.save(m, buf)
    buf.seek(0)
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), sf.load(buf)):
        assert type(other) is cls
        np.testing.assert_array_equal(other.predict_interval(X[:50], [0.05, 0.2]), ref)
    # a fit with the same seed reproduces the model
    again = cls(n_estimators=6, min_samples_leaf=4, seed=5).fit(X, y)
    np.testing.assert_array_equal(again.predict_interval(X[:50], [0.05, 0.2]), ref)
