"""Warm speed of the tree passes on the compiled C++ core against the numba kernels, same run.

For ``HoeffdingTreeRegressor()`` and ``OnlineForestRegressor(n_trees=10)`` on stationary
Friedman #1 (10 features): per example, ``predict_one`` then ``learn_one`` of River-style dicts
(a fresh model per run, ``--rows`` examples); in batch, ``learn_many`` over ``--batch-rows`` rows
in chunks of ``--chunk``.  Each run is preceded by an untimed warm-up of the same model on the
same core (its kernels loaded or compiled, the tree growth kernels included); the two cores
alternate run by run (``--repeats`` pairs), and the table shows each one's median.  Both cores
give the same models bit for bit (tests/test_core_tree_passes.py); this only times them.

    python benchmarks/core_vs_numba.py [--rows 20000] [--batch-rows 100000] [--repeats 3]
        [--clock cpu|wall]
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


def models():
    import streamforest as sf

    return {
        "HoeffdingTreeRegressor": lambda: sf.HoeffdingTreeRegressor(seed=1),
        "OnlineForestRegressor(10)": lambda: sf.OnlineForestRegressor(n_trees=10, seed=1),
    }


def per_example(make, D, y, clock) -> float:
    """Seconds per example of predict_one + learn_one over the dicts."""
    m = make()
    t0 = clock()
    for x, v in zip(D, y, strict=True):
        m.predict_one(x)
        m.learn_one(x, v)
    return (clock() - t0) / len(D)


def batch(make, X, y, chunk, clock) -> float:
    """Rows per second of learn_many in chunks."""
    m = make()
    t0 = clock()
    for s in range(0, len(y), chunk):
        m.learn_many(X[s : s + chunk], y[s : s + chunk])
    return len(y) / (clock() - t0)


def main(argv=None) -> None:
    from streamforest.engine import dispatch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--batch-rows", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu",
                    help="wall time, or the process's CPU time (less sensitive to the other "
                    "processes of a shared machine; the default)")  # fmt: skip
    a = ap.parse_args(argv)
    clock = time.perf_counter if a.clock == "wall" else time.process_time
    X, y = friedman(max(a.rows, a.batch_rows), 0)
    D = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X[: a.rows]]
    yl = [float(v) for v in y[: a.rows]]
    Xb, yb = X[: a.batch_rows], y[: a.batch_rows]
    cores = {"numba": False, "C++": True}
    print(f"{a.clock} time, median of {a.repeats}")
    print(f"{'model':28s} {'measure':28s} {'numba':>12s} {'C++':>12s} {'C++/numba':>10s}")
    for name, make in models().items():
        pe = {c: [] for c in cores}
        bt = {c: [] for c in cores}
        for on in cores.values():  # warm-up: every kernel loaded, growth included
            with dispatch.using_core(on):
                per_example(make, D[:2000], yl[:2000], clock)
                batch(make, Xb[:20_000], yb[:20_000], a.chunk, clock)
        for _ in range(a.repeats):
            for c, on in cores.items():
                with dispatch.using_core(on):
                    pe[c].append(per_example(make, D, yl, clock))
                    bt[c].append(batch(make, Xb, yb, a.chunk, clock))
        us = {c: 1e6 * statistics.median(v) for c, v in pe.items()}
        rs = {c: statistics.median(v) for c, v in bt.items()}
        print(f"{name:28s} {'predict_one+learn_one us/row':28s} {us['numba']:12.2f} "
              f"{us['C++']:12.2f} {us['C++'] / us['numba']:10.2f}")  # fmt: skip
        print(f"{name:28s} {'learn_many rows/s':28s} {rs['numba']:12.0f} {rs['C++']:12.0f} "
              f"{rs['C++'] / rs['numba']:10.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
