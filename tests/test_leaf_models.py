"""The linear leaf model (trees/leaf_models.py): its learnt function does not move when the leaf's
target spread does, so heavily weighted, young leaves stay within the target's range."""

from __future__ import annotations

import numpy as np
import pytest

import streamforest as sf
from streamforest import streams
from streamforest.tree_kinds import state


def test_the_learnt_function_stays_when_the_spread_moves():
    """The model is stored in units of the leaf's target spread (``y = mean + sd * z``).  A
    heavy example on which the model makes no error (``x`` at the features' means, ``y`` its own
    prediction: the gradient is 0) shrinks the spread but must not change ``sd * coef``; before
    the fix the coefficients kept their values and the function shrank with the spread."""
    X, y = streams.Friedman(function=1, n=3000, seed=0).arrays()
    model = sf.HoeffdingTreeRegressor(leaf_model="linear", grace_period=10**6, seed=0)
    model.learn_many(X, y)
    st = model.state_
    leaf = int(st.nd_leaf[0])
    assert st.nd_feat[0] < 0  # still a single leaf

    def spread():
        w, m2 = st.lf_stat[leaf, state.S_W], st.lf_stat[leaf, state.S_M2]
        return np.sqrt(m2 / w)

    x = st.lf_x[leaf, : X.shape[1], state.S_HI] + st.lf_x[leaf, : X.shape[1], state.S_LO]
    p = float(model.predict(x.reshape(1, -1))[0])
    sd0, scaled0 = spread(), spread() * st.lf_coef[leaf, : X.shape[1] + 1].copy()
    model.learn_many(
        x.reshape(1, -1), [p], w=[1000.0]
    )  # a third of the leaf's weight: the spread shrinks
    st = model.state_
    sd1, scaled1 = spread(), spread() * st.lf_coef[leaf, : X.shape[1] + 1]
    assert sd1 / sd0 < 0.95
    np.testing.assert_allclose(scaled1, scaled0, rtol=1e-7, atol=1e-9 * sd0)


@pytest.mark.parametrize("cls", [sf.HoeffdingTreeRegressor, sf.ATSERRegressor])
def test_heavy_sample_weights_do_not_blow_up_linear_leaves(cls):
    """With weight 3 a split side can hold two examples and a fifth of its parent's spread; its
    spread then grows to the parent's as examples arrive.  The Hoeffding tree had 5 errors
    above 30 (up to 68) in these 300k rows, where the target spans about 36 and the noise sd
    is 1."""
    X, y = streams.Friedman(function=1, n=300_000, seed=3).arrays()
    model = cls(leaf_model="linear", seed=1)
    e = np.abs(model.predict_learn_many(X, y, w=np.full(len(y), 3.0)) - y)
    assert e.max() < 30.0
    assert e[-50_000:].mean() < 1.5  # and it learns: a mean leaf's error here is about 1.9


@pytest.mark.parametrize("leaf_model", ["linear", "adaptive"])
def test_feature_statistics_are_exactly_the_welford_folds_of_the_values(leaf_model):
    """A leaf's normaliser (``lf_x``) holds, for each numeric feature, exactly (bit for bit) the
    statistic :func:`~streamforest.stats.welford_update` gives folded over the feature's
    non-missing values and their weights: features whose values go missing on different rows
    have different weights, which the update must not mix up (it divides once per distinct
    weight); a nominal feature has none."""
    from streamforest._core.common import stats_of

    rng = np.random.default_rng(3)
    n, p = 1500, 5
    X = rng.normal(size=(n, p)) * [1.0, 1e3, 1e-3, 1.0, 1.0] + [0.0, 1e6, 0.0, 5.0, 0.0]
    X[:, 3] = rng.integers(0, 4, n)  # nominal
    X[rng.random((n, p)) < [0.0, 0.1, 0.3, 0.05, 0.0]] = np.nan
    X[:200, 4] = np.nan  # a feature whose first values come late
    y = X[:, 0] + 1e-3 * np.nan_to_num(X[:, 1] - 1e6) + rng.normal(size=n)
    w = rng.choice([0.0, 1.0, 2.0, 0.5], size=n)
    model = sf.HoeffdingTreeRegressor(
        leaf_model=leaf_model, grace_period=10**6, nominal_features=(3,), seed=0
    )
    model.learn_many(X, y, w=w)
    st = model.state_
    leaf = int(st.nd_leaf[0])
    assert st.nd_feat[0] < 0  # a single leaf: it learnt every row
    for j in range(p):
        got = tuple(float(v) for v in st.lf_x[leaf, j])
        if j == 3:
            assert got == (0.0, 0.0, 0.0, 0.0)
            continue
        ok = ~np.isnan(X[:, j]) & (w > 0)
        assert got == stats_of(X[ok, j], w[ok]), j
