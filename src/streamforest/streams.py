"""Seeded synthetic streams.

:class:`Friedman` generates Friedman #1 (JMLR paper appendix A.2), stationary or with the paper's
three drifts; change points sit at the paper's fractions of the stream (1/4, 1/2, 3/4 of ``n``),
the gradual drift's transition lasts ``n / 10`` examples (100k of the paper's 1M).  Friedman #2
and #3 are not implemented yet (issue #4).
"""

from __future__ import annotations

import numpy as np


class Friedman:
    """Friedman #1 stream: ``X`` uniform on [0, 1]^10, ``y`` from the concept active at each index.

    Parameters
    ----------
    function
        1 (only Friedman #1 so far).
    drift
        ``None`` (stationary), ``"lea"`` (local expanding abrupt), ``"gra"`` (global recurring
        abrupt) or ``"gsg"`` (global slow gradual).
    n
        Length of the stream.
    seed
        Seed; the same seed gives the same stream.
    """

    def __init__(
        self,
        function: int = 1,
        drift: str | None = None,
        n: int = 1_000_000,
        seed: int | None = None,
    ):
        if function != 1:
            raise ValueError(f"only Friedman #1 is available so far, got function={function!r}")
        if drift not in (None, "lea", "gra", "gsg"):
            raise ValueError(f"drift must be None, 'lea', 'gra' or 'gsg', got {drift!r}")
        if not (isinstance(n, int) and n > 0):
            raise ValueError(f"n must be a positive int, got {n!r}")
        self.function, self.drift, self.n, self.seed = function, drift, n, seed

    @property
    def change_points(self) -> list[int]:
        n = self.n
        return {
            None: [],
            "lea": [n // 4, n // 2, 3 * n // 4],
            "gra": [n // 2, 3 * n // 4],
            "gsg": [n // 2, 3 * n // 4],
        }[self.drift]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole stream as ``(X, y)``."""
        rng = np.random.default_rng(self.seed)
        n = self.n
        X = rng.random((n, 10))
        noise = rng.standard_normal(n)
        idx = np.arange(n)
        x1, x2, x3, x4, x5 = (X[:, k] for k in range(5))
        base = 10 * np.sin(np.pi * x1 * x2) + 20 * (x3 - 0.5) ** 2 + 10 * x4 + 5 * x5
        y = base.copy()
        if self.drift == "gra":
            c1, c2 = self.change_points
            alt = 10 * np.sin(np.pi * x4 * x5) + 20 * (x2 - 0.5) ** 2 + 10 * x1 + 5 * x3
            sel = (idx >= c1) & (idx < c2)
            y[sel] = alt[sel]
        elif self.drift == "lea":
            c1, c2, c3 = self.change_points
            stage = (idx >= c1).astype(int) + (idx >= c2) + (idx >= c3)
            r1 = [(x2 < 0.3) & (x4 > 0.7) & (x5 < 0.3), (x2 < 0.3) & (x4 > 0.7), x2 < 0.3]
            r2 = [
                (x2 > 0.7) & (x3 > 0.7) & (x4 < 0.3) & (x5 > 0.7),
                (x2 > 0.7) & (x3 > 0.7) & (x4 < 0.3),
                (x2 > 0.7) & (x3 > 0.7),
            ]
            f1 = 10 * x1 * x2 + 20 * (x3 - 0.5) + 10 * x4 + 5 * x5
            f2 = 10 * np.cos(x1 * x2) + 20 * (x3 - 0.5) + np.exp(x4) + 5 * x5**2
            for s in (1, 2, 3):
                in_r1 = (stage == s) & r1[s - 1]
                in_r2 = (stage == s) & r2[s - 1] & ~in_r1
                y[in_r1] = f1[in_r1]
                y[in_r2] = f2[in_r2]
        elif self.drift == "gsg":
            c1, c2 = self.change_points
            width = max(1, n // 10)
            y3 = 10 * np.sin(np.pi * x4 * x5) + 20 * (x2 - 0.5) ** 2 + 10 * x1 + 5 * x3
            y4 = 10 * np.sin(np.pi * x2 * x5) + 20 * (x4 - 0.5) ** 2 + 10 * x3 + 5 * x1
            u = rng.random(n)
            p1 = np.clip((idx - c1) / width, 0, 1)
            p2 = np.clip((idx - c2) / width, 0, 1)
            y = np.where(u < p1, y3, base)
            y = np.where((idx >= c2) & (u < p2), y4, y)
        return X, y + noise

    def __iter__(self):
        X, y = self.arrays()
        for row, t in zip(X, y, strict=True):
            yield {f"x{k + 1}": float(v) for k, v in enumerate(row)}, float(t)
