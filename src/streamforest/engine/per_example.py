"""The per-example path of the engine: one row encoded, learnt and predicted, each in one call
of the compiled core (``_core.engine``'s handle kernels)."""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

from ..tree_kinds import state
from . import handle as handle_kernels

_ENGINE = _core.engine
_FRESH, _DONE, _DRIFTED = _ENGINE.FRESH, _ENGINE.DONE, _ENGINE.DRIFTED
_LEARN_ONE_H, _PREDICT_ONE_H = _ENGINE.learn_one_h, _ENGINE.predict_one_h


class PerExample:
    """``learn_one`` / ``predict_one`` of a row (a part of
    :class:`~streamforest.engine.core.Engine`)."""

    # --- one example ------------------------------------------------------------------------------
    def handle(self) -> np.ndarray:
        """The handle of the engine's arrays for the per-example kernels (``*_h``), built
        anew when the arena or the row buffer is not the one it was built from: the handle an
        interval method passes to its own ``*_h`` kernels with :attr:`row_buffer` encoded (part
        of the forest interface, see :mod:`streamforest.engine.core`)."""
        A, row = self.arena, self.row_buffer
        if self._h_arena is not A or self._h_row is not row:
            self._h = self._handle_of(row, self._h)  # (rebuilt in place: no allocation)
            self._h_arena, self._h_row = A, row
        return self._h

    def _handle_of(self, row: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A handle of the engine's arrays with ``row`` (a 1-d float64 C-contiguous array) as
        the row: valid while the arena and that row are (the caller keeps them alive)."""
        A = self.arena
        return handle_kernels.build(
            (
                A.fa,
                A.ia,
                A.ba,
                A.lay,
                A.pa,
                self.rng,
                row,
                self._wt,
                self.last_predictions,
                self._drifted,
                self.leaf_memo,
                self._no_memo,
            ),
            out,
        )

    def encode_one(self, x, learn: bool) -> np.ndarray:
        """The encoded row of dict ``x`` (see :meth:`FeatureSpace.encode_dict`), written into the
        engine's row buffer: valid until the next call (the kernels read it and drop it)."""
        r = self.features.encode_dict_into(x, learn, self.row_buffer)
        if r is not self.row_buffer:  # the general path made a new row: the buffer from now on
            r = self.row_buffer = r.reshape(-1)
        return r

    def takes_array_rows(self) -> bool:
        """Whether a one-row batch may run as one example (:meth:`use_row`, then the
        per-example calls): the results are the batch pass's (the kernels draw the same bagging
        weights and aggregate alike), except in a shard, which learns through batches only."""
        return self.fitted and self.__dict__.get("shard") is None

    def use_row(self, encoded: np.ndarray) -> np.ndarray:
        """An encoded array row (e.g. a one-row batch's) copied into the row buffer, for the
        per-example calls (:meth:`learn_row`, :meth:`predict_one`, a method's handle kernels):
        the memos of the dict last encoded there, and of its prediction, are dropped (they no
        longer describe the buffer), and the caller's array is never written later."""
        row = self.row_buffer
        if row.shape[0] != encoded.shape[0]:  # (a new width: the handle is built again once)
            row = self.row_buffer = np.empty(encoded.shape[0])
        self.features.forget_written()
        self._hint = None
        row[:] = encoded
        return row

    def remember(self, row: np.ndarray) -> None:
        """A per-example kernel just left the trees' leaves and predictions of ``row`` in the
        memo (``_core.engine.predict_trees_memo``): if ``row`` is the
        engine's row buffer as :meth:`encode_one` filled it, a :meth:`learn_one` of the same
        dict next (nothing else encoded, no batch pass, no tree replaced in between) uses it."""
        m = self.features._memo
        self._hint = m if row is self.row_buffer and m[1] is row else None

    def learn_one(self, row: np.ndarray, y: float, w: float, kernel=None, extra=(),
                  memo: bool = False, handle=None):  # fmt: skip
        """Every tree learns one encoded row (bagging weights drawn) in one compiled call.

        ``kernel`` (default ``_core.engine.learn_one``) is called as
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

        With ``handle`` (the method's own arrays packed by :func:`streamforest.engine.handle.
        build`), the method kernel is called as ``kernel(engine_handle, handle, bagging, y, w,
        t0, memo, *extra)``: the engine's arrays and ``row`` come packed in ``engine_handle``
        (``_core.engine.H_SIZE`` entries), ``memo`` a bool."""
        h = self._hint  # the memo of this row's prediction, if one just made it (used up)
        self._hint = None
        own = row is self.row_buffer  # the row buffer: the kernel reads it through the handle
        use_memo = h is not None and own and h is self.features._memo
        return self._learn_loop(row, y, w, kernel, extra, memo, handle, own, use_memo, None)

    def learn_row(self, y: float, w: float):
        """:meth:`learn_one` of the row buffer with the default kernel: the models' per-example
        hot path, the same steps with fewer Python operations."""
        h = self._hint
        self._hint = None
        Hd = self._h  # self.handle(), inline
        if self._h_arena is not self.arena or self._h_row is not self.row_buffer:
            Hd = self.handle()
        use_memo = h is not None and h is self.features._memo
        status = _LEARN_ONE_H(Hd, self.bagging, y, w, _FRESH, use_memo)
        if status == _DONE and not self._bg_live:  # the common case
            return self.last_predictions
        return self._learn_loop(self.row_buffer, y, w, None, (), False, None, True, use_memo,
                                (status, self.last_predictions))  # fmt: skip

    def learn_row_with(self, kernel, handle: np.ndarray, y: float, w: float, s):
        """:meth:`learn_one` of the row buffer with a method kernel taking ``handle`` and one
        more argument ``s`` (``extra = (s,)``): an interval method's per-example hot path."""
        h = self._hint
        self._hint = None
        Hd = self._h  # self.handle(), inline
        if self._h_arena is not self.arena or self._h_row is not self.row_buffer:
            Hd = self.handle()
        use_memo = h is not None and h is self.features._memo
        status, out = kernel(Hd, handle, self.bagging, y, w, _FRESH, use_memo, s)
        if status == _DONE and not self._bg_live:  # the common case
            return out
        return self._learn_loop(self.row_buffer, y, w, kernel, (s,), False, handle, True, use_memo,
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
                status = _LEARN_ONE_H(self.handle(), self.bagging, y, w, t0, use_memo)
                out = self.last_predictions
            elif kernel is None:
                M = self.leaf_memo if use_memo else self._no_memo
                args = (self.arena, self.rng, self.bagging, row, y, w, self._wt,
                        self.last_predictions, self._drifted, t0, M)  # fmt: skip
                status = _ENGINE.learn_one(*args)
                out = self.last_predictions
            elif handle is not None:
                Hd = self.handle() if own else self._handle_of(row)
                status, out = kernel(Hd, handle, self.bagging, y, w, t0, use_memo, *extra)
            else:
                if memo:
                    M = self.leaf_memo if use_memo else self._no_memo
                    args = (self.arena, self.rng, self.bagging, row, y, w, self._wt,
                            self.last_predictions, self._drifted, t0, M, *extra)  # fmt: skip
                else:
                    args = (self.arena, self.rng, self.bagging, row, y, w, self._wt,
                            self.last_predictions, self._drifted, t0, *extra)  # fmt: skip
                status, out = kernel(*args)
            if status == _DONE and not self._bg_live:  # the common case
                return out
            if status < 0:
                break
            self.make_room(status)
            t0 = status
        if self._bg_live:
            self._learn_background_one(row, y, w)
        if status == _DRIFTED:
            with self._lock:
                for t in np.flatnonzero(self._drifted):
                    self._signal(int(t), self.int_of(int(t), state.I_DRIFT))
        return out

    def predict_one(self, row: np.ndarray) -> float:
        """The forest's prediction for one encoded row."""
        if row is self.row_buffer:  # the row buffer: through the handle
            Hd = self._h  # self.handle(), inline
            if self._h_arena is not self.arena or self._h_row is not row:
                Hd = self.handle()
            y = _PREDICT_ONE_H(Hd, self.aggregation)
            m = self.features._memo  # remember(row), inline
            self._hint = m if m[1] is row else None
            return y
        args = (self.arena, row, self.aggregation, self.last_predictions, self.leaf_memo)
        y = _ENGINE.predict_one(*args)
        self._hint = None  # (the memo is of the row buffer's encoding only)
        return y
