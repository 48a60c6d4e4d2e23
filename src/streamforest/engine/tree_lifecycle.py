"""The life of an engine's trees: creation (parameters, seeds), the memory budget's caps, widening
rows when a tree needs room, reset."""

from __future__ import annotations

import weakref

import numpy as np

import streamforest._core as _core

from .. import rng as _rng
from ..drift import page_hinkley_init
from ..tree_kinds import arena, state
from ..tree_kinds import rules as split_rules
from ..tree_kinds.pregrown import pregrown_size
from . import budget

_ENGINE = _core.engine  # the compiled passes (src/core/engine)


# fields of a tree state read from the arena's layout (see TreeLifecycle._classes_held and
# TreeLifecycle.feature_room)
_INTS, _FT_NOMINAL, _CLASS_WEIGHTS, _NOMINAL_WEIGHTS, _LEAF_NODE, _NODE_FEAT, _BINS = (
    state.TreeState._fields.index(f)
    for f in (
        "ints",
        "ft_nominal",
        "lf_class_weights",
        "lf_nominal_class_weights",
        "lf_node",
        "nd_feat",
        "bins",
    )
)


class TreeLifecycle:
    """Creates trees and gives them room (a part of :class:`~streamforest.engine.core.Engine`)."""

    def _widen_classes(self, t: int, bg: bool = False, room: int | None = None) -> None:
        """Give classification tree ``t`` room for every class and category code known (the
        categories known, doubled past its room); ``room``: exactly that many category codes
        instead (fewer than it holds drops the others' weights, see
        :func:`~streamforest.tree_kinds.state.fit_classes`)."""
        if room is None and self._classes_held(t, bg):
            return
        before = st = arena.load(self._arena_of(bg), t)
        K0 = state.n_classes(st)
        if not K0:
            return
        if room is None:
            C0 = state.n_cat_codes(st)
            cats = self.features.max_categories
            if K0 >= self.n_classes and C0 >= cats:
                return
            room = max(cats, 2 * C0) if cats > C0 else C0
            room = max(room, int(st.lf_nominal_class_weights.shape[2]) // K0)  # codes it holds
        # wider leaves cost more: the tree's caps are worked out again for its share, and leaf
        # slots allocated past the new cap (and never used) are given back before widening
        st, prm = self._shrunk_to_caps(st, t, int(st.ints[state.I_NFEAT]), bg,
                                       st.ft_nominal.shape[0])  # fmt: skip
        # the new nominal class counts are written where they go, from the old ones (Deferred)
        st = state.fit_classes(st, self.n_classes, room, deferred=True)
        kept = [a is b for a, b in zip(st, before, strict=True)]
        self._put(bg, arena.store(self._arena_of(bg), t, st, prm, kept=kept,
                                  release_old=self._release_old()))  # fmt: skip

    def _shrunk_to_caps(self, st, t: int, p: int, bg: bool, width: int):
        """``(state, parameters)`` of tree ``t`` whose leaves get dearer (``p`` features in rows
        ``width`` wide): its caps worked out again, and the leaf slots past the new cap (and the
        room its kernels keep free) it never used given back."""
        prm = self._capped_params(t, p, bg, width)
        k = int(st.ints[state.I_NALTS]) + 2 if prm.alt_lambda > 0 else 1  # as make_room
        return state.shrink_leaves(st, prm.max_leaves + k), prm

    def _classes_held(self, t: int, bg: bool) -> bool:
        """Whether tree ``t`` has nothing to widen: a regression tree, or a classification tree
        whose class fields hold every class and whose nominal class counts hold a row per
        nominal feature and the categories known (read from the arena's layout: loading the
        state for it took most of a per-example step that met a new category)."""
        A = self._arena_of(bg)
        lay = A.lay[t]
        K0 = int(lay[_CLASS_WEIGHTS, 2])
        if not K0:
            return True
        if K0 < self.n_classes:
            return False
        cats = self.features.max_categories
        if not cats:
            return True
        nfeat = int(A.ia[t, lay[_INTS, 0] + state.I_NFEAT])
        o = int(lay[_FT_NOMINAL, 0])
        nominal = int(np.count_nonzero(A.ba[t, o : o + nfeat]))
        return (
            int(lay[_NOMINAL_WEIGHTS, 2]) >= nominal and int(lay[_NOMINAL_WEIGHTS, 3]) >= cats * K0
        )

    def _release_old(self) -> bool:
        """Whether a lengthened arena may give back each other tree's old row once copied
        (:func:`~streamforest.tree_kinds.arena.store`'s ``release_old``): when no pass runs its
        trees on threads (another tree's pass would read its old row), else a forest would
        hold itself twice while a tree's row is lengthened (ATSER's forest: 1.4x its budget)."""
        return not self.__dict__.get("_threads", 0)

    def _new_category_room(self, t: int, p: int, bg: bool) -> int:
        """The category room of a new classification tree in row ``t``: the categories known
        (a budget may cap it, see
        :class:`~streamforest.engine.classifier_engine.ClassifierEngine`)."""
        return self.features.max_categories

    def _tree_seed(self, t: int):
        seed, k = self.specs[t].seed, int(self.n_resets[t])
        if seed is None or k == 0:
            return seed
        return int(np.random.SeedSequence([int(seed), k]).generate_state(1, np.uint64)[0])

    def _tree_params(self, t: int, p: int, bg: bool = False) -> state.TreeParams:
        """Tree ``t``'s compiled parameters for ``p`` features (a background tree's: without
        drift detection)."""
        prm = self.specs[t]._tree_params(p)
        return prm._replace(drift_lambda=0.0) if bg else prm

    def _capped_params(self, t: int, p: int, bg: bool = False, width: int | None = None
                       ) -> state.TreeParams:  # fmt: skip
        """:meth:`_tree_params` with the memory budget's caps for ``p`` features (in rows
        ``width`` wide, if more: a widened tree's room) and the classes and category codes known
        now (a background tree's within its part of the budget).  Caps only ever come down:
        wider rows (a new feature, class or category) make each leaf cost more, and a tree that
        already holds more than its new cap stops growing (what it holds is not shrunk)."""
        spec = self.specs[t]
        self._apply_memory_budget(spec, p, width)
        prm = self._tree_params(t, p, bg)
        caps = self._budget_caps(spec, p, background=True, width=width) if bg else None
        if caps is not None:
            prm = prm._replace(max_leaves=min(prm.max_leaves, caps[0]),
                               max_bins=min(prm.max_bins, caps[1]))  # fmt: skip
        return prm

    def _new_tree(self, t: int, p: int, seed, bg: bool = False) -> None:
        """A fresh tree in row ``t`` of the trees' arena (or of the background arena)."""
        spec = self.specs[t]
        prm = self._capped_params(t, p, bg)
        rule = split_rules.of(prm)  # what a tree of its split rule holds
        extra = rule.buffers_examples  # leaves buffer m_min examples (candidate splits)
        grown = rule.grown_before_data  # the whole tree, grown now
        gauss = rule.value_ranges  # per-leaf value ranges (naive Bayes statistics)
        classify = prm.task == state.TASK_CLASSIFICATION
        if grown:
            nodes, leaves = pregrown_size(prm.max_depth)
        else:  # a first allocation within the caps (see make_room); a classifier's leaves
            # grow with its classes and category codes (up to hundreds of kB each): fewer
            first = 16 if classify else 128
            leaves = min(first, prm.max_leaves + 1)
            nodes = min(2 * first, 2 * prm.max_leaves + 2)
        token = not rule.observer_bins  # no observers: a token bin pool
        bins = budget.TOKEN_BINS if token else min(256, int(spec.max_observer_bins))
        st = state.allocate(
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
            n_cats=self._new_category_room(t, p, bg) if classify else 0,
            ranges=gauss,
            nig=prm.leaf_model == state.LEAF_BAYES,  # ABORF's Bayesian leaves
        )
        st.ft_nominal[:p] = self.features.nominal
        st.ints[state.I_MAXCAT] = self.features.max_categories
        page_hinkley_init(st.drift_detector, self.warning)
        fresh = [False] * len(st)  # (no field is a view of the row: written in one copy)
        A = arena.store(self._arena_of(bg), t, st, prm, kept=fresh, views=fresh,
                        release_old=self._release_old())  # fmt: skip
        self._put(bg, A)
        _ENGINE.init_tree(A, t)

    def _create(self, t: int, p: int) -> None:
        self._new_tree(t, p, self._tree_seed(t))
        self._set_created(t)

    def _widen(self, t: int, p: int, bg: bool = False) -> None:
        before = st = arena.load(self._arena_of(bg), t)
        old = int(st.ints[state.I_NFEAT])
        pc = st.ft_nominal.shape[0]
        width = pc
        if p > pc:  # doubled, but not past the feature cap; leaf slots allocated past the new
            # leaf cap and never used are given back first (every slot gets wider)
            cap = self.features.max_features
            width = max(p, min(2 * pc, cap if cap is not None else 2 * pc))
            if cap is not None:
                st = self._shrunk_to_caps(st, t, p, bg, width)[0]
            st = state.grow(st, features=width)
        st.ft_nominal[:p] = self.features.nominal
        # new features are observed by every existing leaf (see _choose_features)
        st.lf_mask[:, old:p] = 1
        prm = arena.params_at(self._arena_of(bg), t)
        st.lf_scale[:, old:p] = (
            1.0 / prm.qo_radius if prm.observer == state.OBS_QO else prm.tebst_scale
        )
        # extremely randomised split: no candidate on a new feature, and the examples buffered
        # before it lack it
        if st.lf_candidate.shape[2]:
            st.lf_candidate[:, old:p, state.XC_THR] = np.nan
            st.lf_buffer[:, 2 + old : 2 + p, :] = np.nan
        if st.lf_range.shape[2]:  # Gaussian split rule: no value of a new feature seen yet
            st.lf_range[:, old:p, 0] = np.inf
            st.lf_range[:, old:p, 1] = -np.inf
        st.ints[state.I_NFEAT] = p
        kept = [a is b for a, b in zip(st, before, strict=True)]
        # a field grew: the row laid out afresh from its start (holes left where moved fields
        # were keep their partial pages resident, ~40 kB a tree: 6.5 MiB that memory_bytes did
        # not see in SGBT's 200 trees after a 10k-key dict); nothing grew: written in place
        fresh = not all(kept)
        self._put(bg, arena.store(self._arena_of(bg), t, st, self._capped_params(t, p, bg, width),
                                  kept=None if fresh else kept, views=kept if fresh else None,
                                  release_old=self._release_old()))  # fmt: skip
        # the row's dead tail (and any hole): given back (a new feature on every row left 90 MiB
        # of them in a default OnlineQRF after 6k features, uncounted by memory_bytes)
        arena.release_dead_pages(self._arena_of(bg), t)

    def _apply_memory_budget(self, spec, p: int, width: int | None = None) -> None:
        """Cap a new tree's leaves and observer bins so that the forest holds at most
        ``max_memory_mb`` (split evenly among the trees; with warnings armed, a share of each
        tree's part is kept for its background tree; see :mod:`.budget`)."""
        caps = self._budget_caps(spec, p, background=False, width=width)
        if caps is not None:
            spec.max_leaves = int(min(spec.max_leaves, caps[0]))
            spec.max_observer_bins = int(min(spec.max_observer_bins, caps[1]))

    def _budget_caps(self, spec, p: int, background: bool, width: int | None = None):
        """``(max_leaves, max_bins)`` of tree ``spec``'s share of the budget (or of its
        background tree's) with ``p`` features in rows ``width`` wide (if more), ``None``
        without a budget."""
        if self.max_memory_mb is None:
            return None
        prm = spec._tree_params(p)
        units = budget.unit_bytes(max(p, width or 0), **self._unit_args(spec, prm))
        return self._caps_of(prm, units, self._tree_share(background))

    def _unit_args(self, spec, prm) -> dict:
        """:func:`~streamforest.engine.budget.unit_bytes`' arguments but the features, for a
        tree of ``spec`` (parameters ``prm``)."""
        rule = split_rules.of(prm)
        classify = prm.task == state.TASK_CLASSIFICATION
        return dict(
            sketch_k=int(spec.leaf_quantile_k or 0),
            m_min=prm.m_min if rule.buffers_examples else 0,
            alternates=prm.alt_lambda > 0,
            n_classes=max(1, self.n_classes) if classify else 0,
            n_cats=self.features.max_categories if classify else 0,
            ranges=rule.value_ranges,
            pregrown=rule.grown_before_data,
        )

    def _caps_of(self, prm, units, share: float) -> tuple[int, int]:
        """``(max_leaves, max_bins)`` of a tree of parameters ``prm`` and leaves ``units`` in
        ``share`` bytes."""
        if prm.alt_lambda > 0:  # make_room keeps k = alternates + 2 slots free past the cap
            share -= budget.ALTERNATE_SLACK * (units.leaf + 2 * units.node)
        rule = split_rules.of(prm)
        return budget.tree_caps(share, units, rule.observer_bins, sketch=prm.sketch_k > 0)

    # --- the feature cap --------------------------------------------------------------------------
    def feature_room(self) -> int | None:
        """The most features the trees may be widened to, each staying in its share of the budget
        whatever it learns next (:func:`~streamforest.engine.budget.feature_room`: every tree,
        live background tree, and a fresh tree of each kind not created yet); None without a
        budget.  The feature space's cap (:meth:`~streamforest.features.FeatureSpace.
        set_max_features`) is set to it at each sync, and asked again before a new name is
        taken once a tree grew (:meth:`refresh_feature_room`)."""
        if self.max_memory_mb is None:
            return None
        p = max(1, len(self.features))
        room = budget.MAX_FEATURES
        # widening a tree holds its new arrays and its row's copy of them at once: one tree, as
        # wide, may take at most a quarter of the budget (a forest of 4 trees or more: its
        # share; a single tree: a quarter of it, which held twice its budget at that moment)
        copy = budget.WIDENING_COPY * self.max_memory_mb * 2**20
        for bg in (False, True):
            live = self.bg_on if bg else self.created
            A = self._arena_of(bg)
            share = self._tree_share(bg)
            for t in range(self.n_trees):
                if bg and not live[t]:
                    continue
                spec = self.specs[t]
                prm = spec._tree_params(p)
                if live[t]:  # the leaf slots, nodes and observer bins it holds (widening gives
                    # back the slots past its new caps it never used), its rows' room
                    lay = A.lay[t]
                    ints = A.ia[t, lay[_INTS, 0] :]
                    k = int(ints[state.I_NALTS]) + 2 if prm.alt_lambda > 0 else 1
                    held = (lay[_LEAF_NODE, 1], lay[_NODE_FEAT, 1], lay[_BINS, 1])
                    cap = int(lay[_FT_NOMINAL, 1])
                else:
                    held, cap, k = (0, 0, 0), 0, 3 if prm.alt_lambda > 0 else 1
                kw = self._unit_args(spec, prm)
                one, two = budget.unit_bytes(1, **kw), budget.unit_bytes(2, **kw)
                room = min(room, budget.feature_room(
                    share, one, two, p, held, lambda u, prm=prm, s=share: self._caps_of(prm, u, s),
                    free_slots=k, capacity=cap, at_most=room, copy_bytes=copy))  # fmt: skip
        return room

    def update_feature_room(self) -> None:
        """Set the feature space's cap to :meth:`feature_room` (and have it ask again, through
        :meth:`refresh_feature_room`, before it next takes a name)."""
        if self.max_memory_mb is not None:
            self._room_stale = False
            self.features.set_max_features(self.feature_room())
            self.features.room_refresh = weakref.WeakMethod(self.refresh_feature_room)

    def refresh_feature_room(self) -> None:
        """:meth:`update_feature_room` if a tree grew since (its growth only marks it: a new
        name is rare, a tree's growth is not)."""
        if self.__dict__.get("_room_stale", True):
            self.update_feature_room()

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
            self._room_stale = True

    # --- drift: signals and background trees ------------------------------------------------------
    def _sub_seed(self, t: int, k: int, kind: int):
        seed = self.specs[t].seed
        if seed is None:
            return None
        return int(np.random.SeedSequence([int(seed), k, kind]).generate_state(1, np.uint64)[0])

    def make_room(self, t: int, bg: bool = False) -> None:
        """Grow tree ``t``'s arrays (it stopped for lack of room); ``bg``: its background
        tree's."""
        with self._lock:
            st = arena.load(self._arena_of(bg), t)
            prm = arena.params_at(self._arena_of(bg), t)
            ints = st.ints
            kw = {}
            k = ints[state.I_NALTS] + 2 if prm.alt_lambda > 0 else 1  # as the kernels' _room
            # doubling, but not past the caps: a tree at its leaf cap has 2 * max_leaves - 1
            # nodes and, frozen, still needs room for one split's worth (see _room)
            n_nodes, n_slots = st.nd_feat.shape[0], st.lf_node.shape[0]
            if ints[state.I_NNODES] + 2 * k > n_nodes:
                need = int(ints[state.I_NNODES]) + 2 * k
                kw["nodes"] = budget.grown(n_nodes + k, need, 2 * prm.max_leaves + 2 * k)
            free_leaves = ints[state.I_LEAF_NFREE] + n_slots - ints[state.I_LEAF_HW]
            if free_leaves < k:
                need = n_slots + k - int(free_leaves)
                kw["leaves"] = budget.grown(n_slots + k // 2, need, prm.max_leaves + k)
            if ints[state.I_CAT_USED] + ints[state.I_MAXCAT] > st.cats.shape[0]:
                kw["cats"] = 2 * (st.cats.shape[0] + ints[state.I_MAXCAT])
            n_bins = st.bins.shape[0]
            if n_bins - ints[state.I_BINS_LIVE] < ints[state.I_NFEAT] and n_bins < prm.max_bins:
                kw["bins"] = min(prm.max_bins, 2 * n_bins)
            if not kw:
                raise RuntimeError("internal error: the tree asked for room it does not need")
            old = st
            # the grown fields written where they go from the old ones (Deferred), each old
            # field given back once written, past the fields growth left alone (the loaded views
            # of the row): the process holds the new fields and about one old one at once
            # (built apart, the new fields, the old ones and the new row: 2x a single tree at
            # its budget); a small tree's row is then packed (see arena.PACK_BELOW)
            st = state.grow(st, deferred=True, **kw)
            kept = [a is b for a, b in zip(st, old, strict=True)]
            pack = sum(a.nbytes for a in st) < arena.PACK_BELOW
            self._put(bg, arena.store(self._arena_of(bg), t, st, kept=kept, pack=pack,
                                      release_old=self._release_old()))  # fmt: skip
            if "bins" in kw:
                _ENGINE.rebuild_hash_at(self._arena_of(bg), t)
            self._room_made(t, bg)
            # the dead tail of a row laid out afresh (a field that moved past the others): given
            # back, or the process holds more than memory_bytes counts (a single tree on a new
            # feature per row: memory_bytes 0.53x its RSS growth)
            arena.release_dead_pages(self._arena_of(bg), t)
        del st, old  # (the old arrays: freed before the heap is trimmed)
        budget.release_free_memory()  # the old arrays and the row's assembly
        self._room_stale = True  # a larger tree: fewer features fit (asked when a name comes)

    def _room_made(self, t: int, bg: bool) -> None:
        """Called by :meth:`make_room` under the lock once tree ``t`` (``bg``: its background
        tree) has grown, before its dead pages and the freed heap are given back: an engine
        whose trees must then be checked against their share does it here."""

    def after_stop(self, t: int, stop: int, n: int) -> bool:
        """After tree ``t``'s pass returned ``stop`` (of ``n`` rows): act on its drift
        detector's signal (a drift replaces the tree: returns True; a warning starts a background
        tree, a withdrawn one drops it), else grow the tree if it stopped for lack of room.
        Under the lock: the room check may free observer bins, which another tree's
        reallocation must not copy half-done."""
        with self._lock:
            code = self.int_of(t, state.I_DRIFT)
            if code and self._signal(t, code):
                return True
            if stop < n and _ENGINE.lacks_room(self.arena, t):
                self.make_room(t)
            return False
