"""Metrics against hand computations, and the prequential evaluator against direct computation."""

import json
import math

import numpy as np
import pytest

from streamforest import (
    CPApproximate,
    HoeffdingTreeRegressor,
    OnlineForestRegressor,
    OnlineQRF,
    _core,
    metrics,
    streams,
)
from streamforest.evaluate import ArrayStream, prequential

Y = np.array([1.0, 3.0, 2.0, 6.0])
PRED = np.array([0.0, 3.0, 4.0, 5.0])
LO = np.array([[0.5], [4.0], [1.0], [-np.inf]])
HI = np.array([[1.5], [5.0], [3.0], [np.inf]])


def _run(step, running=False):
    blocks = np.zeros((-(-4 // step), metrics.n_columns(1)))
    carry = metrics.new_carry()
    accumulate = _core.metrics.accumulate
    accumulate(Y[:3], PRED[:3], LO[:3], HI[:3], 0, step, blocks, carry)  # two calls: state
    accumulate(Y[3:], PRED[3:], LO[3:], HI[3:], 3, step, blocks, carry)  # carries over
    return metrics.summarize(metrics.merge(blocks), [0.1], 5.0, running)


@pytest.mark.parametrize("step", [1, 2, 3, 4])
def test_metrics_equal_hand_computation(step):
    m = _run(step)
    iv = m["intervals"]["0.1"]
    # y=3 is below [4, 5] by 1; the infinite interval counts as width rho = 6 - 1 = 5
    assert iv["mer"] == 0.25 and iv["below"] == 0.25 and iv["coverage"] == 0.75
    assert iv["mpiw"] == pytest.approx((1 + 1 + 2 + 5) / 4)
    assert iv["ris"] == pytest.approx(9 / 4 / 5) and iv["nmpiw"] == iv["ris"]
    assert iv["quantile_loss"] == pytest.approx(0.1 * 0.45 + (1 / 5) / 4)
    # MER 0.25 = alpha + 1.5 alpha: three half-lives
    assert iv["utility"] == pytest.approx(0.55 / 8)
    assert iv["n_infinite"] == 1
    assert m["mae"] == 1.0 and m["rmse"] == pytest.approx(math.sqrt(1.5))
    # prequential mean baseline predicts 0, 1, 2, 2
    assert m["rmae"] == pytest.approx(4 / 7) and m["rrse"] == pytest.approx(math.sqrt(6 / 21))
    assert m["r2"] == pytest.approx(1 - 6 / 14)


def test_score_of_whole_arrays_equals_blocks():
    iv = np.stack([LO, HI], axis=-1)  # (4, 1, 2)
    assert metrics.score(Y, PRED, iv, [0.1]) == _run(4)
    assert metrics.score(Y, PRED, iv[:, 0, :], 0.1) == _run(4)
    with pytest.raises(ValueError, match="shapes do not match"):
        metrics.score(Y, PRED, iv, [0.1, 0.2])


def test_running_range_ris():
    # running ranges 0, 2, 2, 5: widths 1 (range 0 -> 1), 1/2, 2/2, inf (-> 1)
    assert _run(2, running=True)["intervals"]["0.1"]["ris"] == pytest.approx(3.5 / 4)


def test_utility_halves_at_one_and_a_half_alpha():
    for alpha in (0.3, 0.1, 0.05, 0.01):
        full = metrics.utility(alpha, 0.2, alpha)
        assert full == pytest.approx(0.8)
        assert metrics.utility(1.5 * alpha, 0.2, alpha) == pytest.approx(full / 2)
        assert metrics.utility(2.0 * alpha, 0.2, alpha) == pytest.approx(full / 4)
        assert metrics.utility(0.5 * alpha, 0.2, alpha) == full  # conservative: no penalty
    assert metrics.utility(0.0, 1.2, 0.1) == 0.0


def _direct(y, pred, iv, alpha_index=0):
    lo, hi = iv[:, alpha_index, 0], iv[:, alpha_index, 1]
    rho = y.max() - y.min()
    width = np.where(np.isfinite(hi - lo), hi - lo, rho)
    return {
        "mer": np.mean((y < lo) | (y > hi)),
        "ris": np.mean(width) / rho,
        "mae": np.mean(np.abs(y - pred)),
    }


def test_prequential_is_test_then_train_and_chunking_free():
    stream = streams.Friedman(1, "gra", n=12_000, seed=3)
    X, y = stream.arrays()
    make = lambda: CPApproximate(forest=OnlineForestRegressor(n_trees=4, seed=1), seed=1)  # noqa: E731
    pred, iv = make().predict_learn_many(X, y, alpha=[0.1, 0.3])
    ref = [_direct(y, pred, iv, a) for a in (0, 1)]
    results = [
        prequential(make(), stream, alphas=[0.1, 0.3], chunk_size=c, window=1000)
        for c in (777, 10_000)
    ]
    for r in results:
        assert r.n == 12_000
        assert r.totals["mae"] == pytest.approx(ref[0]["mae"], rel=1e-12)
        for a, lvl in enumerate(("0.1", "0.3")):
            assert r.totals["intervals"][lvl]["mer"] == pytest.approx(ref[a]["mer"], abs=1e-15)
            assert r.totals["intervals"][lvl]["ris"] == pytest.approx(ref[a]["ris"], rel=1e-12)
    assert results[0].totals["intervals"] == results[1].totals["intervals"]
    assert r.change_points == [6000, 9000]


def test_windows_tumbling_and_sliding():
    stream = streams.Friedman(1, None, n=5_500, seed=4)
    X, y = stream.arrays()
    pred, iv = OnlineQRF(seed=2).predict_learn_many(X, y, alpha=[0.1])
    tum = prequential(OnlineQRF(seed=2), stream, alphas=0.1, window=1000).windows()
    assert list(tum["end"]) == [1000, 2000, 3000, 4000, 5000]  # the partial last one is left out
    for k, e in enumerate(tum["end"]):
        d = _direct(y[e - 1000 : e], pred[e - 1000 : e], iv[e - 1000 : e])
        assert tum["intervals"]["0.1"]["mer"][k] == pytest.approx(d["mer"], abs=1e-15)
        assert tum["mae"][k] == pytest.approx(d["mae"], rel=1e-12)
    sl = prequential(OnlineQRF(seed=2), stream, alphas=0.1, window=1000, step=250).windows()
    assert list(sl["end"]) == list(range(1000, 5501, 250))
    for k, e in enumerate(sl["end"]):
        assert sl["n"][k] == 1000
        d = _direct(y[e - 1000 : e], pred[e - 1000 : e], iv[e - 1000 : e])
        assert sl["intervals"]["0.1"]["mer"][k] == pytest.approx(d["mer"], abs=1e-15)
        assert sl["mae"][k] == pytest.approx(d["mae"], rel=1e-12)


def test_river_loop_matches_the_compiled_pass():
    pytest.importorskip("river")
    from streamforest.river import RiverRegressor

    X, y = streams.Friedman(1, "lea", n=3000, seed=5).arrays()
    X = X[:, :6]  # names f0..f5 sort in column order, so dict and array inputs agree
    stream = ArrayStream(X, y, feature_names=[f"f{j}" for j in range(6)])
    ours = prequential(HoeffdingTreeRegressor(seed=0), stream, window=500)
    via_river = prequential(RiverRegressor(HoeffdingTreeRegressor(seed=0)), stream, window=500)
    assert via_river.totals["mae"] == pytest.approx(ours.totals["mae"], rel=1e-12)
    assert np.allclose(via_river.windows()["rmse"], ours.windows()["rmse"], rtol=1e-12)
    assert "intervals" not in ours.totals


def test_river_interval_level_is_checked():
    pytest.importorskip("river")
    from river import conf, linear_model

    model = conf.RegressionJackknife(linear_model.LinearRegression(), confidence_level=0.9)
    stream = streams.Friedman(1, None, n=400, seed=1)
    with pytest.raises(ValueError, match="alphas=0.1"):
        prequential(model, stream, alphas=0.05)
    r = prequential(model, stream, alphas=0.1, window=100)
    # its interval was used: the jackknife is near its level even with a linear model
    assert abs(r.totals["intervals"]["0.1"]["mer"] - 0.1) < 3 * math.sqrt(0.09 / 400) + 0.01


def test_nominal_stream_is_learnt():
    r = prequential(OnlineForestRegressor(n_trees=5, seed=0), streams.MV(n=20_000, seed=0))
    # far better than the prequential mean predictor on mv's piecewise target
    assert r.totals["rmae"] < 0.35


def test_json_and_bad_arguments(tmp_path):
    stream = streams.Friedman(1, None, n=2_000, seed=1)
    r = prequential(CPApproximate(forest=OnlineForestRegressor(n_trees=3)), stream, alphas=[0.1])
    r.save_json(tmp_path / "r.json")
    d = json.loads((tmp_path / "r.json").read_text())
    for key in ("mae", "rmse", "n", "seconds", "examples_per_second"):
        assert key in d
    for key in ("mer", "ris", "utility"):
        assert key in d["intervals"]["0.1"]
    assert len(d["windows"]["end"]) == 2
    assert "MER" in r.table()
    with pytest.raises(ValueError, match="unbounded"):
        prequential(HoeffdingTreeRegressor(), streams.Friedman(1, None, n=None))
    with pytest.raises(ValueError, match="multiple of step"):
        prequential(HoeffdingTreeRegressor(), stream, window=1000, step=300)
    with pytest.raises(ValueError, match="ris_range"):
        prequential(HoeffdingTreeRegressor(), stream, ris_range="global")
    with pytest.raises(TypeError, match="cannot evaluate"):
        prequential(object(), stream)
    with pytest.raises(ValueError, match="alpha"):
        prequential(OnlineQRF(), stream, alphas=1.5)


def test_array_stream_lives_in_streams():
    import streamforest.evaluate as E
    from streamforest.streams.arrays import ArrayStream as Arrays

    assert streams.ArrayStream is Arrays is ArrayStream is E.ArrayStream
    assert "ArrayStream" in streams.__all__ and "ArrayStream" in E.__all__
    s = streams.ArrayStream(np.arange(10.0).reshape(5, 2), np.arange(5.0), feature_names=["a", "b"])
    assert [len(y) for _, y in s.chunks(2)] == [2, 2, 1] and s.feature_names == ["a", "b"]
    assert next(iter(s)) == ({"a": 0.0, "b": 1.0}, 0.0)
