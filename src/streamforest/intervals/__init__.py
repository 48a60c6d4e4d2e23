"""Prediction-interval meta-algorithms over online forests."""

from .conformal import CPApproximate, CPExact
from .cqr import ConformalQRF
from .gaussian import GaussianInterval
from .quantile_forest import OnlineQRF

__all__ = ["CPApproximate", "CPExact", "ConformalQRF", "GaussianInterval", "OnlineQRF"]
