"""Compiled helpers of the online bagging forest.

Trees are processed *tree-major*: for a chunk of rows, the bagging weights of every (row, tree)
are drawn first (row by row, tree by tree, from the forest's generator, so the result does not
depend on how a stream is cut into chunks), then each tree runs through the whole chunk in its
own compiled loop.  Trees are independent given their weights, so this is exactly online bagging
in stream order; running a tree's chunk at once keeps its state in cache (interleaving ten trees
row by row was measured 3.4x slower) and lets trees run on several cores.

Online bagging (Oza 2005): tree ``t`` learns row ``i`` with weight ``k * w_i``,
``k ~ Poisson(lam)`` (Knuth's multiplication method, exact for the small rates used here).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..rng import next_float


@njit(cache=True, inline="always")
def poisson(rng, lam):
    limit = np.exp(-lam)
    k = 0
    p = next_float(rng)
    while p > limit:
        k += 1
        p *= next_float(rng)
    return k


@njit(cache=True)
def draw_weights(frng, lam, w, out):
    """``out[t, i] = Poisson(lam) * w[i]``, drawn row by row, tree by tree."""
    for i in range(w.shape[0]):
        for t in range(out.shape[0]):
            out[t, i] = poisson(frng, lam) * w[i]
