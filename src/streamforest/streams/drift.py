"""Concept drift between two streams: MOA's sigmoid ``ConceptDriftStream``, composable."""

from __future__ import annotations

import numbers

import numpy as np

from .base import BLOCK, Stream, check_n, check_seed

_TAG = 0x44524946  # third entropy word of the choice draws: never equal to a stream's [seed, b]


def drift_probability(t, position: int, width: int) -> np.ndarray:
    """Probability that row ``t`` (counted from 0) comes from the new stream:
    ``1 / (1 + exp(-4 (t - position) / width))``; ``width == 1`` is an abrupt switch
    (0 before ``position``, 1 from it)."""
    t = np.asarray(t, dtype=float)
    if width == 1:
        return (t >= position).astype(float)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-4.0 * (t - position) / width))


def _exact(chunks, size):
    """The same rows in chunks of exactly ``size`` (the last one shorter)."""
    xs, ys, have = [], [], 0
    for X, y in chunks:
        xs.append(X)
        ys.append(y)
        have += len(y)
        while have >= size:
            X, y = np.concatenate(xs), np.concatenate(ys)
            yield X[:size], y[:size]
            xs, ys, have = [X[size:]], [y[size:]], have - size
    if have:
        yield np.concatenate(xs), np.concatenate(ys)


class ConceptDrift(Stream):
    """Rows of ``stream_a`` turning into rows of ``stream_b`` around ``position``.

    Row ``t`` (from 0) is row ``t`` of ``stream_b`` with probability
    ``1 / (1 + exp(-4 (t - position) / width))`` (MOA's ``ConceptDriftStream`` sigmoid: 0.5 at
    ``position``, 0.12 and 0.88 at ``position -/+ width / 2``), else row ``t`` of
    ``stream_a``.  ``width=1`` is abrupt: every row before ``position`` is from ``stream_a``, every
    row from it on is from ``stream_b``.  The choices are drawn from ``seed`` block by block like
    a synthetic stream's rows, so the result does not depend on chunk sizes either.

    Both components are read in step, row ``t`` of each at row ``t``, and the unchosen row is
    dropped: a time-dependent component (RandomRBF with moving centroids, the rotating
    Hyperplane, another drift) shows at row ``t`` its concept at time ``t``, and positions of
    nested drifts are all in the same (outer) time.  MOA and River advance a component only when
    they draw from it, and count rows from 1 (their position ``p`` is our ``p - 1``); with
    stationary components the two give the same distribution.  Give the components different
    seeds: with the same seed they share their feature rows.

    ``change_points``: ``stream_a``'s before ``position``, then ``position`` (the centre of
    a gradual drift), then ``stream_b``'s after it.

    Parameters
    ----------
    stream_a, stream_b
        Streams with the same ``feature_names``; ``stream_b`` may itself be a drift.
    position
        Row at which half the rows come from ``stream_b``.
    width
        Length of the transition (``>= 1``; 1 is abrupt).
    seed
        Seed of the choices.

    Examples
    --------
    >>> from streamforest.streams import SEA, ConceptDrift
    >>> s = ConceptDrift(SEA(function=1, n=3000, seed=1),
    ...                  ConceptDrift(SEA(function=2, n=3000, seed=2),
    ...                               SEA(function=3, n=3000, seed=3), position=2000, width=1),
    ...                  position=1000, width=200, seed=0)
    >>> s.change_points, len(s.arrays()[1])
    ([1000, 2000], 3000)
    """

    def __init__(
        self,
        stream_a: Stream,
        stream_b: Stream,
        position: int,
        width: int = 1,
        seed: int | None = None,
    ):
        for s in (stream_a, stream_b):
            if not isinstance(s, Stream):
                raise TypeError(f"stream_a and stream_b must be streams, got {type(s).__name__}")
        if list(stream_a.feature_names) != list(stream_b.feature_names):
            raise ValueError(
                "the two streams must have the same features, got "
                f"{stream_a.feature_names} and {stream_b.feature_names}"
            )
        if not (isinstance(position, numbers.Integral) and not isinstance(position, bool)
                and position >= 0):  # fmt: skip
            raise ValueError(f"position must be an int >= 0, got {position!r}")
        self.stream_a, self.stream_b = stream_a, stream_b
        self.position = int(position)
        self.width = check_n(width)
        self.seed = seed
        self._seed = check_seed(seed)
        ns = [s.n for s in (stream_a, stream_b) if s.n is not None]
        self.n = min(ns) if ns else None
        self.feature_names = list(stream_a.feature_names)
        self.nominal = tuple(dict.fromkeys((*stream_a.nominal, *stream_b.nominal)))

    @property
    def classes(self) -> list:
        """Labels of either stream (where they say)."""
        out = list(getattr(self.stream_a, "classes", []))
        return out + [c for c in getattr(self.stream_b, "classes", []) if c not in out]

    @property
    def change_points(self) -> list[int]:
        p = self.position
        before = [c for c in self.stream_a.change_points if c < p]
        after = [c for c in self.stream_b.change_points if c > p]
        return [c for c in [*before, p, *after] if self.n is None or c < self.n]

    def from_b(self, start: int, size: int) -> np.ndarray:
        """Which of rows ``start .. start + size - 1`` come from ``stream_b``."""
        out = np.empty(size, dtype=bool)
        pos = 0
        while pos < size:
            t = start + pos
            b = t // BLOCK
            lo = t - b * BLOCK
            m = min(BLOCK - lo, size - pos)
            if self.width == 1:
                out[pos : pos + m] = np.arange(t, t + m) >= self.position
            else:
                u = np.random.default_rng([self._seed, b, _TAG]).random(BLOCK)[lo : lo + m]
                out[pos : pos + m] = u < drift_probability(
                    np.arange(t, t + m), self.position, self.width
                )
            pos += m
        return out

    def chunks(self, size: int = 10_000):
        size = check_n(size)
        start = 0
        a = _exact(self.stream_a.chunks(size), size)
        b = _exact(self.stream_b.chunks(size), size)
        for (Xa, ya), (Xb, yb) in zip(a, b, strict=False):
            m = min(len(ya), len(yb))
            if self.n is not None:
                m = min(m, self.n - start)
            if m <= 0:
                return
            new = self.from_b(start, m)
            yield np.where(new[:, None], Xb[:m], Xa[:m]), np.where(new, yb[:m], ya[:m])
            start += m

    def __repr__(self) -> str:
        return (
            f"ConceptDrift({self.stream_a!r}, {self.stream_b!r}, position={self.position}, "
            f"width={self.width}, seed={self.seed!r})"
        )


__all__ = ["ConceptDrift", "drift_probability"]
