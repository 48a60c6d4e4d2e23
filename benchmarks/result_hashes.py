"""A fingerprint of every registry model's results, to show that a change kept them bit for bit.

For each model of :mod:`streamforest.registry` (built with its defaults and ``seed=0``): a
prequential pass in chunks over a fixed stream (Friedman #1 with an abrupt drift at 60% and a
nominal column, or its classification twin for classifiers), then 300 examples one dict at a
time (``predict_one`` / ``predict_interval_one`` / ``predict_proba_one``, then ``learn_one``),
then batch predictions of held-out rows (``predict``, ``predict_interval`` at two levels,
``predict_proba`` / ``predict_sets``).  The SHA-256 of every number produced, in order, is the
model's fingerprint.  Run it on two commits and compare the JSON files:

    python benchmarks/result_hashes.py --json before.json      # on the old commit
    python benchmarks/result_hashes.py --json after.json       # on the new one
    python benchmarks/result_hashes.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np


def _stream(n: int, classify: bool):
    rng = np.random.default_rng(7)
    X = rng.random((n, 6))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    y = y + 5 * X[:, 4] + rng.standard_normal(n)
    y[int(0.6 * n) :] = 30 - y[int(0.6 * n) :]
    X[rng.random(X.shape) < 0.01] = np.nan
    kind = np.where(rng.random(n) < 0.3, "u", "v")
    if classify:
        y = np.where(y > 16, "hi", np.where(y > 12, "mid", "lo")).astype(object)
    return X, y, kind


def _numbers(out, h) -> None:
    if out is None:
        return
    if isinstance(out, (list, tuple)):
        for v in out:
            _numbers(v, h)
        return
    a = np.asarray(out)
    if a.dtype.kind in "OUS":  # labels
        h.update(repr(a.tolist()).encode())
    else:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())


def fingerprint(name: str, n: int = 6000) -> str:
    from streamforest import registry

    spec = registry.get(name)
    classify = spec.task == "classification"
    X, y, kind = _stream(n, classify)
    m = spec.build({}, seed=0)
    h = hashlib.sha256()
    interval = hasattr(m, "predict_interval")
    sets = hasattr(m, "predict_sets")
    split = n - 800
    for s in range(0, split - 300, 1000):
        e = min(s + 1000, split - 300)
        if interval:
            _numbers(m.predict_learn_many(X[s:e], y[s:e], alpha=[0.1, 0.05]), h)
        elif sets:
            _numbers(m.predict_learn_many(X[s:e], y[s:e], alpha=0.1), h)
        elif hasattr(m, "predict_learn_many"):
            _numbers(m.predict_learn_many(X[s:e], y[s:e]), h)
        else:  # a classifier: its probabilities, then it learns the chunk
            if s:
                _numbers(m.predict_proba(X[s:e]), h)
            m.learn_many(X[s:e], y[s:e])
    for i in range(split - 300, split):
        x = {f"x{j}": float(v) for j, v in enumerate(X[i])}
        x["kind"] = str(kind[i])
        _numbers(m.predict_one(x), h)
        if interval:
            _numbers(m.predict_interval_one(x, alpha=0.1), h)
        if classify:
            _numbers(sorted(m.predict_proba_one(x).items()), h)
        m.learn_one(x, y[i] if classify else float(y[i]))
    rest = X[split:]
    rows = [{**{f"x{j}": float(v) for j, v in enumerate(r)}, "kind": str(k)}
            for r, k in zip(rest, kind[split:], strict=True)]  # fmt: skip
    _numbers([m.predict_one(x) for x in rows[:50]], h)
    if interval:
        _numbers([m.predict_interval_one(x, alpha=0.05) for x in rows[:50]], h)
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="PATH", help="write {model: fingerprint} here")
    ap.add_argument("--only", help="comma-separated registry names (default: all)")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    a = ap.parse_args(argv)
    if a.compare:
        before, after = (json.load(open(p)) for p in a.compare)
        same = [k for k in before if after.get(k) == before[k]]
        diff = [k for k in before if k in after and after[k] != before[k]]
        print(f"{len(same)} models bit-identical, {len(diff)} differ: {', '.join(diff) or '-'}")
        missing = sorted(set(before) ^ set(after))
        if missing:
            print(f"in one file only: {', '.join(missing)}")
        return 1 if diff else 0
    from streamforest import registry

    names = a.only.split(",") if a.only else registry.names()
    out = {}
    for name in names:
        out[name] = fingerprint(name)
        print(f"{name:36s} {out[name][:16]}", flush=True)
        if a.json:  # (after each model: a long run keeps what it did)
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
