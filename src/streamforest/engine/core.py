"""The forest engine: the compiled state of a forest's trees and its life cycle.

An :class:`Engine` owns the trees of one forest (a single tree is an engine of one tree without
bagging) in one :class:`~streamforest.trees._arena.Arena`, and is the one door through which
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

Drift (ARF-style background trees; Gomes et al. 2017, Seah 2021 §4.2): each tree's detector
(:func:`streamforest.drift.page_hinkley_update`, one statistic, two thresholds) signals

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

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import rng as _rng
from ..compiled import entry_point
from ..drift import N_PH, PH_DRIFT, PH_WARNING, PH_WITHDRAWN, page_hinkley_init
from ..features import kernel_array
from ..trees import _arena as AR
from ..trees import _state as S
from ..trees.pregrown import pregrown_size
from ..trees.tree_kind import KindTag, TreeKind, kind_of
from . import _handle as H
from . import _kernels as FK
from . import budget

AGGREGATIONS = {"mean": FK.AGG_MEAN, "median": FK.AGG_MEDIAN, "weighted": FK.AGG_WEIGHTED}
_ENTRY_POINTS: dict = {}  # (kernel, tree kind) -> its compiled entry point (see Engine.call)
_FRESH, _DONE = FK.FRESH, FK.DONE  # module constants: the per-example paths read them often
_LEARN_ONE_H, _PREDICT_ONE_H = FK.learn_one_h, FK.predict_one_h

# columns of Engine.drift_counts
DS_WARNINGS, DS_DRIFTS, DS_STARTED, DS_SWAPPED, DS_DISCARDED = range(5)
DRIFT_STATS = ("warnings", "drifts", "background_started", "background_swapped",
               "background_discarded")  # fmt: skip


def _with_kind(A: AR.Arena, kind: TreeKind) -> AR.Arena:
    """``A`` whose kernels serve trees of ``kind`` too (the union of its kind and ``kind``: see
    :mod:`streamforest.trees.tree_kind`)."""
    if A.kind is not None:
        kind = A.kind.kind.union(kind)
        if kind == A.kind.kind:
            return A
    return A._replace(kind=KindTag(kind))


def _arena_kind(A: AR.Arena, created) -> AR.Arena:
    """``A`` with the kind of its created trees (``created[t]``), read from their parameters
    (a loaded arena: the kind is not saved)."""
    A = A._replace(kind=None)
    for t in range(A.lay.shape[0]):
        if created is None or created[t]:
            A = _with_kind(A, kind_of(AR.params_at(A, t)))
    return A


class _Lock:
    """A re-entrant lock that pickles as a new one (models pickle with their engine)."""

    def __init__(self):
        self._lock = threading.RLock()

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def __enter__(self):
        self._lock.acquire()

    def __exit__(self, *exc):
        self._lock.release()


class Engine:
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
        self.arena = AR.empty(T)
        self.created = np.zeros(T, np.int8)
        self._fitted = False
        self.n_resets = np.zeros(T, np.int64)  # trees replaced (by a background or fresh tree)
        self.warning = float(warning)
        self.bg = AR.empty(T)  # background trees, row t for tree t (see the module docstring)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)  # their bagging weights' generators
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)  # columns DS_*
        self._synced = -1  # the version of the feature space the trees match
        self.n_classes = 0  # classification trees: classes their fields hold (set by the model)
        self._synced_classes = 0
        self._lock = _Lock()
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
        self.arena = AR.empty(T)
        self.created = np.zeros(T, np.int8)
        self.n_resets = np.zeros(T, np.int64)
        self.bg = AR.empty(T)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)
        self._fitted = False
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
        self._p = np.zeros(T)
        self._drifted = np.zeros(T, np.int8)
        self._row = np.empty(0)
        # the memo of the last per-example prediction (see engine._kernels): valid for the
        # row in ``_row`` while ``_hint`` is the FeatureSpace's memo of that encoding
        self._memo = np.zeros((3, T))
        self._no_memo = np.zeros((3, 0))
        self._hint = None
        self._bg_live = bool(self.bg_on.any())
        self._lw = []  # (P, LW) of the last prequential passes (weighted aggregation)
        # the handle of the per-example kernels (see engine._handle), built from the arena and
        # row buffer it names (the scratch arrays and generator are only replaced here)
        self._h = self._h_arena = self._h_row = None

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in (
            "_wt",
            "_bw",
            "_p",
            "_drifted",
            "_pool",
            "_row",
            "_bg_live",
            "_lw",
            "_memo",
            "_no_memo",
            "_hint",
            "_h",
            "_h_arena",
            "_h_row",
        ):
            d.pop(k, None)
        # the rows' fields, not their reserve; not the kind (read from the trees' parameters)
        d["arena"] = AR.trimmed(self.arena, self.created)._replace(kind=None)
        d["bg"] = AR.trimmed(self.bg, self.bg_on)._replace(kind=None)
        return d

    def __setstate__(self, d):
        A = d.get("arena")
        if not isinstance(A, AR.Arena):
            raise ValueError("malformed engine state (no tree arena)")
        A = AR.upgrade(A, d.get("created"))  # an earlier layout: today's
        AR.check(A, d.get("created"))
        d["arena"] = _arena_kind(A, d.get("created"))
        if isinstance(d.get("bg"), AR.Arena):
            d["bg"] = AR.upgrade(d["bg"], d.get("bg_on"))
            AR.check(d["bg"], d.get("bg_on"))
            d["bg"] = _arena_kind(d["bg"], d.get("bg_on"))
        d.setdefault("n_classes", 0)  # saved before classification trees
        d.setdefault("_synced_classes", 0)
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
        self.bg = AR.empty(T)
        self.bg_on = np.zeros(T, np.int8)
        self.bg_rng = np.zeros((T, 1), np.uint64)
        self.drift_counts = np.zeros((T, len(DRIFT_STATS)), np.int64)
        self.drift_counts[:, DS_DRIFTS] = self.n_resets
        fields = S.TreeState._fields
        for t in range(T):
            if self.created[t]:
                dd = np.zeros(N_PH)
                page_hinkley_init(dd, 0.0)
                st = self.state(t)._replace(dd=dd)
                self.arena = AR.store(self.arena, t, st, kept=[f != "dd" for f in fields])

    # --- shape ------------------------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        return len(self.specs)

    @property
    def fitted(self) -> bool:
        """Whether every tree exists (once the first feature is known)."""
        return self._fitted

    def _set_created(self, t: int) -> None:
        self.created[t] = 1
        self._fitted = bool(self.created.all())

    def state(self, t: int) -> S.TreeState:
        """Tree ``t``'s state (numpy views, valid until the arena changes)."""
        return AR.load(self.arena, t)

    def params(self, t: int) -> S.TreeParams:
        return AR.params_at(self.arena, t)

    def int_of(self, t: int, i: int) -> int:
        """Entry ``i`` of tree ``t``'s ``ints`` (see :mod:`streamforest.trees._state`)."""
        A = self.arena
        return int(A.ia[t, A.lay[t, 0, 0] + i])

    def tree_bytes(self, t: int) -> int:
        return AR.used_bytes(self.arena, t)

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees and of the live background trees."""
        trees = sum(self.tree_bytes(t) for t in range(self.n_trees) if self.created[t])
        bg = sum(AR.used_bytes(self.bg, t) for t in range(self.n_trees) if self.bg_on[t])
        return int(trees + bg)

    def _arena_of(self, bg: bool) -> AR.Arena:
        return self.bg if bg else self.arena

    def _put(self, bg: bool, A: AR.Arena) -> None:
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
        if key == self._synced and self.n_classes == self._synced_classes:
            return
        self._hint = None
        p = len(fs)
        if p == 0:
            return
        with self._lock:
            for t in range(self.n_trees):
                if not self.created[t]:
                    self._create(t, p)
                elif self.int_of(t, S.I_NFEAT) < p:
                    self._widen(t, p)
                if self.n_classes:
                    self._widen_classes(t)
                A = self.arena
                A.ia[t, A.lay[t, 0, 0] + S.I_MAXCAT] = fs.max_categories
                if self.bg_on[t]:
                    B = self.bg
                    if B.ia[t, B.lay[t, 0, 0] + S.I_NFEAT] < p:
                        self._widen(t, p, bg=True)
                        B = self.bg
                    if self.n_classes:
                        self._widen_classes(t, bg=True)
                        B = self.bg
                    B.ia[t, B.lay[t, 0, 0] + S.I_MAXCAT] = fs.max_categories
        self._synced = key
        self._synced_classes = self.n_classes

    def _widen_classes(self, t: int, bg: bool = False) -> None:
        """Give classification tree ``t`` room for every class and category code known."""
        before = st = AR.load(self._arena_of(bg), t)
        K0 = S.n_classes(st)
        if not K0:
            return
        C0 = S.n_cat_codes(st)
        cats = self.features.max_categories
        if K0 >= self.n_classes and C0 >= cats:
            return
        # wider leaves cost more: the tree's caps are worked out again for its share, and leaf
        # slots allocated past the new cap (and never used) are given back before widening
        prm = self._capped_params(t, int(st.ints[S.I_NFEAT]), bg)
        k = int(st.ints[S.I_NALTS]) + 2 if prm.alt_lambda > 0 else 1  # as make_room
        st = S.shrink_leaves(st, prm.max_leaves + k)
        st = S.grow_classes(st, self.n_classes, max(cats, 2 * C0) if cats > C0 else C0)
        kept = [a is b for a, b in zip(st, before, strict=True)]
        self._put(bg, AR.store(self._arena_of(bg), t, st, prm, kept=kept))

    def _tree_seed(self, t: int):
        seed, k = self.specs[t].seed, int(self.n_resets[t])
        if seed is None or k == 0:
            return seed
        return int(np.random.SeedSequence([int(seed), k]).generate_state(1, np.uint64)[0])

    def _tree_params(self, t: int, p: int, bg: bool = False) -> S.TreeParams:
        """Tree ``t``'s compiled parameters for ``p`` features (a background tree's: without
        drift detection)."""
        prm = self.specs[t]._tree_params(p)
        return prm._replace(drift_lambda=0.0) if bg else prm

    def _capped_params(self, t: int, p: int, bg: bool = False) -> S.TreeParams:
        """:meth:`_tree_params` with the memory budget's caps for ``p`` features and the
        classes and category codes known now (a background tree's within its part of the
        budget).  Caps only ever come down: wider rows (a new feature, class or category) make
        each leaf cost more, and a tree that already holds more than its new cap stops
        growing (what it holds is not shrunk)."""
        spec = self.specs[t]
        self._apply_memory_budget(spec, p)
        prm = self._tree_params(t, p, bg)
        caps = self._budget_caps(spec, p, background=True) if bg else None
        if caps is not None:
            prm = prm._replace(max_leaves=min(prm.max_leaves, caps[0]),
                               max_bins=min(prm.max_bins, caps[1]))  # fmt: skip
        return prm

    def _new_tree(self, t: int, p: int, seed, bg: bool = False) -> None:
        """A fresh tree in row ``t`` of the trees' arena (or of the background arena)."""
        spec = self.specs[t]
        prm = self._capped_params(t, p, bg)
        extra = prm.split_rule == S.SPLIT_EXTRA  # no observers: a token bin pool
        grown = prm.split_rule == S.SPLIT_PREGROWN  # the whole tree, grown now
        gauss = prm.split_rule == S.SPLIT_GAUSS  # naive Bayes statistics: no observers either
        classify = prm.task == S.TASK_CLASSIFICATION
        if grown:
            nodes, leaves = pregrown_size(prm.max_depth)
        else:  # a first allocation within the caps (see make_room); a classifier's leaves
            # grow with its classes and category codes (up to hundreds of kB each): fewer
            first = 16 if classify else 128
            leaves = min(first, prm.max_leaves + 1)
            nodes = min(2 * first, 2 * prm.max_leaves + 2)
        token = extra or grown or gauss
        bins = budget.TOKEN_BINS if token else min(256, int(spec.max_observer_bins))
        st = S.allocate(
            p,
            _rng.new_state(seed),
            sketch_k=int(spec.leaf_quantile_k or 0),
            bins=bins,
            nodes=nodes,
            leaves=leaves,
            m_min=prm.m_min if extra else 0,
            alternates=prm.alt_lambda > 0,
            pregrown=grown,
            n_classes=max(1, self.n_classes) if classify else 0,
            n_cats=self.features.max_categories if classify else 0,
            ranges=gauss,
            nig=prm.leaf_model == S.LEAF_BAYES,  # ABORF's Bayesian leaves
        )
        st.ft_nominal[:p] = self.features.nominal
        st.ints[S.I_MAXCAT] = self.features.max_categories
        page_hinkley_init(st.dd, self.warning)
        A = AR.store(self._arena_of(bg), t, st, prm, kept=[False] * len(st))
        self._put(bg, _with_kind(A, kind_of(prm)))
        FK.init_tree(self._arena_of(bg), t, classify)

    def _create(self, t: int, p: int) -> None:
        self._new_tree(t, p, self._tree_seed(t))
        self._set_created(t)

    def _widen(self, t: int, p: int, bg: bool = False) -> None:
        before = st = AR.load(self._arena_of(bg), t)
        old = int(st.ints[S.I_NFEAT])
        pc = st.ft_nominal.shape[0]
        if p > pc:
            st = S.grow(st, features=max(p, 2 * pc))
        st.ft_nominal[:p] = self.features.nominal
        # new features are observed by every existing leaf (see _choose_features)
        st.lf_mask[:, old:p] = 1
        prm = AR.params_at(self._arena_of(bg), t)
        st.lf_scale[:, old:p] = 1.0 / prm.qo_radius if prm.observer == S.OBS_QO else prm.tebst_scale
        if st.lf_xc.shape[2]:  # extremely randomised split: no candidate on a new feature, and
            st.lf_xc[:, old:p, S.XC_THR] = np.nan  # the examples buffered before it lack it
            st.lf_buf[:, 2 + old : 2 + p, :] = np.nan
        if st.lf_rng.shape[2]:  # Gaussian split rule: no value of a new feature seen yet
            st.lf_rng[:, old:p, 0] = np.inf
            st.lf_rng[:, old:p, 1] = -np.inf
        st.ints[S.I_NFEAT] = p
        kept = [a is b for a, b in zip(st, before, strict=True)]
        self._put(bg, AR.store(self._arena_of(bg), t, st, self._capped_params(t, p, bg), kept))

    def _apply_memory_budget(self, spec, p: int) -> None:
        """Cap a new tree's leaves and observer bins so that the forest holds at most
        ``max_memory_mb`` (split evenly among the trees; with warnings armed, a share of each
        tree's part is kept for its background tree; see :mod:`.budget`)."""
        caps = self._budget_caps(spec, p, background=False)
        if caps is not None:
            spec.max_leaves = int(min(spec.max_leaves, caps[0]))
            spec.max_observer_bins = int(min(spec.max_observer_bins, caps[1]))

    def _budget_caps(self, spec, p: int, background: bool):
        """``(max_leaves, max_bins)`` of tree ``spec``'s share of the budget (or of its
        background tree's), ``None`` without a budget."""
        if self.max_memory_mb is None:
            return None
        share = self._tree_share(background)
        prm = spec._tree_params(p)
        classify = prm.task == S.TASK_CLASSIFICATION
        units = budget.unit_bytes(
            p,
            sketch_k=int(spec.leaf_quantile_k or 0),
            m_min=prm.m_min if prm.split_rule == S.SPLIT_EXTRA else 0,
            alternates=prm.alt_lambda > 0,
            n_classes=max(1, self.n_classes) if classify else 0,
            n_cats=self.features.max_categories if classify else 0,
            ranges=prm.split_rule == S.SPLIT_GAUSS,
        )
        observers = prm.split_rule == S.SPLIT_OBSERVERS
        if prm.alt_lambda > 0:  # make_room keeps k = alternates + 2 slots free past the cap
            share -= budget.ALTERNATE_SLACK * (units.leaf + 2 * units.node)
        return budget.tree_caps(share, units, observers, sketch=prm.sketch_k > 0)

    def _tree_share(self, background: bool) -> float:
        """Bytes of the budget for one tree (or for one background tree)."""
        share = self.max_memory_mb * 2**20 / self.forest_trees  # the whole forest's trees
        if self.warning > 0:
            bg = budget.BACKGROUND_SHARE
            share *= bg if background else 1.0 - bg
        return share

    def reset(self, t: int) -> None:
        """Replace tree ``t`` by a fresh one (after a detected drift)."""
        self._hint = None
        with self._lock:
            self.n_resets[t] += 1
            self._create(t, len(self.features))

    # --- drift: signals and background trees ------------------------------------------------------
    def _sub_seed(self, t: int, k: int, kind: int):
        seed = self.specs[t].seed
        if seed is None:
            return None
        return int(np.random.SeedSequence([int(seed), k, kind]).generate_state(1, np.uint64)[0])

    def _start_background(self, t: int) -> None:
        """Tree ``t`` warned: an empty background tree starts in row ``t`` of ``bg``."""
        k = int(self.drift_counts[t, DS_STARTED])
        self._new_tree(t, len(self.features), self._sub_seed(t, k, 1), bg=True)
        self.bg_rng[t] = _rng.new_state(self._sub_seed(t, k, 2))
        self.bg_on[t] = 1
        self._bg_live = True
        self.drift_counts[t, DS_STARTED] += 1

    def _end_background(self, t: int) -> None:
        self.bg_on[t] = 0
        self._bg_live = bool(self.bg_on.any())
        if not self._bg_live:  # release the background arena's memory
            self.bg = AR.empty(self.n_trees)
            budget.release_free_memory()

    def _swap(self, t: int) -> None:
        """Tree ``t`` drifted: its background tree takes its place, with a fresh detector."""
        self._hint = None
        st = AR.load(self.bg, t)
        page_hinkley_init(st.dd, self.warning)
        prm = self._tree_params(t, int(st.ints[S.I_NFEAT]))
        if st.ints[S.I_FROZEN] and st.ints[S.I_NLEAVES] < prm.max_leaves:
            # it froze at a background tree's caps: it grows on within the tree's
            hw = int(st.ints[S.I_LEAF_HW])
            live = st.lf_node[:hw] >= 0
            live[live] = st.nd_depth[st.lf_node[:hw][live]] < prm.max_depth
            st.lf_active[:hw][live] = 1
            st.lf_inh[:hw][live] = st.lf_stat[:hw][live]  # their observers start empty
            st.lf_last[:hw][live] = st.lf_stat[:hw][live, S.S_W]
            st.ints[S.I_FROZEN] = 0
        self.arena = AR.store(self.arena, t, st, prm)  # copied (st: views of bg)
        self.n_resets[t] += 1
        self.drift_counts[t, DS_SWAPPED] += 1
        self._end_background(t)

    def _signal(self, t: int, code: int) -> bool:
        """Act on tree ``t``'s detector signal (under the lock); True if the tree was
        replaced."""
        A = self.arena
        A.ia[t, A.lay[t, 0, 0] + S.I_DRIFT] = 0
        c = self.drift_counts[t]
        if code == PH_DRIFT:
            c[DS_DRIFTS] += 1
            if self.bg_on[t]:
                self._swap(t)
            else:
                self.reset(t)
            return True
        if code == PH_WARNING:
            c[DS_WARNINGS] += 1
            if self.bg_on[t]:  # (not after a withdrawn warning; kept general) a newer one
                c[DS_DISCARDED] += 1
            self._start_background(t)
        elif code == PH_WITHDRAWN and self.bg_on[t]:
            c[DS_DISCARDED] += 1
            self._end_background(t)
        return False

    def drift_stats(self) -> dict:
        """Counts of the drift machinery: per tree (lists) and in total (see
        :attr:`streamforest.OnlineForestRegressor.drift_stats_`)."""
        c = self.drift_counts
        out = {name: int(c[:, k].sum()) for k, name in enumerate(DRIFT_STATS)}
        out["background_live"] = int(self.bg_on.sum())
        out["replacements"] = int(self.n_resets.sum())
        per = {name: c[:, k].tolist() for k, name in enumerate(DRIFT_STATS)}
        per["background_live"] = self.bg_on.astype(np.int64).tolist()
        per["replacements"] = self.n_resets.tolist()
        out["per_tree"] = per
        return out

    def make_room(self, t: int, bg: bool = False) -> None:
        """Grow tree ``t``'s arrays (it stopped for lack of room); ``bg``: its background
        tree's."""
        with self._lock:
            st = AR.load(self._arena_of(bg), t)
            prm = AR.params_at(self._arena_of(bg), t)
            ints = st.ints
            kw = {}
            k = ints[S.I_NALTS] + 2 if prm.alt_lambda > 0 else 1  # as the kernels' _room
            # doubling, but not past the caps: a tree at its leaf cap has 2 * max_leaves - 1
            # nodes and, frozen, still needs room for one split's worth (see _room)
            n_nodes, n_slots = st.nd_feat.shape[0], st.lf_node.shape[0]
            if ints[S.I_NNODES] + 2 * k > n_nodes:
                need = int(ints[S.I_NNODES]) + 2 * k
                kw["nodes"] = budget.grown(n_nodes + k, need, 2 * prm.max_leaves + 2 * k)
            free_leaves = ints[S.I_LEAF_NFREE] + n_slots - ints[S.I_LEAF_HW]
            if free_leaves < k:
                need = n_slots + k - int(free_leaves)
                kw["leaves"] = budget.grown(n_slots + k // 2, need, prm.max_leaves + k)
            if ints[S.I_CAT_USED] + ints[S.I_MAXCAT] > st.cats.shape[0]:
                kw["cats"] = 2 * (st.cats.shape[0] + ints[S.I_MAXCAT])
            n_bins = st.bn.shape[0]
            if n_bins - ints[S.I_BINS_LIVE] < ints[S.I_NFEAT] and n_bins < prm.max_bins:
                kw["bins"] = min(prm.max_bins, 2 * n_bins)
            if not kw:
                raise RuntimeError("internal error: the tree asked for room it does not need")
            old = st
            st = S.grow(st, **kw)
            # the row laid out afresh (no hole where a grown field was): what the process holds
            # for the tree is then what memory_bytes counts; the fields growth left alone are
            # the loaded views of the row
            views = [a is b for a, b in zip(st, old, strict=True)]
            self._put(bg, AR.store(self._arena_of(bg), t, st, views=views))
            if "bins" in kw:
                self.call(FK.rebuild_hash_at, (self._arena_of(bg), t), self._arena_of(bg).kind)
        budget.release_free_memory()  # the old arrays and the row's assembly

    def after_stop(self, t: int, stop: int, n: int) -> bool:
        """After tree ``t``'s pass returned ``stop`` (of ``n`` rows): act on its drift
        detector's signal (a drift replaces the tree: returns True; a warning starts a background
        tree, a withdrawn one drops it), else grow the tree if it stopped for lack of room.
        Under the lock: the room check may free observer bins, which another tree's
        reallocation must not copy half-done."""
        with self._lock:
            code = self.int_of(t, S.I_DRIFT)
            if code and self._signal(t, code):
                return True
            if stop < n and FK.lacks_room(self.arena, t):
                self.make_room(t)
            return False

    def load_kernels(self) -> None:
        """Load (or compile) kernels that only run when a tree grows, so that a timed run does
        not pay for them; rehashing the observer bins in place changes nothing."""
        if self.fitted:
            with self._lock:
                FK.rebuild_hash_at(self.arena, 0)

    # --- bagging and aggregation ------------------------------------------------------------------
    def bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """``(n_trees, n)`` bagging weights of the next ``n`` rows (advances the generator; a
        shard draws the whole forest's and returns its trees', see :meth:`restrict`)."""
        out = np.empty((self.forest_trees, wa.shape[0]))
        FK.draw_weights(self.rng, self.bagging, wa, out)
        shard = self.__dict__.get("shard")
        return out if shard is None else np.ascontiguousarray(out[shard[1]])

    def aggregate(self, P: np.ndarray) -> np.ndarray:
        """The forest's predictions from ``(n_trees, n)`` tree predictions.  Weighted: with the
        weights each row was predicted with when ``P`` is the result of :meth:`predict_learn`
        (recorded there), else with the trees' current weights."""
        if self.aggregation == FK.AGG_MEDIAN:
            return np.median(P, axis=0)
        if self.aggregation == FK.AGG_WEIGHTED:
            LW = None
            for k, (Q, lw) in enumerate(self._lw):
                if Q is P:
                    LW = lw
                    del self._lw[k]
                    break
            if LW is None:
                LW = np.zeros((self.n_trees, 1))
                if self.fitted:
                    FK.tree_log_weights(self.arena, LW[:, 0])
            out = np.empty(P.shape[1])
            FK.weighted_columns(LW, np.ascontiguousarray(P), out)
            return out
        out = np.empty(P.shape[1])
        FK.mean_columns(kernel_array(P), out)  # (P.mean(axis=0) sums one column pairwise)
        return out

    def tree_weights(self) -> np.ndarray:
        """The trees' current weights under weighted aggregation (softmax of their log
        evidence; they sum to 1)."""
        lw = np.zeros(self.n_trees)
        if self.fitted:
            FK.tree_log_weights(self.arena, lw)
        w = np.exp(lw - lw.max())
        return w / w.sum()

    # --- running the trees ------------------------------------------------------------------------
    def _carry_row(self, old: AR.Arena, t: int, bg: bool = False) -> None:
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
                seen = self.int_of(t, S.I_NSEEN)
            i = step(A, t, i)
            self._carry_row(A, t)  # if another tree reallocated the arena meanwhile
            if bg:
                if rows is not None:
                    if i > i0:
                        wb = self._background_rows(t, rows, i0, i, wb)
                elif self.int_of(t, S.I_NSEEN) != seen:
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

    def _background_rows(self, t: int, rows, i0: int, i1: int, wb):
        """Tree ``t``'s background tree learns rows ``i0..i1`` of the chunk ``rows`` (its
        weights drawn first; ``wb`` the chunk's weight buffer, made here when None)."""
        X, y, w = rows
        if wb is None:
            wb = np.empty(X.shape[0])
        FK.draw_background(self.bg_rng[t], self.bagging, w, wb, i0, i1)
        Xs, ys = X[:i1], y[:i1]
        j = i0
        while True:
            B = self.bg
            j = FK.background_rows(B, t, Xs, ys, wb, j)
            self._carry_row(B, t, bg=True)
            if j >= i1:
                return wb
            self.make_room(t, bg=True)

    def executor(self) -> ThreadPoolExecutor:
        """The engine's ``n_jobs`` worker threads (created once, not saved)."""
        ex = self.__dict__.get("_pool")
        if ex is None:
            ex = self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="streamforest")
        return ex

    def each_tree(self, run, n: int) -> None:
        """``run(t)`` for every tree, on ``n_jobs`` threads when the chunk is long enough."""
        if self.n_jobs > 1 and n >= self.parallel_rows:
            list(self.executor().map(run, range(self.n_trees)))
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
        self.run(lambda A, t, i: FK.learn_rows(A, t, Xa, ya, W, i), Xa.shape[0],
                 rows=(Xa, ya, wa))  # fmt: skip

    def predict_learn(self, Xa, ya, W, wa) -> np.ndarray:
        """``(n_trees, n)`` predictions made before learning each row; the trees learn (as
        :meth:`learn`)."""
        P = np.zeros((self.n_trees, Xa.shape[0]))
        if self.aggregation != FK.AGG_WEIGHTED:
            self.run(lambda A, t, i: FK.predict_learn_rows(A, t, Xa, ya, W, i, P), Xa.shape[0],
                     rows=(Xa, ya, wa))  # fmt: skip
            return P
        LW = np.zeros_like(P)  # each tree's weight before each row, for aggregate(P)
        self.run(lambda A, t, i: FK.predict_learn_rows_lw(A, t, Xa, ya, W, i, P, LW),
                 Xa.shape[0], rows=(Xa, ya, wa))  # fmt: skip
        self._lw = [*self._lw[-3:], (P, LW)]
        return P

    def predict_trees(self, Xa) -> np.ndarray:
        """``(n_trees, n)`` tree predictions (zeros before any tree exists)."""
        n = Xa.shape[0]
        P = np.zeros((self.n_trees, n))
        if self.fitted and n:

            def run(t):
                FK.predict_rows(self.arena, t, Xa, P)

            self.each_tree(run, n)
        return P

    def apply(self, t: int, Xa) -> np.ndarray:
        out = np.empty(Xa.shape[0], dtype=np.int64)
        FK.apply_rows(self.arena, t, Xa, out)
        return out

    # --- one example ------------------------------------------------------------------------------
    def _handle(self) -> np.ndarray:
        """The handle of the engine's arrays for the per-example kernels (``FK.*_h``), built
        anew when the arena or the row buffer is not the one it was built from."""
        A, row = self.arena, self._row
        if self._h_arena is not A or self._h_row is not row:
            self._h = self._handle_of(row, self._h)  # (rebuilt in place: no allocation)
            self._h_arena, self._h_row = A, row
        return self._h

    def _handle_of(self, row: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A handle of the engine's arrays with ``row`` (a 1-d float64 C-contiguous array) as
        the row: valid while the arena and that row are (the caller keeps them alive)."""
        A = self.arena
        return H.build((A.fa, A.ia, A.ba, A.lay, A.pa, self.rng, row, self._wt, self._p,
                        self._drifted, self._memo, self._no_memo), out)  # fmt: skip

    def call(self, kernel, args: tuple, kind=None):
        """``kernel(*args)`` through its compiled entry point (see
        :func:`streamforest.compiled.entry_point`): the per-example calls skip numba's type
        dispatch, which for an Arena argument costs more than a tree's prediction.  Only for the
        engine's own argument types (its arena, row buffer and scratch, converted floats), the same
        for every engine, so the entry points are kept once per process (outside the engine: nothing
        of numba's hangs on a model, e.g. for River's memory walk)."""
        key = (kernel, self.arena.kind if kind is None else kind)
        ep = _ENTRY_POINTS.get(key)
        if ep is None:
            ep = _ENTRY_POINTS[key] = entry_point(kernel, args)
        return ep(*args)

    @property
    def kind(self):
        """The :class:`~streamforest.trees.tree_kind.KindTag` of the trees (``None`` before any
        tree exists): the per-example kernels that take a handle take it too."""
        return self.arena.kind

    def encode_one(self, x, learn: bool) -> np.ndarray:
        """The encoded row of dict ``x`` (see :meth:`FeatureSpace.encode_dict`), written into the
        engine's row buffer: valid until the next call (the kernels read it and drop it)."""
        r = self.features.encode_dict_into(x, learn, self._row)
        if r is not self._row:  # the general path made a new row: it is the buffer from now on
            r = self._row = r.reshape(-1)
        return r

    def remember(self, row: np.ndarray) -> None:
        """A per-example kernel just left the trees' leaves and predictions of ``row`` in the
        memo (:func:`~streamforest.engine._kernels.predict_trees_memo`): if ``row`` is the
        engine's row buffer as :meth:`encode_one` filled it, a :meth:`learn_one` of the same
        dict next (nothing else encoded, no batch pass, no tree replaced in between) uses it."""
        m = self.features._memo
        self._hint = m if row is self._row and m[1] is row else None

    def learn_one(self, row: np.ndarray, y: float, w: float, kernel=None, extra=(),
                  memo: bool = False, handle=None):  # fmt: skip
        """Every tree learns one encoded row (bagging weights drawn) in one compiled call.

        ``kernel`` (default :func:`~streamforest.engine._kernels.learn_one`) is called as
        ``kernel(arena, rng, bagging, row, y, w, weights, predictions, drifted, t0, *extra)``,
        or with ``memo`` (always for the default) as ``kernel(arena, rng, bagging, row, y, w,
        weights, predictions, drifted, t0, memo, *extra)``, ``memo`` the trees' leaves and
        predictions of this row when a prediction just made them (see :meth:`remember`; else an
        empty memo), to pass on to the default kernel; a method kernel returns ``(status,
        result)``, the default ``status``: ``t >= 0`` names a tree that lacks room (the trees
        before it learnt the row: the engine grows it and calls again with ``t0 = t``; a new row
        starts with ``t0 = FRESH``).  Then the background trees learn the row (a second
        compiled call, only while there are some), and the engine acts on the signals of the
        trees' drift detectors.  Returns the method kernel's result, or the trees' predictions
        made before learning (scratch, overwritten by the next call).

        With ``handle`` (the method's own arrays packed by :func:`streamforest.engine._handle.
        build`), the method kernel is called as ``kernel(engine_handle, handle, bagging, y, w,
        t0, memo, *extra)``: the engine's arrays and ``row`` come packed in ``engine_handle``
        (see :data:`~streamforest.engine._kernels.H_SIZE`), ``memo`` a bool."""
        h = self._hint  # the memo of this row's prediction, if one just made it (used up)
        self._hint = None
        own = row is self._row  # the row buffer: the kernel reads it through the handle
        use_memo = h is not None and own and h is self.features._memo
        return self._learn_loop(row, y, w, kernel, extra, memo, handle, own, use_memo, None)

    def learn_row(self, y: float, w: float):
        """:meth:`learn_one` of the row buffer with the default kernel: the models' per-example
        hot path, the same steps with fewer Python operations."""
        h = self._hint
        self._hint = None
        Hd = self._h  # self._handle(), inline
        if self._h_arena is not self.arena or self._h_row is not self._row:
            Hd = self._handle()
        use_memo = h is not None and h is self.features._memo
        kind = self.arena.kind
        ep = _ENTRY_POINTS.get((_LEARN_ONE_H, kind))
        if ep is None:
            return self._learn_loop(self._row, y, w, None, (), False, None, True, use_memo, None)
        status = ep(Hd, kind, self.bagging, y, w, _FRESH, use_memo)
        if status == _DONE and not self._bg_live:  # the common case
            return self._p
        return self._learn_loop(self._row, y, w, None, (), False, None, True, use_memo,
                                (status, self._p))  # fmt: skip

    def learn_row_with(self, kernel, handle: np.ndarray, y: float, w: float, s):
        """:meth:`learn_one` of the row buffer with a method kernel taking ``handle`` and one
        more argument ``s`` (``extra = (s,)``): an interval method's per-example hot path."""
        h = self._hint
        self._hint = None
        Hd = self._h  # self._handle(), inline
        if self._h_arena is not self.arena or self._h_row is not self._row:
            Hd = self._handle()
        use_memo = h is not None and h is self.features._memo
        kind = self.arena.kind
        ep = _ENTRY_POINTS.get((kernel, kind))
        if ep is None:
            return self._learn_loop(self._row, y, w, kernel, (s,), False, handle, True, use_memo,
                                    None)  # fmt: skip
        status, out = ep(Hd, kind, handle, self.bagging, y, w, _FRESH, use_memo, s)
        if status == _DONE and not self._bg_live:  # the common case
            return out
        return self._learn_loop(self._row, y, w, kernel, (s,), False, handle, True, use_memo,
                                (status, out))  # fmt: skip

    def _learn_loop(self, row, y, w, kernel, extra, memo, handle, own, use_memo, first):
        """The steps of :meth:`learn_one` (``first``: the status and result of a first kernel
        call already made)."""
        t0 = _FRESH
        if (
            handle is not None
            and not own
            and not (row.flags.c_contiguous and row.flags.writeable and row.dtype == np.float64)
        ):
            row = np.array(row, dtype=np.float64).reshape(-1)  # a local that outlives the calls
        while True:
            if first is not None:
                status, out = first
                first = None
            elif kernel is None and own:
                Hd = self._handle()
                status = self.call(_LEARN_ONE_H, (Hd, self.arena.kind, self.bagging, y, w, t0,
                                                  use_memo))  # fmt: skip
                out = self._p
            elif kernel is None:
                M = self._memo if use_memo else self._no_memo
                args = (self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                        self._drifted, t0, M)  # fmt: skip
                status = self.call(FK.learn_one, args)
                out = self._p
            elif handle is not None:
                Hd = self._handle() if own else self._handle_of(row)
                status, out = self.call(kernel, (Hd, self.arena.kind, handle, self.bagging, y, w,
                                                 t0, use_memo, *extra))  # fmt: skip
            else:
                if memo:
                    M = self._memo if use_memo else self._no_memo
                    args = (self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                            self._drifted, t0, M, *extra)  # fmt: skip
                else:
                    args = (self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                            self._drifted, t0, *extra)  # fmt: skip
                status, out = self.call(kernel, args)
            if status == _DONE and not self._bg_live:  # the common case
                return out
            if status < 0:
                break
            self.make_room(status)
            t0 = status
        if self._bg_live:
            self._learn_background_one(row, y, w)
        if status == FK.DRIFTED:
            with self._lock:
                for t in np.flatnonzero(self._drifted):
                    self._signal(int(t), self.int_of(int(t), S.I_DRIFT))
        return out

    def _learn_background_one(self, row: np.ndarray, y: float, w: float) -> None:
        t0 = FK.FRESH
        k = FK.learn_background_one
        while True:
            args = (self.bg, self.bg_on, self.bg_rng, self.bagging, row, y, w, self._bw, t0)
            status = self.call(k, args, self.bg.kind)
            if status == FK.DONE:
                return
            self.make_room(status, bg=True)
            t0 = status

    def predict_one(self, row: np.ndarray) -> float:
        """The forest's prediction for one encoded row."""
        if row is self._row:  # the row buffer: through the handle
            Hd = self._h  # self._handle(), inline
            if self._h_arena is not self.arena or self._h_row is not row:
                Hd = self._handle()
            kind = self.arena.kind
            ep = _ENTRY_POINTS.get((_PREDICT_ONE_H, kind))
            if ep is None:
                ep = _ENTRY_POINTS[(_PREDICT_ONE_H, kind)] = entry_point(
                    _PREDICT_ONE_H, (Hd, kind, self.aggregation)
                )
            y = ep(Hd, kind, self.aggregation)
            m = self.features._memo  # remember(row), inline
            self._hint = m if m[1] is row else None
            return y
        y = self.call(FK.predict_one, (self.arena, row, self.aggregation, self._p, self._memo))
        self._hint = None  # (the memo is of the row buffer's encoding only)
        return y
