"""Handles: the arrays of a per-example call packed into one ``int64`` array of addresses.

A compiled call from Python unboxes each array argument (an empty kernel taking an
:class:`~streamforest.tree_kinds.arena.Arena`, a row, the scratch and the memo costs several times
one taking a single array).  The per-example calls of a forest take a dozen
arrays, and an interval method adds a dozen of its own, so unboxing alone cost about as much as
the trees' work.  A *handle* packs the arrays once: for each, its address and its shape, in a
fixed order that the kernel reading it knows.  The kernel rebuilds each array as a view of that
memory (:func:`h1`, :func:`h2`, :func:`h3`: no allocation, no reference count), so a call
unboxes one array and a few scalars.

A handle holds no reference to its arrays: its owner keeps them alive, and must build a new
handle whenever one of them is replaced (the engine compares the identity of the objects the
handle was built from before each call, see ``Engine._handle``).  A handle is never pickled or
copied with its owner (an engine drops it in ``__getstate__``; a copy builds its own).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from ..compiled import kernel

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


@intrinsic
def _addr_view(typingctx, addr, shape, dtype):
    """A C-contiguous array of ``shape`` (a tuple) and item type ``dtype`` at address ``addr``
    (an integer), without owner (as ``numba.carray`` makes one from a pointer)."""
    nd = len(shape)
    out_dt = dtype.dtype if isinstance(dtype, types.DType) else dtype.instance_type
    retty = types.Array(out_dt, nd, "C")

    def codegen(context, builder, sig, args):
        out = make_array(retty)(context, builder)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(
            context.get_data_type(out_dt)))  # fmt: skip
        data = builder.inttoptr(args[0], out.data.type)
        dims = cgutils.unpack_tuple(builder, args[1], nd)
        strides = [itemsize] * nd
        for d in range(nd - 2, -1, -1):
            strides[d] = builder.mul(strides[d + 1], dims[d + 1])
        populate_array(out, data=data, shape=dims, strides=strides, itemsize=itemsize,
                       meminfo=None, parent=None)  # fmt: skip
        return impl_ret_borrowed(context, builder, retty, out._getvalue())

    return retty(addr, shape, dtype), codegen


@kernel(inline="always")
def h1(H, i, dtype):
    """The 1-d array whose address is ``H[i]`` (shape ``H[i + 1]``)."""
    return _addr_view(H[i], (H[i + 1],), dtype)


@kernel(inline="always")
def h2(H, i, dtype):
    """The 2-d array whose address is ``H[i]`` (shape ``H[i + 1], H[i + 2]``)."""
    return _addr_view(H[i], (H[i + 1], H[i + 2]), dtype)


@kernel(inline="always")
def h3(H, i, dtype):
    """The 3-d array whose address is ``H[i]`` (shape ``H[i + 1 : i + 4]``)."""
    return _addr_view(H[i], (H[i + 1], H[i + 2], H[i + 3]), dtype)
