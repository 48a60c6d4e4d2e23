"""Intervals that hold for every group: the state and the group values of ``groups=``.

An interval method given ``groups`` (a column, a list of columns: several *families* of groups,
which may overlap, or a function of the row) calibrates its intervals per group, online and
Mondrian style (Vovk et al. 2003's Mondrian conformal predictors, one window per group):

- each row is scored on the method's own interval at the reference level :data:`REFERENCE`,
  ``[lo, hi]``: ``s = |y - m| / h`` with ``m`` its centre and ``h`` its half width (the
  method's scale, so a group's scores keep what the method knows of ``x``);
- each group keeps the scores of its last ``W`` rows (``W`` the method's ``calibration_size``,
  else :data:`DEFAULT_WINDOW`: the bounded FIFO window of the method's marginal calibration)
  and the pool the scores of the last ``W`` rows of every group;
- a row's interval at ``alpha`` is ``m +- q h``, ``q`` the split-conformal quantile (the
  ``ceil((n + 1)(1 - alpha))``-th smallest) of its group's window; a *young* group, whose window
  holds fewer than ``ceil((1 - alpha) / alpha)`` scores (its quantile at ``alpha`` does not
  exist yet), borrows the pool's quantile;
- with several families a row takes the largest of its groups' thresholds (each group of each
  family is covered at least as often as with its family alone; wider than needed where
  families overlap);
- a row without a group in a family (a missing value: ``None`` or NaN) or of a group not seen
  while learning takes the pool's threshold there; learning it creates no group;
- no row is lost: each learnt row's score enters the pool and its group of every family.

The windows' pass is compiled (``_core.groups``, ``src/core/intervals/groups.hpp``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

import streamforest._core as _core

from ._controllers import LADDER_K, ladder

#: The level of the method's interval that scales the group scores (finite as soon as the
#: method has one calibration score: its rank ``ceil((n + 1) / 2)`` is at most ``n``).
REFERENCE = 0.5
#: The groups' window for a method without ``calibration_size``.
DEFAULT_WINDOW = 1000

_PASS = _core.groups.group_pass
_MVP_PASS = _core.groups.mvp_pass
_SET_PASS = _core.groups.group_set_pass


class Multivalid:
    """``groups=Multivalid(families, alphas=...)``: multivalid conformal intervals (MVP,
    Bastani et al. 2022) instead of Mondrian windows, for families that overlap.

    Every group of every family (and all rows together) is calibrated at once, and conditional
    on the threshold, on any sequence (adversarial, drifting): per level, bucket of the
    threshold space and group, the running sum of ``alpha - miss`` steers the threshold (see
    ``src/core/intervals/multivalid.hpp``).  The levels are fixed (``alphas``: the intervals of
    other levels are refused); the thresholds are drawn (seeded by the model's seed and the
    row's position in the stream).  The scores are the Mondrian ones (``|y - m| / h`` on the
    method's interval at :data:`REFERENCE`).

    A group's error rate converges to ``alpha`` as MVP learns, about as ``sqrt(buckets /
    rows)``.  Each cell votes by the paper's ``exp(a) - exp(-a)`` of its sum normalised by its
    count, without the authors' code's extra weight of those terms by the count (with it a
    cell-bucket seen once outvoted thousands of rows, and the quietest groups stayed
    over-covered: docs/intervals.md).  The defaults (40 buckets, ``eta = 0.5``; the paper's
    code: 50 and 0.5): on ``benchmarks/group_coverage.py``'s overlapping families over ten
    model seeds, every group within 0.010 of alpha (100 buckets and ``eta = 2``: 0.014).

    Parameters
    ----------
    groups
        The families: a column name or index, a function of the row, or a list of them.
    alphas
        The levels calibrated.
    buckets
        Buckets of the threshold space ``[0, 1]`` (scores ``s`` as ``s / (1 + s)``).
    eta
        The learning rate of the exponential weights.
    """

    def __init__(self, groups, alphas=(0.1,), buckets: int = 40, eta: float = 0.5):
        self.groups = groups
        self.alphas = alphas
        self.buckets = buckets
        self.eta = eta

    def __repr__(self) -> str:
        return (f"Multivalid({self.groups!r}, alphas={self.alphas!r}, buckets={self.buckets!r},"
                f" eta={self.eta!r})")  # fmt: skip

    @staticmethod
    def aci_levels(alpha: float) -> tuple:
        """The levels ACI (:class:`~streamforest.AdaptiveConformal`'s default) asks its base
        method for at ``alpha`` (its ladder of 13 levels around ``alpha``): give them as
        ``alphas`` to run ACI over a multivalid method (each level is calibrated by its own MVP
        state, 13 times the work of one)."""
        if isinstance(alpha, bool) or not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
            raise ValueError(f"alpha must be a level in (0, 1), got {alpha!r}")
        return tuple(ladder(float(alpha)).tolist())

    def levels(self) -> np.ndarray:
        a = np.atleast_1d(np.asarray(self.alphas, dtype=np.float64))
        if a.ndim != 1 or not a.shape[0] or not np.all((a > 0) & (a < 1)):
            raise ValueError(f"Multivalid alphas must be levels in (0, 1), got {self.alphas!r}")
        return a

    def check(self) -> None:
        self.levels()
        b, e = self.buckets, self.eta
        if isinstance(b, bool) or not (isinstance(b, numbers.Integral) and 2 <= b <= 10**5):
            raise ValueError(f"Multivalid buckets must be an integer >= 2, got {b!r}")
        if isinstance(e, bool) or not (isinstance(e, numbers.Real) and 0 < e < float("inf")):
            raise ValueError(f"Multivalid eta must be a finite number > 0, got {e!r}")

    def columns(self, alphas: np.ndarray) -> np.ndarray:
        """The index of each of ``alphas`` among the calibrated levels (ValueError if one is
        not calibrated)."""
        levels = self.levels()
        out = np.empty(alphas.shape[0], np.int64)
        for k, a in enumerate(alphas):
            hit = np.flatnonzero(np.abs(levels - a) <= 1e-12)
            if not hit.size:
                raise ValueError(
                    f"multivalid intervals are calibrated at alphas={tuple(levels.tolist())}, "
                    f"not at {float(a)!r} (give it in Multivalid(..., alphas=...)){_aci(alphas)}"
                )
            out[k] = hit[0]
        return out


def _aci(alphas: np.ndarray) -> str:
    """A hint when ``alphas`` are ACI's ladder around a level (ACI over a multivalid method)."""
    if alphas.shape[0] != LADDER_K.size:
        return ""
    centre = float(f"{alphas[int(np.flatnonzero(LADDER_K == 0)[0])]:.12g}")
    if not np.allclose(alphas, ladder(centre), rtol=0, atol=1e-12):
        return ""
    return (f"; ACI asks for its ladder of {LADDER_K.size} levels around {centre!r}: give "
            f"Multivalid(..., alphas=Multivalid.aci_levels({centre!r}))")  # fmt: skip


def multivalid_of(groups) -> Multivalid | None:
    return groups if isinstance(groups, Multivalid) else None


def check_groups(groups) -> tuple:
    """The families of a ``groups`` parameter: ``()`` for None, else a tuple of column names
    (str), column indices (int >= 0) and functions of the row (a :class:`Multivalid`'s own)."""
    if groups is None:
        return ()
    if isinstance(groups, Multivalid):
        groups.check()
        return check_groups(groups.groups)
    items = list(groups) if isinstance(groups, (list, tuple)) else [groups]
    if not items:
        raise ValueError("groups must name at least one column (or be None), got []")
    for g in items:
        if isinstance(g, bool) or not (isinstance(g, (str, numbers.Integral)) or callable(g)):
            raise TypeError(
                "groups must be a column name, a column index, a function of the row, or a "
                f"list of them, got {g!r}"
            )
        if isinstance(g, numbers.Integral) and g < 0:
            raise ValueError(f"groups: a column index must be >= 0, got {g!r}")
    return tuple(items)


def _missing(v) -> bool:
    return v is None or (isinstance(v, (float, np.floating)) and v != v)


def _key(v):
    """A group value as a dict key (numpy scalars as Python ones); refuses unhashable ones."""
    if isinstance(v, np.generic):
        v = v.item()
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"a group value must be hashable (a label), got {v!r}") from None
    return v


def _factorize(col) -> tuple[list, np.ndarray]:
    """``(values, codes)``: the distinct non-missing values of ``col`` and each item's index
    among them (-1: missing)."""
    a = np.asarray(col) if not isinstance(col, list) else None
    if a is not None and a.ndim == 1 and a.dtype.kind in "iufbUS":
        codes = np.full(a.shape[0], -1, np.int64)
        ok = ~np.isnan(a) if a.dtype.kind == "f" else np.ones(a.shape[0], bool)
        uniq, inv = np.unique(a[ok], return_inverse=True)
        codes[ok] = inv.reshape(-1)
        return [_key(v) for v in uniq], codes
    items = list(col) if a is None or a.ndim != 1 else a.tolist()
    index: dict = {}
    codes = np.full(len(items), -1, np.int64)
    for i, v in enumerate(items):
        if _missing(v):
            continue
        k = _key(v)
        c = index.get(k)
        if c is None:
            c = index[k] = len(index)
        codes[i] = c
    return list(index), codes


def _is_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def batch_values(families: tuple, X, names: list) -> list:
    """Each family's group values of the rows of ``X`` (an array or a DataFrame); ``names``:
    the model's feature names (a name of an array's column)."""
    out = []
    if _is_frame(X):
        records = None
        for g in families:
            if callable(g):
                records = X.to_dict("records") if records is None else records
                out.append([g(r) for r in records])
            elif g in X.columns:
                out.append(X[g].to_numpy())
            elif isinstance(g, numbers.Integral) and g < X.shape[1]:
                out.append(X.iloc[:, int(g)].to_numpy())
            else:
                raise ValueError(f"groups: no column {g!r} in X (columns {list(X.columns)})")
        return out
    A = np.asarray(X)
    if A.ndim != 2:
        raise ValueError(f"groups: X must be 2-d to take its group columns, got {A.ndim}-d")
    for g in families:
        if callable(g):
            out.append([g(r) for r in A])
            continue
        j = _column_index(g, names, A.shape[1])
        out.append(A[:, j])
    return out


def _column_index(g, names: list, width: int) -> int:
    if isinstance(g, str) or g in names:
        if g not in names:
            raise ValueError(
                f"groups: no column named {g!r} (the model's features: {names[:20]}); an "
                "array has no column names: give a column index, a DataFrame or groups="
            )
        return names.index(g)
    if not g < width:
        raise ValueError(f"groups: column index {g} outside the {width} columns of X")
    return int(g)


def row_values(families: tuple, x: Mapping, names: list) -> list:
    """Each family's group value of the dict ``x`` (a missing key: no group)."""
    out = []
    for g in families:
        if callable(g):
            out.append([g(x)])
        elif g in x:
            out.append([x[g]])
        elif isinstance(g, numbers.Integral) and not isinstance(g, bool) and g < len(names):
            out.append([x.get(names[int(g)])])
        else:
            out.append([None])
    return out


def given_values(groups, n: int, one_row: bool = False) -> list:
    """The families' columns of a ``groups=`` argument of a call: an array-like of ``n`` items
    (one family) or ``(n, F)`` (``F`` families); for a one-row call also a value or a tuple of
    ``F`` values."""
    if one_row:
        if isinstance(groups, (tuple, list)):
            return [[v] for v in groups]
        if isinstance(groups, np.ndarray) and groups.ndim == 1:
            return [[v] for v in groups.tolist()]
        return [[groups]]
    if _is_frame(groups):
        cols = [groups.iloc[:, j].to_numpy() for j in range(groups.shape[1])]
    else:
        a = np.asarray(groups, dtype=None if not isinstance(groups, list) else object)
        if a.ndim == 1:
            cols = [a]
        elif a.ndim == 2:
            cols = [a[:, j] for j in range(a.shape[1])]
        else:
            raise ValueError(f"groups: expected one value per row, or (rows, families), got "
                             f"an array of shape {a.shape}")  # fmt: skip
    for c in cols:
        if len(c) != n:
            raise ValueError(f"groups: {len(c)} values for {n} rows")
    if not cols:
        raise ValueError("groups: no family (an array of shape (rows, 0))")
    return cols


def call_values(
    groups, families: tuple, X, names: list, n: int, one_row: bool, n_families: int | None
) -> list:
    """The families' columns of a call's rows: its ``groups=`` argument if given, else the
    model's families read from ``X`` (a dict for a one-row call), else (neither) ``None`` for
    each of the ``n_families`` families a model calibrates already."""
    if groups is not None:
        return given_values(groups, n, one_row)
    if families:
        return (row_values if one_row else batch_values)(families, X, names)
    return [[None] * n for _ in range(n_families)]


class GroupVocabulary:
    """The cells of one model's groups: cell 0 the pool, one cell per (family, value) seen while
    learning (``vocab[f][value]``), numbered in the order they were first learnt."""

    def __init__(self, n_families: int):
        self.n_families = int(n_families)
        self.vocab = [{} for _ in range(self.n_families)]
        self.n_cells = 1

    @property
    def n_groups(self) -> int:
        return self.n_cells - 1

    def lookup(self, cols: list, learn: bool) -> tuple[np.ndarray, list]:
        """``(ids, new)``: the cells of the rows (``(n, families)``, -1: none) and, when
        learning, the values not seen before as ``(family, value)`` pairs, which take the next
        cells in that order once :meth:`commit` adds them (nothing changes here)."""
        if len(cols) != self.n_families:
            raise ValueError(f"groups: {len(cols)} families given, the model has {self.n_families}")
        n = len(cols[0]) if cols else 0
        ids = np.full((n, self.n_families), -1, np.int64)
        new: list = []
        for f, col in enumerate(cols):
            values, codes = _factorize(col)
            vocab = self.vocab[f]
            cell_of = np.full(len(values) + 1, -1, np.int64)  # (the last: missing)
            for k, v in enumerate(values):
                c = vocab.get(v)
                if c is None and learn:
                    c = self.n_cells + len(new)
                    new.append((f, v))
                cell_of[k] = -1 if c is None else c
            ids[:, f] = cell_of[codes]
        return ids, new

    def commit(self, new: list) -> None:
        """Add the cells of ``new`` (from :meth:`lookup`)."""
        for f, v in new:
            self.vocab[f][v] = self.n_cells
            self.n_cells += 1


class GroupCalibration(GroupVocabulary):
    """The windows of one model's groups (cells of :class:`GroupVocabulary`), each a FIFO window
    of ``width`` scores kept sorted (``meta[c] = [head, size]``, ``order``, ``pos``, ``ss``: see
    ``src/core/intervals/groups.hpp``)."""

    def __init__(self, width: int, n_families: int, multivalid: Multivalid | None = None):
        super().__init__(n_families)
        self.width = int(width)
        self.n_rows = 0  # rows learnt (the multivalid draws' stream positions)
        if multivalid is not None:  # per level, bucket and cell: sum of alpha - miss, count
            shape = (multivalid.levels().shape[0], int(multivalid.buckets), 4)
            self.mvp_v, self.mvp_n = np.zeros(shape), np.zeros(shape)
        self._allocate(4)

    def _allocate(self, cells: int) -> None:
        mv = self.__dict__.get("mvp_v")
        if mv is not None and mv.shape[2] < cells:
            for k in ("mvp_v", "mvp_n"):
                a = self.__dict__[k]
                grown = np.zeros((a.shape[0], a.shape[1], cells))
                grown[:, :, : a.shape[2]] = a
                self.__dict__[k] = grown
        W, old = self.width, self.__dict__.get("meta")
        meta = np.zeros((cells, 2), np.int64)
        order = np.zeros((cells, W), np.int64)
        pos = np.full((cells, W), -1, np.int64)
        ss = np.zeros((cells, W))
        if old is not None:
            k = old.shape[0]
            meta[:k], order[:k], pos[:k], ss[:k] = self.meta, self.order, self.pos, self.ss
        self.meta, self.order, self.pos, self.ss = meta, order, pos, ss

    def commit(self, new: list) -> None:
        """Add the cells of ``new`` (from :meth:`lookup`), growing the windows' arrays."""
        super().commit(new)
        if self.n_cells > self.meta.shape[0]:
            self._allocate(max(self.n_cells, 2 * self.meta.shape[0]))

    def run(self, ids, lo, hi, y, learn: bool, alphas) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``, each ``(n, levels)``: the rows' intervals from the windows
        before each row, the row's score entering them after when ``learn``."""
        n, A = ids.shape[0], alphas.shape[0]
        out_lo, out_hi = np.empty((n, A)), np.empty((n, A))
        _PASS(ids, np.ascontiguousarray(lo, np.float64), np.ascontiguousarray(hi, np.float64),
              np.ascontiguousarray(y, np.float64), bool(learn), alphas, self.meta, self.order,
              self.pos, self.ss, out_lo, out_hi)  # fmt: skip
        return out_lo, out_hi

    def run_multivalid(self, ids, lo, hi, y, learn: bool, rule: Multivalid, seed: int):
        """:meth:`run` with multivalid thresholds, at every level of ``rule`` (the draws at the
        rows' stream positions, from :attr:`n_rows`)."""
        n, R = ids.shape[0], self.mvp_v.shape[0]
        out_lo, out_hi = np.empty((n, R)), np.empty((n, R))
        _MVP_PASS(ids, np.ascontiguousarray(lo, np.float64), np.ascontiguousarray(hi, np.float64),
                  np.ascontiguousarray(y, np.float64), bool(learn), rule.levels(),
                  float(rule.eta), int(seed), int(self.n_rows), self.mvp_v, self.mvp_n, out_lo,
                  out_hi)  # fmt: skip
        if learn:
            self.n_rows += n
        return out_lo, out_hi

    def run_sets(self, ids, scores, use, learn: bool, alphas, rule: Multivalid | None = None,
                 seed: int = 0) -> np.ndarray:  # fmt: skip
        """Prediction sets: ``(n, levels)`` the rows' score thresholds from the windows before
        each row (``inf``: every class), each row with a score (``use``) entering them after
        when ``learn``.  With a multivalid ``rule``: its thresholds at each of its levels (a
        row without a score is given ``inf`` and teaches nothing)."""
        scores = np.ascontiguousarray(scores, np.float64)
        use = np.ascontiguousarray(use, np.bool_)
        n = scores.shape[0]
        if rule is not None:  # (the score as a base interval [-1, 1] centred at 0: s = |y|)
            lo = np.where(use, -1.0, -np.inf)
            _, hi = self.run_multivalid(ids, lo, np.ones(n), scores, learn, rule, seed)
            return hi
        thr = np.empty((n, alphas.shape[0]))
        _SET_PASS(ids, scores, use & bool(learn), alphas, self.meta, self.order, self.pos,
                  self.ss, thr)  # fmt: skip
        return thr

    def scores(self, family: int, value) -> np.ndarray:
        """The window of a group (``family=None``: the pool), ascending."""
        c = 0 if family is None else self.vocab[family].get(_key(value))
        if c is None:
            return np.zeros(0)
        return self.ss[c, : self.meta[c, 1]].copy()

    def nbytes(self) -> int:
        mvp = [self.__dict__[k] for k in ("mvp_v", "mvp_n") if k in self.__dict__]
        return sum(a.nbytes for a in (self.meta, self.order, self.pos, self.ss, *mvp))
