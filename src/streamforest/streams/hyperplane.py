"""Rotating-hyperplane regression stream (Seah 2021 thesis, section 4.4.1)."""

from __future__ import annotations

import numpy as np

from .base import SyntheticStream

# the thesis' weight vectors: w1 at the start, rotated incrementally to w2, w3, w4
WEIGHTS = np.array(
    [[1, 1, 1, 1, 1], [-1, 1, -1, 1, -1], [-1, -1, -1, -1, 1], [1, -1, 1, -1, 1]], dtype=float
)


def target_sd(w: np.ndarray) -> float:
    """Standard deviation of the noiseless target ``10 (sum (x_j - 1/2) w_j / |w|)^2`` for ``x``
    uniform on [0, 1]^D: with ``a = w / |w|`` and ``S = sum (x_j - 1/2) a_j``,
    ``E S^2 = 1/12`` and ``E S^4 = sum a^4 / 80 + 3 (1 - sum a^4) / 144``."""
    a4 = float(np.sum((w / np.linalg.norm(w)) ** 4))
    return float(10 * np.sqrt(a4 / 80 + 3 * (1 - a4) / 144 - 1 / 144))


class Hyperplane(SyntheticStream):
    """Squared distance (times 10) of ``x`` uniform on (0, 1)^5 from a hyperplane through the
    centre of the cube, whose normal rotates incrementally three times.

    The weights start at ``w1 = (1, 1, 1, 1, 1)``; from 25%, 50% and 75% of the stream they move
    linearly, over ``n / 10`` rows each (the thesis' 100k of 1M), to ``w2 = (-1, 1, -1, 1, -1)``,
    ``w3 = (-1, -1, -1, -1, 1)`` and ``w4 = (1, -1, 1, -1, 1)``.  The target is
    ``10 (sum_j (x_j - 0.5) w_j / |w|)^2`` plus Gaussian noise of standard deviation
    ``noise * sigma_y``, ``sigma_y`` = the noiseless target's standard deviation under ``w1``
    (1.1055, exact: see :func:`target_sd`), so the default ``noise=0.25`` is the thesis' sigma_y/4
    (its Bayes mean absolute error 0.221).

    Parameters
    ----------
    n
        Length of the stream (change points are fractions of it).
    noise
        Noise standard deviation as a fraction of sigma_y.
    drift
        ``False`` keeps ``w1`` throughout (stationary).
    seed
        Seed; the same seed gives the same stream.
    """

    def __init__(
        self, n: int = 1_000_000, noise: float = 0.25, drift: bool = True, seed: int | None = None
    ):
        if not (isinstance(noise, (int, float)) and 0 <= noise < np.inf):
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        super().__init__(n, seed, unbounded_ok=not drift)
        self.noise, self.drift = float(noise), bool(drift)
        self.feature_names = [f"x{k + 1}" for k in range(5)]
        self.noise_sd = self.noise * target_sd(WEIGHTS[0])

    def _describe(self) -> dict:
        return {"n": self.n, "noise": self.noise, "drift": self.drift, "seed": self.seed}

    @property
    def change_points(self) -> list[int]:
        n = self.n
        return [n // 4, n // 2, 3 * n // 4] if self.drift else []

    @property
    def transition(self) -> int:
        return max(1, (self.n or 0) // 10)

    def weights(self, idx: np.ndarray) -> np.ndarray:
        """The (un-normalised) weight vector at each index, shape ``(len(idx), 5)``."""
        w = np.repeat(WEIGHTS[:1], len(idx), axis=0)
        if self.drift:
            for k, c in enumerate(self.change_points):
                p = np.clip((idx - c) / self.transition, 0, 1)[:, None]
                w = np.where(p > 0, (1 - p) * WEIGHTS[k] + p * WEIGHTS[k + 1], w)
        return w

    def _block(self, rng, start, size):
        X = rng.random((size, 5))
        noise = rng.standard_normal(size)
        w = self.weights(np.arange(start, start + size))
        s = np.sum((X - 0.5) * w, axis=1) / np.linalg.norm(w, axis=1)
        return X, 10 * s**2 + self.noise_sd * noise
