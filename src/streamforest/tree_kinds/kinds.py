"""What a tree is made of: its :class:`TreeKind`, read from its parameters.

A tree's kind is its split rule (Hoeffding observers, the extremely randomised split, pre-grown
trees, the Gaussian classification split), its task, and the components it uses (KLL sketches in
the leaves, alternate subtrees, evidence weights, Bayesian leaves).  The compiled core computes
the same kind from a tree's parameters when it takes the tree (``kind_of`` in
``src/core/tree/split_rules.cpp``), and runs a component's step where the kind has it; it does
not run every combination (``_core.tree.supports``: e.g. no alternate subtrees in a pre-grown
tree, which never splits), and the file validator refuses a tree of a kind it does not run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

import streamforest._core as _core

from . import rules as split_rules
from .state import LEAF_BAYES, TASK_CLASSIFICATION, TreeParams


@dataclass(frozen=True)
class TreeKind:
    """The split rule and task of a tree, and the components it runs with."""

    rule: str = "observers"  # a name of the split rules' table (streamforest.tree_kinds.rules)
    classification: bool = False
    sketch: bool = False  # KLL sketches of the leaves' targets (quantile forests)
    alternates: bool = False  # alternate subtrees at split nodes (change adaptation)
    evidence: bool = False  # evidence weights of the tree and its leaves (ABORF)
    bayes: bool = False  # Bayesian linear leaves (ABORF)

    @property
    def name(self) -> str:
        parts = [self.rule, "classification" if self.classification else "regression"]
        parts += [f.name for f in fields(self) if getattr(self, f.name) is True
                  and f.name != "classification"]  # fmt: skip
        return "-".join(parts)

    @property
    def runs(self) -> bool:
        """Whether the compiled core runs trees of this kind."""
        return bool(_core.tree.supports(**asdict(self)))


def kind_of(prm: TreeParams) -> TreeKind:
    """The kind of a tree with parameters ``prm``: its split rule, task and components, with the
    components its rule always runs with (:attr:`~.rules.SplitRule.compiled_with`: an ATSER tree
    without alternate subtrees runs the steps of one with them, reading ``alt_lambda = 0`` from
    its parameters)."""
    kind = TreeKind(
        rule=split_rules.name_of(prm),
        classification=int(prm.task) == TASK_CLASSIFICATION,
        sketch=int(prm.sketch_k) > 0,
        alternates=float(prm.alt_lambda) > 0.0,
        evidence=float(prm.ev_fade) > 0.0,
        bayes=int(prm.leaf_model) == LEAF_BAYES,
    )
    return replace(kind, **{name: True for name in split_rules.of(prm).compiled_with})


__all__ = ["TreeKind", "kind_of"]
