"""A tiny seeded random generator for compiled loops (SplitMix64).

Its whole state is one ``uint64`` in a numpy array, so models that use it pickle, clone and replay
bit-identically; numba's global ``np.random`` state could do none of that.
"""

from __future__ import annotations

import numpy as np

from .compiled import kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@kernel(inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective scramble of a uint64 (also used as a hash)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@kernel(inline="always")
def next_u64(state):
    """Advance ``state`` (a uint64 array of length >= 1) and return the next 64 random bits."""
    state[0] = state[0] + _GOLDEN
    return mix64(state[0])


@kernel(inline="always")
def next_float(state):
    """Uniform float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel(inline="always")
def next_below(state, n):
    """Uniform integer in [0, n) for n >= 1."""
    return np.int64(next_float(state) * n)


def new_state(seed: int | None) -> np.ndarray:
    """RNG state from ``seed``; ``None`` draws a seed from the OS."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (1 << 64))
    return np.array([int(seed) % (1 << 64)], dtype=np.uint64)
