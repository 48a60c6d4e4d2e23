"""Prediction-interval meta-algorithms over online forests."""

# (the group state and the groups' controllers, shared with the prediction sets)
from . import _group_controllers as group_controllers  # noqa: F401
from . import _groups as groups  # noqa: F401
from ._groups import Multivalid
from .adaptive import AdaptiveConformal
from .conformal import CPApproximate, CPExact
from .cqr import ConformalQRF
from .gaussian import GaussianInterval
from .normalized import NormalizedConformal
from .quantile_forest import OnlineQRF

__all__ = [
    "AdaptiveConformal",
    "CPApproximate",
    "CPExact",
    "ConformalQRF",
    "GaussianInterval",
    "Multivalid",
    "NormalizedConformal",
    "OnlineQRF",
]
