"""Which core runs a forest's trees: the compiled C++ core (:mod:`streamforest._core`) for the
tree kinds it runs, numba's kernels (:mod:`.kernels`) for the others.

The one place the engine chooses: :func:`kernels_for` gives, for the kind of an arena's trees,
a namespace with the names of :mod:`.kernels` (its constants and every entry point), whose
entry points are the core's where the core has them and runs the kind
(``_core.tree.supports``); :func:`entry_point_for` does the same for one numba entry point
called through :meth:`~streamforest.engine.per_example.PerExample.call` (the per-example
paths, a classifier's :func:`.class_votes.predict_proba_one` included); :func:`vote_rows`
votes a classifier's trees' probabilities.  The core's functions take the same arguments in
the same order as the numba entry points they replace and give the same bits, so a forest may
switch between them at any call (an interval method's own numba kernels read and write the
same arena).

``STREAMFOREST_CORE=numba`` in the environment (or :func:`use_core` ``(False)``) keeps every
forest on the numba kernels: for comparisons and benchmarks of the two cores.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import fields

from .. import _core
from . import class_votes as numba_class_votes
from . import kernels as numba_kernels

# the entry points of .kernels the core has (same names, same arguments)
PORTED = (
    "draw_weights",
    "mean_columns",
    "learn_rows",
    "predict_learn_rows",
    "predict_learn_rows_lw",
    "predict_rows",
    "apply_rows",
    "background_rows",
    "draw_background",
    "init_tree",
    "rebuild_hash_at",
    "lacks_room",
    "predict_trees_memo",
    "learn_one",
    "learn_background_one",
    "predict_trees",
    "predict_one",
    "learn_one_h",
    "predict_one_h",
    "weighted_columns",
    "tree_log_weights",
)


class _CoreKernels:
    """:mod:`.kernels`'s names, its ported entry points the core's."""

    def __init__(self) -> None:
        for name, value in vars(numba_kernels).items():
            if not name.startswith("__"):
                setattr(self, name, value)
        for name in PORTED:
            setattr(self, name, getattr(_core.engine, name))

    def __repr__(self) -> str:
        return "<streamforest engine kernels: the compiled core's>"


CORE = _CoreKernels()
# the numba entry point -> the core's function of the same name
_CORE_OF = {getattr(numba_kernels, name): getattr(_core.engine, name) for name in PORTED}
# a classifier forest's answer (.class_votes): the entry points the core has
CLASS_VOTES = ("predict_proba_one", "vote_rows")
_CORE_OF.update({getattr(numba_class_votes, name): getattr(_core.engine, name)
                 for name in CLASS_VOTES})  # fmt: skip

_enabled = os.environ.get("STREAMFOREST_CORE", "").strip().lower() != "numba"
_runs: dict = {}  # KindTag -> whether the core runs it


def core_runs(kind) -> bool:
    """Whether the core runs the trees of an arena of kind ``kind`` (a
    :class:`~streamforest.tree_kinds.kinds.KindTag`; ``None``: no tree yet, numba's)."""
    if not _enabled or kind is None:
        return False
    r = _runs.get(kind)
    if r is None:
        k = kind.kind
        r = _runs[kind] = bool(_core.tree.supports(**{f.name: getattr(k, f.name)
                                                      for f in fields(k)}))  # fmt: skip
    return r


def core_enabled() -> bool:
    """Whether the compiled core runs what it supports (``False`` under
    ``STREAMFOREST_CORE=numba`` or after :func:`use_core` ``(False)``): the choice for kernels
    that read no tree (any kind, or none yet)."""
    return _enabled


def kernels_for(kind):
    """The engine's kernels for trees of ``kind``: :data:`CORE` or the numba module."""
    return CORE if core_runs(kind) else numba_kernels


_CORE_FUNCTION = type(_core.engine.learn_one)  # (nanobind's function type)


def entry_point_for(kernel, kind):
    """The core's function replacing numba entry point ``kernel`` for trees of ``kind``, or
    ``None`` (numba's entry point then).  A function of the core itself (a method's kernel that
    the method chose with :func:`core_runs`) is its own entry point."""
    if type(kernel) is _CORE_FUNCTION:
        return kernel
    return _CORE_OF.get(kernel) if core_runs(kind) else None


ENTRY_POINTS: dict = {}  # (kernel, tree kind) -> its entry point (see PerExample.call)


def vote_rows(PT, mean, votes, cls) -> None:
    """:func:`.class_votes.vote_rows` (the trees' class probabilities voted, a block of rows):
    the core's, numba's under ``STREAMFOREST_CORE=numba`` (it reads no tree, so any kind)."""
    (_core.engine.vote_rows if _enabled else numba_class_votes.vote_rows)(PT, mean, votes, cls)


def use_core(enabled: bool) -> None:
    """Run supported tree kinds on the compiled core (``True``, the default) or every kind on
    the numba kernels (``False``): for comparisons of the two in one process."""
    global _enabled
    _enabled = bool(enabled)
    ENTRY_POINTS.clear()


@contextmanager
def using_core(enabled: bool):
    """:func:`use_core` for the ``with`` block only."""
    before = _enabled
    use_core(enabled)
    try:
        yield
    finally:
        use_core(before)
