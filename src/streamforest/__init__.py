"""streamforest: online regression forests for data streams, with prediction intervals."""

# first: a writable place for numba's cache (before any kernel is defined), then the listener
# that logs the first compilation of a kernel
from . import _numba_cache  # noqa: F401  # isort: skip
from . import compile_events  # noqa: F401  # isort: skip
from . import datasets  # noqa: F401  (registers the bundled datasets as streams.dataset's fallback)
from ._version import __version__
from .batch import HDIForestRegressor, QuantileForestRegressor
from .boosting import SGBTRegressor
from .compilation import warmup
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
from .mondrian import AMFClassifier, AMFRegressor
from .persistence import load, save
from .prediction_sets import AdaptiveConformalClassifier, ConformalClassifier
from .sketches import KLLSketch
from .trees import (
    ACTSERClassifier,
    ATSERRegressor,
    HoeffdingTreeClassifier,
    HoeffdingTreeRegressor,
)

__all__ = [
    "ABORFRegressor",
    "AMFClassifier",
    "AMFRegressor",
    "ACTSERClassifier",
    "ACTSEREnsembleClassifier",
    "ATSEREnsembleRegressor",
    "ATSERRegressor",
    "AdaptiveConformal",
    "AdaptiveConformalClassifier",
    "CPApproximate",
    "CPExact",
    "ConformalClassifier",
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
    "SGBTRegressor",
    "ThreadSafe",
    "__version__",
    "load",
    "save",
    "warmup",
]
