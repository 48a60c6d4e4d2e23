"""The trees' state as the compiled core reads it: their layout, their kinds, their rules.

Below the forest engine (:mod:`streamforest.engine`); the tree *estimators* built on the engine
are :mod:`streamforest.trees`.  The code that learns and predicts a row is the compiled core's
(``src/core/tree``: structure, room, splitting, a tree's passes; ``src/core/rules``: the split
rules; ``src/core/leaves``: the leaf models); here is what the engine, the interval methods and
persistence read and write of it:

- :mod:`.state`: a tree's fields (:class:`~.state.TreeState`), parameters
  (:class:`~.state.TreeParams`) and their allocation;
- :mod:`.arena`: every tree of a forest in a few arrays (:class:`~.arena.Arena`);
- :mod:`.kinds`: a tree's kind (:class:`~.kinds.TreeKind`: split rule, task and components),
  read from its parameters;
- :mod:`.rules`: the split rules of the core's table and what their trees hold;
- :mod:`.pregrown`: ABORF's pre-grown trees (what the rule does, their size);
- :mod:`.inspection`: a tree's structure read back in Python.
"""
