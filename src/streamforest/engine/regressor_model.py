"""Both APIs (River-style dicts, array batches) of a regressor whose trees run in an engine.

:class:`EngineRegressor` is the base of :class:`~streamforest.HoeffdingTreeRegressor` (an engine
of one tree, no bagging) and :class:`~streamforest.OnlineForestRegressor`.  A subclass says how
its engine is made (:meth:`EngineRegressor._make_engine`); everything else, encoding, validation
and the compiled calls, is here once.  A per-example call is one compiled call after the dict is
encoded.

The forest interface (the model's part), what the interval methods, prediction sets, the
distributed layer and batch estimators use of a forest (with its ``engine_``, see
:mod:`streamforest.engine.core`); none of them reads a private (``_``) member of a model:

- :attr:`EngineRegressor.is_fitted`: whether the trees exist (once a feature is known);
- :meth:`EngineRegressor.feature_space`: the model's :class:`~streamforest.features.FeatureSpace`,
  made with the engine on first use;
- :meth:`EngineRegressor.encode_learn_row`: an example's row to learn, in the engine's row buffer
  (the trees synced to any new feature);
- :meth:`EngineRegressor.prepare_batch`, :meth:`EngineRegressor.encode_predict`,
  :meth:`EngineRegressor.pad`: a batch's arrays to learn or predict, and a matrix widened to the
  trees' features;
- :meth:`EngineRegressor.check_fittable`, :meth:`EngineRegressor.learn_featureless`: the model's
  rule for rows while no feature is known (a forest refuses them);
- :meth:`EngineRegressor.load_kernels`: load the kernels that run only when a tree grows;
- a forest adds ``encode_one``, ``tree_predictions``, ``tree_template`` and
  ``configure_trees`` (see :class:`~streamforest.OnlineForestRegressor`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import numpy as np

from ..base import Estimator
from ..features import (
    FeatureSpace,
    check_target,
    check_targets,
    check_weights,
    n_rows,
    weight_of,
)

_INF = float("inf")


class EngineRegressor(Estimator):
    """Base of the regressors run by an :class:`~streamforest.engine.core.Engine`."""

    # --- hooks -----------------------------------------------------------------------------------
    def _check_params(self) -> None:
        pass

    def _nominal(self):
        """Features forced nominal (names or column indices)."""
        return None

    def _make_engine(self, features: FeatureSpace):
        raise NotImplementedError

    def learn_featureless(self, y: float, w: float) -> None:
        """Learn an example while no feature is known: the model's rule (a forest refuses it,
        a tree keeps the target mean); ``learn_featureless(0.0, 0.0)`` checks that the model
        accepts such rows."""
        raise ValueError("no feature has been seen yet: an example needs at least one feature")

    def _featureless_prediction(self) -> float:
        return 0.0

    # --- state -----------------------------------------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        """Whether the trees exist (a feature is known): the engine's ``fitted``."""
        e = self.__dict__.get("engine_")
        return e is not None and e.fitted

    def feature_space(self) -> FeatureSpace:
        """The model's feature space, made (with the engine, ``engine_``) on first use."""
        fs = self.__dict__.get("features_")
        if fs is None:
            self._check_params()
            fs = FeatureSpace(self._nominal())
            self.engine_ = self._make_engine(fs)
            self.features_ = fs
        return fs

    _create_state = feature_space  # see Estimator._first_call

    @property
    def _engine(self):
        self.feature_space()
        return self.engine_

    def pad(self, Xa: np.ndarray) -> np.ndarray:
        """Encoded matrix ``Xa`` widened with NaN columns to every known feature, float64 C
        order (what the kernels read)."""
        p = len(self.features_)
        if Xa.shape[1] < p:
            Xa = np.hstack([Xa, np.full((Xa.shape[0], p - Xa.shape[1]), np.nan)])
        return np.ascontiguousarray(Xa, dtype=np.float64)

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

    def encode_predict(self, X) -> np.ndarray:
        """The encoded, padded matrix of a batch to predict (no feature recorded)."""
        return self.pad(self.feature_space().encode_array(X, learn=False))

    # --- array API -------------------------------------------------------------------------------
    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` (2-d array or DataFrame) in order, with optional weights."""
        if "features_" not in self.__dict__:
            return self._first_call(EngineRegressor.learn_many, X, y, w)
        Xa, ya, wa = self.prepare_batch(X, y, w)
        if Xa.shape[0]:
            self.check_fittable()
            e = self.engine_
            if not e.fitted:  # rows without any feature (the tree keeps their mean)
                self._featureless_rows(ya, wa)
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
        e = self.engine_
        if not e.fitted:  # rows without any feature (the tree keeps their mean)
            return self._featureless_rows(ya, wa)
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
            e.learn_row(yf, wf)  # e.learn_one(row, yf, wf), shorter
            return
        if e is None:
            return self._first_call(EngineRegressor.learn_one, x, yf, wf)
        row = e.encode_one(x, True)
        e.sync()
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

    # --- inspection ------------------------------------------------------------------------------
    @property
    def n_features_in_(self) -> int:
        fs = self.__dict__.get("features_")
        return len(fs) if fs is not None else 0

    @property
    def feature_names_in_(self) -> list:
        fs = self.__dict__.get("features_")
        return list(fs.names) if fs is not None else []

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees' compiled state (allocated capacity)."""
        return self.engine_.memory_bytes if self.is_fitted else 0

    def load_kernels(self) -> None:
        """Load (or compile) kernels that only run when a tree grows (see the engine)."""
        if self.is_fitted:
            self.engine_.load_kernels()
