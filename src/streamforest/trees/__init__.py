"""Online regression trees (tree kinds of the forest engine) and their split rules."""

from .aborf_tree import ABORFTreeRegressor
from .actser import ACTSERClassifier
from .atser import ATSERRegressor
from .hoeffding import HoeffdingTreeRegressor
from .hoeffding_classifier import HoeffdingTreeClassifier

__all__ = [
    "ABORFTreeRegressor",
    "ACTSERClassifier",
    "ATSERRegressor",
    "HoeffdingTreeClassifier",
    "HoeffdingTreeRegressor",
]
