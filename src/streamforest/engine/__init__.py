"""The forest engine: every tree of a model in one compiled structure, and the door to it.

- :mod:`.core`: :class:`~streamforest.engine.core.Engine`, the trees' compiled state (an arena)
  and its life cycle (create, widen, grow, replace), bagging weights, running passes, aggregation;
- :mod:`._kernels`: the compiled kernels over the arena (per example and per chunk);
- :mod:`.model`: :class:`~streamforest.engine.model.EngineRegressor`, both user APIs over an engine
  (the base of the tree and the forest estimators).
"""
