"""A standalone KLL sketch object over the compiled core's KLL kernels (``_core.sketch``: the
layout of :mod:`.kll`)."""

from __future__ import annotations

import itertools
import math
import numbers
import struct
from bisect import bisect_left, bisect_right
from functools import cache

import numpy as np

import streamforest._core as _core

from .. import rng as _rng
from . import kll

_update_many = _core.sketch.update_many
_update_unit = _core.sketch.update_unit
_merge_sketch = _core.sketch.merge_sketch
_sorted_view = _core.sketch.sorted_view
_kll_retained = _core.sketch.kll_retained

#: values :meth:`KLLSketch.update` collects before they go into the sketch in one compiled call
BUFFER = 2048

_PACK_BUFFER = struct.Struct(f"{BUFFER}d")  # a full buffer's values as native float64 bytes
_SLOTS = list(range(BUFFER))  # the buffer's slots, in the order update fills them

#: first bytes of :meth:`KLLSketch.to_bytes`, and the format version written after them
MAGIC = b"SFKLL"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<5sBHBQddQ")  # magic, version, k, levels, n, min, max, rng state


@cache
def capacity_tables(k: int):
    """The capacity table of ``k`` (shared by the sketches of that ``k``; never written) and a
    row's capacity."""
    t = kll.capacity_table(k)
    return t, int(t[1, kll.MAX_LEVELS])


#: the rank table of a changed sketch (:meth:`KLLSketch._rank_table`): scale NaN, no bucket
_STALE_RANKS = ((), 0.0, math.nan)
#: the level table of a changed sketch (:meth:`KLLSketch._level_table`): one bucket, no answer
_STALE_TABLE = (None,)
#: the slots of a sketch whose query tables are set (none: its next update drops the tables)
_NO_SLOT = iter(())
#: one-value queries of an unchanged sketch answered from its sorted arrays before the lists of
#: the fast paths are built (building them costs about as much as this many queries)
LISTS_AFTER = 16


class KLLSketch:
    """Mergeable quantile sketch of a stream of numbers (KLL, accuracy parameter ``k``).

    With ``k = 200`` the normalised rank error of any quantile is about 1.65% (DataSketches' bound
    for all quantiles at once, 99% confidence), in at most ``~3k`` retained items.

    >>> s = KLLSketch(k=200, seed=0)
    >>> s.update_many(range(100))  # below capacity the sketch is exact
    >>> s.quantile([0.05, 0.5, 0.95]).tolist(), s.n
    ([4.0, 49.0, 94.0], 100)

    Sketches travel between processes as bytes (:meth:`to_bytes`, :meth:`from_bytes`; versioned,
    no pickle) and :meth:`merge` there:

    >>> a, b = KLLSketch(seed=1), KLLSketch(seed=2)
    >>> a.update_many(range(0, 5000)); b.update_many(range(5000, 10000))
    >>> a.merge(KLLSketch.from_bytes(b.to_bytes()))
    >>> a.n, a.min, a.max, abs(a.quantile(0.5) - 5000) < 200
    (10000, 0.0, 9999.0, True)

    One :meth:`update` at a time is cheap: values are collected and go into the sketch in one
    compiled call (every :data:`BUFFER` values, or before anything reads the sketch), which gives
    exactly the sketch, bit for bit, that one insertion per value gives.  Queries read a sorted
    view of the retained items and their cumulative weights (arrays), built once after each
    change; a sketch queried more than :data:`LISTS_AFTER` times since it changed also gets
    tables for the one-value queries: :meth:`quantile` answers by level bucket and :meth:`rank`
    answers by value bucket (one list index per call), with a C bisection over lists for the
    buckets that hold more than one answer.
    """

    def __init__(self, k: int = 200, seed: int | None = None):
        if not (isinstance(k, (int, np.integer)) and kll.MIN_WIDTH <= k <= 65535):
            kll.capacity_table(k)  # raises the ValueError that says what k must be
        self.k = k
        self._capt, cap = capacity_tables(int(k))
        self._items = np.zeros((1, cap))
        self._lv = np.zeros((1, kll.LV_WIDTH), dtype=np.int64)
        self._lv[0, kll.LV_H] = 1  # kll_reset, without a compiled call
        self._lv[0, 1] = self._lv[0, 2] = cap
        self._rng = _rng.new_state(seed)
        self._bounds = np.array([math.inf, -math.inf])
        self._new_buffer()
        self._changed()

    # ---------------------------------------------------------------------------------------------
    def _changed(self) -> None:
        """Forget the query views (the sketch changed)."""
        self._view = None
        self._rtable = _STALE_RANKS
        self._ranks = None
        self._qtable = _STALE_TABLE
        self._qscale = 0.0
        self._qlists = None
        self._queries = 0
        self._forget()

    def _new_buffer(self) -> None:
        """The buffer of :meth:`update` (``_buf``: ``_buf[0] is None`` while it holds no value)
        and the function that fills it, set as this sketch's ``update`` (an instance attribute,
        which :meth:`update` calls too): its variables are cells, not attribute lookups, about
        a few ns of the ~80 ns of a call.  Slots are filled in the order of an iterator over
        :data:`_SLOTS` (int objects made once: a counter makes one per call past 256), so a
        full buffer needs no length check (no slot left: ``IndexError``, then
        ``StopIteration``).  One slot at first (a sketch fed arrays only never holds more),
        ``BUFFER`` from the second value on."""
        buf: list[float | None] = [None]
        slot = iter(_SLOTS)
        # the sketch, as a bound method holds it (a reference cycle through the sketch's own
        # attribute: the cycle collector frees a dropped sketch)
        sketch = itertools.repeat(self).__next__

        def take() -> int:
            """The number of values in the buffer; the next one goes to its first slot."""
            nonlocal slot
            n = next(slot, BUFFER)
            slot = iter(_SLOTS)
            return n

        def full(value: float) -> None:
            """Put ``value`` in the buffer, whose slots are all taken: the first time, make
            room for ``BUFFER`` values; after that, put the ``BUFFER`` values in the sketch
            first."""
            nonlocal slot
            if slot is _NO_SLOT:  # the first value since the query tables were set: drop them
                forget()
                slot = iter(_SLOTS)
                buf[next(slot)] = value
                return
            n = len(buf)
            if n < BUFFER:  # slot n was missing (IndexError)
                buf.extend([None] * (BUFFER - n))
                buf[n] = value
            else:  # no slot left (StopIteration)
                slot = iter(_SLOTS)
                sketch()._flush(n)
                buf[next(slot)] = value

        def update(value: float, weight: int = 1) -> None:
            # the common call (a finite float, weight 1) puts the value in the next slot and
            # returns; everything else goes through _update_one
            if (
                value.__class__ is float
                and weight == 1
                and value <= 1.7976931348623157e308  # sys.float_info.max: not NaN, not +-inf
                and value >= -1.7976931348623157e308
            ):
                try:
                    buf[next(slot)] = value
                except (IndexError, StopIteration):
                    full(value)
                return
            sketch()._update_one(value, weight)

        # the one-value queries of an unchanged sketch, with the tables of _level_table and
        # _rank_table in cells (stale: no answer in the table, no lists; set by tables(), reset by
        # forget(), which _changed calls, and which the first update after tables() calls)
        qtable, qscale, qvals, qcum, qtotal = _STALE_TABLE, 0.0, None, None, 0.0
        rtable, rlo, rscale = _STALE_RANKS
        rvals = rranks = None

        def quantile(q):
            # a float level of a sketch queried often since it last changed: one index into the
            # level table, whose buckets hold the answer wherever it is the same for every level
            # of the bucket; a bucket without one answer bisects the cumulative weights.  Levels
            # in [0, 1] only: a negative one fails q >= 0.0, bucket B (levels in [1, 1 + 1/B))
            # holds no answer, further ones are past the table (IndexError), +inf overflows
            if q.__class__ is float and q >= 0.0:
                try:
                    value = qtable[int(q * qscale)]
                except (IndexError, OverflowError, ValueError):  # ValueError: +inf * 0.0, stale
                    value = None
                if value is not None:
                    return value
                if q <= 1.0 and qvals is not None:
                    return qvals[bisect_left(qcum, q * qtotal)]
            return sketch()._quantile(q)

        def rank(value):
            # a float ranked in a sketch queried often since it last changed: one index into the
            # rank table, whose buckets hold the answer wherever no retained item falls in them;
            # the other buckets, values below the items and far above them (or +inf) bisect the
            # items.  The scale is NaN (no index) while the table is stale, and for a NaN value
            if value.__class__ is float:
                t = (value - rlo) * rscale
                if t >= 0.0:
                    try:
                        r = rtable[int(t)]
                    except (IndexError, OverflowError):  # far above the items, or +inf
                        r = None
                    if r is not None:
                        return r
                if rvals is not None and value == value:
                    return rranks[bisect_right(rvals, value)]
            return sketch()._rank(value)

        def tables(level=None, ranks=None) -> None:
            """Give the queries the level table (``(table, scale, items, cumulative weights,
            total)``) or the rank lists and table (``(table, lo, scale, items, ranks)``) of
            the sketch as it is (no value in the buffer: else nothing is set).  The next
            :meth:`update` finds no slot (``_NO_SLOT``) and drops them (``forget``), so the
            queries need not look at the buffer."""
            nonlocal qtable, qscale, qvals, qcum, qtotal, rtable, rlo, rscale, rvals, rranks, slot
            if buf[0] is not None:
                return
            slot = _NO_SLOT
            if level is not None:
                qtable, qscale, qvals, qcum, qtotal = level
            if ranks is not None:
                rtable, rlo, rscale, rvals, rranks = ranks

        def forget() -> None:
            """The sketch changed: no table, no lists."""
            nonlocal qtable, qscale, qvals, qcum, qtotal, rtable, rlo, rscale, rvals, rranks
            qtable, qscale, qvals, qcum, qtotal = _STALE_TABLE, 0.0, None, None, 0.0
            rtable, rlo, rscale = _STALE_RANKS
            rvals = rranks = None

        update.__doc__ = KLLSketch.update.__doc__
        quantile.__doc__ = KLLSketch.quantile.__doc__
        rank.__doc__ = KLLSketch.rank.__doc__
        self._buf = buf
        self._take = take
        self._tables = tables
        self._forget = forget
        self.update = update
        self.quantile = quantile
        self.rank = rank

    def _flush(self, n: int | None = None) -> None:
        """Put the values collected by :meth:`update` (``n`` of them, the slots already reset,
        when ``update`` found no slot left; else all there are) into the sketch."""
        buf = self._buf
        if buf[0] is not None:
            if n is None:
                n = self._take()
            # struct packs the float objects about 2.5 times faster than np.fromiter reads them
            # (5 against 12 ns a value); the core reads the bytes in place (a read-only array)
            pack = _PACK_BUFFER.pack(*buf) if n == BUFFER else struct.pack(f"{n}d", *buf[:n])
            v = np.frombuffer(pack, np.float64)
            buf[0] = None
            _update_unit(self._items, self._lv, v, self._capt, self._rng, self._bounds)
            self._changed()

    def _sorted(self):
        """``(values, cumulative weights, total)``: the retained items ascending (arrays), built
        once after each change."""
        if self._buf[0] is not None:
            self._flush()
        view = self._view
        if view is None:
            cap = self._items.shape[1]
            values, cum = np.empty(cap), np.empty(cap)
            m = _sorted_view(self._items, self._lv, values, cum)
            view = (values[:m], cum[:m], float(self._lv[0, kll.LV_N]))
            self._view = view  # no tables yet: _changed dropped them with the view
        return view

    # ---------------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Total weight seen."""
        self._flush()
        return int(self._lv[0, kll.LV_N])

    @property
    def num_retained(self) -> int:
        self._flush()
        return int(_kll_retained(self._items, self._lv, 0))

    @property
    def min(self) -> float:
        self._flush()
        return float(self._bounds[0])

    @property
    def max(self) -> float:
        self._flush()
        return float(self._bounds[1])

    def update(self, value: float, weight: int = 1) -> None:
        """Add ``value`` with a positive integer ``weight`` (as ``weight`` repeated updates).

        Raises ``ValueError`` for a value that is not finite (the sketch unchanged)."""
        # a sketch's own ``update`` is an instance attribute set by _new_buffer (this method is
        # reached as KLLSketch.update(sketch, ...))
        self.__dict__["update"](value, weight)

    def _update_one(self, value, weight) -> None:
        if not isinstance(value, numbers.Real) and not (
            isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"
        ):
            raise TypeError(f"KLLSketch values must be numbers, got {type(value).__name__}")
        try:
            v = float(value)
        except OverflowError:
            v = math.inf
        if v - v != 0.0:
            raise ValueError(f"KLLSketch values must be finite numbers, got {value!r}")
        if weight.__class__ is int and weight == 1:
            self.update(v)  # a finite float now: the buffer's fast path
            return
        self.update_many([v], [weight])

    def update_many(self, values, weights=None) -> None:
        """Add ``values`` in order (with positive integer ``weights``, default 1 each)."""
        v = np.ascontiguousarray(values, dtype=np.float64).ravel()
        w = None
        if weights is not None:
            wa = np.asarray(weights)
            if wa.shape != v.shape or not np.issubdtype(wa.dtype, np.integer) or np.any(wa < 1):
                raise ValueError("weights must be positive integers, one per value")
            if np.any(wa != 1):
                w = np.ascontiguousarray(wa, dtype=np.int64)
        if not v.shape[0]:
            return
        if self._buf[0] is not None:
            self._flush()
        if w is None:
            ok = _update_unit(self._items, self._lv, v, self._capt, self._rng, self._bounds)
        else:
            ok = np.all(np.isfinite(v))
            if ok:
                _update_many(self._items, self._lv, v, w, self._capt, self._rng)
                self._bounds[0] = min(self._bounds[0], v.min())
                self._bounds[1] = max(self._bounds[1], v.max())
        if not ok:
            raise ValueError("KLLSketch values must be finite numbers")
        self._changed()

    def merge(self, other: KLLSketch) -> None:
        """Add the contents of ``other`` (same ``k``) to this sketch; ``other`` is unchanged."""
        if not isinstance(other, KLLSketch) or other.k != self.k:
            raise ValueError("can only merge a KLLSketch with the same k")
        if self._buf[0] is not None:
            self._flush()
        if other._buf[0] is not None:
            other._flush()
        o_items, o_lv, o_bounds = other._items, other._lv, other._bounds
        if other is self:  # a sketch merged with itself: with a copy of itself
            o_items, o_lv, o_bounds = o_items.copy(), o_lv.copy(), o_bounds.copy()
        _merge_sketch(self._items, self._lv, self._bounds, o_items, o_lv, o_bounds, self._capt,
                      self._rng)  # fmt: skip
        self._changed()

    def quantile(self, q):
        """Inclusive quantile(s): the smallest retained item whose cumulative weight reaches
        ``q`` of the total.  NaN for an empty sketch; ``ValueError`` for a level outside
        ``[0, 1]``."""
        # a sketch's own ``quantile`` is an instance attribute set by _new_buffer (this method is
        # reached as KLLSketch.quantile(sketch, q)); its slow path is _quantile
        return self.__dict__["quantile"](q)

    def _quantile(self, q):
        values, cum, total = self._sorted()
        if q.__class__ is float and 0.0 <= q <= 1.0:
            if not total:
                return math.nan
            if self._qscale == 0.0:
                self._queries += 1
                if self._queries <= LISTS_AFTER:
                    # the first index whose cumulative weight reaches q * total (at most the
                    # last one: q * total <= total)
                    return float(values[np.searchsorted(cum, q * total)])
                self._level_table(values, cum, total)
            vlist, clist = self._qlists  # a bucket of the table without one answer: bisect
            return vlist[bisect_left(clist, q * total)]
        if isinstance(q, (str, bytes)):
            raise TypeError(f"quantile levels must be numbers, got {q!r}")
        qa = np.atleast_1d(np.asarray(q, dtype=np.float64))
        if np.any(~(qa >= 0) | ~(qa <= 1)):
            raise ValueError("quantile levels must be in [0, 1]")
        if not len(values):
            out = np.full(qa.shape[0], np.nan)
        else:
            i = np.minimum(np.searchsorted(cum, qa * total, side="left"), len(values) - 1)
            out = values[i]
        return float(out[0]) if isinstance(q, numbers.Real) else out

    def _level_table(self, values, cum, total) -> None:
        """Tabulate :meth:`quantile` of one level: ``B + 1`` buckets (``B`` a power of two, at
        least 8 per retained item, between 2**12 and 2**15), bucket ``b`` holding the answer
        of every level in ``[b / B, (b + 1) / B)`` when they all have the same one (the answer
        grows with the level, so comparing the bucket's first and last level decides), else
        ``None`` (those levels bisect the cumulative weights, ``_qlists``).  ``int(q * B)`` is
        exact: ``B`` is a power of two."""
        m = len(values)
        B = 1 << min(15, max(12, int(8 * m).bit_length()))
        grid = np.arange(B + 1, dtype=np.float64) / B
        first = np.searchsorted(cum, grid * total, side="left")
        last = np.searchsorted(cum, np.nextafter(grid[1:], 0.0) * total, side="left")
        same = np.append(first[:B] == last, True)  # the last bucket is the level 1 alone
        vlist = values.tolist()
        objects = np.empty(m + 1, dtype=object)
        objects[:m] = vlist  # one float object per item, shared by its buckets
        table = objects[np.where(same, np.minimum(first, m - 1), m)].tolist()
        table[B] = None  # the level 1 bisects: levels just above 1 fall in this bucket too
        clist = cum.tolist()
        self._qtable = table
        self._qscale = float(B)
        self._qlists = (vlist, clist)
        self._tables(level=(table, float(B), vlist, clist, total))

    def rank(self, value: float) -> float:
        """Fraction of the weight at or below ``value``.  NaN for an empty sketch;
        ``ValueError`` for a NaN value."""
        # a sketch's own ``rank`` is an instance attribute set by _new_buffer (this method is
        # reached as KLLSketch.rank(sketch, x)); its slow path is _rank
        return self.__dict__["rank"](value)

    def _rank(self, value) -> float:
        if isinstance(value, (str, bytes)) or not isinstance(value, numbers.Real):
            raise TypeError(f"rank needs a number, got {type(value).__name__}")
        if value != value:
            raise ValueError("rank of NaN: value must be a number, not NaN")
        values, cum, total = self._sorted()
        if not total:
            return math.nan
        lists = self._ranks
        if lists is None:
            self._queries += 1
            if self._queries <= LISTS_AFTER:
                i = int(np.searchsorted(values, value, side="right"))
                return float(cum[i - 1] / total) if i else 0.0
            lists = self._rank_table(values, cum, total)
        vlist, ranks = lists  # a bucket of the table with an item in it: bisect
        return ranks[bisect_right(vlist, value)]

    def _rank_table(self, values, cum, total):
        """Tabulate :meth:`rank` of a float: bucket ``int((x - lo) * scale)`` of ``x >= lo``
        (``lo`` the smallest retained item, about 16 buckets per item between it and the
        largest) holds the rank of every ``x`` in it when no retained item falls in the bucket
        (``None`` otherwise).  The bucket of a value and of an item is the same rounded
        arithmetic, which never decreases with the value, so an item in an earlier bucket is
        below every value of the bucket and one in a later bucket above: the rank is that of
        the items in the earlier buckets.  A quarter as many buckets again past the largest
        item's hold 1.0 (further values raise ``IndexError`` and bisect).  Also sets and returns
        the lists of the bisection (the items, and the rank at or below each count of them)."""
        ranks = [0.0, *(cum / total).tolist()]
        lists = (values.tolist(), ranks)
        self._ranks = lists
        lo, hi = float(values[0]), float(values[-1])
        m = len(values)
        scale = min(16 * m, 1 << 15) / (hi - lo) if hi > lo else math.inf
        if not 0.0 < scale < math.inf:  # one distinct item, or a range too wide or too narrow
            self._tables(ranks=(*_STALE_RANKS, *lists))
            return lists
        buckets = ((values - lo) * scale).astype(np.int64)  # the same arithmetic as rank()
        nb = int(buckets[-1]) + 1
        below = np.searchsorted(buckets, np.arange(nb), side="left")  # items in earlier buckets
        taken = np.zeros(nb, dtype=bool)
        taken[buckets] = True
        objects = np.empty(m + 2, dtype=object)
        objects[: m + 1] = ranks  # one float object per rank, shared by its buckets
        objects[m + 1] = None
        table = objects[np.where(taken, m + 1, below)].tolist()
        table += [ranks[m]] * (nb // 4 + 1)  # above the largest item: all the weight (1.0)
        self._rtable = (table, lo, scale)
        self._tables(ranks=(table, lo, scale, *lists))
        return lists

    # ---------------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The sketch as bytes (format :data:`FORMAT_VERSION`, little-endian, no pickle):
        a header (``SFKLL``, the version, ``k``, the number of levels, ``n``, min, max, the
        random generator's state), the size of each level, then the retained items (float64),
        level 0 first.  :meth:`from_bytes` gives back a sketch that answers and continues
        exactly as this one."""
        self._flush()
        lv = self._lv[0]
        H = int(lv[kll.LV_H])
        sizes = np.array([lv[h + 2] - lv[h + 1] for h in range(H)], dtype="<u4")
        head = _HEADER.pack(MAGIC, FORMAT_VERSION, self.k, H, int(lv[kll.LV_N]),
                            float(self._bounds[0]), float(self._bounds[1]),
                            int(self._rng[0]))  # fmt: skip
        items = self._items[0, lv[1] :].astype("<f8")
        return head + sizes.tobytes() + items.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> KLLSketch:
        """The sketch :meth:`to_bytes` wrote.  Raises ``ValueError`` for bytes that are not a
        sketch, a format version this streamforest does not read, or an inconsistent sketch."""
        data = bytes(data)
        if len(data) < _HEADER.size or not data.startswith(MAGIC):
            raise ValueError("not a serialised KLLSketch (no SFKLL header)")
        magic, version, k, H, n, lo, hi, state = _HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise ValueError(
                f"KLLSketch bytes of format version {version}; this streamforest reads version "
                f"{FORMAT_VERSION}"
            )
        if not 1 <= H <= kll.MAX_LEVELS:
            raise ValueError(f"corrupt KLLSketch bytes: {H} levels")
        sketch = cls(k, seed=0)
        off = _HEADER.size
        sizes = np.frombuffer(data, dtype="<u4", count=H, offset=off).astype(np.int64)
        off += 4 * H
        retained = int(sizes.sum())
        if len(data) != off + 8 * retained:
            raise ValueError(
                f"corrupt KLLSketch bytes: {len(data)} bytes, expected {off + 8 * retained}"
            )
        if retained > sketch._capt[1, H]:
            raise ValueError(f"corrupt KLLSketch bytes: {retained} items in {H} levels of k={k}")
        items = np.frombuffer(data, dtype="<f8", count=retained, offset=off).astype(np.float64)
        weight = sum(int(s) << h for h, s in enumerate(sizes))
        if weight != n:
            raise ValueError(f"corrupt KLLSketch bytes: levels weigh {weight}, n is {n}")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        for h in range(H):
            level = items[starts[h] : starts[h + 1]]
            if np.any(np.diff(level) < 0) or not np.all(np.isfinite(level)):
                raise ValueError(f"corrupt KLLSketch bytes: level {h} is not sorted and finite")
        cap = sketch._items.shape[1]
        first = cap - retained
        sketch._items[0, first:] = items
        lv = sketch._lv[0]
        lv[kll.LV_H] = H
        for h in range(H + 1):
            lv[h + 1] = first + starts[h]
        lv[kll.LV_N] = n
        sketch._rng[0] = np.uint64(state)
        sketch._bounds[:] = lo, hi
        return sketch

    # ---------------------------------------------------------------------------------------------
    def __getstate__(self):
        self._flush()
        state = dict(self.__dict__)
        for name in ("_buf", "_take", "_tables", "_forget", "update", "quantile", "rank",
                     "_view", "_rtable", "_ranks", "_qtable", "_qscale", "_qlists",
                     "_queries"):  # fmt: skip
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        state = dict(state)
        if "_min" in state:  # written before the bounds were one array
            state["_bounds"] = np.array([state.pop("_min"), state.pop("_max")], dtype=np.float64)
        self.__dict__.update(state)
        self._new_buffer()
        self._changed()

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"KLLSketch(k={self.k}, n={self.n}, retained={self.num_retained})"
