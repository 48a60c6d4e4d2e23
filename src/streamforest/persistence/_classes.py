"""Which classes a model file may name, and the attribute paths that error messages name."""

from __future__ import annotations

import importlib

_PKG = "streamforest"
# modules that moved since files were written (the module a file names -> where it is now):
# the compiled tree internals left ``trees`` (now the tree estimators) for ``tree_kinds``, and the
# engine's kernel modules became public
_MOVED_MODULES = {
    "streamforest.trees._state": "streamforest.tree_kinds.state",
    "streamforest.trees._arena": "streamforest.tree_kinds.arena",
    "streamforest.trees.tree_kind": "streamforest.tree_kinds.kinds",
    "streamforest.trees.inspection": "streamforest.tree_kinds.inspection",
    "streamforest.engine._kernels": "streamforest.engine.kernels",
}
# classes that moved since files were written (``module:QualName`` a file names -> where it is)
_MOVED_CLASSES = {
    "streamforest.engine.core:_Lock": "streamforest.concurrency:PicklableLock",
    "streamforest.mondrian.engine:_Lock": "streamforest.concurrency:PicklableLock",
}
# bases a streamforest class may have besides streamforest classes and object
_HARMLESS_BASES = ("abc.ABC", "typing.Generic")


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
    module, qual = _MOVED_CLASSES.get(spec, spec).split(":")
    module = _MOVED_MODULES.get(module, module)
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
