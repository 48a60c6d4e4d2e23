"""ABORF (thesis ch. 6) against our ATSER-Seeds and default forest on stationary Friedman #1:
prequential MAE (every row predicted before it is learnt) and throughput of one
``predict_learn_many`` call per model, one thread, all in the same run.  Each model runs
``--repeats`` times, alternating with the others after a warm-up that loads the compiled code;
the best time is kept (the machine is shared and noisy) and the median printed beside it.  The
MAE does not depend on the run.

    python benchmarks/aborf_friedman.py [--n 100000] [--repeats 2] [--thesis-stream]
        [--models "ABORFRegressor() (defaults)" ...]

``--thesis-stream``: the thesis' FRIEDMAN stream instead (``Friedman.thesis(n, seed=0)``: the
features permuted at n/4, n/2 and 3n/4, abrupt drifts), the stream ``THESIS`` is for.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import streamforest as sf
from streamforest import streams

THESIS = sf.ABORFRegressor.THESIS  # the thesis' settings (Table 6.2): the variants start there
MODELS = {
    "ABORFRegressor(**THESIS)": lambda: sf.ABORFRegressor(**THESIS, seed=1),
    "ABORFRegressor(**THESIS, oblique=False)": lambda: sf.ABORFRegressor(
        **{**THESIS, "oblique": False}, seed=1
    ),
    "ABORFRegressor(**THESIS, weighting='equal')": lambda: sf.ABORFRegressor(
        **{**THESIS, "weighting": "equal"}, seed=1
    ),
    "ABORFRegressor(**THESIS, coef_decay=0.96)": lambda: sf.ABORFRegressor(
        **THESIS, coef_decay=0.96, seed=1
    ),
    "ABORFRegressor() (defaults)": lambda: sf.ABORFRegressor(seed=1),
    "ATSEREnsembleRegressor(mode='seeds')": lambda: sf.ATSEREnsembleRegressor(mode="seeds", seed=1),
    "OnlineForestRegressor()": lambda: sf.OnlineForestRegressor(seed=1),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--thesis-stream", action="store_true")
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = ap.parse_args()
    models = {name: MODELS[name] for name in args.models}
    if args.thesis_stream:
        X, y = streams.Friedman.thesis(n=args.n, seed=0).arrays()
    else:
        X, y = streams.Friedman(function=1, n=args.n, seed=7).arrays()
    for make in models.values():  # warm-up: load (or compile) the kernels
        make().predict_learn_many(X[:3000], y[:3000])
    times = {name: [] for name in models}
    mae = {}
    for _ in range(args.repeats):
        for name, make in models.items():
            m = make()
            t0 = time.perf_counter()
            p = m.predict_learn_many(X, y)
            times[name].append(time.perf_counter() - t0)
            err = np.abs(p - y)
            mae[name] = (err.mean(), err[-len(y) // 4 :].mean())
    what = "the thesis' abrupt drifts" if args.thesis_stream else "stationary"
    print(f"Friedman #1, {args.n:,} rows, {what} (target sd {y.std():.2f}); one thread")
    print(f"{'model':38s} {'MAE':>6s} {'last 25%':>9s} {'rows/s best':>12s} {'median':>10s}")
    for name, ts in times.items():
        best, med = args.n / min(ts), args.n / statistics.median(ts)
        a, b = mae[name]
        print(f"{name:38s} {a:6.3f} {b:9.3f} {best:12,.0f} {med:10,.0f}")


if __name__ == "__main__":
    main()
