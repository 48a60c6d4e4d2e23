"""The compiled core's view of a tree (``streamforest._core.tree``): its field and parameter
tables are the Python state's, in the same order and arena arrays."""

from typing import get_type_hints

import numpy as np

from streamforest import _core
from streamforest.rng import new_state
from streamforest.tree_kinds.state import TreeParams, TreeState, allocate


def test_field_table_is_the_python_state():
    st = allocate(1, new_state(0), sketch_k=8)
    arena = {np.dtype(np.float64): "F", np.dtype(np.int64): "I", np.dtype(np.uint64): "I",
             np.dtype(np.int8): "B"}  # fmt: skip
    pairs = zip(TreeState._fields, st, strict=True)
    expected = [(name, arena[a.dtype], a.ndim) for name, a in pairs]
    assert list(_core.tree.FIELDS) == expected


def test_parameter_table_is_the_python_params():
    ints = {n for n, tp in get_type_hints(TreeParams).items() if tp is int}
    expected = [(n, "i64" if n in ints else "double") for n in TreeParams._fields]
    assert list(_core.tree.PARAMS) == expected
