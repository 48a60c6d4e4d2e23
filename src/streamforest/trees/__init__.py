"""The tree estimators: single online trees on the forest engine (:mod:`streamforest.engine`).

Their compiled state and kernels are :mod:`streamforest.tree_kinds`."""

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
