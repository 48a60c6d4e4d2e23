"""Prediction-interval meta-algorithms over online forests."""

from .conformal import ConformalQRF, CPApproximate, CPExact
from .gaussian import GaussianInterval
from .quantile_forest import OnlineQRF

__all__ = ["CPApproximate", "CPExact", "ConformalQRF", "GaussianInterval", "OnlineQRF"]
