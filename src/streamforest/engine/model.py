"""The one base of every model whose trees run in an engine, whatever its task.

:class:`EngineModel` holds what a regressor and a classifier share: the feature space and the
engine made on first use, the matrix a batch is encoded to, the size and inspection of the
trees.  The task's own part is a subclass: :class:`~streamforest.engine.regressor_model.
EngineRegressor` (a target per example, the trees' values aggregated) and
:class:`~streamforest.engine.classifier_model.EngineClassifier` (a label per example, class
indices learnt, the trees' class probabilities voted).  A model says how its engine is made
(:meth:`EngineModel._make_engine`); the engine serves both tasks with the same compiled
passes (``_core.engine``).

The forest interface (the model's part), what the interval methods, prediction sets, the
distributed layer and batch estimators use of a forest (with its ``engine_``, see
:mod:`streamforest.engine.core`); none of them reads a private (``_``) member of a model:

- :attr:`EngineModel.is_fitted`: whether the trees exist (once a feature is known);
- :meth:`EngineModel.feature_space`: the model's :class:`~streamforest.features.FeatureSpace`,
  made with the engine on first use;
- :meth:`EngineModel.encode_predict`, :meth:`EngineModel.pad`: a batch's matrix to predict, and
  a matrix widened to the trees' features;
- a regressor adds ``encode_learn_row``, ``prepare_batch``, ``check_fittable`` and
  ``learn_featureless`` (:class:`~streamforest.engine.regressor_model.EngineRegressor`), a
  regression forest ``encode_one``, ``tree_predictions``, ``drift_stats_`` and its
  capabilities (:mod:`streamforest.engine.forest_interface`).
"""

from __future__ import annotations

import numpy as np

from ..base import Estimator
from ..features import FeatureSpace
from ..tree_kinds import state


class EngineModel(Estimator):
    """Base of the models run by an :class:`~streamforest.engine.core.Engine` (both tasks)."""

    # --- hooks -----------------------------------------------------------------------------------
    def _check_params(self) -> None:
        pass

    def _nominal(self):
        """Features forced nominal (names or column indices)."""
        return None

    def _make_engine(self, features: FeatureSpace):
        raise NotImplementedError

    def _new_task_state(self) -> None:
        """The task's own state, made with the feature space (a classifier's classes)."""

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
            room = getattr(self.engine_, "update_feature_room", None)
            if room is not None:  # the feature cap of the budget, before the first row
                room()
            self._new_task_state()
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

    def encode_predict(self, X) -> np.ndarray:
        """The encoded, padded matrix of a batch to predict (no feature recorded)."""
        return self.pad(self.feature_space().encode_array(X, learn=False))

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
        """Bytes the process holds for the model: the pages its trees' compiled state lies on
        (allocated capacity; within the budget but for the partial pages at the rows' ends) and
        the feature space (its names and category keys)."""
        if not self.is_fitted:
            return 0
        return self.engine_.held_bytes + self.features_.nbytes

    @property
    def alternate_stats(self) -> dict:
        """Counts of the trees' change adaptation, summed over the trees: alternate subtrees
        ``started`` (a node's detector fired), ``adopted``, ``discarded`` and ``live`` now."""
        out = {"started": 0, "adopted": 0, "discarded": 0, "live": 0}
        if self.is_fitted:
            e = self.engine_
            for t in range(e.n_trees):
                out["started"] += e.int_of(t, state.I_ALT_STARTED)
                out["adopted"] += e.int_of(t, state.I_ALT_SWAPPED)
                out["discarded"] += e.int_of(t, state.I_ALT_DISCARDED)
                out["live"] += e.int_of(t, state.I_NALTS)
        return out
