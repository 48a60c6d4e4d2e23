"""Use streamforest models inside River.

:class:`RiverRegressor` wraps any streamforest regressor so that River's tooling accepts it:
``river.evaluate.progressive_val_score``, pipelines (``preprocessing.StandardScaler() |
RiverRegressor(...)``), ``river.checks.check_estimator``.  River is needed only when this module
is imported (``pip install river``).

>>> from river import datasets, evaluate, metrics
>>> from streamforest import HoeffdingTreeRegressor
>>> from streamforest.river import RiverRegressor
>>> model = RiverRegressor(HoeffdingTreeRegressor(seed=0))
>>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())  # doctest: +SKIP
MAE: ...
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from river import base

from .trees import HoeffdingTreeRegressor


class RiverRegressor(base.MiniBatchRegressor):
    """A streamforest regressor seen through River's ``Regressor`` interface.

    Parameters
    ----------
    model
        The streamforest model to wrap (learnt in place); default
        ``HoeffdingTreeRegressor()``.

    """

    def __init__(self, model=None):
        self.model = model if model is not None else HoeffdingTreeRegressor()

    @property
    def _supervised(self):
        return True

    def learn_one(self, x, y):
        self.model.learn_one(x, y)

    def predict_one(self, x):
        return self.model.predict_one(x)

    def learn_many(self, X: pd.DataFrame, y: pd.Series):
        self.model.learn_many(X, np.asarray(y, dtype=float))

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        return pd.Series(self.model.predict(X), index=X.index)

    @classmethod
    def _unit_test_params(cls):
        yield {"model": HoeffdingTreeRegressor(grace_period=50, seed=1)}
        yield {
            "model": HoeffdingTreeRegressor(
                grace_period=50, leaf_model="linear", observer="ebst", seed=1
            )
        }
