"""Use streamforest models inside River.

:class:`RiverRegressor` wraps any streamforest regressor, :class:`RiverClassifier` any
streamforest classifier, so that River's tooling accepts it:
``river.evaluate.progressive_val_score``, pipelines (``preprocessing.StandardScaler() |
RiverRegressor(...)``), ``river.checks.check_estimator``.  River is needed only when this module
is imported (``pip install 'streamforest[river]'``).

>>> from river import datasets, evaluate, metrics
>>> from streamforest import HoeffdingTreeRegressor
>>> from streamforest.river import RiverRegressor
>>> model = RiverRegressor(HoeffdingTreeRegressor(seed=0))
>>> evaluate.progressive_val_score(datasets.TrumpApproval(), model, metrics.MAE())  # doctest: +SKIP
MAE: ...

Interval models (:class:`~streamforest.CPApproximate`, :class:`~streamforest.OnlineQRF`, ...)
follow River's ``conf`` convention: ``predict_one(x, with_interval=True)`` returns a
``river.conf.Interval`` at the adapter's ``confidence_level`` (the model's
``predict_interval_one(x, alpha=1 - confidence_level)``).  With ``interval=True`` that is what
``predict_one(x)`` returns, so River's evaluation sees the intervals.  An
:class:`~streamforest.AdaptiveConformal` model is served its interval at every ``predict_one``,
so that when the label comes (``learn_one``, at once or after ``progressive_val_score(...,
delay=d)``'s delay) its controllers learn from the interval served for that row.
"""

from __future__ import annotations

import numpy as np

from ._extras import need
from .trees import HoeffdingTreeClassifier, HoeffdingTreeRegressor

_PURPOSE = "the River adapter (streamforest.river)"
base = need("river.base", _PURPOSE)
conf = need("river.conf", _PURPOSE)
pd = need("pandas", _PURPOSE)  # River's own dependency


class RiverRegressor(base.MiniBatchRegressor):
    """A streamforest regressor seen through River's ``Regressor`` interface.

    Parameters
    ----------
    model
        The streamforest model to wrap (learnt in place); default
        ``HoeffdingTreeRegressor()``.
    confidence_level
        Coverage of the intervals of ``predict_one(x, with_interval=True)`` (their significance
        level ``alpha`` is ``1 - confidence_level``), as in River's ``conf`` regressors.  Only
        used with an interval model (one with ``predict_interval_one``).
    interval
        ``predict_one(x)`` returns the ``river.conf.Interval`` (``with_interval=True``) by
        default.

    """

    def __init__(self, model=None, confidence_level: float = 0.9, interval: bool = False):
        self.model = model if model is not None else HoeffdingTreeRegressor()
        self.confidence_level = confidence_level
        self.interval = interval

    @property
    def _supervised(self):
        return True

    def learn_one(self, x, y):
        self.model.learn_one(x, y)

    @property
    def gives_intervals(self) -> bool:
        """Whether the wrapped model gives prediction intervals (``with_interval=True``)."""
        return hasattr(self.model, "predict_interval_one")

    def predict_one(self, x, with_interval: bool | None = None, **kwargs):
        """The prediction for ``x``; with ``with_interval`` (default: ``interval``), a
        ``river.conf.Interval`` at ``confidence_level`` instead (River's ``conf`` convention),
        from the wrapped model's ``predict_interval_one``.  An adaptive model (one with a log of
        served intervals) is served its interval either way."""
        if with_interval is None:
            with_interval = bool(self.interval)
        if not with_interval:
            if hasattr(self.model, "log_stats"):  # (AdaptiveConformal: log what is served)
                self.model.predict_interval_one(x, alpha=self._alpha())
            return self.model.predict_one(x, **kwargs)
        interval_one = getattr(self.model, "predict_interval_one", None)
        if interval_one is None:
            raise TypeError(
                f"{type(self.model).__name__} gives no prediction intervals: "
                "with_interval=True needs an interval model (CPApproximate, CPExact, "
                "ConformalQRF, OnlineQRF, GaussianInterval)"
            )
        lower, upper = interval_one(x, alpha=self._alpha(), **kwargs)
        return conf.Interval(lower=lower, upper=upper)

    def _alpha(self) -> float:
        cl = self.confidence_level
        if isinstance(cl, bool) or not isinstance(cl, (int, float)) or not 0.0 < cl < 1.0:
            raise ValueError(f"confidence_level must be a number in (0, 1), got {cl!r}")
        # rounded so that confidence_level=0.9 asks for alpha=0.1 exactly (not 0.09999999999999998)
        return round(1.0 - float(cl), 12)

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


class RiverClassifier(base.MiniBatchClassifier):
    """A streamforest classifier (:class:`~streamforest.HoeffdingTreeClassifier`,
    :class:`~streamforest.ACTSERClassifier`, :class:`~streamforest.ACTSEREnsembleClassifier`)
    seen through River's ``Classifier`` interface, e.g. for
    ``river.evaluate.progressive_val_score`` with River's classification metrics.

    >>> from river import datasets, evaluate, metrics
    >>> from streamforest import ACTSERClassifier
    >>> from streamforest.river import RiverClassifier
    >>> model = RiverClassifier(ACTSERClassifier(seed=0))
    >>> metric = metrics.Accuracy()
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metric)  # doctest: +SKIP
    Accuracy: ...

    Parameters
    ----------
    model
        The streamforest classifier to wrap (learnt in place); default
        ``HoeffdingTreeClassifier()``.
    """

    def __init__(self, model=None):
        self.model = model if model is not None else HoeffdingTreeClassifier()

    @property
    def _supervised(self):
        return True

    @property
    def _multiclass(self):
        return True

    def learn_one(self, x, y):
        self.model.learn_one(x, y)

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    def predict_one(self, x):
        return self.model.predict_one(x)

    def learn_many(self, X: pd.DataFrame, y: pd.Series):
        self.model.learn_many(X, list(y))

    def predict_proba_many(self, X: pd.DataFrame) -> pd.DataFrame:
        P = self.model.predict_proba(X)
        return pd.DataFrame(P, index=X.index, columns=list(self.model.__dict__.get("classes_", [])))

    def predict_many(self, X: pd.DataFrame) -> pd.Series:
        return pd.Series(self.model.predict(X), index=X.index)

    @classmethod
    def _unit_test_params(cls):
        yield {"model": HoeffdingTreeClassifier(grace_period=50, seed=1)}
