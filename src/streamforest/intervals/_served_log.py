"""The bounded log of served intervals of :class:`~streamforest.AdaptiveConformal`: what the
wrapper gave for a row, kept until the row's label is learnt, so that the controllers learn from
the intervals that were served however predictions and labels interleave.

A row is known by a 64-bit digest of its feature values (:func:`row_keys`: BLAKE2b of the
float64 bytes of a numeric row, of the names and values of a dict), so the label must come with
the same features in the same form (an array row for an array row, a dict for a dict; a dict's
numeric values are compared as float64, as an array row's, and ``-0.0`` as ``0.0``, a NaN
matching a NaN).  Only the digest is kept, never the row: a record costs a fixed number of
bytes whatever the row's width.  Records are matched first in, first out per key.

**When full.**  The log holds the last ``size`` served rows: serving a row when ``size`` records
wait evicts the oldest, and a label that comes for an evicted row is *late* (the wrapper learns
it as ``unmatched`` says and warns once).  The digests of about the last ``memory`` keys with
evicted records (``memory = max(10 * size, 10_000)``; :class:`EvictedKeys`) are remembered to
tell a late label from one never served; a label later than that counts as unmatched (only
:attr:`~AdaptiveConformal.log_stats` and the message of ``unmatched="raise"`` differ: it is
learnt the same way).  So the log's memory is bounded by ``size`` and ``memory``
(:attr:`ServedLog.nbytes`, counted in the wrapper's ``memory_bytes``), whatever the stream."""

from __future__ import annotations

import hashlib
import numbers
import sys
from array import array
from collections.abc import Mapping

import numpy as np

#: Bytes of a key (a 64-bit int), a key's FIFO list of serials, a serial (pymalloc sizes).
_KEY_BYTES, _LIST_BYTES, _SERIAL_BYTES = 48, 96, 32


def _digest(*parts: bytes) -> int:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(p)
    return int.from_bytes(h.digest(), "little")


def _floats(values) -> bytes:
    """The float64 bytes of ``values`` (``-0.0`` as ``0.0``); TypeError if one is not a
    number."""
    a = array("d", values)
    if 0.0 in a:
        a = array("d", [v + 0.0 for v in a])
    return a.tobytes()


def _canon(v):
    """A value as a dict row's key compares it: numbers equal to a float64 as that float."""
    if isinstance(v, numbers.Real):
        try:
            f = float(v)
        except (TypeError, ValueError, OverflowError):
            return v
        if f == v or f != f:
            return f + 0.0
    return v


def _dict_key(x: Mapping) -> int:
    if not isinstance(x, Mapping):
        raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
    try:
        names = "\x00".join(x).encode("utf-8", "surrogatepass")
        return _digest(b"d%d:" % len(x), names, _floats(x.values()))
    except (TypeError, ValueError, OverflowError):
        pass
    items = tuple((_canon(k), _canon(v)) for k, v in x.items())
    return _digest(b"o", repr(items).encode("utf-8", "surrogatepass"))


def row_keys(X, one: bool) -> list:
    """The keys (64-bit digests) of the rows of ``X`` (``one``: ``X`` is one dict)."""
    if one:
        return [_dict_key(X)]
    if isinstance(X, np.ndarray) and X.dtype.kind in "fiub":
        A = np.ascontiguousarray(X, dtype=np.float64)
        if A.ndim == 1:
            A = A[:, None]
        if A.shape[0] == 0:
            return []
        tag = b"a%d:" % A.shape[1]
        return [_digest(tag, row) for row in A.view(np.uint8).reshape(A.shape[0], -1)]
    to_numpy = getattr(X, "to_numpy", None)
    if to_numpy is not None and hasattr(X, "columns"):  # a DataFrame
        try:
            return row_keys(to_numpy(dtype=np.float64), False)
        except (TypeError, ValueError):
            rows = X.itertuples(index=False, name=None)
            return [_digest(b"r", repr(tuple(map(_canon, r))).encode()) for r in rows]
    if isinstance(X, (list, tuple)) and X and isinstance(X[0], Mapping):
        return [_dict_key(x) for x in X]
    A = np.asarray(X, dtype=object)
    if A.ndim == 1:
        A = A[:, None]
    return [_digest(b"r", repr(tuple(map(_canon, r))).encode()) for r in A.tolist()]


class EvictedKeys:
    """How many evicted unmatched records each key has, for about the last ``memory`` keys
    evicted: the newest in a dict, the older in up to :attr:`GENERATIONS` frozen generations of
    ``memory / GENERATIONS`` keys, each two sorted numpy arrays (keys, counts); the oldest
    generation is forgotten whole.  So the memory is ``memory`` times about 12 bytes plus one
    generation's dict, in few large blocks (no scattered small objects to fragment the heap)."""

    GENERATIONS = 8

    def __init__(self, memory: int):
        self.memory = int(memory)
        self.per_generation = max(self.memory // self.GENERATIONS, 1)
        self.new: dict = {}  # key -> count
        self.frozen: list = []  # (sorted uint64 keys, int64 counts), oldest first

    def __len__(self) -> int:
        return len(self.new) + sum(k.shape[0] for k, _ in self.frozen)

    def add(self, key: int) -> None:
        self.new[key] = self.new.get(key, 0) + 1
        if len(self.new) >= self.per_generation:
            keys = np.fromiter(self.new.keys(), np.uint64, len(self.new))
            counts = np.fromiter(self.new.values(), np.int64, len(self.new))
            order = np.argsort(keys)
            self.frozen.append((keys[order], counts[order]))
            self.new = {}
            del self.frozen[: max(0, len(self.frozen) - (self.GENERATIONS - 1))]

    def counts(self, keys: list) -> np.ndarray:
        """The evicted records of each of ``keys``."""
        out = np.array([self.new.get(k, 0) for k in keys], np.int64)
        if self.frozen and keys:
            q = np.array(keys, np.uint64)
            for gk, gc in self.frozen:
                i = np.minimum(np.searchsorted(gk, q), gk.shape[0] - 1)
                out += np.where(gk[i] == q, gc[i], 0)
        return out

    def take(self, key: int) -> None:
        """One evicted record of ``key`` learnt (late): the oldest generation's first."""
        q = np.uint64(key)
        for gk, gc in self.frozen:
            i = int(np.searchsorted(gk, q))
            if i < gk.shape[0] and gk[i] == q and gc[i] > 0:
                gc[i] -= 1
                return
        left = self.new[key] - 1
        if left:
            self.new[key] = left
        else:
            del self.new[key]

    @property
    def nbytes(self) -> int:
        frozen = sum(k.nbytes + c.nbytes for k, c in self.frozen)
        return frozen + sys.getsizeof(self.new) + len(self.new) * _KEY_BYTES


class ServedLog:
    """Records ``(n_levels, width)`` per served row, for the last ``size`` rows served."""

    def __init__(self, size: int, width: int):
        self.size = int(size)
        self.width = int(width)
        self.rec = np.zeros((self.size, 0, self.width))
        self.n_levels = np.zeros(self.size, np.int64)
        self.layout = np.zeros(self.size, np.int64)  # the wrapper's tracked levels when served
        self.live = np.zeros(self.size, np.bool_)
        self.slot_key: list = [None] * self.size  # each slot's key (an int)
        self.version = np.zeros(self.size, np.int64)
        self.call = np.zeros(self.size, np.int64)
        self.by_key: dict = {}  # key -> list of serials, oldest first
        self.memory = max(10 * self.size, 10_000)  # keys of evicted records remembered
        self.evicted = EvictedKeys(self.memory)
        self.cells = None  # (size, families): the groups that served each record (or None)
        self.serial = 0
        self.calls = 0
        self.n_matched = 0
        self.n_unmatched = 0
        self.n_late = 0

    def _fit_levels(self, R: int) -> None:
        if R > self.rec.shape[1]:
            grown = np.zeros((self.size, R, self.width))
            grown[:, : self.rec.shape[1]] = self.rec
            self.rec = grown

    def add(self, keys: list, rec: np.ndarray, version: int, cells=None, layout: int = 0) -> None:
        """Log the rows served by one call (``rec``: ``(n, R, width)``; ``cells``: the groups
        that served them, ``(n, families)``).  A row whose key already has a record from an
        earlier call with nothing learnt since (the same interval asked for again) is not
        logged twice."""
        if self.size == 0:
            return
        if cells is not None and (self.cells is None or self.cells.shape[1] != cells.shape[1]):
            self.cells = np.full((self.size, cells.shape[1]), -1, np.int64)
        self.calls += 1
        R = rec.shape[1]
        self._fit_levels(R)
        for i, key in enumerate(keys):
            q = self.by_key.get(key)
            if q:
                last = q[-1] % self.size
                if self.version[last] == version and self.call[last] != self.calls:
                    continue
            slot = self.serial % self.size
            if self.live[slot]:
                self._evict(slot)
            self.rec[slot, :R] = rec[i]
            if cells is not None:
                self.cells[slot] = cells[i]
            self.n_levels[slot] = R
            self.layout[slot] = layout
            self.live[slot] = True
            self.slot_key[slot] = key
            self.version[slot] = version
            self.call[slot] = self.calls
            if q is None:
                q = self.by_key[key] = []
            q.append(self.serial)
            self.serial += 1

    def _evict(self, slot: int) -> None:
        key = self.slot_key[slot]
        q = self.by_key.get(key)
        if q:
            q.pop(0)  # (the globally oldest record is its key's oldest)
            if not q:
                del self.by_key[key]
        self.evicted.add(key)
        self.live[slot] = False
        self.slot_key[slot] = None

    def find(self, keys: list):
        """For each key the slot of its oldest unmatched record (``-1``: none) and whether that
        is a late label (a record of the key was evicted unmatched).  Changes nothing; a key
        asked twice gets its next record."""
        slots = np.full(len(keys), -1, np.int64)
        late = np.zeros(len(keys), np.bool_)
        taken: dict = {}
        rest = []
        for i, key in enumerate(keys):
            q = self.by_key.get(key)
            k = taken.get(key, 0)
            if q is not None and k < len(q):
                slots[i] = q[k] % self.size
                taken[key] = k + 1
            else:
                rest.append(i)
        if rest and len(self.evicted):
            counts = self.evicted.counts([keys[i] for i in rest])
            for i, c in zip(rest, counts.tolist(), strict=True):
                late[i] = c > taken.get(("late", keys[i]), 0)
                if late[i]:
                    taken[("late", keys[i])] = taken.get(("late", keys[i]), 0) + 1
        return slots, late

    def commit(self, keys: list, slots: np.ndarray, late: np.ndarray) -> None:
        """Remove the records :meth:`find` matched and count matched, late and unmatched rows."""
        for key, slot, lt in zip(keys, slots, late, strict=True):
            if slot >= 0:
                q = self.by_key[key]
                q.pop(0)
                if not q:
                    del self.by_key[key]
                self.live[slot] = False
                self.slot_key[slot] = None
                self.n_matched += 1
            elif lt:
                self.evicted.take(key)
                self.n_late += 1
            else:
                self.n_unmatched += 1

    def __len__(self) -> int:
        return int(self.live.sum())

    @property
    def nbytes(self) -> int:
        """The log's memory: its arrays, and its keys' dicts and lists at their CPython
        sizes."""
        arrays = (self.rec, self.n_levels, self.layout, self.live, self.version, self.call)
        own = sum(a.nbytes for a in arrays) + (self.cells.nbytes if self.cells is not None else 0)
        own += sys.getsizeof(self.slot_key) + sys.getsizeof(self.by_key)
        own += self.evicted.nbytes
        n_live = int(self.live.sum())  # (a record holds its key and its serial)
        own += n_live * (_KEY_BYTES + _SERIAL_BYTES)
        return own + len(self.by_key) * _LIST_BYTES
