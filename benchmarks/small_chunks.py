"""Rows per second of the array API in small chunks: what calling compiled code from Python costs.

A model served in micro-batches (predict ``b`` rows, then learn them) pays the Python side of each
call once per chunk: argument checks, the forest's passes, and the compiled calls' own checks of
their arguments.  This prints, for chunk sizes 1, 10, 100 and 1000 on stationary
Friedman #1 (10 features), the rows/s of test-then-train in chunks (``predict`` or
``predict_interval(X, 0.1)``, then ``learn_many``) for ``HoeffdingTreeRegressor``,
``CPApproximate`` and ``OnlineQRF`` (10 trees each) and ``AdaptiveConformal`` (ACI) over that
``CPApproximate``, and the ratio to River's
``tree.HoeffdingTreeRegressor`` learning and predicting one dict at a time on the same rows,
timed in the same run (before and after ours; the mean of the two rates).

    python benchmarks/small_chunks.py [--rows 20000] [--sizes 1,10,100,1000]

Every model is warmed up first (a throwaway copy runs the same loop on 2,000 rows, untimed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import streamforest as sf


def friedman(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
         + 5 * X[:, 4] + rng.standard_normal(n))  # fmt: skip
    return X, y


MODELS = {
    "HoeffdingTreeRegressor": (sf.HoeffdingTreeRegressor, False),
    "CPApproximate(10 trees)": (lambda: sf.CPApproximate(seed=0), True),
    "OnlineQRF(10 trees)": (lambda: sf.OnlineQRF(seed=0), True),
    "AdaptiveConformal(CPApproximate)": (
        lambda: sf.AdaptiveConformal(sf.CPApproximate(seed=0)),
        True,
    ),
}


def chunked(make, intervals: bool, X, y, size: int) -> float:
    model = make()
    start = time.perf_counter()
    for s in range(0, X.shape[0], size):
        Xc, yc = X[s : s + size], y[s : s + size]
        if intervals:
            model.predict_interval(Xc, 0.1)
        else:
            model.predict(Xc)
        model.learn_many(Xc, yc)
    return X.shape[0] / (time.perf_counter() - start)


def river_rate(X, y) -> float:
    from river import tree

    model = tree.HoeffdingTreeRegressor()
    rows = [{f"x{j}": v for j, v in enumerate(r)} for r in X.tolist()]
    start = time.perf_counter()
    for x, target in zip(rows, y.tolist(), strict=True):
        model.predict_one(x)
        model.learn_one(x, target)
    return len(rows) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sizes", default="1,10,100,1000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    X, y = friedman(args.rows)
    Xw, yw = friedman(2_000, seed=1)
    try:
        before = river_rate(X, y)
    except ImportError:
        before = None
        print("river is not installed: no peer ratio (pip install -e '.[river]')")
    rates = {}
    for name, (make, intervals) in MODELS.items():
        for size in sizes:
            chunked(make, intervals, Xw, yw, size)  # warm-up
            rates[name, size] = chunked(make, intervals, X, y, size)
    peer = None if before is None else (before + river_rate(X, y)) / 2
    print(f"{args.rows} rows of Friedman #1; River's HoeffdingTreeRegressor per dict: "
          + ("-" if peer is None else f"{peer:,.0f} rows/s"))  # fmt: skip
    print(f"{'model':26s} {'chunk':>6s} {'rows/s':>12s} {'x River':>8s}")
    for (name, size), rate in rates.items():
        ratio = "-" if peer is None else f"{rate / peer:.2f}"
        print(f"{name:26s} {size:6d} {rate:12,.0f} {ratio:>8s}")


if __name__ == "__main__":
    main()
