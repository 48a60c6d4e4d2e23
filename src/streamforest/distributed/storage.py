"""Where a distributed model's checkpoints live, and the rows learnt since the last one.

:class:`CheckpointStore` names and reads/writes checkpoint files in a directory: a local path,
or any URL `fsspec <https://filesystem-spec.readthedocs.io>`_ understands (``s3://...``,
``gs://...``, ``memory://...``) when fsspec is installed.  Each checkpoint is a set of model
files written by :func:`streamforest.save` (one per worker, and the driver's state) under
``ckpt-<batch>/``, then a small ``checkpoint.json`` naming them, written last: a crash between
the two leaves the previous checkpoint in force.  The files of older checkpoints are removed
once a newer one is complete.

:class:`ReplayBuffer` holds the learning batches submitted since the last complete checkpoint
(the arguments of the actors' calls: Ray object references for a broadcast batch, arrays for
a batch split by key), so a
worker restored from that checkpoint can relearn them.  It is emptied at every checkpoint, so it
never holds more than ``checkpoint_every`` rows plus one batch.
"""

from __future__ import annotations

import io
import json
import os
from collections import deque

from .. import persistence

MANIFEST = "checkpoint.json"


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec (``scheme://...``) rather than a local path."""
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def _fsspec():
    try:
        import fsspec
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "checkpoints to a URL need fsspec (pip install fsspec and the file system's "
            "package, e.g. s3fs); a local directory needs nothing"
        ) from None
    return fsspec


def join(root: str, *parts: str) -> str:
    """``root/part/...`` for a local path or a URL."""
    if is_url(root):
        return "/".join([root.rstrip("/"), *parts])
    return os.path.join(_local(root), *parts)


def write_model(model, target: str) -> None:
    """:func:`streamforest.save` ``model`` to a local path or an fsspec URL (local writes are
    atomic: a temporary file moved into place)."""
    if is_url(target):
        buf = io.BytesIO()
        persistence.save(model, buf)
        with _fsspec().open(target, "wb") as f:
            f.write(buf.getvalue())
        return
    path = _local(target)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    persistence.save(model, path)


def model_bytes(model) -> bytes:
    """The bytes :func:`streamforest.save` writes for ``model``."""
    buf = io.BytesIO()
    persistence.save(model, buf)
    return buf.getvalue()


def read_model(source):
    """A model from its saved bytes, a local path or an fsspec URL (:func:`streamforest.load`)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return persistence.load(io.BytesIO(bytes(source)))
    if not isinstance(source, str):
        raise TypeError(f"a model source must be bytes or a path/URL, got {type(source).__name__}")
    if is_url(source):
        with _fsspec().open(source, "rb") as f:
            return persistence.load(io.BytesIO(f.read()))
    return persistence.load(_local(source))


class CheckpointStore:
    """Checkpoint files of one distributed model under ``root`` (a directory or a URL).

    Parameters
    ----------
    root
        Local directory or fsspec URL.  On a cluster it must be reachable from every node (a
        shared file system, or object storage through fsspec): workers write their own files.
    """

    def __init__(self, root: str):
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"checkpoint_dir must be a path or URL, got {type(root).__name__}")
        self.root = os.fspath(root)
        if not is_url(self.root):
            os.makedirs(_local(self.root), exist_ok=True)

    def file(self, seq: int, name: str) -> str:
        """The path/URL of file ``name`` of the checkpoint after batch ``seq``."""
        return join(self.root, f"ckpt-{seq:010d}", name)

    def write_manifest(self, manifest: dict) -> None:
        """Make a checkpoint current (its files are written), then drop the previous one's."""
        old = self.read_manifest()
        data = json.dumps(manifest, indent=1, sort_keys=True).encode()
        target = join(self.root, MANIFEST)
        if is_url(self.root):
            with _fsspec().open(target, "wb") as f:
                f.write(data)
        else:
            tmp = target + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        if old is not None and old.get("seq") != manifest.get("seq"):
            self._remove(join(self.root, f"ckpt-{int(old['seq']):010d}"))

    def read_manifest(self) -> dict | None:
        """The current checkpoint's manifest, or None when there is none yet."""
        target = join(self.root, MANIFEST)
        try:
            if is_url(self.root):
                with _fsspec().open(target, "rb") as f:
                    return json.loads(f.read().decode())
            with open(target, "rb") as f:
                return json.loads(f.read().decode())
        except FileNotFoundError:
            return None

    def _remove(self, folder: str) -> None:
        try:
            if is_url(folder):
                fs, path = _fsspec().core.url_to_fs(folder)
                fs.rm(path, recursive=True)
            else:
                import shutil

                shutil.rmtree(_local(folder), ignore_errors=True)
        except (OSError, FileNotFoundError):  # pragma: no cover - a best-effort clean-up
            pass


class ReplayBuffer:
    """Learning batches since the last checkpoint: ``(seq, payload, rows)`` in order."""

    def __init__(self):
        self._items: deque = deque()
        self.rows = 0

    def append(self, seq: int, payload, rows: int) -> None:
        self._items.append((seq, payload, rows))
        self.rows += rows

    def after(self, seq: int):
        """The batches after batch ``seq``, oldest first: ``(seq, payload)``."""
        return [(s, p) for s, p, _ in self._items if s > seq]

    def clear(self) -> None:
        self._items.clear()
        self.rows = 0

    def __len__(self) -> int:
        return len(self._items)
