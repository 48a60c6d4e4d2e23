"""River's interval convention: ``predict_one(x, with_interval=True)`` gives a
``river.conf.Interval`` at the adapter's ``confidence_level``."""

import pytest

river = pytest.importorskip("river")
pytest.importorskip("sklearn")  # river.checks builds its datasets with scikit-learn

from river import checks, conf, datasets, evaluate, metrics, preprocessing  # noqa: E402

import streamforest as sf  # noqa: E402
from streamforest.river import RiverRegressor  # noqa: E402


def small_forest():
    return sf.OnlineForestRegressor(
        n_trees=3, tree=sf.HoeffdingTreeRegressor(grace_period=50), seed=0
    )


def _learnt(model, n=300):
    ad = RiverRegressor(model)
    for x, y in datasets.TrumpApproval().take(n):
        ad.learn_one(x, y)
    return ad


@pytest.mark.parametrize(
    "make",
    [
        lambda: sf.CPApproximate(forest=small_forest(), calibration_size=100, seed=1),
        lambda: sf.OnlineQRF(forest=small_forest(), k=16, seed=1),
        lambda: sf.GaussianInterval(forest=small_forest(), seed=1),
    ],
    ids=["CPApproximate", "OnlineQRF", "GaussianInterval"],
)
def test_interval_is_the_models(make):
    ad = _learnt(make())
    assert ad.confidence_level == 0.9
    for x, _ in datasets.TrumpApproval().take(20):
        iv = ad.predict_one(x, with_interval=True)
        assert isinstance(iv, conf.Interval)
        assert (iv.lower, iv.upper) == ad.model.predict_interval_one(x, alpha=0.1)
        assert iv.lower < iv.upper
        assert ad.predict_one(x) == ad.model.predict_one(x)  # the point prediction is unchanged
        ad.confidence_level = 0.5
        narrow = ad.predict_one(x, with_interval=True)
        assert (narrow.lower, narrow.upper) == ad.model.predict_interval_one(x, alpha=0.5)
        assert narrow.width <= iv.width
        ad.confidence_level = 0.9


def test_plain_model_has_no_interval():
    ad = _learnt(sf.HoeffdingTreeRegressor(grace_period=50), n=50)
    x = next(iter(datasets.TrumpApproval()))[0]
    with pytest.raises(TypeError, match="no prediction intervals"):
        ad.predict_one(x, with_interval=True)
    assert isinstance(ad.predict_one(x), float)


def test_bad_confidence_level():
    ad = _learnt(sf.GaussianInterval(forest=small_forest(), seed=1), n=50)
    x = next(iter(datasets.TrumpApproval()))[0]
    for cl in (0.0, 1.0, 1.5, "0.9"):
        ad.confidence_level = cl
        with pytest.raises(ValueError, match="confidence_level"):
            ad.predict_one(x, with_interval=True)


def test_progressive_val_score_and_river_checks():
    ad = RiverRegressor(sf.CPApproximate(forest=small_forest(), seed=1), confidence_level=0.8)
    model = preprocessing.StandardScaler() | ad
    score = evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())
    assert 0 < score.get() < 10
    # the interval survives River's pipeline: the last step gives it
    x = next(iter(datasets.TrumpApproval()))[0]
    iv = ad.predict_one(model["StandardScaler"].transform_one(x), with_interval=True)
    assert isinstance(iv, conf.Interval) and iv.lower < iv.upper
    clone = ad.clone()
    assert clone.confidence_level == 0.8
    checks.check_estimator(RiverRegressor(sf.GaussianInterval(forest=small_forest(), seed=1)))
