"""Handles: the arrays of a per-example call packed into one ``int64`` array of addresses.

A compiled call from Python checks and converts each array argument.  The per-example calls of
a forest take a dozen arrays, and an interval method adds a dozen of its own, so converting them
alone would cost about as much as the trees' work.  A *handle* packs the arrays once: for each,
its address and its shape, in a fixed order that the kernel reading it knows
(``src/core/engine/handle.hpp``).  The kernel rebuilds each array as a view of that memory, so a
call converts one array and a few scalars.

A handle holds no reference to its arrays: its owner keeps them alive, and must build a new
handle whenever one of them is replaced (the engine compares the identity of the objects the
handle was built from before each call, see ``Engine._handle``).  A handle is never pickled or
copied with its owner (an engine drops it in ``__getstate__``; a copy builds its own).
"""

from __future__ import annotations

import numpy as np

_SLOT_OF = {np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.int8)}


def build(arrays, out: np.ndarray | None = None) -> np.ndarray:
    """The handle of ``arrays`` (C-contiguous, writeable numpy arrays of float64, int64, uint64
    or int8): for each in turn its address, then its shape (one entry per dimension).  Written
    into ``out`` when it has the right length (a handle rebuilt in place allocates nothing)."""
    vals = []
    for a in arrays:
        if not (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.flags.writeable
                and a.dtype in _SLOT_OF):  # fmt: skip
            raise TypeError("a handle packs C-contiguous writeable arrays of 8- or 1-byte items")
        vals.append(a.__array_interface__["data"][0])
        vals.extend(a.shape)
    if out is not None and out.shape == (len(vals),):
        out[:] = vals
        return out
    return np.array(vals, dtype=np.int64)
