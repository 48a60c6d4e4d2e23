"""Per-example speed, batch throughput and recompilation: the targets of the engine rewrite.

Everything runs on stationary Friedman #1 (``streams.Friedman(function=1, seed=...)``, 10
features), converted once, before any timing, to River-style dicts ``{"x0": ..., "x9": ...}``.
The peer is River's ``tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())``, timed in
the same run and interleaved with ours (this 2-core machine is shared and noisy): each of our timed
runs is paired with a fresh River tree fed the same examples, the two alternating by blocks of
``--block`` (1000) examples, so both see the same load.  Of ``--repeats`` such pairs the table
shows the one with the median ratio (ours / River); the details list every ratio, the best rates
and the ratio of CPU times (``time.process_time``, less sensitive to other processes).

1. Per example (``--rows``, 20k): test-then-train, one dict at a time; a fresh model per run.
   - ``HoeffdingTreeRegressor()`` ``predict_one`` + ``learn_one``: >= 5x River's tree;
   - ``CPApproximate(forest=OnlineForestRegressor(n_trees=10))``
     ``predict_interval_one(x, alpha=0.1)`` + ``learn_one``: >= 2x River's single tree;
   - ``OnlineQRF(forest=OnlineForestRegressor(n_trees=10))``, the same: >= 1x River's tree;
   - for information: ``OnlineForestRegressor(n_trees=10)`` (point), ``CPExact``,
     ``ConformalQRF(alphas=(0.1,))`` and ``GaussianInterval`` (10 trees each);
   - latency of one ``predict_interval_one`` call (median, p90) of the trained CPApproximate and
     OnlineQRF over ``--heldout`` (2000) held-out examples, the better of two passes: median
     <= 20 us.  For information the per-call latencies of ``predict_one`` / ``learn_one`` of both
     trees and ``learn_one`` of the interval models (last, on the same held-out rows).
   Every model is warmed up first (untimed): a throwaway copy learns all the rows with
   ``learn_many`` (tree growth kernels), then ``--warmup`` examples go through the timed methods of
   that grown copy and of a fresh one.  Numba dispatchers' signatures are counted around every
   timed run: any compile (or cache load) inside a timed loop is reported, as is the slowest step.
2. Batch (``--batch-rows``, 100k; chunks of ``--chunk`` = 1000 rows): the single tree's
   ``predict_learn_many`` rows/s vs River's tree per-example rows/s on the same rows, the two
   alternating by blocks of ``--batch-block`` (20k) rows (>= 30x, median of the repeats' ratios);
   ``OnlineQRF`` and ``CPApproximate`` (10 trees, ``n_jobs=2``) ``predict_learn_many(X, y,
   alpha=0.1)`` per chunk: >= 150k and >= 250k rows/s (best run).  For information the same with
   ``n_jobs=1`` and in one call over all rows (``n_jobs=2``).
3. Recompilation, in a fresh subprocess per method (CPApproximate, OnlineQRF) with, by default,
   an empty numba cache dir (``--recompile-cache fresh``; ``shared`` uses this run's
   ``NUMBA_CACHE_DIR``, faster, but then earlier runs have cached the second configuration): a
   10-tree model on 5 features is warmed up (its time is reported: compile from scratch), then a
   7-tree model on 8 features runs its first ``learn_one`` + ``predict_interval_one``: < 1 s;
   the numba signatures that second model adds over its whole warm-up schedule: 0 (for each new
   signature the dispatcher and the argument types that changed are printed; cache misses =
   compiled, hits = loaded from the cache dir).
4. ``--cold``: ``streamforest run --n 20000`` (the CLI, ``python -m streamforest.cli``) with an
   empty ``NUMBA_CACHE_DIR`` (cold), then again with the same dir (warm).  Information only.
5. Bounds (``--sections bounds``, information): what the per-example ratios can reach with
   today's compiled kernels, each measured on new models over the ``--rows`` rows (as the
   targets are) beside River's tree, in process time:
   - the dict path's floor: per example, the encoding of the dict (for the prediction, then
     its memo for the learning) and the two compiled calls of ``HoeffdingTreeRegressor``
     (``predict_one_h``, ``learn_one_h``) with no other Python;
   - the compiled steps alone, no Python: the single tree's and the 10-tree forest's
     ``predict_one`` + ``learn_one`` kernels row by row in one compiled loop (the time of
     growing a tree's arrays left out), and the forest tree by tree (one
     ``predict_learn_many`` over the rows, growth included);
   - so the dict path's overhead (floor minus the tree's compiled step: Python, and the cache
     misses of a compiled step that follows Python) and the point forest's floor (that overhead
     plus the forest's compiled step), against what the CPApproximate (2x) and OnlineQRF (1x)
     targets allow a whole example (intervals included).

    python benchmarks/per_example.py [--rows 20000] [--batch-rows 100000] [--repeats 3]
        [--quick] [--cold] [--sections per-example,latency,batch,recompile,bounds]
        [--json PATH]
        [--block 1000] [--chunk 1000] [--batch-block 20000] [--heldout 2000] [--warmup 300]
        [--seed 42] [--recompile-cache fresh|shared]

Ends with one table: measure, ours, peer, ratio, target, PASS/FAIL (``info`` rows have no
target).  ``--json`` writes every number (default none; put it under ``results/``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("per-example", "latency", "batch", "recompile", "bounds")
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

    return {
        "tree": (
            "HoeffdingTreeRegressor()",
            lambda s: sf.HoeffdingTreeRegressor(seed=s),
            "point",
            5.0,
        ),
        "cpa": (
            "CPApproximate(10 trees)",
            lambda s: sf.CPApproximate(forest=forest(), seed=s),
            "interval",
            2.0,
        ),
        "qrf": (
            "OnlineQRF(10 trees)",
            lambda s: sf.OnlineQRF(forest=forest(), seed=s),
            "interval",
            1.0,
        ),
        "forest": (
            "OnlineForestRegressor(10 trees)",
            lambda s: forest(seed=s),
            "point",
            None,
        ),
        "cpe": (
            "CPExact(10 trees)",
            lambda s: sf.CPExact(forest=forest(), seed=s),
            "interval",
            None,
        ),
        "cqrf": (
            "ConformalQRF(alphas=(0.1,), 10 trees)",
            lambda s: sf.ConformalQRF(forest=forest(), alphas=(ALPHA,), seed=s),
            "interval",
            None,
        ),
        "gauss": (
            "GaussianInterval(10 trees)",
            lambda s: sf.GaussianInterval(forest=forest(), seed=s),
            "interval",
            None,
        ),
        "normalized": (
            "NormalizedConformal(10 trees), the default",
            lambda s: sf.NormalizedConformal(forest=forest(), seed=s),
            "interval",
            None,
        ),
    }


def river_tree():
    from river import tree

    return tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())


# ------------------------------------------------------------------------------------------------
# numba dispatchers of streamforest's modules
def dispatchers() -> dict:
    """``{qualified name: Dispatcher}`` of every numba dispatcher that is a module attribute of a
    loaded ``streamforest`` module."""
    from numba.core.dispatcher import Dispatcher

    out = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "streamforest" or name.startswith("streamforest.")):
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, Dispatcher):
                out[f"{obj.py_func.__module__}.{obj.py_func.__qualname__}"] = obj
    return out


def census() -> dict:
    """Signature count, cache hits and misses per dispatcher."""
    out = {}
    for name, d in dispatchers().items():
        st = d.stats
        out[name] = (len(d.signatures), sum(st.cache_hits.values()), sum(st.cache_misses.values()))
    return out


def signatures() -> dict:
    return {name: list(d.signatures) for name, d in dispatchers().items()}


def signature_changes(before: dict, after: dict) -> list[str]:
    """For each signature added since ``before``: the arguments whose types differ from the
    closest signature the dispatcher already had."""
    out = []
    for name, sigs in after.items():
        old = before.get(name, [])
        for sig in sigs:
            if sig in old:
                continue
            same = [o for o in old if len(o) == len(sig)]
            if not same:
                out.append(f"{name}: first signature")
                continue
            ref = min(same, key=lambda o: sum(a != b for a, b in zip(o, sig, strict=True)))
            diffs = [
                f"arg {i}: {str(a)[:70]} -> {str(b)[:70]}"
                for i, (a, b) in enumerate(zip(ref, sig, strict=True))
                if a != b
            ]
            out.append(f"{name}: " + "; ".join(diffs))
    return out


def census_delta(before: dict, after: dict) -> dict:
    """New signatures (total, per dispatcher) and cache hits/misses between two censuses."""
    per, hits, misses = {}, 0, 0
    for name, (s, h, m) in after.items():
        s0, h0, m0 = before.get(name, (0, 0, 0))
        if s > s0:
            per[name] = s - s0
        hits += h - h0
        misses += m - m0
    return {"signatures": sum(per.values()), "by_dispatcher": per, "hits": hits, "misses": misses}


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
    the same load on this shared machine.  Returns ``(ours, river)`` summaries; ``ours`` also
    counts numba signatures added meanwhile (a compile or cache load inside the timed loop)."""
    sides = {"ours": (model, kind), "river": (river_tree(), "point")}
    n = len(data)
    steps = {k: np.empty(n) for k in sides}
    cpu = dict.fromkeys(sides, 0.0)
    gc.collect()
    before = census()
    for b, a in enumerate(range(0, n, block)):
        part = data[a : a + block]
        for side in ("ours", "river") if b % 2 == 0 else ("river", "ours"):
            m, k = sides[side]
            c0 = time.process_time()
            stamps = run_loop(m, part, k)
            cpu[side] += time.process_time() - c0
            steps[side][a : a + len(part)] = np.diff(stamps)
    delta = census_delta(before, census())
    ours = summarise(steps["ours"], cpu["ours"])
    ours["new_signatures"] = delta["signatures"]
    ours["new_by_dispatcher"] = delta["by_dispatcher"]
    return ours, summarise(steps["river"], cpu["river"])


def median_pair(pairs: list[tuple[float, float]]) -> tuple[float, float, float]:
    """``(ours, peer, ratio)`` of the repeat whose ratio ours/peer is the median (the lower
    middle for an even count)."""
    ranked = sorted(pairs, key=lambda p: p[0] / p[1])
    o, r = ranked[(len(ranked) - 1) // 2]
    return o, r, o / r


def warm_up(factory, kind: str, X, y, data, warm: int, seed: int) -> float:
    """Untimed: a throwaway model learns every row with ``learn_many`` (growth kernels), then
    ``warm`` examples go through the timed methods of it and of a fresh model."""
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
    print("warm-up (untimed; compile or cache load):")
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
            flag = "" if not res["new_signatures"] else f"  [{res['new_signatures']} new sig.]"
            print(
                f"  repeat {r + 1}: {label:<40s} {res['rate']:9,.0f}/s   "
                f"River {rv['rate']:7,.0f}/s   ratio {res['rate'] / rv['rate']:6.3f}"
                f"   max step {res['max_step_ms']:6.1f} ms{flag}",
                flush=True,
            )
    report["per_example"] = {"rows": n, "block": args.block, "runs": runs}
    print("  per model: the repeat with the median ratio (ours, River, ratio); all ratios; best")
    print("  rates; ratio of CPU times (median); slowest step; steps > 1 ms and > 10x the median;")
    print("  numba signatures added inside timed loops")
    for name, (label, _, kind, target) in models.items():
        rs = runs[name]
        ours, peer, ratio = median_pair([(r["rate"], r["river"]["rate"]) for r in rs])
        ratios = ", ".join(f"{r['rate'] / r['river']['rate']:.3f}" for r in rs)
        cpu_ratio = float(np.median([r["cpu_rate"] / r["river"]["cpu_rate"] for r in rs]))
        best = max(r["rate"] for r in rs)
        rbest = max(r["river"]["rate"] for r in rs)
        print(
            f"  {label:<38s} {ours:8,.0f}/s ({1e6 / ours:6.1f} us/ex) vs {peer:7,.0f}/s:"
            f" {ratio:.3f}x  [{ratios}]  best {best:,.0f} vs {rbest:,.0f}/s;"
            f" CPU {cpu_ratio:.3f}x; max step {max(r['max_step_ms'] for r in rs):.1f} ms;"
            f" slow steps {sum(r['slow_steps'] for r in rs)};"
            f" new sig. {sum(r['new_signatures'] for r in rs)}"
        )
        what = "predict_interval_one" if kind == "interval" else "predict_one"
        report.row(
            "per-example", f"{label} {what}+learn_one, ex/s", ours, peer, ratio, target, "ratio"
        )


def section_latency(args, report, keep) -> None:
    print(f"\n== 1b. latency per call, trained models, {args.heldout} held-out examples")
    held = keep.get("heldout")
    trained = keep.get("trained", {})
    if held is None or not trained:  # the section runs alone: train the models here
        n = args.rows
        X, y = friedman(n + args.heldout, args.seed)
        data = list(zip(as_dicts(X), y.tolist(), strict=True))
        held = data[n:]
        models = our_models()
        for name in ("tree", "cpa", "qrf"):
            _, factory, kind, _ = models[name]
            warm_up(factory, kind, X[:n], y[:n], data[:n], args.warmup, args.seed)
            m = factory(args.seed)
            run_loop(m, data[:n], kind)
            trained[name] = m
    xs = [x for x, _ in held]
    pairs = list(held)
    # River's tree, trained on the same rows, for the per-call reference
    rv = river_tree()
    X, y = friedman(args.rows, args.seed)
    run_loop(rv, list(zip(as_dicts(X), y.tolist(), strict=True)), "point")
    labels = {"tree": "HoeffdingTreeRegressor()", "cpa": "CPApproximate(10 trees)",
              "qrf": "OnlineQRF(10 trees)"}  # fmt: skip
    out = {}

    def stat(name, what, secs, target=None, peer=None):
        med, p90 = float(np.median(secs)) * 1e6, float(np.percentile(secs, 90)) * 1e6
        out[f"{name} {what}"] = {"median_us": med, "p90_us": p90, "max_us": float(secs.max()) * 1e6}
        print(f"  {name + ' ' + what:<58s} median {med:8.1f} us   p90 {p90:8.1f} us"
              f"   max {secs.max() * 1e6:9.1f} us")  # fmt: skip
        return med, p90

    gc.collect()
    for name in ("cpa", "qrf"):
        m = trained[name]
        passes = [
            per_call(lambda x, m=m: m.predict_interval_one(x, alpha=ALPHA), xs, warm=w)
            for w in (200, 0)
        ]
        secs = min(passes, key=np.median)  # the better of two passes over the held-out rows
        med, p90 = stat(labels[name], "predict_interval_one", secs)
        report.row("latency", f"{labels[name]} predict_interval_one median, us", med, None,
                   None, 20.0, "max")  # fmt: skip
        report.row("latency", f"{labels[name]} predict_interval_one p90, us", p90, None, None,
                   None, "info")  # fmt: skip
    m = trained["tree"]
    t_pred = per_call(m.predict_one, xs)
    r_pred = per_call(rv.predict_one, xs)
    med_t, _ = stat(labels["tree"], "predict_one", t_pred)
    med_r, _ = stat(RIVER, "predict_one", r_pred)
    report.row("latency", "tree predict_one median, us", med_t, med_r, med_t / med_r, None, "info")
    # learn_one last (it changes the models); same held-out rows for every model
    for name in ("tree", "cpa", "qrf"):
        m = trained[name]
        secs = per_call(lambda p, m=m: m.learn_one(*p), pairs, warm=0)
        med, _ = stat(labels[name], "learn_one", secs)
        if name == "tree":
            r_learn = per_call(lambda p: rv.learn_one(*p), pairs, warm=0)
            med_r, _ = stat(RIVER, "learn_one", r_learn)
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
    print(f"\n== 2. batch: Friedman #1, {n:,} rows, chunks of {c} rows")

    def forest(j):
        return sf.OnlineForestRegressor(n_trees=10, n_jobs=j)

    configs = {
        "tree": ("HoeffdingTreeRegressor() predict_learn_many",
                 lambda: sf.HoeffdingTreeRegressor(seed=args.seed), False, c, 30.0, "ratio"),
        "qrf2": ("OnlineQRF(10 trees, n_jobs=2) predict_learn_many",
                 lambda: sf.OnlineQRF(forest=forest(2), seed=args.seed), True, c, 150e3, "min"),
        "cpa2": ("CPApproximate(10 trees, n_jobs=2) predict_learn_many",
                 lambda: sf.CPApproximate(forest=forest(2), seed=args.seed), True, c, 250e3, "min"),
        "qrf1": ("OnlineQRF(10 trees, n_jobs=1) predict_learn_many",
                 lambda: sf.OnlineQRF(forest=forest(1), seed=args.seed), True, c, None, "info"),
        "cpa1": ("CPApproximate(10 trees, n_jobs=1) predict_learn_many",
                 lambda: sf.CPApproximate(forest=forest(1), seed=args.seed), True, c, None, "info"),
        "qrf2_all": ("OnlineQRF(10 trees, n_jobs=2), one call on all rows",
                     lambda: sf.OnlineQRF(forest=forest(2), seed=args.seed), True, n, None, "info"),
        "cpa2_all": ("CPApproximate(10 trees, n_jobs=2), one call on all rows",
                     lambda: sf.CPApproximate(forest=forest(2), seed=args.seed), True, n, None,
                     "info"),
    }  # fmt: skip

    new_sigs = {}

    def run(make, interval, chunk, key=None):
        m = make()
        gc.collect()
        before = census()
        t0 = time.perf_counter()
        for a in range(0, n, chunk):
            if interval:
                m.predict_learn_many(X[a : a + chunk], y[a : a + chunk], alpha=ALPHA)
            else:
                m.predict_learn_many(X[a : a + chunk], y[a : a + chunk])
        rate = n / (time.perf_counter() - t0)
        if key is not None:
            d = census_delta(before, census())["signatures"]
            new_sigs[key] = new_sigs.get(key, 0) + d
        return rate

    t0 = time.perf_counter()
    for _, make, interval, chunk, _, _ in configs.values():
        run(make, interval, chunk)
    print(f"  warm-up (untimed) {time.perf_counter() - t0:.2f} s")

    def tree_vs_river():
        """Our tree (``predict_learn_many`` per chunk) and River's tree (per example) over the
        same rows, alternating by blocks of ``--batch-block`` rows; ``(ours, River)`` rows/s.
        (Alternating every chunk would put River's whole working set through the caches
        between two 1-2 ms calls of ours: that cost our tree about a third of its speed.)"""
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

    rates = {k: [] for k in configs}
    river = []
    keys = [k for k in configs if k != "tree"]
    for r in range(args.repeats):
        c0 = census()
        ours, rv = tree_vs_river()
        new_sigs["tree"] = new_sigs.get("tree", 0) + census_delta(c0, census())["signatures"]
        rates["tree"].append(ours)
        river.append(rv)
        line = [f"tree {ours:,.0f}/s vs River/ex {rv:,.0f}/s ({ours / rv:.1f}x)"]
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            _, make, interval, chunk, _, _ = configs[k]
            rates[k].append(run(make, interval, chunk, k))
            line.append(f"{k} {rates[k][-1]:,.0f}/s")
        print(f"  repeat {r + 1}: " + ", ".join(line), flush=True)
    for k, (label, _, _, _, target, kind) in configs.items():
        best = max(rates[k])
        extra = ""
        if kind == "ratio":
            ours, peer, ratio = median_pair(list(zip(rates[k], river, strict=True)))
            report.row("batch", f"{label}, rows/s", ours, peer, ratio, target, "ratio")
            extra = f"; median-ratio repeat {ours:,.0f} vs River/ex {peer:,.0f}: {ratio:.1f}x"
        else:
            report.row("batch", f"{label}, rows/s", best, None, None, target, kind)
        print(
            f"  {label:<58s} best {best:11,.0f} rows/s{extra}"
            f"  (new signatures in timed runs: {new_sigs.get(k, 0)})"
        )
    report["batch"] = {"rows": n, "chunk": c, "river_per_example": river, "rates": rates,
                       "new_signatures": new_sigs}  # fmt: skip


def recompile_child(method: str, seed: int) -> None:
    """In a fresh interpreter: warm a 10-tree model on 5 features, then the first calls of a
    7-tree model on 8 features.  Prints one JSON line."""
    t_import = time.perf_counter()
    import streamforest as sf

    t_import = time.perf_counter() - t_import
    cls = {"cpa": sf.CPApproximate, "qrf": sf.OnlineQRF}[method]
    X, y = friedman(12_000, seed)

    def schedule(m, Xp):
        """learn_one + predict_interval_one on 500 dicts, learn_many on 10k rows, 300 dicts."""
        d = list(zip(as_dicts(Xp), y.tolist(), strict=True))
        run_loop(m, d[:500], "interval")
        m.learn_many(Xp[500:11_500], y[500:11_500])
        run_loop(m, d[11_500:11_800], "interval")

    t0 = time.perf_counter()
    a = cls(forest=sf.OnlineForestRegressor(n_trees=10), seed=seed)
    schedule(a, X[:, :5])
    warm_a = time.perf_counter() - t0
    c0, s0 = census(), signatures()
    b = cls(forest=sf.OnlineForestRegressor(n_trees=7), seed=seed + 1)
    X8 = X[:, :8]
    d8 = as_dicts(X8[:2])
    t0 = time.perf_counter()
    b.learn_one(d8[0], float(y[0]))
    b.predict_interval_one(d8[1], alpha=ALPHA)
    first = time.perf_counter() - t0
    c1 = census()
    t0 = time.perf_counter()
    schedule(b, X8)
    rest = time.perf_counter() - t0
    c2 = census()
    t0 = time.perf_counter()
    schedule(cls(forest=sf.OnlineForestRegressor(n_trees=10), seed=seed + 2), X[:, :5])
    warm_again = time.perf_counter() - t0
    print(json.dumps({
        "method": method,
        "import_seconds": t_import,
        "warm_model_seconds": warm_a,
        "same_schedule_warm_seconds": warm_again,
        "first_call_seconds": first,
        "first_call": census_delta(c0, c1),
        "rest_seconds": rest,
        "whole_second_model": census_delta(c0, c2),
        "changed_arguments": signature_changes(s0, signatures()),
        "n_dispatchers": len(c2),
    }))  # fmt: skip


def child_env(cache_dir: str | None) -> dict:
    import streamforest

    env = dict(os.environ)
    src = str(Path(streamforest.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in [env.get("PYTHONPATH")] if p])
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    return env


def section_recompile(args, report, keep) -> None:
    fresh = args.recompile_cache == "fresh"
    print(f"\n== 3. recompilation, fresh subprocess per method "
          f"({'empty numba cache dir' if fresh else 'shared numba cache dir'})")  # fmt: skip
    labels = {"cpa": "CPApproximate", "qrf": "OnlineQRF"}
    out = {}
    for method in ("cpa", "qrf"):
        tmp = tempfile.mkdtemp(prefix="sf-recompile-") if fresh else None
        try:
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, __file__, "--_recompile-child", method, "--seed", str(args.seed)],
                env=child_env(tmp), capture_output=True, text=True, check=False,
            )  # fmt: skip
            wall = time.perf_counter() - t0
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        if proc.returncode != 0:
            print(f"  {labels[method]}: child failed (rc {proc.returncode})\n{proc.stderr[-3000:]}")
            report.row("recompile", f"{labels[method]} child process", None, None, None, None,
                       "failed")  # fmt: skip
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["wall_seconds"] = wall
        out[method] = res
        w = res["whole_second_model"]
        print(
            f"  {labels[method]}: 10 trees / 5 features warm-up {res['warm_model_seconds']:.2f} s"
            f" (same schedule once warm: {res['same_schedule_warm_seconds']:.2f} s);"
            f" 7 trees / 8 features: first learn_one + predict_interval_one "
            f"{res['first_call_seconds']:.3f} s ({res['first_call']['signatures']} new sig.),"
            f" rest of its schedule {res['rest_seconds']:.2f} s; whole second model: "
            f"{w['signatures']} new signatures ({w['misses']} compiled, {w['hits']} from cache)"
        )
        for line in res["changed_arguments"]:
            print(f"      {line}")
        label = labels[method]
        report.row("recompile", f"{label} 7 trees/8 feat. first learn+predict_interval, s",
                   res["first_call_seconds"], None, None, 1.0, "below")  # fmt: skip
        report.row("recompile", f"{label} 7 trees/8 feat. new numba signatures",
                   w["signatures"], None, None, 0, "max")  # fmt: skip
        report.row("recompile", f"{label} 10 trees/5 feat. warm-up in fresh process, s",
                   res["warm_model_seconds"], None, None, None, "info")  # fmt: skip
    report["recompile"] = {"cache": args.recompile_cache, **out}


_ROW_LOOP = []  # the compiled row-by-row loop of section 5, made on first use


def row_loop():
    """A compiled loop: rows ``start..`` of ``X`` one by one through the engine's per-example
    kernels (``predict_one`` then ``learn_one``, every tree), as the dict path runs them minus
    Python.  Returns ``(row, tree)`` where it stopped for a tree lacking room (the caller grows
    it and resumes at that row and tree), or ``(len(X), -1)``.  Drift signals are not acted on
    (a replaced tree would only change what is timed, not how)."""
    if not _ROW_LOOP:
        from numba import njit

        from streamforest.engine import kernels as FK

        fresh = FK.FRESH

        @njit(cache=True)
        def loop(A, frng, lam, X, y, wt, P, drifted, M, agg, start, t0):
            for i in range(start, X.shape[0]):
                x = X[i]
                if t0 == fresh:
                    FK.predict_one(A, x, agg, P, M)
                s = FK.learn_one(A, frng, lam, x, y[i], 1.0, wt, P, drifted, t0, M)
                t0 = fresh
                if s >= 0:
                    return i, s
            return X.shape[0], -1

        _ROW_LOOP.append(loop)
    return _ROW_LOOP[0]


def compiled_rows(model, X, y) -> float:
    """Process seconds of ``model``'s engine stepping through ``X`` row by row in compiled code
    (:func:`row_loop`), the time of growing trees' arrays (``make_room``) left out."""
    from streamforest.engine import kernels as FK

    e = model.engine_
    loop = row_loop()
    n, i, t0, grow = X.shape[0], 0, FK.FRESH, 0.0
    c0 = time.process_time()
    while i < n:
        i, s = loop(e.arena, e.rng, e.bagging, X, y, e._wt, e.last_predictions, e._drifted,
                    e.leaf_memo, e.aggregation, i, t0)  # fmt: skip
        if i < n:
            g0 = time.process_time()
            e.make_room(int(s))
            grow += time.process_time() - g0
            t0 = s
    return time.process_time() - c0 - grow


def dict_floor(model, data) -> float:
    """Process seconds of the dict path's floor over ``data`` for a fitted one-engine model: per
    example the encoding (prediction, then learning: the memo) and the two compiled calls."""
    from streamforest.engine import per_example as core

    e = model.engine_
    fs = e.features
    kind = e.kind
    pep = core._ENTRY_POINTS[(core._PREDICT_ONE_H, kind)]
    lep = core._ENTRY_POINTS[(core._LEARN_ONE_H, kind)]
    agg, lam, fresh, done = e.aggregation, e.bagging, core._FRESH, core._DONE
    c0 = time.process_time()
    for x, y in data:
        fs.encode_dict_into(x, False, e.row_buffer)
        hd = e.handle()
        pep(hd, kind, agg)
        fs.encode_dict_into(x, True, e.row_buffer)
        s = lep(hd, kind, lam, y, 1.0, fresh, True)
        if s != done:  # a tree lacks room (or signalled): the engine's own steps
            p = e.last_predictions
            e._learn_loop(e.row_buffer, y, 1.0, None, (), False, None, True, False, (s, p))
    return time.process_time() - c0


def section_bounds(args, report, keep) -> None:
    import streamforest as sf

    n = args.rows
    X, y = friedman(n, args.seed)
    data = list(zip(as_dicts(X), y.tolist(), strict=True))
    print(f"\n== 5. bounds: Friedman #1, {n:,} rows per example (process time; the measures'"
          " order alternates)")  # fmt: skip

    def started(make):
        """A new model that has learnt the first row (its engine exists)."""
        m = make()
        m.learn_one(*data[0])
        return m

    def tree():
        return sf.HoeffdingTreeRegressor(seed=args.seed)

    def forest():
        return sf.OnlineForestRegressor(n_trees=10, seed=args.seed)

    # warm-up (untimed): compile or load the loop and the entry points
    t0 = time.perf_counter()
    w = tree()
    run_loop(w, data[: args.warmup], "point")  # (makes the entry points dict_floor calls)
    dict_floor(w, data[args.warmup : 2 * args.warmup])
    for make in (tree, forest):
        compiled_rows(started(make), X[1 : args.warmup], y[1 : args.warmup])
        make().predict_learn_many(X[: args.warmup], y[: args.warmup])
    run_loop(river_tree(), data[: args.warmup], "point")
    print(f"  warm-up (untimed) {time.perf_counter() - t0:.2f} s")

    keys = ("river", "floor", "tree_rows", "forest_rows", "forest_trees")
    Xr, yr = np.ascontiguousarray(X[1:]), np.ascontiguousarray(y[1:])

    def one(k) -> float:
        """Process seconds per example of measure ``k``, on new models (as the targets')."""
        if k == "river":
            return _cpu(lambda: run_loop(river_tree(), data, "point")) / n
        if k == "floor":
            return dict_floor(started(tree), data[1:]) / (n - 1)
        if k == "tree_rows":
            return compiled_rows(started(tree), Xr, yr) / (n - 1)
        if k == "forest_rows":
            return compiled_rows(started(forest), Xr, yr) / (n - 1)
        m = forest()
        return _cpu(lambda: m.predict_learn_many(X, y)) / n

    res = {k: [] for k in keys}
    for r in range(args.repeats):
        for k in keys if r % 2 == 0 else keys[::-1]:
            gc.collect()
            res[k].append(one(k) * 1e6)
        print(f"  repeat {r + 1}: " + ", ".join(f"{k} {res[k][-1]:.2f}" for k in keys) + " us/ex",
              flush=True)  # fmt: skip
    med = {k: float(np.median(v)) for k, v in res.items()}
    river, floor = med["river"], med["floor"]
    over = floor - med["tree_rows"]
    forest_floor = over + med["forest_rows"]
    lines = [
        (f"{RIVER} predict_one+learn_one", river, None),
        ("tree: the dict path's floor (encoding + 2 compiled calls)", floor, 5.0),
        ("tree: compiled step alone, row by row", med["tree_rows"], None),
        ("the dict path's overhead (floor - compiled step)", over, None),
        ("forest (10 trees): compiled step alone, row by row", med["forest_rows"], None),
        ("forest (10 trees): tree by tree, one call (growth included)", med["forest_trees"], None),
        ("forest (10 trees): overhead + compiled step, the point floor", forest_floor, 2.0),
    ]
    print("  medians, us per example; ratio = River / ours (the best a model built on it reaches)")
    for label, v, target in lines:
        ratio = river / v if v > 0 else None
        tail = f"   River/ours {ratio:5.2f}x" if ratio else ""
        if target == 5.0:
            tail += f"   (the tree's 5x target allows {river / 5:.2f} us)"
        elif target:
            tail += (f"   (CPApproximate's 2x target allows {river / 2:.2f} us, OnlineQRF's 1x "
                     f"{river:.2f}, intervals included)")  # fmt: skip
        print(f"  {label:<62s} {v:7.2f}{tail}")
        if label.startswith(RIVER):
            continue
        report.row("bounds", f"{label}, us/ex", v, river, ratio, None, "info")
    report["bounds"] = {"rows": n, "runs": res, "medians": med}


def _cpu(fn) -> float:
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def section_cold(args, report) -> None:
    print("\n== 4. cold and warm start of `streamforest run --n 20000` (CLI)")
    outdir = ROOT / "results" / "per_example_cli"
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="sf-cold-")
    res = {}
    try:
        for phase in ("cold", "warm"):
            js = outdir / f"{phase}.json"
            cmd = [sys.executable, "-m", "streamforest.cli", "run", "--n", "20000", "--quiet",
                   "--out", str(outdir), "--json", str(js)]  # fmt: skip
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, env=child_env(tmp), capture_output=True, text=True)
            wall = time.perf_counter() - t0
            inner = None
            if proc.returncode == 0 and js.exists():
                inner = json.loads(js.read_text()).get("seconds")
            res[phase] = {"wall_seconds": wall, "run_seconds": inner, "rc": proc.returncode}
            print(
                f"  {phase}: {wall:7.2f} s wall (the run itself, as the CLI reports it: "
                f"{inner if inner is None else f'{inner:.2f} s'}), rc {proc.returncode}"
            )
            if proc.returncode:
                print(proc.stderr[-2000:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["cold"] = res
    for phase in ("cold", "warm"):
        report.row("cold", f"CLI run --n 20000, {phase} numba cache, wall s",
                   res[phase]["wall_seconds"], None, None, None, "info")  # fmt: skip


# ------------------------------------------------------------------------------------------------
class Report(dict):
    """Numbers for ``--json`` plus the rows of the final table."""

    def __init__(self):
        super().__init__(warmup_seconds={})
        self.rows = []

    def row(self, section, measure, ours, peer, ratio, target, kind) -> None:
        """``kind``: 'ratio' (ratio >= target), 'min' (ours >= target), 'max' (ours <= target),
        'below' (ours < target), 'info' or 'failed'."""
        if kind == "ratio":
            ok = ratio is not None and target is not None and ratio >= target
            tgt = f">= {target:g}x" if target is not None else "-"
        elif kind == "min":
            ok, tgt = ours >= target, f">= {target:,.0f}"
        elif kind == "max":
            ok, tgt = ours <= target, f"<= {target:g}"
        elif kind == "below":
            ok, tgt = ours < target, f"< {target:g}"
        else:
            ok, tgt = None, "-"
        status = "FAILED" if kind == "failed" else ("info" if ok is None else
                                                    ("PASS" if ok else "FAIL"))  # fmt: skip
        if target is None and kind == "ratio":
            status = "info"
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
    n_tgt = sum(r["status"] in ("PASS", "FAIL", "FAILED") for r in rows)
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
                    help="smoke run: 3000 rows, 20000 batch rows, 500 held out, 1 repeat, shared "
                         "numba cache for the recompilation section")  # fmt: skip
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated subset of {','.join(SECTIONS)}")  # fmt: skip
    ap.add_argument(
        "--recompile-cache",
        choices=("fresh", "shared"),
        default=None,
        help="numba cache dir of the recompilation subprocesses (default fresh)",
    )
    ap.add_argument("--cold", action="store_true", help="also time the CLI cold and warm")
    ap.add_argument("--json", metavar="PATH", help="write every number to this JSON file")
    ap.add_argument("--_recompile-child", dest="child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return recompile_child(args.child, args.seed)
    q = args.quick
    for k, full, quick in [("rows", 20_000, 3_000), ("batch_rows", 100_000, 20_000),
                           ("heldout", 2_000, 500), ("warmup", 300, 200), ("repeats", 3, 1),
                           ("recompile_cache", "fresh", "shared")]:  # fmt: skip
        if getattr(args, k) is None:
            setattr(args, k, quick if q else full)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = set(sections) - set(SECTIONS)
    if bad:
        ap.error(f"unknown sections {sorted(bad)}; choose from {SECTIONS}")

    import numba
    import river

    import streamforest

    t_start = time.perf_counter()
    report = Report()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    report["meta"] = {
        "argv": sys.argv, "commit": commit, "streamforest": streamforest.__file__,
        "numba": numba.__version__, "river": river.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(), "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
        "args": {k: v for k, v in vars(args).items() if k != "child"},
    }  # fmt: skip
    print(
        f"streamforest {commit} from {Path(streamforest.__file__).parent}; numba "
        f"{numba.__version__}, river {river.__version__}; load {os.getloadavg()[0]:.2f}"
    )
    keep: dict = {}
    if "per-example" in sections:
        section_per_example(args, report, keep)
    if "latency" in sections:
        section_latency(args, report, keep)
    keep.clear()
    if "batch" in sections:
        section_batch(args, report, keep)
    if "recompile" in sections:
        section_recompile(args, report, keep)
    if "bounds" in sections:
        section_bounds(args, report, keep)
    if args.cold:
        section_cold(args, report)
    elapsed = time.perf_counter() - t_start
    report["meta"]["seconds"] = elapsed
    report["meta"]["loadavg_end"] = os.getloadavg()
    report["table"] = report.rows
    print_table(report.rows)
    print(f"total {elapsed:.0f} s; load average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=float))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
