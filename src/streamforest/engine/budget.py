"""The memory budget of a forest: what a tree's parts cost, and the caps that keep it in budget.

A tree's memory (:mod:`streamforest.tree_kinds.state`) is, apart from a few small fixed arrays,

- per **node** (split or leaf): routing and bookkeeping, about 100 bytes; a split node keeps
  nothing else (no observer, no sketch);
- per **leaf slot** (a leaf's statistics, leaf model, per-feature normaliser and observer heads,
  and with leaf quantile sketches, :class:`~streamforest.OnlineQRF`, its KLL sketch: 1.56 kB
  at ``k = 200``, a row of 160 items and its level table, see
  :func:`streamforest.sketches.kll.leaf_capacity_table`; a row of 256 items took 2.3 kB, one
  with room for every level 6.4 kB); slots are reused after a split, so the slots in use are
  the live leaves;
- per **observer bin** (one distinct key of one leaf's attribute observer): 88 bytes and 16 of
  split scratch, plus the tree's bin hash table, a power of two of 2 to 4 slots per bin (8
  bytes each), counted as it is allocated (:func:`bins_bytes`).

:func:`unit_bytes` measures these from the layout itself (allocating tiny states and taking the
differences), so the figures follow any change to the layout.  :func:`tree_caps` turns one
tree's share of a budget into caps: leaves (``max_leaves``, hence nodes ``<= 2 * max_leaves``)
and observer bins (``max_observer_bins``: as many as their rows and hash table fit in their
part, what the table's size leaves going to leaves).  The engine grows a tree's arrays by
doubling but never past those caps (:meth:`~streamforest.engine.core.Engine.make_room`), so
the caps bound what a tree holds, not merely what it uses.

Under the caps a tree behaves as MOA's and River's Hoeffding trees under their memory limit:
when the observer bins run out, the least promising active leaves (smallest sum of squared
target deviations, i.e. the smallest possible error reduction) stop observing and their bins
are freed; they keep predicting and learning their leaf models and sketches.  A leaf costs
memory by itself (its slot), so when the leaf cap is reached the structure is final: every
observer is freed and the leaves keep learning.

The budget bounds the trees' fields (:func:`~streamforest.tree_kinds.arena.used_bytes`); what the
process holds for them is what ``memory_bytes`` counts, the pages those fields lie on
(:func:`~streamforest.tree_kinds.arena.held_bytes`: a row's first and last pages are shared with
the room beside it, up to 24 kB a tree more than its fields; nearly all of the growth of a
default model's resident memory, the rest the interpreter's own heap: the memory soak benchmark,
``benchmarks/memory_soak.py``), because the arena (:mod:`streamforest.tree_kinds.arena`) reserves
address space, not memory: rows are lengthened into arrays of 4 kiB pages (numpy would ask for 2 MiB
pages, each tree's row then holding whole huge pages past its fields) copying only each row's
fields, grown arrays are freed back to the system (:func:`release_free_memory`), and a saved,
pickled or copied model keeps its rows cut to the fields.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import numbers
import sys
from functools import lru_cache
from typing import NamedTuple

from ..rng import new_state
from ..tree_kinds import state

# the forests' default budget (MiB), per model: see OnlineForestRegressor's max_memory_mb.
# Chosen with the memory soak benchmark (benchmarks/memory_soak.py; figures in the docs'
# benchmark pages): within it the default OnlineQRF and CPApproximate lose about 2% of MAE
# against unbounded forests on a long Friedman #1 stream, and the process, with the
# interpreter, the budget and OnlineQRF's scratch, stays below 512 MB even with every
# background tree grown (a larger budget would not).
DEFAULT_MEMORY_MB = 256.0
# part of a tree's share kept for its background tree when warnings are armed (a background
# tree that replaces its tree grows on to the tree's caps).  A background tree only lives
# while its tree warns, and a sixteenth still holds ~300 leaves of a default OnlineQRF (a
# tree grows ~150 in 50k rows); it was an eighth, idle memory on a stationary stream
BACKGROUND_SHARE = 0.0625
# share of a tree's budget given to its observer bins (the rest: leaves and nodes).  An active
# leaf's observers take ~10 kB (tens of bins per observed feature): three quarters of the
# share when leaves are small (~1 kB); half when each holds a sketch (~2.6 kB with its
# nodes).  Measured with the memory soak benchmark (default CPApproximate, 3M rows, MAE of the
# last 500k rows, unbounded 0.927 then, 0.9210 now): at 224 MiB with bins counted at their
# worst case, bins half the share 0.947 (its bins ran out with 40% of the leaf cap used), 70%
# 0.941, 80% 0.943 (leaf cap reached at 2M rows); at 256 MiB, bins counted exactly, 70%
# 0.9297 (the hash table's size leaves room for 8,874 leaves: the leaf arrays doubled after
# 1.5M rows, RSS +10% from 1M to 3M), 75% 0.9285 (5,917 leaves: +4%).  Default OnlineQRF
# (leaf rows of 256 items), MAE of the last 500k rows at 1.5M / 2M / 2.5M rows: bins 35% of
# the share 0.977 / 0.963 / 0.953, half 0.970 / 0.954 / 0.945 (leaf cap reached at 2M rows,
# RSS flat from 1M); with 769-item rows a quarter was best (15% grew slower)
# bins of a tree without attribute observers (extremely randomised, pre-grown and Gaussian split
# rules): a token pool, counted in its share
TOKEN_BINS = 16
# leaf slots (with their two nodes) a regression tree with alternate subtrees keeps free beyond
# its leaf cap: make_room keeps room for k = live alternates + 2 leaves (the cap's own formula
# counts one), so with up to two live alternates the tree stays in its share.  Classification
# trees count the worst case instead (classifier_caps: up to (cap - 1) // 2 live alternates)
ALTERNATE_SLACK = 3
BIN_SHARE = 0.75
BIN_SHARE_SKETCH = 0.5
# a classification tree's category room (the codes of its leaves' nominal class counts, which
# take 8 bytes per code, class and nominal feature in every leaf slot) grows only while the tree
# can still hold this many leaves with it (see category_room and
# streamforest.engine.classifier_engine): 50k user ids and 2 classes took 800 kB a leaf, and 500
# classes 200 MB, so no leaf cap could keep a tree in its share
CATEGORY_LEAVES = 32
# a model's features (its rows' width, which every leaf slot pays for: ~73 bytes a feature in a
# regression leaf) grow only while each tree can still hold this many leaves and those it holds
# in its share (see feature_room): a dict of 10k keys asked 0.7 MB a leaf and 9 GB of SGBT
FEATURE_LEAVES = 8
# ... except a model's first features: up to this many are taken while the trees hold what they
# have, as before the feature cap (a small budget's trees then keep their two-leaf minimum)
FEW_FEATURES = 64
# the most of a model's budget one tree, widened, may hold (its new arrays and their copy in
# the arena's row are held at once while it widens: see feature_room's copy_bytes)
WIDENING_COPY = 0.25
# the most features a model under a budget holds whatever its budget: its trees' rows are dense,
# so a row costs time in proportion to the features (a stream bringing a new name on every row
# reaches this after 16k rows and its time per row stays flat from then on)
MAX_FEATURES = 2**14


def check_memory_mb(value) -> None:
    """``max_memory_mb`` checked: ``None`` (no budget) or a positive finite number, not a
    bool; else a ``ValueError`` naming it (every model with a budget checks it so)."""
    if value is not None and (
        isinstance(value, bool) or not (isinstance(value, numbers.Real) and 0 < value < math.inf)
    ):
        raise ValueError(f"max_memory_mb must be None or a positive number, got {value!r}")


class UnitBytes(NamedTuple):
    node: int  # bytes per node
    leaf: int  # bytes per leaf slot (its sketch included)
    bin: int  # bytes per observer bin, hash-table slots (at most 4) and split scratch included
    fixed: int  # bytes of a tree whatever its size (with room for one of each)
    bin_row: int = 0  # bytes per observer bin without its hash-table slots (see bins_bytes)


HT_SLOT = 8  # bytes per slot of a tree's bin hash table (see tree_kinds.state.hash_capacity)


def bins_bytes(n_bins: int, units: UnitBytes) -> int:
    """Bytes ``n_bins`` observer bins take: their rows and split scratch, and the hash table,
    whose size is the power of two of 2 to 4 slots per bin (``tree_kinds.state.hash_capacity``)."""
    return int(n_bins) * units.bin_row + HT_SLOT * state.hash_capacity(int(n_bins))


def max_bins_in(room: float, units: UnitBytes) -> int:
    """The most observer bins whose :func:`bins_bytes` fit in ``room`` bytes: for each size of
    the hash table, as many bins as it takes (half its slots) or the rest of the room holds.
    Counting every bin at the worst case (four slots) wasted up to a sixth of the room."""
    if not units.bin_row:  # units from before bin_row: the worst case per bin
        return int(room // units.bin) if units.bin else 0
    best, h = 0, state.hash_capacity(0)
    while HT_SLOT * h <= room:  # up to h // 2 bins take a table of at most h slots
        best = max(best, min(h // 2, int((room - HT_SLOT * h) // units.bin_row)))
        h *= 2
    return best


def unit_bytes(n_features: int, **kw) -> UnitBytes:
    """:func:`measured_units` (the same arguments): measured at 1 and 2 features and taken
    from there past them (:func:`units_at`: the layout is linear in the features), so that a
    model of 10k features does not allocate tiny trees of 10k features (47 MB, which the
    process kept) to size its own."""
    if n_features <= 2:
        return measured_units(int(n_features), **kw)
    return units_at(measured_units(1, **kw), measured_units(2, **kw), int(n_features))


@lru_cache(maxsize=64)
def measured_units(
    n_features: int,
    sketch_k: int = 0,
    m_min: int = 0,
    alternates: bool = False,
    pregrown: bool = False,
    n_classes: int = 0,
    n_cats: int = 0,
    ranges: bool = False,
    n_nominal: int | None = None,
) -> UnitBytes:
    """Bytes per node, leaf slot and observer bin of a tree with ``n_features`` features (and a
    leaf sketch of accuracy ``sketch_k``, an extremely randomised split's ``m_min`` buffer,
    alternate subtrees, pre-grown fields, a classifier's class statistics), read from the
    layout of
    :func:`streamforest.tree_kinds.state.allocate`.

    A classifier's leaf holds ``n_cats`` x ``n_classes`` category weights per nominal feature
    (``lf_nominal_class_weights``, which ``allocate`` leaves without rows): counted for
    ``n_nominal`` features, or when it is None (the caller does not say) for every feature, the
    worst case."""
    kw = dict(sketch_k=sketch_k, m_min=m_min, alternates=alternates, pregrown=pregrown,
              n_classes=n_classes, n_cats=n_cats, ranges=ranges)  # fmt: skip

    def size(nodes, leaves, bins):
        st = state.allocate(
            n_features, new_state(0), nodes=nodes, leaves=leaves, bins=bins, cats=64, **kw
        )
        return state.nbytes(st)

    base = size(64, 64, 64)
    node = (size(128, 64, 64) - base) // 64
    leaf = (size(64, 128, 64) - base) // 64
    # bins: the hash table has a power-of-two size of 2 to 4 slots per bin; ``bin`` counts the
    # worst case, ``bin_row`` a bin without its slots (the table: bins_bytes)
    ht = HT_SLOT * (state.hash_capacity(128) - state.hash_capacity(64))
    bin_row = (size(64, 64, 128) - base - ht) // 64
    bin_ = bin_row + 4 * HT_SLOT if bin_row else 0
    fixed = size(1, 1, 1)
    if n_classes and n_cats:
        rows = max(1, n_features) if n_nominal is None else n_nominal
        leaf += 8 * rows * n_cats * n_classes
        fixed += 8 * rows * n_cats * n_classes
    return UnitBytes(int(node), int(leaf), int(bin_), int(fixed), int(bin_row))


def tree_caps(
    share_bytes: float, units: UnitBytes, observers: bool = True, sketch: bool = False
) -> tuple[int, int]:
    """``(max_leaves, max_bins)`` for a tree that may hold ``share_bytes``: ``BIN_SHARE`` of it
    (``BIN_SHARE_SKETCH`` with leaf sketches) for observer bins (when the tree has observers),
    the rest for leaf slots and their nodes (two per leaf).  At least 2 leaves and 64 bins.
    The bins are as many as their rows and hash table fit in their room (:func:`max_bins_in`),
    and what the table's power-of-two size leaves of it goes to leaves."""
    room = max(0.0, share_bytes - units.fixed)
    if not observers:  # the token bin pool such a tree still allocates (fixed counts one bin)
        room = max(0.0, room - (bins_bytes(TOKEN_BINS, units) - bins_bytes(1, units)))
    bin_share = BIN_SHARE_SKETCH if sketch else BIN_SHARE
    max_bins = max_bins_in(bin_share * room, units) if observers else 64
    per_leaf = units.leaf + 2 * units.node
    max_leaves = int((room - (bins_bytes(max_bins, units) if observers else 0)) // per_leaf)
    return max(2, max_leaves), max(64, max_bins)


def classifier_tree_bytes(
    max_leaves: int,
    units: UnitBytes,
    alternates: bool,
    max_bins: int = 64,
    n_cats: int = 0,
    cat_splits: bool = False,
    slots: int = 0,
    nodes: int = 0,
) -> int:
    """The most a classification tree with leaf cap ``max_leaves`` holds (``units``: its leaves
    as wide as they will be, see :func:`classifier_caps`).

    - Leaf slots: ``max_leaves + k`` and nodes ``2 (max_leaves + k)``: a tree keeps room for
      ``k`` more leaves (the engine's ``make_room`` and the kernels' room check), ``k = 1``
      without alternate subtrees and ``k = a + 2`` with ``a`` live alternates.  Alternates grow
      only at the main tree's split nodes and each holds a leaf, all counted in the leaf cap: a
      tree of ``m`` main leaves and ``a`` alternates has at least ``m + a`` leaves and
      ``a <= m - 1``, so ``a <= (max_leaves - 1) // 2``.  (On SEA they stay below a tenth of the
      leaves once trees are grown, but the cap is a bound, not a typical case.)
    - Observer bins: none are used (ACTSER and VFDT keep their statistics in the leaves) but the
      room check grows the token pool to ``max_bins`` when the tree has more features than bins.
    - The nodes' category lists (``cats``, 64 in ``fixed``): the room check keeps ``n_cats``
      (the most categories of a feature) free past those used and doubles the list when it
      lacks them, so it stays below ``4 n_cats`` when splits use none (ACTSER's nominal splits
      send categories to random sides); ``cat_splits`` (VFDT's one-versus-rest splits, one list
      of up to ``n_cats`` per split, no alternates) below ``2 (max_leaves + 1) n_cats``.
    - ``fixed`` holds one node, one leaf slot and one bin.

    ``slots`` and ``nodes``: at least that many leaf slots and nodes (a tree that holds them
    already: slots in use are never given back, node arrays never shrink)."""
    L = int(max_leaves)
    k = (L - 1) // 2 + 2 if alternates else 1
    slots, nodes = max(L + k, int(slots)), max(2 * (L + k), int(nodes))
    bins = bins_bytes(max_bins, units) - bins_bytes(1, units)
    cats = max(64, 2 * (L + 1) * n_cats if cat_splits else 4 * n_cats)
    return (units.fixed + (slots - 1) * units.leaf + (nodes - 1) * units.node + bins
            + 8 * (cats - 64))  # fmt: skip


def classifier_caps(share_bytes: float, units: UnitBytes, alternates: bool,
                    max_bins: int = 64, n_cats: int = 0, cat_splits: bool = False
                    ) -> tuple[int, int]:  # fmt: skip
    """``(max_leaves, max_bins)`` of a classification tree that may hold ``share_bytes``: the
    largest leaf cap whose worst case (:func:`classifier_tree_bytes`) fits, at least 2.
    ``units`` must count the leaves as wide as the tree's arrays will be: its feature capacity,
    the category room of its nominal class counts and their rows (one per nominal feature),
    see :meth:`streamforest.engine.classifier_engine.ClassifierEngine._budget_caps`."""

    def bytes_of(L):
        return classifier_tree_bytes(L, units, alternates, max_bins, n_cats, cat_splits)

    lo, hi = 2, 2
    while bytes_of(2 * hi) <= share_bytes:
        hi *= 2
    hi *= 2  # bytes(hi) > share (or hi = 4 past a share below bytes(2))
    while hi - lo > 1:  # bytes(lo) <= share < bytes(hi), or lo = 2
        mid = (lo + hi) // 2
        if bytes_of(mid) <= share_bytes:
            lo = mid
        else:
            hi = mid
    return lo, max_bins


def with_categories(units: UnitBytes, rows: int, n_classes: int, n_cats: int) -> UnitBytes:
    """``units`` (of leaves without category codes) with a category room of ``n_cats`` codes in
    ``rows`` nominal rows of ``n_classes`` classes: what :func:`unit_bytes` adds for them."""
    extra = 8 * int(rows) * int(n_cats) * int(n_classes)
    return units._replace(leaf=units.leaf + extra, fixed=units.fixed + extra)


# no category room bound: a tree without nominal rows holds no category codes in its leaves
UNBOUNDED_ROOM = 2**40


def category_room(share_bytes: float, units: UnitBytes, rows: int, n_classes: int,
                  alternates: bool, max_bins: int = 64, n_cats: int | None = None,
                  cat_splits: bool = False, leaves: int = CATEGORY_LEAVES, slots: int = 0,
                  nodes: int = 0) -> int:  # fmt: skip
    """The most category codes a classification tree's nominal class counts may hold: the
    largest room ``C`` with which a tree of ``leaves`` leaves (and at least ``slots`` leaf
    slots and ``nodes`` nodes, those it holds) fits ``share_bytes``
    (:func:`classifier_tree_bytes`, ``units`` its leaves without codes, see
    :func:`with_categories`); -1 when it does not fit even without codes; ``UNBOUNDED_ROOM``
    when its leaves have no nominal row.  ``n_cats``: the bound of the nodes' category lists
    (the most categories of a feature); None: ``C`` itself."""
    K = max(1, int(n_classes))

    def bytes_at(c):
        u = with_categories(units, rows, K, c)
        pool = c if n_cats is None else n_cats
        return classifier_tree_bytes(leaves, u, alternates, max_bins, pool, cat_splits, slots,
                                     nodes)  # fmt: skip

    b0 = bytes_at(0)
    if b0 > share_bytes:
        return -1
    # bytes_at is linear in the codes past a few (piecewise: the lists' bound is at least 64),
    # so the answer lies between the room at its largest slope and at its smallest
    big = UNBOUNDED_ROOM // 2
    fast, slow = bytes_at(big + 1) - bytes_at(big), bytes_at(1) - b0
    if fast <= 0:
        return UNBOUNDED_ROOM
    lo = min(UNBOUNDED_ROOM, int((share_bytes - b0) // fast))
    hi = UNBOUNDED_ROOM if slow <= 0 else min(UNBOUNDED_ROOM, int((share_bytes - b0) // slow) + 1)
    lo = min(lo, hi)
    while bytes_at(lo) > share_bytes:  # (not reached: bytes_at is convex)
        lo //= 2
    if bytes_at(hi) <= share_bytes:
        return hi
    while hi - lo > 1:  # bytes(lo) <= share < bytes(hi)
        mid = (lo + hi) // 2
        if bytes_at(mid) <= share_bytes:
            lo = mid
        else:
            hi = mid
    return lo


def class_room(share_bytes: float, one: UnitBytes, two: UnitBytes, alternates: bool,
               max_bins: int = 64) -> int:  # fmt: skip
    """The most classes with which a classification tree of two leaves (the least a tree holds)
    and no category code fits ``share_bytes``: ``one`` and ``two`` are its units with one and
    two classes (every class field of a leaf is as wide as the classes, so the bytes grow by
    ``two - one`` a class).  0 when not even one class fits."""

    def units_of(k):
        return UnitBytes(*(a + (k - 1) * (b - a) for a, b in zip(one, two, strict=True)))

    def fits(k):
        return classifier_tree_bytes(2, units_of(k), alternates, max_bins) <= share_bytes

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    return _last_fitting(fits, lo, hi)


def units_at(one: UnitBytes, two: UnitBytes, n_features: int) -> UnitBytes:
    """:func:`unit_bytes` at ``n_features`` from its values at 1 and 2 features (``one``,
    ``two``, the same other arguments): every part of the layout is linear in the features
    (checked by the tests against :func:`unit_bytes` itself)."""
    k = int(n_features) - 1
    return UnitBytes(*(a + (b - a) * k for a, b in zip(one, two, strict=True)))


def feature_room(
    share_bytes: float, one: UnitBytes, two: UnitBytes, n_features: int, held: tuple,
    caps_of, free_slots: int = 1, capacity: int = 0, at_most: int = MAX_FEATURES,
    copy_bytes: float = math.inf,
) -> int:  # fmt: skip
    """The most features (at least ``n_features``, the features it has) a tree may be widened to
    and stay in its share ``share_bytes`` whatever it learns next: at ``q`` features its caps are
    ``caps_of(units) = (max_leaves, max_bins)`` (``units`` :func:`units_at` ``q``), which must
    leave it :data:`FEATURE_LEAVES` leaves (past :data:`FEW_FEATURES`), and it holds the larger
    of what it holds now (``held = (leaf slots, nodes, observer bins)``, its arrays) and what its
    caps let it grow to (``free_slots``: the slots its room check keeps free past the leaf cap,
    two nodes each).
    Its rows are as wide as ``capacity`` if that is more (widening doubles them, not past the
    room), and its caps are those of its rows' width.  Searched up to
    ``at_most`` (a bound the caller knows already: another tree's room).  What it holds now,
    as wide, must also fit in ``copy_bytes`` (widening holds it twice).  Returns
    ``n_features`` when even that does not fit (no feature more)."""
    slots0, nodes0, bins0 = (int(v) for v in held)

    def fits(q: int) -> bool:
        u = units_at(one, two, max(q, int(capacity)))  # its caps follow its rows' width
        leaves, bins = caps_of(u)
        if leaves < FEATURE_LEAVES and q > FEW_FEATURES:
            return False
        now = (u.fixed + (max(slots0, 1) - 1) * u.leaf + (max(nodes0, 1) - 1) * u.node
               + bins_bytes(max(bins0, 1), u) - bins_bytes(1, u))  # fmt: skip
        if now > copy_bytes:
            return False
        if slots0 <= leaves + free_slots and nodes0 <= 2 * (leaves + free_slots) and bins0 <= bins:
            return True  # it holds no more than its caps allow: they keep it in its share
        slots = max(slots0, leaves + free_slots)
        nodes = max(nodes0, 2 * (leaves + free_slots))
        total = (u.fixed + (slots - 1) * u.leaf + (nodes - 1) * u.node
                 + bins_bytes(max(bins0, bins), u) - bins_bytes(1, u))  # fmt: skip
        return total <= share_bytes

    lo = int(n_features)
    if not fits(lo):
        return lo
    hi = max(lo, int(at_most))
    if fits(hi):
        return hi
    return _last_fitting(fits, lo, hi)  # (more features only cost more)


def _last_fitting(fits, lo: int, hi: int) -> int:
    """The largest ``x`` in ``[lo, hi)`` with ``fits(x)``, for ``fits`` true at ``lo``, false at
    ``hi`` and monotone between (bisection)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid
    return lo


def grown(current: int, needed: int, cap: int) -> int:
    """New capacity of an array that holds ``current`` items and must hold ``needed``: doubled,
    but not past ``cap`` (unless ``needed`` is larger)."""
    return max(needed, min(2 * current, cap))


_TRIM = []  # [malloc_trim or None], resolved on first use


def release_free_memory() -> None:
    """Hand the C heap's free pages back to the operating system (glibc's ``malloc_trim``; nothing
    elsewhere).  Growing a tree frees its old arrays; glibc keeps freed blocks of up to 32 MB in its
    heap (its mmap threshold rises as large arrays are freed), so without this the process would
    hold several times what the trees hold (the memory soak benchmark).  Called after a tree grows,
    i.e. O(log size) times per tree."""
    if not _TRIM:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
                fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):  # not glibc (e.g. musl): nothing to do
                fn = None
        _TRIM.append(fn)
    if _TRIM[0] is not None:
        _TRIM[0](0)
