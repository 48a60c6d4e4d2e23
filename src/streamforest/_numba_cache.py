"""Where numba caches the compiled kernels, and when a cached kernel is valid.

**Validity.**  numba checks a cached function against its own source file only, but a kernel
also holds the code of every kernel it calls from other modules (and their constants): after an
edit of one of those, numba would load stale code (wrong results, or a crash when a layout
changed).  So every function of this package is cached with the *package stamp*: a hash of the
contents of all of the package's source files, computed once at import.  A cached kernel loads
only under the very sources that compiled it; after any change of the package (an edit, a
``git pull`` into an editable install) every kernel compiles again once.

**Place.**
numba caches a kernel next to its source (``__pycache__``) when that folder is writable, else in
the user's cache folder (``~/.cache/numba``), else it refuses to define the kernel at all
(``RuntimeError: cannot cache function ...: no locator available``): an installed, read-only
package used by an account without a writable home would not even import.  In that case, and
only then, the cache goes to a folder of the system's temporary directory instead.  Set
``NUMBA_CACHE_DIR`` to choose the place yourself.  This runs when the package is imported.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def package_stamp(root: str = PACKAGE_DIR) -> str:
    """A hash of the contents of every ``.py`` file under ``root`` (paths included)."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


PACKAGE_STAMP = package_stamp()


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


def _install_package_locator() -> None:
    """Cache this package's functions under the package stamp (see the module docstring): a
    locator that numba asks first, which keeps the place numba's own locators choose and
    replaces the source file's stamp by the package's."""
    from numba.core import caching

    cache_impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (numba < 0.62)
    base_locator = getattr(caching, "CacheLocator", None) or caching._CacheLocator

    class PackageStampLocator(base_locator):
        def __init__(self, base):
            self._base = base

        def ensure_cache_path(self):
            self._base.ensure_cache_path()

        def get_cache_path(self):
            return self._base.get_cache_path()

        def get_source_stamp(self):
            return PACKAGE_STAMP

        def get_disambiguator(self):
            return self._base.get_disambiguator()

        def __getattr__(self, name):
            # numba reads other attributes of its locators (``_py_file`` when it warns that a
            # function cannot be cached, e.g. under NUMBA_OPT=0): the base locator's
            return getattr(self.__dict__["_base"], name)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                return None
            for other in cache_impl._locator_classes:
                if other is cls:
                    continue
                base = other.from_function(py_func, py_file)
                if base is not None:
                    return cls(base)
            return None

    classes = cache_impl._locator_classes
    if not any(c.__name__ == "PackageStampLocator" for c in classes):
        classes.insert(0, PackageStampLocator)


ensure_cache_dir()  # at import, before any kernel of the package is defined
_install_package_locator()
