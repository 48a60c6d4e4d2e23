"""False alarms of the forest's drift detection on stationary real data, and its detection delay
on an abrupt drift.

1. Every regression set of the datasets folder (``../shared/data``, or ``STREAMFOREST_DATA``,
   or ``--data``; its manifest.json), rows shuffled (a stationary
   stream), at most 20k rows, 3 seeds (the shuffle and the forest's seed): a default
   ``OnlineForestRegressor(n_trees=10)`` learns the stream.  Printed per set: trees replaced per
   10k rows *before* (the detector of commit ``cf8fea5``, main when this work started: its
   Page-Hinkley on errors standardised by their own running mean and sd, run from a ``git
   archive`` of that commit in a subprocess) and *after* (this library: the thesis' test), and
   after's warnings and background trees per 10k rows.  The same in file order (rows as stored:
   several sets are sorted or grouped, so that stream is not stationary) for context.
2. Friedman #1 ``gra`` (100k rows, a new concept on [50k, 75k)), 3 seeds: per tree, the rows
   from the change to its first warning and first drift; drifts before the change; the
   forest's MAE after the change with background trees, with plain resets
   (``warning_fraction=None``) and without detection.

    python benchmarks/drift_false_alarms.py [--data DIR] [--before cf8fea5 | --no-before]
    python benchmarks/drift_false_alarms.py --forest atser-obag --orders shuffled --no-gra

``--forest`` chooses the forest of part 1: ``online`` (the default ``OnlineForestRegressor``)
or an ATSER ensemble (``atser-seeds``, ``atser-obag``, ``atser-rforest``: 10 members, their
forest-level detector and background trees, and alternate subtrees inside each member); with
an ATSER ensemble there is no *before* column.  ``--no-gra`` skips part 2.

About 10 minutes on a 2-core machine, half of it compiling the *before* library once (its numba
cache is kept beside its export in the temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MAX_ROWS = 20_000
SEEDS = (0, 1, 2)


def load_set(data: Path, file: str):
    import pandas as pd

    df = pd.read_csv(data / file)
    return df.drop(columns=["target"]).to_numpy(float), df["target"].to_numpy(float)


def rows_of(n: int, seed: int, order: str) -> np.ndarray:
    if order == "shuffled":
        return np.random.default_rng(seed).permutation(n)[:MAX_ROWS]
    return np.arange(min(n, MAX_ROWS))


FORESTS = ("online", "atser-seeds", "atser-obag", "atser-rforest")


def make_forest(forest: str, seed: int):
    import streamforest as sf

    if forest == "online":
        return sf.OnlineForestRegressor(n_trees=10, seed=seed)
    return sf.ATSEREnsembleRegressor(mode=forest.removeprefix("atser-"), n_members=10, seed=seed)


def run_sets(data: Path, orders, forest: str = "online") -> dict:
    """Per (set, order, seed): rows and the forest's drift counts (whatever streamforest is
    importable: also run by the *before* subprocess)."""
    manifest = json.loads((data / "manifest.json").read_text())
    out = {}
    for name, meta in manifest.items():
        X, y = load_set(data, meta["file"])
        for order in orders:
            for seed in SEEDS:
                r = rows_of(len(y), seed, order)
                f = make_forest(forest, seed).learn_many(X[r], y[r])
                rec = {"rows": int(len(r)), "replacements": int(f.n_resets)}
                st = getattr(f, "drift_stats_", None)
                if st is not None:
                    rec.update({k: v for k, v in st.items() if k != "per_tree"})
                out[f"{name}|{order}|{seed}"] = rec
    return out


def run_before(commit: str, data: Path, orders) -> dict | None:
    """:func:`run_sets` with the library of ``commit`` (exported once to a temporary folder;
    its numba cache kept there too)."""
    where = Path(tempfile.gettempdir()) / f"streamforest-src-{commit}"
    if not (where / "src" / "streamforest").exists():
        try:
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "src"],
                                 check=True, capture_output=True).stdout  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"(no 'before' numbers: cannot export commit {commit}: {e})")
            return None
        where.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=__import__("io").BytesIO(tar)) as tf:
            tf.extractall(where, filter="data")
    env = dict(os.environ, PYTHONPATH=str(where / "src"),
               NUMBA_CACHE_DIR=str(where / "numba-cache"))  # fmt: skip
    cmd = [sys.executable, __file__, "--worker", "--data", str(data), "--orders", *orders]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def per_10k(recs, key) -> float:
    return 1e4 * sum(r.get(key, 0) for r in recs) / sum(r["rows"] for r in recs)


def report_sets(after: dict, before: dict | None, orders) -> None:
    names = sorted({k.split("|")[0] for k in after})
    for order in orders:
        print(f"\n{order} rows (<= {MAX_ROWS}, seeds {list(SEEDS)}): replacements of trees "
              f"per 10k rows, before -> after; after's warnings, background trees started / "
              f"swapped / discarded per 10k rows")  # fmt: skip
        print(f"{'set':18s} {'rows':>6s} {'before':>7s} {'after':>7s} {'warn':>6s} "
              f"{'bg start':>8s} {'swap':>6s} {'discard':>7s}")  # fmt: skip
        tot_a, tot_b = [], []
        for name in names:
            recs = [after[f"{name}|{order}|{s}"] for s in SEEDS]
            tot_a += recs
            b = "-"
            if before is not None:
                brecs = [before[f"{name}|{order}|{s}"] for s in SEEDS]
                tot_b += brecs
                b = f"{per_10k(brecs, 'replacements'):7.2f}"
            print(f"{name:18s} {recs[0]['rows']:6d} {b:>7s} {per_10k(recs, 'replacements'):7.2f} "
                  f"{per_10k(recs, 'warnings'):6.2f} {per_10k(recs, 'background_started'):8.2f} "
                  f"{per_10k(recs, 'background_swapped'):6.2f} "
                  f"{per_10k(recs, 'background_discarded'):7.2f}")  # fmt: skip
        worst = max(names, key=lambda n: per_10k([after[f"{n}|{order}|{s}"] for s in SEEDS],
                                                 "replacements"))  # fmt: skip
        wv = per_10k([after[f"{worst}|{order}|{s}"] for s in SEEDS], "replacements")
        b = f"{per_10k(tot_b, 'replacements'):.2f}" if tot_b else "-"
        print(f"{'all sets':18s} {sum(r['rows'] for r in tot_a) // 3:6d} {b:>7s} "
              f"{per_10k(tot_a, 'replacements'):7.2f} {per_10k(tot_a, 'warnings'):6.2f}   "
              f"(worst set after: {worst} {wv:.2f})")  # fmt: skip


def gra_delays(n: int = 100_000) -> None:
    import streamforest as sf
    from streamforest.streams import Friedman

    change = n // 2
    print(f"\nFriedman #1 'gra', {n} rows, change at {change} (and back at {3 * n // 4}); "
          f"default forest (10 trees), seeds {list(SEEDS)}")  # fmt: skip
    delays, leads, early, mae = [], [], 0, {}
    for seed in SEEDS:
        X, y = Friedman(function=1, drift="gra", n=n, seed=seed).arrays()
        f = sf.OnlineForestRegressor(seed=seed)
        f.learn_many(X[:change], y[:change])
        early += f.drift_stats_["drifts"]
        T = f.n_trees
        first_d = np.full(T, -1)
        first_w = np.full(T, -1)
        for i in range(change, change + 3000):  # row by row: the rows of the first signals
            f.learn_many(X[i : i + 1], y[i : i + 1])
            per = f.drift_stats_["per_tree"]
            for t in range(T):
                if first_w[t] < 0 and per["warnings"][t] > 0:
                    first_w[t] = i - change
                if first_d[t] < 0 and per["drifts"][t] > 0:
                    first_d[t] = i - change
        delays += [d if d >= 0 else np.inf for d in first_d]
        leads += [d - w for d, w in zip(first_d, first_w, strict=True) if d >= 0 and w >= 0]
        for name, kw in [("background trees", {}), ("plain resets", {"warning_fraction": None}),
                         ("no detection", {"drift_threshold": None})]:  # fmt: skip
            g = sf.OnlineForestRegressor(seed=seed, **kw)
            e = np.abs(g.predict_learn_many(X, y) - y)
            w = [e[change:change + 500].mean(), e[change + 500:change + 2000].mean(),
                 e[change + 2000:3 * n // 4].mean()]  # fmt: skip
            mae.setdefault(name, []).append(w)
    d = np.array(delays, float)
    found = np.isfinite(d)
    print(f"drifts before the change: {early} (30 trees x {change} rows)")
    print(f"trees drifting within 3000 rows of the change: {found.sum()}/{len(d)}; delay (rows) "
          f"median {np.median(d[found]):.0f}, 10%-90% {np.percentile(d[found], 10):.0f}-"
          f"{np.percentile(d[found], 90):.0f}, max {d[found].max():.0f}; background tree's "
          f"head start (first warning to drift) median {np.median(leads):.0f} rows")  # fmt: skip
    print("forest MAE after the change: rows [0, 500) [500, 2000) [2000, 25000) after it")
    for name, v in mae.items():
        m = np.mean(v, axis=0)
        print(f"  {name:18s} {m[0]:6.3f} {m[1]:6.3f} {m[2]:6.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--before", default="cf8fea5", help="commit whose detector is 'before'")
    ap.add_argument("--no-before", action="store_true")
    ap.add_argument("--orders", nargs="+", default=["shuffled", "file"])
    ap.add_argument("--forest", choices=FORESTS, default="online")
    ap.add_argument("--no-gra", action="store_true", help="skip the Friedman 'gra' delays")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(run_sets(a.data, a.orders)))
        return
    from streamforest.streams.datasets import data_root

    a.data = Path(data_root(a.data)).resolve()
    print(f"forest: {a.forest}")
    no_before = a.no_before or a.forest != "online"
    before = None if no_before else run_before(a.before, a.data, a.orders)
    after = run_sets(a.data, a.orders, a.forest)
    report_sets(after, before, a.orders)
    if not a.no_gra:
        gra_delays()


if __name__ == "__main__":
    main()
