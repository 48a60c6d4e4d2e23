"""Prequential metrics of point predictions and prediction intervals.

Rows are accumulated by a compiled kernel (``_core.metrics.accumulate``) into *blocks* of ``step``
consecutive rows; every block holds additive sums, so totals, tumbling windows and sliding windows
are all sums of blocks (:func:`summarize`).  Definitions, for the rows ``i`` of a set (the whole
stream or a window), interval ``[l_i, u_i]`` at level ``alpha``:

- ``mer``: mean error rate, the fraction of ``y_i`` outside ``[l_i, u_i]`` (JMLR 2019);
  ``coverage`` (PICP) = 1 - mer; ``below`` = fraction with ``y_i < l_i``.
- ``mpiw``: mean interval width.  An infinite interval (conformal methods give ``(-inf, inf)``
  until they have enough scores) counts as width ``rho``; ``n_infinite`` counts them.
- ``ris``: relative interval size, mpiw / rho with ``rho`` = max(y) - min(y) over the evaluated
  stream, as the paper (``ris_range="running"``: each width divided by the range of the targets
  seen so far, current one included; 1 for an infinite width or while that range is 0 and the
  width is not).  ``nmpiw`` = mpiw / rho, the same quantity under its other name.
- ``quantile_loss``: the paper's ``alpha * RIS + beta``, ``beta`` the mean distance of ``y_i``
  outside its interval divided by rho.
- ``interval_score``: the interval (Winkler) score of Gneiting & Raftery (2007),
  mean of ``(u - l) + (2 / alpha) (l - y) 1{y < l} + (2 / alpha) (y - u) 1{y > u}`` (in units of
  y, lower is better; an infinite interval counts as width ``rho``, as in ``mpiw``).
- ``utility``: ``1 - RIS`` if mer <= alpha, else ``(1 - RIS) exp(-gamma (mer - alpha))`` with
  ``gamma = 2 ln 2 / alpha`` (utility halves at mer = 1.5 alpha), and 0 if RIS > 1.
- ``mae``, ``rmse``; ``rmae`` = sum |y - yhat| / sum |y - b| and ``rrse`` = sqrt(sum (y - yhat)^2 /
  sum (y - b)^2), ``b`` the prequential mean of the targets seen before (0 before any; MOA's
  convention); ``r2`` = 1 - sum (y - yhat)^2 / sum (y - mean of the set's y)^2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import streamforest._core as _core

# block columns: point part, then K columns per alpha
N, SAE, SSE, YMEAN, YM2, YMIN, YMAX, BAE, BSE = range(9)
POINT = 9
MISS, BELOW, WSUM, NINF, BETA, WRUN = range(6)
K = 6
# carried state: rows seen, mean of targets, running min and max
C_N, C_MEAN, C_MIN, C_MAX = range(4)


def n_columns(n_alphas: int) -> int:
    return POINT + K * n_alphas


def new_carry() -> np.ndarray:
    return np.array([0.0, 0.0, np.inf, -np.inf])


def merge(blocks: np.ndarray) -> np.ndarray:
    """One row summing several blocks (means and M2 combined by Chan's rule)."""
    out = blocks.sum(axis=0)
    n = blocks[:, N]
    tot = n.sum()
    if tot > 0:
        mean = float(np.sum(n * blocks[:, YMEAN]) / tot)
        out[YMEAN] = mean
        out[YM2] = float(np.sum(blocks[:, YM2] + n * (blocks[:, YMEAN] - mean) ** 2))
        seen = n > 0
        out[YMIN] = blocks[seen, YMIN].min()
        out[YMAX] = blocks[seen, YMAX].max()
    return out


def gamma(alpha: float) -> float:
    """The utility's decay rate: utility halves at mer = 1.5 alpha."""
    return 2 * math.log(2) / alpha


def utility(mer: float, ris: float, alpha: float) -> float:
    if not (ris <= 1):
        return 0.0
    return (1 - ris) * (math.exp(-gamma(alpha) * (mer - alpha)) if mer > alpha else 1.0)


def _div(a, b):
    return float(a / b) if b > 0 else float("nan")


def summarize(row: np.ndarray, alphas, rho: float, running: bool = False) -> dict:
    """Metrics of one merged row (see the module docstring); ``rho`` the stream's target range."""
    n = row[N]
    out = {
        "n": int(n),
        "mae": _div(row[SAE], n),
        "rmse": math.sqrt(row[SSE] / n) if n > 0 else float("nan"),
        "rmae": _div(row[SAE], row[BAE]),
        "rrse": math.sqrt(row[SSE] / row[BSE]) if row[BSE] > 0 else float("nan"),
        "r2": 1 - row[SSE] / row[YM2] if row[YM2] > 0 else float("nan"),
    }
    levels = {}
    for a, alpha in enumerate(alphas):
        c = POINT + K * a
        mer = _div(row[c + MISS], n)
        mpiw = _div(row[c + WSUM] + row[c + NINF] * rho, n)
        nmpiw = mpiw / rho if rho > 0 else float("nan")
        ris = _div(row[c + WRUN], n) if running else nmpiw
        beta = _div(row[c + BETA], n) / rho if rho > 0 else float("nan")
        levels[_key(alpha)] = {
            "alpha": float(alpha),
            "mer": mer,
            "coverage": 1 - mer,
            "below": _div(row[c + BELOW], n),
            "ris": ris,
            "mpiw": mpiw,
            "nmpiw": nmpiw,
            "quantile_loss": alpha * ris + beta,
            "interval_score": mpiw + 2.0 / alpha * _div(row[c + BETA], n),
            "utility": utility(mer, ris, alpha) if n > 0 else float("nan"),
            "n_infinite": int(row[c + NINF]),
        }
    if levels:
        out["intervals"] = levels
    return out


def score(y, pred, intervals=None, alphas=(), running: bool = False) -> dict:
    """Metrics of whole arrays at once (the evaluator's totals): targets ``y`` (n,), predictions
    ``pred`` (n,), ``intervals`` (n, 2) for one level or (n, A, 2) for ``alphas``."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    pred = np.ascontiguousarray(pred, dtype=np.float64)
    alphas = [float(a) for a in np.atleast_1d(alphas)] if intervals is not None else []
    if intervals is None:
        iv = np.empty((len(y), 0, 2))
    else:
        iv = np.asarray(intervals, dtype=np.float64)
        iv = iv[:, None, :] if iv.ndim == 2 else iv
    if iv.shape[:2] != (len(y), len(alphas)) or pred.shape != y.shape:
        raise ValueError(
            f"shapes do not match: y {y.shape}, pred {pred.shape}, intervals {iv.shape}, "
            f"{len(alphas)} alphas"
        )
    blocks = np.zeros((1, n_columns(len(alphas))))
    lo = np.ascontiguousarray(iv[:, :, 0])
    hi = np.ascontiguousarray(iv[:, :, 1])
    _core.metrics.accumulate(y, pred, lo, hi, 0, max(1, len(y)), blocks, new_carry())
    rho = float(blocks[0, YMAX] - blocks[0, YMIN]) if len(y) else float("nan")
    return summarize(blocks[0], alphas, rho, running)


def _key(alpha: float) -> str:
    return f"{float(alpha):g}"


DESCRIPTIONS = {
    "mer": "mean error rate: fraction of targets outside the interval (valid if <= alpha)",
    "coverage": "PICP, 1 - mer",
    "ris": "relative interval size: mean width / range of y over the stream",
    "mpiw": "mean prediction interval width (an infinite interval counts as the range of y)",
    "nmpiw": "mpiw / range of y (equal to ris)",
    "quantile_loss": "the JMLR paper's alpha * RIS + mean distance outside / range",
    "interval_score": "interval (Winkler) score: width + (2/alpha) * distance of y outside",
    "utility": "(1 - RIS), halved each time mer exceeds alpha by alpha/2; 0 if RIS > 1",
    "mae": "mean absolute error of the point prediction",
    "rmse": "root mean squared error",
    "rmae": "MAE relative to the prequential mean predictor",
    "rrse": "root relative squared error (vs the prequential mean predictor)",
    "r2": "coefficient of determination",
}


# ------------------------------------------------------------------------------------------------
# array metrics of interval and quantile forecasts (vectorised numpy; not part of the blocks)
def _interval_arrays(y, intervals):
    y = np.asarray(y, dtype=np.float64)
    iv = np.asarray(intervals, dtype=np.float64)
    if y.ndim != 1 or iv.ndim != 2 or iv.shape != (y.shape[0], 2):
        raise ValueError(
            f"expected y of shape (n,) and intervals of shape (n, 2), got {y.shape} and {iv.shape}"
        )
    return y, iv[:, 0], iv[:, 1]


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    return float(alpha)


def interval_score(y, intervals, alpha, average: bool = True):
    """Interval (Winkler) score of central ``(1 - alpha)`` intervals (Gneiting & Raftery 2007,
    eq. 43): ``(u - l) + (2 / alpha) (l - y) 1{y < l} + (2 / alpha) (y - u) 1{y > u}``.

    A proper scoring rule for the pair of quantiles ``alpha / 2`` and ``1 - alpha / 2``; lower is
    better, in units of ``y``.  ``intervals`` is ``(n, 2)``.  Returns the mean (``average``) or the
    ``(n,)`` scores; an infinite interval scores ``inf`` (the evaluator's ``interval_score``
    instead counts it as the width ``rho``, like ``mpiw``).
    """
    a = _check_alpha(alpha)
    y, lo, hi = _interval_arrays(y, intervals)
    with np.errstate(invalid="ignore"):
        s = (hi - lo) + (2.0 / a) * (np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0))
    s = np.where(np.isnan(s), np.inf, s)  # (-inf, inf): inf - (-inf) then 0 * inf
    return float(s.mean()) if average else s


def pinball_loss(y, q, level, average: bool = True):
    """Pinball (quantile) loss of predicted quantiles ``q`` at ``level``:
    ``max(level (y - q), (level - 1) (y - q))``.  ``y`` is ``(n,)``; ``q`` ``(n,)`` with a
    number ``level``, or ``(n, K)`` with ``K`` levels.  Returns the mean over rows (per level for
    ``K`` levels) or the elementwise losses.  Equals scikit-learn's ``mean_pinball_loss``."""
    y = np.asarray(y, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    lv = np.asarray(level, dtype=np.float64)
    if lv.ndim > 1 or not np.all((lv > 0) & (lv < 1)):
        raise ValueError(f"level must be in (0, 1) (or a list of such), got {level!r}")
    if (
        y.ndim != 1
        or q.shape[0] != y.shape[0]
        or q.ndim != lv.ndim + 1
        or (lv.ndim == 1 and q.shape[1] != lv.shape[0])
    ):
        raise ValueError(
            f"shapes do not match: y {y.shape}, q {q.shape}, level {lv.shape} (q must be (n,) "
            f"for one level, (n, K) for K levels)"
        )
    d = (y if lv.ndim == 0 else y[:, None]) - q
    loss = np.maximum(lv * d, (lv - 1.0) * d)
    return loss.mean(axis=0) if average else loss


def crps_from_quantiles(y, q, levels, average: bool = True):
    """CRPS approximated from predicted quantiles, via its quantile form
    ``CRPS(F, y) = 2 * integral over (0, 1) of pinball_tau(y, F^-1(tau)) d tau``
    (Gneiting & Raftery 2007; Laio & Tamea 2007).

    The integral is approximated by a rectangle rule over the given ``levels`` (``q`` is
    ``(n, K)``, the quantiles at ``levels``, ascending in ``(0, 1)``): level ``k`` weighs the
    half-distance to its neighbours, the first and last extended to 0 and 1.  For ``K`` equally
    spaced midpoints ``(k - 1/2) / K`` every weight is ``1/K``, i.e. twice the average pinball
    loss over the levels (the usual approximation).  It is an *approximation*: exact as ``K``
    grows for a forecast with finite mean; with few levels the tails are poorly represented.
    Returns the mean or the ``(n,)`` values."""
    lv = np.asarray(levels, dtype=np.float64)
    if lv.ndim != 1 or lv.shape[0] == 0 or not np.all(np.diff(lv) > 0):
        raise ValueError(f"levels must be a non-empty, strictly ascending list, got {levels!r}")
    loss = pinball_loss(y, q, lv, average=False)  # validates the rest
    edges = np.concatenate([[0.0], (lv[1:] + lv[:-1]) / 2, [1.0]])
    s = 2.0 * loss @ np.diff(edges)
    return float(s.mean()) if average else s


def binned_coverage(y, intervals, by=None, n_bins: int = 10) -> dict:
    """Coverage within bins of a conditioning variable, to show whether intervals are valid
    *conditionally* (x-adaptive) and not only on average.

    ``by`` (``(n,)``) defaults to the predicted width ``u - l``: the rows are sorted by it and cut
    into ``n_bins`` bins of (almost) equal counts (ties are cut by position; infinite widths sort
    last).  Returns a dict of ``(n_bins,)`` arrays: ``lower`` and ``upper`` (the range of ``by``
    in the bin), ``n``, ``coverage`` (fraction of ``y`` inside ``[l, u]``), ``mer``
    (``1 - coverage``) and ``mean_width``.  A method that adapts to ``x`` keeps every bin's
    coverage near ``1 - alpha``; one with constant widths (CP) typically over-covers the easy
    rows and under-covers the hard ones.
    """
    y, lo, hi = _interval_arrays(y, intervals)
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    width = hi - lo
    key = width if by is None else np.asarray(by, dtype=np.float64)
    if key.shape != y.shape:
        raise ValueError(f"by must have shape {y.shape}, got {key.shape}")
    if np.isnan(key).any():
        raise ValueError("by (or the widths) contains NaN")
    order = np.argsort(key, kind="stable")
    groups = np.array_split(order, min(int(n_bins), max(1, y.shape[0])))
    inside = (y >= lo) & (y <= hi)
    out = {k: np.empty(len(groups)) for k in ("lower", "upper", "n", "coverage", "mean_width")}
    for b, g in enumerate(groups):
        out["lower"][b] = key[g].min() if g.size else np.nan
        out["upper"][b] = key[g].max() if g.size else np.nan
        out["n"][b] = g.size
        out["coverage"][b] = inside[g].mean() if g.size else np.nan
        out["mean_width"][b] = width[g].mean() if g.size else np.nan
    out["n"] = out["n"].astype(np.int64)
    out["mer"] = 1.0 - out["coverage"]
    return out
