"""Where numba caches the compiled kernels, with a fallback when no default place is writable.

numba caches a kernel next to its source (``__pycache__``) when that folder is writable, else in
the user's cache folder (``~/.cache/numba``), else it refuses to define the kernel at all
(``RuntimeError: cannot cache function ...: no locator available``): an installed, read-only
package used by an account without a writable home would not even import.  In that case, and
only then, the cache goes to a folder of the system's temporary directory instead.  Set
``NUMBA_CACHE_DIR`` to choose the place yourself.  This runs when the package is imported.
"""

from __future__ import annotations

import os
import tempfile


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def ensure_cache_dir() -> str | None:
    """Set numba's cache folder when neither default place is writable; returns the folder
    set, or ``None`` when numba's own choice stands."""
    from numba.core import config

    if config.CACHE_DIR:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    if _writable(os.path.join(here, "__pycache__")):
        return None
    try:
        from numba.misc.appdirs import AppDirs

        if _writable(AppDirs(appname="numba", appauthor=False).user_cache_dir):
            return None
    except Exception:  # noqa: BLE001 - any failure means: not usable
        pass
    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    path = os.path.join(tempfile.gettempdir(), f"streamforest-numba-{uid}")
    if not _writable(path):
        return None  # nothing better to offer: numba's own error will say why
    config.CACHE_DIR = path
    return path


ensure_cache_dir()  # at import, before any kernel of the package is defined
