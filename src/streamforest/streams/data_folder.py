"""Where the real datasets beside the project are: :func:`data_root`.

The folder is found from ``root=``, else the ``STREAMFOREST_DATA`` environment variable, else
``../shared/data`` and ``shared/data`` relative to the working directory (see
:mod:`streamforest.streams.datasets`).
"""

from __future__ import annotations

import os

_CANDIDATES = ("../shared/data", "shared/data")


def data_root(root=None) -> str:
    """The datasets folder (see the module docstring); ``FileNotFoundError`` if none is found."""
    tried = [root] if root is not None else []
    if root is None:
        env = os.environ.get("STREAMFOREST_DATA")
        tried += ([env] if env else []) + list(_CANDIDATES)
    for path in tried:
        if path and os.path.isfile(os.path.join(path, "manifest.json")):
            return os.fspath(path)
    raise FileNotFoundError(
        f"no datasets folder with a manifest.json (tried {', '.join(map(str, tried))}); "
        f"pass root= or set STREAMFOREST_DATA"
    )
