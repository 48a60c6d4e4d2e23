"""The compiled trees: their state, their kinds, and the kernels that learn and predict a row.

Below the forest engine (:mod:`streamforest.engine`) and above the statistics, sketches and
drift detectors; the tree *estimators* built on the engine are :mod:`streamforest.trees`.
Every module here is compiled code or its layout, read by the engine, the interval methods and
persistence through these modules' public names:

- :mod:`.state`: a tree's fields (:class:`~.state.TreeState`), parameters
  (:class:`~.state.TreeParams`) and their allocation;
- :mod:`.arena`: every tree of a forest in a few arrays (:class:`~.arena.Arena`), and
  :func:`~.arena.tree_at`, a tree's reference (:mod:`.tree_ref`) inside compiled code;
- :mod:`.kinds`: the table of tree kinds (:class:`~.kinds.TreeKind`: split rule, task and
  components) for which kernels compile, and :func:`~.kinds.kind_hook`, the call of a kind's
  own function;
- :mod:`.kernels`: a tree's passes over rows, for every kind and both tasks, which call the
  task's module: :mod:`.regression` or :mod:`.classification` (learn a row, predict it); the
  structure every kind shares: :mod:`.structure` (routing, node and leaf pools), :mod:`.room`
  (room checks), :mod:`.alternates` (alternate subtrees), :mod:`.splitting`;
- the split rules and leaf components: :mod:`.observers` (Hoeffding/QO observers),
  :mod:`.extra_split` (the extremely randomised split), :mod:`.pregrown` (ABORF's pre-grown
  trees), :mod:`.leaf_models` (mean, linear, adaptive and Bayesian leaf models);
- :mod:`.inspection`: a tree's structure read back in Python.
"""
