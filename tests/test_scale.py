"""Numbers that survive scale (issue #33): a target offset, a constant target, a huge feature.

- ``y = c + f(x) + noise`` for ``c`` in {1e6, 1e15}: every regressor's MAE and median interval
  width after 2,500 rows within 2% of those at ``c = 0``.  At ``c = 1e15`` the targets
  themselves are rounded to multiples of 0.125 (the spacing of doubles there), so the model at
  ``c`` is compared with one learning the same rounded targets less ``c`` (exact differences),
  allowing the rounding of its results (half a spacing for a centre, two for a width).
- A constant target is predicted exactly.
- One row with a feature at 1e300 (per example or in a batch) leaves every later prediction
  finite, and the model about as good as without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from streamforest import ABORFRegressor, registry

# every registered regressor, and ABORF with its Bayesian leaves (not a registry entry)
VARIANTS = {"aborf-bayesian": lambda: ABORFRegressor(leaf_model="bayesian", seed=0)}
NAMES = [*registry.names(task="regression"), *VARIANTS]
N, N_TEST = 2500, 1000


def _build(name):
    return VARIANTS[name]() if name in VARIANTS else registry.build(name, seed=0)


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((N + N_TEST, 4))
    return X, X @ [3.0, -2.0, 1.0, 0.0] + rng.normal(0, 0.1, N + N_TEST)


def _fit(name, X, y):
    """``(predictions, median width or None)`` on the test rows after learning the others."""
    model = _build(name)
    model.learn_many(X[:N], y[:N])
    pred = model.predict(X[N:])
    width = None
    if hasattr(model, "predict_interval"):
        iv = model.predict_interval(X[N:], alpha=0.1)
        width = float(np.median(iv[:, 1] - iv[:, 0]))
    return pred, width


@pytest.mark.parametrize("c", [1e6, 1e15])
@pytest.mark.parametrize("name", NAMES)
def test_an_offset_changes_no_error_or_width(name, c):
    X, f = _data()
    y = c + f
    spacing = np.spacing(c)
    base = y - c  # the same rounded targets, less c (exact)
    p0, w0 = _fit(name, X, base)
    pc, wc = _fit(name, X, y)
    mae0 = np.mean(np.abs(p0 - base[N:]))
    maec = np.mean(np.abs((pc - c) - base[N:]))
    assert np.isfinite(pc).all()
    assert abs(maec - mae0) <= 0.02 * mae0 + spacing / 2, (mae0, maec)
    if w0 is not None:
        assert abs(wc - w0) <= 0.02 * w0 + 2 * spacing, (w0, wc)


@pytest.mark.parametrize("name", NAMES)
def test_a_constant_target_is_predicted_exactly(name):
    X, _ = _data(1)
    pred, width = _fit(name, X, np.full(X.shape[0], 7.25))
    assert np.all(pred == 7.25), (pred.min(), pred.max())
    if width is not None:
        assert 0.0 <= width < 1e-9


@pytest.mark.parametrize("batch", [False, True], ids=["per-example", "batch"])
@pytest.mark.parametrize(
    "name",
    ["normalized-cp", "tree", "forest", "aborf", "aborf-bayesian", "atser", "qrf", "cp-approx"],
)
def test_a_feature_at_1e300_leaves_no_nan_prediction(name, batch):
    X, y = _data(2)
    clean = _build(name)
    model = _build(name)
    for m in (clean, model):
        m.learn_many(X[:1000], y[:1000])
    bad = X[1000].copy()
    bad[0] = 1e300
    if batch:
        model.learn_many(bad[None, :], y[1000:1001])
    else:
        model.learn_one(dict(enumerate(bad)), float(y[1000]))
    clean.learn_many(X[1000:1001], y[1000:1001])
    for m in (clean, model):  # more rows, both ways
        m.learn_many(X[1001:2000], y[1001:2000])
        for i in range(2000, 2100):
            m.learn_one(dict(enumerate(X[i])), float(y[i]))
    pred = model.predict(X[2100:])
    assert np.isfinite(pred).all(), np.mean(~np.isfinite(pred))
    ones = [model.predict_one(dict(enumerate(r))) for r in X[2100:2150]]
    assert np.isfinite(ones).all()
    if hasattr(model, "predict_interval"):
        assert not np.isnan(model.predict_interval(X[2100:], alpha=0.1)).any()
    mae = np.mean(np.abs(pred - y[2100:]))
    mae_clean = np.mean(np.abs(clean.predict(X[2100:]) - y[2100:]))
    assert mae <= 1.5 * mae_clean + 0.05, (mae, mae_clean)
