"""The forest engine: the compiled state of a forest's trees and its life cycle.

An :class:`Engine` owns the trees of one forest (a single tree is an engine of one tree without
bagging) in one :class:`~streamforest.tree_kinds.arena.Arena`, and is the one door through which
estimators and interval methods reach them:

- **encode**: rows come from the model's :class:`~streamforest.features.FeatureSpace`;
  :meth:`Engine.sync` creates the trees when the first feature is known and widens them when new
  features emerge;
- **bagging weights**: :meth:`Engine.bagging_weights` (Poisson online bagging, or none);
- **run the trees**: per example, :meth:`Engine.learn_one` / :meth:`Engine.predict_one` (one
  compiled call for every tree); per chunk, :meth:`Engine.run` drives a compiled pass of each
  tree (any kernel ``step(arena, t, start) -> stop``, e.g. an interval method's own pass) on
  ``n_jobs`` threads, growing a tree when its pass stopped for room and acting on its drift
  detector's signals (below);
- **aggregate**: :meth:`Engine.aggregate`.

The forest interface (the engine's part): what the interval methods, prediction sets, the
distributed layer, boosting and batch estimators may use of an engine; no code outside
``engine/`` reads its private (``_``) members (``tests/test_layout.py`` checks it):

- **encode a row**: :meth:`Engine.encode_one` writes a dict's row into :attr:`row_buffer`
  (a plain attribute, 1-d float64: the per-example paths inline ``features.encode_dict_into(x,
  learn, e.row_buffer)`` and store a new row back into it); :attr:`synced_version` is the
  version of the feature space the trees match (``!= features.version``: call :meth:`sync`);
- **fitted**: a plain attribute, whether every tree exists (once a feature is known);
- **route to leaves, tree predictions**: :meth:`Engine.predict_trees`, :meth:`Engine.apply`
  (a chunk), :meth:`Engine.predict_one` (a row); :attr:`last_predictions` is the trees'
  predictions of the last per-example call (scratch, overwritten by the next) and
  :attr:`leaf_memo` the memo of the trees' leaves and predictions of the last per-example
  prediction (see :meth:`Engine.remember`), both passed to the per-example kernels;
- **leaf payloads**: the trees' rows of :attr:`arena` (``state``, ``params``, ``int_of``);
- **per-example handle**: :meth:`Engine.handle` packs the engine's arrays and its row buffer for
  the handle kernels (``*_h``, :mod:`streamforest.engine.handle`), and
  :meth:`Engine.learn_row` / :meth:`Engine.learn_row_with` learn the row buffer.

Drift (ARF-style background trees; Gomes et al. 2017, Seah 2021 §4.2): each tree's detector
(``page_hinkley_update``, :mod:`streamforest.drift`: one statistic, two thresholds) signals

- a *warning* (``warning`` > 0, lower threshold): a background tree starts, empty, and learns
  every following row with its own Poisson bagging weight (its own generator);
- a *drift*: the background tree replaces the tree, or a fresh tree when there is none
  (``warning`` = 0: always a fresh tree);
- a *withdrawn* warning (the detector's statistic fell back to a new minimum before the drift
  threshold: the rise of the error that raised the warning is cancelled): the background tree is
  discarded.  That is the horizon of a warning: no fixed number of rows.

Background trees live in a second arena, ``bg``, of the same shape and type as the trees' (row
``t``: tree ``t``'s background tree while ``bg_on[t]``), so no kernel signature depends on them
and every kernel that predicts (or an interval method's pass) sees only the trees' arena; they
run without a detector of their own (the thesis: no change detection in an alternative until it
is adopted) and start one, fresh, when swapped in.  A pass stops after a row that signalled, the
background tree learns the rows the tree just learnt, then the engine acts: per example and per
chunk the same rows reach the same trees with the same weights, so both give the same forest.
Counts: :meth:`Engine.drift_stats`.

A tree's hyper-parameters come from a *spec*, a :class:`~streamforest.trees.HoeffdingTreeRegressor`
that is never fitted itself (its ``_tree_params`` gives the compiled parameters).  The tree kind is
chosen there: split rule (observers), leaf model and drift detector are parameters of the spec.

Threads: trees write only their own arena rows, so they run concurrently and never wait for each
other.  A tree that outgrows its row reallocates the arena (under a lock, copying every row as it
is); a tree whose pass was running on the old arrays meanwhile copies its own row over when its
call returns (:meth:`Engine.drive`), so no update is lost.  The same holds in the background
arena (tree ``t``'s thread runs its background tree too), and a swap writes the tree's row under
the lock as a reallocation does.  The background arena is released when no background tree is
left.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import streamforest._core as _core

from .. import rng as _rng
from ..concurrency import PicklableLock
from ..drift import N_PH, page_hinkley_init
from ..features import kernel_array
from ..tree_kinds import arena
from ..tree_kinds import state as tree_state
from . import budget
from .background_trees import DRIFT_STATS, DS_DRIFTS, BackgroundTrees
from .per_example import PerExample
from .tree_lifecycle import TreeLifecycle

_ENGINE = _core.engine  # the compiled passes (src/core/engine)
AGGREGATIONS = {
    "mean": _ENGINE.AGG_MEAN,
    "median": _ENGINE.AGG_MEDIAN,
    "weighted": _ENGINE.AGG_WEIGHTED,
}

# public attributes saved under their earlier (private) names: saved models and pickles keep
# their format
_SAVED_AS = (("fitted", "_fitted"), ("synced_version", "_synced"))


class Engine(TreeLifecycle, BackgroundTrees, PerExample):
    """The trees of one forest (see module docstring).

    Parameters
    ----------
    specs
        One tree spec per tree (hyper-parameters; their caps may be lowered by the budget).
    features
        The model's feature space (shared with the model).
    bagging
        Poisson rate of online bagging, 0 for none (each tree learns each row with weight ``w``).
    seed
        Seed of the bagging weights.
    aggregation
        ``"mean"`` or ``"median"`` of the tree predictions, or ``"weighted"`` by the trees'
        evidence weights (ABORF; see :meth:`aggregate`).
    max_memory_mb
        Memory budget of all trees (``None``: only each spec's own caps); see
        :class:`~streamforest.OnlineForestRegressor`.
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows.
    warning
        Warning threshold armed in every tree's drift detector: above it a background tree
        starts (see the module docstring); 0: no warnings, a drift resets the tree.
    """

    parallel_rows = 256  # chunks this long run their trees on threads (when n_jobs > 1)

    def __init__(self, specs, features, bagging=0.0, seed=None, aggregation="mean",
                 max_memory_mb=None, n_jobs=1, warning=0.0):  # fmt: skip
        self.specs = list(specs)
        self.features = features
        self.bagging = float(bagging)
        self.rng = _rng.new_state(seed)
        self.aggregation = AGGREGATIONS[aggregation]
        self.max_memory_mb = max_memory_mb
        self.n_jobs = int(n_jobs)
        T = len(self.specs)
        self.arena = arena.empty(T)
        self.created = np.zeros(T, np.int8)
        self.fitted = False  # every tree exists (once a feature is known): a plain attribute
        self.n_resets = np.zeros(T, np.int64)  # trees replaced (by a background or fresh tree)
        self.warning = float(warning)
        self.bg = arena.empty(T)  # background trees, row t for tree t (see the module docstring)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)  # their bagging weights' generators
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)  # columns DS_*
        self.synced_version = -1  # the version of the feature space the trees match (public)
        self.n_classes = 0  # classification trees: classes their fields hold (set by the model)
        self._synced_classes = 0
        self._lock = PicklableLock()
        self._scratch()

    def restrict(self, trees) -> None:
        """Keep only the trees ``trees`` (indices into this forest) before any tree exists: a
        *shard* of a forest whose trees are split over processes
        (:class:`streamforest.distributed.ShardedForest`).

        Each kept tree keeps its spec (its seed), and :meth:`bagging_weights` still draws every
        tree's weight of each row in the same order from the same generator and returns the kept
        trees' rows, so a kept tree learns exactly what it learns in the whole forest; the
        memory budget stays shared by the whole forest's trees.  Per-tree results (e.g.
        :meth:`predict_trees`) then have one row per kept tree, in the order of ``trees``.  A
        shard learns through the batch calls only (:meth:`learn`, :meth:`predict_learn`,
        :meth:`run`): the per-example kernels draw weights for the kept trees alone.
        """
        trees = np.asarray(trees, dtype=np.int64).reshape(-1)
        total = self.n_trees
        if self.created.any():
            raise RuntimeError("restrict a forest's trees before any tree exists")
        if trees.shape[0] == 0 or np.unique(trees).shape[0] != trees.shape[0]:
            raise ValueError(f"trees must be distinct tree indices, got {trees.tolist()}")
        if trees.min() < 0 or trees.max() >= total:
            raise ValueError(f"trees must be in [0, {total}), got {trees.tolist()}")
        self.shard = (total, trees)
        self.specs = [self.specs[t] for t in trees]
        T = len(self.specs)
        self.arena = arena.empty(T)
        self.created = np.zeros(T, np.int8)
        self.n_resets = np.zeros(T, np.int64)
        self.bg = arena.empty(T)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)
        self.fitted = False
        self._scratch()

    @property
    def forest_trees(self) -> int:
        """Trees of the whole forest (more than :attr:`n_trees` in a shard, see
        :meth:`restrict`)."""
        shard = self.__dict__.get("shard")
        return self.n_trees if shard is None else int(shard[0])

    def _scratch(self) -> None:
        T = len(self.specs)
        self._wt = np.zeros(T)
        self._bw = np.zeros(T)
        self.last_predictions = np.zeros(T)
        self._drifted = np.zeros(T, np.int8)
        self.row_buffer = np.empty(0)
        # the memo of the last per-example prediction (see engine.per_example): valid for the
        # row in ``row_buffer`` while ``_hint`` is the FeatureSpace's memo of that encoding
        self.leaf_memo = np.zeros((4, T))
        self._no_memo = np.zeros((4, 0))
        self._hint = None
        self._bg_live = bool(self.bg_on.any())
        self._lw = []  # (P, LW) of the last prequential passes (weighted aggregation)
        # the handle of the per-example kernels (see engine.handle), built from the arena and
        # row buffer it names (the scratch arrays and generator are only replaced here)
        self._h = self._h_arena = self._h_row = None
        self._threads = 0  # passes running their trees on threads now (see _release_old)

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in (
            "_wt",
            "_bw",
            "last_predictions",
            "_drifted",
            "_pool",
            "row_buffer",
            "_bg_live",
            "_lw",
            "leaf_memo",
            "_no_memo",
            "_hint",
            "_h",
            "_h_arena",
            "_h_row",
            "_threads",
            "_room_stale",
        ):
            d.pop(k, None)
        for public, saved in _SAVED_AS:  # (the saved state keeps its earlier names)
            if public in d:
                d[saved] = d.pop(public)
        # the rows' fields, not their reserve
        d["arena"] = arena.trimmed(self.arena, self.created)
        d["bg"] = arena.trimmed(self.bg, self.bg_on)
        return d

    def __setstate__(self, d):
        A = d.get("arena")
        if not isinstance(A, arena.Arena):
            raise ValueError("malformed engine state (no tree arena)")
        A = arena.upgrade(A, d.get("created"))  # an earlier layout: today's
        arena.check(A, d.get("created"))
        d["arena"] = A
        if isinstance(d.get("bg"), arena.Arena):
            d["bg"] = arena.upgrade(d["bg"], d.get("bg_on"))
            arena.check(d["bg"], d.get("bg_on"))
        if d.get("aggregation") not in AGGREGATIONS.values():
            raise ValueError(f"malformed engine state (aggregation {d.get('aggregation')!r})")
        d.setdefault("n_classes", 0)  # saved before classification trees
        d.setdefault("_synced_classes", 0)
        for public, saved in _SAVED_AS:
            if saved in d:
                d[public] = d.pop(saved)
        self.__dict__.update(d)
        if "bg" not in d:  # saved before background trees (format version 1)
            self._upgrade_v1()
        self._scratch()

    def _upgrade_v1(self) -> None:
        """An engine saved before background trees: no warnings (it reset its trees), no
        background trees, and each tree's detector restarted in the current layout (its state
        was the earlier detector's)."""
        T = self.n_trees
        self.warning = 0.0
        self.bg = arena.empty(T)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)
        self.drift_counts[:, DS_DRIFTS] = self.n_resets
        fields = tree_state.TreeState._fields
        for t in range(T):
            if self.created[t]:
                dd = np.zeros(N_PH)
                page_hinkley_init(dd, 0.0)
                st = self.state(t)._replace(drift_detector=dd)
                self.arena = arena.store(
                    self.arena, t, st, kept=[f != "drift_detector" for f in fields]
                )

    # --- shape ------------------------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        return len(self.specs)

    def _set_created(self, t: int) -> None:
        self.created[t] = 1
        self.fitted = bool(self.created.all())

    def state(self, t: int) -> tree_state.TreeState:
        """Tree ``t``'s state (numpy views, valid until the arena changes)."""
        return arena.load(self.arena, t)

    def params(self, t: int) -> tree_state.TreeParams:
        return arena.params_at(self.arena, t)

    def int_of(self, t: int, i: int) -> int:
        """Entry ``i`` of tree ``t``'s ``ints`` (see :mod:`streamforest.tree_kinds.state`)."""
        A = self.arena
        return int(A.ia[t, A.lay[t, 0, 0] + i])

    def tree_bytes(self, t: int) -> int:
        return arena.used_bytes(self.arena, t)

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees' fields and of the live background trees' (what the budget
        counts)."""
        trees = sum(self.tree_bytes(t) for t in range(self.n_trees) if self.created[t])
        bg = sum(arena.used_bytes(self.bg, t) for t in range(self.n_trees) if self.bg_on[t])
        return int(trees + bg)

    @property
    def held_bytes(self) -> int:
        """Bytes of the pages the trees' and the live background trees' fields lie on: what the
        process holds for them (:func:`~streamforest.tree_kinds.arena.held_bytes`; at least
        :attr:`memory_bytes`, at most two pages more per tree and arena array)."""
        trees = np.flatnonzero(np.asarray(self.created, bool)[: self.n_trees])
        bg = np.flatnonzero(np.asarray(self.bg_on, bool)[: self.n_trees])
        return arena.held_bytes(self.arena, trees) + arena.held_bytes(self.bg, bg)

    def _arena_of(self, bg: bool) -> arena.Arena:
        return self.bg if bg else self.arena

    def _put(self, bg: bool, A: arena.Arena) -> None:
        if bg:
            self.bg = A
        else:
            self.arena = A

    # --- life cycle -------------------------------------------------------------------------------
    def sync(self) -> None:
        """Create the trees (once a feature is known) and widen them to the feature space (and,
        for classification trees, to the classes and category codes known)."""
        fs = self.features
        key = fs.version
        if key == self.synced_version and self.n_classes == self._synced_classes:
            if self.max_memory_mb is not None and fs.room_refresh is None:
                self.update_feature_room()  # (a loaded model: its trees may have grown)
            return
        self._hint = None
        p = len(fs)
        if p == 0:
            self.update_feature_room()  # before the first feature: a fresh tree's room
            return
        with self._lock:
            had = [
                self.int_of(t, tree_state.I_NFEAT) for t in range(self.n_trees) if self.created[t]
            ]
            try:
                self._sync_trees(p)
            except BaseException:  # (a MemoryError): the new features forgotten, the trees as
                if had:  # they were (a first call is undone whole by its caller)
                    self._narrow(min(had))
                raise
            # the holes widened fields left in every row (a classifier's widened classes, the
            # rows an arena's lengthening copied): given back, or the process holds them
            for A, live in ((self.arena, self.created), (self.bg, self.bg_on)):
                for t in range(self.n_trees):
                    if live[t]:
                        arena.release_dead_pages(A, t)
            self.update_feature_room()
            budget.release_free_memory()  # the old arrays the widening freed (and the room's work)
        self.synced_version = key
        self._synced_classes = self.n_classes

    def _narrow(self, p0: int) -> None:
        """After a failed sync: every tree (and background tree) back to its first ``p0``
        features, which it had (those widened keep the room, unused), and the feature space's
        features past them forgotten, so that the call that brought them changes nothing."""
        for A, live in ((self.arena, self.created), (self.bg, self.bg_on)):
            for t in range(self.n_trees):
                if live[t]:
                    i = A.lay[t, 0, 0] + tree_state.I_NFEAT
                    A.ia[t, i] = min(int(A.ia[t, i]), p0)
        self.features.forget_features(p0)
        self.synced_version = self.features.version

    def _sync_trees(self, p: int) -> None:
        """Create or widen every tree to ``p`` features and the classes and categories known."""
        fs = self.features
        for t in range(self.n_trees):
            if not self.created[t]:
                self._create(t, p)
            elif self.int_of(t, tree_state.I_NFEAT) < p:
                self._widen(t, p)
            if self.n_classes:
                self._widen_classes(t)
            A = self.arena
            A.ia[t, A.lay[t, 0, 0] + tree_state.I_MAXCAT] = fs.max_categories
            if self.bg_on[t]:
                B = self.bg
                if B.ia[t, B.lay[t, 0, 0] + tree_state.I_NFEAT] < p:
                    self._widen(t, p, bg=True)
                    B = self.bg
                if self.n_classes:
                    self._widen_classes(t, bg=True)
                    B = self.bg
                B.ia[t, B.lay[t, 0, 0] + tree_state.I_MAXCAT] = fs.max_categories

    # --- bagging and aggregation ------------------------------------------------------------------
    def bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """``(n_trees, n)`` bagging weights of the next ``n`` rows (advances the generator; a
        shard draws the whole forest's and returns its trees', see :meth:`restrict`)."""
        out = np.empty((self.forest_trees, wa.shape[0]))
        _ENGINE.draw_weights(self.rng, self.bagging, wa, out)
        shard = self.__dict__.get("shard")
        return out if shard is None else np.ascontiguousarray(out[shard[1]])

    def aggregate(self, P: np.ndarray) -> np.ndarray:
        """The forest's predictions from ``(n_trees, n)`` tree predictions.  Weighted: with the
        weights each row was predicted with when ``P`` is the result of :meth:`predict_learn`
        (recorded there), else with the trees' current weights."""
        if self.aggregation == _ENGINE.AGG_MEDIAN:
            return np.median(P, axis=0)
        if self.aggregation == _ENGINE.AGG_WEIGHTED:
            LW = None
            for k, (Q, lw) in enumerate(self._lw):
                if Q is P:
                    LW = lw
                    del self._lw[k]
                    break
            if LW is None:
                LW = np.zeros((self.n_trees, 1))
                if self.fitted:
                    _ENGINE.tree_log_weights(self.arena, LW[:, 0])
            out = np.empty(P.shape[1])
            _ENGINE.weighted_columns(LW, np.ascontiguousarray(P), out)
            return out
        out = np.empty(P.shape[1])
        _ENGINE.mean_columns(kernel_array(P), out)  # (P.mean(axis=0) sums one column pairwise)
        return out

    def tree_weights(self) -> np.ndarray:
        """The trees' current weights under weighted aggregation (softmax of their log
        evidence; they sum to 1)."""
        lw = np.zeros(self.n_trees)
        if self.fitted:
            _ENGINE.tree_log_weights(self.arena, lw)
        w = np.exp(lw - lw.max())
        return w / w.sum()

    # --- running the trees ------------------------------------------------------------------------
    def _carry_row(self, old: arena.Arena, t: int, bg: bool = False) -> None:
        """Tree ``t`` ran on arena ``old`` while another tree reallocated the arena (copying
        every row as it was then): copy ``t``'s row, which only ``t``'s thread writes, into the
        current arrays."""
        with self._lock:
            cur = self._arena_of(bg)
            if cur is old:
                return
            for a, b in zip((old.fa, old.ia, old.ba), (cur.fa, cur.ia, cur.ba), strict=True):
                b[t, : a.shape[1]] = a[t]

    def drive(self, t: int, step, n: int, before=None, on_reset=None, rows=None) -> None:
        """Call ``step(arena, t, start) -> stop`` until all ``n`` rows are done.  After each call:
        the background tree of ``t`` (if any) learns the rows the tree just learnt (``rows``:
        the chunk's ``(X, y, w)``, required when the pass learns), ``before(stop)`` if given (a
        pass grows its own buffers there), then the tree is grown if it stopped for lack of room,
        or the engine acts on its drift detector's signal (``on_reset(stop)`` if given when the
        tree was replaced)."""
        i = 0
        wb = None
        while True:
            A = self.arena
            i0 = i
            bg = self.bg_on[t]
            if bg and rows is None:
                seen = self.int_of(t, tree_state.I_NSEEN)
            i = step(A, t, i)
            self._carry_row(A, t)  # if another tree reallocated the arena meanwhile
            if bg:
                if rows is not None:
                    if i > i0:
                        wb = self._background_rows(t, rows, i0, i, wb)
                elif self.int_of(t, tree_state.I_NSEEN) != seen:
                    raise RuntimeError(
                        "internal error: a learning pass ran without its rows (Engine.run(..., "
                        f"rows=(X, y, w))): tree {t}'s background tree cannot learn them"
                    )
            if before is not None:
                before(i)
            if self.after_stop(t, i, n) and on_reset is not None:
                on_reset(i)
            if i >= n:
                return

    def executor(self) -> ThreadPoolExecutor:
        """The engine's ``n_jobs`` worker threads (created once, not saved)."""
        ex = self.__dict__.get("_pool")
        if ex is None:
            ex = self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="streamforest")
        return ex

    def each_tree(self, run, n: int) -> None:
        """``run(t)`` for every tree, on ``n_jobs`` threads when the chunk is long enough."""
        if self.n_jobs > 1 and n >= self.parallel_rows:
            self._threads += 1
            try:
                list(self.executor().map(run, range(self.n_trees)))
            finally:
                self._threads -= 1
        else:
            for t in range(self.n_trees):
                run(t)

    def run(self, step, n: int, before=None, on_reset=None, rows=None) -> None:
        """:meth:`drive` every tree through ``step``; ``before`` and ``on_reset`` take
        ``(t, stop)``.  A pass that learns gives its rows, ``rows=(X, y, w)`` (``w`` the sample
        weights): background trees learn them too."""

        def one(t):
            b = (lambda stop: before(t, stop)) if before is not None else None
            r = (lambda stop: on_reset(t, stop)) if on_reset is not None else None
            self.drive(t, step, n, b, r, rows)

        self._hint = None
        self.each_tree(one, n)

    def learn(self, Xa, ya, W, wa) -> None:
        """Every tree learns the rows with its weights ``W[t]`` (``wa``: the sample weights,
        for background trees)."""
        K = _ENGINE
        self.run(lambda A, t, i: K.learn_rows(A, t, Xa, ya, W, i), Xa.shape[0],
                 rows=(Xa, ya, wa))  # fmt: skip

    def predict_learn(self, Xa, ya, W, wa) -> np.ndarray:
        """``(n_trees, n)`` predictions made before learning each row; the trees learn (as
        :meth:`learn`)."""
        P = np.zeros((self.n_trees, Xa.shape[0]))
        K = _ENGINE
        if self.aggregation != _ENGINE.AGG_WEIGHTED:
            self.run(lambda A, t, i: K.predict_learn_rows(A, t, Xa, ya, W, i, P), Xa.shape[0],
                     rows=(Xa, ya, wa))  # fmt: skip
            return P
        LW = np.zeros_like(P)  # each tree's weight before each row, for aggregate(P)
        self.run(lambda A, t, i: K.predict_learn_rows_lw(A, t, Xa, ya, W, i, P, LW),
                 Xa.shape[0], rows=(Xa, ya, wa))  # fmt: skip
        self._lw = [*self._lw[-3:], (P, LW)]
        return P

    def predict_trees(self, Xa, n_classes: int = 0) -> np.ndarray:
        """``(n_trees, n)`` tree predictions, or for classification trees (``n_classes`` > 0)
        ``(n_trees, n, n_classes)`` class probabilities (zeros before any tree exists)."""
        n = Xa.shape[0]
        P = np.zeros((self.n_trees, n, n_classes) if n_classes else (self.n_trees, n))
        if self.fitted and n:
            K = _ENGINE

            def run(t):
                K.predict_rows(self.arena, t, Xa, P)

            self.each_tree(run, n)
        return P

    def apply(self, t: int, Xa) -> np.ndarray:
        """The leaf node of tree ``t`` that each row of ``Xa`` reaches (routing to leaves)."""
        out = np.empty(Xa.shape[0], dtype=np.int64)
        _ENGINE.apply_rows(self.arena, t, Xa, out)
        return out
