"""Memory and time on growing streams (issue 48): is every model's memory bounded by its budget,
its time per row flat, and its ``memory_bytes`` true, whatever grows in the stream?

For each registry model (``--models a,b``; default all) and each stream, in a process of its own
(spawned), after a warm-up of 500 ordinary rows (two features ``a``, ``b``; learnt one dict at
a time, or in two 250-row chunks for the alpha stream):

- ``dict10k``: one dict with 10,000 keys learnt, then 200 ordinary rows;
- ``newfeat``: ``--rows`` rows, each with ``a``, ``b`` and one new feature name, learnt;
- ``predict``: ``--rows`` predict-only dicts of 100 keys (``a``, ``b`` and 98 others, new
  values each row): ``predict_interval_one`` (interval methods), ``predict_set_one`` (set
  methods), else ``predict_one``; nothing learnt;
- ``alpha``: 1,000 calls (``--alpha-calls``) of ``predict_learn_many`` on 100-row chunks, a new
  random ``alpha`` each call (interval and set methods; the others are skipped with a note);
- ``alpha0`` (only when asked for): the same calls at a fixed ``alpha = 0.1``, the control: the
  model learns 100,000 rows either way, and its time per row may grow with its trees until the
  budget stops them; ``alpha``'s time ratio over ``alpha0``'s is what the new levels cost.

Measured per stream: the peak RSS growth (``VmHWM`` after minus ``VmRSS`` before, from
``/proc/self/status``; the peak is reset after the warm-up where the kernel allows it) as a
multiple of the model's budget (``memory_budget_bytes``, else ``max_memory_mb``: the sum over the
forests it holds, e.g. NormalizedConformal's three); the time per row of the last 10% of rows over
the first 10% (``alpha``: per call; ``dict10k``: n/a; the median of this process's CPU time
per row, the mean wall-time ratio also in the JSON); the growth of ``memory_bytes`` against
the RSS growth (their ratio and difference: an RSS growth of a few MiB is allocator and
interpreter noise, so a difference under ``--noise-mib`` (4) passes); errors (a refused row is
counted and the stream goes on; the first message is shown).  Targets: peak growth <= 1.25 x
budget, last/first <= 1.5, ``memory_bytes`` within 10% of the RSS growth (or within the noise).

    python benchmarks/growth_memory.py [--models a,b] [--streams predict,alpha] [--rows 200000]
        [--alpha-calls 1000] [--quick] [--json PATH] [--timeout 1800]

``--quick``: 5,000 rows, 100 alpha calls, 1,000 keys in the big dict (to try it out).  The
machine is shared: time ratios of a few percent mean nothing, and a loaded machine can push a
ratio past 1.5; rerun a failing model alone (``--models NAME --streams S``) before believing it.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import sys
import time
import traceback
import warnings

import numpy as np

STREAMS = ("dict10k", "newfeat", "predict", "alpha")
CONTROL = "alpha0"
TARGET_PEAK, TARGET_TIME, TARGET_BYTES = 1.25, 1.5, 0.10


def _status() -> dict:
    """``VmRSS`` and ``VmHWM`` of this process in bytes (Linux)."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                out[k] = int(v.split()[0]) * 1024
    return out


def _reset_peak() -> bool:
    """Reset ``VmHWM`` to the current RSS (``clear_refs`` 5, Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _budget(model):
    b = getattr(model, "memory_budget_bytes", None)
    if b is None:
        mb = getattr(model, "max_memory_mb", None)
        b = None if mb is None else int(float(mb) * 2**20)
    return b


class _Kind:
    """How to talk to a model: its task and whether it gives intervals or sets."""

    def __init__(self, name: str, model):
        from streamforest import registry

        self.classify = registry.get(name).task == "classification"
        self.interval = hasattr(model, "predict_interval_one")
        self.sets = hasattr(model, "predict_set_one")
        self.has_alpha = (self.interval or self.sets) and hasattr(model, "predict_learn_many")

    def label(self, v: float):
        return ("hi" if v > 1.0 else "lo") if self.classify else float(v)

    def labels(self, v: np.ndarray):
        return np.where(v > 1.0, "hi", "lo").astype(object) if self.classify else v


def _warm_up(model, kind: _Kind, rng, stream: str) -> None:
    if stream.startswith("alpha"):
        for _ in range(2):
            X = rng.random((250, 2))
            model.learn_many(X, kind.labels(X.sum(axis=1)))
        return
    for _ in range(500):
        a, b = rng.random(2)
        model.learn_one({"a": float(a), "b": float(b)}, kind.label(a + b))


def _steps(model, kind: _Kind, rng, stream: str, rows: int, alpha_calls: int, keys: int):
    """The stream's steps (each a callable: one row, or one call for ``alpha``), and whether
    the time ratio means something."""
    if stream == "dict10k":
        big = {f"k{j}": float(v) for j, v in enumerate(rng.random(keys))}
        big.update(a=0.3, b=0.4)
        steps = [lambda: model.learn_one(big, kind.label(0.7))]
        for _ in range(200):
            a, b = (float(v) for v in rng.random(2))
            steps.append(lambda a=a, b=b: model.learn_one({"a": a, "b": b}, kind.label(a + b)))
        return steps, False
    if stream == "newfeat":

        def step(i):
            a, b, c = (float(v) for v in rng.random(3))
            model.learn_one({"a": a, "b": b, f"n{i}": c}, kind.label(a + b))

        return [lambda i=i: step(i) for i in range(rows)], True
    if stream == "predict":
        if kind.interval:
            call = lambda x: model.predict_interval_one(x, alpha=0.1)  # noqa: E731
        elif kind.sets:
            call = lambda x: model.predict_set_one(x, alpha=0.1)  # noqa: E731
        else:
            call = model.predict_one
        names = ["a", "b", *(f"p{j}" for j in range(98))]

        def step():
            call(dict(zip(names, rng.random(100).tolist(), strict=True)))

        return [step] * rows, True
    # alpha: a new level per call (alpha0: 0.1 each call, the same draws)

    def call():
        X = rng.random((100, 2))
        a = float(rng.uniform(0.01, 0.5))
        model.predict_learn_many(
            X, kind.labels(X.sum(axis=1)), alpha=0.1 if stream == CONTROL else a
        )

    return [call] * alpha_calls, True


def run_one(name: str, stream: str, rows: int, alpha_calls: int, keys: int, seed: int) -> dict:
    """One model on one stream, in this process: the measures (see the module docstring)."""
    from streamforest import registry

    warnings.simplefilter("ignore")
    out = {"model": name, "stream": stream}
    rng = np.random.default_rng(seed)
    model = registry.build(name, {}, seed=seed)
    kind = _Kind(name, model)
    if stream.startswith("alpha") and not kind.has_alpha:
        out["note"] = "no alpha (not an interval or set method): skipped"
        return out
    _warm_up(model, kind, rng, stream)
    steps, timed = _steps(model, kind, rng, stream, rows, alpha_calls, keys)
    wall, cpu = np.empty(len(steps)), np.empty(len(steps))
    wall.fill(0.0)  # (touched now: pages mapped later would count as the model's growth)
    cpu.fill(0.0)
    gc.collect()
    out["budget_mib"] = None if _budget(model) is None else _budget(model) / 2**20
    mb0 = model.memory_bytes
    before = _status()["VmRSS"]
    out["peak_reset"] = _reset_peak()
    errors, first_error = 0, None
    t_all = time.perf_counter()
    for i, step in enumerate(steps):
        t, c = time.perf_counter(), time.process_time()
        try:
            step()
        except Exception as e:  # a refused row: counted, the stream goes on
            errors += 1
            if first_error is None:
                first_error = f"row {i}: {type(e).__name__}: {e}"[:300]
        cpu[i] = time.process_time() - c
        wall[i] = time.perf_counter() - t
    out["seconds"] = time.perf_counter() - t_all
    gc.collect()
    after = _status()
    out["rss_growth_mib"] = (after["VmRSS"] - before) / 2**20
    out["peak_growth_mib"] = (after["VmHWM"] - before) / 2**20
    out["memory_bytes_growth_mib"] = (model.memory_bytes - mb0) / 2**20
    out["steps"] = len(steps)
    out["errors"], out["first_error"] = errors, first_error
    if timed and len(steps) >= 20:
        k = max(1, len(steps) // 10)
        # the median CPU time of this process per row: the machine is shared, and a burst of
        # load in a few rows moves a mean of wall times
        first, last = float(np.median(cpu[:k])), float(np.median(cpu[-k:]))
        out["first10_us"], out["last10_us"] = first * 1e6, last * 1e6
        out["time_ratio"] = last / first if first > 0 else float("nan")
        out["wall_mean_ratio"] = float(np.mean(wall[-k:]) / max(np.mean(wall[:k]), 1e-12))
    return out


def _child(conn, args) -> None:
    try:
        conn.send(run_one(*args))
    except BaseException as e:  # (the child reports, the parent goes on)
        conn.send({"model": args[0], "stream": args[1], "crash": f"{type(e).__name__}: {e}",
                   "traceback": traceback.format_exc()[-2000:]})  # fmt: skip
    finally:
        conn.close()


def run_isolated(args, timeout: float) -> dict:
    """:func:`run_one` in a spawned process of its own (its RSS is its own)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(child, args))
    p.start()
    child.close()
    res = None
    if parent.poll(timeout):
        try:
            res = parent.recv()
        except EOFError:
            res = None
    p.join(5 if res is not None else 0.1)
    if p.is_alive():
        p.kill()
        p.join()
    if res is None:
        what = "timed out" if p.exitcode in (None, -9) else f"died (exit code {p.exitcode})"
        res = {"model": args[0], "stream": args[1], "crash": f"{what} after {timeout:g} s"}
    return res


def verdicts(r: dict, noise_mib: float) -> dict:
    """Pass / fail (or n/a) per target, and why."""
    v = {}
    if "crash" in r or "note" in r:
        return v
    budget = r.get("budget_mib")
    if budget:
        r["peak_over_budget"] = r["peak_growth_mib"] / budget
        v["peak"] = "ok" if r["peak_over_budget"] <= TARGET_PEAK else "FAIL"
    else:
        r["peak_over_budget"] = None
        v["peak"] = "n/a (no budget)"
    tr = r.get("time_ratio")
    v["time"] = "n/a" if tr is None else ("ok" if tr <= TARGET_TIME else "FAIL")
    rss, mb = r["rss_growth_mib"], r["memory_bytes_growth_mib"]
    r["bytes_diff_mib"] = mb - rss
    r["bytes_ratio"] = mb / rss if abs(rss) > 1e-9 else None
    if abs(mb - rss) <= max(TARGET_BYTES * abs(rss), noise_mib):
        v["bytes"] = "ok" if abs(mb - rss) <= TARGET_BYTES * abs(rss) else "ok (noise)"
    else:
        v["bytes"] = "FAIL"
    return v


def _fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def print_row(r: dict, v: dict) -> None:
    head = f"{r['model'][:34]:34s} {r['stream']:8s}"
    if "crash" in r:
        print(f"{head} CRASH {r['crash']}", flush=True)
        return
    if "note" in r:
        print(f"{head} {r['note']}", flush=True)
        return
    print(
        f"{head} {_fmt(r['budget_mib'], '7.0f')} {r['peak_growth_mib']:8.1f} "
        f"{_fmt(r['peak_over_budget'], '6.3f')} {_fmt(r.get('time_ratio'), '5.2f')} "
        f"{r['rss_growth_mib']:8.1f} {r['memory_bytes_growth_mib']:8.1f} "
        f"{_fmt(r['bytes_ratio'], '6.2f')} {r['errors']:6d} {r['seconds']:7.1f}  "
        f"peak:{v['peak']} time:{v['time']} bytes:{v['bytes']}",
        flush=True,
    )
    if r.get("first_error"):
        print(f"{'':44s} first error: {r['first_error']}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", help="comma-separated registry names (default: all)")
    ap.add_argument(
        "--streams", default=",".join(STREAMS), help=f"of {','.join(STREAMS)},{CONTROL}"
    )
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--alpha-calls", type=int, default=1000)
    ap.add_argument("--keys", type=int, default=10_000, help="keys of the big dict")
    ap.add_argument("--quick", action="store_true", help="5,000 rows, 100 calls, 1,000 keys")
    ap.add_argument("--noise-mib", type=float, default=4.0)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per model and stream")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="PATH")
    a = ap.parse_args(argv)
    if a.quick:
        a.rows, a.alpha_calls, a.keys = 5000, 100, 1000
    from streamforest import registry

    names = a.models.split(",") if a.models else registry.names()
    streams = [s for s in a.streams.split(",") if s]
    known = (*STREAMS, CONTROL)
    bad = [s for s in streams if s not in known] + [n for n in names if n not in registry.names()]
    if bad:
        ap.error(f"unknown stream or model: {', '.join(bad)}")
    print(f"rows {a.rows}, alpha calls {a.alpha_calls}, big dict {a.keys} keys; MiB; "
          f"targets: peak/budget <= {TARGET_PEAK}, last/first 10% <= {TARGET_TIME}, "
          f"memory_bytes within {TARGET_BYTES:.0%} of the RSS growth (or {a.noise_mib:g} MiB: "
          "noise)")  # fmt: skip
    print(f"{'model':34s} {'stream':8s} {'budget':>7s} {'peak+':>8s} {'/budg':>6s} "
          f"{'t l/f':>5s} {'rss+':>8s} {'mbytes+':>8s} {'mb/rss':>6s} {'errors':>6s} "
          f"{'secs':>7s}  verdicts")  # fmt: skip
    results, failed = [], 0
    for name in names:
        for stream in streams:
            r = run_isolated((name, stream, a.rows, a.alpha_calls, a.keys, a.seed), a.timeout)
            v = verdicts(r, a.noise_mib)
            r["verdicts"] = v
            failed += "crash" in r or any(x == "FAIL" for x in v.values())
            print_row(r, v)
            results.append(r)
            pair = {x["stream"]: x.get("time_ratio") for x in results if x["model"] == name}
            if stream in ("alpha", CONTROL) and None not in (pair.get("alpha"), pair.get(CONTROL)):
                rel = pair["alpha"] / pair[CONTROL]
                print(f"{'':44s} alpha's time ratio over the fixed alpha's: {rel:.2f}", flush=True)
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(results, f, indent=1)
    print(f"{len(results)} runs, {failed} with a failed target or a crash")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
