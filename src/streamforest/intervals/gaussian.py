"""Gaussian baseline: mean +- z * standard deviation of the trees' predictions (JMLR 2019,
§4.1.2)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from .base import IntervalRegressor


class GaussianInterval(IntervalRegressor):
    """Prediction interval ``mean +- z_{1 - alpha/2} * sd`` of the forest's tree predictions.

    ``sd`` is the (population) standard deviation across trees.  This is the paper's baseline:
    the spread of the trees measures the model's uncertainty, not the noise of ``y``, so it
    under-covers badly (the paper reports MER ~0.4 at alpha = 0.1); it is here for comparison.
    Before the forest has learnt anything the interval is ``(-inf, inf)``.
    """

    def __init__(self, forest=None, seed: int | None = None):
        self.forest = forest
        self.seed = seed

    def _chunk(self, Xa, ya, wa, alphas, learn):
        f = self.forest_
        e = f.engine_
        P = e.predict_learn(Xa, ya, e.bagging_weights(wa), wa) if learn else e.predict_trees(Xa)
        mean = P.mean(axis=0)
        sd = P.std(axis=0)
        z = np.array([NormalDist().inv_cdf(1 - a / 2) for a in alphas])
        lo, hi = mean[:, None] - z * sd[:, None], mean[:, None] + z * sd[:, None]
        if learn and self.n_seen == 0:  # the very first row: nothing learnt yet
            lo[0], hi[0] = -np.inf, np.inf
        return e.aggregate(P), lo, hi

    def predict_quantiles(self, X, q) -> np.ndarray:
        """Gaussian quantiles ``mean + z_q * sd`` for the rows of ``X``."""
        f = self.forest_
        qa = np.atleast_1d(np.asarray(q, dtype=float))
        if not np.all((qa > 0) & (qa < 1)):
            raise ValueError(f"q must be in (0, 1), got {q!r}")
        P = f.engine_.predict_trees(self._encode(X))
        z = np.array([NormalDist().inv_cdf(q) for q in qa])
        out = P.mean(axis=0)[:, None] + z * P.std(axis=0)[:, None]
        return out[:, 0] if np.ndim(q) == 0 else out
