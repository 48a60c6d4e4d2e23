"""The model file: a zip archive of a JSON manifest and ``.npy`` arrays, and its versions."""

from __future__ import annotations

import json
import os
import platform
import struct
import zipfile
import zlib
from collections.abc import Callable

import numpy as np

from ._classes import _PKG, _class_name, _is_object_class
from ._encoder import _Encoder

FORMAT_NAME = "streamforest-model"
FORMAT_VERSION = 7  # written by this library
MIN_FORMAT_VERSION = 1  # oldest format this library reads
MANIFEST = "manifest.json"

# format_version v -> function turning a v manifest into a v + 1 manifest
_UPGRADES: dict[int, Callable[[dict], dict]] = {
    1: lambda manifest: manifest,  # 1 -> 2: the objects upgrade themselves (see the docstring)
    2: lambda manifest: manifest,  # 2 -> 3: likewise (the arena appends the class fields)
    3: lambda manifest: manifest,  # 3 -> 4: likewise (the arena appends the Bayesian leaf fields)
    4: lambda manifest: (
        manifest
    ),  # 4 -> 5: likewise (the arena keeps lf_nominal_class_weights's nominal rows)
    5: lambda manifest: manifest,  # 5 -> 6: load converts Bayesian leaves (._state_upgrades)
    6: lambda manifest: manifest,  # 6 -> 7: a feature space without a cap sets none itself
}


_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed zip timestamps: the same model gives the same bytes


def _library_version() -> str:
    from .._version import __version__

    return __version__


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


def _where(path) -> str:
    if hasattr(path, "read"):
        return repr(getattr(path, "name", "<file object>"))
    return repr(os.fspath(path))


def _open_zip(path, where: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path if hasattr(path, "read") else os.fspath(path))
    except zipfile.BadZipFile:
        raise ValueError(f"{where} is not a streamforest model file (not a zip archive)") from None
    except CORRUPT_ERRORS as e:
        raise corrupt(where, e) from None


# what reading a damaged archive raises besides ValueError (a bad checksum, a broken deflate
# stream, a truncated entry, nonsense in a header, an unknown compression method, encryption):
# load turns each into a ValueError naming the file
CORRUPT_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, struct.error,
                  NotImplementedError, RuntimeError, OverflowError, UnicodeDecodeError)  # fmt: skip


def corrupt(where: str, error: BaseException) -> ValueError:
    """The ``ValueError`` of a damaged model file, naming the file and the original error."""
    return ValueError(
        f"{where}: corrupt or unsupported model file ({type(error).__name__}: {error})"
    )


def _read_manifest(zf: zipfile.ZipFile, where: str) -> dict:
    try:
        raw = zf.read(MANIFEST)
    except CORRUPT_ERRORS as e:
        raise corrupt(where, e) from None
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
