"""streamforest: online regression forests for data streams, with prediction intervals."""

import warnings as _warnings

from . import datasets  # noqa: F401  (registers the bundled datasets as streams.dataset's fallback)
from ._version import __version__
from .batch import HDIForestRegressor, QuantileForestRegressor
from .boosting import SGBTRegressor
from .concurrency import ThreadSafe
from .features import FeatureCapWarning
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
    Multivalid,
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


def warmup(*args, **kwargs) -> None:
    """Deprecated, does nothing: the compiled core is built when the package is installed, so
    there is nothing to compile or load before a first call (kept for scripts and image builds
    that called it; ``streamforest warmup`` likewise)."""
    _warnings.warn(
        "streamforest.warmup() does nothing since the core is compiled at install; remove the call",
        DeprecationWarning,
        stacklevel=2,
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
    "FeatureCapWarning",
    "ConformalQRF",
    "GaussianInterval",
    "HDIForestRegressor",
    "HoeffdingTreeClassifier",
    "HoeffdingTreeRegressor",
    "KLLSketch",
    "Multivalid",
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
