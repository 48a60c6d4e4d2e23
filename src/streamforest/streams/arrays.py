"""A stream over arrays already in memory."""

from __future__ import annotations

import numpy as np

from .base import Stream, check_n


class ArrayStream(Stream):
    """A stream over given arrays ``X`` (n, p) and ``y`` (n,)."""

    def __init__(self, X, y, feature_names=None):
        X = np.asarray(X)
        y = np.asarray(y)
        if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
            raise ValueError(f"X must be (n, p) and y (n,), got shapes {X.shape} and {y.shape}")
        self.X, self.y = X, y
        self.n = len(y)
        self.feature_names = list(feature_names or range(X.shape[1]))
        self.change_points = []

    def chunks(self, size: int = 10_000):
        for s in range(0, self.n, check_n(size)):
            yield self.X[s : s + size], self.y[s : s + size]

    def __repr__(self) -> str:
        return f"ArrayStream(n={self.n}, features={self.X.shape[1]})"


__all__ = ["ArrayStream"]
