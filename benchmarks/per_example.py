"""Per-example speed (issue 46's targets) and chunk throughput, against River's tree.

Everything runs on stationary Friedman #1 (``streams.Friedman(function=1, seed=...)``, 10
features), converted once, before any timing, to River-style dicts ``{"x0": ..., "x9": ...}``.
The peer is River's ``tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())``, timed in
the same run and interleaved with ours (this 2-core machine is shared and noisy): each of our timed
runs is paired with a fresh River tree fed the same examples, the two alternating by blocks of
``--block`` (1000) examples, so both see the same load.  Of ``--repeats`` such pairs the table
shows the one with the median ratio (ours / River); the details list every ratio, the best rates
and the ratio of CPU times (``time.process_time``, less sensitive to other processes).

1. Per example (``--rows``, 20k): test-then-train, one dict at a time; a fresh model per run.
   - ``HoeffdingTreeRegressor()`` ``predict_one`` + ``learn_one``: >= 15x River's tree;
   - ``CPApproximate(forest=OnlineForestRegressor(n_trees=10))``
     ``predict_interval_one(x, alpha=0.1)`` + ``learn_one``: >= 4x River's single tree;
   - ``OnlineQRF(forest=OnlineForestRegressor(n_trees=10))``, the same: >= 3x River's tree;
   - for information: ``OnlineForestRegressor(n_trees=10)`` (point), ``CPExact``,
     ``ConformalQRF(alphas=(0.1,))``, ``GaussianInterval`` and ``NormalizedConformal`` (10 trees).
   Every model is warmed up first (untimed): a throwaway copy learns all the rows with
   ``learn_many``, then ``--warmup`` examples go through the timed methods of it and of a fresh
   one.  The slowest step of each run and the steps over 1 ms (and 10x the median) are reported.
2. Latency (``--heldout``, 2000 held-out examples): one ``predict_interval_one`` call of the
   trained CPApproximate and OnlineQRF (median, the better of two passes: <= 3 us; p90 for
   information), and of the tree's ``predict_one`` and ``learn_one`` beside River's.
3. Batch (``--batch-rows``, 100k; chunks of ``--chunk`` = 1000 rows): the tree's
   ``predict_learn_many`` rows/s vs River's tree per example on the same rows, alternating by blocks
   of ``--batch-block`` (20k) rows (>= 30x); ``OnlineQRF`` and ``CPApproximate`` (10 trees,
   ``n_jobs=2``) ``predict_learn_many(X, y, alpha=0.1)`` per chunk: >= 150k and >= 250k rows/s (best
   run); for information the same with ``n_jobs=1`` and in one call over all rows.
4. Bounds (information): what a per-example call costs beyond its compiled work, in process time
   per example on new models over the ``--rows`` rows, the measures alternating: River's tree; the
   tree's and the 10-tree forest's full path (``predict_one`` + ``learn_one``); the same through
   their compiled per-example object alone (``engine_.example_path()``: the dict encoded and the
   kernel run, one call each, no Python method around it); two public calls that do nothing (a
   model's lock and method frames); the forest tree by tree in one ``predict_learn_many``.

    python benchmarks/per_example.py [--rows 20000] [--batch-rows 100000] [--repeats 3]
        [--quick] [--sections per-example,latency,batch,bounds] [--json PATH]
        [--block 1000] [--chunk 1000] [--batch-block 20000] [--heldout 2000] [--warmup 300]
        [--seed 42]

Ends with one table: measure, ours, peer, ratio, target, PASS/FAIL (``info`` rows have no
target); the load average at the start and the end.  ``--json`` writes every number (default
none; put it under ``results/``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("per-example", "latency", "batch", "bounds")
ALPHA = 0.1
RIVER = "River HoeffdingTreeRegressor(QOSplitter)"


# ------------------------------------------------------------------------------------------------
# data, models
def friedman(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from streamforest import streams

    return streams.Friedman(function=1, n=n, seed=seed).arrays()


def as_dicts(X: np.ndarray) -> list[dict]:
    keys = [f"x{k}" for k in range(X.shape[1])]
    return [dict(zip(keys, row, strict=True)) for row in X.tolist()]


def our_models() -> dict:
    """name -> (label, factory(seed), kind, target ratio to River's tree or None)."""
    import streamforest as sf

    def forest(**kw):
        return sf.OnlineForestRegressor(n_trees=10, **kw)

    def method(cls, **kw):
        return lambda s: cls(forest=forest(), seed=s, **kw)

    return {
        "tree": ("HoeffdingTreeRegressor()", lambda s: sf.HoeffdingTreeRegressor(seed=s), "point",
                 15.0),
        "cpa": ("CPApproximate(10 trees)", method(sf.CPApproximate), "interval", 4.0),
        "qrf": ("OnlineQRF(10 trees)", method(sf.OnlineQRF), "interval", 3.0),
        "forest": ("OnlineForestRegressor(10 trees)", lambda s: forest(seed=s), "point", None),
        "cpe": ("CPExact(10 trees)", method(sf.CPExact), "interval", None),
        "cqrf": ("ConformalQRF(alphas=(0.1,), 10 trees)",
                 method(sf.ConformalQRF, alphas=(ALPHA,)), "interval", None),
        "gauss": ("GaussianInterval(10 trees)", method(sf.GaussianInterval), "interval", None),
        "normalized": ("NormalizedConformal(10 trees), the default",
                       method(sf.NormalizedConformal), "interval", None),
    }  # fmt: skip


def river_tree():
    from river import tree

    return tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())


# ------------------------------------------------------------------------------------------------
# timed loops
def run_loop(model, data, kind: str) -> np.ndarray:
    """Test-then-train over ``data`` one example at a time; returns the ``len(data) + 1``
    timestamps (start, then after each example)."""
    pc = time.perf_counter
    stamps = [0.0] * (len(data) + 1)
    learn = model.learn_one
    if kind == "interval":
        predict = model.predict_interval_one
        stamps[0] = pc()
        for i, (x, y) in enumerate(data, 1):
            predict(x, alpha=ALPHA)
            learn(x, y)
            stamps[i] = pc()
    else:
        predict = model.predict_one
        stamps[0] = pc()
        for i, (x, y) in enumerate(data, 1):
            predict(x)
            learn(x, y)
            stamps[i] = pc()
    return np.array(stamps)


def summarise(steps: np.ndarray, cpu: float) -> dict:
    """Rate and step statistics of one model's timed run (``steps``: seconds per example)."""
    total = float(steps.sum())
    med = float(np.median(steps))
    return {
        "seconds": total,
        "rate": steps.shape[0] / total,
        "cpu_seconds": cpu,
        "cpu_rate": steps.shape[0] / max(cpu, 1e-9),
        "median_step_us": med * 1e6,
        "max_step_ms": float(steps.max()) * 1e3,
        "max_step_at": int(steps.argmax()),
        "slow_steps": int((steps > max(10 * med, 1e-3)).sum()),  # > 1 ms and > 10x the median
    }


def paired_run(model, kind: str, data, block: int) -> tuple[dict, dict]:
    """Timed test-then-train of ``model`` and of a fresh River tree over the same examples,
    alternating blocks of ``block`` examples (which side goes first alternates too), so both see
    the same load on this shared machine.  Returns ``(ours, river)`` summaries."""
    sides = {"ours": (model, kind), "river": (river_tree(), "point")}
    n = len(data)
    steps = {k: np.empty(n) for k in sides}
    cpu = dict.fromkeys(sides, 0.0)
    gc.collect()
    for b, a in enumerate(range(0, n, block)):
        part = data[a : a + block]
        for side in ("ours", "river") if b % 2 == 0 else ("river", "ours"):
            m, k = sides[side]
            c0 = time.process_time()
            stamps = run_loop(m, part, k)
            cpu[side] += time.process_time() - c0
            steps[side][a : a + len(part)] = np.diff(stamps)
    return summarise(steps["ours"], cpu["ours"]), summarise(steps["river"], cpu["river"])


def median_pair(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """``(ours, peer, ratio)`` of the repeat whose ratio ours/peer is the median (the lower
    middle for an even count)."""
    ranked = sorted(pairs, key=lambda p: p[0] / p[1])
    o, r = ranked[(len(ranked) - 1) // 2]
    return o, r, o / r


def warm_up(factory, kind: str, X, y, data, warm: int, seed: int) -> float:
    """Untimed: a throwaway model learns every row with ``learn_many``, then ``warm`` examples
    go through the timed methods of it and of a fresh model."""
    t0 = time.perf_counter()
    m = factory(seed + 1000)
    if hasattr(m, "learn_many"):
        m.learn_many(X, y)
    run_loop(m, data[:warm], kind)
    run_loop(factory(seed + 1001), data[:warm], kind)
    return time.perf_counter() - t0


def per_call(fn, items, warm: int = 200) -> np.ndarray:
    """Per-call seconds of ``fn(item)`` over ``items`` (after ``warm`` untimed calls)."""
    pc = time.perf_counter_ns
    for it in items[:warm]:
        fn(it)
    out = np.empty(len(items))
    for i, it in enumerate(items):
        t0 = pc()
        fn(it)
        out[i] = pc() - t0
    return out * 1e-9


def _cpu(fn) -> float:
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


# ------------------------------------------------------------------------------------------------
# sections
def section_per_example(args, report, keep) -> None:
    n = args.rows
    X, y = friedman(n + args.heldout, args.seed)
    data = list(zip(as_dicts(X), y.tolist(), strict=True))
    train, held = data[:n], data[n:]
    keep["heldout"] = held
    models = our_models()
    print(f"\n== 1. per example: Friedman #1, {n:,} rows, one dict at a time, predict then learn")
    print("warm-up (untimed):")
    for name, (label, factory, kind, _) in models.items():
        t = warm_up(factory, kind, X[:n], y[:n], train, args.warmup, args.seed)
        print(f"  {label:<40s} {t:7.2f} s", flush=True)
        report["warmup_seconds"][name] = t
    run_loop(river_tree(), train[: args.warmup], "point")

    runs = {name: [] for name in models}
    order = list(models)
    for r in range(args.repeats):
        rot = order[r % len(order) :] + order[: r % len(order)]
        for name in rot:
            label, factory, kind, _ = models[name]
            m = factory(args.seed)
            res, rv = paired_run(m, kind, train, args.block)
            res["river"] = rv
            runs[name].append(res)
            keep.setdefault("trained", {})[name] = m
            print(f"  repeat {r + 1}: {label:<40s} {res['rate']:9,.0f}/s   "
                  f"River {rv['rate']:7,.0f}/s   ratio {res['rate'] / rv['rate']:6.3f}"
                  f"   max step {res['max_step_ms']:6.1f} ms", flush=True)  # fmt: skip
    report["per_example"] = {"rows": n, "block": args.block, "runs": runs}
    print("  per model: the repeat with the median ratio (ours, River, ratio); all ratios; best")
    print("  rates; ratio of CPU times (median); slowest step; steps > 1 ms and > 10x the median")
    for name, (label, _, kind, target) in models.items():
        rs = runs[name]
        ours, peer, ratio = median_pair([(r["rate"], r["river"]["rate"]) for r in rs])
        ratios = ", ".join(f"{r['rate'] / r['river']['rate']:.3f}" for r in rs)
        cpu_ratio = float(np.median([r["cpu_rate"] / r["river"]["cpu_rate"] for r in rs]))
        best = max(r["rate"] for r in rs)
        rbest = max(r["river"]["rate"] for r in rs)
        print(f"  {label:<38s} {ours:8,.0f}/s ({1e6 / ours:6.2f} us/ex) vs {peer:7,.0f}/s "
              f"({1e6 / peer:5.1f} us): {ratio:.3f}x  [{ratios}]  best {best:,.0f} vs "
              f"{rbest:,.0f}/s; CPU {cpu_ratio:.3f}x; max step "
              f"{max(r['max_step_ms'] for r in rs):.1f} ms; slow steps "
              f"{sum(r['slow_steps'] for r in rs)}")  # fmt: skip
        what = "predict_interval_one" if kind == "interval" else "predict_one"
        report.row("per-example", f"{label} {what}+learn_one, ex/s", ours, peer, ratio, target,
                   "ratio")  # fmt: skip


def section_latency(args, report, keep) -> None:
    print(f"\n== 2. latency per call, trained models, {args.heldout} held-out examples")
    held = keep.get("heldout")
    trained = keep.get("trained", {})
    models = our_models()
    if held is None or not trained:  # the section runs alone: train the models here
        n = args.rows
        X, y = friedman(n + args.heldout, args.seed)
        data = list(zip(as_dicts(X), y.tolist(), strict=True))
        held = data[n:]
        for name in ("tree", "cpa", "qrf"):
            _, factory, kind, _ = models[name]
            warm_up(factory, kind, X[:n], y[:n], data[:n], args.warmup, args.seed)
            m = factory(args.seed)
            run_loop(m, data[:n], kind)
            trained[name] = m
    xs = [x for x, _ in held]
    pairs = list(held)
    rv = river_tree()  # River's tree, trained on the same rows, for the per-call reference
    X, y = friedman(args.rows, args.seed)
    run_loop(rv, list(zip(as_dicts(X), y.tolist(), strict=True)), "point")
    labels = {k: models[k][0] for k in ("tree", "cpa", "qrf")}
    out = {}

    def stat(name, what, secs):
        med, p90 = float(np.median(secs)) * 1e6, float(np.percentile(secs, 90)) * 1e6
        out[f"{name} {what}"] = {"median_us": med, "p90_us": p90, "max_us": float(secs.max()) * 1e6}
        print(f"  {name + ' ' + what:<58s} median {med:8.2f} us   p90 {p90:8.2f} us"
              f"   max {secs.max() * 1e6:9.1f} us")  # fmt: skip
        return med, p90

    gc.collect()
    for name in ("cpa", "qrf"):
        m = trained[name]
        passes = [per_call(lambda x, m=m: m.predict_interval_one(x, alpha=ALPHA), xs, warm=w)
                  for w in (200, 0)]  # fmt: skip
        secs = min(passes, key=np.median)  # the better of two passes over the held-out rows
        med, p90 = stat(labels[name], "predict_interval_one", secs)
        report.row("latency", f"{labels[name]} predict_interval_one median, us", med, None,
                   None, 3.0, "max")  # fmt: skip
        report.row("latency", f"{labels[name]} predict_interval_one p90, us", p90, None, None,
                   None, "info")  # fmt: skip
    m = trained["tree"]
    med_t, _ = stat(labels["tree"], "predict_one", per_call(m.predict_one, xs))
    med_r, _ = stat(RIVER, "predict_one", per_call(rv.predict_one, xs))
    report.row("latency", "tree predict_one median, us", med_t, med_r, med_t / med_r, None, "info")
    for name in ("tree", "cpa", "qrf"):  # learn_one last (it changes the models), same rows
        m = trained[name]
        med, _ = stat(labels[name], "learn_one", per_call(lambda p, m=m: m.learn_one(*p), pairs,
                                                          warm=0))  # fmt: skip
        if name == "tree":
            med_r, _ = stat(RIVER, "learn_one", per_call(lambda p: rv.learn_one(*p), pairs, warm=0))
            report.row("latency", "tree learn_one median, us", med, med_r, med / med_r, None,
                       "info")  # fmt: skip
        else:
            report.row("latency", f"{labels[name]} learn_one median, us", med, None, None, None,
                       "info")  # fmt: skip
    report["latency"] = out


def section_batch(args, report, keep) -> None:
    import streamforest as sf

    n, c = args.batch_rows, args.chunk
    X, y = friedman(n, args.seed + 1)
    data = list(zip(as_dicts(X), y.tolist(), strict=True))
    print(f"\n== 3. batch: Friedman #1, {n:,} rows, chunks of {c} rows")

    def forest(j):
        return sf.OnlineForestRegressor(n_trees=10, n_jobs=j)

    def method(cls, j):
        return lambda: cls(forest=forest(j), seed=args.seed)

    configs = {
        "qrf2": ("OnlineQRF(10 trees, n_jobs=2) predict_learn_many", method(sf.OnlineQRF, 2), c,
                 150e3, "min"),
        "cpa2": ("CPApproximate(10 trees, n_jobs=2) predict_learn_many",
                 method(sf.CPApproximate, 2), c, 250e3, "min"),
        "qrf1": ("OnlineQRF(10 trees, n_jobs=1) predict_learn_many", method(sf.OnlineQRF, 1), c,
                 None, "info"),
        "cpa1": ("CPApproximate(10 trees, n_jobs=1) predict_learn_many",
                 method(sf.CPApproximate, 1), c, None, "info"),
        "qrf2_all": ("OnlineQRF(10 trees, n_jobs=2), one call on all rows",
                     method(sf.OnlineQRF, 2), n, None, "info"),
        "cpa2_all": ("CPApproximate(10 trees, n_jobs=2), one call on all rows",
                     method(sf.CPApproximate, 2), n, None, "info"),
    }  # fmt: skip

    def run(make, chunk):
        m = make()
        gc.collect()
        t0 = time.perf_counter()
        for a in range(0, n, chunk):
            m.predict_learn_many(X[a : a + chunk], y[a : a + chunk], alpha=ALPHA)
        return n / (time.perf_counter() - t0)

    def tree_vs_river():
        """Our tree (``predict_learn_many`` per chunk) and River's tree (per example) over the
        same rows, alternating by blocks of ``--batch-block`` rows; ``(ours, River)`` rows/s."""
        t, rv = sf.HoeffdingTreeRegressor(seed=args.seed), river_tree()
        secs = [0.0, 0.0]
        step = max(c, args.batch_block // c * c)
        gc.collect()
        for b, a in enumerate(range(0, n, step)):
            for side in (0, 1) if b % 2 == 0 else (1, 0):
                t0 = time.perf_counter()
                if side == 0:
                    for k in range(a, min(a + step, n), c):
                        t.predict_learn_many(X[k : k + c], y[k : k + c])
                else:
                    run_loop(rv, data[a : a + step], "point")
                secs[side] += time.perf_counter() - t0
        return n / secs[0], n / secs[1]

    t0 = time.perf_counter()
    for _, make, chunk, _, _ in configs.values():
        run(make, chunk)
    sf.HoeffdingTreeRegressor(seed=args.seed).predict_learn_many(X[:c], y[:c])
    print(f"  warm-up (untimed) {time.perf_counter() - t0:.2f} s")
    rates = {k: [] for k in configs}
    tree, river = [], []
    keys = list(configs)
    for r in range(args.repeats):
        ours, rv = tree_vs_river()
        tree.append(ours)
        river.append(rv)
        line = [f"tree {ours:,.0f}/s vs River/ex {rv:,.0f}/s ({ours / rv:.1f}x)"]
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            _, make, chunk, _, _ = configs[k]
            rates[k].append(run(make, chunk))
            line.append(f"{k} {rates[k][-1]:,.0f}/s")
        print(f"  repeat {r + 1}: " + ", ".join(line), flush=True)
    ours, peer, ratio = median_pair(list(zip(tree, river, strict=True)))
    label = "HoeffdingTreeRegressor() predict_learn_many"
    report.row("batch", f"{label}, rows/s", ours, peer, ratio, 30.0, "ratio")
    print(f"  {label:<58s} median-ratio repeat {ours:,.0f} vs River/ex {peer:,.0f}: {ratio:.1f}x")
    for k, (label, _, _, target, kind) in configs.items():
        best = max(rates[k])
        report.row("batch", f"{label}, rows/s", best, None, None, target, kind)
        print(f"  {label:<58s} best {best:11,.0f} rows/s")
    report["batch"] = {"rows": n, "chunk": c, "tree": tree, "river_per_example": river,
                       "rates": rates}  # fmt: skip


def one_call_loop(model, data) -> None:
    """``predict_one`` + ``learn_one`` of each example through the model's compiled per-example
    object alone (the model's method when the object leaves a call to the Python path)."""
    predict, learn = model.predict_one, model.learn_one
    px = model.engine_.example_path()
    p, lo = px.predict, px.learn
    for x, y in data:
        if p(model, x) is None:
            predict(x)
        r = lo(model, x, y, 1.0)
        if r is False:
            learn(x, y)
        elif r is not None:
            model.engine_.learn_on(r, y, 1.0)


def section_bounds(args, report, keep) -> None:
    import streamforest as sf
    from streamforest.base import Estimator

    class Idle(Estimator):
        """Two public calls that do nothing: what a model's lock and method frames cost."""

        def predict_one(self, x):
            return 0.0

        def learn_one(self, x, y, w=1.0):
            return None

    n = args.rows
    X, y = friedman(n, args.seed)
    data = list(zip(as_dicts(X), y.tolist(), strict=True))
    print(f"\n== 4. bounds: Friedman #1, {n:,} rows per example (process time per example; the "
          "measures' order alternates)")  # fmt: skip

    def tree():
        return sf.HoeffdingTreeRegressor(seed=args.seed)

    def forest():
        return sf.OnlineForestRegressor(n_trees=10, seed=args.seed)

    def started(make):
        m = make()
        m.learn_one(*data[0])  # (the trees exist: the model keeps its per-example object)
        return m

    measures = {
        "river": ("River's tree, predict_one + learn_one",
                  lambda: run_loop(river_tree(), data, "point")),
        "tree": ("tree, predict_one + learn_one", lambda: run_loop(started(tree), data[1:],
                                                                    "point")),
        "tree_px": ("tree, its per-example object alone (one call each)",
                    lambda: one_call_loop(started(tree), data[1:])),
        "idle": ("two public calls that do nothing (lock, frames)",
                 lambda: run_loop(Idle(), data, "point")),
        "forest": ("forest (10 trees), predict_one + learn_one",
                   lambda: run_loop(started(forest), data[1:], "point")),
        "forest_px": ("forest (10 trees), its per-example object alone",
                      lambda: one_call_loop(started(forest), data[1:])),
        "forest_batch": ("forest (10 trees), tree by tree in one predict_learn_many call",
                         lambda: forest().predict_learn_many(X, y)),
    }  # fmt: skip
    t0 = time.perf_counter()
    for _, fn in measures.values():  # warm-up (untimed)
        fn()
    print(f"  warm-up (untimed) {time.perf_counter() - t0:.2f} s")
    keys = list(measures)
    res = {k: [] for k in keys}
    for r in range(args.repeats):
        for k in keys if r % 2 == 0 else keys[::-1]:
            gc.collect()
            res[k].append(_cpu(measures[k][1]) / n * 1e6)
        print(f"  repeat {r + 1}: " + ", ".join(f"{k} {res[k][-1]:.2f}" for k in keys) + " us/ex",
              flush=True)  # fmt: skip
    med = {k: float(np.median(v)) for k, v in res.items()}
    river = med["river"]
    print("  medians, us per example; River / ours")
    for k in keys:
        label, v = measures[k][0], med[k]
        print(f"  {label:<66s} {v:7.2f}   River/ours {river / v:6.2f}x")
        if k != "river":
            report.row("bounds", f"{label}, us/ex", v, river, river / v, None, "info")
    report["bounds"] = {"rows": n, "runs": res, "medians": med}


# ------------------------------------------------------------------------------------------------
class Report(dict):
    """Numbers for ``--json`` plus the rows of the final table."""

    def __init__(self):
        super().__init__(warmup_seconds={})
        self.rows = []

    def row(self, section, measure, ours, peer, ratio, target, kind) -> None:
        """``kind``: 'ratio' (ratio >= target), 'min' (ours >= target), 'max' (ours <= target)
        or 'info'."""
        if kind == "ratio" and target is not None:
            ok, tgt = ratio is not None and ratio >= target, f">= {target:g}x"
        elif kind == "min":
            ok, tgt = ours >= target, f">= {target:,.0f}"
        elif kind == "max":
            ok, tgt = ours <= target, f"<= {target:g}"
        else:
            ok, tgt = None, "-"
        status = "info" if ok is None else ("PASS" if ok else "FAIL")
        self.rows.append(dict(section=section, measure=measure, ours=ours, peer=peer, ratio=ratio,
                              target=tgt, status=status))  # fmt: skip


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, int) or (isinstance(v, float) and v >= 1000):
        return f"{v:,.0f}"
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def print_table(rows) -> None:
    w = max(len(r["measure"]) for r in rows)
    head = f"{'measure':<{w}}  {'ours':>11}  {'peer':>9}  {'ratio':>7}  {'target':>10}  result"
    print("\n" + head + "\n" + "-" * len(head))
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['measure']:<{w}}  {fmt(r['ours']):>11}  {fmt(r['peer']):>9}  {ratio:>7}  "
              f"{r['target']:>10}  {r['status']}")  # fmt: skip
    n_pass = sum(r["status"] == "PASS" for r in rows)
    n_tgt = sum(r["status"] in ("PASS", "FAIL") for r in rows)
    print(f"{n_pass}/{n_tgt} targets met")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="per-example rows (20000)")
    ap.add_argument("--batch-rows", type=int, default=None, help="batch rows (100000)")
    ap.add_argument("--chunk", type=int, default=1000, help="rows per batch call (1000)")
    ap.add_argument("--block", type=int, default=1000,
                    help="examples per block when ours and River alternate (1000)")  # fmt: skip
    ap.add_argument("--batch-block", type=int, default=20_000,
                    help="rows per block, batch tree vs River (20000)")  # fmt: skip
    ap.add_argument("--heldout", type=int, default=None, help="latency examples (2000)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up examples per model (300)")
    ap.add_argument("--repeats", type=int, default=None, help="timed runs per model (3)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 3000 rows, 20k batch rows, 500 held out, 1 run")  # fmt: skip
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated subset of {','.join(SECTIONS)}")  # fmt: skip
    ap.add_argument("--json", metavar="PATH", help="write every number to this JSON file")
    args = ap.parse_args()
    q = args.quick
    for k, full, quick in [("rows", 20_000, 3_000), ("batch_rows", 100_000, 20_000),
                           ("heldout", 2_000, 500), ("warmup", 300, 200),
                           ("repeats", 3, 1)]:  # fmt: skip
        if getattr(args, k) is None:
            setattr(args, k, quick if q else full)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = set(sections) - set(SECTIONS)
    if bad:
        ap.error(f"unknown sections {sorted(bad)}; choose from {SECTIONS}")

    import river

    import streamforest

    t_start = time.perf_counter()
    report = Report()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    report["meta"] = {
        "argv": sys.argv, "commit": commit, "streamforest": streamforest.__file__,
        "river": river.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(), "args": vars(args),
    }  # fmt: skip
    print(f"streamforest {commit} from {Path(streamforest.__file__).parent}; river "
          f"{river.__version__}; load {os.getloadavg()[0]:.2f}")  # fmt: skip
    keep: dict = {}
    if "per-example" in sections:
        section_per_example(args, report, keep)
    if "latency" in sections:
        section_latency(args, report, keep)
    keep.clear()
    if "batch" in sections:
        section_batch(args, report, keep)
    if "bounds" in sections:
        section_bounds(args, report, keep)
    elapsed = time.perf_counter() - t_start
    report["meta"]["seconds"] = elapsed
    report["meta"]["loadavg_end"] = os.getloadavg()
    report["table"] = report.rows
    print_table(report.rows)
    load0 = report["meta"]["loadavg_start"][0]
    print(f"total {elapsed:.0f} s; load average at the start {load0:.2f}, at the end "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=float))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
