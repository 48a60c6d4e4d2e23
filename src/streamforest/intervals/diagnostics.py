"""Conditional coverage: the intervals' error rate and width per group and per width bin, and
the worst group.

:class:`GroupReport` is what the prequential evaluator (``prequential(..., groups=...)``) and
``streamforest run --groups COL`` keep: for each family of groups (a column of the stream) and
each of its values, the rows, the misses and the widths at every level.  A marginal method can
meet ``alpha`` on average while one group's error is far above it: the report shows it.

:class:`WidthBins` is the error rate by the width of the interval (every evaluation of
intervals keeps it): the rows' widths in fine log-spaced bins (widths within 1/32 of each other
share one), merged when summarised into :data:`WIDTH_BINS` bins of about equal rows (and the
infinite intervals apart).  An interval method whose narrow intervals miss more than its wide
ones is not adaptive to ``x``: coverage conditional on the width is the check (Angelopoulos &
Bates 2021, "size-stratified coverage").  Each group's bins are the same as all rows'.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._groups import _factorize


def group_columns(groups, names: list) -> list[int]:
    """The stream's column index of each family of ``groups`` (a column name or index, or a
    list of them)."""
    items = list(groups) if isinstance(groups, (list, tuple)) else [groups]
    if not items:
        raise ValueError("groups must name at least one column")
    out = []
    for g in items:
        if isinstance(g, str) and g in names:
            out.append(names.index(g))
        elif isinstance(g, str) and g.isdigit() and int(g) < len(names):
            out.append(int(g))
        elif isinstance(g, numbers.Integral) and not isinstance(g, bool) and 0 <= g < len(names):
            out.append(int(g))
        else:
            raise ValueError(f"groups: no column {g!r} in the stream (columns {names[:30]})")
    return out


#: Width bins of the summaries.
WIDTH_BINS = 5
_PER_KEY = 1.0 / math.log1p(1.0 / 32)  # fine bins: log(width) in steps of log(1 + 1/32)
_ZERO, _INFINITE = -(2**62), 2**62  # the keys of empty (or point) and infinite intervals


def _width_keys(width: np.ndarray) -> np.ndarray:
    keys = np.full(width.shape, _INFINITE, np.int64)
    finite = np.isfinite(width)
    pos = finite & (width > 0)
    keys[finite & ~pos] = _ZERO
    keys[pos] = np.floor(np.log(width[pos]) * _PER_KEY).astype(np.int64)
    return keys


class WidthBins:
    """Rows, misses and width sums per fine width bin, at each level (see the module
    docstring)."""

    def __init__(self, n_levels: int):
        # key -> [rows, misses, width sum, smallest width, largest width]
        self.tables: list[dict] = [{} for _ in range(n_levels)]

    def add(self, miss: np.ndarray, width: np.ndarray, keys: np.ndarray) -> None:
        """Rows ``(n, levels)``: their misses, widths and :func:`_width_keys`."""
        for a, table in enumerate(self.tables):
            uniq, inv = np.unique(keys[:, a], return_inverse=True)
            inv = inv.reshape(-1)
            rows = np.bincount(inv, minlength=uniq.shape[0])
            misses = np.bincount(inv, miss[:, a].astype(np.float64), uniq.shape[0])
            w = np.where(np.isfinite(width[:, a]), width[:, a], 0.0)
            wsum = np.bincount(inv, w, uniq.shape[0])
            small = np.full(uniq.shape[0], np.inf)
            large = np.full(uniq.shape[0], -np.inf)
            np.minimum.at(small, inv, w)
            np.maximum.at(large, inv, w)
            for j, k in enumerate(uniq.tolist()):
                c = table.get(k)
                if c is None:
                    table[k] = [int(rows[j]), float(misses[j]), float(wsum[j]), float(small[j]),
                                float(large[j])]  # fmt: skip
                else:
                    c[0] += int(rows[j])
                    c[1] += float(misses[j])
                    c[2] += float(wsum[j])
                    c[3] = min(c[3], float(small[j]))
                    c[4] = max(c[4], float(large[j]))

    def edges(self, bins: int = WIDTH_BINS) -> list[list[int]]:
        """Per level, the first fine key of each of up to ``bins`` bins of about equal rows
        (finite intervals; each fine bin its own when there are at most ``bins``, e.g. the
        sizes of prediction sets)."""
        out = []
        for table in self.tables:
            keys = sorted(k for k in table if k != _INFINITE)
            counts = np.array([table[k][0] for k in keys], dtype=np.float64)
            total = counts.sum()
            starts: list[int] = []
            before = 0.0
            for k, c in zip(keys, counts.tolist(), strict=True):
                if not starts or len(keys) <= bins or before >= total * len(starts) / bins:
                    starts.append(k)
                before += c
            out.append(starts)
        return out

    def summary(self, alphas: tuple, edges: list[list[int]]) -> dict:
        """``{alpha: {"bins": [{"lo", "hi", "n", "mer", "mpiw"}], "infinite": {"n", "mer"},
        "worst": {"bin", "lo", "hi", "mer", "n"}}}``: each bin's widths ``[lo, hi]`` (the
        smallest and largest seen in it; 0: empty intervals), rows, error rate and mean width
        (bins of no rows: a group's, left out of its range, NaN); the worst bin is the one of
        the highest error rate."""
        out = {}
        for a, alpha in enumerate(alphas):
            table, starts = self.tables[a], edges[a]
            acc = [[0, 0.0, 0.0, math.inf, -math.inf] for _ in starts]
            for k, (n, miss, wsum, small, large) in table.items():
                if k == _INFINITE or not starts:
                    continue
                c = acc[max(0, int(np.searchsorted(starts, k, side="right")) - 1)]
                c[0] += n
                c[1] += miss
                c[2] += wsum
                c[3] = min(c[3], small)
                c[4] = max(c[4], large)
            bins = []
            for n, miss, wsum, small, large in acc:
                bins.append({"lo": small if n else math.nan, "hi": large if n else math.nan,
                             "n": n, "mer": miss / n if n else math.nan,
                             "mpiw": wsum / n if n else math.nan})  # fmt: skip
            inf = table.get(_INFINITE, [0, 0.0])
            worst = max((j for j in range(len(bins)) if bins[j]["n"]),
                        key=lambda j: bins[j]["mer"], default=None)  # fmt: skip
            out[alpha] = {
                "bins": bins,
                "infinite": {"n": inf[0], "mer": inf[1] / inf[0] if inf[0] else math.nan},
                "worst": None if worst is None else {"bin": worst, **bins[worst]},
            }
        return out


def interval_misses(y, lo, hi):
    """``(miss, width, keys)`` of intervals ``(n, levels)``: the misses, widths and fine width
    keys (an empty set reported as a point: width 0)."""
    miss = (y[:, None] < lo) | (y[:, None] > hi)
    with np.errstate(invalid="ignore"):
        width = hi - lo
    return miss, width, _width_keys(width)


def set_misses(sets: np.ndarray, label_cols: np.ndarray):
    """``(miss, size, keys)`` of prediction sets ``(n, levels, classes)`` whose labels are the
    columns ``label_cols`` (-1: a label in no column, missed): the misses, the set sizes (the
    "widths" of :class:`WidthBins` and :class:`GroupReport`) and their width keys."""
    n = sets.shape[0]
    known = label_cols >= 0
    hit = np.zeros(sets.shape[:2], bool)
    hit[known] = sets[np.flatnonzero(known), :, label_cols[known]]
    size = sets.sum(axis=2).astype(np.float64)
    return ~hit, size, _width_keys(size) if n else np.zeros(size.shape, np.int64)


class GroupReport:
    """Per-group counts of a prequential run: ``families`` the column names, ``alphas`` the
    levels.  :meth:`add` takes a chunk's group columns, targets and intervals."""

    def __init__(self, families: list, alphas: tuple):
        self.families = list(families)
        self.alphas = tuple(alphas)
        # per family: {value: [rows, misses (A), finite width sum (A), infinite (A)]}
        self.counts: list[dict] = [{} for _ in self.families]

    def add(self, cols: list, y, lo, hi, measured=None) -> None:
        """A chunk: ``cols`` each family's values, ``y`` targets, ``lo``/``hi`` ``(n, A)``
        (``measured``: their :func:`interval_misses`, if computed already)."""
        miss, width, keys = interval_misses(y, lo, hi) if measured is None else measured
        finite = np.isfinite(width)
        wf = np.where(finite, width, 0.0)
        for f, col in enumerate(cols):
            values, codes = _factorize(col)
            table = self.counts[f]
            for k, v in enumerate(values):
                rows = codes == k
                c = table.get(v)
                if c is None:
                    A = len(self.alphas)
                    c = table[v] = [0, np.zeros(A), np.zeros(A), np.zeros(A), WidthBins(A)]
                c[0] += int(rows.sum())
                c[1] += miss[rows].sum(axis=0)
                c[2] += wf[rows].sum(axis=0)
                c[3] += (~finite[rows]).sum(axis=0)
                c[4].add(miss[rows], width[rows], keys[rows])

    def summary(self, rho: float, edges: list | None = None) -> dict:
        """``{family: {"groups": {value: {"n", "intervals": {alpha: {"mer", "mpiw",
        "n_infinite", "width_bins"}}}}, "worst": {alpha: {"group", "mer", "n"}}}}``; an
        infinite interval counts as width ``rho`` (as the marginal ``mpiw``); the worst group is
        the one of the highest error rate; ``width_bins``: the group's error rate in each of the
        bins ``edges`` (:meth:`WidthBins.edges` of all rows; none without)."""
        out = {}
        for name, table in zip(self.families, self.counts, strict=True):
            groups, worst = {}, {}
            for v in sorted(table, key=_order):
                n, miss, wsum, ninf, bins = table[v]
                by_width = bins.summary(self.alphas, edges) if edges is not None else None
                levels = {}
                for a, alpha in enumerate(self.alphas):
                    mer = float(miss[a] / n) if n else float("nan")
                    extra = ninf[a] * rho if ninf[a] else 0.0  # (sets: none infinite, no rho)
                    mpiw = float((wsum[a] + extra) / n) if n else float("nan")
                    levels[alpha] = {"mer": mer, "mpiw": mpiw, "n_infinite": int(ninf[a])}
                    if by_width is not None:
                        levels[alpha]["width_bins"] = [b["mer"] for b in by_width[alpha]["bins"]]
                    w = worst.get(alpha)
                    if n and (w is None or mer > w["mer"]):
                        worst[alpha] = {"group": v, "mer": mer, "n": n}
                groups[v] = {"n": n, "intervals": levels}
            out[name] = {"groups": groups, "worst": worst}
        return out


def _order(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def table_lines(summary: dict, width: str = "MPIW") -> list[str]:
    """The per-group table of a :meth:`GroupReport.summary` (with each group's error rate per
    width bin, narrowest first, when the summary has them)."""
    lines = []
    for name, fam in summary.items():
        lines += ["", f"by {name}:", f"{'group':>10} {'n':>8} {'alpha':>6} {'MER':>7} {width:>10}"
                  f"  MER by {'size' if width == 'size' else 'width'} bin"]  # fmt: skip
        for v, g in fam["groups"].items():
            for alpha, lv in g["intervals"].items():
                bins = " ".join(f"{m:.3f}" if m == m else "-" for m in lv.get("width_bins", ()))
                lines.append(f"{str(v):>10} {g['n']:>8,} {alpha:>6g} {lv['mer']:>7.4f} "
                             f"{lv['mpiw']:>10.4g}  {bins}".rstrip())  # fmt: skip
        for alpha, w in fam["worst"].items():
            lines.append(f"worst group at alpha {alpha:g}: {w['group']} (MER {w['mer']:.4f}, "
                         f"{w['mer'] - alpha:+.4f} from alpha)")  # fmt: skip
    return lines


def width_lines(summary: dict, width: str = "MPIW") -> list[str]:
    """The conditional-coverage table of a :meth:`WidthBins.summary` (``width="size"``: of
    prediction sets by their size)."""
    what = "set size" if width == "size" else "interval width"
    head = (
        f"{'alpha':>6} {what.split()[-1] + ' from':>11} {'to':>10} {'n':>8} {'MER':>7} {width:>10}"
    )
    lines = ["", f"by {what} (bins of about equal rows):", head]
    for alpha, lv in summary.items():
        for b in lv["bins"]:
            lines.append(f"{alpha:>6g} {b['lo']:>11.4g} {b['hi']:>10.4g} {b['n']:>8,} "
                         f"{b['mer']:>7.4f} {b['mpiw']:>10.4g}")  # fmt: skip
        if lv["infinite"]["n"]:
            lines.append(f"{alpha:>6g} {'infinite':>22} {lv['infinite']['n']:>8,} "
                         f"{lv['infinite']['mer']:>7.4f}")  # fmt: skip
        w = lv["worst"]
        if w is not None:
            lines.append(f"worst {what.split()[-1]} bin at alpha {alpha:g}: [{w['lo']:.4g}, "
                         f"{w['hi']:.4g}] (MER {w['mer']:.4f}, {w['mer'] - alpha:+.4f} from "
                         "alpha)")  # fmt: skip
    return lines
