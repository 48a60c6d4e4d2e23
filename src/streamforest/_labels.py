"""The checks of class labels shared by the classifiers
(:mod:`streamforest.engine.classifier_model`) and the prediction sets
(:mod:`streamforest.prediction_sets`): a label is any hashable value but ``None`` and NaN; numpy
scalars become the Python value they equal."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping

import numpy as np


def _is_missing(y) -> bool:
    """Whether ``y`` is a missing value: None, a float NaN, or pandas' ``NA`` / ``NaT`` (which
    are hashable, but are no class: ``pd.NA == pd.NA`` is itself missing)."""
    if y is None or (isinstance(y, float) and math.isnan(y)):
        return True
    kind = type(y)
    return kind.__module__.split(".")[0] == "pandas" and kind.__name__ in ("NAType", "NaTType")


def check_label(y, name: str = "y"):
    """``y`` as a class label (see the module docstring)."""
    if isinstance(y, np.generic):
        y = y.item()
    if _is_missing(y):
        raise ValueError(f"{name} must be a class label, got {y!r} (a missing label)")
    if not isinstance(y, Hashable) or isinstance(y, np.ndarray):
        raise TypeError(f"{name} must be a hashable class label, got {type(y).__name__}")
    try:
        hash(y)
    except TypeError:
        raise TypeError(f"{name} must be a hashable class label, got {y!r}") from None
    return y


def check_labels(y, n: int, name: str = "y") -> list:
    """The labels of ``y`` (a 1-d array-like of ``n`` labels) as a list of Python values."""
    if y is None:
        raise ValueError(f"{name} is None: labels are needed to learn")
    if isinstance(y, (str, bytes, Mapping)):
        raise TypeError(f"{name} must be a 1-d array-like of labels, got {type(y).__name__}")
    if hasattr(y, "to_numpy"):  # pandas
        y = y.to_numpy()
    if isinstance(y, np.ndarray):
        if y.ndim != 1:
            raise ValueError(f"{name} must be 1-d, got shape {y.shape}")
        labels = y.tolist()
    else:
        try:
            labels = list(y)
        except TypeError:
            raise TypeError(f"{name} must be a 1-d array-like of labels, got {y!r}") from None
    if len(labels) != n:
        raise ValueError(f"{name} has {len(labels)} labels for {n} rows of X")
    return [check_label(v, name) for v in labels]


def label_array(classes) -> np.ndarray:
    """The labels ``classes`` as an array to index by class number: of the labels' numpy type
    when they are all ``int``, ``float``, ``str`` or all ``bool``, else of objects.  Every
    classifier's ``predict`` returns labels picked from this array, so wrappers and models give
    the same dtype."""
    kinds = {type(c) for c in classes}
    if len(kinds) == 1 and kinds <= {int, float, str, bool}:
        return np.asarray(list(classes))
    arr = np.empty(len(classes), dtype=object)
    arr[:] = list(classes)
    return arr


def accuracy(pred: np.ndarray, y, sample_weight=None) -> float:
    """Weighted accuracy of the predicted labels ``pred`` (what ``predict`` returned) against
    ``y``: the ``score`` of every classifier and prediction-set wrapper.  ``y`` may be a column
    ``(n, 1)``; labels compare as Python values (``pred.tolist()``: a numpy scalar compared with
    a tuple label would broadcast)."""
    from .features import check_weights

    n = pred.shape[0]
    if n == 0:
        raise ValueError("X has no rows: accuracy needs at least one")
    if getattr(y, "ndim", 1) == 2 and y.shape[1] == 1:
        y = np.asarray(y)[:, 0]
    yt = check_labels(y, n)
    w = check_weights(sample_weight, n)
    if not w.sum() > 0:
        raise ValueError("sample weights are all zero: accuracy needs a positive total weight")
    hit = np.array([a == b for a, b in zip(pred.tolist(), yt, strict=True)], dtype=np.float64)
    return float(np.sum(w * hit) / np.sum(w))
