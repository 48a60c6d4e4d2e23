"""Read-only and strided inputs (a memory map, pandas' copy-on-write, a column slice ``Y[:, 0]``)
reach the compiled passes as C-contiguous writeable copies: the same results as fresh arrays,
and the caller's arrays untouched."""

import numpy as np

import streamforest


def _models():
    return [
        streamforest.OnlineForestRegressor(n_trees=2, seed=0),
        streamforest.CPApproximate(streamforest.OnlineForestRegressor(n_trees=2, seed=0), seed=0),
        streamforest.OnlineQRF(streamforest.OnlineForestRegressor(n_trees=2, seed=0), seed=0),
    ]


def _run(X, y, w, alphas):
    out = []
    for m in _models():
        for a in range(0, 900, 300):
            m.learn_many(X[a : a + 300], y[a : a + 300], w[a : a + 300])
            out.append(m.predict(X[:10]))
            if hasattr(m, "predict_interval"):
                out.append(m.predict_interval(X[:10], alpha=alphas))
    return out


def test_read_only_and_strided_inputs_give_the_results_of_fresh_arrays():
    rng = np.random.default_rng(4)
    X = rng.random((900, 5))
    Y = np.column_stack([X @ np.arange(5.0), X[:, 0]])
    W = np.column_stack([np.ones(900), rng.random(900) + 0.5])
    alphas = np.array([0.1, 0.2])
    expected = _run(X.copy(), Y[:, 0].copy(), W[:, 1].copy(), alphas.copy())
    ro, ro_alphas = X.copy(), alphas.copy()
    ro.flags.writeable = False
    ro_alphas.flags.writeable = False
    before = (ro.copy(), Y.copy(), W.copy())
    got = _run(ro, Y[:, 0], W[:, 1], ro_alphas)  # read-only, and column slices (strided)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ro, before[0])
    np.testing.assert_array_equal(Y, before[1])
    np.testing.assert_array_equal(W, before[2])
