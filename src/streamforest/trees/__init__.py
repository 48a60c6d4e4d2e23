"""Online regression trees and their attribute observers."""

from .hoeffding import HoeffdingTreeRegressor

__all__ = ["HoeffdingTreeRegressor"]
