"""Compile streamforest's kernels ahead of time: :func:`warmup`.

Every kernel is compiled on its first call and saved to numba's on-disk cache
(:mod:`streamforest._numba_cache`); a later process loads it from there in a fraction of a
second.  :func:`warmup` runs small workloads through every model's public API so that no later
call pauses to compile.  The compile events it counts are :mod:`streamforest.compile_events`'
(whose names this module also gives: ``watch``, ``install``, ``stats``, ``cache_location``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from .compile_events import (  # noqa: F401  (also this module's names, as before)
    PREFIX,
    CompileListener,
    Watch,
    cache_location,
    install,
    logger,
    stats,
    watch,
)


# ------------------------------------------------------------------------------------------------
def _dispatchers():
    """The numba dispatchers defined at module level in streamforest's imported modules."""
    from numba.core.dispatcher import Dispatcher

    seen = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith(PREFIX) or mod is None:
            continue
        for v in list(vars(mod).values()):
            if isinstance(v, Dispatcher) and getattr(v.py_func, "__module__", None) == name:
                seen[id(v)] = v
    return list(seen.values())


def _signatures() -> int:
    return sum(len(d.signatures) for d in _dispatchers())


@dataclass
class WarmupReport:
    """What :func:`warmup` did: ``seconds`` in all; kernel signatures ``compiled`` (and the
    ``compile_seconds`` it took) and ``loaded`` from numba's on-disk cache; per model, the same
    as ``(seconds, compiled, loaded)``."""

    seconds: float = 0.0
    compiled: int = 0
    loaded: int = 0
    compile_seconds: float = 0.0
    models: dict = field(default_factory=dict)

    def _model(self, name: str, dt: float, compiled: int, loaded: int, verbose: bool) -> None:
        """Record one model's step (and say it on stderr when ``verbose``)."""
        self.models[name] = (dt, compiled, loaded)
        self.loaded += loaded
        if verbose:
            print(
                f"warmup {name}: {dt:.1f} s, {compiled} kernel signatures compiled, "
                f"{loaded} loaded",
                file=sys.stderr,
                flush=True,
            )

    def __str__(self) -> str:
        return (
            f"warmup: {len(self.models)} models in {self.seconds:.1f} s; {self.compiled} kernel "
            f"signatures compiled ({self.compile_seconds:.1f} s), {self.loaded} loaded from the "
            f"cache ({cache_location()})"
        )


def _data(n: int, seed: int = 0):
    """Friedman #1 (10 features, 5 informative) with 1% missing values, a nominal column
    ``kind`` (for DataFrames and dicts) and an abrupt drift at n/2 (trees get replaced)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    y += 5 * X[:, 4] + rng.standard_normal(n)
    kind = np.where(rng.random(n) < 0.5, "u", "v")
    y += np.where(kind == "u", 3.0, 0.0)
    y[n // 2 :] = 30 - y[n // 2 :]
    X[rng.random(X.shape) < 0.01] = np.nan
    return X, y, kind


def _tables(X, kind) -> list:
    """``X`` as an array, and (when pandas is installed) as a DataFrame with the nominal column
    ``kind``: each sliceable by rows (``.iloc`` for the frame)."""
    from ._extras import have

    tables = [X]
    if have("pandas"):
        import pandas as pd

        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        frame["kind"] = kind
        tables.append(frame.iloc)
    return tables


#: Rows of the warm-up's longer stream (its second half drifts; :func:`_long_stream`).  24,000
#: rows (before) compiled no signature more and made a warm ``warmup()`` take 36 s, not 28-30 s.
_LONG_ROWS = 12_000


def _long_stream(m, X, y, predict_all, **evaluator) -> None:
    """``m`` (built with ``n_jobs=2`` unless a lone tree) on a longer stream: threads (chunks of
    >= 256 rows; > 8,192 rows overlap learning and scoring: the evaluator's one chunk of the
    last 9,000), bigger trees (their arrays grow) and a drift (trees are replaced); the
    evaluator's metrics kernel."""
    from .evaluate import prequential
    from .streams import ArrayStream

    m.learn_many(X[:3000], y[:3000])
    predict_all(m, X[3000:4000])
    prequential(m, ArrayStream(X[3000:], y[3000:]), window=1000, **evaluator)


def _exercise(spec) -> None:
    """Every public learning and prediction path of one registry model, on small data."""
    # splits (and their kernels) early, where the model grows its trees from data
    params = {"grace_period": 50} if "grace_period" in spec.param_names() else {}

    def build(n_jobs=1):
        return spec.build(params, seed=0, n_jobs=n_jobs)

    model = build()
    levels = getattr(model, "alphas", None)
    if isinstance(levels, (tuple, list)) and levels:  # ConformalQRF: the levels it calibrates
        one, many = float(levels[0]), [float(a) for a in levels]
    else:
        one, many = 0.1, [0.1, 0.05]
    intervals = hasattr(model, "predict_interval")

    def predict_all(m, X):
        m.predict(X)
        if intervals:
            m.predict_interval(X, alpha=one)
            m.predict_interval(X, alpha=many)
        if hasattr(m, "predict_quantiles"):
            m.predict_quantiles(X, 0.5)
            m.predict_quantiles(X, [0.05, 0.5, 0.95])
        if hasattr(m, "apply"):
            m.apply(X)
            if hasattr(m, "leaf_stats") and m.n_nodes > 1:
                m.leaf_stats(int(m.apply(X[:1])[0]))

    def prequential_pass(m, X, y):
        if intervals:
            m.predict_learn_many(X, y, alpha=many)
            m.predict_learn_many(X[:100], y[:100], alpha=one)
        else:
            m.predict_learn_many(X, y)

    # River style: dicts with a nominal string feature and missing values
    X, y, kind = _data(3000)
    for i in range(300):
        x = {"a": X[i, 0], "b": X[i, 1], "c": X[i, 2], "d": X[i, 3], "kind": str(kind[i])}
        model.predict_one(x)
        if intervals and i % 50 == 0:
            model.predict_interval_one(x, alpha=one)
            model.predict_interval_one(x, alpha=many)
        model.learn_one(x, float(y[i]))

    # arrays, and a DataFrame with a nominal column (when pandas is installed)
    for rows in _tables(X, kind):
        m = build()
        predict_all(m, rows[:200])  # before any learning
        m.learn_many(rows[:1000], y[:1000])
        predict_all(m, rows[1000:])
        prequential_pass(m, rows[1000:], y[1000:])

    X, y, _ = _data(_LONG_ROWS, seed=1)
    m = build(n_jobs=1 if spec.layers == ("tree",) else 2)
    _long_stream(m, X, y, predict_all, alphas=many)


def _class_data(n: int, seed: int = 0):
    """A labelled stream for the classifiers: 4 numeric features with 1% missing values, a
    nominal column ``kind``, string labels (3 classes, a 4th from n/3 on) and an abrupt change
    at n/2 (the labels' rule flips: detectors fire, alternates start)."""
    import numpy as np

    X, _, kind = _data(n, seed)
    X = X[:, :4]
    score = X[:, 0] + np.where(kind == "u", 0.5, 0.0) - X[:, 1]
    y = np.where(score > 0.4, "hi", np.where(score > -0.2, "mid", "lo")).astype(object)
    y[n // 3 :: 7] = "rare"
    y[n // 2 :] = np.where(y[n // 2 :] == "hi", "lo", "hi")
    return X, y, kind


def _exercise_classifier(spec) -> None:
    """Every public learning and prediction path of one registry classifier (and its
    prediction sets), on small data."""

    def build(n_jobs=1):
        params = {"grace_period": 50} if "grace_period" in spec.param_names() else {}
        return spec.build(params, seed=0, n_jobs=n_jobs)

    sets = hasattr(build(), "predict_sets")

    def predict_all(m, X):
        m.predict(X)
        m.predict_proba(X)
        if sets:
            m.predict_sets(X, alpha=0.1)
            m.predict_sets(X, alpha=[0.1, 0.05])

    X, y, kind = _class_data(3000)
    model = build()
    for i in range(300):
        x = {"a": X[i, 0], "b": X[i, 1], "c": X[i, 2], "d": X[i, 3], "kind": str(kind[i])}
        model.predict_one(x)
        model.predict_proba_one(x)
        if sets and i % 50 == 0:
            model.predict_set_one(x, alpha=0.1)
        model.learn_one(x, y[i])
    for rows in _tables(X, kind):
        m = build()
        m.learn_many(rows[:1000], y[:1000])
        predict_all(m, rows[1000:])
        if sets:
            m.predict_learn_many(rows[1000:], y[1000:], alpha=[0.1, 0.05])
        else:
            m.learn_many(rows[1000:], y[1000:])
    X, y, _ = _class_data(_LONG_ROWS, seed=1)
    _long_stream(build(n_jobs=2), X, y, predict_all)


def _exercise_sketch() -> None:
    import numpy as np

    from .sketches import KLLSketch

    a, b = KLLSketch(), KLLSketch()
    a.update(1.0)
    a.update(2.0, weight=3)
    a.update_many(np.linspace(0, 1, 5000))
    b.update_many(np.linspace(1, 2, 3000), np.ones(3000, dtype=np.int64))
    a.merge(b)
    a.quantile(0.5)
    a.quantile([0.1, 0.9])
    a.rank(0.5)
    _ = a.num_retained


def warmup(
    models: Iterable[str] | str | None = None,
    verbose: bool = False,
    processes: int = 1,
) -> WarmupReport:
    """Compile (or load from numba's on-disk cache) the kernels of streamforest's estimators
    ahead of time, so that no later call pauses to compile.

    The first call of each model in a fresh environment compiles its numba kernels (seconds; longer
    for all models: ``benchmarks/cold_start.py``).  numba caches them on disk (in
    ``NUMBA_CACHE_DIR`` if set, else next to streamforest's sources), so later processes load them
    in a fraction of a second.  Call this once where that cache is written, e.g. in a Docker build
    step (with the same ``NUMBA_CACHE_DIR``, if any, as at run time)::

        RUN python -c "import streamforest; streamforest.warmup()"

    or ``streamforest warmup``.  With a warm cache it only loads the kernels and runs the workloads.
    numba keys the cache on its version and the CPU, and every kernel compiles again after any
    change of streamforest's sources (:mod:`streamforest._numba_cache`).  No kernel depends on the
    number of trees, features or levels, so one warm-up serves every model size.

    It runs small workloads through the public API of each model of
    :mod:`streamforest.registry` (interval methods, forest, tree): ``learn_one`` /
    ``predict_one`` / ``predict_interval_one`` on dicts with a nominal string feature and
    missing values; ``learn_many``, ``predict``, ``predict_learn_many``, ``predict_interval``
    (one ``alpha`` and a list) and ``predict_quantiles`` on arrays and DataFrames;
    ``n_jobs=2`` on chunks large enough to run on threads; a drift that replaces trees; the
    prequential evaluator; and :class:`streamforest.KLLSketch`.  Classifiers (and their
    prediction sets) get the same on string labels, with a class first seen mid-stream:
    ``predict_proba_one``, ``predict_set_one``, ``predict_proba``, ``predict_sets``.

    Parameters
    ----------
    models
        Registry names (``streamforest list``) or one name; default: every model (regression
        and classification), except entries whose kernels are all other entries' (a method
        over AMF or SGBT: ``ModelSpec.warmed``).
    verbose
        Print a line per model (time, kernels compiled and loaded) to stderr.
    processes
        Compile in this many processes at once (default 1: in this one).  numba compiles one
        kernel at a time per process; with ``processes=2`` on two cores a cold warm-up takes
        about half the time.  The processes share the on-disk cache: each takes the next model
        as it finishes one, and loads what another has already written.  The kernels then load
        from that cache in this process when first called (the report counts what the
        processes compiled and loaded).

    Returns
    -------
    WarmupReport
        ``seconds``, ``compiled`` and ``loaded`` kernel signatures, ``compile_seconds``, and per
        model ``(seconds, compiled, loaded)``.
    """
    from . import registry

    if models is None:  # (entries whose kernels are other entries' are not run again)
        names = [n for n in registry.names() if registry.get(n).warmed]
    else:
        names = [models] if isinstance(models, str) else list(models)
    specs = [registry.get(n) for n in names if n != _SKETCH]  # unknown: fail before any work
    if int(processes) > 1:
        sketch = [_SKETCH] if models is None or _SKETCH in names else []
        return _warmup_in_processes([s.name for s in specs] + sketch, verbose, int(processes))
    report = WarmupReport()
    t_all = time.perf_counter()
    steps = [
        (s.name, lambda s=s: (_exercise_classifier if s.task == "classification" else _exercise)(s))
        for s in specs
    ]
    if models is None or _SKETCH in names:
        steps.append(("kll-sketch", _exercise_sketch))
    with watch() as total:
        for name, run in steps:
            before = _signatures()
            t0 = time.perf_counter()
            with watch() as w:
                run()
            dt = time.perf_counter() - t0
            loaded = max(0, _signatures() - before - w.compiled)
            report._model(name, dt, w.compiled, loaded, verbose)
    report.seconds = time.perf_counter() - t_all
    report.compiled, report.compile_seconds = total.compiled, total.seconds
    logger.info("%s", report)
    return report


_SKETCH = "kll-sketch"  # the warm-up step of KLLSketch (not a registry model)


def _warm_one(name: str) -> tuple[str, float, int, int, float]:
    """A worker process's step of :func:`warmup`: one model (or the sketch)."""
    r = warmup([name])
    dt, compiled, loaded = r.models[name]  # names here are canonical (resolved by warmup)
    return name, dt, compiled, loaded, r.compile_seconds


def _spread(names: list[str]) -> list[str]:
    """The models in an order that gives the processes different kernel families first:
    classification and regression alternate (they share few kernels), each in its own order."""
    from . import registry

    cls = [n for n in names if n != _SKETCH and registry.get(n).task == "classification"]
    reg = [n for n in names if n not in cls]
    out = []
    for i in range(max(len(cls), len(reg))):
        out += reg[i : i + 1] + cls[i : i + 1]
    return out


def _warmup_in_processes(names, verbose: bool, processes: int):
    """:func:`warmup` with the models shared out to ``processes`` fresh processes (spawned, so
    each compiles on its own core; numba's cache on disk is what they share)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    report = WarmupReport()
    t0 = time.perf_counter()
    ctx = mp.get_context("spawn")
    # (not multiprocessing.Pool: a worker that dies, e.g. while re-running a main script that
    # has no ``if __name__ == "__main__":`` guard, makes a Pool start new ones for ever)
    with ProcessPoolExecutor(min(processes, len(names)), mp_context=ctx) as pool:
        steps = [pool.submit(_warm_one, name) for name in _spread(names)]
        try:
            for step in as_completed(steps):
                name, dt, compiled, loaded, secs = step.result()
                report._model(name, dt, compiled, loaded, verbose)
                report.compiled += compiled
                report.compile_seconds += secs
        except BrokenProcessPool as e:
            raise RuntimeError(
                f"warmup(processes={processes}): a worker process died. Its processes are "
                "spawned: they import the main module again, so a script must call warmup "
                "under 'if __name__ == \"__main__\":' (or use processes=1)"
            ) from e
        finally:  # on an error, the models not started yet are not run
            for step in steps:
                step.cancel()
    report.seconds = time.perf_counter() - t0
    logger.info("%s", report)
    return report


__all__ = ["WarmupReport", "cache_location", "install", "stats", "watch", "warmup"]
