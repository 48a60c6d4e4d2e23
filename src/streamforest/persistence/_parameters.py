"""Loading: an estimator's constructor parameters checked by the estimator's own rules before
the object is built from them.

A file holds each estimator's hyper-parameters as its ``__dict__`` does; a model checks them when
learning starts (``_check_params``), which a loaded model never does again.  So a file with
``gamma=-1`` or ``calibration_size=-1`` loaded and ran, and one whose ``AdaptiveConformal`` says
``log_size=2e8`` spent a minute and gigabytes building its served log before anything looked.
Here every estimator's parameters, as the file gives them (a parameter it lacks, in files
written before the parameter existed, takes the constructor's default, as the object's own
``__setstate__`` does), go through the class's ``_check_params`` on a bare instance that holds
nothing else, before the object's state is set; a refusal is a ``ValueError`` naming the
estimator's attribute path and the parameter (the message of the rule it broke).
"""

from __future__ import annotations

import functools
import inspect

__all__ = ["check_parameters"]

_NO_DEFAULT = object()


@functools.cache
def _signature(cls) -> tuple | None:
    """``((name, default or _NO_DEFAULT), ...)`` of ``cls``'s constructor, None if it is no
    estimator."""
    from ..base import Estimator

    if not (isinstance(cls, type) and issubclass(cls, Estimator)):
        return None
    if cls.__dict__.get("_check_params") is None and all(
        "_check_params" not in base.__dict__ for base in cls.__mro__[:-1] if base is not Estimator
    ):
        return None  # the base's check, which checks nothing
    params = inspect.signature(cls.__init__).parameters
    return tuple(
        (name, _NO_DEFAULT if p.default is inspect.Parameter.empty else p.default)
        for name, p in params.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )


def check_parameters(cls, state: dict, decoder) -> None:
    """Raise ``ValueError`` (``decoder.bad``: the file and the attribute path) unless the
    parameters in ``state`` (an estimator's ``__dict__`` from a file) pass ``cls``'s own
    checks."""
    sig = _signature(cls)
    if sig is None:
        return
    values = {}
    for name, default in sig:
        if name in state:
            values[name] = state[name]
        elif default is not _NO_DEFAULT:
            values[name] = default
        else:
            raise decoder.bad(f"{cls.__name__} without its parameter {name!r}")
    probe = cls.__new__(cls)
    probe.__dict__.update(values)
    try:
        probe._check_params()
    except Exception as e:  # noqa: BLE001 - any failure of the rules is a refusal
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise decoder.bad(f"{cls.__name__}'s parameters break its rules: {message}") from None
