"""CPExact's throughput relative to CPApproximate on the same forest and data (target >= 0.5),
on River's FriedmanDrift 'gra' (100k, two global drifts: every tree is replaced twice) and on a
stationary Friedman #1 stream (100k), with 1 and 2 threads, after a warm-up.  The two methods
run alternately ``--repeats`` times and the best time of each is kept (this machine is shared
and noisy).

    python benchmarks/cpexact_cost.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import streamforest as sf
from intervals_vs_river import gra_stream
from streamforest.streams import Friedman


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    repeats = ap.parse_args().repeats
    streams = {
        "gra (drift)": gra_stream(100_000),
        "Friedman #1 (stationary)": Friedman(n=100_000, seed=7).arrays(),
    }
    for name, (X, y) in streams.items():
        for n_jobs in (1, 2):
            best = {}
            for cls in (sf.CPApproximate, sf.CPExact):
                cls(forest=sf.OnlineForestRegressor(seed=1, n_jobs=n_jobs)).predict_learn_many(
                    X[:5000], y[:5000]
                )
            for _ in range(repeats):
                for cls in (sf.CPApproximate, sf.CPExact):
                    m = cls(forest=sf.OnlineForestRegressor(seed=42, n_jobs=n_jobs))
                    t0 = time.perf_counter()
                    m.predict_learn_many(X, y)
                    t = time.perf_counter() - t0
                    best[cls.__name__] = min(best.get(cls.__name__, t), t)
            eps = {k: len(y) / v for k, v in best.items()}
            ratio = eps["CPExact"] / eps["CPApproximate"]
            print(
                f"{name:26s} n_jobs={n_jobs}: CPApproximate {eps['CPApproximate']:9.0f}/s  "
                f"CPExact {eps['CPExact']:9.0f}/s  ratio {ratio:.2f}"
            )


if __name__ == "__main__":
    main()
