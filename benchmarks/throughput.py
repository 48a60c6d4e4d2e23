"""Issue 46's batch throughput targets, warm, on stationary Friedman #1 (10 features).

- ``HoeffdingTreeRegressor()`` on arrays in chunks of 100 rows (``predict`` then
  ``learn_many``) against River 0.26.1's
  ``tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())`` learning one dict at a
  time (``predict_one`` then ``learn_one``), measured in the same run: target >= 40x River's
  rows/s (for information, the same chunks through ``predict_learn_many``, one pass);
- ``CPApproximate(forest=OnlineForestRegressor(n_trees=10, n_jobs=2))``: >= 250,000 rows/s;
- ``OnlineQRF(forest=OnlineForestRegressor(n_trees=10, n_jobs=2))``: >= 150,000 rows/s,

the forests' ``predict_learn_many(X, y, alpha=0.1)`` in chunks of 1,000 rows (each chunk's
trees run on the forest's threads, the compiled passes without the GIL); for information the
same with ``n_jobs=1``.

"Warm": every model (River's too) first learns ``--warm`` rows, untimed (nothing compiles at
run time: the core is compiled at install; the warm-up grows the trees to a working size, so the
timed rows measure a model past its first splits; the trees still grow while timed).  The timed
rows follow the warm-up rows of the same stream.  Each case runs ``--repeats`` times on fresh
models (cases alternating); the best run counts (the machine is shared and noisy), the median
is printed beside it, with the process CPU time of the best run (``time.process_time``: every
thread) and its ratio to the wall time (above 1: more than one core at work), and the load
average before and after.  The machine's other processes take cores from the forests' threads:
read the rows/s with the load.

The threads section (``--threads``, on by default) runs one more pass of each forest with
``n_jobs=2``, untimed, recording when each thread is inside a tree's compiled pass: the time
both threads were inside one at once (possible only when the passes release the GIL), and the
passes' thread CPU time against their wall time (below 1: the thread waited for a core).

    python benchmarks/throughput.py [--rows 100000] [--warm 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

import numpy as np

import streamforest as sf

TREE_RATIO = 40.0
CP_RATE = 250_000
QRF_RATE = 150_000
ALPHA = 0.1


def friedman(n: int, seed: int = 0):
    """Stationary Friedman #1: X uniform on [0, 1]^10, noise N(0, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
         + 5 * X[:, 4] + rng.standard_normal(n))  # fmt: skip
    return X, y


def predict_then_learn(model, X, y, size: int) -> None:
    for s in range(0, X.shape[0], size):
        model.predict(X[s : s + size])
        model.learn_many(X[s : s + size], y[s : s + size])


def prequential(model, X, y, size: int, intervals: bool) -> None:
    for s in range(0, X.shape[0], size):
        if intervals:
            model.predict_learn_many(X[s : s + size], y[s : s + size], alpha=ALPHA)
        else:
            model.predict_learn_many(X[s : s + size], y[s : s + size])


def timed(fn) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of ``fn()``."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def tree_case(Xw, yw, X, y):
    m = sf.HoeffdingTreeRegressor()
    predict_then_learn(m, Xw, yw, 100)
    return lambda: predict_then_learn(m, X, y, 100)


def tree_one_pass_case(Xw, yw, X, y):
    m = sf.HoeffdingTreeRegressor()
    prequential(m, Xw, yw, 100, False)
    return lambda: prequential(m, X, y, 100, False)


def forest(cls, n_jobs: int):
    return cls(forest=sf.OnlineForestRegressor(n_trees=10, n_jobs=n_jobs))


def forest_case(cls, n_jobs: int):
    def make(Xw, yw, X, y):
        m = forest(cls, n_jobs)
        prequential(m, Xw, yw, 1000, True)
        return lambda: prequential(m, X, y, 1000, True)

    return make


def river_case(Xw, yw, X, y):
    from river import tree

    m = tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())
    keys = [f"x{j}" for j in range(X.shape[1])]

    def dicts(A):
        return [dict(zip(keys, r, strict=True)) for r in A.tolist()]

    warm, rows, ts = dicts(Xw), dicts(X), y.tolist()
    for x, t in zip(warm, yw.tolist(), strict=True):
        m.predict_one(x)
        m.learn_one(x, t)

    def run():
        for x, t in zip(rows, ts, strict=True):
            m.predict_one(x)
            m.learn_one(x, t)

    return run


def thread_spans(cls, Xw, yw, X, y) -> str:
    """One pass of a forest with ``n_jobs=2`` recording each tree's compiled passes: which
    thread, when, and the thread's CPU time in it."""
    m = forest(cls, 2)
    prequential(m, Xw, yw, 1000, True)
    e = m.forest_.engine_
    spans = []
    lock = threading.Lock()
    drive = type(e).drive

    def traced(self, t, step, n, *args, **kwargs):
        def timed_step(A, tree, start):
            c0, t0 = time.thread_time(), time.perf_counter()
            stop = step(A, tree, start)
            span = (threading.get_ident(), t0, time.perf_counter(), time.thread_time() - c0)
            with lock:
                spans.append(span)
            return stop

        return drive(self, t, timed_step, n, *args, **kwargs)

    e.drive = traced.__get__(e)  # (this engine only)
    wall, cpu = timed(lambda: prequential(m, X, y, 1000, True))
    edges = sorted([(s[1], 1) for s in spans] + [(s[2], -1) for s in spans])
    both, depth, last = 0.0, 0, 0.0
    for at, step in edges:
        if depth >= 2:
            both += at - last
        depth, last = depth + step, at
    inside = sum(s[2] - s[1] for s in spans)
    pass_cpu = sum(s[3] for s in spans)
    threads = len({s[0] for s in spans})
    return (f"{cls.__name__:14s} {len(spans):5d} passes on {threads} threads; both inside at once "
            f"{both:5.2f} s ({both / wall:4.0%} of the wall {wall:.2f} s); passes' CPU / wall "
            f"{pass_cpu:.2f} / {inside:.2f} s; process CPU / wall {cpu / wall:.2f}")  # fmt: skip


CASES = {  # name: (label, make)
    "tree": ("HoeffdingTreeRegressor() predict + learn_many, chunks of 100", tree_case),
    "tree1": ("HoeffdingTreeRegressor() predict_learn_many, chunks of 100", tree_one_pass_case),
    "river": ("River HoeffdingTreeRegressor(QOSplitter) per dict", river_case),
    "cp": ("CPApproximate(10 trees, n_jobs=2), chunks of 1,000", forest_case(sf.CPApproximate, 2)),
    "qrf": ("OnlineQRF(10 trees, n_jobs=2), chunks of 1,000", forest_case(sf.OnlineQRF, 2)),
    "cp1": ("CPApproximate(10 trees, n_jobs=1), chunks of 1,000", forest_case(sf.CPApproximate, 1)),
    "qrf1": ("OnlineQRF(10 trees, n_jobs=1), chunks of 1,000", forest_case(sf.OnlineQRF, 1)),
}


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--warm", type=int, default=20_000)
    ap.add_argument("--river-rows", type=int, default=20_000, help="River's timed rows")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help=f"comma-separated cases ({', '.join(CASES)})")
    ap.add_argument("--no-threads", action="store_true", help="skip the threads section")
    args = ap.parse_args()
    Xa, ya = friedman(args.warm + args.rows)
    Xw, yw, X, y = Xa[: args.warm], ya[: args.warm], Xa[args.warm :], ya[args.warm :]
    cases = {name: (label, make, X[: args.river_rows] if name == "river" else X)
             for name, (label, make) in CASES.items()}  # fmt: skip
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only.split(",")}
    print(f"load average before: {load()}   (cores: {os.cpu_count()})")
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(args.repeats):
        for name, (_, make, Xc) in cases.items():
            runs[name].append(timed(make(Xw, yw, Xc, y[: Xc.shape[0]])))
    rate = {}
    print(f"{'case':62s} {'best rows/s':>11s} {'median':>9s} {'us/row':>7s} {'CPU s':>6s} "
          f"{'CPU/wall':>8s}")  # fmt: skip
    for name, rs in runs.items():
        label, _, Xc = cases[name]
        n = Xc.shape[0]
        wall, cpu = min(rs)
        rate[name] = n / wall
        med = n / statistics.median(w for w, _ in rs)
        print(f"{label:62s} {rate[name]:11,.0f} {med:9,.0f} {1e6 / rate[name]:7.2f} {cpu:6.2f} "
              f"{cpu / wall:8.2f}")  # fmt: skip
    print(f"load average after: {load()}")
    print()
    print(f"{'issue 46 target':62s} {'measured':>11s} {'goal':>9s}  verdict")
    rows = []
    if "river" in rate:
        for name in ("tree", "tree1"):
            if name in rate:
                how = "predict + learn_many" if name == "tree" else "predict_learn_many (info)"
                rows.append((f"tree / River, {how}", rate[name] / rate["river"], TREE_RATIO, "x"))
    if "cp" in rate:
        rows.append(("CPApproximate(n_trees=10, n_jobs=2) rows/s", rate["cp"], CP_RATE, ""))
    if "qrf" in rate:
        rows.append(("OnlineQRF(n_trees=10, n_jobs=2) rows/s", rate["qrf"], QRF_RATE, ""))
    for label, got, goal, unit in rows:
        verdict = "PASS" if got >= goal else "FAIL"
        fmt = f"{got:.1f}{unit}" if unit else f"{got:,.0f}"
        gfmt = f"{goal:.0f}{unit}" if unit else f"{goal:,.0f}"
        print(f"{label:62s} {fmt:>11s} {gfmt:>9s}  {verdict}")
    for one, two in (("cp1", "cp"), ("qrf1", "qrf")):
        if one in rate and two in rate:
            name = cases[two][0].split("(")[0]
            print(f"{name} n_jobs=2 / n_jobs=1: {rate[two] / rate[one]:.2f}x")
    if not args.no_threads:
        print()
        print(f"threads (one untimed pass each, n_jobs=2; load {load()}):")
        for cls in (sf.CPApproximate, sf.OnlineQRF):
            print("  " + thread_spans(cls, Xw, yw, X, y))


if __name__ == "__main__":
    main()
