"""Online regression trees (tree kinds of the forest engine) and their split rules."""

from .aborf_tree import ABORFTreeRegressor
from .atser import ATSERRegressor
from .hoeffding import HoeffdingTreeRegressor

__all__ = ["ABORFTreeRegressor", "ATSERRegressor", "HoeffdingTreeRegressor"]
