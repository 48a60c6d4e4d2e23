"""Boosted ensembles of the library's trees: :class:`SGBTRegressor` (streaming gradient-boosted
trees)."""

from .sgbt import SGBTRegressor

__all__ = ["SGBTRegressor"]
