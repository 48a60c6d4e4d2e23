"""Optional dependencies: import them when a feature needs one, or say which extra installs it.

The library needs only numpy.  Each optional feature names the extra of
``pyproject.toml`` that brings its packages:

=========  ==========================================  ==========================================
extra      packages                                    for
=========  ==========================================  ==========================================
``plot``   matplotlib                                  ``PrequentialResult.plot``, the run's PNG
``files``  pandas, pyarrow, scipy                      CSV, Parquet and ARFF file streams
``cli``    rich (and ``plot``, ``files``)              the ``streamforest`` command
``river``  river                                       :mod:`streamforest.river`
``batch``  scikit-learn                                HDIForestRegressor, QuantileForestRegressor
=========  ==========================================  ==========================================
"""

from __future__ import annotations

import importlib

#: top-level package -> the extra that installs it
EXTRA = {
    "matplotlib": "plot",
    "pandas": "files",
    "pyarrow": "files",
    "scipy": "files",
    "rich": "cli",
    "river": "river",
    "sklearn": "batch",
}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


def need(module: str, purpose: str):
    """Import ``module`` (e.g. ``"matplotlib.figure"``); if its package is missing, raise
    :class:`MissingExtraError` saying ``"{purpose} needs {package}: pip install
    'streamforest[{extra}]'"``."""
    top = module.split(".")[0]
    try:
        importlib.import_module(top)  # first: a submodule may be loaded while its package is not
        return importlib.import_module(module)
    except ImportError as e:
        if e.name is not None and e.name.split(".")[0] != top:
            raise  # the package is there but one of its own dependencies is broken
        extra = EXTRA.get(top, "dev")
        raise MissingExtraError(
            f"{purpose} needs {top}: pip install 'streamforest[{extra}]'"
        ) from None


def have(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it when it is not yet loaded)."""
    import importlib.util
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
