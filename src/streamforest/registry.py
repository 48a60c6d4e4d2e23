"""The models by name, for the command line and the benchmarks.

Each :class:`ModelSpec` names a model (``--model NAME`` of ``streamforest run``), the estimator
class it builds, a one-line description, its task, constructor values it fixes (``qrf-hdi`` is
OnlineQRF with ``interval="hdi"``) and its *layers*: the objects a ``--param KEY=VALUE`` can reach.
An interval method has three (the method, its forest, the forest's tree template), a forest two,
a tree one, and an adaptive wrapper (``adaptive-*``: :class:`AdaptiveConformal` over an interval
method) four; a key goes to the first layer whose constructor takes it.  A forest without a tree
template (:class:`AMFRegressor`, :class:`SGBTRegressor`: any forest of the forest interface,
:mod:`streamforest.engine.forest_interface`) is the last layer of its entry: ``("method",
"forest")`` is NormalizedConformal over AMF (``normalized-cp-amf``).  Adding a model is adding one
entry to :data:`MODELS`.

>>> from streamforest import registry
>>> m = registry.build("cp-exact", {"calibration_size": 50, "n_trees": 4, "leaf_model": "mean"})
>>> m.calibration_size, m.forest.n_trees, m.forest.tree.leaf_model
(50, 4, 'mean')
>>> registry.get("cqr").name
'conformal-qrf'
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .boosting import SGBTRegressor
from .forests import ABORFRegressor, ATSEREnsembleRegressor, OnlineForestRegressor
from .intervals import (
    AdaptiveConformal,
    ConformalQRF,
    CPApproximate,
    CPExact,
    GaussianInterval,
    NormalizedConformal,
    OnlineQRF,
)
from .mondrian import AMFRegressor
from .prediction_sets import AdaptiveConformalClassifier, ConformalClassifier
from .trees import ATSERRegressor, HoeffdingTreeRegressor

LAYERS = ("adaptive", "method", "forest", "tree")
#: The layers of a classification entry: an adaptive wrapper (AdaptiveConformalClassifier), a
#: prediction-set method (ConformalClassifier), the classifier.
SET_LAYERS = ("adaptive", "sets", "classifier")
# constructor argument holding the next layer, if not its name
_INNER_ARG = {"adaptive": "model", "sets": "model"}
_OUTER = ("method", "sets", "classifier")  # layers always built, seeded by the caller's seed


def resolve(ref):
    """The class ``ref`` names: a class itself, or ``"module:Name"`` imported now (an entry
    whose class another part of the library provides, e.g. ``"streamforest:ACTSERClassifier"``).
    ``TypeError`` naming it if it is not there."""
    if not isinstance(ref, str):
        return ref
    import importlib

    module, _, name = ref.partition(":")
    cls = getattr(importlib.import_module(module), name, None)
    if not isinstance(cls, type):
        raise TypeError(f"{module}.{name} is not in this build of streamforest")
    return cls


#: Parameters the builder sets whatever the layer's own default (``seed`` and ``n_jobs`` come from
#: the caller, e.g. ``--seed`` and ``--jobs``); a ``--param`` still overrides them.
FOREST_DEFAULTS = MappingProxyType({"n_trees": 10})


@dataclass(frozen=True)
class ModelSpec:
    """One model of the registry.

    Attributes
    ----------
    name
        Name on the command line (``--model``).
    cls
        The estimator class :meth:`build` returns an instance of, or its ``"module:Name"``
        (imported when first needed; :attr:`available` says whether it is there).
    description
        One line for ``streamforest list``.
    task
        ``"regression"`` or ``"classification"``.
    layers
        The objects ``--param`` keys are routed to, outermost first: ``("method", "forest",
        "tree")`` for a meta-algorithm over a forest (``cls`` takes ``forest=``), ``("forest",
        "tree")`` for a forest (``cls`` takes ``tree=``), ``("tree",)`` for a single tree, and
        ``("adaptive", "method", "forest", "tree")`` for a wrapper over a meta-algorithm (``cls``
        takes ``model=``, an instance of ``method_cls``); an entry whose forest has no tree
        template ends at ``"forest"`` (``("method", "forest")``).
    fixed
        Constructor values of ``cls`` this entry sets (a ``--param`` overrides them).
    aliases
        Other names accepted for it.
    forest_cls, tree_cls
        Classes of the forest and tree layers.
    method_cls
        Class of the method layer when it is not the outermost (a wrapper's model).
    sets_cls, classifier_cls
        Classification: the prediction-set method (``sets`` layer) and the classifier
        (``classifier`` layer; a class or ``"module:Name"``) when they are not the outermost.
        Classification entries have layers ``("classifier",)``, ``("sets", "classifier")`` or
        ``("adaptive", "sets", "classifier")``.
    inner_fixed
        Constructor values of the innermost layer this entry sets when it is not the outermost
        (``conformal-actser-seeds``: ``mode="seeds"`` on its classifier).
    """

    name: str
    cls: type | str
    description: str
    task: str = "regression"
    layers: tuple[str, ...] = LAYERS[1:]
    fixed: Mapping = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    forest_cls: type = OnlineForestRegressor
    tree_cls: type = HoeffdingTreeRegressor
    method_cls: type | None = None
    sets_cls: type | None = None
    classifier_cls: type | str | None = None
    inner_fixed: Mapping = field(default_factory=dict)

    def __post_init__(self):
        suffixes = [t[i:] for t in (LAYERS, SET_LAYERS) for i in range(len(t))]
        suffixes += [s[:-1] for s in suffixes if s[-2:] == ("forest", "tree")]  # no template
        if self.layers not in suffixes:
            raise ValueError(
                f"layers must be a suffix of {LAYERS} or {SET_LAYERS} (a forest without a tree "
                f"layer may end it), got {self.layers!r}"
            )
        if self.layers[0] == "adaptive" and (
            self.method_cls is None if "method" in self.layers else self.sets_cls is None
        ):
            raise ValueError(
                "a wrapper entry (layers starting with 'adaptive') needs method_cls (sets_cls "
                "for classification)"
            )
        if "classifier" in self.layers[1:] and self.classifier_cls is None:
            raise ValueError("an entry over a classifier needs classifier_cls")

    @property
    def available(self) -> bool:
        """Whether every class of the entry is in this build (a ``"module:Name"`` class may be
        missing)."""
        try:
            for layer in self.layers:
                self.layer_cls(layer)
        except (TypeError, ImportError):
            return False
        return True

    # ---------------------------------------------------------------------------------------------
    def layer_cls(self, layer: str) -> type:
        """The class of ``layer`` (``"method"``, ``"forest"`` or ``"tree"``)."""
        if layer == self.layers[0]:
            return resolve(self.cls)
        if layer == "method":
            return self.method_cls
        if layer == "sets":
            return self.sets_cls
        if layer == "classifier":
            return resolve(self.classifier_cls)
        return self.forest_cls if layer == "forest" else self.tree_cls

    def _inner(self, layer: str) -> str | None:
        """Constructor argument of ``layer`` that holds the next layer (``model``, ``forest``,
        ``tree``)."""
        i = self.layers.index(layer)
        if i + 1 >= len(self.layers):
            return None
        return _INNER_ARG.get(layer, self.layers[i + 1])

    def parameters(self) -> dict[str, dict[str, object]]:
        """``{layer: {parameter: default}}``: the keys ``--param`` can set on each layer, with the
        defaults this entry builds with (the class signature's, then :data:`FOREST_DEFAULTS` and
        ``fixed``).  A key listed under several layers goes to the first."""
        out: dict[str, dict[str, object]] = {}
        for layer in self.layers:
            sig = inspect.signature(self.layer_cls(layer).__init__)
            inner = self._inner(layer)
            d = {
                k: (None if p.default is inspect.Parameter.empty else p.default)
                for k, p in sig.parameters.items()
                if k != "self" and k != inner and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            }
            if layer == "forest":
                d.update({k: v for k, v in FOREST_DEFAULTS.items() if k in d})
            if layer == self.layers[0]:
                d.update({k: v for k, v in self.fixed.items() if k in d})
            elif layer == self.layers[-1]:
                d.update({k: v for k, v in self.inner_fixed.items() if k in d})
            out[layer] = d
        return out

    def param_names(self) -> set[str]:
        """Every key ``--param`` accepts for this model."""
        return {k for d in self.parameters().values() for k in d}

    def route(self, params: Mapping) -> dict[str, dict]:
        """``{layer: kwargs}``: each parameter given to the first layer that takes it.  Raises
        ``ValueError`` naming any parameter no layer takes."""
        rest = dict(params)
        out = {}
        for layer, names in self.parameters().items():
            out[layer] = {k: rest.pop(k) for k in list(rest) if k in names}
        if rest:
            raise ValueError(
                f"model {self.name!r} has no parameter {', '.join(map(repr, rest))} "
                f"(see 'streamforest list' and the model's docstring)"
            )
        return out

    def build(self, params: Mapping | None = None, seed: int | None = None, n_jobs: int = 1):
        """A fresh estimator: ``params`` routed to the layers (see :meth:`route`).  ``seed`` seeds
        the method (or outermost) layer and the forest, ``n_jobs`` is the forest's; a parameter
        overrides them, and ``fixed`` and :data:`FOREST_DEFAULTS`."""
        kw = self.route(params or {})
        obj = None
        for layer in reversed(self.layers):
            args = dict(kw[layer])
            inner = self._inner(layer)
            if inner is not None and obj is not None:
                args[inner] = obj
            takes = inspect.signature(self.layer_cls(layer).__init__).parameters
            if layer == "forest":  # (the defaults the forest's class takes)
                given = {**FOREST_DEFAULTS, "seed": seed, "n_jobs": n_jobs}
                args = {**{k: v for k, v in given.items() if k in takes}, **args}
            if (layer == self.layers[0] or layer in _OUTER) and "seed" in takes:
                args = {"seed": seed, **args}
            if layer == self.layers[0]:
                if len(self.layers) == 1 and "n_jobs" in takes:
                    args = {"n_jobs": n_jobs, **args}  # an ensemble in one layer
                args = {**self.fixed, **args}
            elif layer == self.layers[-1]:
                args = {**self.inner_fixed, **args}
            keep = layer == self.layers[0] or layer in _OUTER  # a wrapper's model: always built
            obj = self.layer_cls(layer)(**args) if args or keep else None
        return obj


#: The models, in the order ``streamforest list`` shows them (:data:`DEFAULT`: the default).
MODELS: dict[str, ModelSpec] = {
    m.name: m
    for m in (
        ModelSpec(
            "qrf",
            OnlineQRF,
            "OnlineQRF: KLL sketches in the leaves, equal-tailed quantile intervals",
        ),
        ModelSpec(
            "qrf-hdi",
            OnlineQRF,
            "OnlineQRF with highest-density (shortest) intervals, HDI-Forest",
            fixed={"interval": "hdi"},
        ),
        ModelSpec(
            "normalized-cp",
            NormalizedConformal,
            "NormalizedConformal: prequential conformal scores around a boosted centre, "
            "over a residual forest's spread",
        ),
        ModelSpec(
            "cp-approx",
            CPApproximate,
            "CPApproximate: conformal intervals from a FIFO out-of-bag calibration set",
        ),
        ModelSpec(
            "cp-exact",
            CPExact,
            "CPExact: as cp-approx, calibration scores kept exact as the trees change",
        ),
        ModelSpec(
            "conformal-qrf",
            ConformalQRF,
            "ConformalQRF: OnlineQRF bounds calibrated by out-of-bag conformal scores",
            aliases=("cqr",),
        ),
        ModelSpec(
            "gaussian",
            GaussianInterval,
            "GaussianInterval: mean +- z sd, the trees' predictive variance scaled to the errors",
        ),
        *(
            ModelSpec(
                f"adaptive-{name}",
                AdaptiveConformal,
                f"AdaptiveConformal over {name} (and its parameters): ACI, or --param method=pid",
                layers=LAYERS,
                method_cls=base,
                aliases=aliases,
            )
            for name, base, aliases in (
                ("qrf", OnlineQRF, ()),
                ("normalized-cp", NormalizedConformal, ()),
                ("cp-approx", CPApproximate, ()),
                ("cp-exact", CPExact, ()),
                ("conformal-qrf", ConformalQRF, ("adaptive-cqr",)),
                ("gaussian", GaussianInterval, ()),
            )
        ),
        ModelSpec(
            "forest",
            OnlineForestRegressor,
            "OnlineForestRegressor: point predictions only",
            layers=("forest", "tree"),
        ),
        ModelSpec(
            "tree",
            HoeffdingTreeRegressor,
            "HoeffdingTreeRegressor: a single tree, point predictions only",
            layers=("tree",),
        ),
        *(
            ModelSpec(
                f"atser-{mode}",
                ATSEREnsembleRegressor,
                f"ATSEREnsembleRegressor(mode={mode!r}): ATSER-{label} (thesis ch. 4), 10 trees",
                layers=("tree",),
                fixed={"mode": mode},
                tree_cls=ATSEREnsembleRegressor,
            )
            for mode, label in (("seeds", "Seeds"), ("obag", "OBag"), ("rforest", "RForest"))
        ),
        ModelSpec(
            "atser",
            ATSERRegressor,
            "ATSERRegressor: one extremely randomised tree, RMSProp linear leaves (thesis ch. 4)",
            layers=("tree",),
            tree_cls=ATSERRegressor,
        ),
        ModelSpec(
            "aborf",
            ABORFRegressor,
            "ABORFRegressor: pre-grown random-projection trees, evidence weights (thesis ch. 6)",
            layers=("tree",),
            tree_cls=ABORFRegressor,
        ),
        ModelSpec(
            "sgbt",
            SGBTRegressor,
            "SGBTRegressor: streaming gradient-boosted trees (Gunasekara et al. 2024), 200 steps",
            layers=("tree",),
            tree_cls=SGBTRegressor,
        ),
        ModelSpec(
            "amf",
            AMFRegressor,
            "AMFRegressor: aggregated Mondrian forest (Mourtada et al. 2021), 10 trees",
            layers=("tree",),
        ),
        # interval methods over the forests without a tree template: those whose needs their
        # capabilities meet in both APIs (see streamforest.engine.forest_interface)
        *(
            entry
            for forest, forest_cls in (("amf", AMFRegressor), ("sgbt", SGBTRegressor))
            for entry in (
                ModelSpec(
                    f"normalized-cp-{forest}",
                    NormalizedConformal,
                    f"NormalizedConformal over {forest} (its forest's parameters: {forest}'s)",
                    layers=("method", "forest"),
                    forest_cls=forest_cls,
                ),
                ModelSpec(
                    f"adaptive-normalized-cp-{forest}",
                    AdaptiveConformal,
                    f"AdaptiveConformal over normalized-cp-{forest}: ACI, or --param method=pid",
                    layers=("adaptive", "method", "forest"),
                    method_cls=NormalizedConformal,
                    forest_cls=forest_cls,
                ),
            )
        ),
    )
}

#: Classifiers: classes other parts of the library provide, imported by name when first used.
CLASSIFIERS = {
    "actser": ("streamforest:ACTSERClassifier", {}, "ACTSERClassifier: one ACTSER tree "
               "(thesis ch. 5), information gain, adaptive naive Bayes leaves"),
    "actser-seeds": ("streamforest:ACTSEREnsembleClassifier", {"mode": "seeds"},
                     "ACTSEREnsembleClassifier(mode='seeds'): ACTSER-Seeds, 25 trees"),
    "actser-rforest": ("streamforest:ACTSEREnsembleClassifier", {"mode": "rforest"},
                       "ACTSEREnsembleClassifier(mode='rforest'): ACTSER-RForest, 25 trees"),
    "ht-classifier": ("streamforest:HoeffdingTreeClassifier", {}, "HoeffdingTreeClassifier: "
                      "VFDT-style tree, information gain, naive Bayes adaptive leaves"),
    "amf-classifier": ("streamforest:AMFClassifier", {}, "AMFClassifier: aggregated Mondrian "
                       "forest (Mourtada et al. 2021), 10 trees"),
}  # fmt: skip
MODELS.update(
    {
        m.name: m
        for name, (ref, fixed, text) in CLASSIFIERS.items()
        for m in (
            ModelSpec(name, ref, text, task="classification", layers=("classifier",),
                      fixed=fixed),
            ModelSpec(f"conformal-{name}", ConformalClassifier,
                      f"ConformalClassifier over {name}: prediction sets (LAC/APS/RAPS scores)",
                      task="classification", layers=SET_LAYERS[1:], classifier_cls=ref,
                      inner_fixed=fixed),
            ModelSpec(f"adaptive-conformal-{name}", AdaptiveConformalClassifier,
                      f"AdaptiveConformalClassifier over conformal-{name}: ACI, or --param "
                      f"method=pid", task="classification", layers=SET_LAYERS,
                      sets_cls=ConformalClassifier, classifier_cls=ref, inner_fixed=fixed),
        )
    }
)  # fmt: skip

DEFAULT = "normalized-cp-sgbt"  # (issue 49: docs/benchmarks/defaults.md)


def _aliases() -> dict[str, str]:
    return {a: m.name for m in MODELS.values() for a in m.aliases}


def names(task: str | None = None, aliases: bool = False, available: bool = False) -> list[str]:
    """Model names (of ``task`` if given; only those whose classes are in this build if
    ``available``), with their aliases if ``aliases``."""
    out = [
        m.name
        for m in MODELS.values()
        if (task is None or m.task == task) and (not available or m.available)
    ]
    if aliases:
        out += [a for a, n in _aliases().items() if n in out]
    return out


def tasks() -> list[str]:
    """The tasks of the models, in registry order."""
    return list(dict.fromkeys(m.task for m in MODELS.values()))


def get(name: str) -> ModelSpec:
    """The entry named ``name`` (or one of its aliases)."""
    spec = MODELS.get(name) or MODELS.get(_aliases().get(name, ""))
    if spec is None:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(names(aliases=True))}")
    return spec


def default(task: str = "regression") -> str:
    """The default model of ``task``: the first entry of that task."""
    return DEFAULT if task == "regression" else names(task=task)[0]


def build(name: str, params: Mapping | None = None, seed: int | None = None, n_jobs: int = 1):
    """The model ``name`` with ``params`` routed to its layers (see :meth:`ModelSpec.build`)."""
    return get(name).build(params, seed=seed, n_jobs=n_jobs)


__all__ = [
    "AdaptiveConformalClassifier",
    "CLASSIFIERS",
    "ConformalClassifier",
    "DEFAULT",
    "LAYERS",
    "MODELS",
    "SET_LAYERS",
    "ModelSpec",
    "build",
    "default",
    "get",
    "names",
    "resolve",
    "tasks",
]
