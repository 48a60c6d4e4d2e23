"""Learning a row at its leaf: the leaf's statistics, leaf model and sketch, and what its split rule
keeps (Hoeffding observers, the extremely randomised split's candidates), then the split attempt
when the grace period is reached."""

from __future__ import annotations

import numpy as np

from ..compiled import kernel
from ..stats import welford_update
from .extra_split import extra_observe
from .kinds import kind_hook, rule_part
from .leaf_models import learn_leaf_model
from .leaf_sketch import sketch_learn
from .observers import (
    bin_key,
    free_bins,
    observe,
)
from .room import _deactivate
from .splitting import _attempt_extra_split, _attempt_observer_split
from .state import (
    I_NFEAT,
    S_M2,
    S_W,
)


@kernel
def _learn_row(st, prm, node, x, y, w):
    """Learn ``(x, y, w)`` at the leaf ``node`` that ``x`` routes to."""
    nfeat = st.ints[I_NFEAT]
    leaf = st.nd_leaf[node]
    learn_leaf_model(st, prm, leaf, x, y, w, nfeat)
    s = st.lf_stat
    s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3] = welford_update(
        s[leaf, 0], s[leaf, 1], s[leaf, 2], s[leaf, 3], y, w
    )
    sketch_learn(st, prm, leaf, y, w)
    if st.lf_active[leaf] == 0:
        return
    _split_rule_learns(st, prm, leaf, x, y, w, nfeat)


@kernel
def _extra_learns(st, prm, leaf, x, y, w, nfeat):
    """The extremely randomised split's part of learning a row at an active leaf."""
    s = st.lf_stat
    extra_observe(st, prm, leaf, x, y, w, nfeat)
    if s[leaf, S_W] - st.lf_last[leaf] >= prm.grace and s[leaf, S_M2] > 0.0:
        _attempt_extra_split(st, prm, leaf)


@kernel
def _observers_learn(st, prm, leaf, x, y, w, nfeat):
    """The attribute observers' part of learning a row at an active leaf."""
    s = st.lf_stat
    if free_bins(st) < nfeat:  # budget reached, nothing else to deactivate: stop observing here
        _deactivate(st, leaf)
        return
    for j in range(nfeat):
        xj = x[j]
        if st.lf_mask[leaf, j] == 1 and not np.isnan(xj):
            nominal = st.ft_nominal[j] == 1
            key = bin_key(xj, prm.observer, st.lf_scale[leaf, j], nominal)
            observe(st, leaf, j, key, xj, y, w)
    if s[leaf, S_W] - st.lf_last[leaf] >= prm.grace and s[leaf, S_M2] > 0.0:
        _attempt_observer_split(st, prm, leaf)


@kernel
def _nothing_to_learn(st, prm, leaf, x, y, w, nfeat):
    return None


@kind_hook(rule_part("learn_at_leaf"))
def _split_rule_learns(st, prm, leaf, x, y, w, nfeat):
    """What the tree's split rule does with a row its active leaf learnt: observe it, and try
    a split every grace period (a pre-grown tree's leaves are never active)."""
