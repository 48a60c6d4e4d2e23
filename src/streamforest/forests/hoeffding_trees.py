"""What a model whose trees are Hoeffding trees of the engine's arena adds to the forest
interface: :class:`HoeffdingTrees`, a mixin of :class:`~streamforest.OnlineForestRegressor`
(bagged members) and :class:`~streamforest.SGBTRegressor` (boosting steps)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..engine.budget import check_memory_mb
from ..tree_kinds import state
from ..tree_kinds.inspection import TreeView


class HoeffdingTrees:
    """The Hoeffding trees' own members (before the model's base, a
    :class:`~streamforest.engine.forest_interface.RegressionForest`): the engine's parameters
    checked, the trees' specs made from ``tree_template()``, views of the trees.  The model
    defines ``tree_template()``, ``max_features``, ``drift_threshold``, ``drift_delta``,
    ``warning_fraction``, ``max_memory_mb``, ``n_jobs`` and ``seed``."""

    def _check_engine_params(self) -> None:
        """The parameters every forest passes to its engine: drift detection, memory, threads,
        seed."""
        dl = self.drift_threshold
        if dl is not None and not (isinstance(dl, numbers.Real) and 0 < dl < math.inf):
            raise ValueError(f"drift_threshold must be None or a positive number, got {dl!r}")
        da = self.drift_delta
        if not (isinstance(da, numbers.Real) and 0 <= da < math.inf) or isinstance(da, bool):
            raise ValueError(f"drift_delta must be a number >= 0, got {da!r}")
        wf = self.warning_fraction
        if wf is not None and not (isinstance(wf, numbers.Real) and 0 < wf < 1):
            raise ValueError(f"warning_fraction must be None or a number in (0, 1), got {wf!r}")
        check_memory_mb(self.max_memory_mb)
        if not (isinstance(self.n_jobs, numbers.Integral) and 1 <= self.n_jobs <= 64):
            raise ValueError(f"n_jobs must be an integer in [1, 64], got {self.n_jobs!r}")
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")

    def _nominal(self):
        return self.tree_template().nominal_features

    def tree_specs(self, n: int) -> tuple[list, int]:
        """``n`` checked clones of :meth:`tree_template` with the forest's per-tree settings
        (feature subspace, a seed each, drift detection, a meta-algorithm's overrides) and the
        engine's own seed: what an engine is built from (this forest's, or a subclass's that
        uses the trees otherwise, as SGBT's boosting steps)."""
        template = self.tree_template()
        seeds = np.random.SeedSequence(self.seed).generate_state(n + 1, np.uint64)
        overrides = getattr(self, "_tree_overrides", {})
        specs = []
        for t in range(n):
            spec = template.clone(
                max_features=self.max_features,
                seed=int(seeds[t]),
                drift_threshold=self.drift_threshold,
                drift_delta=self.drift_delta,
                **overrides,
            )
            spec._check_params()
            specs.append(spec)
        return specs, int(seeds[-1])

    @property
    def trees_(self) -> list[TreeView]:
        """Read-only views of the trees (size, splits, resets)."""
        if "features_" not in self.__dict__:  # before learning: views of empty trees
            return self._first_call(lambda m: m.trees_, keep=False)
        e = self._engine
        return [TreeView(e, t) for t in range(e.n_trees)]

    @property
    def params_(self) -> state.TreeParams:
        return self.engine_.params(0)
