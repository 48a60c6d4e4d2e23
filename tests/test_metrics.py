"""streamforest.metrics cross-checked against scikit-learn's and River's metrics on random data."""

import math

import numpy as np
import pytest

from streamforest import _core
from streamforest import metrics as M
from streamforest.evaluate import PrequentialResult

sk = pytest.importorskip("sklearn.metrics")
river_metrics = pytest.importorskip("river.metrics")
river_utils = pytest.importorskip("river.utils")


def data(n=3000, seed=0, alphas=(0.1, 0.3)):
    rng = np.random.default_rng(seed)
    y = rng.gamma(2.0, 3.0, n) - 4.0
    pred = y + rng.normal(0, 1.5, n) + 0.3
    iv = np.empty((n, len(alphas), 2))
    for a, alpha in enumerate(alphas):
        half = rng.uniform(0.5, 4.0, n) * (1 - alpha)
        iv[:, a, 0] = pred - half
        iv[:, a, 1] = pred + half * rng.uniform(0.5, 1.5, n)
    return y, pred, iv


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_point_metrics_equal_scikit_learn_and_river(seed):
    y, pred, _ = data(seed=seed)
    got = M.score(y, pred)
    assert math.isclose(got["mae"], sk.mean_absolute_error(y, pred), rel_tol=1e-12)
    assert math.isclose(got["rmse"], math.sqrt(sk.mean_squared_error(y, pred)), rel_tol=1e-12)
    assert math.isclose(got["r2"], sk.r2_score(y, pred), rel_tol=1e-10)
    mae, rmse, r2 = river_metrics.MAE(), river_metrics.RMSE(), river_metrics.R2()
    for t, p in zip(y.tolist(), pred.tolist(), strict=True):
        for m in (mae, rmse, r2):
            m.update(t, p)
    assert math.isclose(got["mae"], mae.get(), rel_tol=1e-10)
    assert math.isclose(got["rmse"], rmse.get(), rel_tol=1e-10)
    assert math.isclose(got["r2"], r2.get(), rel_tol=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_interval_metrics_against_scikit_learn_pinball_loss(seed):
    """The paper's quantile loss is the two pinball losses of the bounds (at alpha/2 and
    1 - alpha/2, scikit-learn's mean_pinball_loss) plus alpha/2 times the mean width, over rho:
    pinball(l, a/2) + pinball(u, 1 - a/2) = (a/2)(u - l) + distance of y outside [l, u]."""
    alphas = (0.1, 0.3)
    y, pred, iv = data(seed=seed, alphas=alphas)
    got = M.score(y, pred, iv, alphas)
    rho = y.max() - y.min()
    for a, alpha in enumerate(alphas):
        lo, hi = iv[:, a, 0], iv[:, a, 1]
        lvl = got["intervals"][f"{alpha:g}"]
        outside = (y < lo) | (y > hi)
        assert lvl["mer"] == outside.mean() and lvl["coverage"] == 1 - outside.mean()
        assert lvl["below"] == (y < lo).mean()
        assert math.isclose(lvl["mpiw"], np.mean(hi - lo), rel_tol=1e-12)
        assert math.isclose(lvl["ris"], np.mean(hi - lo) / rho, rel_tol=1e-12)
        pinball = sk.mean_pinball_loss(y, lo, alpha=alpha / 2)
        pinball += sk.mean_pinball_loss(y, hi, alpha=1 - alpha / 2)
        expected = (pinball + alpha / 2 * np.mean(hi - lo)) / rho
        assert math.isclose(lvl["quantile_loss"], expected, rel_tol=1e-10)


def river_rolling(metric, window):
    try:  # River >= 0.24 takes the class; earlier versions an instance
        return river_utils.Rolling(metric, window_size=window)
    except TypeError:
        return river_utils.Rolling(metric(), window_size=window)


def test_windowed_metrics_equal_river_rolling_metrics():
    """Sliding windows (step 1) of the evaluator's blocks equal River's Rolling metrics."""
    y, pred, iv = data(n=600, seed=4, alphas=(0.2,))
    window = 50
    blocks = np.zeros((len(y), M.n_columns(1)))
    lo = np.ascontiguousarray(iv[:, :, 0])
    hi = np.ascontiguousarray(iv[:, :, 1])
    _core.metrics.accumulate(y, pred, lo, hi, 0, 1, blocks, M.new_carry())
    result = PrequentialResult(model="m", stream="s", alphas=(0.2,), blocks=blocks, step=1,
                               window=window, ris_range="stream", timing={},
                               change_points=[])  # fmt: skip
    w = result.windows()
    mae = river_rolling(river_metrics.MAE, window)
    rmse = river_rolling(river_metrics.RMSE, window)
    expected_mae, expected_rmse = [], []
    for i, (t, p) in enumerate(zip(y.tolist(), pred.tolist(), strict=True)):
        mae.update(t, p)
        rmse.update(t, p)
        if i + 1 >= window:
            expected_mae.append(mae.get())
            expected_rmse.append(rmse.get())
    assert w["end"].tolist() == list(range(window, len(y) + 1))
    np.testing.assert_allclose(w["mae"], expected_mae, rtol=1e-9)
    np.testing.assert_allclose(w["rmse"], expected_rmse, rtol=1e-9)
    # and the windows' MER is the fraction outside in each window
    outside = ((y < iv[:, 0, 0]) | (y > iv[:, 0, 1])).astype(float)
    rolling = np.convolve(outside, np.ones(window), "valid") / window
    np.testing.assert_allclose(w["intervals"]["0.2"]["mer"], rolling, rtol=1e-12)


def test_relative_errors_against_the_prequential_mean_baseline():
    """rmae and rrse compare with the mean of the targets seen before each row (0 before any),
    MOA's convention; scikit-learn's errors of that baseline give the denominators."""
    y, pred, _ = data(n=2000, seed=7)
    baseline = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, len(y))])
    got = M.score(y, pred)
    assert math.isclose(
        got["rmae"], sk.mean_absolute_error(y, pred) / sk.mean_absolute_error(y, baseline),
        rel_tol=1e-9,
    )  # fmt: skip
    assert math.isclose(
        got["rrse"],
        math.sqrt(sk.mean_squared_error(y, pred) / sk.mean_squared_error(y, baseline)),
        rel_tol=1e-9,
    )
