"""Loading: the object graph rebuilt from a manifest's JSON tree and the archive's arrays."""

from __future__ import annotations

import base64
import zipfile
from typing import Any

import numpy as np

from ..tree_kinds.arena import Arena
from ._classes import (
    _appended_with_defaults,
    _class_name,
    _is_namedtuple_class,
    _is_object_class,
    _resolve,
)
from ._dtypes import _dtype_of
from ._limits import check_arena_entries, check_mondrian_entries
from ._parameters import check_parameters


class _Decoder:
    """Rebuilds the object graph of a manifest's JSON tree."""

    def __init__(self, zf: zipfile.ZipFile, where: str):
        self.zf = zf
        self.where = where
        self.nodes: dict[int, Any] = {}
        self.data: dict[str, np.ndarray] = {}
        self.path: list[str] = []  # the attribute path of the node being decoded

    def bad(self, msg: str) -> ValueError:
        where = "".join(self.path)
        at = f"{where}: " if where else ""
        return ValueError(f"{self.where}: corrupt or unsupported model file: {at}{msg}")

    def decode_at(self, node, step: str):
        """:meth:`decode` with ``step`` (``.name``, ``[key]``) appended to the path meanwhile."""
        self.path.append(step)
        try:
            return self.decode(node)
        finally:
            self.path.pop()

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
            if not dt.isnative:
                raise self.bad(foreign_byte_order(dt))
            return np.frombuffer(raw, dtype=dt)[0].copy()
        if t == "dtype":
            return _dtype_of(node.get("descr"))
        if t == "list":
            out = self._register(node, [])
            out.extend(self.decode_at(x, f"[{i}]") for i, x in enumerate(self._items(node)))
            return out
        if t == "dict":
            out = self._register(node, {})
            for pair in self._items(node):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise self.bad("dict item is not a key/value pair")
                k = self.decode(pair[0])
                step = f".{k}" if isinstance(k, str) and k.isidentifier() else f"[{k!r:.40}]"
                try:
                    out[k] = self.decode_at(pair[1], step)
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
        items = self._items(node)
        if len(items) != len(fields):
            raise self.bad(f"{_class_name(cls)} with {len(items)} values for {len(fields)} fields")
        if cls is Arena:  # its layout read first: the large arrays' shapes checked against it
            check_arena_entries(self, dict(zip(fields, items, strict=True)))
        elif cls.__name__ == "Trees" and cls.__module__ == "streamforest.mondrian.state":
            check_mondrian_entries(self, dict(zip(fields, items, strict=True)))
        items = [self.decode_at(x, f".{f}") for x, f in zip(items, fields, strict=True)]
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
        if isinstance(state, dict):  # before the object builds anything from its parameters
            check_parameters(cls, state, self)
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

    def _check_entry_name(self, name) -> None:
        if not (
            isinstance(name, str)
            and name.startswith("arrays/")
            and name.endswith(".npy")
            and name[7:-4].isdigit()
        ):
            raise self.bad(f"bad array entry name {name!r}")

    def entry_header(self, name) -> tuple:
        """``(shape, dtype)`` of array entry ``name`` (its data not read)."""
        self._check_entry_name(name)
        try:
            return read_npy_header(self.zf, name)
        except KeyError:
            raise self.bad(f"missing array entry {name!r}") from None
        except ValueError as e:
            raise self.bad(f"array entry {name!r} cannot be read safely ({e})") from None

    def entry(self, name) -> np.ndarray:
        """The array of entry ``name`` (read once)."""
        return self._load_entry(name)

    def _load_entry(self, name) -> np.ndarray:
        a = self.data.get(name)
        if a is not None:
            return a
        self._check_entry_name(name)
        try:
            a = read_npy(self.zf, name)
        except KeyError:
            raise self.bad(f"missing array entry {name!r}") from None
        except ValueError as e:  # a bad header, a size that is not the entry's, object arrays
            raise self.bad(f"array entry {name!r} cannot be read safely ({e})") from None

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
            if not dt.isnative:
                raise self.bad(foreign_byte_order(dt))
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


def foreign_byte_order(dtype: np.dtype) -> str:
    """Why an array of ``dtype`` (not in this machine's byte order) is refused, not converted."""
    return (
        f"dtype {dtype.str!r} is not in this machine's byte order; a model file holds each "
        f"array in the byte order that save wrote (refused, not converted: the compiled core "
        f"reads only native arrays)"
    )


def _read_header(f, info: zipfile.ZipInfo) -> tuple:
    """``(shape, fortran, dtype, count)`` of the ``.npy`` entry open as ``f`` (left at its data),
    checked: a plain dtype in this machine's byte order, a shape of whole sizes whose bytes are
    exactly what the entry declares."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"compression method {info.compress_type} (saves store or deflate)")
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"unknown .npy version {version}")
    if dtype.hasobject:
        raise ValueError("object arrays are not allowed")
    if not dtype.isnative:
        raise ValueError(foreign_byte_order(dtype))
    count = 1
    for d in shape:
        if type(d) is not int or d < 0:
            raise ValueError(f"bad shape {shape}")
        count *= d
    nbytes = count * dtype.itemsize
    header = f.tell()
    if header + nbytes != info.file_size:
        raise ValueError(
            f"a {shape} {dtype} array needs {nbytes} bytes; the entry holds "
            f"{info.file_size - header}"
        )
    return shape, fortran, dtype, count


def read_npy_header(zf: zipfile.ZipFile, name: str) -> tuple:
    """``(shape, dtype)`` of the ``.npy`` entry ``name``, checked as :func:`read_npy` checks
    it, without reading its data (only its first bytes are decompressed)."""
    info = zf.getinfo(name)  # KeyError: no such entry
    with zf.open(info) as f:
        shape, _, dtype, _ = _read_header(f, info)
    return shape, dtype


def read_npy(zf: zipfile.ZipFile, name: str) -> np.ndarray:
    """The array of the ``.npy`` entry ``name``, read without pickles, its header checked
    against the entry's size before any memory is taken for it (a corrupt header cannot ask
    for terabytes); ``ValueError`` for a header that does not describe the entry."""
    info = zf.getinfo(name)  # KeyError: no such entry
    with zf.open(info) as f:
        shape, fortran, dtype, count = _read_header(f, info)
        nbytes = count * dtype.itemsize
        buf = bytearray(nbytes)
        view, got = memoryview(buf), 0
        while got < nbytes:
            k = f.readinto(view[got:])
            if not k:
                raise ValueError("entry shorter than its header says")
            got += k
    a = np.frombuffer(buf, dtype=dtype, count=count)
    if fortran:
        return a.reshape(shape[::-1]).transpose()
    return a.reshape(shape)
