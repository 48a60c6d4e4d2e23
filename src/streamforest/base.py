"""Conventions shared by every streamforest estimator.

- The constructor takes only hyper-parameters and stores them verbatim (scikit-learn and River
  style); :meth:`Estimator.get_params`, :meth:`Estimator.clone` and ``repr`` are built on that.
- Learnt state lives in attributes with a trailing underscore and is created on first learning.
- Hyper-parameters are validated when learning starts (so ``clone`` with new values is cheap).
"""

from __future__ import annotations

import copy
import inspect
from typing import Any


class Estimator:
    """Base class: parameter introspection, cloning and repr."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self) -> dict[str, Any]:
        """Hyper-parameters as passed to the constructor."""
        return {name: getattr(self, name) for name in self._param_names()}

    def clone(self, **new_params) -> Estimator:
        """A fresh, untrained estimator with the same hyper-parameters (overridden by
        ``new_params``); estimator-valued parameters are cloned too."""
        params = {}
        for k, v in self.get_params().items():
            params[k] = v.clone() if isinstance(v, Estimator) else copy.deepcopy(v)
        unknown = set(new_params) - set(params)
        if unknown:
            raise TypeError(f"unknown parameter(s) for {type(self).__name__}: {sorted(unknown)}")
        params.update(new_params)
        return type(self)(**params)

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


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False
