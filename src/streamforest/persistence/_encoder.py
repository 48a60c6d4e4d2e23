"""Saving: an estimator's object graph walked into a JSON tree and a list of arrays."""

from __future__ import annotations

import base64
import math

import numpy as np

from ._classes import (
    _class_spec,
    _fmt,
    _is_namedtuple_class,
    _is_object_class,
    _key_step,
    _stored_fields,
)
from ._dtypes import _address, _array_root, _descr


class _Encoder:
    """Walks an object graph into a JSON tree; arrays are collected for the archive."""

    def __init__(self):
        self.memo: dict[int, int] = {}  # id(object) -> node id
        self.keep: list = []  # keeps encoded objects alive, so their ids are not reused
        self.busy: set[int] = set()  # immutable containers being encoded (cycle check)
        self.arrays: list[tuple[dict, np.ndarray]] = []
        self.entries: list[tuple[str, np.ndarray]] = []

    def _new_id(self, v) -> int:
        nid = len(self.memo)
        self.memo[id(v)] = nid
        self.keep.append(v)
        return nid

    def encode(self, v, path):
        t = type(v)
        if v is None or t is bool or t is int or t is str:
            return v
        if t is float:
            return v if math.isfinite(v) else {"$t": "float", "v": repr(v)}
        if isinstance(v, np.generic):
            if t is np.object_ or v.dtype.hasobject:
                raise TypeError(f"cannot save {_fmt(path)}: numpy object scalar")
            return {"$t": "scalar", "dtype": _descr(v.dtype), "hex": v.tobytes().hex()}
        if t is bytes:
            return {"$t": "bytes", "b64": base64.b64encode(v).decode("ascii")}
        if t is np.dtype or isinstance(v, np.dtype):
            if v.hasobject:
                raise TypeError(f"cannot save {_fmt(path)}: object dtype")
            return {"$t": "dtype", "descr": _descr(v)}
        nid = self.memo.get(id(v))
        if nid is not None:
            if id(v) in self.busy:
                raise ValueError(
                    f"cannot save {_fmt(path)}: a tuple that contains itself (through a mutable "
                    f"object) is not supported"
                )
            return {"$t": "ref", "id": nid}
        if t is list:
            node = {"$t": "list", "id": self._new_id(v), "items": []}
            node["items"] = [self.encode(x, (path, f"[{i}]")) for i, x in enumerate(v)]
            return node
        if t is dict:
            return self._dict(v, path, attrs=False)
        if t is tuple:
            nid = self._new_id(v)
            self.busy.add(id(v))
            items = [self.encode(x, (path, f"[{i}]")) for i, x in enumerate(v)]
            self.busy.discard(id(v))
            return {"$t": "tuple", "id": nid, "items": items}
        if t is set or t is frozenset:
            nid = self._new_id(v)
            if t is frozenset:
                self.busy.add(id(v))
            items = [self.encode(x, (path, "{...}")) for x in _ordered(v)]
            self.busy.discard(id(v))
            return {"$t": t.__name__, "id": nid, "items": items}
        if t is np.ndarray:
            if v.dtype.hasobject:
                raise TypeError(f"cannot save {_fmt(path)}: numpy array of dtype {v.dtype}")
            node = {"$t": "ndarray", "id": self._new_id(v)}
            self.arrays.append((node, v))
            return node
        if _is_namedtuple_class(t):
            spec = _class_spec(t, path)
            nid = self._new_id(v)
            self.busy.add(id(v))
            fields = list(t._fields[: _stored_fields(t, v)])
            items = [self.encode(x, (path, "." + f)) for f, x in zip(fields, v, strict=False)]
            self.busy.discard(id(v))
            return {"$t": "namedtuple", "id": nid, "class": spec, "fields": fields, "items": items}
        if _is_object_class(t):
            return self._object(v, path)
        raise TypeError(
            f"cannot save {_fmt(path)}: values of type {t.__module__}.{t.__qualname__} are not "
            f"supported (supported: None, bool, int, float, str, bytes, list, tuple, dict, set, "
            f"frozenset, numpy arrays and scalars, and streamforest classes)"
        )

    def _dict(self, d: dict, path, attrs: bool) -> dict:
        node = {"$t": "dict", "id": self._new_id(d), "items": []}
        items = node["items"]
        for k, x in d.items():
            items.append(
                [self.encode(k, (path, "{key}")), self.encode(x, (path, _key_step(k, attrs)))]
            )
        return node

    def _object(self, obj, path) -> dict:
        cls = type(obj)
        spec = _class_spec(cls, path)
        for meth in ("__reduce__", "__reduce_ex__", "__getnewargs__", "__getnewargs_ex__"):
            if getattr(cls, meth, None) is not getattr(object, meth, None):
                raise TypeError(
                    f"cannot save {_fmt(path)}: {spec} defines {meth}, which a model file cannot "
                    f"replay (define __getstate__/__setstate__ instead)"
                )
        node = {"$t": "object", "id": self._new_id(obj), "class": spec}
        getstate = getattr(cls, "__getstate__", None)
        if getstate is not None and getstate is not getattr(object, "__getstate__", None):
            state = obj.__getstate__()
        else:
            state = _default_state(obj)
        if type(state) is dict:
            self.keep.append(state)
            node["state"] = self._dict(state, path, attrs=True)
        else:
            node["state"] = self.encode(state, (path, ".__getstate__()"))
        return node

    def finish(self) -> None:
        """Give every collected array its archive entry.  Arrays viewing a common buffer (one
        ndarray owning the memory) are stored as that buffer plus offsets and strides, so they
        still share memory when loaded; any other array is stored as its own data."""
        groups: dict[int, tuple[np.ndarray, list]] = {}
        for node, a in self.arrays:
            root = _array_root(a)
            groups.setdefault(id(root), (root, []))[1].append((node, a))
        for root, members in groups.values():
            members_nz = [(n, a) for n, a in members if a.size]
            shared = len(members_nz) > 1 and (root.flags.c_contiguous or root.flags.f_contiguous)
            if not shared:
                for node, a in members:
                    self._standalone(node, a)
                continue
            for node, a in members:
                if not a.size:
                    self._standalone(node, a)
            name = self._entry(root)
            base = _address(root)
            for node, a in members_nz:
                if a is root:
                    node["data"] = name
                else:
                    node["$t"] = "view"
                    node["data"] = name
                    node["offset"] = _address(a) - base
                    node["shape"] = list(a.shape)
                    node["strides"] = list(a.strides)
                    node["dtype"] = _descr(a.dtype)
                if not a.flags.writeable:
                    node["readonly"] = True

    def _standalone(self, node: dict, a: np.ndarray) -> None:
        node["data"] = self._entry(a)
        if not a.flags.writeable:
            node["readonly"] = True

    def _entry(self, a: np.ndarray) -> str:
        name = f"arrays/{len(self.entries)}.npy"
        self.entries.append((name, a))
        return name


def _ordered(s) -> list:
    """Set items in a reproducible order when they can be sorted."""
    try:
        return sorted(s, key=lambda x: (type(x).__name__, x))
    except TypeError:
        try:
            return sorted(s, key=lambda x: (type(x).__name__, repr(x)))
        except Exception:
            return list(s)


def _default_state(obj):
    """What ``object.__getstate__`` returns (Python >= 3.11): ``__dict__``, or
    ``(__dict__ or None, slots)`` for a class with ``__slots__``, or None."""
    d = getattr(obj, "__dict__", None)
    slots = {}
    for klass in type(obj).__mro__:
        names = klass.__dict__.get("__slots__", ())
        if isinstance(names, str):
            names = (names,)
        for name in names:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            try:
                slots[name] = getattr(obj, name)
            except AttributeError:
                pass
    if slots:
        return (dict(d) if d else None, slots)
    return dict(d) if d is not None else None
