"""The forest interface (streamforest.engine.forest_interface): every forest an interval method
takes is a RegressionForest with its capabilities; a method refuses a forest that lacks one it
needs with a TypeError naming the method, the capability and the forest; files saved before the
interface load and answer as they did."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import streamforest as sf
from streamforest import streams
from streamforest.engine import forest_interface
from streamforest.engine.forest_interface import (
    CAPABILITIES,
    LEAF_PAYLOADS,
    TREE_MEMBERS,
    TREE_SETTINGS,
    TREE_SHARDS,
    RegressionForest,
)

DATA = Path(__file__).parent / "data"
ALL = {LEAF_PAYLOADS, TREE_SETTINGS, TREE_MEMBERS, TREE_SHARDS}


def _stream(n=300):
    return streams.Friedman(function=1, n=n, seed=3).arrays()


def test_every_forest_is_a_regression_forest_with_its_capabilities():
    assert sf.OnlineForestRegressor.forest_capabilities == ALL
    for cls in (sf.ABORFRegressor, sf.ATSEREnsembleRegressor):  # (not checked sharded yet)
        assert issubclass(cls, sf.OnlineForestRegressor)
        assert cls.forest_capabilities == ALL - {TREE_SHARDS}
    assert issubclass(sf.AMFRegressor, RegressionForest)
    assert sf.AMFRegressor.forest_capabilities == {TREE_MEMBERS}
    assert issubclass(sf.SGBTRegressor, RegressionForest)
    assert sf.SGBTRegressor.forest_capabilities == frozenset()
    # they implement the interface; they do not inherit the Hoeffding forest's members
    for cls in (sf.AMFRegressor, sf.SGBTRegressor):
        assert not issubclass(cls, sf.OnlineForestRegressor)
    amf = sf.AMFRegressor()
    for name in ("trees_", "params_", "tree_specs"):
        assert not hasattr(amf, name)  # (a raising property made hasattr itself raise)
    every = set().union(*(c.forest_capabilities for c in RegressionForest.__subclasses__()))
    assert every <= set(CAPABILITIES)


@pytest.mark.parametrize("method", ["OnlineQRF", "ConformalQRF", "GaussianInterval", "CPExact"])
def test_a_method_names_the_capability_a_forest_lacks(method):
    X, y = _stream()
    model = getattr(sf, method)(sf.AMFRegressor(n_trees=2), seed=1)
    with pytest.raises(TypeError) as info:
        model.learn_many(X, y)
    msg = str(info.value)
    assert msg.startswith(f"{method} needs the forest capability 'leaf_payloads'")
    assert "AMFRegressor lacks it" in msg
    assert "_forest" not in model.__dict__  # refused before anything was built
    with pytest.raises(TypeError, match=f"{method} needs .*'leaf_payloads'.*SGBTRegressor"):
        getattr(sf, method)(sf.SGBTRegressor(n_steps=2), seed=1).learn_one({"a": 1.0}, 1.0)


def test_methods_check_only_what_they_need():
    X, y = _stream()
    with pytest.raises(TypeError, match="CPApproximate needs .*'tree_members'.*SGBTRegressor"):
        sf.CPApproximate(sf.SGBTRegressor(n_steps=2)).learn_many(X, y)
    sf.CPApproximate(sf.AMFRegressor(n_trees=2, lambda_value=1.0)).learn_many(X, y)
    with pytest.raises(TypeError, match="NormalizedConformal needs .*'tree_members'.*SGBT"):
        sf.NormalizedConformal(sf.SGBTRegressor(n_steps=2), normalize="trees").learn_many(X, y)
    sf.NormalizedConformal(sf.SGBTRegressor(n_steps=2)).learn_many(X, y)  # residuals: no need
    sf.NormalizedConformal(sf.AMFRegressor(n_trees=2), normalize="trees").learn_many(X, y)
    with pytest.raises(TypeError, match="forest must be a regression forest"):
        sf.OnlineQRF(sf.HoeffdingTreeRegressor()).learn_many(X, y)


def test_members_of_a_missing_capability_raise_its_error():
    for forest in (sf.AMFRegressor(), sf.SGBTRegressor()):
        name = type(forest).__name__
        with pytest.raises(TypeError, match=f"configure_trees.*'tree_settings'.*{name} lacks"):
            forest.configure_trees(leaf_quantile_k=50)
    with pytest.raises(TypeError, match="tree_template.*'tree_settings'.*AMFRegressor"):
        sf.AMFRegressor().tree_template()
    assert isinstance(sf.SGBTRegressor().tree_template(), sf.HoeffdingTreeRegressor)
    with pytest.raises(TypeError, match="n_trees.*'tree_members'.*not a bagged forest"):
        _ = sf.SGBTRegressor().n_trees
    assert forest_interface.has(sf.AMFRegressor, TREE_MEMBERS)
    assert not forest_interface.has(sf.AMFRegressor(), LEAF_PAYLOADS)


def test_the_interface_members_work_on_every_forest():
    X, y = _stream(400)
    for forest in (sf.OnlineForestRegressor(n_trees=3, seed=1), sf.AMFRegressor(n_trees=3, seed=1),
                   sf.SGBTRegressor(n_steps=3, seed=1)):  # fmt: skip
        assert forest.drift_stats_["drifts"] == 0 and forest.n_resets == 0
        forest.learn_many(X, y)
        P = forest.tree_predictions(X[:20])
        assert P.shape == (20, forest.member_count())
        one = forest.encode_one({"x1": 0.5}, learn=False)
        assert one.shape == (1, forest.n_features_in_)
        if type(forest) is not sf.SGBTRegressor:  # (a boosted model sums its steps)
            np.testing.assert_allclose(P.mean(axis=1), forest.predict(X[:20]), rtol=1e-12)


@pytest.mark.parametrize("name", ["normalized_amf", "normalized_sgbt"])
def test_files_saved_before_the_interface_load_and_answer_as_saved(name):
    """NormalizedConformal over AMF and over SGBT, saved when both forests subclassed
    OnlineForestRegressor (a7c30c9; the first 400 rows of Friedman #1, n=600, seed=0): they load,
    give the saved intervals bit for bit, and learn on as a model trained now does."""
    model = sf.load(DATA / f"{name}_pre_interface.sfm")
    X, y = streams.Friedman(function=1, n=600, seed=0).arrays()
    saved = np.load(DATA / f"{name}_pre_interface.npy", allow_pickle=False)
    assert model.predict_interval(X[400:], alpha=0.1).tobytes() == saved.tobytes()
    fresh = model.clone()
    fresh.learn_many(X[:400], y[:400])
    for m in (model, fresh):
        m.learn_many(X[400:550], y[400:550])
    a, b = model.predict_interval(X[550:], 0.1), fresh.predict_interval(X[550:], 0.1)
    assert a.tobytes() == b.tobytes()
    again = pickle.loads(pickle.dumps(model))
    assert again.predict_interval(X[550:], 0.1).tobytes() == a.tobytes()


# --- the distributed layer shards by capability ------------------------------------------------
def test_sharded_forest_takes_models_by_capability():
    from streamforest.distributed.workers import model_kind

    class MyForest(sf.OnlineForestRegressor):  # a subclass keeps its capabilities
        pass

    assert model_kind(sf.OnlineForestRegressor()) == "forest"
    assert model_kind(MyForest()) == "forest"
    assert model_kind(sf.OnlineQRF()) == "qrf"
    assert model_kind(sf.CPApproximate(MyForest(n_trees=4))) == "cp"
    refused = [
        (sf.CPExact(), "CPExact links calibration rows"),
        (sf.ConformalQRF(), "ConformalQRF .*conformal widening"),
        (sf.GaussianInterval(), "GaussianInterval"),
        (sf.AMFRegressor(), "ShardedForest needs .*'tree_shards'.*AMFRegressor lacks"),
        (sf.SGBTRegressor(), "ShardedForest needs .*'tree_shards'.*SGBTRegressor lacks"),
        (sf.ABORFRegressor(), "'tree_shards'.*ABORFRegressor lacks"),
        (
            sf.CPApproximate(sf.AMFRegressor(lambda_value=1.0)),
            r"ShardedForest\(CPApproximate\) needs .*'tree_shards'.*AMFRegressor",
        ),
        (sf.HoeffdingTreeRegressor(), "forest or an interval method .*HoeffdingTreeRegressor"),
    ]
    for model, message in refused:
        with pytest.raises(TypeError, match=message):
            model_kind(model)
