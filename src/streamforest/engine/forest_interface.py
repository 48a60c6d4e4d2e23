"""The forest interface: what the interval methods and the distributed layer need of a regression
forest, and the *capabilities* a forest may add.

:class:`RegressionForest` is the base of every forest an interval method takes as its
``forest`` (:class:`~streamforest.OnlineForestRegressor` and its subclasses,
:class:`~streamforest.AMFRegressor`, :class:`~streamforest.SGBTRegressor`).  Every forest offers:

- the model's part (:class:`~streamforest.engine.regressor_model.EngineRegressor`,
  :class:`~streamforest.engine.model.EngineModel`): ``is_fitted``, ``feature_space()``,
  ``encode_learn_row``, ``encode_one``, ``prepare_batch``, ``encode_predict``, ``pad``,
  ``check_fittable``, ``learn_featureless``, ``predict``/``predict_one``,
  ``memory_bytes``, ``guard_labels``; the Estimator conventions (``clone``, ``seed``, ``n_jobs``);
- :meth:`RegressionForest.tree_predictions`, :attr:`RegressionForest.drift_stats_`,
  :attr:`RegressionForest.n_resets`, :meth:`RegressionForest.member_count`;
- ``engine_``, with the engine's members that do not depend on how the trees are stored:
  ``row_buffer``, ``encode_one``, ``synced_version``, ``sync``, ``fitted``, ``bagging_weights``,
  ``learn``, ``predict_learn``, ``predict_trees``, ``aggregate``, ``learn_one``, ``learn_row``,
  ``predict_one``, ``last_predictions``, ``remember``, ``n_trees``, and ``takes_array_rows`` /
  ``use_row`` (a one-row batch run as one example, with the batch pass's results).

A forest lists what it offers beyond that in :attr:`RegressionForest.forest_capabilities`
(:data:`CAPABILITIES` says what each name means).  An interval method checks the capabilities
it needs with :func:`require` before it builds anything: a forest that lacks one is refused
with a ``TypeError`` naming the method, the capability and the forest (and the forest's own
:attr:`~RegressionForest.forest_limits`, why it lacks it).  The members of a capability a
forest lacks (``configure_trees``, ``tree_template`` here) raise the same error.

A forest also says what *kind* of base it is, :attr:`RegressionForest.forest_kind` (one of
:data:`FOREST_KINDS`): an interval method whose calibration settings were validated per kind
(:mod:`streamforest.intervals.calibration_defaults`, the table in docs/intervals.md) asks it
that, and nothing else, to choose them.
"""

from __future__ import annotations

import numpy as np

from .regressor_model import EngineRegressor

#: The trees' leaves are rows of the engine's arena: ``engine_.arena``, ``handle()``, ``run``,
#: ``learn_row_with``, ``apply`` (a method's kernels read and write the
#: members' leaves: leaf sketches, leaf variances, per-leaf member lists).
LEAF_PAYLOADS = "leaf_payloads"
#: Hoeffding tree settings: ``tree_template()`` and ``configure_trees(**overrides)``.
TREE_SETTINGS = "tree_settings"
#: The prediction aggregates ``n_trees`` members, each learning a row with its own bagging
#: weight: ``n_trees``, per-member ``predict_trees``/``predict_learn`` rows, out-of-bag rows.
TREE_MEMBERS = "tree_members"
#: The members can be split over processes: ``engine_.restrict(trees)`` keeps a block of them.
TREE_SHARDS = "tree_shards"

CAPABILITIES = {
    LEAF_PAYLOADS: "leaf payloads: the trees' leaves in the engine's arena, for the method's "
    "own kernels",
    TREE_SETTINGS: "tree settings: a Hoeffding tree template and configure_trees",
    TREE_MEMBERS: "tree members: an aggregate of n_trees separately bagged trees",
    TREE_SHARDS: "tree shards: members that can be split over processes",
}


#: The kinds of base (:attr:`RegressionForest.forest_kind`).
BAGGED = "bagged"
BOOSTED = "boosted"
MONDRIAN = "mondrian"
SINGLE_TREE = "single_tree"

FOREST_KINDS = {
    BAGGED: "an average of separately bagged Hoeffding trees (OnlineForestRegressor, the ATSER "
    "ensembles, ABORFRegressor)",
    BOOSTED: "boosting steps, each learning the residual of the steps before (SGBTRegressor)",
    MONDRIAN: "aggregated Mondrian trees (AMFRegressor)",
    SINGLE_TREE: "a bagged forest of one tree",
}


def lacks(forest, capability: str, user: str) -> TypeError:
    """The error of ``user`` (a method, a member) needing ``capability`` that ``forest`` (an
    instance or a class) lacks."""
    cls = forest if isinstance(forest, type) else type(forest)
    what = CAPABILITIES.get(capability, capability)
    limits = getattr(cls, "forest_limits", "")
    return TypeError(
        f"{user} needs the forest capability {capability!r} ({what}); {cls.__name__} lacks it"
        + (f": {limits}" if limits else "")
    )


def require(forest, capabilities, user: str) -> None:
    """Raise :func:`lacks`'s ``TypeError`` for the first of ``capabilities`` (in order) that
    ``forest`` lacks."""
    have = getattr(forest, "forest_capabilities", frozenset())
    for capability in capabilities:
        if capability not in have:
            raise lacks(forest, capability, user)


def has(forest, capability: str) -> bool:
    """Whether ``forest`` (an instance or a class) offers ``capability``."""
    return capability in getattr(forest, "forest_capabilities", frozenset())


class RegressionForest(EngineRegressor):
    """Base of the regression forests the interval methods take (see the module docstring)."""

    #: What the forest offers beyond the interface (names of :data:`CAPABILITIES`).
    forest_capabilities: frozenset = frozenset()
    #: Why the forest lacks the capabilities it lacks (appended to :func:`lacks`'s message).
    forest_limits: str = ""

    @property
    def forest_kind(self) -> str:
        """What kind of base this is (a key of :data:`FOREST_KINDS`), for the interval methods'
        calibration settings per kind: :data:`BAGGED` (:data:`SINGLE_TREE` with one member)
        unless the class says otherwise (``forest_kind = BOOSTED`` as a class attribute)."""
        try:
            one = self.member_count() == 1
        except (TypeError, ValueError):  # (a bad n_trees: the forest's own check reports it)
            one = False
        return SINGLE_TREE if one else BAGGED

    # --- optional capabilities: refused unless the forest has them -------------------------------
    def configure_trees(self, **overrides) -> None:
        """Tree parameters a meta-algorithm imposes (:data:`TREE_SETTINGS`); before learning."""
        raise lacks(self, TREE_SETTINGS, f"configure_trees({', '.join(sorted(overrides))})")

    def tree_template(self):
        """The tree the forest's trees are clones of (:data:`TREE_SETTINGS`)."""
        raise lacks(self, TREE_SETTINGS, "tree_template()")

    # --- the interface ---------------------------------------------------------------------------
    def encode_one(self, x, learn: bool) -> np.ndarray:
        """One example as a one-row matrix of its own (the interval methods' chunk path)."""
        if learn:
            return self.encode_learn_row(x).reshape(1, -1).copy()
        return self.feature_space().encode_dict(x, learn=False).reshape(1, -1)

    def tree_predictions(self, X) -> np.ndarray:
        """``(n, n_trees)`` array of each tree's prediction (0 before any learning)."""
        if "features_" not in self.__dict__:
            return self._first_call(RegressionForest.tree_predictions, X, keep=False)
        return self._engine.predict_trees(self.encode_predict(X)).T

    @property
    def n_resets(self) -> int:
        """Trees replaced after a detected drift so far (by a background or a fresh tree)."""
        e = self.__dict__.get("engine_")
        return int(e.n_resets.sum()) if e is not None else 0

    @property
    def drift_stats_(self) -> dict:
        """Counts of drift detection and adaptation so far, in total and per tree
        (``per_tree``: the same keys, a list of one count per tree):

        - ``warnings``, ``drifts``: signals of the trees' detectors;
        - ``background_started``, ``background_swapped`` (replaced their tree at a drift),
          ``background_discarded`` (their warning was withdrawn), ``background_live`` (now);
        - ``replacements``: trees replaced (``drifts``: swaps plus fresh trees), as
          :attr:`n_resets`.
        """
        e = self.__dict__.get("engine_")
        if e is not None:
            return e.drift_stats()
        keys = ("warnings", "drifts", "background_started", "background_swapped",
                "background_discarded", "background_live", "replacements")  # fmt: skip
        out = {k: 0 for k in keys}
        out["per_tree"] = {k: [0] * self.member_count() for k in keys}
        return out

    def member_count(self) -> int:
        """How many trees the engine holds (``n_trees``; a forest whose trees are no bagged
        members, as SGBT's boosting steps, says its own)."""
        return int(self.n_trees)


__all__ = [
    "BAGGED",
    "BOOSTED",
    "CAPABILITIES",
    "FOREST_KINDS",
    "LEAF_PAYLOADS",
    "MONDRIAN",
    "SINGLE_TREE",
    "TREE_MEMBERS",
    "TREE_SETTINGS",
    "TREE_SHARDS",
    "RegressionForest",
    "has",
    "lacks",
    "require",
]
