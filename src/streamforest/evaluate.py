"""Prequential (test-then-train) evaluation of any streamforest model, and of River models.

:func:`prequential` reads a stream chunk by chunk.  For each chunk, a streamforest model runs its
own compiled prequential pass (``predict_learn_many``: every row is predicted, with its intervals,
*before* it is learnt, exactly as one ``predict`` then ``learn`` per row), and a compiled kernel
adds the rows to the metric blocks (:mod:`streamforest.metrics`).  A River model (anything with
``learn_one``/``predict_one``) is driven row by row from Python, and its rows go through the same
kernel, so both are measured identically on the same data.
"""

from __future__ import annotations

import inspect
import json
import math
import sys
import time

import numpy as np

import streamforest._core as _core

from . import metrics as point_metrics
from .intervals.diagnostics import (
    GroupReport,
    WidthBins,
    group_columns,
    interval_misses,
    table_lines,
    width_lines,
)
from .streams import ArrayStream, Stream  # ArrayStream: also importable from here (it was)
from .streams.base import check_n


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


# ------------------------------------------------------------------------------------------------
def _kind(model) -> str:
    if hasattr(model, "predict_sets") and hasattr(model, "predict_learn_many"):
        return "sets"  # ConformalClassifier, AdaptiveConformalClassifier
    if hasattr(model, "predict_proba") and hasattr(model, "learn_many"):
        return "classifier"  # a streamforest classifier: arrays, chunk by chunk
    if hasattr(model, "predict_proba_one") and hasattr(model, "learn_one"):
        return "river-classifier"
    if hasattr(model, "predict_learn_many") and hasattr(model, "predict_interval"):
        return "intervals"  # an interval method, or a wrapper such as AdaptiveConformal
    if hasattr(model, "predict_learn_many"):
        return "point"
    if hasattr(model, "learn_one") and hasattr(model, "predict_one"):
        return "river"
    raise TypeError(
        f"cannot evaluate {type(model).__name__}: it needs predict_learn_many (streamforest) or "
        f"learn_one and predict_one (River)"
    )


def _river_interval_alpha(model):
    """The significance level of a River interval regressor, or None for a point regressor."""
    try:
        takes = "with_interval" in inspect.signature(model.predict_one).parameters
    except (TypeError, ValueError):
        takes = False
    if not takes or not getattr(model, "gives_intervals", True):
        return None
    level = getattr(model, "confidence_level", None)
    return None if level is None else 1 - float(level)


def _river_pass(model, X, y, names, with_interval: bool):
    n = len(y)
    pred = np.empty(n)
    lo = np.full((n, 1 if with_interval else 0), -np.inf)
    hi = np.full((n, 1 if with_interval else 0), np.inf)
    for i, (row, t) in enumerate(zip(X.tolist(), y.tolist(), strict=True)):
        x = dict(zip(names, row, strict=True))
        if with_interval:
            iv = model.predict_one(x, with_interval=True)
            if iv is None or iv.lower is None:  # nothing to say yet
                pred[i] = 0.0
            else:
                lo[i, 0], hi[i, 0] = iv.lower, iv.upper
                pred[i] = (iv.lower + iv.upper) / 2 if math.isfinite(iv.upper - iv.lower) else 0.0
        else:
            p = model.predict_one(x)
            pred[i] = 0.0 if p is None else p
        model.learn_one(x, t)
    return pred, lo, hi


def prequential(
    model,
    stream,
    alphas=0.1,
    n: int | None = None,
    window: int = 1000,
    step: int | None = None,
    ris_range: str = "stream",
    chunk_size: int | None = None,
    progress: bool = False,
    groups=None,
) -> PrequentialResult:
    """Evaluate ``model`` test-then-train on ``stream``; the task comes from the model.

    Parameters
    ----------
    model
        A streamforest model (an interval method gives interval metrics, a tree or forest point
        metrics), or a River regressor (a River interval regressor such as
        ``conformal.RegressionJackknife`` gives its interval at its own ``confidence_level``).
        A classifier (``predict_proba``) gives a :class:`ClassificationResult`: see
        :func:`prequential_classification`.
    stream
        A :class:`streamforest.streams.Stream`, or a pair ``(X, y)`` of arrays.
    alphas
        Significance level(s) of the intervals (ignored by point models).
    n
        Rows to evaluate (default: the whole stream; needed for an unbounded one).
    window, step
        Window size, and rows between window ends: ``step=None`` (or ``window``) gives tumbling
        windows; a smaller ``step`` gives sliding windows of ``window`` rows every ``step`` rows
        (``window`` must be a multiple of ``step``).  Metrics are kept per ``step`` rows, so memory
        grows by one small row per ``step`` rows.
    ris_range
        ``"stream"`` (the paper's RIS: widths / range of y over the evaluated stream) or
        ``"running"`` (each width / range of the targets seen so far).
    chunk_size
        Rows per compiled pass (default 10,000).  Results do not depend on it.
    progress
        Show a progress bar on stderr (needs rich: ``pip install 'streamforest[cli]'``).
    groups
        A column of the stream (name or index), or a list of them: the interval metrics are
        also kept per group of each (conditional coverage: MER and width per group, and the
        worst group; ``result.groups``).  Evaluation only: a model calibrates per group with its
        own ``groups`` parameter.
    """
    from .intervals.base import check_alphas

    if _kind(model) in CLASSIFICATION_KINDS:
        return prequential_classification(
            model, stream, alphas=alphas, n=n, window=window, step=step,
            chunk_size=chunk_size, progress=progress,
        )  # fmt: skip
    chunk_size = 10_000 if chunk_size is None else chunk_size
    stream = _checked_stream(stream)
    kind = _kind(model)
    levels, _ = check_alphas(alphas)
    levels = tuple(float(a) for a in levels)
    if kind == "point":
        levels = ()
    elif kind == "river":
        river_alpha = _river_interval_alpha(model)
        if river_alpha is None:
            levels = ()
        elif len(levels) != 1 or not math.isclose(levels[0], river_alpha, abs_tol=1e-12):
            raise ValueError(
                f"this River model's interval level is fixed when it is built (alpha = "
                f"{river_alpha:g}); evaluate it with alphas={river_alpha:g}"
            )
    total, window, step = _checked_span(stream, n, window, step)
    if ris_range not in ("stream", "running"):
        raise ValueError(f"ris_range must be 'stream' or 'running', got {ris_range!r}")
    chunk_size = check_n(chunk_size)

    blocks = np.zeros((max(1, -(-total // step)), point_metrics.n_columns(len(levels))))
    carry = point_metrics.new_carry()
    names = stream.feature_names
    report = None
    by_width = WidthBins(len(levels)) if levels else None
    if groups is not None and levels:
        columns = group_columns(groups, list(names))
        report = GroupReport([names[j] for j in columns], levels)
    X_of = [None]  # the chunk's features, for the group report

    def run_chunk(X, y):
        y = np.ascontiguousarray(y, dtype=np.float64)
        if kind == "intervals":
            pred, iv = model.predict_learn_many(X, y, alpha=list(levels))
            lo = np.ascontiguousarray(iv[:, :, 0])
            hi = np.ascontiguousarray(iv[:, :, 1])
        elif kind == "point":
            pred = model.predict_learn_many(X, y)
            lo = hi = np.empty((len(y), 0))
        else:
            pred, lo, hi = _river_pass(model, X, y, names, bool(levels))
        X_of[0] = X
        return y, pred, lo, hi

    def record(out, row):
        y, pred, lo, hi = out
        pred = np.ascontiguousarray(pred, dtype=np.float64)
        _core.metrics.accumulate(y, pred, lo, hi, row, step, blocks, carry)
        if by_width is not None:
            measured = interval_misses(y, lo, hi)
            by_width.add(*measured)
        if report is not None:
            Xc = np.asarray(X_of[0])
            report.add([Xc[:, j] for j in columns], y, lo, hi, measured)

    row, timing = _test_then_train(model, stream, total, chunk_size, progress, run_chunk, record)
    used = max(1, -(-row // step))
    return PrequentialResult(
        model=repr(model),
        stream=repr(stream),
        alphas=levels,
        blocks=blocks[:used] if row else blocks[:0],
        step=step,
        window=window,
        ris_range=ris_range,
        timing=timing,
        change_points=[c for c in getattr(stream, "change_points", []) if c < row],
        groups=report,
        width_bins=by_width,
    )


# ------------------------------------------------------------------------------------------------
# classification

CLASSIFICATION_KINDS = ("sets", "classifier", "river-classifier")
#: Rows a classifier is tested on before it learns them, when it has no exact prequential pass.
CLASSIFIER_CHUNK = 1000
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
                 change_points, chunk_size):  # fmt: skip
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
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ClassificationResult {self.model} on {self.stream}: n={self.n}>"

    def plot(self, path=None, title: str | None = None):
        """Windowed accuracy and kappa and, for prediction sets, coverage (with the ``1 - alpha``
        lines) and mean set size over the stream, drift points marked; saved to ``path`` if
        given.  Returns the matplotlib figure."""
        from ._extras import need
        from .plotting import figure_title

        Figure = need("matplotlib.figure", "plotting").Figure
        w = self.windows()
        sets = w.get("sets", {})
        panels = ["accuracy"] + (["coverage", "mean_set_size"] if sets else [])
        fig = Figure(figsize=(8, 1.2 + 2.0 * len(panels)), layout="constrained")
        axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
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
            for cp in self.change_points:
                ax.axvline(cp, color="k", ls=":", lw=0.9)
            ax.grid(alpha=0.3)
        kind = "sliding" if self.step < self.window else "tumbling"
        drift = "; dotted: drift points" if self.change_points else ""
        axes[-1].set_xlabel(f"examples ({kind} windows of {self.window:,}{drift})")
        fig.suptitle(title or figure_title(self.model, self.stream), fontsize=9)
        if path is not None:
            fig.savefig(path, dpi=110)
        return fig


def _key(alpha: float) -> str:
    return f"{float(alpha):g}"


def _classes_of(model) -> list:
    return list(getattr(model, "classes_", ()))


def _argmax(P, cols) -> np.ndarray:
    out = np.empty(P.shape[0], dtype=object)
    if P.shape[1] == 0:
        out[:] = None
        return out
    j = np.argmax(P, axis=1)
    out[:] = [cols[k] for k in j.tolist()]
    return out


def _river_classifier_pass(model, X, y, names, cols: list):
    """Row by row: the probabilities a River classifier gives (dicts), then it learns the row.
    ``cols`` (the labels met so far, first appearance) grows; returns (predictions, P)."""
    index = {c: k for k, c in enumerate(cols)}
    rows = []
    pred = np.empty(len(y), dtype=object)
    for i, (row, t) in enumerate(zip(X.tolist(), y.tolist(), strict=True)):
        x = dict(zip(names, row, strict=True))
        p = model.predict_proba_one(x) or {}
        for c in p:
            if c not in index:
                index[c] = len(cols)
                cols.append(c)
        rows.append(p)
        pred[i] = max(p, key=p.get) if p else None
        model.learn_one(x, t)
    P = np.zeros((len(y), len(cols)))
    for i, p in enumerate(rows):
        for c, v in p.items():
            P[i, index[c]] = v
    return pred, P


def prequential_classification(
    model,
    stream,
    alphas=0.1,
    n: int | None = None,
    window: int = 1000,
    step: int | None = None,
    chunk_size: int | None = None,
    progress: bool = False,
) -> ClassificationResult:
    """Evaluate a classifier test-then-train on ``stream`` (what :func:`prequential` does for
    a classifier).

    - A model with prediction sets (:class:`~streamforest.ConformalClassifier`,
      :class:`~streamforest.AdaptiveConformalClassifier`) runs ``predict_learn_many`` chunk by
      chunk: labels, probabilities and the set at each ``alpha``, each row's set from the
      calibration set just before that row; the wrapped model's probabilities are those before
      the chunk.
    - A classifier with the array API (``predict_proba``, ``learn_many``, ``classes_``) is tested
      on a chunk, then learns it.
    - A River classifier (``predict_proba_one``, ``learn_one``) is run row by row on dicts.

    So for the first two the result depends on ``chunk_size`` (default
    :data:`CLASSIFIER_CHUNK` rows): a smaller chunk is closer to row by row.  A model that
    predicts nothing yet (no class) is counted wrong.  Metrics: see
    :mod:`streamforest.classification_metrics`; ``alphas`` is ignored by a model without sets.
    """
    from .classification_metrics import ClassificationMetrics
    from .intervals.base import check_alphas

    stream = _checked_stream(stream)
    kind = _kind(model)
    if kind not in CLASSIFICATION_KINDS:
        raise TypeError(f"{type(model).__name__} is not a classifier (no predict_proba)")
    levels, _ = check_alphas(alphas)
    levels = tuple(float(a) for a in levels) if kind == "sets" else ()
    total, window, step = _checked_span(stream, n, window, step)
    chunk_size = check_n(CLASSIFIER_CHUNK if chunk_size is None else chunk_size)
    classes = getattr(stream, "classes", None)
    metrics = ClassificationMetrics(classes=classes, step=step)
    set_metrics = [ClassificationMetrics(classes=classes, step=step) for _ in levels]
    names = stream.feature_names
    river_cols: list = []

    def run_chunk(X, y):
        sets = None
        if kind == "sets":
            pred, P, sets = model.predict_learn_many(X, y, alpha=list(levels))
            cols = _classes_of(model)
        elif kind == "classifier":
            P = np.asarray(model.predict_proba(X), dtype=np.float64)
            cols = _classes_of(model)
            model.learn_many(X, y)
            pred = None
        else:
            pred, P = _river_classifier_pass(model, X, y, names, river_cols)
            cols = list(river_cols)
        return y, pred, P, sets, cols

    def record(out, row):
        y, pred, P, sets, cols = out
        if pred is None:
            pred = _argmax(P, cols)
        if P.shape[1] < len(cols):  # classes first seen in this chunk: probability 0
            P = np.pad(P, ((0, 0), (0, len(cols) - P.shape[1])))
        metrics.update(y, pred, proba=P, columns=cols)
        for j, m in enumerate(set_metrics):
            m.update(y, pred, sets=np.ascontiguousarray(sets[:, j, :]), columns=cols)

    row, timing = _test_then_train(model, stream, total, chunk_size, progress, run_chunk, record)
    return ClassificationResult(
        model=repr(model),
        stream=repr(stream),
        alphas=levels,
        metrics=metrics,
        set_metrics=set_metrics,
        step=step,
        window=window,
        timing=timing,
        change_points=[c for c in getattr(stream, "change_points", []) if c < row],
        chunk_size=chunk_size,
    )


# ------------------------------------------------------------------------------------------------
# the evaluation loop both tasks run
def _checked_stream(stream) -> Stream:
    """``stream`` as a :class:`~streamforest.streams.Stream` (a pair ``(X, y)`` wrapped)."""
    if isinstance(stream, tuple) and len(stream) == 2:
        stream = ArrayStream(*stream)
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a streamforest Stream or an (X, y) pair, got {stream!r}")
    return stream


def _checked_span(stream, n, window, step) -> tuple[int, int, int]:
    """``(rows to evaluate, window, step)``, checked."""
    total = stream.n if n is None else check_n(n)
    if total is None:
        raise ValueError("the stream is unbounded: say how many rows to evaluate with n=...")
    if stream.n is not None:
        total = min(total, stream.n)
    window = check_n(window)
    step = window if step is None else check_n(step)
    if window % step:
        raise ValueError(f"window ({window}) must be a multiple of step ({step})")
    return total, window, step


def _test_then_train(model, stream, total, chunk_size, progress, run_chunk, record):
    """The prequential loop of both tasks: for each chunk of ``stream`` (up to ``total`` rows),
    ``run_chunk(X, y)`` (the model predicts the rows before learning them: the time it takes is
    the model's) and ``record(its output, first row)`` (the metrics).  Returns ``(rows read,
    timing and memory figures)``."""
    bar = _progress(total, f"{type(model).__name__}") if progress else None
    row, model_seconds, peak_model = 0, 0.0, 0
    start = time.perf_counter()
    try:
        for X, y in stream.chunks(chunk_size):
            if row >= total:
                break
            if len(y) > total - row:
                X, y = X[: total - row], y[: total - row]
            t0 = time.perf_counter()
            out = run_chunk(X, y)
            model_seconds += time.perf_counter() - t0
            record(out, row)
            row += len(y)
            peak_model = max(peak_model, int(getattr(model, "memory_bytes", 0) or 0))
            if bar is not None:
                bar[0].update(bar[1], completed=row)
    finally:
        if bar is not None:
            bar[0].stop()
    return row, _timing(start, row, model_seconds, peak_model)


def _timing(start: float, rows: int, model_seconds: float, peak_model: int) -> dict:
    """The timing and memory figures of a prequential run that started at ``start``
    (``time.perf_counter``) and read ``rows`` rows."""
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "examples_per_second": rows / seconds if seconds > 0 else float("nan"),
        "model_seconds": model_seconds,
        "model_memory_mb": peak_model / 2**20,
        "peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far (whole process, not just the run); NaN where
    the platform does not say (``resource`` is POSIX-only, so it is imported here, not at the
    top; on Windows the peak working set comes from ``GetProcessMemoryInfo``)."""
    try:
        import resource
    except ImportError:
        return _peak_rss_mb_windows()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (2**20 if sys.platform == "darwin" else 2**10)


def _peak_rss_mb_windows() -> float:
    if sys.platform != "win32":
        return float("nan")
    try:
        import ctypes
        from ctypes import wintypes

        class Counters(ctypes.Structure):
            _fields_ = [
                ("cb", wintypes.DWORD),
                ("PageFaultCount", wintypes.DWORD),
                ("PeakWorkingSetSize", ctypes.c_size_t),
                ("WorkingSetSize", ctypes.c_size_t),
                ("QuotaPeakPagedPoolUsage", ctypes.c_size_t),
                ("QuotaPagedPoolUsage", ctypes.c_size_t),
                ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t),
                ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
                ("PagefileUsage", ctypes.c_size_t),
                ("PeakPagefileUsage", ctypes.c_size_t),
            ]

        c = Counters()
        c.cb = ctypes.sizeof(c)
        process = ctypes.windll.kernel32.GetCurrentProcess()
        if not ctypes.windll.psapi.GetProcessMemoryInfo(process, ctypes.byref(c), c.cb):
            return float("nan")
        return c.PeakWorkingSetSize / 2**20
    except (OSError, AttributeError):
        return float("nan")


def _progress(total: int, label: str):
    from ._extras import need

    need("rich", "the progress bar (progress=True)")
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    p = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    p.start()
    return p, p.add_task(label, total=total)


__all__ = [
    "ArrayStream",
    "ClassificationResult",
    "PrequentialResult",
    "prequential",
    "prequential_classification",
]
