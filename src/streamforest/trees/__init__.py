"""Online regression trees (tree kinds of the forest engine) and their split rules."""

from .atser import ATSERRegressor
from .hoeffding import HoeffdingTreeRegressor

__all__ = ["ATSERRegressor", "HoeffdingTreeRegressor"]
