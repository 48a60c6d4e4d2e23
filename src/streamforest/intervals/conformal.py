"""Online inductive conformal prediction over an online bagging forest (JMLR 2019, §3.1):
CPApproximate and CPExact (the conformalized quantile forest is in :mod:`.cqr`)."""

from __future__ import annotations

import numbers

import numpy as np

import streamforest._core as _core

from ..engine import budget
from ..engine.forest_interface import LEAF_PAYLOADS, TREE_MEMBERS, TREE_SETTINGS
from ..engine.handle import build as build_handle
from ..features import check_target, weight_of
from ._label_guard import flagged_count, guard_label, guard_peek, guarded
from .base import IntervalRegressor, doubled

_INF = float("inf")
_NO_EVENTS: dict = {}  # n_trees -> CPApproximate's (empty) refresh events, never written
_CORE = _core.intervals  # the method's kernels (src/core/intervals/conformal.hpp)
_CP_LEARN_ONE_H = _CORE.cp_learn_one_h
_CP_INTERVAL_ONE_H = _CORE.cp_interval_one_h


def _check_size(c) -> None:
    if not (isinstance(c, numbers.Integral) and not isinstance(c, bool) and 1 <= c <= 10**7):
        raise ValueError(f"calibration_size must be a positive integer, got {c!r}")


class CPApproximate(IntervalRegressor):
    """Online inductive conformal regression with an out-of-bag calibration set (CPApproximate).

    Every example that is out of bag (bagging weight 0) for at least one tree enters a FIFO
    calibration set of at most ``calibration_size`` examples, with the predictions of its
    out-of-bag trees at that moment.  Its non-conformity score is ``|y - mean of those
    predictions|``.  The interval is ``y_hat +- s`` with ``y_hat`` the forest's prediction and
    ``s`` the ``ceil((n + 1)(1 - alpha))``-th smallest of the ``n`` scores (the split-conformal
    rank that guarantees coverage ``>= 1 - alpha`` on exchangeable data; the authors' code used
    one rank lower).  When that rank exceeds ``n`` (fewer than ``1/alpha - 1`` scores) the
    interval is ``(-inf, inf)``.  CPApproximate never refreshes the stored predictions.

    Parameters
    ----------
    forest
        The forest (unfitted); default ``OnlineForestRegressor(n_trees=10)`` (Poisson(1)
        bagging as in the paper).
    calibration_size
        Maximum number of calibration examples (FIFO).
    seed
        Overrides the forest's seed when given.
    groups
        Intervals calibrated per group (online Mondrian conformal): a column name or index, a
        function of the row, a list of them (several families), or
        :class:`~streamforest.Multivalid` (overlapping families); the array calls also take a
        ``groups=`` array.  See docs/intervals.md, "Coverage per group".
    """

    _exact = False

    _scratch_keys = (*IntervalRegressor._scratch_keys, "_evbufs", "_ch")
    _ch = None  # the calibration arrays' handle (made on first use, dropped when they are new)

    def __init__(self, forest=None, calibration_size: int = 1000, seed: int | None = None,
                 groups=None):  # fmt: skip
        self.forest = forest
        self.calibration_size = calibration_size
        self.seed = seed
        self.groups = groups

    shard_stages = "cp"  # learn_scored, half_widths, store_calibration_rows

    def forest_needs(self) -> tuple[str, ...]:
        """Out-of-bag members (the per-example path also runs kernels over the arena: a forest
        without leaf payloads is taken on arrays only)."""
        return (TREE_MEMBERS,)

    def _check_params(self) -> None:
        self._check_common()
        _check_size(self.calibration_size)

    def _configure(self, forest) -> None:
        """Refuse a forest whose trees all learn every row (``lambda_value = 0``, the default of
        ABORF and AMF): no row would ever be out of bag, so every interval would stay
        infinite."""
        super()._configure(forest)
        rate = getattr(forest, "lambda_value", None)
        if rate is not None and not rate > 0:
            raise ValueError(
                f"{type(self).__name__} calibrates on out-of-bag rows, but "
                f"{type(forest).__name__}(lambda_value={rate!r}) has every tree learn every row "
                "(no online bagging): no row is ever out of bag and every interval would stay "
                "infinite. Give the forest lambda_value > 0 (1.0: Poisson(1) online bagging), "
                "or use NormalizedConformal, which needs no out-of-bag rows"
            )

    def _init_state(self) -> None:
        c, T = int(self.calibration_size), self.forest_.n_trees
        self.__dict__.pop("_ch", None)
        self.ring_ = np.array([0, c], np.int64)
        self.size_ = 0
        self.cal_y_ = np.zeros(c)
        self.cal_oob_ = np.zeros((c, T), np.int8)
        self.cal_pred_ = np.zeros((c, T))
        self.cal_score_ = np.zeros(c)
        self.cal_sum_ = np.zeros(c)
        self.cal_cnt_ = np.zeros(c, np.int64)
        self.cal_order_ = np.zeros(c, np.int64)
        self.cal_pos_ = np.full(c, -1, np.int64)
        self.cal_sorted_ = np.zeros(c)
        self.cal_x_ = np.zeros((c, 0))
        if self._exact:
            self.cal_leaf_ = np.full((T, c), -1, np.int64)
            self.cal_next_ = np.full((T, c), -1, np.int64)
            self.cal_prev_ = np.full((T, c), -1, np.int64)
            self.cal_birth_ = np.zeros((T, c), np.int64)
            self.cal_cur_ = np.zeros((T, c))

    def _own_bytes(self) -> int:
        return sum(v.nbytes for k, v in self.__dict__.items() if k.startswith("cal_"))

    @property
    def calibration_scores(self) -> np.ndarray:
        """The current non-conformity scores, ascending."""
        if "_forest" not in self.__dict__:
            return np.zeros(0)
        return self.cal_sorted_[: self.size_].copy()

    def store_calibration_rows(self, slots: np.ndarray, X: np.ndarray) -> None:
        """Keep rows ``X`` (encoded features) in the calibration slots ``slots`` (-1: none), as the
        learning pass does for the rows that enter the calibration set; for a driver that
        learns the trees elsewhere (:mod:`streamforest.distributed`)."""
        self._widen_x(X.shape[1])
        _CORE.copy_entrants(slots, X, self.cal_x_)

    def _widen_x(self, p: int) -> None:
        """Make ``cal_x_`` at least ``p`` features wide, its new columns missing (NaN): its width
        doubled, not past the feature space's cap, so a stream with a new feature per row widens
        it O(log p) times (one feature at a time it copied ``calibration_size x p`` floats per
        row: quadratic), and the old array's heap given back (or the process holds more than
        ``memory_bytes`` counts: CPExact on a new feature per row, 0.89 of its RSS growth).  The
        kernels read a row's first ``p`` columns only."""
        w = self.cal_x_.shape[1]
        if w < p:
            fs = getattr(self.forest_, "__dict__", {}).get("features_")
            cap = getattr(fs, "max_features", None)
            x = np.full((self.cal_x_.shape[0], budget.grown(w, p, 2 * w if cap is None else cap)),
                        np.nan)  # fmt: skip
            x[:, :w] = self.cal_x_
            self.cal_x_ = x
            self.__dict__.pop("_ch", None)  # (its handle names the arrays)
            del x
            budget.release_free_memory()

    def learn_scored(self, P, W, slots, ya, alphas=None):
        """Calibrate on a chunk the forest's trees learnt elsewhere (the distributed layer's
        shards): ``P (T, n)`` the trees' predictions made before learning each row, ``W`` their
        bagging weights, ``slots`` the calibration slots of the rows, ``ya`` their targets.
        Returns the rows' ``(prediction, lower, upper)`` at ``alphas`` made before learning
        each row, as the learning pass's (None: at :meth:`_learn_levels`)."""
        T = P.shape[0]
        levels = self._learn_levels() if alphas is None else alphas
        out = self._score_stage((P, W, slots, self._empty_events(T)), ya, levels, True)
        self._n_seen += ya.shape[0]
        return out

    def half_widths(self, n: int, alphas) -> np.ndarray:
        """``(n, A)`` the intervals' half widths at ``alphas`` (the same for every row)."""
        return self._half_widths(n, alphas)

    def _half_widths(self, n, alphas):
        half = np.empty((n, alphas.shape[0]))
        for a in range(alphas.shape[0]):
            half[:, a] = _core.intervals.sorted_half_width(self.cal_sorted_, self.size_, alphas[a])
        return half

    def _chunk(self, Xa, ya, wa, alphas, learn):
        """Prediction only (learning runs in stages)."""
        f = self.forest_
        e = f.engine_
        yhat = e.aggregate(e.predict_trees(Xa))
        half = self._half_widths(Xa.shape[0], alphas)
        return yhat, yhat[:, None] - half, yhat[:, None] + half

    def _staged(self, alphas) -> bool:
        return True

    # --- one example, one compiled call ----------------------------------------------------------
    def learn_one(self, x, y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values)."""
        px, C = self._px, self._ch
        g = self.__dict__.get("label_guard_")
        if (
            px
            and C is not None
            and g is not None
            and type(y) is float
            and type(w) is float
            and guard_peek(g, y, w) == y
        ):  # the hot path: one compiled call, for a label the guard lets through (counted
            # once the call succeeded: a refused row leaves the guard as it was)
            f, size = self._forest, self.size_
            r = px.cp_learn(f, x, y, w, C, size)
            if r is not False:
                if type(r) is int:
                    self.size_ = r
                else:  # a tree out of room, a drift signal, background trees
                    self.size_ = f.engine_.cp_learn_on(r, C, y, w, size)
                guard_label(g, y, w)
                self._n_seen += 1
                return
        if self._exact:  # CPExact's member links need the chunk path
            return super().learn_one(x, y, w)
        # the common cases of check_target and weight_of inline
        yf = y if type(y) is float and y - y == 0.0 else check_target(y)
        wf = w if type(w) is float and 0.0 <= w < _INF else weight_of(w)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(CPApproximate.learn_one, x, yf, wf)
        self._learn_row(f.encode_learn_row(x), yf, wf)
        self._attach_px()

    def _learn_row(self, row, yf: float, wf: float) -> None:
        """The per-example learning of ``row``, the engine's row buffer (see the base)."""
        e = self.forest_.engine_
        if self.cal_x_.shape[1] < row.shape[0]:
            self._widen_x(row.shape[0])
        C = self._calibration_handle()
        yl = guard_label(self._label_guard(), yf, wf)
        if yl != yf:  # flagged by the label guard: learnt with weight 0
            yf, wf = yl, 0.0
        self.size_ = e.learn_row_with(_CP_LEARN_ONE_H, C, yf, wf, self.size_)
        self._n_seen += 1

    def predict_interval_one(self, x, alpha=0.1):
        """``(lower, upper)`` for one example, or a list of them for a list of ``alpha``."""
        px, C = self._px, self._ch
        if px and C is not None and type(alpha) is float:  # one compiled call
            out = px.cp_interval(self._forest, x, alpha, C, self.size_)
            if out is not None:
                return out
        f = self.__dict__.get("_forest")
        if type(alpha) is float and 0.0 < alpha < 1.0 and f is not None:
            e = f.__dict__.get("engine_")
            if e is not None and e.fitted:
                row = e.features.encode_dict_into(x, False, e.row_buffer)  # e.encode_one(x, False)
                if row is not e.row_buffer:
                    row = e.row_buffer = row.reshape(-1)
                out = _CP_INTERVAL_ONE_H(e.handle(), self._calibration_handle(), e.aggregation,
                                         self.size_, alpha)  # fmt: skip
                e.remember(row)  # a learn_one of the same dict next reuses the trees' leaves
                if not self._exact:
                    self._attach_px()
                return out
        return super().predict_interval_one(x, alpha)

    def _calibration_handle(self) -> np.ndarray:
        """The calibration arrays packed for the per-example kernels (see
        :mod:`streamforest.engine.handle`), built anew when they were replaced (all are
        together with ``cal_x_``: :meth:`_init_state`, :meth:`_widen_x`, which drop it).  Made
        read-only: the compiled per-example object keeps its views while it is the same
        object."""
        ch = self._ch
        if ch is None:
            ch = build_handle((
                self.ring_, self.cal_y_, self.cal_oob_, self.cal_pred_, self.cal_sum_,
                self.cal_cnt_, self.cal_score_, self.cal_order_, self.cal_pos_, self.cal_sorted_,
                self.cal_x_))  # fmt: skip
            ch.flags.writeable = False
            self._ch = ch
        return ch

    def _one_kernel(self, row, alphas, lo, hi) -> None:
        e = self.forest_.engine_
        if row is not e.row_buffer:  # (the per-example path passes the engine's row buffer)
            _CORE.cp_predict_one(e.arena, row, e.aggregation, e.last_predictions, e.leaf_memo,
                                 self.cal_sorted_, self.size_, alphas, lo, hi)  # fmt: skip
            return
        _CORE.cp_predict_one_h(e.handle(), self._calibration_handle(), e.aggregation,
                               self.size_, alphas, lo, hi)  # fmt: skip
        e.remember(row)

    @property
    def n_flagged_labels(self) -> int:
        """Labels the label guard has set aside (learnt with weight 0; docs/intervals.md,
        "Label glitches")."""
        return flagged_count(self.__dict__.get("label_guard_"))

    def _tree_stage(self, Xa, ya, wa, parity: int):
        """The trees learn the chunk: bagging weights, calibration slots, out-of-bag
        predictions and (CPExact) the refresh events; the entrants' features are stored.  Touches
        only the forest, the ring and the member links, not what :meth:`_score_stage` uses."""
        f = self.forest_
        n, T = Xa.shape[0], f.n_trees
        ya, wa, _ = guarded(self._label_guard(), ya, wa)
        self._widen_x(Xa.shape[1])
        if self._exact:
            W = f.engine_.bagging_weights(wa)
            slots = np.empty(n, np.int64)
            _core.intervals.ring_slots(self.ring_, W, slots)
            P = np.zeros((T, n))
            ev = self._exact_tree_passes(Xa, ya, wa, W, slots, P, parity)
        else:
            W = f.engine_.bagging_weights(wa)
            P = f.engine_.predict_learn(Xa, ya, W, wa)
            slots = np.empty(n, np.int64)
            _core.intervals.ring_slots(self.ring_, W, slots)
            ev = self._empty_events(T)
        _CORE.copy_entrants(slots, Xa, self.cal_x_)
        return P, W, slots, ev

    def _score_stage(self, stage, ya, alphas, alone: bool):
        """Half-widths of the chunk's rows from the calibration scores, row by row, updating the
        calibration set; returns ``(prediction, lower, upper)``."""
        P, W, slots, ev = stage
        half = np.empty((P.shape[1], alphas.shape[0]))
        self.size_ = _CORE.conformal_pass(
            self.size_,
            self.cal_y_,
            self.cal_oob_,
            self.cal_pred_,
            self.cal_sum_,
            self.cal_cnt_,
            self.cal_score_,
            self.cal_order_,
            self.cal_pos_,
            self.cal_sorted_,
            P,
            W,
            ya,
            slots,
            *ev,
            alphas,
            half,
        )
        yhat = self.forest_.engine_.aggregate(P)
        return yhat, yhat[:, None] - half, yhat[:, None] + half

    @staticmethod
    def _empty_events(T):
        """No refresh events (CPApproximate): ``None`` for the buffers, so the pass compiles
        without the events' loop and no event arrays are kept."""
        ev = _NO_EVENTS.get(T)
        if ev is None:
            ev = _NO_EVENTS[T] = (None, None, None, np.zeros(T, np.int64))
        return ev

    def _exact_tree_passes(self, Xa, ya, wa, W, slots, P, parity):
        raise NotImplementedError


class CPExact(CPApproximate):
    """Online inductive conformal regression whose calibration scores always use the trees'
    *current* out-of-bag predictions (CPExact).

    Same calibration set and interval as :class:`CPApproximate`, but every stored prediction of
    a tree is kept equal to what the tree predicts now.  This is done incrementally: a training
    step changes one leaf per tree (its model, or a split), so each tree keeps, per leaf, a
    linked list of the calibration examples it is out of bag for that sit in that leaf, and
    after learning it recomputes only that leaf's list (re-routing the list's members after a
    split).  The paper recomputed the whole calibration set at every prediction (19-33x slower
    than CPApproximate).

    When a tree is replaced after a detected drift, the calibration members drop it from their
    out-of-bag sets, and those left with none leave the calibration set (their scores measured
    replaced models); CPApproximate keeps its stored predictions.
    """

    shard_stages = None
    not_sharded = "CPExact links calibration rows to leaves of every tree"

    def forest_needs(self) -> tuple[str, ...]:
        """Per-leaf member lists in each member's leaves; the trees' drift_detection read."""
        return (LEAF_PAYLOADS, TREE_MEMBERS, TREE_SETTINGS)

    def _configure(self, forest) -> None:
        super()._configure(forest)
        if getattr(forest.tree_template(), "drift_detection", False):
            raise ValueError(
                "CPExact keeps each calibration member linked to the leaf it reaches, which "
                "alternate subtrees (the trees' drift_detection=True) move in ways it does not "
                "track: use CPApproximate, or trees with drift_detection=False"
            )

    _exact = True
    _learn_row = None  # its member links need the chunk path (a one-row batch included)

    def _exact_tree_passes(self, Xa, ya, wa, W, slots, P, parity):
        f = self.forest_
        n, T = Xa.shape[0], f.n_trees
        c = int(self.calibration_size)
        g0 = self.n_seen
        # reused scratch, not model state; two sets, as chunk k is scored while k+1 learns
        events, rows = self._event_buffers(parity, T, 8 * c)
        ev_n = np.zeros(T, np.int64)
        # tree t's buffers in this pass: its rows of the event arrays, or a grown copy of them
        # (each thread replaces only its own tree's entry; the arrays are grown after the run)
        local = list(rows)

        def step(A, t, i):
            return _CORE.exact_tree_pass(
                A, t, Xa, ya, W[t], slots, g0, i, P[t], self.cal_x_, self.cal_leaf_[t],
                self.cal_next_[t], self.cal_prev_[t], self.cal_birth_[t], self.cal_cur_[t],
                *local[t], ev_n[t : t + 1],
            )  # fmt: skip

        def room(t, stop):  # a pass stops when fewer than 2c event slots are left
            if ev_n[t] + 2 * c > local[t][0].shape[0]:
                local[t] = tuple(doubled(a, ev_n[t]) for a in local[t])

        def relink(t, stop):  # the tree was replaced after a drift: fix its links
            _CORE.exact_tree_reset(stop - 1, self.cal_leaf_[t], *local[t], ev_n[t : t + 1])

        f.engine_.run(step, n, before=room, on_reset=relink, rows=(Xa, ya, wa))
        width = max(b[0].shape[0] for b in local)
        if width > events[0].shape[1]:  # a tree's buffers grew: every row to the widest
            events, rows = self._event_buffers(parity, T, width)
            for t in range(T):
                k = ev_n[t]
                for grown, old in zip(rows[t], local[t], strict=True):
                    grown[:k] = old[:k]
        return (*events, ev_n)

    def _event_buffers(self, parity, T, width):
        """The refresh events of one set (``parity``): three ``(T, capacity)`` arrays, row t
        tree t's events in order (the row of the chunk as ``int32``, the calibration slot as
        ``int32``, the new prediction, NaN: the tree left the member's out-of-bag set), the
        first ``ev_n[t]`` of a row written by a pass.  One array per field, whatever the number
        of trees.  Made anew, empty, when a row needs
        more than ``width`` items or T changed; returns ``(arrays, rows)``, ``rows[t]`` the
        views of tree t's rows."""
        store = self.__dict__.setdefault("_evbufs", {})
        kept = store.get(parity)
        if kept is None or kept[0][0].shape[0] != T or kept[0][0].shape[1] < width:
            events = (np.empty((T, width), np.int32), np.empty((T, width), np.int32),
                      np.empty((T, width)))  # fmt: skip
            rows = [tuple(a[t] for a in events) for t in range(T)]
            kept = store[parity] = (events, rows)
        return kept
