"""The real regression datasets kept as gzipped CSV files beside the project (``../shared/data/``).

For the datasets bundled with streamforest, downloaded from their source or cached, see
:mod:`streamforest.datasets`, which :func:`dataset` falls back to: that package registers
itself here (:func:`register_fallback`) when it is imported, as ``import streamforest`` does,
so that streams, below it, need not import it.  The folder holds
``NAME.csv.gz`` files (numeric features, target last and named ``target``) and a
``manifest.json`` describing them.  Benchmarks and examples use them; tests do not need them.
The folder is found from ``root=``, else the ``STREAMFOREST_DATA`` environment variable, else
``../shared/data`` and ``shared/data`` relative to the working directory.
"""

from __future__ import annotations

import json
import os

from .data_folder import data_root
from .files import FileStream

# where dataset() looks when the folder lacks a name: (label, names(), stream(name)) triples
_FALLBACKS: list[tuple] = []


def register_fallback(label: str, names, stream) -> None:
    """Have :func:`dataset` (without ``root``) serve the datasets ``names()`` lists with
    ``stream(name)`` when the folder does not hold them (``label`` names them in errors)."""
    if all(entry[0] != label for entry in _FALLBACKS):
        _FALLBACKS.append((label, names, stream))


def manifest(root=None) -> dict:
    """The folder's ``manifest.json``: name -> rows, features, source, licence, ..."""
    with open(os.path.join(data_root(root), "manifest.json")) as fh:
        return json.load(fh)


def list_datasets(root=None) -> list[str]:
    """Names of the datasets in the folder."""
    return sorted(manifest(root))


def dataset(name: str, root=None):
    """The stream of dataset ``name``, rows in their original order: from the datasets folder
    (``root``, or the one found as the module docstring says), else (no ``root`` given) a dataset
    of :mod:`streamforest.datasets` (bundled, cached or downloaded)."""
    try:
        folder = data_root(root)
        info = manifest(folder)
    except FileNotFoundError:
        if root is not None:
            raise
        info = {}
    if name in info:
        path = os.path.join(folder, info[name].get("file", f"{name}.csv.gz"))
        return FileStream(path, "target")
    known = sorted(info)
    if root is None:
        for label, names, stream in _FALLBACKS:
            if name in names():
                return stream(name)
            known += [f"{n} ({label})" for n in names()]
    raise ValueError(f"no dataset {name!r}; available: {', '.join(known)}")
