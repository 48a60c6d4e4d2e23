"""Data streams: seeded synthetic generators, file streams and the shared real datasets.

Every stream yields ``(X, y)`` chunks (:meth:`Stream.chunks`), whole arrays (:meth:`Stream.arrays`)
or River-style ``(dict, y)`` pairs (iteration).  :func:`make` builds a built-in stream by name
(the names :data:`BUILTIN` lists, as the command line uses them); :class:`ArrayStream` streams
arrays already in memory.
"""

from __future__ import annotations

from .arrays import ArrayStream
from .base import BLOCK, Stream, SyntheticStream
from .classification import LED, SEA, STAGGER, Agrawal, RandomRBF, RotatingHyperplane
from .datasets import data_root, dataset, list_datasets, manifest
from .drift import ConceptDrift
from .files import FileStream, from_file
from .friedman import Friedman
from .hyperplane import Hyperplane
from .torgo import MV, TwoDPlanes

_DRIFTS = {
    None: "stationary",
    "lea": "local expanding abrupt drift at n/4, n/2, 3n/4",
    "gra": "global abrupt drift at n/2, back at 3n/4",
    "gsg": "global gradual drift from n/2 and 3n/4 (n/10 rows each)",
}
_FUNCTIONS = {1: "Friedman #1 (10 features)", 2: "Friedman #2 impedance", 3: "Friedman #3 phase"}

BUILTIN: dict[str, str] = {
    f"friedman{f}" + (f"-{d}" if d else ""): f"{_FUNCTIONS[f]}, {_DRIFTS[d]}"
    for f in (1, 2, 3)
    for d in _DRIFTS
}
BUILTIN.update(
    {
        "hyperplane": "rotating hyperplane (5 features), incremental drift at n/4, n/2, 3n/4",
        "hyperplane-stationary": "hyperplane without rotation",
        "2dplanes": "Breiman's 2dplanes (10 discrete features), stationary",
        "mv": "Torgo's mv (10 dependent features, 3 nominal), stationary",
    }
)


def make(name: str, n: int = 100_000, seed: int | None = None) -> Stream:
    """The built-in stream ``name`` (see :data:`BUILTIN`) with ``n`` rows."""
    if name not in BUILTIN:
        raise ValueError(f"unknown stream {name!r}; built-in streams: {', '.join(BUILTIN)}")
    if name.startswith("friedman"):
        function, _, drift = name.removeprefix("friedman").partition("-")
        return Friedman(function=int(function), drift=drift or None, n=n, seed=seed)
    if name.startswith("hyperplane"):
        return Hyperplane(n=n, drift=name == "hyperplane", seed=seed)
    if name == "2dplanes":
        return TwoDPlanes(n=n, seed=seed)
    return MV(n=n, seed=seed)


__all__ = [
    "Agrawal",
    "ArrayStream",
    "BLOCK",
    "BUILTIN",
    "ConceptDrift",
    "FileStream",
    "Friedman",
    "Hyperplane",
    "LED",
    "MV",
    "RandomRBF",
    "RotatingHyperplane",
    "SEA",
    "STAGGER",
    "Stream",
    "SyntheticStream",
    "TwoDPlanes",
    "data_root",
    "dataset",
    "from_file",
    "list_datasets",
    "make",
    "manifest",
]
