"""The River adapter passes River's own estimator checks and plugs into its evaluation."""

import pytest

river = pytest.importorskip("river")
pytest.importorskip("sklearn")  # river.checks builds its datasets with scikit-learn

from river import checks, datasets, dummy, evaluate, metrics, preprocessing, stats  # noqa: E402

from streamforest import HoeffdingTreeRegressor  # noqa: E402
from streamforest.river import RiverRegressor  # noqa: E402


@pytest.mark.parametrize(
    "params", list(RiverRegressor._unit_test_params()), ids=["qo-mean", "ebst-linear"]
)
def test_check_estimator(params):
    checks.check_estimator(RiverRegressor(**params))


def test_progressive_val_score_and_pipeline():
    model = preprocessing.StandardScaler() | RiverRegressor(
        HoeffdingTreeRegressor(grace_period=50, leaf_model="mean", seed=0)
    )
    score = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    baseline = evaluate.progressive_val_score(
        datasets.TrumpApproval(), dummy.StatisticRegressor(stats.Mean()), metrics.MAE()
    )
    assert score.get() < baseline.get()


def test_forest_and_interval_methods_in_river():
    from streamforest import CPApproximate, OnlineForestRegressor, OnlineQRF

    baseline = evaluate.progressive_val_score(
        datasets.TrumpApproval(), dummy.StatisticRegressor(stats.Mean()), metrics.MAE()
    ).get()
    small = OnlineForestRegressor(n_trees=3, tree=HoeffdingTreeRegressor(grace_period=50))
    for m in (small, CPApproximate(forest=small, seed=1), OnlineQRF(forest=small, seed=1)):
        model = preprocessing.StandardScaler() | RiverRegressor(m)
        score = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
        assert score.get() < baseline
    # the wrapped interval model keeps giving intervals
    lo, hi = m.predict_interval_one({"ordinal_date": 0.1}, alpha=0.1)
    assert lo < hi
    checks.check_estimator(RiverRegressor(CPApproximate(forest=small, seed=1)))
