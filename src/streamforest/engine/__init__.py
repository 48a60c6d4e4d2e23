"""The forest engine: every tree of a model in one compiled structure, and the door to it.

One engine serves every tree kind and both tasks:

- :mod:`.core`: :class:`~streamforest.engine.core.Engine`, the trees' compiled state (an arena)
  and its life cycle (create, widen, grow, replace: :mod:`.tree_lifecycle`,
  :mod:`.background_trees`), bagging weights, running passes, aggregation; the per-example path
  (:mod:`.per_example`, :mod:`.handle`); the memory budget (:mod:`.budget`;
  :mod:`.classifier_engine` counts a classifier's leaves as wide as they will be);
- the compiled passes over the arena (per example and per chunk), the same for regression and
  classification trees, and a classifier forest's vote, are the compiled core's
  (``_core.engine``; ``src/core/engine``, over ``src/core/tree``);
- :mod:`.model`: :class:`~streamforest.engine.model.EngineModel`, the one base of the models run
  by an engine, with its task's part in :mod:`.regressor_model`
  (:class:`~streamforest.engine.regressor_model.EngineRegressor`) and :mod:`.classifier_model`
  (:class:`~streamforest.engine.classifier_model.EngineClassifier`): both user APIs over an
  engine, the base of the tree and forest estimators.
"""
