"""The ``streamforest`` command line.

``streamforest run`` streams a built-in Friedman #1 stream (global recurring abrupt drift, 100k
examples by default) through a Hoeffding regression tree, test-then-train, and prints the
prequential metrics.  (Interval models, file streams and plots come with issues #3 and #4.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def _run(args: argparse.Namespace) -> int:
    from .streams import Friedman
    from .trees import HoeffdingTreeRegressor

    stream = Friedman(
        function=1, drift=None if args.drift == "none" else args.drift, n=args.n, seed=args.seed
    )
    X, y = stream.arrays()
    model = HoeffdingTreeRegressor(
        leaf_model=args.leaf_model,
        observer=args.observer,
        grace_period=args.grace_period,
        seed=args.seed,
    )
    t0 = time.perf_counter()
    model.predict_learn_many(X[:3000], y[:3000])  # loads every compiled kernel it will use
    load = time.perf_counter() - t0
    model = model.clone()
    t0 = time.perf_counter()
    pred = model.predict_learn_many(X, y)
    seconds = time.perf_counter() - t0
    err = pred - y
    res = {
        "stream": f"Friedman(function=1, drift={stream.drift!r}, n={args.n}, seed={args.seed})",
        "model": repr(model),
        "n": args.n,
        "mae": float(np.mean(np.abs(err))),
        "rmse": float(np.sqrt(np.mean(err**2))),
        "r2": float(1 - np.sum(err**2) / np.sum((y - y.mean()) ** 2)),
        "seconds": seconds,
        "examples_per_second": args.n / seconds,
        "leaves": model.n_leaves,
        "memory_bytes": model.memory_bytes,
        "compiled_code_load_seconds": load,
    }
    width = max(len(k) for k in res)
    for k, v in res.items():
        print(f"{k:<{width}}  {v:,.4f}" if isinstance(v, float) else f"{k:<{width}}  {v}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=2)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="streamforest", description="Online regression forests for data streams."
    )
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="prequential run on a built-in stream")
    run.add_argument("--n", type=int, default=100_000, help="stream length (default 100000)")
    run.add_argument(
        "--drift",
        choices=["none", "lea", "gra", "gsg"],
        default="gra",
        help="Friedman #1 drift (default gra)",
    )
    run.add_argument("--observer", choices=["qo", "ebst", "tebst"], default="qo")
    run.add_argument("--leaf-model", choices=["mean", "linear", "adaptive"], default="adaptive")
    run.add_argument("--grace-period", type=int, default=200)
    run.add_argument("--seed", type=int, default=42)
    run.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = ap.parse_args(argv)
    if getattr(args, "n", 1) <= 0:
        ap.error("--n must be positive")
    try:
        return _run(args)
    except (OSError, ValueError) as e:
        print(f"streamforest: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
