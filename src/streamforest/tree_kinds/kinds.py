"""What a compiled tree is made of: its :class:`TreeKind`, known when its kernels compile.

A tree's kernels are compiled for its *kind*: the split rule (Hoeffding observers, the extremely
randomised split, pre-grown trees, the Gaussian classification split), the task, and the
components it may use (KLL sketches in the leaves, alternate subtrees, evidence weights,
Bayesian leaves).  The kind is part of the numba type of the tree reference
(:data:`~.tree_ref.TreeRef`), so the code of a split rule or component is compiled only for the
kinds that have it: a Hoeffding tree never compiles the pre-grown trees' kernels, a forest
without sketches never compiles the KLL kernels.  Each kind's compiled code is cached on its own.

A component flag says that the kernels *can* use the component; whether a tree does is still
read from its parameters (a forest whose trees differ in a component compiles for the kind that
has every component of any of its trees, :meth:`TreeKind.union`; and a split rule names the
components every kind of it compiles with, :attr:`~.rules.SplitRule.compiled_with`, so that
models of the rule that differ only in those share their compiled code).  The split rule and the
task are exact: a forest's trees all share them.

The kind travels with the forest's arena (:class:`~streamforest.tree_kinds.arena.Arena.kind`) as a
:class:`KindTag`, a Python object whose numba type carries the kind and that holds no data.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, fields, replace

from numba import types
from numba.extending import (
    NativeValue,
    box,
    intrinsic,
    models,
    register_model,
    typeof_impl,
    unbox,
)

from .state import LEAF_BAYES, TASK_CLASSIFICATION, TreeParams


@dataclass(frozen=True)
class TreeKind:
    """The split rule and task of a tree, and the components its kernels are compiled with."""

    rule: str = "observers"  # a name of the split rules' table (streamforest.tree_kinds.rules)
    classification: bool = False
    sketch: bool = False  # KLL sketches of the leaves' targets (quantile forests)
    alternates: bool = False  # alternate subtrees at split nodes (change adaptation)
    evidence: bool = False  # evidence weights of the tree and its leaves (ABORF)
    bayes: bool = False  # Bayesian linear leaves (ABORF)

    def union(self, other: TreeKind) -> TreeKind:
        """The kind whose kernels serve trees of both kinds (same rule and task)."""
        if (self.rule, self.classification) != (other.rule, other.classification):
            raise ValueError(f"trees of one forest differ in split rule or task: {self}, {other}")
        flags = {f.name: getattr(self, f.name) or getattr(other, f.name)
                 for f in fields(self) if f.name not in ("rule", "classification")}  # fmt: skip
        return replace(self, **flags)

    @property
    def name(self) -> str:
        parts = [self.rule, "classification" if self.classification else "regression"]
        parts += [f.name for f in fields(self) if getattr(self, f.name) is True
                  and f.name != "classification"]  # fmt: skip
        return "-".join(parts)


def kind_of(prm: TreeParams) -> TreeKind:
    """The kind a tree with parameters ``prm`` compiles for: its split rule, task and
    components, with the components its rule always compiles with
    (:attr:`~.rules.SplitRule.compiled_with`: an ATSER tree without alternate subtrees runs
    the kernels of one with them, reading ``alt_lambda = 0`` from its parameters)."""
    rules = _rules()
    kind = TreeKind(
        rule=rules.name_of(prm),
        classification=int(prm.task) == TASK_CLASSIFICATION,
        sketch=int(prm.sketch_k) > 0,
        alternates=float(prm.alt_lambda) > 0.0,
        evidence=float(prm.ev_fade) > 0.0,
        bayes=int(prm.leaf_model) == LEAF_BAYES,
    )
    return replace(kind, **{name: True for name in rules.of(prm).compiled_with})


class KindTag:
    """A tree kind as a value that compiled code can be given (its numba type is the kind)."""

    __slots__ = ("kind", "_hash")

    def __init__(self, kind: TreeKind):
        self.kind = kind
        self._hash = hash(kind)  # (a key of the per-example paths' entry points: once)

    def __reduce__(self):
        return KindTag, (self.kind,)

    def __eq__(self, other):
        return isinstance(other, KindTag) and other.kind == self.kind

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"KindTag({self.kind.name})"

    @property
    def _numba_type_(self):
        """Its numba type, read by numba's dispatcher in C (about 1 microsecond a call; typing
        it in Python, about 10)."""
        return KindTagType(self.kind)


class KindTagType(types.Type):
    """The numba type of a :class:`KindTag`: the kind, no data."""

    def __init__(self, kind: TreeKind):
        self.kind = kind
        super().__init__(name=f"TreeKind[{kind.name}]")


@typeof_impl.register(KindTag)
def _typeof_kind_tag(value, context):
    return KindTagType(value.kind)


register_model(KindTagType)(models.OpaqueModel)


@unbox(KindTagType)
def _unbox_kind_tag(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@box(KindTagType)
def _box_kind_tag(typ, val, c):
    kind = c.pyapi.unserialize(c.pyapi.serialize_object(KindTag(typ.kind)))
    return kind


def kind_hook(choose):
    """Decorator: a compiled function whose body is the one ``choose(kind)`` returns for the
    kind of its first argument (a tree reference): a jitted function of the same parameters, or
    ``None`` for a step the kind does not have (then the call does nothing and returns None).

    The call is resolved when numba compiles the caller and compiled as a direct call of the
    chosen function (an intrinsic: no function of its own in between), so only the chosen
    function is compiled; the stub's own body never runs::

        @kind_hook(lambda kind: sketch_update if kind.sketch else None)
        def sketch_step(st, leaf, y, w):
            \"\"\"The leaf's sketch learns y (kinds with sketches).\"\"\"
    """

    def decorate(stub):
        names = list(inspect.signature(stub).parameters)
        args = ", ".join(names)
        scope = {"resolve": lambda typingctx, argtys: _resolve_hook(choose, typingctx, argtys)}
        exec(  # an intrinsic of the stub's own parameters (numba reads its signature)
            f"def {stub.__name__}(typingctx, {args}):\n    return resolve(typingctx, ({args},))\n",
            scope,
        )
        hook = intrinsic(scope[stub.__name__])
        hook.__doc__ = stub.__doc__
        return hook

    return decorate


def _resolve_hook(choose, typingctx, argtys):
    """The signature and code of a :func:`kind_hook` call with arguments of types ``argtys``."""
    fn = choose(kind_of_type(argtys[0]))
    if fn is None:

        def nothing(context, builder, sig, args):
            return context.get_dummy_value()

        return types.none(*argtys), nothing
    fnty = types.Dispatcher(fn)
    sig = typingctx.resolve_function_type(fnty, argtys, {})

    def call(context, builder, sig, args):
        return context.get_function(fnty, sig)(builder, args)

    return sig, call


def _rules():
    from . import rules  # (the rules' modules import this one)

    return rules


def rule_part(name: str):
    """The choice of a :func:`kind_hook` that calls part ``name`` of the kind's split rule
    (see :mod:`.rules`)::

        @kind_hook(rule_part("route_from"))
        def route_from(st, node, x):
            \"\"\"Node id of the leaf ``x`` reaches from ``node``.\"\"\"
    """
    return lambda kind: _rules().part(kind.rule, name)


def kind_of_type(ty) -> TreeKind:
    """The :class:`TreeKind` of a numba type that carries one (a tree reference, a tag or a
    kinded arena)."""
    kind = getattr(ty, "kind", None)
    return kind if kind is not None else ty.instance_class.kind.kind


__all__ = [
    "KindTag",
    "KindTagType",
    "TreeKind",
    "kind_hook",
    "kind_of",
    "kind_of_type",
    "rule_part",
]
