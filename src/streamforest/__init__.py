"""streamforest: online regression forests for data streams, with prediction intervals."""

# first: a writable place for numba's cache (before any kernel is defined), then the listener
# that logs the first compilation of a kernel
from . import _numba_cache  # noqa: F401  # isort: skip
from .compilation import warmup  # isort: skip
from ._version import __version__
from .batch import HDIForestRegressor, QuantileForestRegressor
from .concurrency import ThreadSafe
from .forests import (
    ABORFRegressor,
    ACTSEREnsembleClassifier,
    ATSEREnsembleRegressor,
    OnlineForestRegressor,
)
from .intervals import (
    AdaptiveConformal,
    ConformalQRF,
    CPApproximate,
    CPExact,
    GaussianInterval,
    NormalizedConformal,
    OnlineQRF,
)
from .persistence import load, save
from .sketches import KLLSketch
from .trees import (
    ACTSERClassifier,
    ATSERRegressor,
    HoeffdingTreeClassifier,
    HoeffdingTreeRegressor,
)

__all__ = [
    "ABORFRegressor",
    "ACTSERClassifier",
    "ACTSEREnsembleClassifier",
    "ATSEREnsembleRegressor",
    "ATSERRegressor",
    "AdaptiveConformal",
    "CPApproximate",
    "CPExact",
    "ConformalQRF",
    "GaussianInterval",
    "HDIForestRegressor",
    "HoeffdingTreeClassifier",
    "HoeffdingTreeRegressor",
    "KLLSketch",
    "NormalizedConformal",
    "OnlineForestRegressor",
    "OnlineQRF",
    "QuantileForestRegressor",
    "ThreadSafe",
    "__version__",
    "load",
    "save",
    "warmup",
]
