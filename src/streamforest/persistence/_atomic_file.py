"""Writing a file atomically: a temporary file beside the target, then one rename.

:func:`write_atomically` ``(path, write)`` calls ``write(file)`` on a new temporary file
``.NAME.<12 hex digits>.tmp`` in the target's folder, flushes it to disk and renames it over the
target, so the target is at any time either the old file or the whole new one.

- **Temporary files**: removed on every way out of the call (an exception from ``write``, a
  ``KeyboardInterrupt`` or any other ``BaseException`` mid-write).  A process killed outright
  (``SIGKILL``, power loss) cannot remove its own: the next save to the same target removes the
  temporary files of that target that no live writer holds.  A writer holds an exclusive
  ``flock`` on its temporary file for as long as it writes, so a save never removes the file of
  a save still running in another thread or process; where ``flock`` does not exist (Windows),
  only temporary files untouched for :data:`ORPHAN_AGE` seconds are removed.
- **Mode**: a new file gets the mode ``open`` gives a new file (``0o666`` less the process's
  umask, e.g. ``0o644``); a file that exists keeps its mode (as ``open(path, "w")`` keeps it),
  e.g. ``0o640`` stays ``0o640``.  Its owner becomes the writer (a rename makes a new file).
- **Symbolic links**: a path that is a symbolic link (or that goes through linked folders) is
  resolved first: the file the link points to is replaced, in the folder where it lives, and
  the link stays a link.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["ORPHAN_AGE", "temporary_name_pattern", "write_atomically"]

ORPHAN_AGE = 3600.0  # seconds; without flock, older temporary files of a target are orphans
_NEW_FILE_MODE = 0o666  # what open() asks for (the umask is applied by the system)


def temporary_name_pattern(base: str) -> re.Pattern:
    """The names of the temporary files of target file name ``base``."""
    return re.compile(r"\." + re.escape(base) + r"\.[0-9a-f]{12}\.tmp")


def _resolved_target(path) -> str:
    target = os.fspath(path)
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    # a link's target (followed through every link, relative ones from the link's folder); a
    # dangling link resolves to the path it names, which the save then creates
    return os.path.realpath(target)


def _held_by_a_writer(fd: int) -> bool:
    """Whether another open file holds the flock of ``fd``'s file (a save still writing)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    return False  # (released when the caller closes fd)


def remove_orphans(folder: str, base: str) -> list[str]:
    """Remove the temporary files that earlier saves to ``folder/base`` left (killed before
    they could remove them); returns their names.  Never removes the file of a save running
    now (see the module docstring)."""
    pattern = temporary_name_pattern(base)
    try:
        names = [n for n in os.listdir(folder) if pattern.fullmatch(n)]
    except OSError:
        return []
    removed = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            if fcntl is None:
                if time.time() - os.stat(path).st_mtime < ORPHAN_AGE:
                    continue
                os.unlink(path)
            else:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                try:
                    if _held_by_a_writer(fd):
                        continue
                    os.unlink(path)
                finally:
                    os.close(fd)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
        removed.append(name)
    return removed


def _create_temporary(folder: str, base: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f".{base}.{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, flags, _NEW_FILE_MODE)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue


def _sync_folder(folder: str) -> None:
    """Flush the folder's entry of the renamed file to disk (POSIX; a no-op elsewhere)."""
    if not hasattr(os, "O_DIRECTORY"):  # pragma: no cover - Windows
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomically(path, write: Callable) -> str:
    """Replace the file at ``path`` (``str`` or ``os.PathLike``) by what ``write(file)`` writes
    to a binary file object; returns the path of the file written (``path`` with symbolic links
    resolved).  See the module docstring for the guarantees."""
    target = _resolved_target(path)
    folder, base = os.path.split(target)
    remove_orphans(folder, base)
    try:
        mode = os.stat(target).st_mode & 0o7777  # an existing file keeps its mode
    except FileNotFoundError:
        mode = None
    tmp = None
    try:
        tmp, fd = _create_temporary(folder, base)
        with os.fdopen(fd, "wb") as f:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # (nobody else has this new file yet)
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            write(f)
            f.flush()
            os.fsync(f.fileno())
            if fcntl is not None:  # still holding the flock: no cleaner removes it before
                os.replace(tmp, target)
        if fcntl is None:  # pragma: no cover - Windows (an open file cannot be renamed)
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        tmp = None
        _sync_folder(folder)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return target
