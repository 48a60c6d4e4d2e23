"""The regression task of a model run by an engine: both APIs (River-style dicts, array batches).

:class:`EngineRegressor` is the base of :class:`~streamforest.HoeffdingTreeRegressor` (an engine
of one tree, no bagging) and :class:`~streamforest.OnlineForestRegressor`: on
:class:`~streamforest.engine.model.EngineModel` (the feature space, the engine, inspection) it
adds what a target per example needs: validation of targets and weights, learning and
predicting a row or a batch, the trees' values aggregated.  A per-example call is one compiled
call after the dict is encoded.

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


class EngineRegressor(EngineModel):
    """Base of the regressors run by an :class:`~streamforest.engine.core.Engine`."""

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
    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values) with sample weight ``w``."""
        # the common cases of check_target and weight_of inline: the per-example hot path
        yf = y if type(y) is float and y - y == 0.0 else check_target(y)
        wf = w if type(w) is float and 0.0 <= w < _INF else weight_of(w)
        e = self.__dict__.get("engine_")
        if e is not None and e.fitted:  # the hot path: one encoding, one compiled call
            fs = e.features
            row = fs.encode_dict_into(x, True, e.row_buffer)  # e.encode_one(x, True), inline
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            if fs.version != e.synced_version:  # a new feature or category
                e.sync()
            yl = _guard_label(self._label_guard(), yf, wf)  # (the row is valid: learnt now)
            e.learn_row(yl, wf if yl == yf else 0.0)  # e.learn_one(row, yf, wf), shorter
            return
        if e is None:
            return self._first_call(EngineRegressor.learn_one, x, yf, wf)
        row = e.encode_one(x, True)
        e.sync()
        yl = _guard_label(self._label_guard(), yf, wf)
        yf, wf = yl, (wf if yl == yf else 0.0)
        if not e.fitted:  # no feature seen yet
            return self.learn_featureless(yf, wf)
        e.learn_one(row, yf, wf)

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
        e = self.__dict__.get("engine_")
        if e is not None and e.fitted:  # the hot path: one encoding, one compiled call
            row = e.features.encode_dict_into(x, False, e.row_buffer)  # e.encode_one(x, False)
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            return e.predict_one(row)
        self._check_params()
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
        return self._featureless_prediction()
