"""The label guard of the interval methods' forests (``src/core/common/label_guard.hpp``).

A method keeps the guard's state (a float64 array, saved with the model) and passes the labels
its forests learn through it: a label far outside the range of those learnt so far is *flagged*
and its row learnt with weight 0 and its label clipped into that range (the trees count the row,
no leaf statistic learns it).  Without a flag nothing is copied or changed, so a stream the guard
never flags gives the results it gave without a guard, bit for bit.
"""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

_common = _core.common
guard_label = _common.guard_label  # (state, y, w) -> the label to learn (y itself: let through)
guard_peek = _common.guard_peek  # (state, y, w) -> what guard_label would return, state unchanged


def new_state() -> np.ndarray:
    """A fresh guard."""
    return np.zeros(_common.GUARD_SIZE)


def flagged_count(state: np.ndarray | None) -> int:
    """Labels the guard ``state`` has flagged."""
    return int(state[_common.GUARD_FLAGGED]) if state is not None else 0


def guarded(state: np.ndarray, ya: np.ndarray, wa: np.ndarray):
    """``(labels, weights, flags)`` to learn rows ``ya``, ``wa`` with, in order through the guard
    (one compiled pass): ``ya`` and ``wa`` themselves and ``None`` when no row is flagged (the
    common case), else the flagged rows' labels clipped, their weights 0 and the ``int8``
    flags."""
    n = ya.shape[0]
    y_out = np.empty(n)
    flags = np.empty(n, np.int8)
    ya = np.ascontiguousarray(ya, dtype=np.float64)
    wa = np.ascontiguousarray(wa, dtype=np.float64)
    if not _common.guard_labels(state, ya, wa, y_out, flags):
        return ya, wa, None
    return y_out, np.where(flags != 0, 0.0, wa), flags


__all__ = ["flagged_count", "guard_label", "guard_peek", "guarded", "new_state"]
