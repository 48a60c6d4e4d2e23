"""Per-example cost of the lock every public call of a model holds (issue #33).

For each model, the same per-example calls (``learn_one``, ``predict_one``,
``predict_interval_one`` where the model has it) are timed with the lock (the normal call) and
without it (the method's undecorated function, ``type(model).f.__wrapped__``), alternating,
best block of 100 calls over ``--repeats`` rounds; printed: microseconds per call both ways,
their difference and ratio.
The learning calls run on two copies of the same model learnt alike, so both learn the same
rows.  Calls an outer call makes to an inner model's public methods (an interval method's forest
predicting) hold that model's lock in both columns.

    python benchmarks/thread_lock.py [--rows 2000] [--repeats 5] [--models qrf,cp-approx,tree]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np

from streamforest import registry


def _time(fn, rows) -> float:
    t = time.perf_counter()
    for r in rows:
        fn(r)
    return (time.perf_counter() - t) / len(rows) * 1e6


def _best(with_lock, without, blocks, repeats: int) -> tuple[float, float]:
    """Best microseconds per call of each over ``repeats`` rounds, each timing every block of
    rows both ways, alternating (so both see the same load)."""
    best = [np.inf, np.inf]
    for _ in range(repeats):
        for block in blocks:
            best[0] = min(best[0], _time(with_lock, block))
            best[1] = min(best[1], _time(without, block))
    return best[0], best[1]


def bench(name: str, X, y, rows, n: int, repeats: int) -> dict:
    locked_model = registry.build(name, seed=0)
    locked_model.learn_many(X[:3000], y[:3000])
    bare_model = copy.deepcopy(locked_model)
    cls = type(locked_model)
    blocks = [rows[i : i + 100] for i in range(0, n, 100)]
    out = {
        "predict_one": _best(
            locked_model.predict_one,
            lambda r: cls.predict_one.__wrapped__(bare_model, r),
            blocks,
            repeats,
        )
    }
    if hasattr(locked_model, "predict_interval_one"):
        out["predict_interval_one"] = _best(
            lambda r: locked_model.predict_interval_one(r, 0.1),
            lambda r: cls.predict_interval_one.__wrapped__(bare_model, r, 0.1),
            blocks,
            repeats,
        )
    # learning: both copies learn the same rows, in the same order, block by block
    learn = cls.learn_one.__wrapped__
    best = [np.inf, np.inf]
    for k in range(3000, 3000 + repeats * n, 100):
        block = range(k, k + 100)
        best[0] = min(best[0], _time(lambda i: locked_model.learn_one(rows[i], y[i]), block))
        best[1] = min(best[1], _time(lambda i: learn(bare_model, rows[i], y[i]), block))
    out["learn_one"] = tuple(best)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--models", default="tree,forest,cp-approx,qrf,normalized-cp")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.rows
    X = rng.random((3000 + args.repeats * n, 4))
    y = X @ [3.0, -2.0, 1.0, 0.0] + rng.normal(0, 0.1, X.shape[0])
    rows = [dict(enumerate(r)) for r in X]
    print(f"{'model':<16}{'call':<22}{'locked us':>10}{'bare us':>10}{'diff us':>9}{'ratio':>8}")
    for name in args.models.split(","):
        for call, (a, b) in bench(name, X, y, rows, n, args.repeats).items():
            print(f"{name:<16}{call:<22}{a:>10.2f}{b:>10.2f}{a - b:>9.2f}{a / b:>8.3f}")


if __name__ == "__main__":
    main()
