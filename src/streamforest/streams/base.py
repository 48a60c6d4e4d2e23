"""What every stream offers: chunks of arrays, whole arrays, or River-style ``(dict, y)`` pairs.

A stream is a finite (``n``) or unbounded (``n is None``) sequence of examples.  It is read in
chunks, so memory stays bounded whatever its length.  Synthetic streams are generated in blocks of
:data:`BLOCK` rows, each from its own seeded generator (``numpy.random.default_rng([seed, b])``):
the rows do not depend on the chunk size asked for, the same seed gives the same stream, and a
stationary stream of length ``n`` is the first ``n`` rows of a longer one with the same seed.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterator

import numpy as np

BLOCK = 65_536  # rows per generated block (part of a synthetic stream's definition)


def check_n(n, allow_none: bool = False) -> int | None:
    if n is None and allow_none:
        return None
    if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and n > 0):
        raise ValueError(f"n must be a positive int, got {n!r}")
    return int(n)


def check_seed(seed) -> int:
    """An int seed; ``None`` draws one from the OS, fixed for the stream's lifetime."""
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if not (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    return int(seed)


class Stream:
    """Base class of streams.

    Subclasses set ``n`` (int, or ``None`` for unbounded), ``feature_names``, ``nominal``
    (names of nominal features, whose values in ``X`` are ``str``) and ``change_points`` (indices
    where the concept starts to change; empty if none), and implement :meth:`chunks`.
    """

    n: int | None
    feature_names: list
    nominal: tuple = ()
    change_points: list[int] = []

    def chunks(self, size: int = 10_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(X, y)`` chunks of at most ``size`` rows, in stream order."""
        raise NotImplementedError

    def arrays(self, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The first ``n`` examples (default: the whole stream) as ``(X, y)``."""
        if n is None:
            if self.n is None:
                raise ValueError("this stream is unbounded: say how many rows, arrays(n=...)")
            n = self.n
        n = check_n(n)
        parts = list(_rows(self.chunks(min(n, BLOCK)), n))
        if not parts:
            return np.empty((0, len(self.feature_names))), np.empty(0)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def __iter__(self) -> Iterator[tuple[dict, float]]:
        """River-style ``(x, y)`` pairs; ``x`` maps feature names to values."""
        names = self.feature_names
        for X, y in self.chunks():
            for row, t in zip(X.tolist(), y.tolist(), strict=True):
                yield dict(zip(names, row, strict=True)), t

    def take(self, k: int) -> Iterator[tuple[dict, float]]:
        """The first ``k`` examples as ``(x, y)`` pairs."""
        return itertools.islice(iter(self), check_n(k))

    def __len__(self) -> int:
        if self.n is None:
            raise TypeError("an unbounded stream has no length")
        return self.n


def _rows(chunks, n: int):
    """Chunks cut to the first ``n`` rows."""
    left = n
    for X, y in chunks:
        if left <= 0:
            return
        if len(y) > left:
            X, y = X[:left], y[:left]
        left -= len(y)
        yield X, y


class SyntheticStream(Stream):
    """A stream generated block by block; subclasses implement ``_block(rng, start, size)``."""

    def __init__(self, n: int | None, seed: int | None, unbounded_ok: bool = False):
        self.n = check_n(n, allow_none=unbounded_ok)
        self.seed = seed
        self._seed = check_seed(seed)

    def _block(self, rng: np.random.Generator, start: int, size: int):
        raise NotImplementedError

    def block(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``[b * BLOCK, (b + 1) * BLOCK)`` (cut at ``n``)."""
        start = b * BLOCK
        X, y = self._block(np.random.default_rng([self._seed, b]), start, BLOCK)
        if self.n is not None and self.n - start < BLOCK:  # whole blocks are drawn, then cut, so
            X, y = X[: self.n - start], y[: self.n - start]  # a shorter stream is a prefix
        return X, y

    def chunks(self, size: int = 10_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        size = check_n(size)
        pos, cached, Xb, yb = 0, -1, None, None
        while self.n is None or pos < self.n:
            end = pos + size if self.n is None else min(pos + size, self.n)
            xs, ys, p = [], [], pos
            while p < end:
                b = p // BLOCK
                if b != cached:
                    Xb, yb = self.block(b)
                    cached = b
                lo = p - b * BLOCK
                hi = min(end - b * BLOCK, len(yb))
                xs.append(Xb[lo:hi])
                ys.append(yb[lo:hi])
                p += hi - lo
            yield (xs[0], ys[0]) if len(xs) == 1 else (np.concatenate(xs), np.concatenate(ys))
            pos = end

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._describe().items())
        return f"{type(self).__name__}({params})"

    def _describe(self) -> dict:
        return {"n": self.n, "seed": self.seed}
