"""numpy dtypes and array buffers as the manifest describes them."""

from __future__ import annotations

import numpy as np


def _descr(dtype: np.dtype):
    return np.lib.format.dtype_to_descr(dtype)


def _descr_from_json(descr):
    """A dtype description read back from JSON (which turned its tuples into lists)."""
    if isinstance(descr, str):
        return descr
    if not isinstance(descr, list):
        raise ValueError("not a dtype description")
    out = []
    for field in descr:
        if not (isinstance(field, list) and len(field) in (2, 3)):
            raise ValueError("bad structured dtype field")
        name = tuple(field[0]) if isinstance(field[0], list) else field[0]
        fmt = _descr_from_json(field[1])
        out.append((name, fmt, tuple(field[2])) if len(field) == 3 else (name, fmt))
    return out


def _dtype_of(descr) -> np.dtype:
    try:
        dt = np.lib.format.descr_to_dtype(_descr_from_json(descr))
    except Exception as e:
        raise ValueError(f"bad dtype {descr!r:.80} in the model file ({e})") from None
    if dt.hasobject:
        raise ValueError("object arrays and scalars are not allowed in a model file")
    return dt


def _array_root(a: np.ndarray) -> np.ndarray:
    """The outermost ndarray whose memory ``a`` views (``a`` itself if it owns its data)."""
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]
