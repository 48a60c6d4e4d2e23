"""The per-example path of the engine: one row encoded, learnt and predicted, each in one call
of the compiled core.

The common case runs in one compiled call from the model's method: the engine's
:meth:`PerExample.example_path`, a ``_core.per_example.OneExample`` (``src/core/bindings/
bind_per_example.cpp``), takes the dict itself, encodes it into :attr:`row_buffer` with the
feature space's compiled encoder and runs the kernel (a forest's prediction or learning, or an
interval method's: CPApproximate, OnlineQRF).  Whenever anything needs a decision (a new
feature or category, a tree out of room, a drift signal, background trees, a shard, a target
that is not a float, ...) it changes nothing the results depend on and says so, and the
Python path below does the call: encoding (:meth:`encode_one`), the handle kernels
(``_core.engine.learn_one_h``, ``predict_one_h``) and the engine's steps after a kernel
(:meth:`_learn_loop`), as before.

The memo of a prediction: a per-example prediction leaves the trees' leaves and predictions in
:attr:`leaf_memo`, and ``_hint`` says for which row: the *stamp* of the feature space's memo of
the dict it encoded into the row buffer (``FeatureSpace.dict_rows``; a stamp changes whenever
that memo does: another dict encoded, the buffer written by a caller, a feature added) -- as an
int from the Python path, or the compiled object itself, which keeps the stamp (so that its
calls do not write ``_hint`` while it stays there).  A learning call of the same unchanged dict
next finds the buffer holding it (the encoder's memo) and the hint's stamp equal to the current
one, and passes the memo on to the learning kernel; it uses the hint up.  Anything that changes
the trees or the buffer in between drops the hint (a batch pass, a sync, a tree replaced:
``_hint = None``) or changes the stamp.  Both paths keep these rules, so a model learns exactly
what a model that never predicted learns (tests/test_engine.py).
"""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

from ..tree_kinds import state
from . import handle as handle_kernels

_ENGINE = _core.engine
_FRESH, _DONE, _DRIFTED = _ENGINE.FRESH, _ENGINE.DONE, _ENGINE.DRIFTED
_LEARN_ONE_H, _PREDICT_ONE_H = _ENGINE.learn_one_h, _ENGINE.predict_one_h
_OneExample = _core.per_example.OneExample
_CP_LEARN_ONE_H = _core.intervals.cp_learn_one_h


class PerExample:
    """``learn_one`` / ``predict_one`` of a row (a part of
    :class:`~streamforest.engine.core.Engine`).

    Its private attributes (made and dropped with the engine's scratch, never saved): ``_h``,
    the compiled per-example object (:meth:`example_path`); ``_h_arena``, ``(arena, row
    buffer, handle)`` of the last :meth:`handle`; ``_hint`` (see the module docstring)."""

    # --- the compiled per-example object ----------------------------------------------------------
    def example_path(self):
        """The engine's compiled per-example object (``_core.per_example.OneExample``), made on
        first use, or None for an engine whose per-example steps are its own (a subclass that
        defines ``learn_row`` or ``predict_one`` otherwise).  A model keeps it and passes itself
        (the owner of the engine) with each call; the object checks that it is still its
        engine's own, and that the engine is its owner's."""
        px = self._h
        if px is None and _runs_compiled_path(type(self)):
            fs = self.features
            px = self._h = _OneExample(self, fs, fs.dict_rows)
        return px

    def learn_on(self, r, y: float, w: float):
        """The engine's steps after the compiled learning call returned ``r = (status, memo)``
        (a tree out of room, a drift signal, background trees): as :meth:`learn_row` goes on
        after its first kernel call."""
        status, memo = r
        return self._learn_loop(self.row_buffer, y, w, None, (), False, None, True, memo,
                                (status, self.last_predictions))  # fmt: skip

    def cp_learn_on(self, r, C: np.ndarray, y: float, w: float, size: int):
        """CPApproximate's learning after the compiled call returned ``r = (status, memo, new
        size)`` (``size``: the calibration set's size before the call): as
        :meth:`learn_row_with` goes on; returns the set's new size."""
        status, memo, out = r
        return self._learn_loop(self.row_buffer, y, w, _CP_LEARN_ONE_H, (size,), False, C, True,
                                memo, (status, out))  # fmt: skip

    # --- one example ------------------------------------------------------------------------------
    def handle(self) -> np.ndarray:
        """The handle of the engine's arrays for the per-example kernels (``*_h``), built
        anew when the arena or the row buffer is not the one it was built from: the handle an
        interval method passes to its own ``*_h`` kernels with :attr:`row_buffer` encoded (part
        of the forest interface, see :mod:`streamforest.engine.core`)."""
        A, row = self.arena, self.row_buffer
        c = self._h_arena
        if c is None or c[0] is not A or c[1] is not row:
            H = self._handle_of(row, None if c is None else c[2])  # (rebuilt in place)
            c = self._h_arena = (A, row, H)
        return c[2]

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
        memo (``_core.engine.predict_trees_memo``): if ``row`` is the engine's row buffer as
        :meth:`encode_one` filled it, a :meth:`learn_one` of the same dict next (nothing else
        encoded, no batch pass, no tree replaced in between) uses it."""
        self._hint = self.features.dict_rows.hint_for(row) if row is self.row_buffer else None

    def _memo_hint(self, h) -> bool:
        """Whether hint ``h`` (used up) says the leaf memo describes the row buffer's dict: the
        stamp a Python-path prediction left, or the compiled object's own hint (the object
        itself, its stamp kept there)."""
        if h is None:
            return False
        if type(h) is int:
            return h == self.features.dict_rows.stamp
        return h.take_hint()

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
        use_memo = own and self._memo_hint(h)
        return self._learn_loop(row, y, w, kernel, extra, memo, handle, own, use_memo, None)

    def learn_row(self, y: float, w: float):
        """:meth:`learn_one` of the row buffer with the default kernel: the models' per-example
        Python path, the same steps with fewer Python operations."""
        h = self._hint
        self._hint = None
        use_memo = self._memo_hint(h)
        status = _LEARN_ONE_H(self.handle(), self.bagging, y, w, _FRESH, use_memo)
        if status == _DONE and not self._bg_live:  # the common case
            return self.last_predictions
        return self._learn_loop(self.row_buffer, y, w, None, (), False, None, True, use_memo,
                                (status, self.last_predictions))  # fmt: skip

    def learn_row_with(self, kernel, handle: np.ndarray, y: float, w: float, s):
        """:meth:`learn_one` of the row buffer with a method kernel taking ``handle`` and one
        more argument ``s`` (``extra = (s,)``): an interval method's per-example path."""
        h = self._hint
        self._hint = None
        use_memo = self._memo_hint(h)
        status, out = kernel(self.handle(), handle, self.bagging, y, w, _FRESH, use_memo, s)
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
            y = _PREDICT_ONE_H(self.handle(), self.aggregation)
            self._hint = self.features.dict_rows.hint_for(row)  # remember(row), inline
            return y
        args = (self.arena, row, self.aggregation, self.last_predictions, self.leaf_memo)
        y = _ENGINE.predict_one(*args)
        self._hint = None  # (the memo is of the row buffer's encoding only)
        return y


_COMPILED_PATH: dict = {}  # engine class -> whether its per-example steps are PerExample's


def _runs_compiled_path(cls) -> bool:
    """Whether engines of class ``cls`` take the compiled per-example path: their per-example
    steps are this module's (a subclass that learns or predicts a row otherwise, e.g. a
    boosted model's engine, does not)."""
    ok = _COMPILED_PATH.get(cls)
    if ok is None:
        ok = _COMPILED_PATH[cls] = all(
            getattr(cls, name) is getattr(PerExample, name)
            for name in ("learn_row", "predict_one", "learn_one", "_learn_loop", "learn_row_with")
        )
    return ok
