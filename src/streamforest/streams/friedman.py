"""Friedman #1, #2 and #3 streams with the concept drifts of the JMLR 2019 paper (appendix A.2).

Change points sit at the paper's fractions of the stream (its default length is 1M):

- ``"lea"`` local expanding abrupt: at n/4, n/2 and 3n/4 two regions of the input space take new
  functions, and the regions grow at each change point (their last inequality is dropped);
- ``"gra"`` global recurring abrupt: a new concept on [n/2, 3n/4), the original one after;
- ``"gsg"`` global slow gradual: from n/2 rows of a second concept appear with a probability
  rising linearly to 1 over n/10 rows (the paper's 100k of 1M); from 3n/4 a third one does the same.

and the abrupt drift of Seah's thesis (§4.4.1, after Ikonomovska et al. 2011):

- ``"permute"`` abrupt permutation: the features of the equation are permuted in the second and
  last quarters, ``[n/4, n/2)`` and ``[3n/4, n)``; the original concept holds on the first and
  third.  For Friedman #1 the permuted concept is the thesis' (and the paper's global)
  ``y2 = 10 sin(pi x4 x5) + 20 (x2 - 0.5)^2 + 10 x1 + 5 x3``; for #2 and #3 it is the same
  global concept as ``"gra"``'s.  ``Friedman.thesis()`` builds the thesis' stream.

Friedman #1: ``X`` uniform on [0, 1]^10 (five informative features), noise N(0, 1).

Friedman #2 (impedance Z) and #3 (phase shift phi) model a series R-L-C circuit.  The features are
in the paper's ranges: ``R`` in (0, 100] ohms, ``f`` in [20, 280] Hz, ``L`` in (0, 1] henries and
``C`` in [1, 11] (the paper's "microfarads"); with ``omega = 2 pi f``,
``Z = sqrt(R^2 + (omega L - 1 / (omega C))^2)`` and ``phi = arctan((omega L - 1 / (omega C)) / R)``,
plus N(0, 1) noise as the paper says.  Conventions where the paper is silent or ambiguous:

- ``C`` enters the equations as the number in [1, 11], as in Breiman (1996), scikit-learn's
  ``make_friedman2`` and the paper authors' MOA generators (not converted to farads);
- ``R`` and ``L`` are drawn from (0, 100] and (0, 1] so that no equation divides by zero.  Some
  drifted concepts divide by ``L`` or ``R * L`` and so have heavy right tails (Z up to ~1e5+);
- the drift regions use the normalised features ``u = (R / 100, (f - 20) / 260, L,
  (C - 1) / 10)`` in place of ``X1..X4`` of Friedman #1; Friedman #1's regions also test ``X5``,
  which these functions do not have, so ``u1`` (normalised R) takes its place: three distinct
  expanding stages remain;
- ``Z_2``'s "omega E" in the paper is read as "omega R" (as in ``Z_{1,R1}``), and the recurring
  concept is active on [n/2, 3n/4) as for Friedman #1 and the paper's text.
"""

from __future__ import annotations

import numpy as np

from .base import SyntheticStream

PI = np.pi


# ------------------------------------------------------------------------------------------------
# concepts: noiseless targets from the feature columns
def f1_original(x):
    return (
        10 * np.sin(PI * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
    )


def f1_global(x):  # y2 = y3 of the paper
    return (
        10 * np.sin(PI * x[:, 3] * x[:, 4]) + 20 * (x[:, 1] - 0.5) ** 2 + 10 * x[:, 0] + 5 * x[:, 2]
    )


def f1_global_second(x):  # y4
    return (
        10 * np.sin(PI * x[:, 1] * x[:, 4]) + 20 * (x[:, 3] - 0.5) ** 2 + 10 * x[:, 2] + 5 * x[:, 0]
    )


def f1_region1(x):
    return 10 * x[:, 0] * x[:, 1] + 20 * (x[:, 2] - 0.5) + 10 * x[:, 3] + 5 * x[:, 4]


def f1_region2(x):
    return (
        10 * np.cos(x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) + np.exp(x[:, 3]) + 5 * x[:, 4] ** 2
    )


def _rlc(x):
    return x[:, 0], 2 * PI * x[:, 1], x[:, 2], x[:, 3]  # R, omega = 2 pi f, L, C


def z_original(x):
    R, w, L, C = _rlc(x)
    return np.sqrt(R**2 + (w * L - 1 / (w * C)) ** 2)


def z_region1(x):  # also the global concept Z_2
    R, w, L, C = _rlc(x)
    return np.sqrt(C**2 + (w * R - 1 / (w * L)) ** 2)


def z_region2(x):
    R, w, L, C = _rlc(x)
    return np.sqrt(R**2 + (R * C - 1 / (R * L)) ** 2)


def z_global_second(x):  # Z_4
    R, w, L, C = _rlc(x)
    return np.sqrt(L**2 + (w * C - 1 / (w * R)) ** 2)


def phi_original(x):
    R, w, L, C = _rlc(x)
    return np.arctan((w * L - 1 / (w * C)) / R)


def phi_region1(x):
    R, w, L, C = _rlc(x)
    return np.arctan((R * C - 1 / (w * L)) / w)


def phi_region2(x):  # also phi_4
    R, w, L, C = _rlc(x)
    return np.arctan((w * C - 1 / (w * R)) / R)


def phi_global(x):  # phi_2
    R, w, L, C = _rlc(x)
    return np.arctan((R * C - 1 / (w * L)) / R)


# per function: original, lea region 1, lea region 2, global (gra and gsg's first), gsg's second
CONCEPTS = {
    1: (f1_original, f1_region1, f1_region2, f1_global, f1_global_second),
    2: (z_original, z_region1, z_region2, z_region1, z_global_second),
    3: (phi_original, phi_region1, phi_region2, phi_global, phi_region2),
}


def normalised(function: int, x: np.ndarray) -> np.ndarray:
    """Features on [0, 1] as the drift regions see them: ``X1..X5`` (Friedman #1) or ``u1..u4``
    then ``u1`` again in fifth place (Friedman #2/#3; see the module docstring)."""
    if function == 1:
        return x[:, :5]
    u = np.column_stack([x[:, 0] / 100, (x[:, 1] - 20) / 260, x[:, 2], (x[:, 3] - 1) / 10])
    return np.column_stack([u, u[:, 0]])


def regions(u: np.ndarray, stage: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the local-expanding regions R1, R2 at each row's stage (0 = before the first
    change point: no region)."""
    x2, x3, x4, x5 = u[:, 1], u[:, 2], u[:, 3], u[:, 4]
    r1 = (x2 < 0.3) & ((stage >= 3) | (x4 > 0.7) & ((stage >= 2) | (x5 < 0.3)))
    r2 = (x2 > 0.7) & (x3 > 0.7) & ((stage >= 3) | (x4 < 0.3) & ((stage >= 2) | (x5 > 0.7)))
    active = stage >= 1
    return r1 & active, r2 & active


class Friedman(SyntheticStream):
    """Friedman #1/#2/#3 stream, stationary or with one of the JMLR paper's drifts.

    Parameters
    ----------
    function
        1, 2 or 3.
    drift
        ``None`` (stationary), ``"lea"`` (local expanding abrupt), ``"gra"`` (global recurring
        abrupt), ``"gsg"`` (global slow gradual) or ``"permute"`` (the thesis' abrupt drift:
        the permuted concept in the second and last quarters).
    n
        Length of the stream (the paper's is 1M); change points scale with it.  ``None`` makes a
        stationary stream unbounded.
    noise
        Standard deviation of the Gaussian noise added to the target (the paper's is 1).
    seed
        Seed; the same seed gives the same stream, whatever chunk sizes it is read in.

    Examples
    --------
    >>> from streamforest.streams import Friedman
    >>> s = Friedman(function=1, drift="gra", n=1000, seed=0)
    >>> s.change_points
    [500, 750]
    >>> X, y = s.arrays()
    >>> X.shape, y.shape
    ((1000, 10), (1000,))
    """

    def __init__(
        self,
        function: int = 1,
        drift: str | None = None,
        n: int | None = 1_000_000,
        noise: float = 1.0,
        seed: int | None = None,
    ):
        if function not in (1, 2, 3) or isinstance(function, bool):
            raise ValueError(f"function must be 1, 2 or 3, got {function!r}")
        if drift not in (None, "lea", "gra", "gsg", "permute"):
            raise ValueError(f"drift must be None, 'lea', 'gra', 'gsg' or 'permute', got {drift!r}")
        if n is None and drift is not None:
            raise ValueError(
                "a drifting stream needs a length n (change points are fractions of n)"
            )
        if not (isinstance(noise, (int, float)) and 0 <= noise < np.inf):
            raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
        super().__init__(n, seed, unbounded_ok=True)
        self.function, self.drift, self.noise = function, drift, float(noise)
        self.feature_names = (
            [f"x{k + 1}" for k in range(10)] if function == 1 else ["R", "f", "L", "C"]
        )

    @classmethod
    def thesis(cls, n: int = 1_000_000, seed: int | None = None) -> Friedman:
        """The FRIEDMAN stream of Seah's thesis (§4.4.1): Friedman #1, noise N(0, 1), its
        features permuted in the second and last quarters (``drift="permute"``)."""
        return cls(function=1, drift="permute", n=n, noise=1.0, seed=seed)

    def _describe(self) -> dict:
        return {"function": self.function, "drift": self.drift, "n": self.n, "seed": self.seed}

    @property
    def change_points(self) -> list[int]:
        n = self.n
        return {
            None: [],
            "lea": [n // 4, n // 2, 3 * n // 4],
            "gra": [n // 2, 3 * n // 4],
            "gsg": [n // 2, 3 * n // 4],
            "permute": [n // 4, n // 2, 3 * n // 4],
        }[self.drift]

    @property
    def transition(self) -> int:
        """Rows over which a ``"gsg"`` concept takes over (n / 10)."""
        return max(1, (self.n or 0) // 10)

    def _features(self, rng, size):
        if self.function == 1:
            return rng.random((size, 10))
        u = rng.random((size, 4))
        return np.column_stack(
            [100 * (1 - u[:, 0]), 20 + 260 * u[:, 1], 1 - u[:, 2], 1 + 10 * u[:, 3]]
        )

    def _block(self, rng, start, size):
        X = self._features(rng, size)
        noise = rng.standard_normal(size)
        idx = np.arange(start, start + size)
        original, region1, region2, glob, glob2 = CONCEPTS[self.function]
        with np.errstate(divide="ignore", over="ignore"):
            y = original(X)
            if self.drift == "gra":
                c1, c2 = self.change_points
                sel = (idx >= c1) & (idx < c2)
                y[sel] = glob(X[sel])
            elif self.drift == "permute":
                c1, c2, c3 = self.change_points
                sel = (idx >= c1) & (idx < c2) | (idx >= c3)
                y[sel] = glob(X[sel])
            elif self.drift == "lea":
                c1, c2, c3 = self.change_points
                stage = (idx >= c1).astype(int) + (idx >= c2) + (idx >= c3)
                r1, r2 = regions(normalised(self.function, X), stage)
                y[r1] = region1(X[r1])
                y[r2] = region2(X[r2])
            elif self.drift == "gsg":
                c1, c2 = self.change_points
                u = rng.random(size)
                p1 = np.clip((idx - c1) / self.transition, 0, 1)
                p2 = np.clip((idx - c2) / self.transition, 0, 1)
                first = (idx >= c1) & (u < p1)
                second = (idx >= c2) & (u < p2)
                y[first] = glob(X[first])
                y[second] = glob2(X[second])
        return X, y + self.noise * noise
