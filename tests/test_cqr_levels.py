"""ConformalQRF answers any level: valid off its calibrated levels, nested, and at a calibrated
level the conformalized QRF interval itself (widened only where a larger level's sticks out)."""

import numpy as np
import pytest

import streamforest as sf

from .conftest import friedman1

GRID = (0.05, 0.1, 0.3)
ASK = [0.01, 0.02, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.45]


def forest():
    return sf.OnlineForestRegressor(n_trees=6, tree=sf.HoeffdingTreeRegressor(grace_period=50))


def hetero(n, rng):
    X = rng.random((n, 5))
    y = 10 * X[:, 0] + 5 * np.sin(3 * X[:, 1]) + (0.2 + 3 * X[:, 0]) * rng.standard_normal(n)
    return X, y


def test_calibrated_levels_are_the_cqr_intervals_hulled_with_larger_levels(rng):
    """At a calibrated level the interval is that level's own conformalized QRF interval (what
    a model calibrating only that level gives), widened to contain the larger levels'."""
    X, y = friedman1(3000, rng)
    alone = []
    for a in GRID:  # each level's CQR interval, from a model calibrating that level only
        m = sf.ConformalQRF(forest=forest(), alphas=(a,), calibration_size=300, seed=4)
        alone.append(m.predict_learn_many(X, y, alpha=a))
    b = sf.ConformalQRF(forest=forest(), alphas=GRID, calibration_size=300, seed=4)
    pb, ib = b.predict_learn_many(X, y, alpha=list(GRID))
    for p, _ in alone:
        assert np.array_equal(p, pb)
    ia = np.stack([iv for _, iv in alone], axis=1)  # (n, levels, 2)
    for k in range(len(GRID)):  # the hull of the level's own and the larger levels' intervals
        larger = [j for j in range(len(GRID)) if GRID[j] >= GRID[k]]
        assert np.array_equal(ib[:, k, 0], ia[:, larger, 0].min(axis=1))
        assert np.array_equal(ib[:, k, 1], ia[:, larger, 1].max(axis=1))
    crossed = np.mean(ib[2000:, 0, 1] != ia[2000:, 0, 1])
    assert crossed < 0.2  # the levels' own calibrations cross on few rows


@pytest.mark.parametrize("data", [friedman1, hetero])
def test_any_level_is_valid_and_nested(data, rng):
    X, y = data(16000, rng)
    m = sf.ConformalQRF(alphas=GRID, seed=2)
    m.learn_many(X[:2000], y[:2000])
    _, iv = m.predict_learn_many(X[2000:], y[2000:], alpha=ASK)
    yy = y[2000:]
    n = yy.shape[0]
    for r, alpha in enumerate(ASK):
        mer = np.mean((yy < iv[:, r, 0]) | (yy > iv[:, r, 1]))
        assert mer <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / n), (alpha, mer)
        assert np.isfinite(iv[:, r]).all()
    # nested: a smaller alpha never gives a narrower interval, never crossing
    assert np.all(np.diff(iv[:, :, 0], axis=1) >= 0)
    assert np.all(np.diff(iv[:, :, 1], axis=1) <= 0)
    # prediction only, at levels in any order, agrees with itself level by level
    Xt = X[:300]
    full = m.predict_interval(Xt, alpha=ASK[::-1])
    for r, alpha in enumerate(ASK[::-1]):
        assert np.array_equal(m.predict_interval(Xt, alpha=alpha), full[:, r])
    one = m.predict_interval_one(dict(enumerate(Xt[7])), alpha=0.07)
    assert one == tuple(full[7, ASK[::-1].index(0.07)])


def test_off_grid_levels_are_not_just_the_neighbouring_level(rng):
    X, y = hetero(6000, rng)
    m = sf.ConformalQRF(alphas=(0.1,), seed=1).learn_many(X, y)
    iv = m.predict_interval(X[:500], alpha=[0.02, 0.1, 0.3])
    w = iv[:, :, 1] - iv[:, :, 0]
    assert np.all(w[:, 0] > w[:, 1]) and np.all(w[:, 1] > w[:, 2])
