"""Online forests of regression trees."""

from .atser_ensemble import ATSEREnsembleRegressor
from .online_forest import OnlineForestRegressor

__all__ = ["ATSEREnsembleRegressor", "OnlineForestRegressor"]
