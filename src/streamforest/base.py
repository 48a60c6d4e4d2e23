"""Conventions shared by every streamforest estimator.

- The constructor takes only hyper-parameters and stores them verbatim (scikit-learn and River
  style); :meth:`Estimator.get_params`, :meth:`Estimator.clone` and ``repr`` are built on that.
- Learnt state lives in attributes with a trailing underscore and is created on first learning.
- Hyper-parameters are validated when learning starts (so ``clone`` with new values is cheap);
  ``set_params`` on a model that has learnt validates the new values at once.
- A rejected call (``ValueError``/``TypeError``) leaves the model exactly as it was (the same
  pickle): every argument is validated before anything is recorded, and a model that has not
  learnt yet keeps the state a call creates only when it succeeds (predicting before learning
  creates none, so parameters set before learning starts always apply).
- scikit-learn: ``get_params(deep=...)``/``set_params`` (nested ``forest__n_trees`` keys), ``fit``
  (forget, then learn), ``partial_fit`` (keep learning), ``score`` (R²) and regressor tags, so the
  estimators work with ``sklearn.base.clone``, pipelines and ``GridSearchCV``.
- Threads: every public call (:data:`streamforest.concurrency.LOCKED_CALLS`: learning,
  predicting, ``fit``, ``set_params``, ...) holds the model's own re-entrant lock, so a model is
  safe to share between threads (see :mod:`streamforest.concurrency`).  The lock lives in a slot
  (``_call_lock``), not in ``__dict__``: it is no learnt state, and is not pickled, saved or copied.
- One vocabulary (``n_trees``, ``n_members``, ``leaf_model``, ``alphas``, ``seed``); River's and
  scikit-learn's names for the same parameters (:data:`ALIASES`) are accepted by the constructor
  and ``set_params`` with a ``FutureWarning`` naming streamforest's, until the next release.
"""

from __future__ import annotations

import copy
import functools
import inspect
import numbers
import warnings
from typing import Any

import numpy as np

from .concurrency import LOCKED_CALLS, locked
from .features import check_targets, check_weights

# Other libraries' names for streamforest's parameters: an alias maps to the first of its
# targets that the estimator has (and only when the estimator has no parameter of that name:
# the classification trees' own ``leaf_prediction`` stays theirs).  Accepted with a
# FutureWarning until the next release; the documentation's vocabulary table is the same mapping.
ALIASES: dict[str, tuple[str, ...]] = {
    "n_models": ("n_trees", "n_members"),  # River's ensembles
    "n_estimators": ("n_trees", "n_members"),  # scikit-learn's forests
    "leaf_prediction": ("leaf_model",),  # River's regression trees
    "random_state": ("seed",),  # scikit-learn
    "alpha": ("alphas",),  # the levels a model tracks: one alpha is a tuple of one
}


def _alias_target(names, alias: str) -> str | None:
    if alias in names:
        return None
    return next((t for t in ALIASES.get(alias, ()) if t in names), None)


def _resolve_aliases(cls, params: dict, warn: bool = True, stacklevel: int = 3) -> dict:
    """``params`` with other libraries' names replaced by streamforest's (a ``FutureWarning``
    for each); a name given both ways is a ``TypeError``."""
    if not params.keys() & ALIASES.keys():
        return params
    names = cls._param_names()
    out = dict(params)
    for alias in [k for k in params if k in ALIASES]:
        target = _alias_target(names, alias)
        if target is None:
            continue
        if target in out:
            raise TypeError(
                f"{cls.__name__} got both {target}= and its alias {alias}=: pass {target} only"
            )
        value = out.pop(alias)
        if alias == "alpha" and isinstance(value, numbers.Real):
            value = (value,)
        out[target] = value
        if warn:
            warnings.warn(
                f"{cls.__name__}: {alias}= is another library's name for streamforest's "
                f"{target}=; use {target} (the alias is accepted until the next release)",
                FutureWarning,
                stacklevel=stacklevel,
            )
    return out


class Estimator:
    """Base class: parameter introspection, cloning, repr and the scikit-learn estimator API
    (``get_params``/``set_params``, ``fit``/``partial_fit``/``score``, tags) and the lock of
    its public calls (see the module docstring)."""

    # the lock of the public calls (streamforest.concurrency.lock_of), made on first use
    __slots__ = ("_call_lock", "__dict__", "__weakref__")

    def __getstate__(self):
        """The state to pickle, copy or save: ``__dict__`` (the lock, a slot, is not state)."""
        return self.__dict__

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in LOCKED_CALLS.intersection(cls.__dict__):  # public calls hold the lock
            if inspect.isfunction(cls.__dict__[name]):
                setattr(cls, name, locked(cls.__dict__[name]))
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_accepts_aliases", False):
            return

        @functools.wraps(init)
        def __init__(self, *args, **params):
            if params.keys() & ALIASES.keys():
                params = _resolve_aliases(type(self), params, stacklevel=3)
            init(self, *args, **params)

        __init__._accepts_aliases = True
        cls.__init__ = __init__

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyper-parameters as passed to the constructor.

        With ``deep`` (scikit-learn semantics), the parameters of estimator-valued parameters
        follow too, as ``<param>__<sub-param>`` keys (e.g. ``forest__n_trees``).
        """
        out: dict[str, Any] = {}
        for name in self._param_names():
            v = getattr(self, name)
            out[name] = v
            if deep and hasattr(v, "get_params") and not isinstance(v, type):
                for k, sub in v.get_params(deep=True).items():
                    out[f"{name}__{k}"] = sub
        return out

    def set_params(self, **params) -> Estimator:
        """Set hyper-parameters (scikit-learn semantics; ``<param>__<sub-param>`` keys set a
        parameter of an estimator-valued parameter, in place).  Returns ``self``.

        Raises ``ValueError`` for a name that is not a parameter, before setting anything.  It
        does not reset learnt state.  Values are validated when learning starts: like the
        constructor, a model that has not learnt takes any value; a model that has (it holds
        learnt state) checks the new values at once and raises ``ValueError`` / ``TypeError``
        for an invalid one, keeping its parameters as they were (a value would otherwise fail
        later, in whatever call first reads it).
        """
        if not params:
            return self
        params = _resolve_aliases(type(self), params)
        self._check_param_names(params)
        nested: dict[str, dict[str, Any]] = {}
        direct: dict[str, Any] = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                direct[name] = value
        old = {name: getattr(self, name) for name in direct}
        for name, value in direct.items():
            setattr(self, name, value)
        if direct and self._holds_state():
            try:
                self._check_params()
            except Exception:
                for name, value in old.items():
                    setattr(self, name, value)
                raise
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def _holds_state(self) -> bool:
        """Whether the model has learnt (holds attributes besides its parameters and those
        scikit-learn sets: the state a first learning call creates)."""
        return not set(self.__dict__) <= {*self._param_names(), *self._SKLEARN_ATTRS}

    def _check_params(self) -> None:
        """Raise ``ValueError`` / ``TypeError`` for an invalid hyper-parameter value (a model's
        own checks; called when learning starts)."""

    def _check_param_names(self, params) -> None:
        """Raise ``ValueError`` unless every key of ``params`` names a parameter (nested keys
        after the estimator-valued parameter they reach, as set by ``params`` itself)."""
        names = self._param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key in params:
            name, delim, sub = key.partition("__")
            if name not in names:
                raise ValueError(
                    f"invalid parameter {name!r} for estimator {type(self).__name__}; "
                    f"valid parameters are: {sorted(names)}"
                )
            if delim:
                nested.setdefault(name, {})[sub] = params[key]
        for name, sub_params in nested.items():
            inner = params.get(name, getattr(self, name))
            if not hasattr(inner, "set_params") or isinstance(inner, type):
                raise ValueError(
                    f"cannot set {sorted(name + '__' + k for k in sub_params)} on "
                    f"{type(self).__name__}: {name} is {inner!r}, not an estimator "
                    f"(pass {name}=<estimator> first)"
                )
            if isinstance(inner, Estimator):
                inner._check_param_names(_resolve_aliases(type(inner), sub_params, warn=False))

    def clone(self, **new_params) -> Estimator:
        """A fresh, untrained estimator with the same hyper-parameters (overridden by
        ``new_params``); estimator-valued parameters are cloned too."""
        params = {}
        for k, v in self.get_params(deep=False).items():
            params[k] = v.clone() if isinstance(v, Estimator) else copy.deepcopy(v)
        unknown = set(new_params) - set(params)
        if unknown:
            raise TypeError(f"unknown parameter(s) for {type(self).__name__}: {sorted(unknown)}")
        params.update(new_params)
        return type(self)(**params)

    # --- scikit-learn estimator API --------------------------------------------------------------
    _estimator_type = "regressor"  # scikit-learn < 1.6

    # attributes scikit-learn's meta-estimators and helpers set on an estimator (callbacks,
    # metadata routing, output configuration): not learnt state, ``fit`` keeps them
    _SKLEARN_ATTRS = (
        "_parent_callback_ctx",
        "_skl_callbacks",
        "_metadata_request",
        "_sklearn_output_config",
    )

    def _adopt(self, other: Estimator) -> None:
        """Become ``other`` (a model built from this one's parameters): its state replaces this
        one's, but attributes scikit-learn set on this object are kept."""
        keep = {k: v for k, v in self.__dict__.items() if k in self._SKLEARN_ATTRS}
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)
        self.__dict__.update(keep)

    def fit(self, X, y, sample_weight=None) -> Estimator:
        """scikit-learn ``fit``: forget any learnt state, then learn the rows of ``X`` in order
        (:meth:`learn_many`).  Returns ``self``.

        ``X`` is a 2-d array-like or a DataFrame (NaN = missing); it needs at least one row and
        one column.  Sparse matrices and complex values are refused.  The new model is learnt
        apart and replaces the old one only when learning succeeded, so a rejected ``fit``
        keeps what was learnt (the parameter objects themselves are kept, as scikit-learn's
        ``fit`` does).
        """
        X, y, w = _check_fit_input(self, X, y, sample_weight, fit=True)
        fresh = type(self)(**self.get_params(deep=False))
        fresh.learn_many(X, y, w)
        self._adopt(fresh)
        return self

    # --- state created on first use ----------------------------------------------------------
    def _create_state(self) -> None:
        """Create the learnt state (a subclass's lazy initialisation)."""

    def _first_call(self, fn, *args, keep: bool = True, **kwargs):
        """``fn(self, *args, **kwargs)`` for a model that has no learnt state yet: the state is
        created first and dropped again if the call raises (a rejected call changes nothing)
        or, when not ``keep`` (predictions), in any case: a model that has not learnt holds no
        state, so parameters set later still apply when it starts learning."""
        keys = set(self.__dict__)
        try:
            self._create_state()
            out = fn(self, *args, **kwargs)
        except BaseException:
            self._drop_new_state(keys)
            raise
        if not keep:
            self._drop_new_state(keys)
        return out

    def _drop_new_state(self, keys) -> None:
        for k in [k for k in self.__dict__ if k not in keys]:
            del self.__dict__[k]

    def partial_fit(self, X, y, sample_weight=None) -> Estimator:
        """scikit-learn ``partial_fit``: keep learning from the rows of ``X``
        (:meth:`learn_many`; an empty batch is a no-op).  Returns ``self``."""
        X, y, w = _check_fit_input(self, X, y, sample_weight, fit=False)
        self.learn_many(X, y, w)
        return self

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R² of :meth:`predict` on ``(X, y)`` (as
        ``sklearn.metrics.r2_score``: 1.0 for a perfect fit of a constant target, 0.0 for an
        imperfect one)."""
        yp = np.asarray(self.predict(X), dtype=np.float64).reshape(-1)
        n = yp.shape[0]
        if n == 0:
            raise ValueError("X has no rows: R² needs at least one")
        if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:  # a column vector
            y = np.asarray(y)[:, 0]
        yt = check_targets(y, n)
        w = check_weights(sample_weight, n)
        if not w.sum() > 0:
            raise ValueError("sample weights w are all zero: R² needs a positive total weight")
        num = float(np.sum(w * (yt - yp) ** 2))
        mean = float(np.sum(w * yt) / np.sum(w))
        den = float(np.sum(w * (yt - mean) ** 2))
        if den == 0.0:
            return 1.0 if num == 0.0 else 0.0
        return 1.0 - num / den

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        return Tags(
            estimator_type="regressor",
            target_tags=TargetTags(required=True),
            regressor_tags=RegressorTags(),
            input_tags=InputTags(allow_nan=True),
            # predicting before learning is allowed (the featureless prediction, River style)
            requires_fit=False,
            non_deterministic=self._random_without_seed(),
        )

    def _random_without_seed(self) -> bool:
        """Whether learning draws from an unseeded generator (``seed=None`` with bagging or
        feature subsampling), so two fits on the same data differ."""
        p = self.get_params(deep=False)
        if p.get("seed", 0) is not None:
            return False
        return "n_trees" in p or "forest" in p or p.get("max_features") is not None

    def _more_tags(self) -> dict:  # scikit-learn < 1.6
        return {
            "allow_nan": True,
            "requires_y": True,
            "requires_fit": False,
            "non_deterministic": self._random_without_seed(),
        }

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name, p in sig.parameters.items():
            if name == "self":
                continue
            v = getattr(self, name)
            if p.default is inspect.Parameter.empty or not _same(v, p.default):
                parts.append(f"{name}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"


for _name in LOCKED_CALLS.intersection(vars(Estimator)):  # the base's own public calls
    setattr(Estimator, _name, locked(vars(Estimator)[_name]))
del _name


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


_SCALARS = (str, bytes, numbers.Number, np.generic, type(None))
_NONE = object()


def _is_dataframe(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _check_fit_input(est, X, y, sample_weight, fit: bool):
    """``(X, y, w)`` for ``learn_many`` from scikit-learn style arguments, with scikit-learn's
    error conventions (the models' own validation follows in ``learn_many``)."""
    name = type(est).__name__
    if type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(
            f"{name} does not support sparse input: pass a dense array (X.toarray()) instead"
        )
    if not _is_dataframe(X):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as e:  # ragged rows and the like
            raise TypeError(f"X must be a 2-d array (n_samples, n_features): {e}") from None
        if np.iscomplexobj(X):
            raise ValueError("Complex data not supported in X")
        if X.dtype == object:
            bad = next((v for v in X.flat if not isinstance(v, _SCALARS)), _NONE)
            if bad is not _NONE:
                raise TypeError(
                    f"each value of X must be a string or a number (or None), got "
                    f"{type(bad).__name__} {bad!r} (argument must be a string or a number)"
                )
        if X.ndim != 2:
            raise ValueError(
                f"Expected a 2-d X (n_samples, n_features), got shape {X.shape}. Reshape your "
                "data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one sample."
            )
    if fit:
        if X.shape[0] < 1:
            raise ValueError(
                f"X: found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
                f"required by {name}."
            )
        if X.shape[1] < 1:
            raise ValueError(
                f"X: found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                f"required by {name}."
            )
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None")
    if hasattr(y, "iloc"):  # pandas: a one-column DataFrame is a column vector
        if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:
            _warn_column_vector()
            y = y.iloc[:, 0]
    else:
        try:
            y = np.asarray(y)
        except (TypeError, ValueError) as e:
            raise TypeError(f"y must be a 1-d array of numbers: {e}") from None
        if np.iscomplexobj(y):
            raise ValueError("Complex data not supported in y")
        if y.ndim == 2 and y.shape[1] == 1:
            _warn_column_vector()
            y = y.ravel()
    w = sample_weight
    if w is not None:
        try:
            w = np.asarray(w)
        except (TypeError, ValueError) as e:
            raise TypeError(f"sample_weight must be a 1-d array of numbers: {e}") from None
        if fit and w.size and np.issubdtype(w.dtype, np.number) and np.all(w == 0):
            raise ValueError("sample_weight is all zero: nothing to learn")
    return X, y, w


def _warn_column_vector() -> None:
    import warnings

    try:
        from sklearn.exceptions import DataConversionWarning as category
    except ImportError:  # scikit-learn is optional
        category = UserWarning
    warnings.warn(
        "A column-vector y was passed when a 1d array was expected; it is raveled to (n_samples,).",
        category,
        stacklevel=3,
    )
