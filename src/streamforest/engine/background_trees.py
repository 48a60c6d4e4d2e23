"""Forest-level drift adaptation: each tree's detector warns (a background tree starts) and
signals a drift (the background tree replaces it), as in ARF and the thesis' ensembles."""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

from .. import rng as _rng
from ..drift import PH_DRIFT, PH_WARNING, PH_WITHDRAWN, page_hinkley_init
from ..tree_kinds import arena, state
from . import budget

_ENGINE = _core.engine  # the compiled passes (src/core/engine)

DS_WARNINGS, DS_DRIFTS, DS_STARTED, DS_SWAPPED, DS_DISCARDED = range(5)

DRIFT_STATS = ("warnings", "drifts", "background_started", "background_swapped",
               "background_discarded")  # fmt: skip


class BackgroundTrees:
    """Background trees and the drift counts (a part of
    :class:`~streamforest.engine.core.Engine`)."""

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
            self.bg = arena.empty(self.n_trees)
            budget.release_free_memory()

    def _swap(self, t: int) -> None:
        """Tree ``t`` drifted: its background tree takes its place, with a fresh detector."""
        self._hint = None
        st = arena.load(self.bg, t)
        page_hinkley_init(st.drift_detector, self.warning)
        prm = self._tree_params(t, int(st.ints[state.I_NFEAT]))
        if st.ints[state.I_FROZEN] and st.ints[state.I_NLEAVES] < prm.max_leaves:
            # it froze at a background tree's caps: it grows on within the tree's
            hw = int(st.ints[state.I_LEAF_HW])
            live = st.lf_node[:hw] >= 0
            live[live] = st.nd_depth[st.lf_node[:hw][live]] < prm.max_depth
            st.lf_active[:hw][live] = 1
            st.lf_inherited[:hw][live] = st.lf_stat[:hw][live]  # their observers start empty
            st.lf_last[:hw][live] = st.lf_stat[:hw][live, state.S_W]
            st.ints[state.I_FROZEN] = 0
        self.arena = arena.store(self.arena, t, st, prm)  # copied (st: views of bg)
        self.n_resets[t] += 1
        self.drift_counts[t, DS_SWAPPED] += 1
        self._end_background(t)

    def _signal(self, t: int, code: int) -> bool:
        """Act on tree ``t``'s detector signal (under the lock); True if the tree was
        replaced."""
        A = self.arena
        A.ia[t, A.lay[t, 0, 0] + state.I_DRIFT] = 0
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

    def _background_rows(self, t: int, rows, i0: int, i1: int, wb):
        """Tree ``t``'s background tree learns rows ``i0..i1`` of the chunk ``rows`` (its
        weights drawn first; ``wb`` the chunk's weight buffer, made here when None)."""
        X, y, w = rows
        if wb is None:
            wb = np.empty(X.shape[0])
        _ENGINE.draw_background(self.bg_rng[t], self.bagging, w, wb, i0, i1)
        Xs, ys = X[:i1], y[:i1]
        j = i0
        while True:
            B = self.bg
            j = _ENGINE.background_rows(B, t, Xs, ys, wb, j)
            self._carry_row(B, t, bg=True)
            if j >= i1:
                return wb
            self.make_room(t, bg=True)

    def _learn_background_one(self, row: np.ndarray, y: float, w: float) -> None:
        t0 = _ENGINE.FRESH
        while True:
            status = _ENGINE.learn_background_one(self.bg, self.bg_on, self.bg_rng, self.bagging,
                                                  row, y, w, self._bw, t0)  # fmt: skip
            if status == _ENGINE.DONE:
                return
            self.make_room(status, bg=True)
            t0 = status
