"""Online forests of regression trees."""

from .online_forest import OnlineForestRegressor

__all__ = ["OnlineForestRegressor"]
