"""Prediction-interval meta-algorithms over online forests."""

from . import _groups as groups  # noqa: F401  (the group state, shared with prediction sets)
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
