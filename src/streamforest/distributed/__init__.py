"""Scale out on Ray (extra ``[ray]``): many keyed streams, or one large stream's trees sharded.

- :class:`KeyedModels`: one model per key (sensor, product, machine), keys hashed to actors;
- :class:`ShardedForest`: the trees of one forest, OnlineQRF or CPApproximate split over actors,
  with results identical to the local model with the same seed.

Both checkpoint periodically (:func:`streamforest.save`, to a directory or fsspec URL) and
restore a worker that died from its last checkpoint plus the rows since then, which they keep
themselves.  Each worker reserves ``num_cpus`` (0.25 by default); when Ray cannot place the
workers within ``placement_timeout`` seconds the constructor raises
:class:`WorkerPlacementError` instead of waiting.  See ``docs/distributed.md``.  Importing this
package does not import Ray; making one of these objects does (``ray.init()`` when Ray is not
initialised yet).
"""

from .keyed import KeyedModels, key_hash
from .runtime import WorkerPlacementError
from .sharded import ShardedForest

__all__ = ["KeyedModels", "ShardedForest", "WorkerPlacementError", "key_hash"]
