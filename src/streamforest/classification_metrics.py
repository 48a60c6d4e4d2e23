"""Prequential metrics of classifications, class probabilities and prediction sets (numpy only).

Rows are read in stream order, chunk by chunk (:meth:`ClassificationMetrics.update`), into
*blocks* of ``step`` consecutive rows, each holding additive counts; totals, tumbling windows and
sliding windows are all sums of blocks, as in :mod:`streamforest.metrics`.  For the rows ``i`` of a
set (the whole stream or a window), true labels ``y_i`` and predicted labels ``p_i``:

- ``accuracy`` ``p_o`` = share of ``p_i == y_i``.
- ``kappa`` (Cohen's): ``(p_o - p_e) / (1 - p_e)``, ``p_e = sum_c (n_true_c / n) (n_pred_c / n)``.
- ``kappa_m``: ``(p_o - p_m) / (1 - p_m)``, ``p_m`` the accuracy of the prequential majority-class
  classifier, which predicts for row ``i`` the most frequent label among the rows of the stream
  *before* ``i`` (Bifet et al. 2015).  MOA counts row ``i``'s own label too; here it does not.
- ``kappa_t`` (temporal): ``(p_o - p_n) / (1 - p_n)``, ``p_n`` the accuracy of the no-change
  classifier, which predicts ``y_{i-1}`` (Zliobaite et al. 2015).
- ``macro_f1``: mean over the classes present in the set (as a true or a predicted label) of
  ``2 TP_c / (n_true_c + n_pred_c)`` (= 2 precision recall / (precision + recall), 0 when
  ``TP_c = 0``): scikit-learn's ``f1_score(average="macro")`` and River's ``MacroF1``.
- ``log_loss``: mean of ``-log max(q_i, eps)``, ``q_i`` the probability given to ``y_i`` (0 if
  ``y_i`` is not one of the probability columns); probabilities are not renormalised.
- prediction sets: ``coverage`` (share of sets holding ``y_i``), ``mean_set_size``,
  ``singletons`` (share of sets of one label) and ``empty`` (share of empty sets).

Both baselines look back over the whole stream, windows or not (a window's ``p_m`` and ``p_n``
are the baselines' accuracies on the window's rows).  Before any label the baselines predict
nothing (counted wrong).  Majority ties go to the earlier class in ``classes`` (given, or in
order of first appearance, true label before predicted label).  A metric whose denominator is 0
(no rows; ``p_e``, ``p_m`` or ``p_n`` equal to 1) is ``nan``.

Labels are any hashable, sortable values of one type (``int``, ``str``, ...); probabilities
and sets are arrays whose columns are the labels ``columns``.
"""

from __future__ import annotations

import numbers

import numpy as np

N, CORRECT, NOCHANGE, MAJORITY, NPROBA, LOGLOSS, NSETS, COVERED, SETSIZE, SINGLE, EMPTY = range(11)
NS = 11
TRUE, PRED, TP = range(3)

METRICS = (
    "accuracy", "kappa", "kappa_m", "kappa_t", "macro_f1", "log_loss",
    "coverage", "mean_set_size", "singletons", "empty",
)  # fmt: skip


def _ratio(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, 1.0), np.nan)


def _kappa(p0, pe):
    return _ratio(p0 - pe, 1.0 - pe)


def _values(s: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics from summed block statistics ``s`` (..., NS) and per-class counts ``c``
    (..., 3, k)."""
    n = s[..., N]
    p0 = _ratio(s[..., CORRECT], n)
    true, pred, tp = c[..., TRUE, :], c[..., PRED, :], c[..., TP, :]
    pe = _ratio(np.sum(true * pred, axis=-1), n * n)
    present = (true + pred) > 0
    f1 = _ratio(2.0 * tp, np.where(present, true + pred, 0.0))
    n_present = present.sum(axis=-1)
    macro = _ratio(np.where(present, f1, 0.0).sum(axis=-1), n_present)
    ns = s[..., NSETS]
    return {
        "accuracy": p0,
        "kappa": _kappa(p0, pe),
        "kappa_m": _kappa(p0, _ratio(s[..., MAJORITY], n)),
        "kappa_t": _kappa(p0, _ratio(s[..., NOCHANGE], n)),
        "macro_f1": macro,
        "log_loss": _ratio(s[..., LOGLOSS], s[..., NPROBA]),
        "coverage": _ratio(s[..., COVERED], ns),
        "mean_set_size": _ratio(s[..., SETSIZE], ns),
        "singletons": _ratio(s[..., SINGLE], ns),
        "empty": _ratio(s[..., EMPTY], ns),
    }


class ClassificationMetrics:
    """Prequential classification metrics over a stream, in blocks of ``step`` rows.

    Parameters
    ----------
    classes
        Labels known in advance, in the order that breaks majority ties (others are added as
        they appear).
    step
        Rows per block: the resolution of :meth:`curves`.
    eps
        Smallest probability counted by the log loss.

    Examples
    --------
    >>> import numpy as np
    >>> m = ClassificationMetrics(step=2)
    >>> _ = m.update([0, 1, 1, 0], [0, 1, 0, 0])
    >>> _ = m.update([1, 1], [1, 1], sets=np.array([[0, 1], [1, 1]], bool), columns=[0, 1])
    >>> round(m.totals()["accuracy"], 4), m.totals()["mean_set_size"]
    (0.8333, 1.5)
    >>> m.curves(window=2)["accuracy"].tolist()
    [1.0, 0.5, 1.0]
    """

    def __init__(self, classes=None, step: int = 1000, eps: float = 1e-15):
        if not (isinstance(step, numbers.Integral) and not isinstance(step, bool) and step > 0):
            raise ValueError(f"step must be a positive int, got {step!r}")
        if not (isinstance(eps, (int, float)) and 0 < eps < 1):
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        self.step, self.eps = int(step), float(eps)
        self.classes: list = []
        self._index: dict = {}
        self.n = 0
        self._s = np.zeros((0, NS))
        self._c = np.zeros((0, 3, 0))
        self._counts = np.zeros(0, dtype=np.int64)  # true labels so far, per class
        self._last = -1  # index of the last true label
        if classes is not None:
            self._add(list(classes))

    # ------------------------------------------------------------------------------------------
    # labels

    def _add(self, labels) -> None:
        for lab in labels:
            if lab not in self._index:
                self._index[lab] = len(self.classes)
                self.classes.append(lab)
        k = len(self.classes)
        if self._c.shape[2] < k:
            pad = k - self._c.shape[2]
            self._c = np.concatenate([self._c, np.zeros((len(self._c), 3, pad))], axis=2)
            self._counts = np.concatenate([self._counts, np.zeros(pad, dtype=np.int64)])

    def _codes(self, *arrays) -> list[np.ndarray]:
        """Indices of the labels of each array, adding new labels in order of first appearance
        (row by row, the arrays' values of a row in the order given)."""
        both = np.stack([np.asarray(a) for a in arrays], axis=1).ravel()
        uniq, first, inv = np.unique(both, return_index=True, return_inverse=True)
        self._add([_py(uniq[j]) for j in np.argsort(first, kind="stable")])
        lookup = np.array([self._index[_py(u)] for u in uniq], dtype=np.int64)
        codes = lookup[inv.ravel()].reshape(-1, len(arrays))
        return [codes[:, j] for j in range(len(arrays))]

    # ------------------------------------------------------------------------------------------
    # accumulation

    def _grow(self, last_block: int) -> None:
        if last_block >= len(self._s):
            cap = max(last_block + 1, 2 * len(self._s), 16)
            s = np.zeros((cap, NS))
            s[: len(self._s)] = self._s
            c = np.zeros((cap, 3, self._c.shape[2]))
            c[: len(self._c)] = self._c
            self._s, self._c = s, c

    def update(self, y_true, y_pred=None, *, proba=None, sets=None, columns=None):
        """Add the next rows: true labels, predicted labels (default: the most probable column
        of ``proba``; ``None`` is no prediction, e.g. before a model has seen a label: counted
        wrong, and as a prediction of no class), optionally class probabilities ``proba``
        (n, len(columns)) and prediction sets ``sets`` (boolean (n, len(columns)), or a
        sequence of collections of labels)."""
        y_true = np.asarray(y_true)
        m = len(y_true)
        if y_true.ndim != 1:
            raise ValueError(f"y_true must be 1-d, got shape {y_true.shape}")
        if (proba is not None or (sets is not None and _is_matrix(sets))) and columns is None:
            raise ValueError("columns (the labels of the proba / sets columns) is required")
        cols = None if columns is None else np.asarray(list(columns), dtype=object)
        if proba is not None:
            proba = np.asarray(proba, dtype=float)
            if proba.shape != (m, len(cols)):
                raise ValueError(f"proba must have shape {(m, len(cols))}, got {proba.shape}")
        if y_pred is None:
            if proba is None:
                raise ValueError("give y_pred or proba")
            y_pred = cols[np.argmax(proba, axis=1)] if m else np.empty(0, dtype=object)
        y_pred = np.asarray(y_pred)
        if y_pred.shape != (m,):
            raise ValueError(f"y_pred must have shape {(m,)}, got {y_pred.shape}")
        if m == 0:
            return self
        given = np.ones(m, dtype=bool)  # False: no prediction (None), wrong and of no class
        if y_pred.dtype == object:
            given = np.array([v is not None for v in y_pred.tolist()], dtype=bool)
            if not given.all():
                y_pred = np.where(given, y_pred, y_true.astype(object))
        yt, yp = self._codes(y_true, y_pred)
        if cols is not None:
            self._add([_py(c) for c in cols])
        k = len(self.classes)
        blk = (self.n + np.arange(m)) // self.step
        self._grow(int(blk[-1]))
        first = int(blk[0])
        rel = blk - first
        nb = int(rel[-1]) + 1

        def add(col, values):
            self._s[first : first + nb, col] += np.bincount(rel, weights=values, minlength=nb)

        # per-row baselines: no-change and prequential majority (both from rows before)
        prev = np.concatenate([[self._last], yt[:-1]])
        maj = self._majority_before(yt, k)
        add(N, np.ones(m))
        hit = (yt == yp) & given
        add(CORRECT, hit.astype(float))
        add(NOCHANGE, (yt == prev).astype(float))
        add(MAJORITY, (yt == maj).astype(float))
        self._last = int(yt[-1])
        self._c[first : first + nb, TRUE, :] += _count2(rel, yt, nb, k)
        self._c[first : first + nb, PRED, :] += _count2(rel[given], yp[given], nb, k)
        self._c[first : first + nb, TP, :] += _count2(rel[hit], yt[hit], nb, k)
        where = None  # column of each row's true label (-1: none)
        if cols is not None:
            col_of = np.full(k, -1)
            col_of[[self._index[_py(c)] for c in cols]] = np.arange(len(cols))
            where = col_of[yt]
        if proba is not None:
            q = np.zeros(m)  # no column (e.g. a model with no class yet): probability 0
            if proba.shape[1]:
                q = np.where(where >= 0, proba[np.arange(m), np.maximum(where, 0)], 0.0)
            add(NPROBA, np.ones(m))
            add(LOGLOSS, -np.log(np.maximum(q, self.eps)))
        if sets is not None:
            covered, size = _set_stats(sets, y_true, where, m)
            add(NSETS, np.ones(m))
            add(COVERED, covered.astype(float))
            add(SETSIZE, size.astype(float))
            add(SINGLE, (size == 1).astype(float))
            add(EMPTY, (size == 0).astype(float))
        self.n += m
        return self

    def _majority_before(self, yt, k, rows=1 << 20):
        """For each row, the index of the most frequent true label before it (-1 before any)."""
        out = np.empty(len(yt), dtype=np.int64)
        sub = max(1, rows // max(k, 1))
        for s in range(0, len(yt), sub):
            part = yt[s : s + sub]
            onehot = np.zeros((len(part), k), dtype=np.int64)
            onehot[np.arange(len(part)), part] = 1
            before = self._counts[None, :] + np.cumsum(onehot, axis=0) - onehot
            out[s : s + sub] = np.where(before.sum(axis=1) > 0, np.argmax(before, axis=1), -1)
            self._counts += onehot.sum(axis=0)
        return out

    # ------------------------------------------------------------------------------------------
    # results

    @property
    def n_blocks(self) -> int:
        return -(-self.n // self.step)

    def totals(self) -> dict[str, float]:
        """Every metric over all rows so far."""
        B = self.n_blocks
        v = _values(self._s[:B].sum(axis=0), self._c[:B].sum(axis=0))
        return {k: float(x) for k, x in v.items()}

    def curves(self, window: int | None = None) -> dict[str, np.ndarray]:
        """Every metric at the end of each block: over all rows so far (``window=None``,
        prequential) or over the last ``window`` rows (a multiple of ``step``; ``window=step``
        gives tumbling windows).  ``"row"`` holds the number of rows read at each point."""
        B = self.n_blocks
        s = np.cumsum(self._s[:B], axis=0)
        c = np.cumsum(self._c[:B], axis=0)
        if window is not None:
            if not (isinstance(window, numbers.Integral) and window > 0
                    and window % self.step == 0):  # fmt: skip
                raise ValueError(f"window must be a positive multiple of step={self.step}")
            q = window // self.step
            if q < B:
                s[q:] = s[q:] - s[:-q].copy()
                c[q:] = c[q:] - c[:-q].copy()
        out = _values(s, c)
        out["row"] = np.minimum(np.arange(1, B + 1) * self.step, self.n)
        return out


def _py(v):
    """A numpy scalar as the Python value (dict keys and ``classes`` hold Python values)."""
    return v.item() if isinstance(v, np.generic) else v


def _is_matrix(sets) -> bool:
    return isinstance(sets, np.ndarray) and sets.dtype == bool and sets.ndim == 2


def _count2(rel, codes, nb, k):
    return np.bincount(rel * k + codes, minlength=nb * k).reshape(nb, k)


def _set_stats(sets, y_true, where, m):
    if _is_matrix(sets):
        if sets.shape[0] != m or where is None:
            raise ValueError(f"sets must have {m} rows and columns matching `columns`")
        if sets.shape[1] == 0:
            return np.zeros(m, dtype=bool), np.zeros(m, dtype=np.int64)
        covered = np.where(where >= 0, sets[np.arange(m), np.maximum(where, 0)], False)
        return covered, sets.sum(axis=1)
    sets = list(sets)
    if len(sets) != m:
        raise ValueError(f"sets must have {m} rows, got {len(sets)}")
    covered = np.array([t in s for t, s in zip(y_true.tolist(), sets, strict=True)], dtype=bool)
    return covered, np.array([len(s) for s in sets], dtype=np.int64)


# ------------------------------------------------------------------------------------------------
# one-call versions


def evaluate(y_true, y_pred=None, *, proba=None, sets=None, columns=None, classes=None):
    """Every metric over the whole sequence (rows in stream order)."""
    m = ClassificationMetrics(classes=classes, step=max(1, len(y_true)))
    return m.update(y_true, y_pred, proba=proba, sets=sets, columns=columns).totals()


def curves(
    y_true, y_pred=None, *, proba=None, sets=None, columns=None, classes=None, step=1,
    window=None,
):  # fmt: skip
    """Every metric after each ``step`` rows: prequential (``window=None``) or over a sliding
    window of the last ``window`` rows; see :meth:`ClassificationMetrics.curves`."""
    m = ClassificationMetrics(classes=classes, step=step)
    return m.update(y_true, y_pred, proba=proba, sets=sets, columns=columns).curves(window)


def accuracy(y_true, y_pred) -> float:
    """Share of correct predictions."""
    return evaluate(y_true, y_pred)["accuracy"]


def cohen_kappa(y_true, y_pred) -> float:
    """Cohen's kappa."""
    return evaluate(y_true, y_pred)["kappa"]


def kappa_m(y_true, y_pred, classes=None) -> float:
    """Kappa-M: accuracy against the prequential majority-class classifier's."""
    return evaluate(y_true, y_pred, classes=classes)["kappa_m"]


def kappa_t(y_true, y_pred) -> float:
    """Kappa-temporal: accuracy against the no-change classifier's."""
    return evaluate(y_true, y_pred)["kappa_t"]


def macro_f1(y_true, y_pred) -> float:
    """Macro-averaged F1 over the classes present."""
    return evaluate(y_true, y_pred)["macro_f1"]


def log_loss(y_true, proba, columns, eps: float = 1e-15) -> float:
    """Mean negative log probability of the true labels (``proba`` columns are ``columns``)."""
    m = ClassificationMetrics(step=max(1, len(y_true)), eps=eps)
    return m.update(y_true, proba=proba, columns=columns).totals()["log_loss"]


def _set_metric(name, y_true, sets, columns):
    y_true = np.asarray(y_true)
    return evaluate(y_true, y_true, sets=sets, columns=columns)[name]


def coverage(y_true, sets, columns=None) -> float:
    """Share of prediction sets that hold the true label."""
    return _set_metric("coverage", y_true, sets, columns)


def _sizes_only(name, sets):
    if _is_matrix(sets):
        y = np.zeros(sets.shape[0], dtype=np.int64)
        return _set_metric(name, y, sets, list(range(sets.shape[1])))
    return _set_metric(name, np.zeros(len(sets), dtype=np.int64), sets, None)


def mean_set_size(sets) -> float:
    """Mean number of labels per prediction set (boolean matrix or collections of labels)."""
    return _sizes_only("mean_set_size", sets)


def singleton_share(sets) -> float:
    """Share of prediction sets of exactly one label."""
    return _sizes_only("singletons", sets)


__all__ = [
    "METRICS",
    "ClassificationMetrics",
    "accuracy",
    "cohen_kappa",
    "coverage",
    "curves",
    "evaluate",
    "kappa_m",
    "kappa_t",
    "log_loss",
    "macro_f1",
    "mean_set_size",
    "singleton_share",
]
