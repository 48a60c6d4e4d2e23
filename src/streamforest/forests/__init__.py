"""Online forests of regression trees."""

from .aborf import ABORFRegressor
from .actser_ensemble import ACTSEREnsembleClassifier
from .atser_ensemble import ATSEREnsembleRegressor
from .online_forest import OnlineForestRegressor

__all__ = [
    "ABORFRegressor",
    "ACTSEREnsembleClassifier",
    "ATSEREnsembleRegressor",
    "OnlineForestRegressor",
]
