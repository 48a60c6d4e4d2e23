"""A leaf's KLL sketch of its targets (OnlineQRF's leaves): reset, split between children, learn.

Compiled only for tree kinds with sketches (:class:`~.kinds.TreeKind`)."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from ..rng import next_float
from ..sketches.kll import kll_copy, kll_reset, kll_update
from .kinds import kind_hook


@kernel
def _sketch_target(st, prm, leaf, y, w):
    """Add ``y`` to the leaf's KLL sketch with an integer weight: ``w`` rounded stochastically
    (``floor(w)`` plus one with probability ``frac(w)``, unbiased; Poisson bagging weights are
    integers already)."""
    if prm.sketch_k <= 0:
        return
    wi = np.int64(w)
    frac = w - wi
    if frac > 0.0 and next_float(st.rng) < frac:
        wi += 1
    if wi > 0:
        kll_update(st.lf_sketch, st.lf_sketch_levels, leaf, y, wi, st.sketch_capacity, st.rng)


@kernel
def _reset_sketch(st, prm, leaf):
    if prm.sketch_k > 0:
        kll_reset(st.lf_sketch, st.lf_sketch_levels, leaf)


@kernel
def _split_sketch(st, prm, lslot, rslot):
    """The children's sketches: the left child keeps the parent's slot, hence its sketch."""
    if prm.sketch_k > 0:
        if prm.sketch_split == 1:
            kll_copy(st.lf_sketch, st.lf_sketch_levels, lslot, rslot)
        else:
            kll_reset(st.lf_sketch, st.lf_sketch_levels, lslot)
            kll_reset(st.lf_sketch, st.lf_sketch_levels, rslot)


@kind_hook(lambda kind: _reset_sketch if kind.sketch else None)
def sketch_reset(st, prm, leaf):
    """A new leaf's sketch starts empty (kinds with sketches)."""


@kind_hook(lambda kind: _split_sketch if kind.sketch else None)
def sketch_children(st, prm, lslot, rslot):
    """A split leaf's children's sketches (kinds with sketches)."""


@kind_hook(lambda kind: _sketch_target if kind.sketch else None)
def sketch_learn(st, prm, leaf, y, w):
    """The leaf's sketch learns ``y`` (kinds with sketches)."""
