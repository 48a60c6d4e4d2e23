"""The seeded generator of the compiled loops: SplitMix64 over one ``uint64`` of state (its
draws are the compiled core's, ``src/core/common/rng.hpp``).

Its whole state is one ``uint64`` in a numpy array, so models that use it pickle, clone and replay
bit-identically; a global generator could do none of that.
"""

from __future__ import annotations

import numpy as np


def new_state(seed: int | None) -> np.ndarray:
    """RNG state from ``seed``; ``None`` draws a seed from the OS."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % (1 << 64))
    return np.array([int(seed) % (1 << 64)], dtype=np.uint64)
