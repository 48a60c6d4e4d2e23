"""Argument validation names the argument, and a rejected call leaves the model as it was
(issue: weak validation)."""

import pickle

import numpy as np
import pytest

import streamforest as sf

from .conftest import friedman1


def _models():
    return [
        sf.HoeffdingTreeRegressor(seed=0),
        sf.OnlineForestRegressor(n_trees=3, seed=0),
        sf.CPApproximate(forest=sf.OnlineForestRegressor(n_trees=3), seed=0),
        sf.OnlineQRF(forest=sf.OnlineForestRegressor(n_trees=3), k=32, seed=0),
    ]


@pytest.mark.parametrize("model", _models(), ids=lambda m: type(m).__name__)
def test_bad_batches_and_weights_are_named_and_change_nothing(model, rng):
    X, y = friedman1(300, rng)
    model.learn_many(X, y)
    before = pickle.dumps(model)
    with pytest.raises(TypeError, match="X must be a 2-d array"):
        model.learn_many(None, y)
    with pytest.raises(TypeError, match="y is required"):
        model.learn_many(X, None)
    with pytest.raises(TypeError, match="y must be numeric"):
        model.learn_many(X[:2], ["1.0", "2.0"])
    x = {j: float(v) for j, v in enumerate(X[0])}
    for w in ("2", b"2"):
        with pytest.raises(TypeError, match="sample weight w must be numeric"):
            model.learn_one(x, 1.0, w=w)
    with pytest.raises(TypeError, match="sample weight"):
        model.learn_many(X[:3], y[:3], w=["1", "1", "1"])
    for w in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="sample weights w must be finite and >= 0"):
            model.learn_one(x, 1.0, w=w)
    assert pickle.dumps(model) == before
    model.learn_one(x, 1.0, w=2)  # a number is fine
    assert np.isfinite(model.predict(X[:5])).all()
