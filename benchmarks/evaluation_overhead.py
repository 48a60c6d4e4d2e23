"""What the prequential evaluator adds to a model's own predict+learn time.

For each model: (a) the model's compiled prequential pass over arrays already in memory
(``predict_learn_many`` on the whole stream, with intervals for interval methods), against
(b) ``evaluate.prequential`` on the same arrays (``ArrayStream``: chunked passes + the compiled
metrics kernel + windows) and (c) ``evaluate.prequential`` on the stream object itself, which
also generates the rows chunk by chunk.  Runs alternate; the best of ``--repeats`` of each is
kept.  Prints the overheads (b) / (a) - 1 and (c) / (a) - 1; the target is <= 20%.

    python benchmarks/evaluation_overhead.py [--n 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from streamforest import CPApproximate, HoeffdingTreeRegressor, OnlineForestRegressor, OnlineQRF
from streamforest.evaluate import ArrayStream, prequential
from streamforest.streams import Friedman


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    stream = Friedman(function=1, drift="gra", n=args.n, seed=42)
    X, y = stream.arrays()
    models = {
        "OnlineQRF (10 trees)": (lambda: OnlineQRF(seed=0), True),
        "CPApproximate (10 trees)": (
            lambda: CPApproximate(forest=OnlineForestRegressor(seed=0), seed=0),
            True,
        ),
        "OnlineForestRegressor (10 trees)": (lambda: OnlineForestRegressor(seed=0), False),
        "HoeffdingTreeRegressor": (lambda: HoeffdingTreeRegressor(seed=0), False),
    }
    print(f"Friedman #1 gra, n={args.n:,}, alpha=0.1, best of {args.repeats}")
    print(
        f"{'model':34s} {'own pass s':>10s} {'on arrays s':>11s} {'overhead':>9s} "
        f"{'on stream s':>11s} {'overhead':>9s}"
    )
    for name, (make, intervals) in models.items():
        # load compiled code first
        prequential(make(), Friedman(1, "gra", n=3000, seed=1), alphas=0.1)
        own, ev, arr = float("inf"), float("inf"), float("inf")
        for _ in range(args.repeats):
            m = make()
            t0 = time.perf_counter()
            if intervals:
                m.predict_learn_many(X, y, alpha=[0.1])
            else:
                m.predict_learn_many(X, y)
            own = min(own, time.perf_counter() - t0)
            t0 = time.perf_counter()
            prequential(make(), ArrayStream(X, y), alphas=0.1, window=1000)
            arr = min(arr, time.perf_counter() - t0)
            t0 = time.perf_counter()
            prequential(make(), stream, alphas=0.1, window=1000)
            ev = min(ev, time.perf_counter() - t0)
        print(
            f"{name:34s} {own:10.3f} {arr:11.3f} {100 * (arr / own - 1):8.1f}% "
            f"{ev:11.3f} {100 * (ev / own - 1):8.1f}%"
        )


if __name__ == "__main__":
    main()
