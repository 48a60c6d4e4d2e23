"""Arenas: the compiled state of every tree of a forest in a few arrays.

A forest (a single tree is a forest of one) keeps all its trees in one :class:`Arena`:

- ``fa`` (float64), ``ia`` (int64) and ``ba`` (int8), each ``(n_trees, capacity)``: one row per
  tree holding every array of that tree's :class:`~streamforest.tree_kinds.state.TreeState`, packed;
- ``lay`` ``(n_trees, n_fields, 4)`` int64: for each field of the tree state, its offset in its
  row and its shape (up to three dimensions, unused ones 1);
- ``pa`` ``(n_trees, n_params)`` float64: each tree's
  :class:`~streamforest.tree_kinds.state.TreeParams`.

Why: the tree state has over sixty arrays, the parameters forty scalars; passing the arena to a
compiled call costs five arrays whatever the number of trees and features.  Inside compiled code
a tree is a reference into the arena (``src/core/tree/tree_ref.hpp``: four pointers, each field a
view built from the row's layout where it is read: no allocation, no arrays passed from call to
call), so the per-tree kernels are written against the fields' names
(``src/core/tree/fields.hpp`` lists them, checked against :class:`TreeState` and
:class:`TreeParams` by the tests).

Python changes a tree's state (creation, growth, replacement) through :func:`load` (numpy views
of row ``t``) and :func:`store` (write a tree state into row ``t``, widening the arena when the
row is too short).  Views from :func:`load` are valid until the next :func:`store`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import NamedTuple, get_type_hints

import numpy as np

from .state import Deferred, TreeParams, TreeState

F64, I64, I8 = 0, 1, 2
_ARENA_OF = {np.dtype(np.float64): F64, np.dtype(np.int64): I64, np.dtype(np.uint64): I64,
             np.dtype(np.int8): I8}  # fmt: skip
N_FIELDS = len(TreeState._fields)
GROWTH = 4.0  # factor by which a row too short for a tree is lengthened
N_PARAMS = len(TreeParams._fields)
_INT_PARAMS = frozenset(n for n, tp in get_type_hints(TreeParams).items() if tp is int)


class Arena(NamedTuple):
    """The arrays of a forest's trees."""

    fa: np.ndarray  # (T, Cf) float64
    ia: np.ndarray  # (T, Ci) int64
    ba: np.ndarray  # (T, Cb) int8
    lay: np.ndarray  # (T, N_FIELDS, 4) int64: offset, shape
    pa: np.ndarray  # (T, N_PARAMS) float64


def empty(n_trees: int) -> Arena:
    """An arena for ``n_trees`` trees, none stored yet."""
    return Arena(
        np.zeros((n_trees, 0)),
        np.zeros((n_trees, 0), np.int64),
        np.zeros((n_trees, 0), np.int8),
        np.zeros((n_trees, N_FIELDS, 4), np.int64),
        np.zeros((n_trees, N_PARAMS)),
    )


def params_row(prm: TreeParams) -> np.ndarray:
    return np.array([float(v) for v in prm])


def params_at(A: Arena, t: int) -> TreeParams:
    """Tree ``t``'s parameters (the values compiled code reads)."""
    row = A.pa[t]
    return TreeParams(
        *(int(v) if name in _INT_PARAMS else float(v)
          for name, v in zip(TreeParams._fields, row, strict=True))
    )  # fmt: skip


def store(A: Arena, t: int, st: TreeState, prm: TreeParams | None = None, kept=None,
          views=None, release_old: bool = False, pack: bool = False) -> Arena:  # fmt: skip
    """Write tree state ``st`` (and parameters) into row ``t``; returns the arena, with new
    arrays when a row had to be lengthened (by ``GROWTH``: a forest reallocates O(log size)
    times and copies a fraction of its final size in all).

    ``kept[k]`` says that field k of ``st`` is :func:`load`'s view of this very row, unchanged
    in place (e.g. ``st[k] is old[k]`` after :func:`grow`): those stay where they are, and
    only the others are written, after the row's last field (the old place of a moved field
    becomes a hole).  Without ``kept`` (or when holes would make the row more than twice what
    the tree holds) the row is laid out afresh from its start (:func:`_store_apart`); there
    ``views[k]``, when given, says that field k of ``st`` is :func:`load`'s view of this row
    (else the fields' addresses tell).

    ``release_old``: when the arrays are lengthened, each other row's pages in the old arrays
    are given back to the system once copied (:func:`_lengthened`), so the process holds the
    trees once, not twice, while it copies them; only when no other thread works on the old
    arrays (another tree's pass would lose its row).

    A :class:`~streamforest.tree_kinds.state.Deferred` field written past the row's fields
    gives back the whole pages of its source (its old place in row ``t``) once written, so a
    tree that grows holds about its new fields and one old field at once, not its old and new
    arrays whole.  ``pack`` (with ``kept``): the row is then packed from its start
    (:func:`_compact_row`, which moves each field without a copy), leaving no holes."""
    sizes = [a.size for a in st]
    arena_of = [_ARENA_OF[a.dtype] for a in st]
    lay = np.ones((N_FIELDS, 4), np.int64)
    for k, a in enumerate(st):
        lay[k, 1 : 1 + a.ndim] = a.shape
    used = [0, 0, 0]
    for k in range(N_FIELDS):
        used[arena_of[k]] += sizes[k]
    keep = t if release_old else None
    if kept is None or not any(kept):  # a new tree (or unknown views): from the row's start
        return _store_apart(A, t, st, prm, lay, sizes, arena_of, views, keep)
    cur = A.lay[t].tolist()
    need = [0, 0, 0]  # past the row's fields as they are
    for k in range(N_FIELDS):
        o, d0, d1, d2 = cur[k]
        need[arena_of[k]] = max(need[arena_of[k]], o + d0 * d1 * d2)
    for k in range(N_FIELDS):
        if kept[k]:
            lay[k, 0] = cur[k][0]
        else:
            lay[k, 0] = need[arena_of[k]]
            need[arena_of[k]] += sizes[k]
    compact = any(need[w] > 2 * used[w] + 64 for w in range(3))  # mostly holes
    deferred = any(isinstance(a, Deferred) for a in st)
    if compact and not deferred:
        return _store_apart(A, t, st, prm, lay, sizes, arena_of, None, keep)
    # lengthened, row t's new place gets its kept fields only (the others are written below,
    # from the old arrays: copying them too held a dead copy of each moved field)
    arrays = _lengthened([A.fa, A.ia, A.ba], need, A.lay, keep=keep,
                         only=(t, [k for k in range(N_FIELDS) if kept[k]]))  # fmt: skip
    old = (A.fa, A.ia, A.ba)
    for k, a in enumerate(st):  # kept fields are in place; the others go past the old fields
        if not kept[k]:
            _write(arrays[arena_of[k]][t], lay[k, 0], a)
            if isinstance(a, Deferred):  # its old place, read: given back
                _release_source(old[arena_of[k]], t, cur[k], a.source)
    A = _finish(A, t, arrays, lay, prm)
    if compact or pack:  # (laid out afresh, a Deferred field had to be built apart first)
        _compact_row(A, t)
    return A


def _release_source(arr: np.ndarray, t: int, place: list, source: np.ndarray) -> None:
    """Give back the whole pages of a Deferred field's source once it was written elsewhere:
    only if ``source`` is the field's old place in row ``t`` of ``arr`` (``place``: its
    ``[offset, d0, d1, d2]`` in the old layout); the source is not read again."""
    lo = int(place[0])
    hi = lo + int(place[1] * place[2] * place[3])
    base = arr.__array_interface__["data"][0] + t * arr.strides[0]
    if source.size and source.__array_interface__["data"][0] == base + lo * arr.itemsize:
        if source.size == hi - lo:
            _release_row(arr, t, lo, hi)


def _compact_row(A: Arena, t: int) -> None:
    """Row ``t``'s fields packed from the row's start in the order they lie in (each moves
    towards the start, in pieces of :data:`_MOVE_ITEMS` items: no copy of a field is made, and
    each piece's old pages past the field's new place are given back once moved, so that the
    row holds the field about once while it moves), its layout updated; the partial pages
    left are :func:`release_dead_pages`'s."""
    lay = A.lay[t]
    for which, arr in enumerate((A.fa, A.ia, A.ba)):
        row = arr[t]
        fields = sorted((k for k in range(N_FIELDS) if _FIELD_ARENA[k] == which),
                        key=lambda k: int(lay[k, 0]))  # fmt: skip
        pos = 0
        for k in fields:
            o, n = int(lay[k, 0]), int(lay[k, 1] * lay[k, 2] * lay[k, 3])
            if n and o != pos:  # fields do not overlap, so o > pos: a move to the left
                for a in range(0, n, _MOVE_ITEMS):
                    b = min(n, a + _MOVE_ITEMS)
                    row[pos + a : pos + b] = row[o + a : o + b]
                    _release_row(arr, t, max(o + a, pos + n), o + b)
            lay[k, 0] = pos
            pos += n


_MOVE_ITEMS = 1 << 18  # items _compact_row moves at a time (2 MiB of float64 or int64)
# a tree grown (make_room) with fewer bytes than this has its row packed afterwards: the holes
# its moved fields left keep their partial pages resident (up to two pages each, ~40 kB a tree,
# a tenth of a small tree: SGBT's), which packing gives back; a larger tree keeps its holes
# (their whole pages given back; what is left is under 4% of it), since packing moves every
# field once more and held a third of the tree more at its peak
PACK_BELOW = 1 << 22


def _lengthened(arrays: list, need: list, lay: np.ndarray | None = None, skip: int = -1,
                keep: int | None = None, only: tuple | None = None) -> list:  # fmt: skip
    """The arena arrays, each with rows of at least ``need`` (lengthened by ``GROWTH``).  Only
    each row's fields (their extent in ``lay``, the arena's layout) are copied, and nothing of
    row ``skip`` (about to be laid out afresh): the rest of a row stays untouched, so it costs
    address space, not memory.  ``keep`` not None: only the fields of each row are copied, not
    the holes between them, and every row but row ``keep`` (whose fields the caller may still
    read from the old arrays) has its old pages given back once copied (:func:`_release_row`).
    ``only``: ``(t, fields)``, of row ``t`` only those fields are copied (``lay`` given)."""
    if all(need[w] <= arrays[w].shape[1] for w in range(3)):
        return arrays  # (the common case: no array to lengthen)
    ext = _extents(lay) if lay is not None else None
    if ext is not None and skip >= 0:
        ext[skip] = 0
    for which in range(3):
        cap = arrays[which].shape[1]
        if need[which] > cap:
            n_cap = max(need[which], int(GROWTH * cap))
            new = small_page_zeros((arrays[which].shape[0], n_cap), arrays[which].dtype)
            old = arrays[which]
            for t in range(old.shape[0]):
                e = cap if ext is None else min(cap, int(ext[t, which]))
                if only is not None and t == only[0] and lay is not None:
                    for k in only[1]:
                        if _FIELD_ARENA[k] == which:
                            lo = int(lay[t, k, 0])
                            hi = lo + int(lay[t, k, 1] * lay[t, k, 2] * lay[t, k, 3])
                            new[t, lo:hi] = old[t, lo:hi]
                            if keep is not None:  # (its old copy is not read again)
                                _release_row(old, t, lo, hi)
                    if keep is not None and t != keep:
                        _release_row(old, t, 0, cap)
                elif keep is not None and lay is not None:
                    for lo, hi in zip(*_live(lay[t], which), strict=True) if e else ():
                        new[t, lo:hi] = old[t, lo:hi]
                    if t != keep:
                        _release_row(old, t, 0, cap)
                elif e:
                    new[t, :e] = old[t, :e]
            arrays[which] = new
    return arrays


def _release_row(arr: np.ndarray, t: int, lo: int, hi: int, zero: bool = False) -> None:
    """Give back to the system the whole pages of items ``[lo, hi)`` of row ``t`` of ``arr``
    (they read as zeros afterwards; Linux, elsewhere nothing); ``zero``: the items of the
    partial pages at either end are set to 0 too (every item of ``[lo, hi)`` then reads 0,
    wherever the row's pages begin: a saved or pickled row, holes included, does not depend on
    the addresses the arrays got)."""
    mad = _madvise()
    if mad is None or hi <= lo:
        return
    fn, page = mad
    item = arr.itemsize
    base = arr.__array_interface__["data"][0] + t * arr.strides[0]  # (no ctypes object: cycles)
    a = -(-(base + lo * item) // page) * page
    b = (base + hi * item) // page * page
    if b > a:
        fn(a, b - a, _MADV_DONTNEED)
        if zero:  # the partial pages: items [lo, first whole page) and [last page end, hi)
            _zero(arr, t, lo, lo + (a - base - lo * item) // item)
            _zero(arr, t, hi - (base + hi * item - b) // item, hi)
    elif zero:
        _zero(arr, t, lo, hi)


def _zero(arr: np.ndarray, t: int, lo: int, hi: int) -> None:
    """Items ``[lo, hi)`` of row ``t`` set to 0, written only if one is not: a page of zeros
    never written is not resident, and stays so (the row's last partial page, the next
    row's first, would otherwise be held for nothing)."""
    if hi > lo and arr[t, lo:hi].any():
        arr[t, lo:hi] = 0


def _extents(lay: np.ndarray) -> np.ndarray:
    """``(T, 3)``: for each tree row, the end of its last field in ``fa``, ``ia`` and ``ba``."""
    size = lay[:, :, 1] * lay[:, :, 2] * lay[:, :, 3]
    end = lay[:, :, 0] + size
    out = np.zeros((lay.shape[0], 3), np.int64)
    for which in range(3):
        cols = [k for k in range(lay.shape[1]) if _FIELD_ARENA[k] == which]
        if cols:
            out[:, which] = end[:, cols].max(axis=1)
    return out


_MADVISE = []  # [(madvise, page size) or None], resolved on first use
_MADV_NOHUGEPAGE = 15  # Linux


def small_page_zeros(shape: tuple, dtype) -> np.ndarray:
    """``np.zeros(shape, dtype)`` whose pages are never transparent huge pages (Linux).

    numpy asks the kernel for 2 MiB pages for arrays of 4 MiB or more (``madvise``): a tree's
    row then holds whole 2 MiB pages wherever its fields end, i.e. up to 2 MiB per tree and arena
    array more than its fields (a large share of a default CPApproximate's resident memory; the
    memory soak benchmark), which no budget would see.  With 4 kiB pages what a row holds is its
    fields.  Elsewhere (or if the call fails) a plain ``np.zeros``."""
    a = np.zeros(shape, dtype)
    if a.nbytes < 2**22:  # numpy does not ask for huge pages below 4 MiB
        return a
    if _madvise() is not None:
        fn, page = _MADVISE[0]
        start = a.ctypes.data
        lo = -(-start // page) * page  # whole pages inside the array (it is not touched yet)
        hi = (start + a.nbytes) // page * page
        if hi > lo:
            fn(lo, hi - lo, _MADV_NOHUGEPAGE)  # advice only: a failure changes nothing
    return a


def _madvise():
    """``(libc's madvise, page size)``, or None where there is none (resolved once)."""
    if not _MADVISE:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
                fn = libc.madvise
                fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                fn.restype = ctypes.c_int
                fn = (fn, os.sysconf("SC_PAGE_SIZE"))
            except (OSError, AttributeError, ValueError):
                fn = None
        _MADVISE.append(fn)
    return _MADVISE[0]


_MADV_DONTNEED = 4  # Linux


def release_dead_pages(A: Arena, t: int) -> None:
    """Give the whole pages of row ``t`` that hold none of its fields back to the system (Linux;
    elsewhere nothing): the holes a :func:`store` leaves where moved fields were, and the old
    tail of a row laid out shorter.  Those pages stay resident once written, though
    :func:`used_bytes` (what a budget counts) does not see them: a classifier whose leaves were
    widened a few times held twice its ``memory_bytes``.  Nothing reads them before writing
    (a field is written where it is laid out; a lengthened row copies its fields only), and
    a page given back reads as zeros.  Only pages wholly inside row ``t`` are given back, so
    the other trees' rows (written by other threads) are not touched."""
    if _madvise() is None:
        return
    for which, arr in enumerate((A.fa, A.ia, A.ba)):
        if arr.shape[1] == 0:
            continue
        pos = 0
        los, his = _live(A.lay[t], which)
        los.append(arr.shape[1])
        his.append(arr.shape[1])
        for lo, hi in zip(los, his, strict=True):
            if lo > pos:  # a gap [pos, lo): its whole pages
                _release_row(arr, t, pos, lo, zero=True)
            pos = hi


def _live(lay: np.ndarray, which: int) -> tuple[list, list]:
    """The items of a row (layout ``lay``) that its fields in arena array ``which`` take, as
    sorted, disjoint ``[lo, hi)`` intervals: ``(los, his)``, two lists of ints.  Built from
    ints and lists only (no pairs, no small numpy arrays): a per-example call that grows a
    tree (make_room) leaves nothing more in Python's free lists or numpy's buffer cache
    (tests/test_engine.py's no-allocation check)."""
    starts, d0, d1, d2 = (lay[:, j].tolist() for j in range(4))  # offset, then the 3 dims
    los, his = [], []
    for k in sorted(_FIELDS_OF[which], key=starts.__getitem__):
        size = d0[k] * d1[k] * d2[k]
        if size == 0:
            continue
        lo, hi = starts[k], starts[k] + size
        if his and lo <= his[-1]:
            his[-1] = max(his[-1], hi)
        else:
            los.append(lo)
            his.append(hi)
    return los, his


def _write(row: np.ndarray, off: int, a: np.ndarray) -> None:
    if isinstance(a, Deferred):  # filled where it goes (its source is read, not overwritten)
        a.fill(row[off : off + a.size].reshape(a.shape))
        return
    flat = _flat(a)
    row[off : off + flat.shape[0]] = flat


def _flat(a: np.ndarray) -> np.ndarray:
    """``a`` as the 1-d items its arena array stores (uint64 fields as the int64 arena's)."""
    flat = a.reshape(-1)
    return flat.view(np.int64) if a.dtype == np.uint64 else flat


def _write_packed(row: np.ndarray, parts: list) -> bool:
    """Write ``parts`` one after the other from the row's start (the packed layout
    :func:`_store_apart` gives them) in one copy; ``False``, having written nothing, if one is
    a :class:`Deferred`.  (Field by field, each write with its own address check, was a large
    part of a new tree's start.)"""
    flats = []
    for a in parts:
        if isinstance(a, Deferred):
            return False
        if a.size:
            flats.append(_flat(a))
    if flats:
        packed = np.concatenate(flats) if len(flats) > 1 else flats[0]
        row[: packed.shape[0]] = packed
    return True


def _finish(A: Arena, t: int, arrays, lay, prm) -> Arena:
    A = type(A)(arrays[0], arrays[1], arrays[2], A.lay, A.pa)
    A.lay[t] = lay
    if prm is not None:
        A.pa[t] = params_row(prm)
    return A


def _store_apart(A, t, st, prm, lay, sizes, arena_of, views=None, keep=None) -> Arena:
    """Lay row ``t`` out afresh from its start (no holes), in field order.

    ``st`` may hold views of the row (the fields a growth left as they were).  Per arena
    array: lengthened, the fields are copied from their old places into the new array; in
    place, when every field that is a view of the row keeps its offset or moves right (a
    grown field before it; the row was packed in field order, as this lays it out), the
    fields are written from the last to the first, so none overwrites a field still to be
    read, and a field already where it goes is not copied; otherwise the row is assembled
    apart first.  (A tree's growth used to copy its whole row twice, through a fresh buffer: a
    fifth of a 10-tree forest's first rows.)"""
    need = [0, 0, 0]
    for k in range(N_FIELDS):
        lay[k, 0] = need[arena_of[k]]
        need[arena_of[k]] += sizes[k]
    old = [A.fa, A.ia, A.ba]
    arrays = _lengthened(list(old), need, A.lay, skip=t, keep=keep)
    for w in range(3):
        fields = [k for k in range(N_FIELDS) if arena_of[k] == w]
        row = arrays[w][t]
        if arrays[w] is not old[w]:  # a new array: the old row is apart already
            if not _write_packed(row, [st[k] for k in fields]):
                for k in fields:
                    _write(row, lay[k, 0], st[k])
            continue
        if any(isinstance(st[k], Deferred) for k in fields):  # its source may be overwritten
            st = st._replace(**{st._fields[k]: st[k].materialised() for k in fields
                                if isinstance(st[k], Deferred)})  # fmt: skip
        if views is not None and not any(views[k] for k in fields):  # none lies in the row
            _write_packed(row, [st[k] for k in fields])
            continue
        if not _relaid_in_place(row, A.lay[t], st, lay, fields, views):
            tmp = np.empty(need[w], row.dtype)
            for k in fields:
                _write(tmp, lay[k, 0], st[k])
            row[: need[w]] = tmp
    return _finish(A, t, arrays, lay, prm)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _relaid_in_place(row: np.ndarray, old_lay: np.ndarray, st, lay, fields, views) -> bool:
    """Write ``st``'s ``fields`` at their new offsets ``lay[k, 0]`` of ``row`` in place, if that
    is safe (see :func:`_store_apart`); returns False, having written nothing, if not."""
    base, item, end = _address(row), row.itemsize, row.shape[0]
    moves = []
    for k in fields:
        a = st[k]
        if a.size == 0:
            continue
        if views is not None:
            in_row = views[k]  # load()'s view: where the layout has it
        else:
            p = _address(a)
            in_row = base <= p < base + item * end
            if in_row and p != base + item * int(old_lay[k, 0]):
                return False
        if in_row:
            o = int(old_lay[k, 0])
            if int(lay[k, 0]) < o:
                return False
            if int(lay[k, 0]) == o:
                continue  # already in place
        moves.append(k)
    for k in sorted(moves, key=lambda k: -int(lay[k, 0])):
        _write(row, int(lay[k, 0]), st[k])
    return True


def load(A: Arena, t: int) -> TreeState:
    """Tree ``t``'s state as numpy views of the arena (valid until the next :func:`store`)."""
    arrays = (A.fa[t], A.ia[t], A.ba[t])
    out = []
    for k, (name, (o, d0, d1, d2)) in enumerate(
        zip(TreeState._fields, A.lay[t].tolist(), strict=True)
    ):
        which = _FIELD_ARENA[k]
        shape = (d0, d1, d2)[: _FIELD_NDIM[k]]
        v = arrays[which][o : o + d0 * d1 * d2].reshape(shape)
        if name == "rng":
            v = v.view(np.uint64)
        out.append(v)
    return TreeState(*out)


def used_bytes(A: Arena, t: int) -> int:
    """Bytes of tree ``t``'s arrays (capacity included; holes in its row not counted)."""
    item = (8, 8, 1)
    return int(sum(item[_FIELD_ARENA[k]] * int(np.prod(A.lay[t, k, 1:])) for k in range(N_FIELDS)))


def held_bytes(A: Arena, trees) -> int:
    """Bytes of the pages the fields of ``trees`` (tree indices) lie on: what the process holds
    for them once written, which :func:`used_bytes` undercounts by the partial pages at each
    field run's ends (a row's first and last page are shared with the unused tail of the rows
    beside it: SGBT's 200 small trees per forest, ~2 kB per tree and arena array, 4 MiB that
    no ``memory_bytes`` counted).  Each page counted once, the trees' rows taken together;
    pages inside a row that hold none of its fields (given back, :func:`release_dead_pages`)
    are not counted, nor the parts of an array's first and last pages outside it.  Depends on
    where the arrays lie (a copy may differ by a few pages)."""
    trees = np.asarray(trees, np.int64)
    if trees.size == 0:
        return 0
    page = _page_size()
    total = 0
    for which, arr in enumerate((A.fa, A.ia, A.ba)):
        cols = _FIELDS_OF[which]
        if arr.shape[1] == 0 or not cols:
            continue
        lay = A.lay[trees][:, cols]  # (n, fields, 4)
        size = (lay[:, :, 1] * lay[:, :, 2] * lay[:, :, 3]).ravel()
        base = arr.__array_interface__["data"][0]
        start = (base + trees[:, None] * arr.strides[0] + lay[:, :, 0] * arr.itemsize).ravel()
        keep = size > 0
        first = start[keep] // page
        last = (start[keep] + size[keep] * arr.itemsize - 1) // page
        if first.size == 0:
            continue
        order = np.argsort(first, kind="stable")
        first, last = first[order], np.maximum.accumulate(last[order])
        new = np.empty(first.size, bool)  # a run of overlapping page ranges starts here
        new[0] = True
        new[1:] = first[1:] > last[:-1]
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:] - 1, first.size - 1)
        # each run of pages, cut to the array (its first and last pages may hold others' data)
        lo = np.maximum(first[starts] * page, base)
        hi = np.minimum((last[ends] + 1) * page, base + arr.nbytes)
        total += int((hi - lo).sum())
    return total


def _page_size() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # not POSIX
        return 4096


def check(A: Arena, created=None) -> None:
    """Raise ``ValueError`` unless ``A`` is a well-formed arena: array types and shapes, and
    every field of every tree (``created[t]``, default all) inside its row.  Compiled code reads
    the fields through unchecked views (``tree_ref.hpp``), so an arena from outside (a loaded
    file) is checked first."""
    T = A.lay.shape[0] if isinstance(A.lay, np.ndarray) else -1
    kinds = ((A.fa, np.float64, 2), (A.ia, np.int64, 2), (A.ba, np.int8, 2),
             (A.lay, np.int64, 3), (A.pa, np.float64, 2))  # fmt: skip
    for a, dt, nd in kinds:
        if not (isinstance(a, np.ndarray) and a.dtype == dt and a.ndim == nd
                and a.flags.c_contiguous and a.shape[0] == T):  # fmt: skip
            raise ValueError("malformed tree arena (array types or shapes)")
    if A.lay.shape[1:] != (N_FIELDS, 4) or A.pa.shape[1] != N_PARAMS:
        raise ValueError(
            f"tree arena with {A.lay.shape[1]} fields and {A.pa.shape[1]} parameters per tree; "
            f"this library's trees have {N_FIELDS} and {N_PARAMS}"
        )
    caps = (A.fa.shape[1], A.ia.shape[1], A.ba.shape[1])
    for t in range(T):
        if created is not None and not created[t]:
            continue
        lay = A.lay[t]
        if (lay < 0).any():
            raise ValueError(f"malformed tree arena (tree {t}: negative offset or size)")
        for k in range(N_FIELDS):
            size = int(lay[k, 1]) * int(lay[k, 2]) * int(lay[k, 3])
            if int(lay[k, 0]) + size > caps[_FIELD_ARENA[k]]:
                raise ValueError(f"malformed tree arena (tree {t}: field {k} outside its row)")


# the layout of format 1 (streamforest 0.1.0): the first fields and parameters of today's
N_FIELDS_V1, N_PARAMS_V1, N_INTS_V1 = 41, 22, 17
N_FIELDS_V2, N_PARAMS_V2 = 49, 28  # format 2 before the fields of pre-grown trees


def upgrade(A: Arena, created=None) -> Arena:
    """The arena of a model saved in an earlier layout, in today's: format 1 (41 state fields, 22
    parameters, 17 ints per tree), or a format-2 layout saved before fields were appended to
    :class:`TreeState` and :class:`TreeParams` (they only ever are appended).  Each tree keeps its
    stored fields and gets those added since as a new tree of its kind has them (no extra split
    rule, no alternate subtrees, not pre-grown); new parameters take their defaults.  An arena in
    today's layout keeps its layout.  Either way the rows are cut to their trees' fields
    (:func:`trimmed`).  A classification tree whose ``lf_nominal_class_weights`` has a row per
    feature (formats 3 and 4) gets a row per nominal feature (:func:`~._state.per_nominal_ncc`)."""
    A = _writeable(A)
    if A.lay.ndim == 3 and A.lay.shape[1:] == (N_FIELDS, 4) and A.pa.shape[1:] == (N_PARAMS,):
        check(A, created)  # (read before the caller's check)
        return trimmed(_per_nominal(A, created), created)
    v1 = (A.lay.ndim == 3 and A.lay.shape[1:] == (N_FIELDS_V1, 4)
          and A.pa.ndim == 2 and A.pa.shape[1] == N_PARAMS_V1)  # fmt: skip
    appended = (A.lay.ndim == 3 and A.lay.shape[2:] == (4,) and A.pa.ndim == 2
                and N_FIELDS_V2 <= A.lay.shape[1] <= N_FIELDS
                and N_PARAMS_V2 <= A.pa.shape[1] <= N_PARAMS)  # fmt: skip
    if not (v1 or appended):
        raise ValueError(
            f"tree arena with {A.lay.shape[1:]} layout and {A.pa.shape[1:]} parameters: "
            f"neither this library's ({N_FIELDS} fields, {N_PARAMS} parameters) nor an earlier one"
        )
    from ..rng import new_state
    from .state import I_NODE_FREE, N_INTS, allocate

    n_fields, n_params = A.lay.shape[1], A.pa.shape[1]
    arrays = (A.fa, A.ia, A.ba)
    T = A.lay.shape[0]
    out = empty(T)
    for t in range(T):
        if created is not None and not created[t]:
            continue
        fields = []
        for k in range(n_fields):
            o, dims = int(A.lay[t, k, 0]), [int(v) for v in A.lay[t, k, 1 : 1 + _FIELD_NDIM[k]]]
            size = int(np.prod(dims))
            src = arrays[_FIELD_ARENA[k]][t]
            if o < 0 or min(dims, default=0) < 0 or o + size > src.shape[0]:
                raise ValueError(f"malformed tree arena (tree {t}: field {k} outside its row)")
            fields.append(src[o : o + size].reshape(dims).copy())
        fields[1] = fields[1].view(np.uint64)  # rng
        nodes, leaves, pc = fields[4].shape[0], fields[15].shape[0], fields[3].shape[0]
        if v1:
            ints = np.zeros(N_INTS, np.int64)
            ints[:N_INTS_V1] = fields[0][:N_INTS_V1]
            ints[I_NODE_FREE] = -1
            fields[0] = ints
            fields += [
                np.zeros(leaves, np.int64),  # lf_nexamples
                np.zeros((leaves, pc, 0)),  # lf_candidate
                np.zeros((leaves, pc + 2, 0)),  # lf_buffer
                np.full(nodes, -1, np.int64),  # nd_alt
                np.zeros(nodes, np.int8),  # nd_isalt
                np.zeros((nodes, 0)),  # nd_detector
                np.zeros((nodes, 0)),  # nd_alt_compare
                np.zeros(nodes, np.int64),  # nd_path
            ]
        fresh = allocate(pc, new_state(0), nodes=nodes, leaves=leaves, bins=1, cats=1)
        st = TreeState(*fields, *fresh[len(fields) :])
        prm = TreeParams(*(int(v) if name in _INT_PARAMS else float(v) for name, v in zip(
            TreeParams._fields[:n_params], A.pa[t], strict=True)))  # fmt: skip
        out = store(out, t, st, prm)
    return trimmed(_per_nominal(out, created), created)


def _writeable(A: Arena) -> Arena:
    """``A`` with each array that is read-only (an arena unpickled from a read-only memory map,
    as joblib gives it) copied: the compiled passes write the trees' rows in place."""
    if all(not isinstance(a, np.ndarray) or a.flags.writeable for a in A):
        return A
    return type(A)(*(a.copy() if isinstance(a, np.ndarray) and not a.flags.writeable else a
                     for a in A))  # fmt: skip


def _per_nominal(A: Arena, created=None) -> Arena:
    """``A`` with each classification tree's ``lf_nominal_class_weights`` in the
    per-nominal-feature layout."""
    from .state import per_nominal_ncc

    for t in range(A.lay.shape[0]):
        if created is not None and not created[t]:
            continue
        st = load(A, t)
        new = per_nominal_ncc(st)
        if new is not st:
            A = store(A, t, new)  # laid out afresh (the row's fields are read apart first)
    return A


def trimmed(A: Arena, created=None) -> Arena:
    """``A`` with rows only as long as its longest tree's fields (trees ``created[t]``, default
    all; the others' rows are emptied), or ``A`` itself when they already are.  A saved,
    pickled or copied arena brings its rows' whole width back into memory, which a growing
    arena only reserves (a long-running CPApproximate's rows are about three times as wide as
    its fields); cut, a loaded model holds about what :func:`used_bytes` counts."""
    T = A.lay.shape[0]
    ext = np.maximum(_extents(A.lay), 0)
    if created is not None:
        ext[~np.asarray(created, bool)[:T]] = 0
    arrays = [A.fa, A.ia, A.ba]
    width = [min(int(ext[:, w].max(initial=0)), arrays[w].shape[1]) for w in range(3)]
    if all(width[w] == arrays[w].shape[1] for w in range(3)):
        return A
    for w in range(3):
        new = small_page_zeros((T, width[w]), arrays[w].dtype)
        for t in range(T):
            e = min(int(ext[t, w]), width[w])
            if e:
                new[t, :e] = arrays[w][t, :e]
        arrays[w] = new
    return type(A)(arrays[0], arrays[1], arrays[2], A.lay, A.pa)


def _field_kinds():
    from ..rng import new_state
    from .state import allocate

    st = allocate(1, new_state(0), sketch_k=8)
    return (
        tuple(_ARENA_OF[a.dtype] for a in st),
        tuple(a.ndim for a in st),
    )


_FIELD_ARENA, _FIELD_NDIM = _field_kinds()
# the fields of each arena array (for _live)
_FIELDS_OF = tuple([k for k in range(N_FIELDS) if _FIELD_ARENA[k] == w] for w in range(3))
