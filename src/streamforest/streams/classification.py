"""Classification stream generators: SEA, Agrawal, RandomRBF (moving centroids), rotating
Hyperplane, LED and STAGGER, after their original definitions as MOA implements them.

Conventions shared by every generator here:

- **Labels are integer class ids** ``0 .. k-1`` (``int64`` arrays; plain ``int`` in River-style
  iteration), listed by the stream's ``classes``.  Binary concepts keep MOA's class order: for SEA
  and Hyperplane class 1 is "above the threshold", for STAGGER class 1 is "true", for Agrawal
  class 0 is the paper's *Group A* (the predicate holds) as in MOA.  River's SEA gives the
  same classes as ``bool``; River's Agrawal labels Group A ``1`` in functions 1-6 (``0`` in 7-10).
- **Functions are numbered from 1**, as in the papers, MOA and :class:`~.friedman.Friedman`
  (River's ``classification_function`` / ``variant`` is ``function - 1``).
- **Nominal features** are ``str`` values in an ``object`` array (Agrawal's ``elevel``, ``car``,
  ``zipcode``; STAGGER's three) and are listed by ``nominal``; all-numeric streams give ``float``
  arrays.
- Noise probabilities are exact: a label (or an LED segment) is flipped with probability
  ``noise``.  (MOA draws whole percentages, the same thing; River's LED and Hyperplane compare
  ``0.01 + U <= noise`` and so flip with probability ``noise - 0.01``.)
- ``balance_classes`` (SEA, Agrawal, STAGGER) alternates the labels ``1, 0, 1, 0, ...`` from the
  first row, as MOA's and River's rejection sampling does; rows of each class are drawn from the
  generator's distribution restricted to that class.
- Rows come in blocks seeded by ``(seed, block)`` (see :mod:`.base`): the same seed gives the same
  stream whatever chunk sizes it is read in.  Time-dependent generators (RandomRBF with a speed,
  the rotating Hyperplane) carry their state across blocks exactly.  A stream's fixed *model*
  (RBF centroids, the Hyperplane's initial weights) comes from its own generator seeded by
  ``model_seed`` (default: ``seed``).
"""

from __future__ import annotations

import numpy as np

from .base import BLOCK, SyntheticStream

# ------------------------------------------------------------------------------------------------
# helpers


def _check_prob(name, value):
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1):
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _check_int(name, value, lo, hi=None):
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= lo
    if not ok or (hi is not None and value > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an int in {rng}, got {value!r}")
    return int(value)


def _model_rng(seed: int) -> np.random.Generator:
    """The generator of a stream's fixed model (distinct from every block generator
    ``default_rng([seed, b])``: a spawned seed sequence assembles a different entropy pool)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x6D6F64656C,)))


def _take_balanced(rng, size, draw, max_rounds=10_000):
    """Rows ``0, 2, 4, ...`` of class 1 and ``1, 3, 5, ...`` of class 0, each the next candidate
    of that class from ``draw(rng, m) -> (columns, y)`` (i.i.d. candidates, so this is MOA's
    alternating rejection sampling, vectorised).  Returns ``(columns, y)``."""
    need = {1: (size + 1) // 2, 0: size // 2}
    cols, ys = [], []
    have = {0: 0, 1: 0}
    for _ in range(max_rounds):
        c, y = draw(rng, size)
        cols.append(c)
        ys.append(y)
        have[0] += int(np.sum(y == 0))
        have[1] += int(np.sum(y == 1))
        if have[0] >= need[0] and have[1] >= need[1]:
            break
    else:
        raise ValueError("balance_classes: one class never occurs under this concept")
    y = np.concatenate(ys)
    columns = [np.concatenate(parts) for parts in zip(*cols, strict=True)]
    order = np.empty(size, dtype=np.int64)
    order[0::2] = np.flatnonzero(y == 1)[: need[1]]
    order[1::2] = np.flatnonzero(y == 0)[: need[0]]
    return [c[order] for c in columns], y[order]


def _flip(rng, y, noise):
    """Binary labels flipped with probability ``noise`` (one uniform per row, always drawn)."""
    u = rng.random(len(y))
    return np.where(u < noise, 1 - y, y)


def _object_array(columns) -> np.ndarray:
    X = np.empty((len(columns[0]), len(columns)), dtype=object)
    for j, col in enumerate(columns):
        X[:, j] = col.tolist()
    return X


class ClassificationStream(SyntheticStream):
    """A synthetic classification stream: integer labels ``0 .. n_classes - 1`` (``classes``)."""

    n_classes: int = 2

    @property
    def classes(self) -> list[int]:
        return list(range(self.n_classes))


# ------------------------------------------------------------------------------------------------
# SEA

SEA_THRESHOLDS = {1: 8.0, 2: 9.0, 3: 7.0, 4: 9.5}


def sea_labels(function: int, X: np.ndarray) -> np.ndarray:
    """SEA's noiseless concept: 1 if ``x1 + x2 > theta`` (theta = 8, 9, 7, 9.5 for functions
    1-4), else 0."""
    return (X[:, 0] + X[:, 1] > SEA_THRESHOLDS[function]).astype(np.int64)


class SEA(ClassificationStream):
    """SEA concepts (Street & Kim 2001): three features uniform on [0, 10], only the first two
    relevant; class 1 if ``x1 + x2 > theta`` with theta 8, 9, 7, 9.5 for functions 1-4 (MOA's
    order), then flipped with probability ``noise`` (MOA's default 10%).

    Parameters
    ----------
    function
        1, 2, 3 or 4.
    noise
        Probability that a label is flipped.
    balance_classes
        Alternate the labels 1, 0, 1, ... (noise is applied afterwards, as in MOA).
    n
        Length (``None``: unbounded).
    seed
        Seed of the stream.

    Examples
    --------
    >>> from streamforest.streams import SEA
    >>> X, y = SEA(function=1, noise=0.0, n=1000, seed=0).arrays()
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 3), [0, 1])
    """

    def __init__(
        self,
        function: int = 1,
        noise: float = 0.1,
        balance_classes: bool = False,
        n: int | None = 100_000,
        seed: int | None = None,
    ):
        self.function = _check_int("function", function, 1, 4)
        self.noise = _check_prob("noise", noise)
        self.balance_classes = bool(balance_classes)
        super().__init__(n, seed, unbounded_ok=True)
        self.feature_names = ["x1", "x2", "x3"]

    def _describe(self):
        return {"function": self.function, "noise": self.noise, "n": self.n, "seed": self.seed}

    def _draw(self, rng, m):
        X = 10.0 * rng.random((m, 3))
        return [X], sea_labels(self.function, X)

    def _block(self, rng, start, size):
        if self.balance_classes:
            (X,), y = _take_balanced(rng, size, self._draw)
        else:
            (X,), y = self._draw(rng, size)
        return X, _flip(rng, y, self.noise)


# ------------------------------------------------------------------------------------------------
# Agrawal

AGRAWAL_FEATURES = [
    "salary", "commission", "age", "elevel", "car", "zipcode", "hvalue", "hyears", "loan",
]  # fmt: skip
ELEVEL = np.array([f"level{k}" for k in range(5)], dtype=object)
CAR = np.array([f"car{k + 1}" for k in range(20)], dtype=object)
ZIPCODE = np.array([f"zipcode{k + 1}" for k in range(9)], dtype=object)


def _between(v, lo, hi):
    return (lo <= v) & (v <= hi)


def _by_age(age, young, middle, old):
    return np.where(age < 40, young, np.where(age < 60, middle, old))


def agrawal_labels(function, salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan):
    """Agrawal et al.'s (1993) functions 1-10 on numeric columns (``elevel`` 0-4, ``car`` 0-19,
    ``zipcode`` 0-8): 0 where the predicate holds (Group A), else 1, as in MOA."""
    if function == 1:
        a = (age < 40) | (age >= 60)
    elif function == 2:
        a = _by_age(
            age,
            _between(salary, 50_000, 100_000),
            _between(salary, 75_000, 125_000),
            _between(salary, 25_000, 75_000),
        )
    elif function == 3:
        a = _by_age(age, elevel <= 1, (elevel >= 1) & (elevel <= 3), elevel >= 2)
    elif function == 4:
        a = _by_age(
            age,
            np.where(elevel <= 1, _between(salary, 25_000, 75_000),
                     _between(salary, 50_000, 100_000)),
            np.where((elevel >= 1) & (elevel <= 3), _between(salary, 50_000, 100_000),
                     _between(salary, 75_000, 125_000)),
            np.where(elevel >= 2, _between(salary, 50_000, 100_000),
                     _between(salary, 25_000, 75_000)),
        )  # fmt: skip
    elif function == 5:
        a = _by_age(
            age,
            np.where(_between(salary, 50_000, 100_000), _between(loan, 100_000, 300_000),
                     _between(loan, 200_000, 400_000)),
            np.where(_between(salary, 75_000, 125_000), _between(loan, 200_000, 400_000),
                     _between(loan, 300_000, 500_000)),
            np.where(_between(salary, 25_000, 75_000), _between(loan, 300_000, 500_000),
                     _between(loan, 100_000, 300_000)),
        )  # fmt: skip
    elif function == 6:
        total = salary + commission
        a = _by_age(
            age,
            _between(total, 50_000, 100_000),
            _between(total, 75_000, 125_000),
            _between(total, 25_000, 75_000),
        )
    else:
        income = 2.0 * (salary + commission) / 3.0
        if function == 7:
            disposable = income - loan / 5.0 - 20_000.0
        elif function == 8:
            disposable = income - 5_000.0 * elevel - 20_000.0
        elif function == 9:
            disposable = income - 5_000.0 * elevel - loan / 5.0 - 10_000.0
        else:
            equity = np.where(hyears >= 20, hvalue * (hyears - 20.0) / 10.0, 0.0)
            disposable = income - 5_000.0 * elevel + equity / 5.0 - 10_000.0
        a = disposable > 0
    return np.where(a, 0, 1).astype(np.int64)


def agrawal_labels_from_rows(function: int, X: np.ndarray) -> np.ndarray:
    """:func:`agrawal_labels` on the rows an :class:`Agrawal` stream gives (object array with
    the nominal codes ``"level0"``, ``"car1"``, ``"zipcode1"`` ...)."""
    num = {k: X[:, j].astype(float) for j, k in enumerate(AGRAWAL_FEATURES)
           if k not in Agrawal.nominal}  # fmt: skip
    elevel = np.array([int(s[5:]) for s in X[:, 3]])
    car = np.array([int(s[3:]) - 1 for s in X[:, 4]])
    zipcode = np.array([int(s[7:]) - 1 for s in X[:, 5]])
    return agrawal_labels(
        function, num["salary"], num["commission"], num["age"], elevel, car, zipcode,
        num["hvalue"], num["hyears"], num["loan"],
    )  # fmt: skip


class Agrawal(ClassificationStream):
    """Agrawal, Imielinski & Swami (1993) loan functions: nine features, three nominal.

    - ``salary`` ~ U[20k, 150k]; ``commission`` = 0 if salary >= 75k, else U[10k, 75k];
    - ``age`` uniform integer in 20..80; ``elevel`` in ``"level0" .. "level4"``;
      ``car`` in ``"car1" .. "car20"``; ``zipcode`` in ``"zipcode1" .. "zipcode9"`` (MOA's
      nominal values; zipcode ``"zipcode<z+1>"`` has ``k = 9 - z``);
    - ``hvalue`` ~ U[0.5 k, 1.5 k] x 100k; ``hyears`` uniform integer in 1..30;
      ``loan`` ~ U[0, 500k].

    The label is class 0 (Group A) where function ``f`` (1-10, the paper's page 924, MOA's
    functions) holds, else 1; see :func:`agrawal_labels`.  ``perturbation`` (MOA's default 5%)
    then moves each numeric feature but ``commission = 0`` by ``U(-1, 1) * perturbation *
    range`` and clips it to its range (age and hyears rounded), after the label is drawn, as
    MOA and the public C generator do: a noisy view of a noiseless concept.

    Deviations from MOA, each a bug there: ``hvalue`` is perturbed by ``k * 100k`` and clipped to
    its own range ``[0.5 k, 1.5 k] x 100k`` (MOA clips it to [0, 135000], collapsing most house
    values; River swaps the arguments and so sets it to ``k * 100k``).  River's Agrawal also
    draws ``commission`` from [10k, 85k], sets ``hvalue`` from ``8 - zipcode`` (0 for the
    last code), its function 5 tests ``salary`` where the paper tests ``loan``, and its
    functions 7-10 test ``disposable > 1`` where MOA tests ``> 0``.

    Parameters
    ----------
    function
        1 to 10.
    perturbation
        Fraction of each numeric feature's range by which it is perturbed (0 to 1).
    balance_classes
        Alternate the labels 1, 0, 1, ... (MOA's and River's option).
    n, seed
        Length (``None``: unbounded) and seed.
    """

    nominal = ("elevel", "car", "zipcode")

    def __init__(
        self,
        function: int = 1,
        perturbation: float = 0.05,
        balance_classes: bool = False,
        n: int | None = 100_000,
        seed: int | None = None,
    ):
        self.function = _check_int("function", function, 1, 10)
        self.perturbation = _check_prob("perturbation", perturbation)
        self.balance_classes = bool(balance_classes)
        super().__init__(n, seed, unbounded_ok=True)
        self.feature_names = list(AGRAWAL_FEATURES)

    def _describe(self):
        return {
            "function": self.function, "perturbation": self.perturbation,
            "n": self.n, "seed": self.seed,
        }  # fmt: skip

    def _draw(self, rng, m):
        u = rng.random((m, 4))
        salary = 20_000.0 + 130_000.0 * u[:, 0]
        commission = np.where(salary >= 75_000.0, 0.0, 10_000.0 + 65_000.0 * u[:, 1])
        age = rng.integers(20, 81, m).astype(float)
        elevel = rng.integers(0, 5, m)
        car = rng.integers(0, 20, m)
        zipcode = rng.integers(0, 9, m)
        hvalue = (9.0 - zipcode) * 100_000.0 * (0.5 + u[:, 2])
        hyears = rng.integers(1, 31, m).astype(float)
        loan = 500_000.0 * u[:, 3]
        cols = [salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan]
        return cols, agrawal_labels(self.function, *cols)

    def _block(self, rng, start, size):
        if self.balance_classes:
            cols, y = _take_balanced(rng, size, self._draw)
        else:
            cols, y = self._draw(rng, size)
        salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan = cols
        p = self.perturbation
        if p > 0:
            e = p * (2.0 * rng.random((size, 6)) - 1.0)  # U(-1, 1) * perturbation, per feature
            salary = np.clip(salary + 130_000.0 * e[:, 0], 20_000.0, 150_000.0)
            commission = np.where(
                commission > 0, np.clip(commission + 65_000.0 * e[:, 1], 10_000.0, 75_000.0), 0.0
            )
            age = np.clip(np.round(age + 60.0 * e[:, 2]), 20, 80)
            k = 9.0 - zipcode
            hvalue = np.clip(hvalue + k * 100_000.0 * e[:, 3], 50_000.0 * k, 150_000.0 * k)
            hyears = np.clip(np.round(hyears + 29.0 * e[:, 4]), 1, 30)
            loan = np.clip(loan + 500_000.0 * e[:, 5], 0.0, 500_000.0)
        X = _object_array(
            [salary, commission, age, ELEVEL[elevel], CAR[car], ZIPCODE[zipcode], hvalue,
             hyears, loan]
        )  # fmt: skip
        return X, y


# ------------------------------------------------------------------------------------------------
# RandomRBF with moving centroids


def bounce(c0: np.ndarray, step: np.ndarray, k) -> np.ndarray:
    """Position after ``k`` moves of a coordinate that starts at ``c0`` in [0, 1] and moves by
    ``step >= 0`` per move, up first, as MOA's RandomRBFGeneratorDrift moves it: a move that
    leaves [0, 1] stops at the bound and reverses the direction (the overshoot is dropped, not
    reflected).  Closed form, so any time can be read without the moves before it."""
    c0, step, k = np.broadcast_arrays(np.asarray(c0, float), np.asarray(step, float),
                                      np.asarray(k, float))  # fmt: skip
    out = c0.copy()
    moving = step > 0
    if not moving.any():
        return out
    c, d, t = c0[moving], step[moving], k[moving]
    first = np.floor((1.0 - c) / d) + 1.0  # first move that would pass 1
    m = np.floor(1.0 / d) + 1.0  # moves from one bound until the other is passed
    j = np.mod(t - first, 2.0 * m)
    after = np.where(j < m, 1.0 - j * d, (j - m) * d)
    out[moving] = np.where(t < first, c + t * d, after)
    return out


class RandomRBF(ClassificationStream):
    """Random radial basis functions (MOA's RandomRBFGenerator / RandomRBFGeneratorDrift).

    The model: ``n_centroids`` centroids, each with a centre uniform on [0, 1]^p, a class
    uniform in ``0 .. n_classes-1``, a standard deviation U[0, 1] and a weight U[0, 1].  A row
    picks a centroid with probability proportional to its weight, a direction ``v`` uniform in
    [-1, 1]^p normalised to length 1, and a length ``N(0, 1) * sd``: ``x = centre + length * v``,
    labelled with the centroid's class.

    Drift: the first ``n_drift_centroids`` centroids move by ``speed`` per row along a unit
    vector of U[0, 1) components (so all start towards the upper corner), each coordinate
    stopping at 0 or 1 and reversing there (:func:`bounce`); row ``t`` (from 0) sees the centres
    after ``t + 1`` moves, as MOA moves them before each row.  ``speed=0`` is stationary.  The
    drift is incremental, so ``change_points`` is empty.

    Deviation from MOA and River: the speed vectors come from the model generator after the
    centroids; MOA (and River) restart the model generator for them, so their speed vectors
    reuse the very draws that made the first centroids (centres, classes, ...).

    Parameters
    ----------
    n_classes, n_features, n_centroids
        As named (MOA's defaults 2, 10, 50).
    speed
        Distance a moving centroid travels per row.
    n_drift_centroids
        How many centroids move (at most ``n_centroids``).
    n, seed
        Length (``None``: unbounded) and seed of the rows.
    model_seed
        Seed of the centroids (default: ``seed``).
    """

    def __init__(
        self,
        n_classes: int = 2,
        n_features: int = 10,
        n_centroids: int = 50,
        speed: float = 0.0,
        n_drift_centroids: int = 50,
        n: int | None = 100_000,
        seed: int | None = None,
        model_seed: int | None = None,
    ):
        self.n_classes = _check_int("n_classes", n_classes, 2)
        self.n_features = _check_int("n_features", n_features, 1)
        self.n_centroids = _check_int("n_centroids", n_centroids, 1)
        if not (isinstance(speed, (int, float)) and 0 <= speed < np.inf):
            raise ValueError(f"speed must be a finite number >= 0, got {speed!r}")
        self.speed = float(speed)
        self.n_drift_centroids = min(
            _check_int("n_drift_centroids", n_drift_centroids, 0), self.n_centroids
        )
        super().__init__(n, seed, unbounded_ok=True)
        self.model_seed = self._seed if model_seed is None else model_seed
        self.feature_names = [f"x{k + 1}" for k in range(self.n_features)]
        rng = _model_rng(self.model_seed)
        p, C = self.n_features, self.n_centroids
        self.centres = rng.random((C, p))
        self.centroid_classes = rng.integers(0, self.n_classes, C)
        self.sds = rng.random(C)
        self.weights = rng.random(C)
        v = rng.random((self.n_drift_centroids, p))
        self.directions = v / np.linalg.norm(v, axis=1, keepdims=True)

    def _describe(self):
        return {
            "n_classes": self.n_classes, "n_features": self.n_features,
            "n_centroids": self.n_centroids, "speed": self.speed, "n": self.n, "seed": self.seed,
        }  # fmt: skip

    def centres_at(self, t, centroids=None) -> np.ndarray:
        """Centres seen by row(s) ``t``: shape ``(len(t), p)`` for the centroid of each row
        (``centroids``, same length as ``t``), or ``(n_centroids, p)`` for a scalar ``t``."""
        if centroids is None:
            centroids = np.arange(self.n_centroids)
            t = np.full(self.n_centroids, t)
        t = np.asarray(t, float)
        centroids = np.asarray(centroids)
        out = self.centres[centroids].copy()
        moving = centroids < self.n_drift_centroids
        if self.speed > 0 and moving.any():
            cm = centroids[moving]
            out[moving] = bounce(
                self.centres[cm], self.speed * self.directions[cm], (t[moving] + 1.0)[:, None]
            )
        return out

    def _sample(self, rng, start, size):
        """Rows with the centroid each was drawn from: ``(X, y, centroid)``."""
        cum = np.cumsum(self.weights)
        centroid = np.searchsorted(cum, rng.random(size) * cum[-1], side="right")
        centroid = np.minimum(centroid, self.n_centroids - 1)
        v = 2.0 * rng.random((size, self.n_features)) - 1.0
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        length = rng.standard_normal(size) * self.sds[centroid]
        t = np.arange(start, start + size, dtype=float)
        X = self.centres_at(t, centroid) + length[:, None] * v
        return X, self.centroid_classes[centroid].astype(np.int64), centroid

    def _block(self, rng, start, size):
        X, y, _ = self._sample(rng, start, size)
        return X, y


# ------------------------------------------------------------------------------------------------
# rotating hyperplane (classification)


class RotatingHyperplane(ClassificationStream):
    """Rotating hyperplane (Hulten et al. 2001; MOA's HyperplaneGenerator): ``x`` uniform on
    [0, 1]^p, class 1 if ``sum w_i x_i >= sum w_i / 2``, flipped with probability ``noise``.

    The weights start uniform on [0, 1] (the model).  After each row, each of the first
    ``n_drift_features`` weights moves by ``mag_change`` in its direction (+1 at the start), and
    the direction reverses with probability ``sigma``: row ``t`` sees the weights after ``t``
    such steps.  The drift is incremental (``change_points`` is empty); ``mag_change=0`` is
    stationary.  This is the classification generator of MOA, not the thesis' regression
    :class:`~.hyperplane.Hyperplane`.  Defaults are MOA's but ``mag_change`` (MOA: 0, which does
    not rotate).

    Block ``b``'s first draws are the direction flips of its rows (``(BLOCK,
    n_drift_features)`` uniforms), so the weights at a block's start follow from the earlier
    blocks' flips alone (kept once computed).
    """

    def __init__(
        self,
        n_features: int = 10,
        n_drift_features: int = 2,
        mag_change: float = 0.001,
        sigma: float = 0.1,
        noise: float = 0.05,
        n: int | None = 100_000,
        seed: int | None = None,
        model_seed: int | None = None,
    ):
        self.n_features = _check_int("n_features", n_features, 1)
        self.n_drift_features = min(
            _check_int("n_drift_features", n_drift_features, 0), self.n_features
        )
        if not (isinstance(mag_change, (int, float)) and 0 <= mag_change < np.inf):
            raise ValueError(f"mag_change must be a finite number >= 0, got {mag_change!r}")
        self.mag_change = float(mag_change)
        self.sigma = _check_prob("sigma", sigma)
        self.noise = _check_prob("noise", noise)
        super().__init__(n, seed, unbounded_ok=True)
        self.model_seed = self._seed if model_seed is None else model_seed
        self.feature_names = [f"x{k + 1}" for k in range(self.n_features)]
        self.initial_weights = _model_rng(self.model_seed).random(self.n_features)
        # (weights, directions) of the drifting features at each block's start
        self._starts = {0: (self.initial_weights[: self.n_drift_features].copy(),
                            np.ones(self.n_drift_features))}  # fmt: skip

    def _describe(self):
        return {
            "n_features": self.n_features, "mag_change": self.mag_change, "noise": self.noise,
            "n": self.n, "seed": self.seed,
        }  # fmt: skip

    def _walk(self, flips_u, w0, d0):
        """Drifting weights for each row of a block (before its step) and the state after it."""
        k = self.n_drift_features
        flips = (flips_u < self.sigma).astype(np.int64)  # reversal after row i's step
        # direction used by row i's step: d0 * (-1)^(reversals after rows before i)
        parity = np.cumsum(flips, axis=0) - flips
        direction = d0 * np.where(parity % 2 == 1, -1.0, 1.0)
        steps = self.mag_change * direction
        w = w0 + np.cumsum(steps, axis=0) - steps  # weights seen by each row
        w_end = w0 + steps.sum(axis=0) if len(steps) else w0.copy()
        d_end = direction[-1] * np.where(flips[-1] == 1, -1.0, 1.0) if len(steps) else d0
        return w.reshape(-1, k), (w_end, d_end)

    def _block_start(self, b):
        if b not in self._starts:
            last = max(c for c in self._starts if c < b)
            state = self._starts[last]
            for c in range(last, b):
                u = np.random.default_rng([self._seed, c]).random((BLOCK, self.n_drift_features))
                _, state = self._walk(u, *state)
                self._starts[c + 1] = state
        return self._starts[b]

    def weights(self, start: int, size: int) -> np.ndarray:
        """The weight vector seen by each row ``start .. start + size - 1`` (shape (size, p));
        rows within one block."""
        b = start // BLOCK
        u = np.random.default_rng([self._seed, b]).random((BLOCK, self.n_drift_features))
        wd, _ = self._walk(u, *self._block_start(b))
        w = np.repeat(self.initial_weights[None, :], size, axis=0)
        lo = start - b * BLOCK
        w[:, : self.n_drift_features] = wd[lo : lo + size]
        return w

    def _block(self, rng, start, size):
        u = rng.random((size, self.n_drift_features))  # the flips (see the class docstring)
        wd, state = self._walk(u, *self._block_start(start // BLOCK))
        self._starts.setdefault(start // BLOCK + 1, state)
        X = rng.random((size, self.n_features))
        w = self.initial_weights
        k = self.n_drift_features
        score = X[:, k:] @ w[k:] + np.sum(X[:, :k] * wd, axis=1)
        total = w[k:].sum() + wd.sum(axis=1)
        y = (score >= 0.5 * total).astype(np.int64)
        return X, _flip(rng, y, self.noise)


# ------------------------------------------------------------------------------------------------
# LED

LED_SEGMENTS = np.array(
    [
        [1, 1, 1, 0, 1, 1, 1],
        [0, 0, 1, 0, 0, 1, 0],
        [1, 0, 1, 1, 1, 0, 1],
        [1, 0, 1, 1, 0, 1, 1],
        [0, 1, 1, 1, 0, 1, 0],
        [1, 1, 0, 1, 0, 1, 1],
        [1, 1, 0, 1, 1, 1, 1],
        [1, 0, 1, 0, 0, 1, 0],
        [1, 1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 0, 1, 1],
    ],
    dtype=float,
)  # segments of digits 0-9 (CART book; MOA's and River's table)


class LED(ClassificationStream):
    """LED display (Breiman et al. 1984): the digit 0-9 uniformly, its seven segments each
    inverted with probability ``noise`` (MOA's default 10%), and, with ``irrelevant=True``
    (MOA's default), 17 more features uniform on {0, 1}.  Features are ``float`` 0/1 (binary:
    a split on them is the same as a nominal one); labels are the digit.
    """

    n_classes = 10

    def __init__(
        self,
        noise: float = 0.1,
        irrelevant: bool = True,
        n: int | None = 100_000,
        seed: int | None = None,
    ):
        self.noise = _check_prob("noise", noise)
        self.irrelevant = bool(irrelevant)
        super().__init__(n, seed, unbounded_ok=True)
        self.feature_names = [f"x{k + 1}" for k in range(24 if self.irrelevant else 7)]

    def _describe(self):
        return {"noise": self.noise, "irrelevant": self.irrelevant, "n": self.n, "seed": self.seed}

    def _block(self, rng, start, size):
        y = rng.integers(0, 10, size)
        seg = LED_SEGMENTS[y]
        flip = rng.random((size, 7)) < self.noise
        seg = np.where(flip, 1.0 - seg, seg)
        if self.irrelevant:
            seg = np.hstack([seg, rng.integers(0, 2, (size, 17)).astype(float)])
        return seg, y.astype(np.int64)


# ------------------------------------------------------------------------------------------------
# STAGGER

STAGGER_VALUES = {
    "size": np.array(["small", "medium", "large"], dtype=object),
    "color": np.array(["red", "blue", "green"], dtype=object),
    "shape": np.array(["circle", "square", "triangle"], dtype=object),
}


def stagger_labels(function: int, size, color, shape) -> np.ndarray:
    """STAGGER's concepts on the codes 0-2 of size (small, medium, large), color (red, blue,
    green) and shape (circle, square, triangle): 1) small and red, 2) green or circle, 3) medium
    or large."""
    if function == 1:
        c = (size == 0) & (color == 0)
    elif function == 2:
        c = (color == 2) | (shape == 0)
    else:
        c = size >= 1
    return c.astype(np.int64)


class STAGGER(ClassificationStream):
    """STAGGER concepts (Schlimmer & Granger 1986): three nominal features of three values each,
    uniform and independent; class 1 ("true") where concept ``function`` holds (see
    :func:`stagger_labels`).  No noise; ``balance_classes`` alternates the labels 1, 0, 1, ...
    """

    nominal = ("size", "color", "shape")

    def __init__(
        self,
        function: int = 1,
        balance_classes: bool = False,
        n: int | None = 100_000,
        seed: int | None = None,
    ):
        self.function = _check_int("function", function, 1, 3)
        self.balance_classes = bool(balance_classes)
        super().__init__(n, seed, unbounded_ok=True)
        self.feature_names = ["size", "color", "shape"]

    def _describe(self):
        return {"function": self.function, "n": self.n, "seed": self.seed}

    def _draw(self, rng, m):
        codes = rng.integers(0, 3, (m, 3))
        cols = [codes[:, 0], codes[:, 1], codes[:, 2]]
        return cols, stagger_labels(self.function, *cols)

    def _block(self, rng, start, size):
        if self.balance_classes:
            cols, y = _take_balanced(rng, size, self._draw)
        else:
            cols, y = self._draw(rng, size)
        X = _object_array(
            [STAGGER_VALUES[k][c] for k, c in zip(self.feature_names, cols, strict=True)]
        )
        return X, y


__all__ = [
    "Agrawal",
    "ClassificationStream",
    "LED",
    "RandomRBF",
    "RotatingHyperplane",
    "SEA",
    "STAGGER",
    "agrawal_labels",
    "bounce",
    "sea_labels",
    "stagger_labels",
]
