"""Versioned, safe persistence of streamforest models: :func:`save` and :func:`load`.

File format
-----------
A model file is one zip archive holding

- ``manifest.json`` (first entry): a JSON object with ``format`` (``"streamforest-model"``),
  ``format_version`` (an integer), ``library`` and ``library_version`` (who wrote it),
  ``class`` (``"module:QualName"`` of the estimator), ``params`` (its constructor
  parameters, ``get_params(deep=False)``), ``state`` (the estimator's whole object graph as a
  JSON tree) and, for information only, the ``python_version`` and ``numpy_version`` that wrote it;
- ``arrays/<n>.npy``: the numpy arrays the state refers to by name, in ``.npy`` format (read
  back with ``allow_pickle=False``).

The state is encoded generically, without knowledge of any estimator's attributes: the object
graph is walked from the estimator's ``__dict__`` (or what its class's ``__getstate__`` returns,
so scratch buffers an estimator drops from pickles are dropped here too).  JSON values stand for
``None``, ``bool``, ``int``, finite ``float`` and ``str``; everything else is a JSON object whose
``"$t"`` key names its kind: ``float`` (NaN and infinities), ``bytes``, ``list``, ``tuple``,
``set``, ``frozenset``, ``dict`` (a list of key/value pairs, so keys may be any supported
hashable value), ``ndarray`` and ``view`` (numpy arrays of any dtype but object), ``scalar`` (a
numpy scalar, as its dtype and raw bytes), ``dtype``, ``namedtuple`` and ``object`` (instances of
classes defined in ``streamforest`` modules) and ``ref``.  Every container, array and object
carries an ``id``; a second reference to the same Python object is a ``{"$t": "ref", "id": n}``,
so shared objects (one feature space shared by a forest and its trees, one array in two places)
stay shared after loading.  Arrays that are views of a common buffer are stored as that buffer
plus the views' offsets, shapes and strides, so they keep sharing memory; a lone view is
stored as a copy of its own data.  Saving the same model twice gives the same bytes.

Safety
------
Loading executes no code from the file: no pickle anywhere (``.npy`` entries are read with
``allow_pickle=False``), and classes are resolved only from ``streamforest`` modules (by
``importlib`` and ``getattr``) and only if the name resolves to a class defined in a
``streamforest`` module (NamedTuple classes, or classes whose bases are all streamforest classes).
Objects are rebuilt with ``cls.__new__(cls)`` and their state set as pickle does it (their
``__setstate__`` if the class defines one, else ``__dict__`` and slots).  Anything else in a
model (functions, arbitrary classes, locks, numba typed containers, ...) makes :func:`save`
raise a ``TypeError`` naming the attribute path.

Versions
--------
``format_version`` covers both the container described above and the layout of the estimators'
learnt state (attribute names, NamedTuple fields, what the arrays hold), since the state is
stored as the estimators hold it.  So it must be bumped whenever an estimator's state layout
changes; a reader refuses files whose format version is newer than :data:`FORMAT_VERSION` or older
than :data:`MIN_FORMAT_VERSION` (an upgrade step in ``_UPGRADES`` can keep older formats readable).

==============  ==============================================  ======================
format_version  written by                                      read by
==============  ==============================================  ======================
1               streamforest 0.1.0                              streamforest 0.1.x
2               streamforest 0.1.x, with tree kinds and         streamforest 0.1.x
                background trees
3               streamforest 0.1.x, with classification trees   streamforest 0.1.x
4               streamforest 0.1.x, with ABORF's Bayesian        streamforest 0.1.x
                leaves
5               streamforest 0.1.x, a classifier's category      streamforest 0.1.x
                weights per nominal feature
==============  ==============================================  ======================

Version 2: every tree's state has the fields of the split rules and of change adaptation
(``lf_nex``, ``lf_xc``, ``lf_buf``, ``nd_alt``, ``nd_isalt``, ``nd_ph``, ``nd_q``, ``nd_path``;
more ``ints``) and its parameters ``split_rule``, ``m_min`` and the alternates'; a forest's engine
holds background trees and drift counts, and a tree's drift detector state (``TreeState.dd``) is
the thesis' Page-Hinkley test's.  Version 1 files still load: the manifest is unchanged, and the
objects upgrade themselves when their state is set (the arena is laid out anew with the added
fields as a new tree of its kind has them, :func:`streamforest.trees._arena.upgrade`; the
engine starts without background trees or warnings, each tree's detector restarted in the new
layout; a forest gets ``warning_fraction=None``).

Version 3: every tree's state ends with the class fields of classification trees (``lf_cc``,
``lf_gs``, ``lf_ncc``, ``lf_xcc``, ``lf_rng``; zero-sized in a regression tree) and its
parameters with ``task``, ``ph_gamma`` and ``alt_chi2``; an engine records ``n_classes``.
Version 2 files load unchanged: the arena upgrade appends the fields as a regression tree has
them and the parameters' defaults, and an engine without ``n_classes`` has none.

Version 4: every tree's state ends with the fields of ABORF's Bayesian leaves (``lf_nig``,
``ft_nig``; zero-sized unless ``leaf_model="bayesian"``) and its parameters with ``nig_c``,
``nig_a0``, ``nig_b0`` and ``nig_decay``.  Version 3 files load unchanged, the arena appending
the empty fields and the parameters' defaults (tested with files saved by format 3 code).

Version 5: a classification tree's ``lf_ncc`` has one row per nominal feature (the ``s``-th
nominal feature's weights of each category and class in row ``s``) instead of one per feature
(the rows of numeric features held nothing: on KDD'99, 41 rows of 70 codes x 23 classes, 528
kB a leaf, of which its 3 nominal features' rows are 39 kB), and its leaves no linear-model,
normaliser or observer columns (``lf_coef`` and ``lf_rms`` one column, ``lf_x``, ``lf_scale``,
``lf_head`` and ``lf_nb`` none; ``lf_xc`` only the candidates' thresholds).  Version 3 and 4
files load: the arena keeps the nominal features' rows of ``lf_ncc``
(:func:`streamforest.trees._arena.upgrade`; the other fields are read by their shapes, so wider
ones still work).
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import math
import os
import platform
import secrets
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "MIN_FORMAT_VERSION", "load", "read_manifest", "save"]

FORMAT_NAME = "streamforest-model"
FORMAT_VERSION = 5  # written by this library
MIN_FORMAT_VERSION = 1  # oldest format this library reads
MANIFEST = "manifest.json"

# format_version v -> function turning a v manifest into a v + 1 manifest
_UPGRADES: dict[int, Callable[[dict], dict]] = {
    1: lambda manifest: manifest,  # 1 -> 2: the objects upgrade themselves (see the docstring)
    2: lambda manifest: manifest,  # 2 -> 3: likewise (the arena appends the class fields)
    3: lambda manifest: manifest,  # 3 -> 4: likewise (the arena appends the Bayesian leaf fields)
    4: lambda manifest: manifest,  # 4 -> 5: likewise (the arena keeps lf_ncc's nominal rows)
}

_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same model gives the same bytes
_PKG = "streamforest"
# bases a streamforest class may have besides streamforest classes and object
_HARMLESS_BASES = ("abc.ABC", "typing.Generic")


def _library_version() -> str:
    import streamforest

    return streamforest.__version__


# ------------------------------------------------------------------------------------------------
# classes
def _in_package(module) -> bool:
    return isinstance(module, str) and (module == _PKG or module.startswith(_PKG + "."))


def _stored_fields(cls, value) -> int:
    """How many of a named tuple's fields are written: all but the trailing ones that hold their
    default (None), so that a field appended with a default changes no file."""
    n = len(cls._fields)
    while n and cls._fields[n - 1] in cls._field_defaults and value[n - 1] is None:
        n -= 1
    return n


def _appended_with_defaults(cls, fields) -> bool:
    """Whether ``fields`` (a file's) are the class's first fields, the rest having defaults."""
    n = len(fields) if isinstance(fields, list) else -1
    names = list(cls._fields)
    return (
        0 <= n <= len(names)
        and fields == names[:n]
        and all(f in cls._field_defaults for f in names[n:])
    )


def _is_namedtuple_class(cls) -> bool:
    return (
        isinstance(cls, type)
        and cls.__mro__[1:] == (tuple, object)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and _in_package(cls.__module__)
    )


def _is_object_class(cls) -> bool:
    """A class whose instances are stored as objects: it and all its bases (but ``object`` and a
    few marker bases) are defined in streamforest modules."""
    if not isinstance(cls, type) or not _in_package(cls.__module__):
        return False
    for base in cls.__mro__[1:]:
        if base is object or _in_package(base.__module__):
            continue
        if f"{base.__module__}.{base.__qualname__}" not in _HARMLESS_BASES:
            return False
    return True


def _class_name(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _class_spec(cls, path) -> str:
    """``module:qualname`` of a class, checked to resolve back to it."""
    spec = _class_name(cls)
    try:
        ok = _resolve(spec) is cls
    except ValueError:
        ok = False
    if not ok:
        raise TypeError(
            f"cannot save {_fmt(path)}: class {spec} cannot be found again by its name "
            f"(a class defined inside a function?)"
        )
    return spec


def _resolve(spec) -> type:
    """The class named ``module:qualname``, only if it is a streamforest class."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(f"bad class name {spec!r} (expected 'module:QualName')")
    module, qual = spec.split(":")
    parts = qual.split(".")
    if not _in_package(module):
        raise ValueError(
            f"refusing to load {spec!r}: only classes defined in streamforest modules can be loaded"
        )
    if not all(p.isidentifier() for p in module.split(".") + parts) or any(
        p.startswith("__") for p in module.split(".") + parts
    ):
        raise ValueError(f"refusing to load {spec!r}: not a plain module and class name")
    try:
        obj = importlib.import_module(module)
    except ImportError as e:
        raise ValueError(f"cannot load class {spec!r}: no module {module!r} ({e})") from None
    for p in parts:
        obj = getattr(obj, p, None)
        if obj is None:
            raise ValueError(f"cannot load class {spec!r}: {module} has no {qual}")
    if not (_is_object_class(obj) or _is_namedtuple_class(obj)):
        raise ValueError(
            f"refusing to load {spec!r}: it is not a class defined in a streamforest module"
        )
    return obj


# ------------------------------------------------------------------------------------------------
# attribute paths (built lazily: a path is (parent, step), formatted only for error messages)
def _fmt(path) -> str:
    steps = []
    while path is not None:
        path, step = path
        steps.append(step)
    return "".join(reversed(steps))


def _key_step(key, attr: bool) -> str:
    if attr and isinstance(key, str) and key.isidentifier():
        return "." + key
    return f"[{key!r}]"


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


# ------------------------------------------------------------------------------------------------
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


# ------------------------------------------------------------------------------------------------
class _Decoder:
    """Rebuilds the object graph of a manifest's JSON tree."""

    def __init__(self, zf: zipfile.ZipFile, where: str):
        self.zf = zf
        self.where = where
        self.nodes: dict[int, Any] = {}
        self.data: dict[str, np.ndarray] = {}

    def bad(self, msg: str) -> ValueError:
        return ValueError(f"{self.where}: corrupt or unsupported model file: {msg}")

    def _register(self, node, v):
        nid = node.get("id")
        if type(nid) is not int or nid in self.nodes:
            raise self.bad(f"bad or repeated id {nid!r}")
        self.nodes[nid] = v
        return v

    def _items(self, node) -> list:
        items = node.get("items")
        if not isinstance(items, list):
            raise self.bad(f"{node.get('$t')} without items")
        return items

    def decode(self, node):
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, float):
            return node
        if isinstance(node, list) or not isinstance(node, dict):
            raise self.bad(f"unexpected JSON value {node!r:.60}")
        t = node.get("$t")
        if t == "ref":
            nid = node.get("id")
            if type(nid) is not int or nid not in self.nodes:
                raise self.bad(f"reference to unknown id {nid!r}")
            return self.nodes[nid]
        if t == "float":
            v = node.get("v")
            if v not in ("nan", "inf", "-inf"):
                raise self.bad(f"bad float {v!r}")
            return float(v)
        if t == "bytes":
            try:
                return base64.b64decode(node["b64"], validate=True)
            except Exception:
                raise self.bad("bad bytes value") from None
        if t == "scalar":
            dt = _dtype_of(node.get("dtype"))
            try:
                raw = bytes.fromhex(node["hex"])
            except Exception:
                raise self.bad("bad numpy scalar") from None
            if len(raw) != dt.itemsize:
                raise self.bad(f"numpy scalar of {len(raw)} bytes for dtype {dt}")
            return np.frombuffer(raw, dtype=dt)[0].copy()
        if t == "dtype":
            return _dtype_of(node.get("descr"))
        if t == "list":
            out = self._register(node, [])
            out.extend(self.decode(x) for x in self._items(node))
            return out
        if t == "dict":
            out = self._register(node, {})
            for pair in self._items(node):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise self.bad("dict item is not a key/value pair")
                k = self.decode(pair[0])
                try:
                    out[k] = self.decode(pair[1])
                except TypeError:
                    raise self.bad(f"unhashable dict key {k!r:.60}") from None
            return out
        if t == "set":
            out = self._register(node, set())
            for x in self._items(node):
                try:
                    out.add(self.decode(x))
                except TypeError:
                    raise self.bad("unhashable set item") from None
            return out
        if t in ("tuple", "frozenset"):
            self._check_new_id(node)
            items = [self.decode(x) for x in self._items(node)]
            try:
                v = tuple(items) if t == "tuple" else frozenset(items)
            except TypeError:
                raise self.bad("unhashable frozenset item") from None
            return self._register(node, v)
        if t == "namedtuple":
            return self._namedtuple(node)
        if t == "object":
            return self._object(node)
        if t in ("ndarray", "view"):
            return self._register(node, self._array(node))
        raise self.bad(f"unknown node type {t!r}")

    def _check_new_id(self, node) -> None:
        nid = node.get("id")
        if type(nid) is not int or nid in self.nodes:
            raise self.bad(f"bad or repeated id {nid!r}")

    def _namedtuple(self, node):
        cls = _resolve(node.get("class"))
        if not _is_namedtuple_class(cls):
            raise ValueError(f"refusing to load {node.get('class')!r}: not a NamedTuple class")
        fields = node.get("fields")
        if fields != list(cls._fields) and not _appended_with_defaults(cls, fields):
            raise self.bad(
                f"{_class_name(cls)} has fields {list(cls._fields)} in this library but "
                f"{fields} in the file (a state layout change without a format version bump?)"
            )
        self._check_new_id(node)
        items = [self.decode(x) for x in self._items(node)]
        if len(items) != len(fields):
            raise self.bad(f"{_class_name(cls)} with {len(items)} values for {len(fields)} fields")
        items += [cls._field_defaults[f] for f in cls._fields[len(items) :]]
        return self._register(node, tuple.__new__(cls, items))

    def _object(self, node):
        cls = _resolve(node.get("class"))
        if not _is_object_class(cls):
            raise ValueError(f"refusing to load {node.get('class')!r}: not a streamforest class")
        obj = self._register(node, cls.__new__(cls))
        if "state" not in node:
            raise self.bad(f"{_class_name(cls)} object without state")
        state = self.decode(node["state"])
        setstate = getattr(obj, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return obj
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state is not None:
            if not (isinstance(state, dict) and all(isinstance(k, str) for k in state)):
                raise self.bad(f"bad state for {_class_name(cls)}")
            try:
                obj.__dict__.update(state)
            except AttributeError:
                raise self.bad(f"{_class_name(cls)} objects have no __dict__") from None
        if slots is not None:
            if not (isinstance(slots, dict) and all(isinstance(k, str) for k in slots)):
                raise self.bad(f"bad slot state for {_class_name(cls)}")
            for k, v in slots.items():
                try:
                    setattr(obj, k, v)
                except AttributeError:
                    raise self.bad(f"{_class_name(cls)} has no slot {k!r}") from None
        return obj

    def _load_entry(self, name) -> np.ndarray:
        a = self.data.get(name)
        if a is not None:
            return a
        if not (
            isinstance(name, str)
            and name.startswith("arrays/")
            and name.endswith(".npy")
            and name[7:-4].isdigit()
        ):
            raise self.bad(f"bad array entry name {name!r}")
        try:
            with self.zf.open(name) as f:
                a = np.lib.format.read_array(f, allow_pickle=False)
        except KeyError:
            raise self.bad(f"missing array entry {name!r}") from None
        except ValueError as e:  # object arrays (pickles) are refused by allow_pickle=False
            raise self.bad(f"array entry {name!r} cannot be read safely ({e})") from None
        if a.dtype.hasobject:
            raise self.bad(f"object array in entry {name!r}")
        self.data[name] = a
        return a

    def _array(self, node) -> np.ndarray:
        root = self._load_entry(node.get("data"))
        if node["$t"] == "ndarray":
            a = root
        else:
            dt = _dtype_of(node.get("dtype"))
            shape, strides, offset = node.get("shape"), node.get("strides"), node.get("offset")
            if not (
                isinstance(shape, list)
                and isinstance(strides, list)
                and len(shape) == len(strides)
                and all(type(x) is int for x in shape + strides + [offset])
            ):
                raise self.bad("bad array view")
            if not (root.flags.c_contiguous or root.flags.f_contiguous):
                raise self.bad("array view of a non-contiguous buffer")
            buf = root.reshape(-1, order="A").view(np.uint8)
            try:
                a = np.ndarray(tuple(shape), dt, buffer=buf, offset=offset, strides=tuple(strides))
            except (TypeError, ValueError) as e:
                raise self.bad(f"array view out of its buffer ({e})") from None
        if node.get("readonly"):
            if a is root:  # the buffer itself must stay writeable for its writeable views
                a = root.view()
            a.flags.writeable = False
        return a


# ------------------------------------------------------------------------------------------------
def _params(model) -> dict:
    get = getattr(model, "get_params", None)
    if callable(get):
        try:
            return dict(get(deep=False))  # the constructor's own parameters
        except TypeError:
            return dict(get())
    import inspect

    try:
        sig = inspect.signature(type(model).__init__)
    except (TypeError, ValueError):
        return {}
    return {
        p: model.__dict__[p]
        for p in sig.parameters
        if p != "self" and p in getattr(model, "__dict__", {})
    }


def _manifest_and_entries(model) -> tuple[bytes, list]:
    cls = type(model)
    if not _is_object_class(cls):
        raise TypeError(
            f"save expects a streamforest estimator, got {cls.__module__}.{cls.__qualname__}"
        )
    enc = _Encoder()
    root = (None, cls.__name__)
    params = {k: enc.encode(v, (root, "." + k)) for k, v in _params(model).items()}
    state = enc.encode(model, root)
    enc.finish()
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library": _PKG,
        "library_version": _library_version(),
        "class": _class_name(cls),
        "params": params,
        "state": state,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
    }
    text = json.dumps(manifest, allow_nan=False, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8"), enc.entries


def _write_zip(f, manifest: bytes, entries, compress: bool) -> None:
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(f, "w", compression=method, allowZip64=True) as zf:

        def info(name):
            zi = zipfile.ZipInfo(name, date_time=_EPOCH)
            zi.compress_type = method
            # fast deflate: the arrays' spare capacity (zeros) is what compresses
            setattr(zi, "compress_level" if hasattr(zi, "compress_level") else "_compresslevel", 1)
            zi.external_attr = 0o644 << 16
            return zi

        zf.writestr(info(MANIFEST), manifest)
        for name, a in entries:
            with zf.open(info(name), "w", force_zip64=a.nbytes > 2**30) as out:
                np.lib.format.write_array(out, a, allow_pickle=False)


def save(model, path, *, compress: bool = True) -> None:
    """Write ``model`` (any streamforest estimator, fitted or not) to ``path``.

    ``path`` is a ``str`` or ``os.PathLike`` (the file is written to a temporary file in the same
    directory, then moved into place, so a crash never leaves a half-written model behind), or
    a binary file object open for writing.  ``compress`` deflates the archive's entries.

    Raises ``TypeError`` (naming the attribute path) if the model holds a value that cannot be
    stored safely, before anything is written.
    """
    manifest, entries = _manifest_and_entries(model)
    if hasattr(path, "write"):
        _write_zip(path, manifest, entries, compress)
        return
    target = os.fspath(path)
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    folder = os.path.dirname(os.path.abspath(target))
    base = os.path.basename(target)
    while True:
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0))
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            _write_zip(f, manifest, entries, compress)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _where(path) -> str:
    if hasattr(path, "read"):
        return repr(getattr(path, "name", "<file object>"))
    return repr(os.fspath(path))


def _open_zip(path, where: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path if hasattr(path, "read") else os.fspath(path))
    except zipfile.BadZipFile:
        raise ValueError(f"{where} is not a streamforest model file (not a zip archive)") from None


def _read_manifest(zf: zipfile.ZipFile, where: str) -> dict:
    try:
        raw = zf.read(MANIFEST)
    except KeyError:
        raise ValueError(
            f"{where} is not a streamforest model file (no {MANIFEST} in the archive)"
        ) from None
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(
            f"{where} is not a streamforest model file (bad {MANIFEST}: {e})"
        ) from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{where} is not a streamforest model file (bad {MANIFEST})")
    return manifest


def read_manifest(path) -> dict:
    """The manifest of a model file as a dict (for inspection; nothing is checked or built)."""
    with _open_zip(path, _where(path)) as zf:
        return _read_manifest(zf, _where(path))


def _check_version(manifest: dict, where: str) -> dict:
    fmt = manifest.get("format")
    fv = manifest.get("format_version")
    lib = manifest.get("library", "?")
    lv = manifest.get("library_version", "?")
    running = _library_version()
    written = f"written by {lib} {lv} in format {fmt!r} version {fv!r}"
    readable = (
        f"this is streamforest {running}, which reads {FORMAT_NAME!r} format versions "
        f"{MIN_FORMAT_VERSION} to {FORMAT_VERSION}"
    )
    if fmt != FORMAT_NAME:
        raise ValueError(f"{where} is not a streamforest model file ({written}); {readable}")
    if type(fv) is not int:
        raise ValueError(f"{where} has no valid format version ({written}); {readable}")
    if fv > FORMAT_VERSION:
        raise ValueError(
            f"{where} was {written}, newer than this library can read; {readable}. "
            f"Load it with streamforest {lv} or later."
        )
    if fv < MIN_FORMAT_VERSION:
        raise ValueError(
            f"{where} was {written}, older than this library can read; {readable}. "
            f"Load it with the streamforest version that wrote it and retrain or convert it."
        )
    while fv < FORMAT_VERSION:
        manifest = _UPGRADES[fv](manifest)
        fv += 1
    return manifest


def load(path):
    """Read a model written by :func:`save` (``path``: ``str``, ``os.PathLike`` or a binary file
    object).  Refuses (``ValueError``) files that are not streamforest models, whose format
    version this library cannot read, or that name a class outside streamforest."""
    where = _where(path)
    with _open_zip(path, where) as zf:
        manifest = _check_version(_read_manifest(zf, where), where)
        cls = _resolve(manifest.get("class"))
        dec = _Decoder(zf, where)
        params = manifest.get("params")
        if not isinstance(params, dict) or "state" not in manifest:
            raise dec.bad("no params or state")
        for v in params.values():
            dec.decode(v)
        model = dec.decode(manifest["state"])
    if type(model) is not cls:
        raise dec.bad(f"the state is a {type(model).__name__}, not a {cls.__name__}")
    return model


def _dumps(model) -> bytes:
    """The bytes :func:`save` writes for ``model`` (for tests)."""
    buf = io.BytesIO()
    save(model, buf)
    return buf.getvalue()
