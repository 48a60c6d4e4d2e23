"""Prequential 100k Friedman #1 (global recurring abrupt drift): our tree vs River's, same run.

Stream: ``river.datasets.synth.FriedmanDrift(drift_type="gra", position=(n/2, 3n/4), seed=42)``
(the JMLR paper's change points at 1/2 and 3/4 of the stream; River 0.26.1 needs ``position``
given for 'gra').  Both models see the identical examples, test-then-train.

- ours: ``HoeffdingTreeRegressor(leaf_model="mean", observer="qo")`` (default radius sigma/3),
  run by its compiled prequential loop ``predict_learn_many``, after a warm-up call that loads the
  compiled code (so compile/cache-load time is reported separately, not counted);
- River: ``HoeffdingTreeRegressor(leaf_prediction="mean", splitter=QOSplitter())``, the same
  grace period, delta and tau, ``predict_one`` then ``learn_one``.

Prints MAE of both, throughput of both and their ratio (target: >= 30x at MAE <= River's + 5%).

    python benchmarks/tree_vs_river.py [--n 100000] [--river-n N]

``--river-n`` times River on the first N examples only (its MAE is then over those N, printed
beside ours over the same N).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--river-n", type=int, default=None)
    ap.add_argument("--observer", default="qo")
    args = ap.parse_args()
    n = args.n
    rn = args.river_n or n

    from river import tree
    from river.datasets import synth

    from streamforest import HoeffdingTreeRegressor

    data = list(
        synth.FriedmanDrift(drift_type="gra", position=(n // 2, 3 * n // 4), seed=42).take(n)
    )
    keys = list(data[0][0])
    X = np.array([[x[k] for k in keys] for x, _ in data])
    y = np.array([t for _, t in data])

    t0 = time.perf_counter()
    HoeffdingTreeRegressor(leaf_model="mean", observer=args.observer).predict_learn_many(
        X[:20_000], y[:20_000]
    )  # loads every kernel a run uses (growth, rehash, splits)
    warm = time.perf_counter() - t0

    ours = HoeffdingTreeRegressor(leaf_model="mean", observer=args.observer, seed=42)
    t0 = time.perf_counter()
    pred = ours.predict_learn_many(X, y)
    t_ours = time.perf_counter() - t0
    err = np.abs(pred - y)

    river_model = tree.HoeffdingTreeRegressor(
        grace_period=200,
        delta=1e-7,
        tau=0.05,
        leaf_prediction="mean",
        splitter=tree.splitter.QOSplitter(),
    )
    rerr = np.empty(rn)
    t0 = time.perf_counter()
    for i, (x, t) in enumerate(data[:rn]):
        rerr[i] = abs(river_model.predict_one(x) - t)
        river_model.learn_one(x, t)
    t_river = time.perf_counter() - t0

    eps_ours = n / t_ours
    eps_river = rn / t_river
    mae_ours_rn = err[:rn].mean()
    print(f"stream: FriedmanDrift(gra, position=({n // 2}, {3 * n // 4}), seed=42), n={n}")
    print(f"compiled-code load (not counted): {warm:.2f} s")
    print(f"{'model':<44}{'MAE':>8}{'examples/s':>14}{'leaves':>8}")
    print(
        f"{'streamforest HoeffdingTreeRegressor (' + args.observer + ', mean)':<44}"
        f"{err.mean():>8.4f}{eps_ours:>14,.0f}{ours.n_leaves:>8}"
    )
    if rn != n:
        print(f"{'  same model, first ' + str(rn) + ' examples':<44}{mae_ours_rn:>8.4f}")
    print(
        f"{'river HoeffdingTreeRegressor (QOSplitter, mean)':<44}"
        f"{rerr.mean():>8.4f}{eps_river:>14,.0f}{river_model.n_leaves:>8}"
    )
    ratio = eps_ours / eps_river
    rel = mae_ours_rn / rerr.mean() - 1
    print(f"throughput ratio ours/river: {ratio:.1f}x   (target >= 30x)")
    print(f"MAE ours vs river over the same {rn} examples: {rel:+.1%}   (target <= +5%)")


if __name__ == "__main__":
    main()
