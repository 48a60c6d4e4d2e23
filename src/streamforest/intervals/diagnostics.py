"""Conditional coverage: the intervals' error rate and width per group, and the worst group.

:class:`GroupReport` is what the prequential evaluator (``prequential(..., groups=...)``) and
``streamforest run --groups COL`` keep: for each family of groups (a column of the stream) and
each of its values, the rows, the misses and the widths at every level.  A marginal method can
meet ``alpha`` on average while one group's error is far above it: the report shows it.
"""

from __future__ import annotations

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


class GroupReport:
    """Per-group counts of a prequential run: ``families`` the column names, ``alphas`` the
    levels.  :meth:`add` takes a chunk's group columns, targets and intervals."""

    def __init__(self, families: list, alphas: tuple):
        self.families = list(families)
        self.alphas = tuple(alphas)
        # per family: {value: [rows, misses (A), finite width sum (A), infinite (A)]}
        self.counts: list[dict] = [{} for _ in self.families]

    def add(self, cols: list, y, lo, hi) -> None:
        """A chunk: ``cols`` each family's values, ``y`` targets, ``lo``/``hi`` ``(n, A)``."""
        miss = (y[:, None] < lo) | (y[:, None] > hi)
        width = hi - lo
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
                    c = table[v] = [0, np.zeros(A), np.zeros(A), np.zeros(A)]
                c[0] += int(rows.sum())
                c[1] += miss[rows].sum(axis=0)
                c[2] += wf[rows].sum(axis=0)
                c[3] += (~finite[rows]).sum(axis=0)

    def summary(self, rho: float) -> dict:
        """``{family: {"groups": {value: {"n", "intervals": {alpha: {"mer", "mpiw",
        "n_infinite"}}}}, "worst": {alpha: {"group", "mer", "n"}}}}``; an infinite interval
        counts as width ``rho`` (as the marginal ``mpiw``); the worst group is the one of the
        highest error rate."""
        out = {}
        for name, table in zip(self.families, self.counts, strict=True):
            groups, worst = {}, {}
            for v in sorted(table, key=_order):
                n, miss, wsum, ninf = table[v]
                levels = {}
                for a, alpha in enumerate(self.alphas):
                    mer = float(miss[a] / n) if n else float("nan")
                    mpiw = float((wsum[a] + ninf[a] * rho) / n) if n else float("nan")
                    levels[alpha] = {"mer": mer, "mpiw": mpiw, "n_infinite": int(ninf[a])}
                    w = worst.get(alpha)
                    if n and (w is None or mer > w["mer"]):
                        worst[alpha] = {"group": v, "mer": mer, "n": n}
                groups[v] = {"n": n, "intervals": levels}
            out[name] = {"groups": groups, "worst": worst}
        return out


def _order(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def table_lines(summary: dict) -> list[str]:
    """The per-group table of a :meth:`GroupReport.summary`."""
    lines = []
    for name, fam in summary.items():
        lines += ["", f"by {name}:", f"{'group':>10} {'n':>8} {'alpha':>6} {'MER':>7} {'MPIW':>10}"]
        for v, g in fam["groups"].items():
            for alpha, lv in g["intervals"].items():
                lines.append(f"{str(v):>10} {g['n']:>8,} {alpha:>6g} {lv['mer']:>7.4f} "
                             f"{lv['mpiw']:>10.4g}")  # fmt: skip
        for alpha, w in fam["worst"].items():
            lines.append(f"worst group at alpha {alpha:g}: {w['group']} (MER {w['mer']:.4f}, "
                         f"{w['mer'] - alpha:+.4f} from alpha)")  # fmt: skip
    return lines
