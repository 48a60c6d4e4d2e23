"""The regression task of a model run by an engine: both APIs (River-style dicts, array batches).

:class:`EngineRegressor` is the base of :class:`~streamforest.HoeffdingTreeRegressor` (an engine
of one tree, no bagging) and :class:`~streamforest.OnlineForestRegressor`: on
:class:`~streamforest.engine.model.EngineModel` (the feature space, the engine, inspection) it
adds what a target per example needs: validation of targets and weights, learning and
predicting a row or a batch, the trees' values aggregated.  A per-example call of a dict is one
compiled call (the engine's per-example object: the dict encoded, the kernel run), or the Python
path when anything needs a decision.

Its part of the forest interface (see :mod:`streamforest.engine.model`):

- :meth:`EngineRegressor.encode_learn_row`: an example's row to learn, in the engine's row buffer
  (the trees synced to any new feature);
- :meth:`EngineRegressor.prepare_batch`: a batch's arrays to learn;
- :meth:`EngineRegressor.check_fittable`, :meth:`EngineRegressor.learn_featureless`: the model's
  rule for rows while no feature is known (a forest refuses them).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

import streamforest._core as _core

from ..concurrency import lock_of
from ..features import (
    check_target,
    check_targets,
    check_weights,
    n_rows,
    weight_of,
)
from .model import EngineModel

_INF = float("inf")
_guard_label = _core.common.guard_label
_guard_peek = _core.common.guard_peek


class EngineRegressor(EngineModel):
    """Base of the regressors run by an :class:`~streamforest.engine.core.Engine`."""

    # the engine's compiled per-example object (``engine_.example_path()``), kept once the
    # trees exist: learn_one and predict_one of a dict are one call of it (it checks that it
    # still is its engine's and the engine this model's, and says when the Python path must
    # take the call); False for an engine without one; never saved
    _px = None

    def __getstate__(self):
        d = self.__dict__
        if "_px" in d:
            d = dict(d)
            del d["_px"]
        return d

    def _attach_px(self, e) -> None:
        """After a call of the Python path: keep ``e``'s per-example object for the next calls
        (the trees exist; the engine's current one), or False for an engine of another kind,
        which has none."""
        if self._px is not False:
            path = getattr(e, "example_path", None)
            self._px = (path() if path is not None else None) or False

    # --- hooks -----------------------------------------------------------------------------------
    def learn_featureless(self, y: float, w: float) -> None:
        """Learn an example while no feature is known: the model's rule (a forest refuses it,
        a tree keeps the target mean); ``learn_featureless(0.0, 0.0)`` checks that the model
        accepts such rows."""
        raise ValueError("no feature has been seen yet: an example needs at least one feature")

    def _featureless_prediction(self) -> float:
        return 0.0

    # --- the label guard (src/core/common/label_guard.hpp) ---------------------------------------
    def _label_guard(self) -> np.ndarray:
        g = self.__dict__.get("label_guard_")
        if g is None:
            g = self.label_guard_ = np.zeros(_core.common.GUARD_SIZE)
        return g

    def _guarded(self, ya, wa):
        """``(labels, weights)`` to learn: ``ya``, ``wa`` themselves unless the label guard
        flags a row (then its label clipped, its weight 0)."""
        n = ya.shape[0]
        y_out, flags = np.empty(n), np.empty(n, np.int8)
        if not _core.common.guard_labels(self._label_guard(), ya, wa, y_out, flags):
            return ya, wa
        return y_out, np.where(flags != 0, 0.0, wa)

    def guard_labels(self, ya: np.ndarray, wa: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(labels, weights)`` the trees learn rows ``ya``, ``wa`` with, through this
        forest's label guard (which moves on), as its learning calls do; for a driver whose
        trees learn elsewhere (:mod:`streamforest.distributed`)."""
        return self._guarded(np.ascontiguousarray(ya, np.float64),
                             np.ascontiguousarray(wa, np.float64))  # fmt: skip

    @property
    def n_flagged_labels(self) -> int:
        """Labels the label guard has set aside (learnt with weight 0)."""
        g = self.__dict__.get("label_guard_")
        return int(g[_core.common.GUARD_FLAGGED]) if g is not None else 0

    # --- batches ---------------------------------------------------------------------------------
    def prepare_batch(self, X, y, w):
        """Validated ``(X, y, w)`` arrays of a batch to learn; the trees are synced to the
        features."""
        fs = self.feature_space()
        n = n_rows(X)
        ya = check_targets(y, n)
        wa = check_weights(w, n)
        Xa = fs.encode_array(X, learn=True)
        if n:
            self.engine_.sync()
        return self.pad(Xa), ya, wa

    # --- array API -------------------------------------------------------------------------------
    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` (2-d array or DataFrame) in order, with optional weights."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineRegressor.learn_many, X, y, w)
        Xa, ya, wa = self.prepare_batch(X, y, w)
        if Xa.shape[0]:
            self.check_fittable()
            ya, wa = self._guarded(ya, wa)
            e = self.engine_
            if not e.fitted:  # rows without any feature (the tree keeps their mean)
                self._featureless_rows(ya, wa)
                return self
            if Xa.shape[0] == 1 and e.takes_array_rows():  # one compiled call, as learn_one
                e.use_row(Xa[0])
                e.learn_row(float(ya[0]), float(wa[0]))
                return self
            e.learn(Xa, ya, e.bagging_weights(wa), wa)
        return self

    def check_fittable(self) -> None:
        """Before learning: with no feature known yet, the model's featureless rule applies
        (the forest refuses; the tree only keeps the target mean)."""
        if not self.engine_.fitted:
            self.learn_featureless(0.0, 0.0)

    def _featureless_rows(self, ya, wa) -> np.ndarray:
        """Learn rows while no feature is known, as ``learn_one`` does; returns the predictions
        made before each."""
        out = np.empty(ya.shape[0])
        for i in range(ya.shape[0]):
            out[i] = self._featureless_prediction()
            self.learn_featureless(float(ya[i]), float(wa[i]))
        return out

    def predict(self, X) -> np.ndarray:
        """Predictions for the rows of ``X``."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineRegressor.predict, X, keep=False)
        Xa = self.encode_predict(X)
        if not self.is_fitted:
            return np.full(Xa.shape[0], self._featureless_prediction())
        e = self.engine_
        if Xa.shape[0] == 1 and e.takes_array_rows():  # one compiled call, as predict_one
            return np.array([e.predict_one(e.use_row(Xa[0]))])
        return e.aggregate(e.predict_trees(Xa))

    def predict_learn_many(self, X, y, w=None) -> np.ndarray:
        """Prequential pass: predict each row, then learn it; returns the predictions.

        Equivalent to ``predict_one`` then ``learn_one`` per row, in one compiled loop per tree.
        """
        if "features_" not in self.__dict__:
            return self._first_call(EngineRegressor.predict_learn_many, X, y, w)
        Xa, ya, wa = self.prepare_batch(X, y, w)
        if not Xa.shape[0]:
            return np.zeros(0)
        self.check_fittable()
        ya, wa = self._guarded(ya, wa)
        e = self.engine_
        if not e.fitted:  # rows without any feature (the tree keeps their mean)
            return self._featureless_rows(ya, wa)
        if Xa.shape[0] == 1 and e.takes_array_rows():  # predict_one then learn_one
            prediction = e.predict_one(e.use_row(Xa[0]))
            e.learn_row(float(ya[0]), float(wa[0]))
            return np.array([prediction])
        return e.aggregate(e.predict_learn(Xa, ya, e.bagging_weights(wa), wa))

    # --- River-style API -------------------------------------------------------------------------
    # learn_one and predict_one hold the model's lock themselves, as the wrapper of every
    # public call does (streamforest.concurrency.locked): one Python call less per example
    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values) with sample weight ``w``."""
        try:
            lock = self._call_lock
        except AttributeError:
            lock = lock_of(self)
        lock.acquire()
        try:
            px = self._px
            g = self.__dict__.get("label_guard_")
            if (
                px
                and g is not None
                and type(y) is float
                and type(w) is float
                and _guard_peek(g, y, w) == y
            ):  # one compiled call (see engine.per_example), for a label the guard lets
                # through (counted once the call succeeded: a refused row leaves it as it was)
                r = px.learn(self, x, y, w)
                if r is not False:
                    if r is not None:  # a tree out of room, a drift signal, background trees
                        self.engine_.learn_on(r, y, w)
                    _guard_label(g, y, w)
                    return
            self._learn_one_py(x, y, w)
        finally:
            lock.release()

    def _learn_one_py(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """:meth:`learn_one` in Python: every case (the lock is the caller's)."""
        # the common cases of check_target and weight_of inline
        yf = y if type(y) is float and y - y == 0.0 else check_target(y)
        wf = w if type(w) is float and 0.0 <= w < _INF else weight_of(w)
        e = self.__dict__.get("engine_")
        if e is not None and e.fitted:  # one encoding, one compiled call
            fs = e.features
            row = fs.encode_dict_into(x, True, e.row_buffer)  # e.encode_one(x, True), inline
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            if fs.version != e.synced_version:  # a new feature or category
                e.sync()
            yl = _guard_label(self._label_guard(), yf, wf)  # (the row is valid: learnt now)
            e.learn_row(yl, wf if yl == yf else 0.0)  # e.learn_one(row, yf, wf), shorter
            self._attach_px(e)
            return
        if e is None:
            return self._first_call(EngineRegressor._learn_one_py, x, yf, wf)
        row = e.encode_one(x, True)
        e.sync()
        yl = _guard_label(self._label_guard(), yf, wf)
        yf, wf = yl, (wf if yl == yf else 0.0)
        if not e.fitted:  # no feature seen yet
            return self.learn_featureless(yf, wf)
        e.learn_one(row, yf, wf)

    learn_one._holds_lock = True
    learn_one.__wrapped__ = _learn_one_py  # (what learn_one does, but for the lock)

    def encode_learn_row(self, x) -> np.ndarray:
        """The encoded row of an example to learn (new features recorded, trees synced)."""
        e = self.__dict__.get("engine_")
        if e is not None and e.fitted:  # the per-example hot path (as learn_one's)
            fs = e.features
            row = fs.encode_dict_into(x, True, e.row_buffer)
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            if fs.version != e.synced_version:
                e.sync()
            return row
        self.feature_space()
        row = self.engine_.encode_one(x, True)
        self.engine_.sync()
        self.check_fittable()
        return row

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Prediction for one example (before anything was learnt: see the model)."""
        try:
            lock = self._call_lock
        except AttributeError:
            lock = lock_of(self)
        lock.acquire()
        try:
            px = self._px
            if px:  # one compiled call (see engine.per_example)
                y = px.predict(self, x)
                if y is not None:
                    return y
            return self._predict_one_py(x)
        finally:
            lock.release()

    def _predict_one_py(self, x: Mapping[Hashable, object]) -> float:
        """:meth:`predict_one` in Python: every case (the lock is the caller's)."""
        e = self.__dict__.get("engine_")
        if e is not None and e.fitted:  # one encoding, one compiled call
            row = e.features.encode_dict_into(x, False, e.row_buffer)  # e.encode_one(x, False)
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            y = e.predict_one(row)
            self._attach_px(e)
            return y
        self._check_params()
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
        return self._featureless_prediction()

    predict_one._holds_lock = True  # (see learn_one)
    predict_one.__wrapped__ = _predict_one_py
