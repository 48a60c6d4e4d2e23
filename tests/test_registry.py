"""The model registry: names, parameter routing, defaults, and building."""

import inspect

import pytest

from streamforest import (
    AdaptiveConformal,
    ConformalQRF,
    CPExact,
    GaussianInterval,
    HoeffdingTreeRegressor,
    OnlineForestRegressor,
    OnlineQRF,
    registry,
)
from streamforest.registry import ModelSpec

ADAPTIVE = [
    "adaptive-qrf",
    "adaptive-normalized-cp",
    "adaptive-cp-approx",
    "adaptive-cp-exact",
    "adaptive-conformal-qrf",
    "adaptive-gaussian",
]
TODAY = [
    "qrf",
    "qrf-hdi",
    "normalized-cp",
    "cp-approx",
    "cp-exact",
    "conformal-qrf",
    "gaussian",
    *ADAPTIVE,
    "forest",
    "tree",
    "atser-seeds",
    "atser-obag",
    "atser-rforest",
    "atser",
    "aborf",
    "sgbt",
    "amf",
    "normalized-cp-amf",
    "adaptive-normalized-cp-amf",
    "normalized-cp-sgbt",
    "adaptive-normalized-cp-sgbt",
]


def test_names_and_aliases():
    assert registry.names(task="regression") == TODAY  # the command line's names, in its order
    assert registry.DEFAULT == "normalized-cp-sgbt"
    assert registry.get("cqr") is registry.get("conformal-qrf")
    assert "cqr" in registry.names(aliases=True)
    assert registry.tasks() == ["regression", "classification"]
    with pytest.raises(ValueError, match="unknown model 'nope'; choose from qrf, "):
        registry.get("nope")


@pytest.mark.parametrize("name", TODAY + ["cqr", "adaptive-cqr"])
def test_every_entry_builds_its_class(name):
    spec = registry.get(name)
    m = registry.build(name, seed=7, n_jobs=2)
    assert type(m) is spec.cls
    if spec.layers[0] == "adaptive":  # the wrapper has no seed; its model has
        assert type(m.model) is spec.method_cls
        m = m.model
    assert m.seed == 7
    assert spec.task == "regression" and spec.description
    if "forest" in spec.layers:
        forest = m if spec.layers[0] == "forest" else m.forest
        assert type(forest) is spec.forest_cls
        assert forest.n_jobs == 2 and forest.seed == 7
        if "n_trees" in spec.parameters()["forest"]:  # (SGBT has boosting steps)
            assert forest.n_trees == 10
    for k, v in spec.fixed.items():
        assert getattr(m, k) == v


def test_parameters_are_the_signatures_defaults():
    p = registry.get("qrf-hdi").parameters()
    assert list(p) == ["method", "forest", "tree"]
    sig = inspect.signature(OnlineQRF.__init__).parameters
    assert p["method"]["k"] == sig["k"].default and "forest" not in p["method"]
    assert p["method"]["interval"] == "hdi"  # the entry's fixed value
    assert p["forest"]["n_trees"] == 10 and "tree" not in p["forest"]
    tree_sig = inspect.signature(HoeffdingTreeRegressor.__init__).parameters
    assert p["tree"] == {k: v.default for k, v in tree_sig.items() if k != "self"}
    assert list(registry.get("tree").parameters()) == ["tree"]
    assert list(registry.get("forest").parameters()) == ["forest", "tree"]


def test_routing_first_layer_wins_and_leftovers_fail():
    spec = registry.get("cp-exact")
    kw = spec.route({"calibration_size": 5, "max_features": 3, "grace_period": 9, "seed": 1})
    assert kw == {
        "method": {"calibration_size": 5, "seed": 1},
        "forest": {"max_features": 3},  # the forest's, not the tree template's
        "tree": {"grace_period": 9},
    }
    with pytest.raises(ValueError, match="model 'cp-exact' has no parameter 'c', 'd'"):
        spec.route({"c": 1, "d": 2, "n_trees": 3})
    m = spec.build({"calibration_size": 50, "n_trees": 4, "leaf_model": "mean"}, seed=3)
    assert isinstance(m, CPExact) and m.calibration_size == 50
    assert m.forest.n_trees == 4 and m.forest.tree.leaf_model == "mean" and m.forest.seed == 3
    assert registry.build("qrf").forest.tree is None  # no tree parameter: default template
    # a parameter overrides the entry's fixed value and the builder's defaults
    m = registry.build("qrf-hdi", {"interval": "equal_tailed", "n_jobs": 3, "seed": 5}, seed=1)
    assert m.interval == "equal_tailed" and m.forest.n_jobs == 3 and m.seed == 5


def test_a_new_model_is_one_entry():
    spec = ModelSpec(
        "qrf-paper",
        OnlineQRF,
        "OnlineQRF with the paper's merge",
        fixed={"weighting": "paper"},
        aliases=("qp",),
    )
    m = spec.build({"k": 64, "n_trees": 3, "grace_period": 20}, seed=2)
    assert isinstance(m, OnlineQRF) and m.weighting == "paper" and m.k == 64
    assert isinstance(m.forest, OnlineForestRegressor) and m.forest.n_trees == 3
    assert m.forest.tree.grace_period == 20
    with pytest.raises(ValueError, match="layers"):
        ModelSpec("x", OnlineQRF, "x", layers=("tree", "forest"))


def test_adaptive_entries_route_to_the_wrapper_then_its_model():
    spec = registry.get("adaptive-cp-exact")
    assert spec is registry.get("adaptive-cp-exact") and spec.cls is AdaptiveConformal
    assert list(spec.parameters()) == ["adaptive", "method", "forest", "tree"]
    assert "model" not in spec.parameters()["adaptive"]
    kw = spec.route({"gamma": 0.01, "method": "pid", "calibration_size": 50, "n_trees": 3})
    assert kw["adaptive"] == {"gamma": 0.01, "method": "pid"}
    assert kw["method"] == {"calibration_size": 50} and kw["forest"] == {"n_trees": 3}
    m = spec.build({"gamma": 0.01, "method": "pid", "calibration_size": 50}, seed=4)
    assert m.gamma == 0.01 and m.method == "pid"
    assert isinstance(m.model, CPExact) and m.model.calibration_size == 50
    assert m.model.seed == 4 and m.model.forest.seed == 4 and m.model.forest.n_trees == 10
    assert type(registry.build("adaptive-gaussian").model) is GaussianInterval
    assert registry.get("adaptive-cqr").method_cls is ConformalQRF
    with pytest.raises(ValueError, match="method_cls"):
        ModelSpec("x", AdaptiveConformal, "x", layers=registry.LAYERS)


@pytest.mark.parametrize("forest", ["amf", "sgbt"])
def test_a_method_over_a_forest_without_tree_template(forest, tmp_path):
    """``normalized-cp-amf`` (and over SGBT): the method and the forest are layers, the forest
    the last; the model is the one built by hand from the classes, bit for bit, and runs from
    the command line."""
    import numpy as np

    from streamforest import AMFRegressor, NormalizedConformal, SGBTRegressor, streams
    from streamforest.cli import main

    forest_cls = {"amf": AMFRegressor, "sgbt": SGBTRegressor}[forest]
    spec = registry.get(f"normalized-cp-{forest}")
    assert spec.layers == ("method", "forest") and spec.forest_cls is forest_cls
    params = {"calibration_size": 200, "step": 0.5} if forest == "amf" else {"n_steps": 5}
    kw = spec.route({**params, "seed": 4})
    assert kw["method"] == {
        k: v for k, v in {**params, "seed": 4}.items() if k != "step" and k != "n_steps"
    }
    built = spec.build(params, seed=4)
    forest_params = {k: v for k, v in params.items() if k in ("step", "n_steps")}
    by_hand = NormalizedConformal(
        forest_cls(**forest_params, seed=4), seed=4,
        **{k: v for k, v in params.items() if k == "calibration_size"},
    )  # fmt: skip

    def params_of(model):
        return {k: v for k, v in model.get_params(deep=True).items() if k != "forest"}

    assert params_of(built) == params_of(by_hand) and repr(built) == repr(by_hand)
    X, y = streams.Friedman(function=1, n=1500, seed=2).arrays()
    a = built.predict_learn_many(X, y, alpha=[0.1, 0.2])
    b = by_hand.predict_learn_many(X, y, alpha=[0.1, 0.2])
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    wrapped = registry.build(f"adaptive-normalized-cp-{forest}", {"gamma": 0.01, **params}, seed=4)
    assert wrapped.gamma == 0.01 and type(wrapped.model.forest) is forest_cls
    out = tmp_path / "run"
    argv = ["run", "--model", f"normalized-cp-{forest}", "--n", "1500", "--no-plot", "--quiet",
            "--out", str(out)]  # fmt: skip
    for key, value in params.items():
        argv += ["--param", f"{key}={value}"]
    assert main(argv) == 0
    assert np.isfinite(a[1][500:]).all()


def test_a_forest_layer_may_end_an_entry():
    from streamforest import AMFRegressor, NormalizedConformal

    ModelSpec("x", NormalizedConformal, "x", layers=("method", "forest"), forest_cls=AMFRegressor)
    with pytest.raises(ValueError, match="layers"):
        ModelSpec("x", NormalizedConformal, "x", layers=("method",))
