"""Torgo's artificial regression domains: 2dplanes (Breiman et al. 1984) and mv."""

from __future__ import annotations

import numpy as np

from .base import SyntheticStream


class TwoDPlanes(SyntheticStream):
    """2dplanes: ``X1`` in {-1, 1}, ``X2..X10`` in {-1, 0, 1}, all equiprobable and independent;
    ``y = 3 + 3 X2 + 2 X3 + X4`` if ``X1 = 1``, else ``-3 + 3 X5 + 2 X6 + X7``, plus Gaussian noise
    of standard deviation ``noise``.  The definition writes the noise as ``sigma(0, 2)``; the
    published 2dplanes data (Torgo's, 40,768 rows) has a residual variance of 0.994 around this
    function, so the default is N(0, 1), matching the data.  Stationary; ``n=None`` makes it
    unbounded."""

    def __init__(self, n: int | None = 40_768, noise: float = 1.0, seed: int | None = None):
        if not (isinstance(noise, (int, float)) and 0 <= noise < np.inf):
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        super().__init__(n, seed, unbounded_ok=True)
        self.noise = float(noise)
        self.feature_names = [f"x{k + 1}" for k in range(10)]

    def _block(self, rng, start, size):
        X = rng.integers(-1, 2, size=(size, 10)).astype(float)
        X[:, 0] = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        noise = rng.standard_normal(size)
        return X, planes_target(X) + self.noise * noise


def planes_target(X: np.ndarray) -> np.ndarray:
    """2dplanes' noiseless target."""
    up = 3 + 3 * X[:, 1] + 2 * X[:, 2] + X[:, 3]
    down = -3 + 3 * X[:, 4] + 2 * X[:, 5] + X[:, 6]
    return np.where(X[:, 0] == 1, up, down)


MV_NAMES = ["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"]


class MV(SyntheticStream):
    """Torgo's mv domain: ten dependent features (three nominal: ``x3``, ``x7``, ``x8``, given as
    ``str`` in an object array) and a piecewise target, without noise:

    - ``x1`` ~ U[-5, 5], ``x2`` ~ U[-15, -10];
    - ``x3`` = "green" if ``x1 > 0``, else "red" (p 0.4) or "brown" (p 0.6);
    - ``x4`` = ``x1 + 2 x2`` if green, else ``x1 / 2`` (p 0.3) or ``x2 / 2`` (p 0.7);
    - ``x5`` ~ U[-1, 1]; ``x6`` = ``x4 * e``, ``e`` ~ U[0, 5];
    - ``x7`` = "yes" (p 0.3) or "no"; ``x8`` = "normal" if ``x5 < 0.5`` else "large";
    - ``x9`` ~ U[100, 500]; ``x10`` ~ U[1000, 1200];
    - ``y`` = ``35 - x4 / 2`` if ``x2 > 2`` (never: ``x2 < -10``, kept from the definition), else
      ``10 - 2 x1`` if ``-2 <= x4 <= 2``, else ``3 - x1 / x4`` if ``x7`` = "yes", else
      ``x6 + x1`` if ``x8`` = "normal", else ``x1 / 2``.

    Stationary; ``n=None`` makes it unbounded.
    """

    nominal = ("x3", "x7", "x8")

    def __init__(self, n: int | None = 40_768, seed: int | None = None):
        super().__init__(n, seed, unbounded_ok=True)
        self.feature_names = list(MV_NAMES)

    def _block(self, rng, start, size):
        u = rng.random((size, 8))
        x1 = -5 + 10 * u[:, 0]
        x2 = -15 + 5 * u[:, 1]
        green = x1 > 0
        x3 = np.where(green, "green", np.where(u[:, 2] < 0.4, "red", "brown"))
        x4 = np.where(green, x1 + 2 * x2, np.where(u[:, 3] < 0.3, x1 / 2, x2 / 2))
        x5 = -1 + 2 * u[:, 4]
        x6 = x4 * 5 * u[:, 5]
        x7 = np.where(u[:, 6] < 0.3, "yes", "no")
        x8 = np.where(x5 < 0.5, "normal", "large")
        x9 = 100 + 400 * u[:, 7]
        x10 = 1000 + 200 * rng.random(size)
        X = np.empty((size, 10), dtype=object)
        for j, col in enumerate((x1, x2, x3, x4, x5, x6, x7, x8, x9, x10)):
            X[:, j] = col.tolist()
        return X, mv_target(X)


def mv_target(X: np.ndarray) -> np.ndarray:
    """mv's target from its features (object array as :class:`MV` gives it)."""
    x1, x2, x4, x6 = (X[:, j].astype(float) for j in (0, 1, 3, 5))
    x7, x8 = X[:, 6], X[:, 7]
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.where(
            x2 > 2,
            35 - 0.5 * x4,
            np.where(
                (x4 >= -2) & (x4 <= 2),
                10 - 2 * x1,
                np.where(x7 == "yes", 3 - x1 / x4, np.where(x8 == "normal", x6 + x1, x1 / 2)),
            ),
        )
    return y
