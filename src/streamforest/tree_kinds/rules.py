"""The split rules of the trees, one entry each, as the compiled core's table lists them.

A split rule is how a tree decides its tests (Hoeffding observers, the extremely randomised
split, trees grown before data, the Gaussian classification split).  Each is one unit of the
compiled core (``src/core/rules/<name>``) that fills its ``SplitRule`` (its code, the parts it
does differently from a growing tree, what its trees hold), and one line of the core's table
(``src/core/tree/split_rules.cpp``); the shared kernels call a rule's parts and never switch on
the rule.  This module reads that table (``_core.tree.rules()``), so a new rule needs nothing
here: the engine allocates its trees from the flags below and the file validator knows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamforest._core as _core


@dataclass(frozen=True)
class SplitRule:
    """A split rule of the core's table: its code (``TreeParams.split_rule``) and what its
    trees hold."""

    code: int
    name: str
    observer_bins: bool = False  # a pool of attribute-observer bins (else a token one)
    grown_before_data: bool = False  # every node allocated and built at creation
    buffers_examples: bool = False  # leaves buffer ``m_min`` examples for candidate splits
    value_ranges: bool = False  # per-leaf value ranges of the features (classification)
    classification: bool = False  # the rule has a classification part
    # components every tree of the rule runs with, used or not (a tree reads from its
    # parameters whether it uses them)
    compiled_with: tuple = ()


RULES = {r["name"]: SplitRule(**r) for r in _core.tree.rules()}

_BY_CODE = {rule.code: rule for rule in RULES.values()}


def name_of(prm) -> str:
    """The name of the split rule of a tree with parameters ``prm``."""
    return _BY_CODE[int(prm.split_rule)].name


def known(code) -> bool:
    """Whether ``code`` is a split rule's code."""
    return int(code) in _BY_CODE


def of(prm) -> SplitRule:
    """The split rule of a tree with parameters ``prm``."""
    return _BY_CODE[int(prm.split_rule)]


__all__ = ["RULES", "SplitRule", "known", "name_of", "of"]
