"""The bounded log of served intervals of :class:`~streamforest.AdaptiveConformal`: what the
wrapper gave for a row, kept until the row's label is learnt, so that the controllers learn from
the intervals that were served however predictions and labels interleave.

A row is known by its feature values (:func:`row_keys`: the bytes of a numeric row, the items of
a dict), so the label must come with the same features in the same form (an array row for an
array row, a dict for a dict).  Records are matched first in, first out per key; the log holds
the last ``size`` served rows (older records are evicted, and a label that comes for an evicted
row is *late*)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def _dict_key(x: Mapping):
    if not isinstance(x, Mapping):
        raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
    items = tuple(x.items())
    try:
        hash(items)
    except TypeError:
        return ("repr", repr(items))
    return items


def row_keys(X, one: bool) -> list:
    """Hashable keys of the rows of ``X`` (``one``: ``X`` is one dict)."""
    if one:
        return [_dict_key(X)]
    if isinstance(X, np.ndarray) and X.dtype.kind in "fiub":
        A = np.ascontiguousarray(X, dtype=np.float64)
        if A.ndim == 1:
            A = A[:, None]
        if A.shape[0] == 0:
            return []
        return [bytes(row) for row in A.view(np.uint8).reshape(A.shape[0], -1)]
    to_numpy = getattr(X, "to_numpy", None)
    if to_numpy is not None and hasattr(X, "columns"):  # a DataFrame
        try:
            return row_keys(to_numpy(dtype=np.float64), False)
        except (TypeError, ValueError):
            return [("row", tuple(r)) for r in X.itertuples(index=False, name=None)]
    if isinstance(X, (list, tuple)) and X and isinstance(X[0], Mapping):
        return [_dict_key(x) for x in X]
    A = np.asarray(X, dtype=object)
    if A.ndim == 1:
        A = A[:, None]
    return [("row", tuple(r)) for r in A.tolist()]


class ServedLog:
    """Records ``(n_levels, width)`` per served row, for the last ``size`` rows served."""

    def __init__(self, size: int, width: int):
        self.size = int(size)
        self.width = int(width)
        self.rec = np.zeros((self.size, 0, self.width))
        self.n_levels = np.zeros(self.size, np.int64)
        self.live = np.zeros(self.size, np.bool_)
        self.slot_key: list = [None] * self.size
        self.version = np.zeros(self.size, np.int64)
        self.call = np.zeros(self.size, np.int64)
        self.by_key: dict = {}  # key -> list of serials, oldest first
        self.evicted: dict = {}  # key -> evicted unmatched records (oldest evicted first)
        self.cells = None  # (size, families): the groups that served each record (or None)
        self.memory = max(10 * self.size, 10_000)  # keys of evicted records remembered
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

    def add(self, keys: list, rec: np.ndarray, version: int, cells=None) -> None:
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
        self.evicted[key] = self.evicted.pop(key, 0) + 1
        while len(self.evicted) > self.memory:
            del self.evicted[next(iter(self.evicted))]
        self.live[slot] = False
        self.slot_key[slot] = None

    def find(self, keys: list):
        """For each key the slot of its oldest unmatched record (``-1``: none) and whether that
        is a late label (a record of the key was evicted unmatched).  Changes nothing; a key
        asked twice gets its next record."""
        slots = np.full(len(keys), -1, np.int64)
        late = np.zeros(len(keys), np.bool_)
        taken: dict = {}
        for i, key in enumerate(keys):
            q = self.by_key.get(key)
            k = taken.get(key, 0)
            if q is not None and k < len(q):
                slots[i] = q[k] % self.size
                taken[key] = k + 1
            else:
                late[i] = self.evicted.get(key, 0) > taken.get(("late", key), 0)
                if late[i]:
                    taken[("late", key)] = taken.get(("late", key), 0) + 1
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
                left = self.evicted[key] - 1
                if left:
                    self.evicted[key] = left
                else:
                    del self.evicted[key]
                self.n_late += 1
            else:
                self.n_unmatched += 1

    def __len__(self) -> int:
        return int(self.live.sum())

    @property
    def nbytes(self) -> int:
        return self.rec.nbytes + self.live.nbytes * 20
