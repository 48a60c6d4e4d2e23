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
from contextlib import ExitStack

import numpy as np

from . import metrics as M
from .streams import ArrayStream, Stream  # ArrayStream: also importable from here (it was)
from .streams.base import check_n


# ------------------------------------------------------------------------------------------------
class PrequentialResult:
    """What :func:`prequential` measured: totals, windows, timings.

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

    def __init__(self, *, model, stream, alphas, blocks, step, window, ris_range, timing,
                 change_points):  # fmt: skip
        self.model, self.stream, self.alphas = model, stream, tuple(alphas)
        self.blocks, self.step, self.window = blocks, step, window
        self.ris_range = ris_range
        self.change_points = list(change_points)
        whole = M.merge(blocks) if len(blocks) else np.zeros(blocks.shape[1])
        self.rho = float(whole[M.YMAX] - whole[M.YMIN]) if whole[M.N] > 0 else float("nan")
        self.totals = M.summarize(whole, self.alphas, self.rho, ris_range == "running")
        self.totals.update(timing)
        self.totals["range_y"] = self.rho

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
        complete = nb if nb and self.blocks[-1, M.N] == self.step else nb - 1
        ends = range(k, complete + 1) if complete >= k else ([nb] if nb else [])
        rows = [
            M.summarize(
                M.merge(self.blocks[max(0, e - k) : e]),
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
    chunk_size: int = 10_000,
    progress: bool = False,
) -> PrequentialResult:
    """Evaluate ``model`` test-then-train on ``stream``.

    Parameters
    ----------
    model
        A streamforest model (an interval method gives interval metrics, a tree or forest point
        metrics), or a River regressor (a River interval regressor such as
        ``conformal.RegressionJackknife`` gives its interval at its own ``confidence_level``).
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
        Rows per compiled pass.  Results do not depend on it.
    progress
        Show a progress bar on stderr (needs rich: ``pip install 'streamforest[cli]'``).
    """
    from .intervals.base import check_alphas

    if isinstance(stream, tuple) and len(stream) == 2:
        stream = ArrayStream(*stream)
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a streamforest Stream or an (X, y) pair, got {stream!r}")
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
    total = stream.n if n is None else check_n(n)
    if total is None:
        raise ValueError("the stream is unbounded: say how many rows to evaluate with n=...")
    if stream.n is not None:
        total = min(total, stream.n)
    window = check_n(window)
    step = window if step is None else check_n(step)
    if window % step:
        raise ValueError(f"window ({window}) must be a multiple of step ({step})")
    if ris_range not in ("stream", "running"):
        raise ValueError(f"ris_range must be 'stream' or 'running', got {ris_range!r}")
    chunk_size = check_n(chunk_size)

    blocks = np.zeros((max(1, -(-total // step)), M.n_columns(len(levels))))
    carry = M.new_carry()
    names = stream.feature_names
    bar = _progress(total, f"{type(model).__name__}") if progress else None
    note = ExitStack()  # while a kernel compiles (first use only), the bar says so
    if bar is not None:
        note.enter_context(_compile_note(*bar, type(model).__name__))
    row, model_seconds, peak_model = 0, 0.0, 0
    start = time.perf_counter()
    try:
        for X, y in stream.chunks(chunk_size):
            if row >= total:
                break
            if len(y) > total - row:
                X, y = X[: total - row], y[: total - row]
            y = np.ascontiguousarray(y, dtype=np.float64)
            t0 = time.perf_counter()
            if kind == "intervals":
                pred, iv = model.predict_learn_many(X, y, alpha=list(levels))
                lo = np.ascontiguousarray(iv[:, :, 0])
                hi = np.ascontiguousarray(iv[:, :, 1])
            elif kind == "point":
                pred = model.predict_learn_many(X, y)
                lo = hi = np.empty((len(y), 0))
            else:
                pred, lo, hi = _river_pass(model, X, y, names, bool(levels))
            model_seconds += time.perf_counter() - t0
            pred = np.ascontiguousarray(pred, dtype=np.float64)
            M.accumulate(y, pred, lo, hi, row, step, blocks, carry)
            row += len(y)
            peak_model = max(peak_model, int(getattr(model, "memory_bytes", 0) or 0))
            if bar is not None:
                bar[0].update(bar[1], completed=row)
    finally:
        note.close()
        if bar is not None:
            bar[0].stop()
    seconds = time.perf_counter() - start
    used = max(1, -(-row // step))
    timing = {
        "seconds": seconds,
        "examples_per_second": row / seconds if seconds > 0 else float("nan"),
        "model_seconds": model_seconds,
        "model_memory_mb": peak_model / 2**20,
        "peak_rss_mb": _peak_rss_mb(),
    }
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
    )


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


def _compile_note(progress, task, label: str):
    """While a streamforest kernel compiles, the bar's label says so."""
    from .compilation import watch

    return watch(
        on_start=lambda: progress.update(task, description=f"{label} (compiling…)"),
        on_end=lambda: progress.update(task, description=label),
    )


__all__ = ["ArrayStream", "PrequentialResult", "prequential"]
