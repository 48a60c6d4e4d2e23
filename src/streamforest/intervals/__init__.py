"""Prediction-interval meta-algorithms over online forests."""

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
