"""Issue 46's batch throughput targets, warm, on stationary Friedman #1 (10 features).

- ``HoeffdingTreeRegressor()``'s ``predict_learn_many`` in chunks of 100 rows against River
  0.26.1's ``tree.HoeffdingTreeRegressor(splitter=tree.splitter.QOSplitter())`` learning one
  dict at a time (``predict_one`` then ``learn_one``), measured in the same run: target >= 40x
  River's rows/s;
- ``CPApproximate(forest=OnlineForestRegressor(n_trees=10, n_jobs=2))``: >= 250,000 rows/s;
- ``OnlineQRF(forest=OnlineForestRegressor(n_trees=10, n_jobs=2))``: >= 150,000 rows/s,

the forests' ``predict_learn_many(X, y, alpha=0.1)`` in chunks of 1,000 rows.

"Warm": every model (River's too) first learns ``--warm`` rows, untimed (a fresh process has
nothing to compile: the core is compiled at install; the warm-up grows the trees to their
working size, so the timed rows measure a model in its steady state, not its first splits).
The timed rows follow the warm-up rows of the same stream.  Each case runs ``--repeats`` times
on fresh models (cases alternating); the best run counts (the machine is shared and noisy), the
median is printed beside it, with the process CPU time (``time.process_time``: all threads) of
the best run and the load average before and after.

    python benchmarks/throughput.py [--rows 100000] [--warm 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import streamforest as sf

TREE_RATIO = 40.0
CP_RATE = 250_000
QRF_RATE = 150_000


def friedman(n: int, seed: int = 0):
    """Stationary Friedman #1: X uniform on [0, 1]^10, noise N(0, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
         + 5 * X[:, 4] + rng.standard_normal(n))  # fmt: skip
    return X, y


def chunks(model, X, y, size: int, intervals: bool) -> None:
    for s in range(0, X.shape[0], size):
        if intervals:
            model.predict_learn_many(X[s : s + size], y[s : s + size], alpha=0.1)
        else:
            model.predict_learn_many(X[s : s + size], y[s : s + size])


def timed(fn) -> tuple[float, float]:
    """``(wall, cpu)`` seconds of ``fn()``."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def tree_case(Xw, yw, X, y):
    m = sf.HoeffdingTreeRegressor()
    chunks(m, Xw, yw, 100, False)
    return lambda: chunks(m, X, y, 100, False)


def forest_case(cls):
    def make(Xw, yw, X, y):
        m = cls(forest=sf.OnlineForestRegressor(n_trees=10, n_jobs=2))
        chunks(m, Xw, yw, 1000, True)
        return lambda: chunks(m, X, y, 1000, True)

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


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--warm", type=int, default=20_000)
    ap.add_argument("--river-rows", type=int, default=20_000, help="River's timed rows")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated cases (tree, river, cp, qrf)")
    args = ap.parse_args()
    Xa, ya = friedman(args.warm + args.rows)
    Xw, yw, X, y = Xa[: args.warm], ya[: args.warm], Xa[args.warm :], ya[args.warm :]
    cases = {
        "tree": (tree_case, X, y),
        "river": (river_case, X[: args.river_rows], y[: args.river_rows]),
        "cp": (forest_case(sf.CPApproximate), X, y),
        "qrf": (forest_case(sf.OnlineQRF), X, y),
    }
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only.split(",")}
    print(f"load average before: {load()}   (cores: {os.cpu_count()})")
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(args.repeats):
        for name, (make, Xc, yc) in cases.items():
            runs[name].append(timed(make(Xw, yw, Xc, yc)))
    rate = {}
    print(f"{'case':58s} {'best rows/s':>12s} {'median':>10s} {'us/row':>7s} {'cpu/wall':>8s}")
    labels = {
        "tree": "HoeffdingTreeRegressor() predict_learn_many, chunks of 100",
        "river": "River HoeffdingTreeRegressor(QOSplitter) per dict",
        "cp": "CPApproximate(10 trees, n_jobs=2), chunks of 1,000",
        "qrf": "OnlineQRF(10 trees, n_jobs=2), chunks of 1,000",
    }
    for name, rs in runs.items():
        n = cases[name][1].shape[0]
        wall, cpu = min(rs)
        rate[name] = n / wall
        med = n / statistics.median(w for w, _ in rs)
        print(f"{labels[name]:58s} {rate[name]:12,.0f} {med:10,.0f} {1e6 / rate[name]:7.2f} "
              f"{cpu / wall:8.2f}")  # fmt: skip
    print(f"load average after: {load()}")
    print()
    print(f"{'target':58s} {'measured':>12s} {'goal':>10s}  verdict")
    rows = []
    if "tree" in rate and "river" in rate:
        rows.append(("tree / River (same run)", rate["tree"] / rate["river"], TREE_RATIO, "x"))
    if "cp" in rate:
        rows.append(("CPApproximate(n_trees=10, n_jobs=2) rows/s", rate["cp"], CP_RATE, ""))
    if "qrf" in rate:
        rows.append(("OnlineQRF(n_trees=10, n_jobs=2) rows/s", rate["qrf"], QRF_RATE, ""))
    for label, got, goal, unit in rows:
        verdict = "PASS" if got >= goal else "FAIL"
        fmt = f"{got:.1f}{unit}" if unit else f"{got:,.0f}"
        gfmt = f"{goal:.0f}{unit}" if unit else f"{goal:,.0f}"
        print(f"{label:58s} {fmt:>12s} {gfmt:>10s}  {verdict}")


if __name__ == "__main__":
    main()
