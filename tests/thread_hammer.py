"""Models shared by threads without a wrapper (issue #33): 1 learner, 3 predictors.

:func:`hammer` runs, on one model, a learning thread (per-example ``learn_one`` with a
``learn_many`` batch every 250 rows) while three threads predict (per example and in batches:
``predict_one``, ``predict``, ``predict_interval_one``, ``predict_interval``, quantiles where the
model has them) until the learner is done; then it checks every prediction was well formed and
that the model equals (the same pickle) one that learnt the same rows alone.  A crash would kill
the process, so :func:`drive` runs each run in a child process and counts exit codes.

    python tests/thread_hammer.py --models qrf,cp-approx,tree --runs 20 [--rows 3000]
"""

from __future__ import annotations

import argparse
import collections
import pickle
import subprocess
import sys
import threading
import time

import numpy as np


def build(name: str):
    from streamforest import registry

    spec = registry.get(name)
    params = {}
    if "forest" in spec.layers:
        params["n_trees"] = 4
    if "n_members" in spec.param_names():
        params["n_members"] = 4
    if "calibration_size" in spec.param_names():
        params["calibration_size"] = 200
    return registry.build(name, params, seed=0)


def _data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))
    return X, 10 * X[:, 0] + 5 * np.sin(6 * X[:, 1]) + rng.standard_normal(n)


def _learn(model, X, y, start: int, stop: int, pause: bool = False) -> None:
    i = start
    while i < stop:
        if pause:
            time.sleep(0)  # let the predictors in between two calls (the lock is not fair)
        if i % 250 == 125 and i + 50 <= stop:
            model.learn_many(X[i : i + 50], y[i : i + 50])
            i += 50
        else:
            model.learn_one({j: float(v) for j, v in enumerate(X[i])}, float(y[i]))
            i += 1


def hammer(name: str, rows: int = 3000, warm: int = 300) -> dict:
    """One run: returns ``{"predictions": n, "equal": bool}`` (raises on a bad prediction)."""
    X, y = _data(rows)
    model = build(name)
    _learn(model, X, y, 0, warm)
    probes = X[-64:]
    has_interval = hasattr(model, "predict_interval")
    has_quantiles = hasattr(model, "predict_quantiles")
    errors, counts = [], [0, 0, 0]
    done = threading.Event()

    def predictor(k: int) -> None:
        rng = np.random.default_rng(k)
        try:
            while not done.is_set():
                x = {j: float(v) for j, v in enumerate(probes[rng.integers(len(probes))])}
                points = [model.predict_one(x), *model.predict(probes[:8])]
                assert np.isfinite(points).all(), points
                if has_interval:
                    for iv in (np.array([model.predict_interval_one(x, alpha=0.2)]),
                               model.predict_interval(probes[:8], alpha=[0.1, 0.3])):  # fmt: skip
                        assert not np.isnan(iv).any() and np.all(iv[..., 0] <= iv[..., 1]), iv
                if has_quantiles:
                    q = model.predict_quantiles(probes[:4], [0.1, 0.9])
                    assert np.all(q[:, 0] <= q[:, 1]), q
                    model.predict_quantiles_one(x, 0.5)
                counts[k] += 1
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            done.set()

    threads = [threading.Thread(target=predictor, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    try:
        _learn(model, X, y, warm, rows, pause=True)
    finally:
        done.set()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    alone = build(name)
    _learn(alone, X, y, 0, rows)
    equal = pickle.dumps(model) == pickle.dumps(alone)
    return {"predictions": sum(counts), "equal": equal}


def unlock_everything() -> None:
    """Every model class's public calls without the lock (to show what the lock prevents)."""
    from streamforest.base import Estimator

    classes, stack = set(), [Estimator]
    while stack:
        c = stack.pop()
        classes.add(c)
        stack.extend(c.__subclasses__())
    for c in classes:
        for k, v in list(vars(c).items()):
            if getattr(v, "_holds_lock", False):
                setattr(c, k, v.__wrapped__)


def drive(names, runs: int, rows: int = 3000, no_lock: bool = False) -> dict:
    """``runs`` child processes per model; per model the counts of outcomes (``ok``,
    ``differs``, ``error``, ``crash:<exit code>``)."""
    out = {}
    for name in names:
        counts: collections.Counter = collections.Counter()
        for _ in range(runs):
            proc = subprocess.run(
                [sys.executable, __file__, "--child", name, "--rows", str(rows)]
                + (["--no-lock"] if no_lock else []),
                capture_output=True, text=True,
            )  # fmt: skip
            last = proc.stdout.strip().splitlines()[-1:] or [""]
            if proc.returncode not in (0, 1):
                counts[f"crash:{proc.returncode}"] += 1
            elif proc.returncode == 1:
                counts["error"] += 1
                counts["error: " + proc.stderr.strip().splitlines()[-1][:200]] += 0
            else:
                counts["ok" if last[0].endswith("equal=True") else "differs"] += 1
        out[name] = dict(counts)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="qrf,cp-approx,cp-exact,normalized-cp,tree")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--child", default=None)
    ap.add_argument("--no-lock", action="store_true", help="without the models' locks")
    args = ap.parse_args()
    if args.child:
        if args.no_lock:
            import streamforest  # noqa: F401  (every model class defined)

            unlock_everything()
        r = hammer(args.child, args.rows)
        print(f"predictions={r['predictions']} equal={r['equal']}")
        return
    for name, counts in drive(args.models.split(","), args.runs, args.rows, args.no_lock).items():
        print(name, counts)


if __name__ == "__main__":
    main()
