"""Online forests of regression trees."""

from .aborf import ABORFRegressor
from .atser_ensemble import ATSEREnsembleRegressor
from .online_forest import OnlineForestRegressor

__all__ = ["ABORFRegressor", "ATSEREnsembleRegressor", "OnlineForestRegressor"]
