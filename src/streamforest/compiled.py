"""How streamforest compiles its functions with numba: :func:`kernel` and :func:`entry`.

- :func:`kernel`: a function that runs only inside other compiled code (the trees' steps, the
  sketches' updates ...).  numba makes no Python wrapper for it (a wrapper per function was a
  fifth of every cold start), and calling it from Python raises ``TypeError``: its compiled
  code has no Python calling convention to run.
- :func:`entry`: a function that Python calls (a pass over a chunk, a per-example step); the
  rest of its options are numba's (``nogil=True``, ``_nrt=False`` ...).

Both are cached on disk (see :mod:`streamforest._numba_cache`: a cached kernel is valid only for
the very sources of the package that compiled it).
"""

from __future__ import annotations

from collections.abc import Callable

from numba.core.registry import CPUDispatcher

# (_numba_cache: the cache's place and its validity, set before any kernel is defined)
from . import _link_only, _numba_cache, _numba_pipeline  # noqa: F401

__all__ = ["entry", "entry_point", "kernel"]


class _KernelDispatcher(CPUDispatcher):
    """A dispatcher whose compiled versions serve compiled callers only: they are never
    registered for calls from Python (they have no Python wrapper), and a call from Python
    raises instead of compiling.  They compile to LLVM IR only, which the entry points that
    call them link (:mod:`streamforest._link_only`)."""

    def __init__(self, *args, **kwargs):
        if _link_only.ENABLED:
            kwargs.setdefault("pipeline_class", _link_only.KernelCompiler)
        super().__init__(*args, **kwargs)

    def enable_caching(self):
        if _link_only.ENABLED:
            self._cache = _link_only.KernelFunctionCache(self.py_func)
        else:
            super().enable_caching()

    def add_overload(self, cres):
        self.overloads[tuple(cres.signature.args)] = cres

    def _compile_for_args(self, *args, **kws):
        raise TypeError(
            f"{self.py_func.__module__}.{self.py_func.__qualname__} is a compiled kernel that runs "
            "only inside other compiled code; it cannot be called from Python"
        )


class _EntryDispatcher(CPUDispatcher):
    """numba's dispatcher compiling with streamforest's pipeline (:mod:`._numba_pipeline`)."""

    def __init__(self, *args, **kwargs):
        if _numba_pipeline.ENABLED:
            kwargs.setdefault("pipeline_class", _numba_pipeline.Compiler)
        super().__init__(*args, **kwargs)


def _decorate(fn, options: dict, dispatcher):
    def wrap(func):
        disp = dispatcher(py_func=func, locals={}, targetoptions=options)
        disp.enable_caching()
        return disp

    return wrap if fn is None else wrap(fn)


def kernel(fn=None, **options):
    """Compile ``fn`` for compiled callers only (``@kernel`` or ``@kernel(inline="always")``;
    ``options`` are numba's)."""
    options = {"nopython": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True, **options}
    return _decorate(fn, options, _KernelDispatcher)


def entry(fn=None, **options):
    """Compile ``fn`` as a function Python calls (``@entry`` or ``@entry(nogil=True)``;
    ``options`` are numba's)."""
    return _decorate(fn, {"nopython": True, **options}, _EntryDispatcher)


def entry_point(dispatcher, args: tuple) -> Callable:
    """The compiled entry point of ``dispatcher`` for the types of ``args`` (loaded from the
    cache or compiled now, as a first call would).

    Calling it does what calling the dispatcher does minus the dispatch: numba types every
    argument on every call to pick a signature, which for a named tuple of arrays (an
    :class:`~streamforest.tree_kinds.arena.Arena`) costs more than a tree's whole
    prediction.  The entry point only unboxes.  It does **not** check types: use it only where
    every later call passes arguments of exactly these types (arrays the caller made itself,
    floats it converted), as the per-example paths of the engine do.
    """
    types = tuple(dispatcher.typeof_pyval(a) for a in args)
    return dispatcher.compile(types)
