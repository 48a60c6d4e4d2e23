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
        "friedman1-permute": "Friedman #1 with its features permuted in the 2nd and last quarters "
        "(the thesis' FRIEDMAN, abrupt drift at n/4, n/2, 3n/4)",
        "hyperplane": "rotating hyperplane (5 features), incremental drift at n/4, n/2, 3n/4",
        "hyperplane-stationary": "hyperplane without rotation",
        "2dplanes": "Breiman's 2dplanes (10 discrete features), stationary",
        "mv": "Torgo's mv (10 dependent features, 3 nominal), stationary",
    }
)


def constructor(name: str) -> tuple[type, dict]:
    """The class of built-in stream ``name`` and the arguments its name fixes."""
    if name not in BUILTIN:
        raise ValueError(f"unknown stream {name!r}; built-in streams: {', '.join(BUILTIN)}")
    if name.startswith("friedman"):
        function, _, drift = name.removeprefix("friedman").partition("-")
        return Friedman, {"function": int(function), "drift": drift or None}
    if name.startswith("hyperplane"):
        return Hyperplane, {"drift": name == "hyperplane"}
    return (TwoDPlanes, {}) if name == "2dplanes" else (MV, {})


def parameters(name: str) -> dict:
    """The parameters of built-in stream ``name`` that :func:`make` takes besides ``n`` and
    ``seed``, with their defaults (e.g. ``{"noise": 1.0}`` for the Friedman streams)."""
    import inspect

    cls, fixed = constructor(name)
    sig = inspect.signature(cls.__init__)
    return {
        k: p.default
        for k, p in sig.parameters.items()
        if k not in ("self", "n", "seed", *fixed) and p.default is not inspect.Parameter.empty
    }


def make(name: str, n: int = 100_000, seed: int | None = None, **params) -> Stream:
    """The built-in stream ``name`` (see :data:`BUILTIN`) with ``n`` rows; ``params`` are the
    stream's other parameters (:func:`parameters`)."""
    cls, fixed = constructor(name)
    unknown = sorted(set(params) - set(parameters(name)))
    if unknown:
        takes = ", ".join(parameters(name)) or "no other parameter"
        raise ValueError(
            f"stream {name!r} has no parameter {', '.join(map(repr, unknown))} (it takes {takes})"
        )
    return cls(n=n, seed=seed, **fixed, **params)


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
    "constructor",
    "data_root",
    "dataset",
    "from_file",
    "list_datasets",
    "make",
    "manifest",
    "parameters",
]
