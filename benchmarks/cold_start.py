"""Cold start: each public estimator's first use, from an empty numba cache.

Every case runs in a fresh Python process with a fresh, empty ``NUMBA_CACHE_DIR``, so it pays
for every kernel it needs, as a new user's first call does.  Two uses per estimator, each in its
own process and cache:

- ``dicts``: 200 River-style dicts, ``predict_one`` (and ``predict_interval_one`` /
  ``predict_set_one`` where the estimator has them) then ``learn_one``;
- ``batch``: ``learn_many`` of 1,000 rows, then ``predict`` (and ``predict_interval`` /
  ``predict_sets``) of 200 more.

The time is the process's wall time from before ``import streamforest`` to the end of the
workload (the interpreter's own start is not counted), and its CPU time.  The contract
(issue "Engine v2"): <= 20 s each.  ``--cli`` also times ``streamforest run`` (the README's
first command after the install) cold and then warm: <= 45 s cold.

    python benchmarks/cold_start.py [--only NAME[,NAME]] [--uses dicts,batch] [--cli]
        [--json PATH]

The machine is shared: the load average before and after each case is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CASES = {  # name -> constructor expression (``sf`` is streamforest)
    "HoeffdingTreeRegressor": "sf.HoeffdingTreeRegressor(seed=0)",
    "OnlineForestRegressor": "sf.OnlineForestRegressor(seed=0)",
    "CPApproximate": "sf.CPApproximate(seed=0)",
    "CPExact": "sf.CPExact(seed=0)",
    "OnlineQRF": "sf.OnlineQRF(seed=0)",
    "ConformalQRF": "sf.ConformalQRF(seed=0)",
    "GaussianInterval": "sf.GaussianInterval(seed=0)",
    "NormalizedConformal": "sf.NormalizedConformal(seed=0)",
    "AdaptiveConformal": "sf.AdaptiveConformal(sf.NormalizedConformal(seed=0))",
    "ATSERRegressor": "sf.ATSERRegressor(seed=0)",
    "ATSEREnsembleRegressor": "sf.ATSEREnsembleRegressor(seed=0)",
    "ABORFRegressor": "sf.ABORFRegressor(seed=0)",
    "SGBTRegressor": "sf.SGBTRegressor(seed=0)",
    "HoeffdingTreeClassifier": "sf.HoeffdingTreeClassifier(seed=0)",
    "ACTSERClassifier": "sf.ACTSERClassifier(seed=0)",
    "ACTSEREnsembleClassifier": "sf.ACTSEREnsembleClassifier(seed=0)",
    "ConformalClassifier": "sf.ConformalClassifier(sf.ACTSEREnsembleClassifier(seed=0))",
    "AdaptiveConformalClassifier": (
        "sf.AdaptiveConformalClassifier(sf.ConformalClassifier(sf.ACTSEREnsembleClassifier(seed=0)))"
    ),
    "AMFRegressor": "sf.AMFRegressor(seed=0)",
    "AMFClassifier": "sf.AMFClassifier(seed=0)",
    "HDIForestRegressor": "sf.HDIForestRegressor(seed=0)",
    "QuantileForestRegressor": "sf.QuantileForestRegressor(seed=0)",
}
BATCH_ONLY = {"HDIForestRegressor", "QuantileForestRegressor"}  # scikit-learn estimators

CHILD = r"""
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np
import streamforest as sf
expr, use = sys.argv[1], sys.argv[2]
m = eval(expr, {"sf": sf})
rng = np.random.default_rng(0)
X = rng.random((1200, 5))
y = X @ np.array([3.0, -2.0, 1.0, 0.0, 0.0]) + 0.1 * rng.standard_normal(1200)
classify = hasattr(m, "predict_proba")
if classify:
    y = np.where(y > np.median(y), "high", "low")
interval = hasattr(m, "predict_interval")
sets = hasattr(m, "predict_sets")
if use == "dicts":
    for i in range(200):
        x = {f"x{j}": float(v) for j, v in enumerate(X[i])}
        m.predict_one(x)
        if interval:
            m.predict_interval_one(x, alpha=0.1)
        if sets:
            m.predict_set_one(x, alpha=0.1)
        m.learn_one(x, y[i] if classify else float(y[i]))
else:
    if hasattr(m, "learn_many"):
        m.learn_many(X[:1000], y[:1000])
    else:
        m.fit(X[:1000], y[:1000])
    m.predict(X[1000:])
    if interval:
        m.predict_interval(X[1000:], alpha=0.1)
    if sets:
        m.predict_sets(X[1000:], alpha=0.1)
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def run_case(expr: str, use: str) -> tuple[float, float]:
    """(wall, cpu) seconds of one first use in a fresh process and an empty cache."""
    with tempfile.TemporaryDirectory(prefix="sf-cold-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = subprocess.run([sys.executable, "-c", CHILD, expr, use], env=env,
                             capture_output=True, text=True, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{expr} {use} failed:\n{out.stderr[-3000:]}")
    wall, cpu = (float(v) for v in out.stdout.split()[-2:])
    return wall, cpu


def run_cli() -> tuple[float, float]:
    """Wall seconds of ``streamforest run`` with an empty cache, then again warm."""
    times = []
    with tempfile.TemporaryDirectory(prefix="sf-cold-cli-") as d:
        env = {**os.environ, "NUMBA_CACHE_DIR": os.path.join(d, "cache")}
        for _ in range(2):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "streamforest.cli", "run", "--out",
                                  os.path.join(d, "out")], env=env, capture_output=True,
                                 text=True, check=False)  # fmt: skip
            if out.returncode != 0:
                raise RuntimeError(f"streamforest run failed:\n{out.stderr[-3000:]}")
            times.append(time.perf_counter() - t)
    return times[0], times[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated case names (default: all)")
    ap.add_argument("--uses", default="dicts,batch", help="dicts, batch or both")
    ap.add_argument("--cli", action="store_true", help="also time `streamforest run`")
    ap.add_argument("--limit", type=float, default=20.0, help="seconds allowed a case (20)")
    ap.add_argument("--json", metavar="PATH", help="write the figures to this JSON file")
    a = ap.parse_args(argv)
    names = a.only.split(",") if a.only else list(CASES)
    uses = a.uses.split(",")
    rows = []
    print(f"{'estimator':30s} {'use':6s} {'wall s':>7s} {'cpu s':>7s}  load  verdict", flush=True)
    for name in names:
        for use in uses:
            if use == "dicts" and name in BATCH_ONLY:
                continue
            load = os.getloadavg()[0]
            wall, cpu = run_case(CASES[name], use)
            ok = wall <= a.limit
            rows.append({"estimator": name, "use": use, "wall": wall, "cpu": cpu, "load": load})
            print(f"{name:30s} {use:6s} {wall:7.1f} {cpu:7.1f}  {load:4.1f}  "
                  f"{'PASS' if ok else 'FAIL'}", flush=True)  # fmt: skip
    out = {"cases": rows}
    if a.cli:
        cold, warm = run_cli()
        out["cli"] = {"cold": cold, "warm": warm}
        print(f"streamforest run: cold {cold:.1f} s ({'PASS' if cold <= 45 else 'FAIL'} <= 45 s),"
              f" warm {warm:.1f} s", flush=True)  # fmt: skip
    worst = max((r["wall"] for r in rows), default=0.0)
    print(f"slowest first use: {worst:.1f} s (limit {a.limit:.0f} s)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
