"""Cold start: each registry model's first use in a fresh process.

Every case runs in a fresh Python process, as a new user's first call does (the compiled core
is built at install, so nothing compiles here; before the core moved ahead of time, a first use
compiled numba kernels for 8-36 s).  Two uses per model, each in its own process:

- ``dicts``: 200 River-style dicts, ``predict_one`` (and ``predict_interval_one`` /
  ``predict_set_one`` where the model has them) then ``learn_one``;
- ``arrays``: the same 200 rows through the array API, test-then-train in chunks of 20 rows
  (``predict``, and ``predict_interval`` / ``predict_sets``, then ``learn_many``).

The time is the process's wall time from before ``import streamforest`` to the end of the
workload (the interpreter's own start is not counted), and its CPU time.  The contract
(issue 46): <= 1 s each.  ``--cli`` also times ``streamforest run`` (the README's first command
after the install).

    python benchmarks/cold_start.py [--only NAME[,NAME]] [--uses dicts,arrays] [--cli]
        [--json PATH]

The machine is shared: the load average before each case is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np
import streamforest as sf
from streamforest import registry
name, use = sys.argv[1], sys.argv[2]
m = registry.get(name).build({}, seed=0)
rng = np.random.default_rng(0)
X = rng.random((200, 5))
y = X @ np.array([3.0, -2.0, 1.0, 0.0, 0.0]) + 0.1 * rng.standard_normal(200)
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
    for i in range(0, 200, 20):
        Xc, yc = X[i : i + 20], y[i : i + 20]
        m.predict(Xc)
        if interval:
            m.predict_interval(Xc, alpha=0.1)
        if sets:
            m.predict_sets(Xc, alpha=0.1)
        m.learn_many(Xc, yc)
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def run_case(name: str, use: str) -> tuple[float, float]:
    """(wall, cpu) seconds of one first use in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD, name, use], capture_output=True,
                         text=True, check=False)  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{name} {use} failed:\n{out.stderr[-3000:]}")
    wall, cpu = (float(v) for v in out.stdout.split()[-2:])
    return wall, cpu


def run_cli() -> tuple[float, float]:
    """Wall seconds of ``streamforest run``, twice (the first in a process that never ran)."""
    times = []
    with tempfile.TemporaryDirectory(prefix="sf-cold-cli-") as d:
        env = dict(os.environ)
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
    ap.add_argument("--only", help="comma-separated registry names (default: all)")
    ap.add_argument("--uses", default="dicts,arrays", help="dicts, arrays or both")
    ap.add_argument("--cli", action="store_true", help="also time `streamforest run`")
    ap.add_argument("--limit", type=float, default=1.0, help="seconds allowed a case (1)")
    ap.add_argument("--json", metavar="PATH", help="write the figures to this JSON file")
    a = ap.parse_args(argv)
    from streamforest import registry

    names = a.only.split(",") if a.only else registry.names()
    uses = a.uses.split(",")
    rows = []
    print(f"{'model':36s} {'use':6s} {'wall s':>7s} {'cpu s':>7s}  load  verdict", flush=True)
    for name in names:
        for use in uses:
            load = os.getloadavg()[0]
            wall, cpu = run_case(name, use)
            ok = wall <= a.limit
            rows.append({"model": name, "use": use, "wall": wall, "cpu": cpu, "load": load})
            print(f"{name:36s} {use:6s} {wall:7.2f} {cpu:7.2f}  {load:4.1f}  "
                  f"{'PASS' if ok else 'FAIL'}", flush=True)  # fmt: skip
    out = {"cases": rows}
    if a.cli:
        cold, warm = run_cli()
        out["cli"] = {"cold": cold, "warm": warm}
        print(f"streamforest run: first {cold:.1f} s, again {warm:.1f} s", flush=True)
    worst = max((r["wall"] for r in rows), default=0.0)
    print(f"slowest first use: {worst:.2f} s (limit {a.limit:g} s)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
