"""A tree of an arena as one small compiled value: :data:`TreeRef` and :data:`ParamRef`.

Compiled kernels read a tree's state as ``st.nd_thr[node]`` and its parameters as
``prm.grace``.  ``st`` is not a tuple of the state's arrays (a tuple of sixty arrays is several
hundred machine words: every call that passes it costs hundreds of nanoseconds and every function
that takes it seconds of compilation) but a *reference* to the tree's row of the
:class:`~streamforest.tree_kinds.arena.Arena`: five pointers.  Each attribute of a
:class:`~streamforest.tree_kinds.state.TreeState` field builds that field's array view where it is
read (its offset and shape are loaded from the row's layout; the loads are marked invariant, so
a loop that reads a field many times loads them once).  ``prm.<name>`` loads one parameter of
the row's :class:`~streamforest.tree_kinds.state.TreeParams` (an integer parameter converted as
``np.int64(value)``).

So kernels call each other at the cost of a few machine words, each compiles once for every
tree kind and size, and none needs to be inlined into its callers to be fast.
"""

from __future__ import annotations

from typing import get_type_hints

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed, lower_getattr_generic
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.extending import intrinsic, models, register_model
from numba.np import numpy_support
from numba.np.arrayobj import make_array, populate_array

from .state import TreeParams, TreeState

__all__ = ["ParamRef", "TreeRefType", "param_ref", "tree_ref"]


class TreeRefType(types.Type):
    """The numba type of a reference to one tree's state in an arena, for trees of ``kind``
    (a :class:`~.tree_kind.TreeKind`: kernels are compiled per kind)."""

    def __init__(self, kind):
        self.kind = kind
        super().__init__(name=f"TreeRef[{kind.name}]")


class ParamRefType(types.Type):
    """The numba type of a reference to one tree's parameters in an arena."""

    def __init__(self):
        super().__init__(name="ParamRef")


ParamRef = ParamRefType()

_F8P = types.CPointer(types.float64)
_I8P = types.CPointer(types.int64)


@register_model(TreeRefType)
class _TreeRefModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [
            ("fa", _F8P),  # the row's first float
            ("ia", _I8P),  # ... int64
            ("ba", types.CPointer(types.int8)),  # ... int8
            ("lay", _I8P),  # the row's layout: (N_FIELDS, 4) offsets and shapes
        ]
        super().__init__(dmm, fe_type, members)


@register_model(ParamRefType)
class _ParamRefModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("pa", _F8P)])


# ------------------------------------------------------------------------------------------------
# the fields: which arena array, how many dimensions, which item type
def _field_kinds():
    from ..rng import new_state
    from .state import allocate

    st = allocate(1, new_state(0), sketch_k=8)
    arena = {np.dtype(np.float64): 0, np.dtype(np.int64): 1, np.dtype(np.uint64): 1,
             np.dtype(np.int8): 2}  # fmt: skip
    out = {}
    for k, (name, a) in enumerate(zip(TreeState._fields, st, strict=True)):
        out[name] = (k, arena[a.dtype], a.ndim, numpy_support.from_dtype(a.dtype))
    return out


FIELDS = _field_kinds()
_INT_PARAMS = frozenset(n for n, tp in get_type_hints(TreeParams).items() if tp is int)
PARAMS = {name: (i, types.int64 if name in _INT_PARAMS else types.float64)
          for i, name in enumerate(TreeParams._fields)}  # fmt: skip


@infer_getattr
class _TreeRefAttributes(AttributeTemplate):
    key = TreeRefType

    def generic_resolve(self, typ, attr):
        f = FIELDS.get(attr)
        if f is None:
            return None
        return types.Array(f[3], f[2], "C")


@infer_getattr
class _ParamRefAttributes(AttributeTemplate):
    key = ParamRefType

    def generic_resolve(self, typ, attr):
        p = PARAMS.get(attr)
        return None if p is None else p[1]


def _invariant_load(builder, ptr):
    """A load that LLVM may hoist and merge: the value does not change while a kernel runs."""
    v = builder.load(ptr)
    v.set_metadata("invariant.load", builder.module.add_metadata([]))
    return v


@lower_getattr_generic(TreeRefType)
def _tree_ref_getattr(context, builder, typ, value, attr):
    k, which, nd, dtype = FIELDS[attr]
    ref = cgutils.create_struct_proxy(typ)(context, builder, value=value)
    base = (ref.fa, ref.ia, ref.ba)[which]
    lay = ref.lay
    at = [_invariant_load(builder, cgutils.gep(builder, lay, 4 * k + i)) for i in range(1 + nd)]
    retty = types.Array(dtype, nd, "C")
    out = make_array(retty)(context, builder)
    data = builder.bitcast(cgutils.gep(builder, base, at[0]), out.data.type)
    itemsize = context.get_abi_sizeof(context.get_data_type(dtype))
    intp = context.get_value_type(types.intp)
    dims = at[1:]
    strides = [ir.Constant(intp, itemsize)] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = builder.mul(strides[d + 1], dims[d + 1])
    populate_array(out, data=data, shape=dims, strides=strides,
                   itemsize=ir.Constant(intp, itemsize), meminfo=None, parent=None)  # fmt: skip
    return impl_ret_borrowed(context, builder, retty, out._getvalue())


@lower_getattr_generic(ParamRefType)
def _param_ref_getattr(context, builder, typ, value, attr):
    i, ty = PARAMS[attr]
    ref = cgutils.create_struct_proxy(typ)(context, builder, value=value)
    v = _invariant_load(builder, cgutils.gep(builder, ref.pa, i))
    if ty is types.int64:
        v = builder.fptosi(v, context.get_value_type(types.int64))
    return v


@intrinsic
def tree_ref(typingctx, fa, ia, ba, lay, t, kind):
    """The tree reference of row ``t`` of an arena's arrays (no copy, no check), for trees of the
    kind of the :class:`~.tree_kind.KindTag` ``kind``."""
    ref_type = TreeRefType(kind.kind)

    def codegen(context, builder, sig, args):
        ref = cgutils.create_struct_proxy(ref_type)(context, builder)
        ptrs = []
        for aty, a in zip(sig.args[:4], args[:4], strict=True):
            arr = make_array(aty)(context, builder, a)
            row_stride = builder.extract_value(arr.strides, 0)
            intp = context.get_value_type(types.intp)
            addr = builder.add(builder.ptrtoint(arr.data, intp), builder.mul(args[4], row_stride))
            ptrs.append(addr)
        ref.fa = builder.inttoptr(ptrs[0], context.get_value_type(_F8P))
        ref.ia = builder.inttoptr(ptrs[1], context.get_value_type(_I8P))
        ref.ba = builder.inttoptr(ptrs[2], context.get_value_type(types.CPointer(types.int8)))
        ref.lay = builder.inttoptr(ptrs[3], context.get_value_type(_I8P))
        return ref._getvalue()

    return ref_type(fa, ia, ba, lay, t, kind), codegen


@intrinsic
def param_ref(typingctx, pa, t):
    """The :data:`ParamRef` of row ``t`` of an arena's parameter array."""

    def codegen(context, builder, sig, args):
        ref = cgutils.create_struct_proxy(ParamRef)(context, builder)
        arr = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        row_stride = builder.extract_value(arr.strides, 0)
        addr = builder.add(builder.ptrtoint(arr.data, intp), builder.mul(args[1], row_stride))
        ref.pa = builder.inttoptr(addr, context.get_value_type(_F8P))
        return ref._getvalue()

    return ParamRef(pa, t), codegen
