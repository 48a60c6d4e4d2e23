"""Array metrics of intervals and quantiles, checked against scikit-learn and exact values."""

from statistics import NormalDist

import numpy as np
import pytest
from sklearn.metrics import mean_pinball_loss

from streamforest import metrics as M


def test_pinball_loss_equals_scikit_learn(rng):
    y = rng.standard_normal(500)
    q = rng.standard_normal((500, 3))
    levels = [0.05, 0.5, 0.9]
    got = M.pinball_loss(y, q, levels)
    for k, lv in enumerate(levels):
        assert got[k] == pytest.approx(mean_pinball_loss(y, q[:, k], alpha=lv), rel=1e-12)
        assert M.pinball_loss(y, q[:, k], lv) == pytest.approx(got[k], rel=1e-12)
    assert M.pinball_loss(y, q, levels, average=False).shape == (500, 3)


def test_interval_score_is_twice_over_alpha_the_two_pinball_losses(rng):
    y = rng.standard_normal(1000) * 3
    c = rng.standard_normal(1000)
    half = rng.random(1000) * 4
    iv = np.stack([c - half, c + half], axis=1)
    for alpha in (0.05, 0.2):
        expect = (2 / alpha) * (
            mean_pinball_loss(y, iv[:, 0], alpha=alpha / 2)
            + mean_pinball_loss(y, iv[:, 1], alpha=1 - alpha / 2)
        )
        assert M.interval_score(y, iv, alpha) == pytest.approx(expect, rel=1e-12)
    # by hand: width 2, y 1 above the upper end at alpha = 0.1 -> 2 + 20 * 1
    assert M.interval_score([3.0], [[0.0, 2.0]], 0.1) == pytest.approx(22.0)
    assert M.interval_score([1.0], [[0.0, 2.0]], 0.1) == pytest.approx(2.0)
    assert M.interval_score([1.0], [[-np.inf, np.inf]], 0.1) == np.inf
    with pytest.raises(ValueError, match="alpha"):
        M.interval_score(y, iv, 1.5)


def test_evaluator_interval_score_matches_the_array_metric(rng):
    y = rng.standard_normal(300)
    pred = np.zeros(300)
    iv = np.stack([pred - 1.2, pred + 1.0], axis=1)
    out = M.score(y, pred, iv, [0.1])
    assert out["intervals"]["0.1"]["interval_score"] == pytest.approx(
        M.interval_score(y, iv, 0.1), rel=1e-12
    )


def test_crps_from_many_quantiles_approaches_the_gaussian_closed_form(rng):
    mu = rng.standard_normal(200)
    sd = 0.5 + rng.random(200)
    y = mu + sd * rng.standard_normal(200) * 1.5
    K = 1999
    levels = (np.arange(K) + 0.5) / K
    z = np.array([NormalDist().inv_cdf(p) for p in levels])
    q = mu[:, None] + sd[:, None] * z
    approx = M.crps_from_quantiles(y, q, levels, average=False)
    u = (y - mu) / sd
    phi = np.exp(-(u**2) / 2) / np.sqrt(2 * np.pi)
    Phi = np.array([NormalDist().cdf(v) for v in u])
    exact = sd * (u * (2 * Phi - 1) + 2 * phi - 1 / np.sqrt(np.pi))
    assert np.allclose(approx, exact, rtol=2e-3, atol=1e-4)
    # equally spaced midpoints: twice the mean pinball loss over the levels (scikit-learn's)
    lv = (np.arange(9) + 0.5) / 9
    q9 = mu[:, None] + sd[:, None] * np.array([NormalDist().inv_cdf(p) for p in lv])
    expect = 2 * np.mean([mean_pinball_loss(y, q9[:, k], alpha=a) for k, a in enumerate(lv)])
    assert M.crps_from_quantiles(y, q9, lv) == pytest.approx(expect, rel=1e-12)
    with pytest.raises(ValueError, match="ascending"):
        M.crps_from_quantiles(y, q9, lv[::-1])


def test_binned_coverage_by_width_equals_a_direct_computation(rng):
    n = 1003
    width = rng.exponential(size=n)
    lo = -width / 2
    y = rng.standard_normal(n) * 0.6
    iv = np.stack([lo, lo + width], axis=1)
    out = M.binned_coverage(y, iv, n_bins=10)
    assert out["n"].sum() == n and out["n"].min() >= n // 10
    order = np.argsort(width, kind="stable")
    start = 0
    for b in range(10):
        g = order[start : start + out["n"][b]]
        start += out["n"][b]
        inside = (y[g] >= iv[g, 0]) & (y[g] <= iv[g, 1])
        assert out["coverage"][b] == inside.mean()
        assert out["mean_width"][b] == pytest.approx(width[g].mean())
        assert out["lower"][b] == width[g].min() and out["upper"][b] == width[g].max()
    assert np.all(np.diff(out["mean_width"]) > 0)
    assert np.all(np.diff(out["coverage"][[0, 9]]) > 0)  # wider intervals cover more here
    assert np.allclose(out["mer"], 1 - out["coverage"])
    # another conditioning variable, and an infinite interval sorting last
    iv[0] = (-np.inf, np.inf)
    by_y = M.binned_coverage(y, iv, by=np.abs(y), n_bins=4)
    assert by_y["n"].sum() == n
    assert M.binned_coverage(y, iv)["upper"][-1] == np.inf
    with pytest.raises(ValueError, match="n_bins"):
        M.binned_coverage(y, iv, n_bins=0)
