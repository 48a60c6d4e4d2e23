"""What :func:`streamforest.evaluate.prequential` measured: :class:`PrequentialResult` (a
regressor's totals, windows and conditional coverage) and :class:`ClassificationResult` (a
classifier's and its prediction sets')."""

from __future__ import annotations

import json
import math

import numpy as np

from . import metrics as point_metrics
from .intervals.diagnostics import table_lines, width_lines


# ------------------------------------------------------------------------------------------------
class PrequentialResult:
    """What :func:`prequential` measured for a regressor: totals, windows, timings (a
    classifier's result is a :class:`ClassificationResult`).

    Attributes
    ----------
    totals : dict
        Metrics over the whole run (see :mod:`streamforest.metrics`), with ``seconds``,
        ``examples_per_second``, ``model_seconds`` and memory figures.
    alphas : tuple
        The significance levels evaluated (empty for a model without intervals).
    window, step : int
        Window size and the rows between window ends (``step == window``: tumbling windows).
    """

    task = "regression"

    def __init__(self, *, model, stream, alphas, blocks, step, window, ris_range, timing,
                 change_points, groups=None, width_bins=None):  # fmt: skip
        self.model, self.stream, self.alphas = model, stream, tuple(alphas)
        self.blocks, self.step, self.window = blocks, step, window
        self.ris_range = ris_range
        self.change_points = list(change_points)
        whole = point_metrics.merge(blocks) if len(blocks) else np.zeros(blocks.shape[1])
        self.rho = (
            float(whole[point_metrics.YMAX] - whole[point_metrics.YMIN])
            if whole[point_metrics.N] > 0
            else float("nan")
        )
        self.totals = point_metrics.summarize(whole, self.alphas, self.rho, ris_range == "running")
        self.totals.update(timing)
        self.totals["range_y"] = self.rho
        #: Per group of each family evaluated with ``groups=``: MER and width at every level,
        #: and the worst group (:meth:`streamforest.intervals.diagnostics.GroupReport.summary`).
        edges = width_bins.edges() if width_bins is not None else None
        self.groups = groups.summary(self.rho, edges) if groups is not None else {}
        #: Conditional coverage by interval width: per level, MER and mean width in bins of
        #: about equal rows, the infinite intervals, the worst bin
        #: (:meth:`streamforest.intervals.diagnostics.WidthBins.summary`).
        self.width_bins = width_bins.summary(self.alphas, edges) if width_bins is not None else {}

    @property
    def n(self) -> int:
        return self.totals["n"]

    def windows(self) -> dict:
        """Per-window metrics as arrays: ``end`` (row index after the window's last row), the point
        metrics, and ``intervals[alpha][metric]``.  Sliding windows (``step < window``) start once
        a full window has been seen; the last, partial block is left out unless it is the only
        one."""
        k = self.window // self.step
        nb = len(self.blocks)
        complete = nb if nb and self.blocks[-1, point_metrics.N] == self.step else nb - 1
        ends = range(k, complete + 1) if complete >= k else ([nb] if nb else [])
        rows = [
            point_metrics.summarize(
                point_metrics.merge(self.blocks[max(0, e - k) : e]),
                self.alphas,
                self.rho,
                self.ris_range == "running",
            )
            for e in ends
        ]
        out: dict = {"end": np.array([min(e * self.step, self.n) for e in ends], dtype=np.int64)}
        for key in ("n", "mae", "rmse", "rmae", "rrse", "r2"):
            out[key] = np.array([r[key] for r in rows])
        if self.alphas:
            out["intervals"] = {
                lvl: {m: np.array([r["intervals"][lvl][m] for r in rows]) for m in METRIC_KEYS}
                for lvl in self.totals["intervals"]
            }
        return out

    def to_dict(self, windows: bool = True) -> dict:
        """JSON-ready dict: ``model``, ``stream``, the totals at top level (``n``, ``mae``,
        ``rmse``, ..., ``seconds``, ``examples_per_second``), ``intervals[alpha]`` (``mer``,
        ``ris``, ``utility``, ...), and the ``windows`` arrays as lists."""
        out = {"model": self.model, "stream": self.stream, "alphas": list(self.alphas)}
        out.update(self.totals)
        out.update(window=self.window, step=self.step, ris_range=self.ris_range,
                   change_points=self.change_points)  # fmt: skip
        if self.groups:
            out["groups"] = _group_json(self.groups)
        if getattr(self, "width_bins", None):
            out["width_bins"] = {_key(a): lv for a, lv in self.width_bins.items()}
        if windows:
            out["windows"] = _lists(self.windows())
        return _clean(out)

    def save_json(self, path) -> None:
        with open(path, "w") as fh:
            json.dump(self.to_dict(), fh, indent=1, allow_nan=False)

    def table(self) -> str:
        """The totals as a plain-text table."""
        t = self.totals
        lines = [
            f"model   {self.model}",
            f"stream  {self.stream}",
            f"n {t['n']:,}   {t['seconds']:.2f} s   {t['examples_per_second']:,.0f} examples/s   "
            f"model memory {t['model_memory_mb']:.1f} MB   peak RSS {t['peak_rss_mb']:.0f} MB",
            f"MAE {t['mae']:.4f}   RMSE {t['rmse']:.4f}   RMAE {t['rmae']:.4f}   "
            f"RRSE {t['rrse']:.4f}   R2 {t['r2']:.4f}",
        ]
        if self.alphas:
            head = f"{'alpha':>6} {'MER':>7} {'RIS':>7} {'utility':>8} {'q-loss':>8} {'MPIW':>10}"
            lines += ["", head]
            for lvl in t["intervals"].values():
                lines.append(
                    f"{lvl['alpha']:>6g} {lvl['mer']:>7.4f} {lvl['ris']:>7.4f} "
                    f"{lvl['utility']:>8.4f} {lvl['quantile_loss']:>8.4f} {lvl['mpiw']:>10.4g}"
                )
        if getattr(self, "width_bins", None):
            lines += width_lines(self.width_bins)
        if self.groups:
            lines += table_lines(self.groups)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<PrequentialResult {self.model} on {self.stream}: n={self.n}>"

    def plot(self, path=None, title: str | None = None):
        """Windowed MER (with the alpha lines), RIS and MAE over the stream, drift points marked;
        saved to ``path`` if given.  Returns the matplotlib figure."""
        from .plotting import plot_prequential

        return plot_prequential(self, path=path, title=title)


METRIC_KEYS = (
    "mer",
    "coverage",
    "ris",
    "mpiw",
    "quantile_loss",
    "interval_score",
    "utility",
    "n_infinite",
)


def _group_json(groups: dict) -> dict:
    """The per-group summary with string keys (group values, levels) for JSON."""
    return {
        str(name): {
            "groups": {str(v): {"n": g["n"], "intervals": {_key(a): lv for a, lv in
                                                          g["intervals"].items()}}
                       for v, g in fam["groups"].items()},
            "worst": {_key(a): {**w, "group": str(w["group"])} for a, w in fam["worst"].items()},
        }
        for name, fam in groups.items()
    }  # fmt: skip


def _lists(d):
    return {k: _lists(v) if isinstance(v, dict) else v.tolist() for k, v in d.items()}


def _clean(v):
    """NaN/inf to None so the JSON is strict."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


_POINT_KEYS = ("accuracy", "kappa", "kappa_m", "kappa_t", "macro_f1", "log_loss")
_SET_KEYS = ("coverage", "mean_set_size", "singletons", "empty")


class ClassificationResult(PrequentialResult):
    """What :func:`prequential` measured for a classifier: the same interface as
    :class:`PrequentialResult` (``totals``, ``windows()``, ``to_dict``, ``save_json``, ``table``,
    ``plot``), with the metrics of :mod:`streamforest.classification_metrics`.

    Attributes
    ----------
    totals : dict
        ``accuracy``, ``kappa``, ``kappa_m``, ``kappa_t``, ``macro_f1``, ``log_loss``, ``n``,
        ``n_classes``, timings and memory; for a model with prediction sets
        ``sets[alpha]`` = ``coverage``, ``mean_set_size``, ``singletons``, ``empty``.
    """

    task = "classification"

    def __init__(self, *, model, stream, alphas, metrics, set_metrics, step, window, timing,
                 change_points, chunk_size, groups=None, width_bins=None):  # fmt: skip
        self.model, self.stream, self.alphas = model, stream, tuple(alphas)
        self.step, self.window, self.chunk_size = step, window, chunk_size
        self.ris_range = None
        self.change_points = list(change_points)
        self.metrics, self.set_metrics = metrics, set_metrics
        t = metrics.totals()
        self.totals = {"n": metrics.n, "n_classes": len(metrics.classes)}
        self.totals.update({k: t[k] for k in _POINT_KEYS})
        if self.alphas:
            self.totals["sets"] = {
                _key(a): {"alpha": a, **{k: m.totals()[k] for k in _SET_KEYS}}
                for a, m in zip(self.alphas, set_metrics, strict=True)
            }
        self.totals.update(timing)
        #: Prediction sets' conditional coverage: per group (``groups=``: the share of sets
        #: missing the label as ``mer``, the mean set size as ``mpiw``) and by set size.
        edges = width_bins.edges() if width_bins is not None else None
        self.groups = groups.summary(math.nan, edges) if groups is not None else {}
        self.width_bins = width_bins.summary(self.alphas, edges) if width_bins is not None else {}

    def windows(self) -> dict:
        """Per-window metrics as arrays: ``end`` (row index after the window's last row), the
        classification metrics, and ``sets[alpha][metric]``.  As for regression, windows start
        once a full window has been seen and a last partial block is left out unless it is the
        only one."""
        k = self.window // self.step
        nb = self.metrics.n_blocks
        complete = nb if nb and self.metrics.n % self.step == 0 else nb - 1
        ends = np.arange(k, complete + 1) if complete >= k else np.array([nb] if nb else [], int)
        idx = ends - 1
        c = self.metrics.curves(window=self.window) if nb else {}
        out: dict = {"end": np.minimum(ends * self.step, self.n).astype(np.int64)}
        for key in _POINT_KEYS:
            out[key] = c[key][idx] if nb else np.zeros(0)
        if self.alphas:
            out["sets"] = {}
            for a, m in zip(self.alphas, self.set_metrics, strict=True):
                cs = m.curves(window=self.window) if nb else {}
                out["sets"][_key(a)] = {k: cs[k][idx] if nb else np.zeros(0) for k in _SET_KEYS}
        return out

    def to_dict(self, windows: bool = True) -> dict:
        """JSON-ready dict: ``task``, ``model``, ``stream``, the totals at top level
        (``accuracy``, ``kappa``, ...), ``sets[alpha]`` and the ``windows`` arrays as lists."""
        out = {"task": self.task, "model": self.model, "stream": self.stream,
               "alphas": list(self.alphas)}  # fmt: skip
        out.update(self.totals)
        out.update(window=self.window, step=self.step, chunk_size=self.chunk_size,
                   change_points=self.change_points, classes=[repr(c) for c in
                   self.metrics.classes])  # fmt: skip
        if self.groups:
            out["groups"] = _group_json(self.groups)
        if self.width_bins:
            out["size_bins"] = {_key(a): lv for a, lv in self.width_bins.items()}
        if windows:
            out["windows"] = _lists(self.windows())
        return _clean(out)

    def table(self) -> str:
        t = self.totals
        lines = [
            f"model   {self.model}",
            f"stream  {self.stream}",
            f"n {t['n']:,}   {t['n_classes']} classes   {t['seconds']:.2f} s   "
            f"{t['examples_per_second']:,.0f} examples/s   model memory "
            f"{t['model_memory_mb']:.1f} MB   peak RSS {t['peak_rss_mb']:.0f} MB",
            f"accuracy {t['accuracy']:.4f}   kappa {t['kappa']:.4f}   kappa-M {t['kappa_m']:.4f}"
            f"   kappa-T {t['kappa_t']:.4f}   macro F1 {t['macro_f1']:.4f}   "
            f"log loss {t['log_loss']:.4f}",
        ]
        if self.alphas:
            lines += ["", f"{'alpha':>6} {'coverage':>9} {'mean size':>10} {'singletons':>11} "
                      f"{'empty':>7}"]  # fmt: skip
            for lvl in t["sets"].values():
                lines.append(
                    f"{lvl['alpha']:>6g} {lvl['coverage']:>9.4f} {lvl['mean_set_size']:>10.3f} "
                    f"{lvl['singletons']:>11.4f} {lvl['empty']:>7.4f}"
                )
        if self.width_bins:
            lines += width_lines(self.width_bins, width="size")
        if self.groups:
            lines += table_lines(self.groups, width="size")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ClassificationResult {self.model} on {self.stream}: n={self.n}>"

    def plot(self, path=None, title: str | None = None):
        """Windowed accuracy and kappa and, for prediction sets, coverage (with the ``1 - alpha``
        lines) and mean set size over the stream, drift points marked, below the sets'
        conditional coverage (MER by set size and per group); saved to ``path`` if given.
        Returns the matplotlib figure."""
        from .plotting import finish_windowed, windowed_figure

        w = self.windows()
        sets = w.get("sets", {})
        panels = ["accuracy"] + (["coverage", "mean_set_size"] if sets else [])
        fig, axes = windowed_figure(len(panels), self.width_bins, self.groups, "set size")
        x = w["end"]
        for ax, panel in zip(axes, panels, strict=True):
            if panel == "accuracy":
                ax.plot(x, w["accuracy"], color="C0", lw=1.2, label="accuracy")
                ax.plot(x, w["kappa"], color="C7", lw=1.0, label="kappa")
                ax.set_ylabel("accuracy, kappa")
                ax.legend(loc="lower right", fontsize=8, frameon=False)
            else:
                for i, (lvl, m) in enumerate(sets.items()):
                    c = f"C{i % 6}"
                    ax.plot(x, m[panel], color=c, lw=1.2, label=f"alpha = {lvl}")
                    if panel == "coverage":
                        ax.axhline(1 - float(lvl), color=c, ls="--", lw=0.8)
                ax.set_ylabel("coverage" if panel == "coverage" else "mean set size")
                if panel == "coverage":
                    ax.legend(loc="lower right", fontsize=8, frameon=False)
        return finish_windowed(fig, axes, self, title, path)


def _key(alpha: float) -> str:
    return f"{float(alpha):g}"
