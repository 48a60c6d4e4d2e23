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
    set_misses,
)
from .results import METRIC_KEYS, ClassificationResult, PrequentialResult  # noqa: F401
from .streams import ArrayStream, Stream  # ArrayStream: also importable from here (it was)
from .streams.base import check_n


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
            chunk_size=chunk_size, progress=progress, groups=groups,
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
    groups=None,
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

    Prediction sets also get their conditional coverage: the share of sets missing the label
    (MER) by set size (``result.width_bins``, bins of about equal rows) and, with ``groups`` (a
    column or a list, as for :func:`prequential`), per group (``result.groups``: MER, mean set
    size, the worst group).
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
    by_size = WidthBins(len(levels)) if levels else None
    report, columns = None, []
    if groups is not None and levels:
        columns = group_columns(groups, list(names))
        report = GroupReport([names[j] for j in columns], levels)
    X_of = [None]

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
        X_of[0] = X
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
        if by_size is not None:
            index = {_plain(c): k for k, c in enumerate(cols)}
            label_cols = np.array([index.get(_plain(v), -1) for v in np.asarray(y).tolist()],
                                  dtype=np.int64)  # fmt: skip
            measured = set_misses(sets, label_cols)
            by_size.add(*measured)
            if report is not None:
                Xc = np.asarray(X_of[0])
                report.add([Xc[:, j] for j in columns], None, None, None, measured)

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
        groups=report,
        width_bins=by_size,
    )


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


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
