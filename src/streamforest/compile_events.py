"""Compile events: say when streamforest's kernels compile, and let a caller follow them.

numba broadcasts a ``"numba:compile"`` event (:mod:`numba.core.event`) around each
compilation of a dispatcher for a new signature, and only then: a signature loaded from the
on-disk cache returns before the event (``Dispatcher.compile`` tries ``_cache.load_overload``
first).  A listener registered once, when streamforest is imported, watches those events for
dispatchers whose ``py_func.__module__`` starts with ``streamforest.``; it costs nothing on a
kernel call (numba only calls it while compiling).  The first such event of the process logs one
INFO message on the ``"streamforest"`` logger, each top-level kernel a DEBUG line with its
compile time, and the process's total an INFO line at exit.  :func:`watch` lets a caller follow
compilation during a block (the command line's status line, the prequential evaluator's
progress bar, :func:`streamforest.warmup`'s counts).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from numba.core import event as _event

logger = logging.getLogger("streamforest")
logger.addHandler(logging.NullHandler())

PREFIX = "streamforest."

FIRST_COMPILE_MESSAGE = (
    "compiling streamforest's numba kernels: the first use of a model in a new environment "
    "pauses seconds (longer for all models), then they are cached on disk (%s) "
    "and load in a fraction of a second; streamforest.warmup() or 'streamforest warmup' does "
    "this ahead of time"
)


def cache_location() -> str:
    """Where numba writes the kernels' cache: ``NUMBA_CACHE_DIR`` (or the fallback of
    :mod:`streamforest._numba_cache`), next to the sources, or the user's cache folder."""
    import os

    from numba.core import config

    if config.CACHE_DIR:
        return config.CACHE_DIR
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    if os.access(os.path.dirname(here), os.W_OK):
        return "__pycache__ next to streamforest's sources"
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _ours(event) -> str | None:
    """Qualified name of the compiling function if it is a streamforest kernel."""
    try:
        func = event.data["dispatcher"].py_func
        module = func.__module__ or ""
    except Exception:
        return None
    return f"{module}.{func.__qualname__}" if module.startswith(PREFIX) else None


class Watch:
    """What compiled while a :func:`watch` block ran: ``compiled`` (kernel signatures compiled,
    nested ones included) and ``seconds`` (wall time spent compiling them)."""

    def __init__(self, on_start: Callable[[], None] | None, on_end: Callable[[], None] | None):
        self.compiled = 0
        self.seconds = 0.0
        self._on_start, self._on_end = on_start, on_end


class CompileListener(_event.Listener):
    """Listens to ``"numba:compile"``; acts only on streamforest dispatchers.  Compilation runs
    under numba's global compiler lock, so events arrive one at a time (in nesting order: a
    kernel's callees compile inside its own event)."""

    def __init__(self, log: logging.Logger = logger):
        self.log = log
        self.compiled = 0  # kernel signatures compiled in this process (nested ones included)
        self.seconds = 0.0  # wall time of the outermost streamforest compilations
        self.announced = False
        self._depth = 0
        self._t0 = 0.0
        self._watches: list[Watch] = []
        self._lock = threading.Lock()

    def on_start(self, event):
        name = _ours(event)
        if name is None:
            return
        try:
            self.compiled += 1
            watches = list(self._watches)
            for w in watches:
                w.compiled += 1
            if self._depth == 0:
                self._t0 = time.perf_counter()
                if not self.announced:
                    self.announced = True
                    self.log.info(FIRST_COMPILE_MESSAGE, cache_location())
                for w in watches:
                    if w._on_start is not None:
                        w._on_start()
            self._depth += 1
        except Exception:  # never break a compilation
            pass

    def on_end(self, event):
        name = _ours(event)
        if name is None:
            return
        try:
            self._depth -= 1
            if self._depth == 0:
                dt = time.perf_counter() - self._t0
                self.seconds += dt
                self.log.debug("compiled %s in %.1f s", name, dt)
                for w in list(self._watches):
                    w.seconds += dt
                    if w._on_end is not None:
                        w._on_end()
        except Exception:
            pass

    @contextmanager
    def watch(self, on_start=None, on_end=None):
        w = Watch(on_start, on_end)
        with self._lock:
            self._watches = [*self._watches, w]
        try:
            yield w
        finally:
            with self._lock:
                self._watches = [x for x in self._watches if x is not w]

    def log_total(self) -> None:
        if self.compiled:
            try:
                self.log.info(
                    "streamforest compiled %d kernel signatures in %.1f s in this process; "
                    "they load from the cache next time",
                    self.compiled,
                    self.seconds,
                )
            except Exception:
                pass


_listener: CompileListener | None = None


def install() -> CompileListener:
    """Register the compile listener (once per process; streamforest's import does it)."""
    global _listener
    if _listener is None:
        _listener = CompileListener()
        _event.register("numba:compile", _listener)
        atexit.register(_listener.log_total)
    return _listener


def watch(on_start: Callable[[], None] | None = None, on_end: Callable[[], None] | None = None):
    """Context manager yielding a :class:`Watch` of the streamforest kernels compiled during the
    block; ``on_start()`` / ``on_end()`` are called when an outermost compilation starts / ends
    (from the compiling thread)."""
    return install().watch(on_start, on_end)


def stats() -> dict:
    """Kernel signatures compiled so far in this process and the seconds it took."""
    lst = install()
    return {"compiled": lst.compiled, "seconds": lst.seconds}


install()  # once, when streamforest is imported (before any kernel can compile)

__all__ = ["Watch", "cache_location", "install", "stats", "watch"]
