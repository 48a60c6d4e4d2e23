"""Warm per-example speed of the interval methods on the compiled C++ core against the numba
kernels, same run.

For ``CPApproximate(forest=OnlineForestRegressor(n_trees=10))`` (and, with ``--all``, CPExact and
GaussianInterval over the same forest) on stationary Friedman #1 (10 features): per example,
``predict_interval_one(x, alpha=0.1)`` then ``learn_one`` of River-style dicts (a fresh model per
run, ``--rows`` examples, CPU time per example); then the latency of one
``predict_interval_one`` call of the trained model (wall time of each call over ``--heldout``
held-out dicts: the median).  Each core is warmed up first (an untimed model through the same
calls: kernels loaded or compiled); the two cores alternate run by run (``--repeats`` pairs),
and the table shows each one's median.  Both cores give the same models bit for bit
(tests/test_core_conformal.py); this only times them.

    python benchmarks/intervals_core_vs_numba.py [--rows 20000] [--heldout 2000] [--repeats 3]
        [--all]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def friedman(n: int, seed: int):
    r = np.random.default_rng(seed)
    X = r.random((n, 10))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    return X, y + 5 * X[:, 4] + r.standard_normal(n)


def models(every: bool):
    import streamforest as sf

    def forest():
        return sf.OnlineForestRegressor(n_trees=10, seed=1)

    out = {"CPApproximate(10 trees)": lambda: sf.CPApproximate(forest=forest())}
    if every:
        out["CPExact(10 trees)"] = lambda: sf.CPExact(forest=forest())
        out["GaussianInterval(10 trees)"] = lambda: sf.GaussianInterval(forest=forest())
    return out


def per_example(m, D, y) -> float:
    """CPU seconds per example of predict_interval_one + learn_one over the dicts."""
    t0 = time.process_time()
    for x, v in zip(D, y, strict=True):
        m.predict_interval_one(x, alpha=0.1)
        m.learn_one(x, v)
    return (time.process_time() - t0) / len(D)


def latency(m, D) -> float:
    """Median wall seconds of one predict_interval_one call."""
    clock = time.perf_counter
    t = []
    for x in D:
        t0 = clock()
        m.predict_interval_one(x, alpha=0.1)
        t.append(clock() - t0)
    return statistics.median(t)


def main(argv=None) -> None:
    from streamforest.engine import dispatch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--heldout", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--all", action="store_true", help="CPExact and GaussianInterval too")
    a = ap.parse_args(argv)
    X, y = friedman(a.rows + a.heldout, 0)
    D = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
    yl = [float(v) for v in y]
    train, held = D[: a.rows], D[a.rows :]
    cores = {"numba": False, "C++": True}
    print(f"median of {a.repeats}")
    print(f"{'model':28s} {'measure':36s} {'numba':>10s} {'C++':>10s} {'C++/numba':>10s}")
    for name, make in models(a.all).items():
        pe = {c: [] for c in cores}
        lat = {c: [] for c in cores}
        for on in cores.values():  # warm-up: every kernel loaded or compiled
            with dispatch.using_core(on):
                m = make()
                per_example(m, train[:3000], yl[:3000])
                latency(m, held[:200])
        for _ in range(a.repeats):
            for c, on in cores.items():
                with dispatch.using_core(on):
                    m = make()
                    pe[c].append(per_example(m, train, yl[: a.rows]))
                    lat[c].append(latency(m, held))
        us = {c: 1e6 * statistics.median(v) for c, v in pe.items()}
        lu = {c: 1e6 * statistics.median(v) for c, v in lat.items()}
        print(f"{name:28s} {'predict_interval_one+learn_one us/row':36s} {us['numba']:10.2f} "
              f"{us['C++']:10.2f} {us['C++'] / us['numba']:10.2f}")  # fmt: skip
        print(f"{name:28s} {'predict_interval_one median us':36s} {lu['numba']:10.2f} "
              f"{lu['C++']:10.2f} {lu['C++'] / lu['numba']:10.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
