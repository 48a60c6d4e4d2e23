"""streamforest: online regression forests for data streams, with prediction intervals."""

from .trees import HoeffdingTreeRegressor

__version__ = "0.1.0"
__all__ = ["HoeffdingTreeRegressor", "__version__"]
