"""The split rules of the compiled trees, one entry each: what makes a tree *kind* a kind.

A split rule is how a tree decides its tests (Hoeffding observers, the extremely randomised
split, trees grown before data, the Gaussian classification split).  Its compiled parts live in
its own modules (:mod:`.observers` and :mod:`.splitting`, :mod:`.extra_split`, :mod:`.pregrown`,
:mod:`.class_splitting`); :data:`RULES` names them, one :class:`SplitRule` per rule, and the
shared kernels call a rule's part through a :func:`~.kinds.kind_hook` that looks it up here
(:func:`part`) when it compiles for a kind.  So a new split rule is its module(s) and one entry
here: no shared kernel switches on the rule, and a rule's code compiles only for its kinds.

A part a rule does not name is the growing trees' default (:data:`DEFAULTS`): routing by
axis-aligned tests, a root leaf to start from, the room checks of a tree that grows, nothing
learnt at a leaf beyond its statistics and leaf model.  The allocation flags say what a tree of
the rule holds (read by the engine when it allocates a tree and by the file validator).
"""

from __future__ import annotations

from dataclasses import dataclass

from .classification import _extra_class_learns, _gauss_class_learns
from .leaf_learning import _extra_learns, _nothing_to_learn, _observers_learn
from .pregrown import build_pregrown, child_pregrown, room_pregrown, route_pregrown, update_scaling
from .room import _no_bins_needed, _observer_bin_room, _room_growing
from .state import SPLIT_EXTRA, SPLIT_GAUSS, SPLIT_OBSERVERS, SPLIT_PREGROWN
from .structure import _child_axis, _init_root_leaf, _route_axis


@dataclass(frozen=True)
class SplitRule:
    """A split rule: its code (``TreeParams.split_rule``), its compiled parts (``None``: the
    default of :data:`DEFAULTS`) and what its trees hold."""

    code: int
    # compiled parts (each called through a kind hook; see the hook's docstring for its role)
    learn_at_leaf: object = None  # leaf_learning._split_rule_learns (regression)
    class_learn_at_leaf: object = None  # classification._split_rule_class_learns
    route_from: object = None  # structure.route_from
    child: object = None  # structure._child
    init_root: object = None  # structure.init_root
    room: object = None  # room._room
    bin_room: object = None  # room._bin_room
    after_learning: object = None  # regression._after_learning (None: nothing)
    # what a tree of the rule holds (the engine's allocation)
    observer_bins: bool = False  # a pool of attribute-observer bins (else a token one)
    grown_before_data: bool = False  # every node allocated and built at creation
    buffers_examples: bool = False  # leaves buffer ``m_min`` examples for candidate splits
    value_ranges: bool = False  # per-leaf value ranges of the features (classification)
    # components every kind of the rule compiles with, used or not (a tree reads from its
    # parameters whether it uses them): models of the rule that differ only in these share
    # one compiled kind, so switching one off costs no compilation (see kinds.kind_of).  Only
    # components the rule's default model has or that compile cheaply: ABORF's Bayesian leaves
    # would add ~6 s to every cold start of the default ABORF (RMSProp leaves)
    compiled_with: tuple = ()


DEFAULTS = {
    "learn_at_leaf": _nothing_to_learn,
    "class_learn_at_leaf": None,
    "route_from": _route_axis,
    "child": _child_axis,
    "init_root": _init_root_leaf,
    "room": _room_growing,
    "bin_room": _no_bins_needed,
    "after_learning": None,
}

RULES = {
    "observers": SplitRule(SPLIT_OBSERVERS, learn_at_leaf=_observers_learn,
                           bin_room=_observer_bin_room, observer_bins=True),
    "extra": SplitRule(SPLIT_EXTRA, learn_at_leaf=_extra_learns,
                       class_learn_at_leaf=_extra_class_learns, buffers_examples=True,
                       compiled_with=("alternates",)),
    "pregrown": SplitRule(SPLIT_PREGROWN, route_from=route_pregrown, child=child_pregrown,
                          init_root=build_pregrown, room=room_pregrown,
                          after_learning=update_scaling, grown_before_data=True,
                          compiled_with=("evidence",)),
    "gauss": SplitRule(SPLIT_GAUSS, class_learn_at_leaf=_gauss_class_learns, value_ranges=True),
}  # fmt: skip

_BY_CODE = {rule.code: rule for rule in RULES.values()}
_NAME_OF_CODE = {rule.code: name for name, rule in RULES.items()}


def part(rule: str, name: str):
    """The compiled part ``name`` of split rule ``rule`` (its own, or the default)."""
    own = getattr(RULES[rule], name)
    return DEFAULTS[name] if own is None else own


def name_of(prm) -> str:
    """The name of the split rule of a tree with parameters ``prm``."""
    return _NAME_OF_CODE[int(prm.split_rule)]


def known(code) -> bool:
    """Whether ``code`` is a split rule's code."""
    return int(code) in _BY_CODE


def of(prm) -> SplitRule:
    """The split rule of a tree with parameters ``prm``."""
    return _BY_CODE[int(prm.split_rule)]


__all__ = ["DEFAULTS", "RULES", "SplitRule", "known", "name_of", "of", "part"]
