"""The compiled core's forest engine (``streamforest._core.engine``): bagging weights and the
aggregation of the trees' predictions, against their definitions."""

import numpy as np
import pytest

from streamforest import _core
from streamforest.rng import new_state

core = _core.engine


def _knuth(state, lam, n_rows, n_trees, w):
    """Online bagging's weights from the definition (SplitMix64 uniforms, Knuth's method)."""
    mask = (1 << 64) - 1
    z = int(state[0])

    def uniform():
        nonlocal z
        z = (z + 0x9E3779B97F4A7C15) & mask
        x = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        return ((x ^ (x >> 31)) >> 11) * (1.0 / 9007199254740992.0)

    out = np.zeros((n_trees, n_rows))
    for i in range(n_rows):
        for t in range(n_trees):
            if lam > 0:
                k, p = 0, uniform()
                while p > np.exp(-lam):
                    k += 1
                    p *= uniform()
                out[t, i] = k * w[i]
            else:
                out[t, i] = w[i]
    return out


@pytest.mark.parametrize("lam", [0.0, 1.0, 6.0])
def test_bagging_weights_are_online_bagging(lam):
    w = np.linspace(0.5, 2.0, 40)
    state = new_state(11)
    expected = _knuth(state.copy(), lam, 40, 5, w)
    out = np.zeros((5, 40))
    core.draw_weights(state, lam, w, out)
    np.testing.assert_array_equal(out, expected)
    assert state[0] != new_state(11)[0] or lam == 0.0  # the generator advanced


def test_bagging_weights_refuse_what_they_would_overrun():
    with pytest.raises(ValueError):
        core.draw_weights(new_state(0), 1.0, np.ones(10), np.zeros((3, 5)))
    with pytest.raises(TypeError):
        core.draw_weights(new_state(0), 1.0, np.ones(3), np.zeros((3, 5), np.float32))


def test_mean_columns_sums_trees_in_order():
    P = np.random.default_rng(0).standard_normal((7, 30)) * 1e8
    out = np.zeros(30)
    core.mean_columns(P, out)
    expected = np.zeros(30)
    for t in range(7):
        expected += P[t]
    np.testing.assert_array_equal(out, expected / 7)
