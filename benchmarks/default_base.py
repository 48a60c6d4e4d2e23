"""Which base should the default interval pipeline use (issue 49)?  NormalizedConformal over each
candidate base, with the calibration settings validated for that kind of base, on every shared
regression set (``../shared/data/*.csv.gz``, in file order and shuffled) and on the library's
Friedman #1 drift streams.

Protocol: one prequential pass, ``predict_learn_many(X, y, alpha=[0.1, 0.05])`` called on
successive blocks of :data:`BLOCK` rows (each row's centre and interval made before it is
learnt).  Sets: the first ``--max-rows`` rows (20,000; 6 sets are longer and are cut, the table
says which) in file order, and the first ``--max-rows`` of the whole set shuffled by
``np.random.default_rng(0).permutation``; streams: ``Friedman(function=1, drift=D,
n=--n, seed=42)`` for D in gra, gsg, lea.  Every model gets ``seed=42``.  MER: fraction of
targets outside; RIS: mean width over the range of y (an infinite interval counts as that
range); MAE of the centre; rows/s over the whole pass (a shared 2-core machine: rough).

A base wins a set when it is valid at both levels (MER <= alpha + 0.005) with the smallest RIS at
alpha 0.1 of the valid ones.

    python benchmarks/default_base.py [--max-rows 20000] [--n 100000] [--datasets a,b]
        [--candidates forest,sgbt,...] [--orders time,shuffled] [--no-streams]
        [--jsonl out/default_base.jsonl] [--table-from out/default_base.jsonl]

``--frontier``: the settings of :func:`frontier` (each learner at the settings tried for the
issue's target on 'gra', MAE <= 0.95 and RIS <= 0.13 at MER <= 0.10), on ``Friedman(function=1,
drift="gra", n=--n, seed=42)`` with the same protocol, one line each.

Every run is appended to ``--jsonl`` as it ends (a rerun skips the finished ones), and
``--table-from`` prints the tables of a file.  The measured tables and the decision:
docs/benchmarks/defaults.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ALPHAS = (0.1, 0.05)
BLOCK = 1000
SEED = 42
SLACK = 0.005  # a set's MER may exceed alpha by this much and count as valid
DRIFTS = ("gra", "gsg", "lea")
DATA = Path(
    os.environ.get("STREAMFOREST_DATA")
    or Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
)

#: The SGBT setting tuned on 'gra' (issue 31): 200 steps at half the rate, a step whose whole
#: error rises restarts.
TUNED_SGBT = {"n_steps": 200, "learning_rate": 0.0625, "drift_threshold": 50.0}
#: The calibration settings validated for a boosted base (issue 31): the SGBT alone as the
#: centre, scores row by row.
BOOSTED = {"center": "forest", "batch_scores": False}
#: The calibration settings of NormalizedConformal's defaults before issue 49 (every base).
BAGGED = {"center": "boosted", "batch_scores": True}


def candidates():
    """label -> ``(description, constructor () -> model)``; the calibration settings are spelt
    out, so the figures do not depend on what the defaults resolve to."""
    import streamforest as sf
    from streamforest.boosting.sgbt import default_tree

    def normalized(forest, settings):
        return lambda: sf.NormalizedConformal(forest=forest(), seed=SEED, **settings)

    return {
        "forest": (
            "OnlineForestRegressor() (10 trees), center=boosted, batch_scores=True",
            normalized(sf.OnlineForestRegressor, BAGGED),
        ),
        "sgbt": (
            "SGBTRegressor(n_steps=100, learning_rate=0.125), center=forest, batch_scores=False",
            normalized(
                lambda: sf.SGBTRegressor(n_steps=100, learning_rate=0.125, drift_threshold=None),
                BOOSTED,
            ),
        ),
        "sgbt-tuned": (
            "SGBTRegressor(n_steps=200, learning_rate=0.0625, drift_threshold=50), "
            "center=forest, batch_scores=False",
            normalized(lambda: sf.SGBTRegressor(**TUNED_SGBT), BOOSTED),
        ),
        "sgbt-depth8": (
            "SGBTRegressor(n_steps=200, learning_rate=0.0625, drift_threshold=50), steps of "
            "depth 8, center=forest, batch_scores=False",
            normalized(
                lambda: sf.SGBTRegressor(**TUNED_SGBT, tree=default_tree().clone(max_depth=8)),
                BOOSTED,
            ),
        ),
        "amf": (
            "AMFRegressor() (10 trees), center=boosted, batch_scores=True",
            normalized(sf.AMFRegressor, BAGGED),
        ),
        "amf-forest": (
            "AMFRegressor() (10 trees), center=forest, batch_scores=False",
            normalized(sf.AMFRegressor, BOOSTED),
        ),
    }


def frontier():
    """label -> constructor: the settings tried on 'gra' towards MAE <= 0.95, RIS <= 0.13."""
    import streamforest as sf
    from streamforest.boosting.sgbt import default_tree

    def nc(forest, **settings):
        return lambda: sf.NormalizedConformal(forest=forest(), seed=SEED, **settings)

    def sgbt(**kw):
        return lambda: sf.SGBTRegressor(**{**TUNED_SGBT, **kw})

    tree = default_tree()
    return {
        "forest 10 trees, bagged settings": nc(sf.OnlineForestRegressor, **BAGGED),
        "forest 10 trees, boosted settings": nc(sf.OnlineForestRegressor, **BOOSTED),
        "forest 10 trees, center=boosted, batch_scores=False": nc(
            sf.OnlineForestRegressor, center="boosted", batch_scores=False
        ),
        "forest 30 trees, center=boosted, batch_scores=False": nc(
            lambda: sf.OnlineForestRegressor(n_trees=30), center="boosted", batch_scores=False
        ),
        "amf 10 trees, boosted settings": nc(sf.AMFRegressor, **BOOSTED),
        "amf 30 trees, boosted settings": nc(lambda: sf.AMFRegressor(n_trees=30), **BOOSTED),
        "sgbt 100 steps, 0.125 (old defaults)": nc(
            lambda: sf.SGBTRegressor(n_steps=100, learning_rate=0.125, drift_threshold=None),
            **BOOSTED,
        ),
        "sgbt tuned (200, 0.0625, 50)": nc(sgbt(), **BOOSTED),
        "sgbt tuned, normalize=none": nc(sgbt(), normalize="none", **BOOSTED),
        "sgbt 400 steps, 0.03125, 50": nc(sgbt(n_steps=400, learning_rate=0.03125), **BOOSTED),
        "sgbt tuned, drift_threshold=25": nc(sgbt(drift_threshold=25.0), **BOOSTED),
        "sgbt tuned, feature_fraction=1": nc(sgbt(feature_fraction=None), **BOOSTED),
        "sgbt tuned, linear leaves": nc(sgbt(tree=tree.clone(leaf_model="linear")), **BOOSTED),
        "sgbt tuned, depth 8": nc(sgbt(tree=tree.clone(max_depth=8)), **BOOSTED),
        "sgbt tuned, grace period 50": nc(sgbt(tree=tree.clone(grace_period=50)), **BOOSTED),
        "sgbt tuned, depth 10": nc(sgbt(tree=tree.clone(max_depth=10)), **BOOSTED),
        "sgbt tuned, depth 8, normalize=none": nc(
            sgbt(tree=tree.clone(max_depth=8)), normalize="none", **BOOSTED
        ),
    }


def run_frontier(args, out_path) -> None:
    from streamforest.streams import Friedman

    X, y = Friedman(function=1, drift="gra", n=args.n, seed=SEED).arrays()
    done = set()
    if out_path and os.path.exists(out_path):
        with open(out_path) as fh:
            done = {json.loads(line)["candidate"] for line in fh if line.strip()}
    wanted = [c for c in args.candidates.split(",") if c] if args.candidates_given else None
    for label, make in frontier().items():
        if label in done or (wanted and label not in wanted):
            continue
        res = run_one(make, X, y)
        print(f"| {label} | {res['mae']:.4f} | {res['mer0.1']:.4f} | {res['ris0.1']:.4f} | "
              f"{res['mer0.05']:.4f} | {res['ris0.05']:.4f} | {res['rows_per_s']:,.0f} |",
              flush=True)  # fmt: skip
        if out_path:
            with open(out_path, "a") as fh:
                fh.write(json.dumps({"set": "friedman-gra", "candidate": label, **res}) + "\n")


def shared_sets(names=None) -> list[str]:
    if names:
        return list(names)
    return sorted(p.name[: -len(".csv.gz")] for p in DATA.glob("*.csv.gz"))


def runs(args):
    """``(name, order, rows in full, loader)`` of every run, in order."""
    from streamforest.streams import Friedman, dataset

    out = []
    if not args.no_sets:
        for name in shared_sets(args.datasets.split(",") if args.datasets else None):

            def load(name=name):
                return dataset(name, root=DATA).arrays()

            for order in args.orders.split(","):
                out.append((name, order, load))
    if not args.no_streams:
        for drift in DRIFTS:

            def stream(drift=drift):
                return Friedman(function=1, drift=drift, n=args.n, seed=SEED).arrays()

            out.append((f"friedman-{drift}", "time", stream))
    return out


def prepared(X, y, order: str, max_rows: int | None):
    """The rows of one run: shuffled (the whole set, then cut) or in order, at most
    ``max_rows``."""
    if order == "shuffled":
        p = np.random.default_rng(0).permutation(len(y))
        X, y = X[p], y[p]
    if max_rows and len(y) > max_rows:
        X, y = X[:max_rows], y[:max_rows]
    return np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64)


def run_one(make, X, y) -> dict:
    """One prequential pass in blocks of :data:`BLOCK` rows: MAE, MER and RIS per level, rows/s."""
    from streamforest.metrics import score

    model = make()
    n = len(y)
    pred = np.empty(n)
    iv = np.empty((n, len(ALPHAS), 2))
    t0 = time.perf_counter()
    for a in range(0, n, BLOCK):
        b = min(n, a + BLOCK)
        pred[a:b], iv[a:b] = model.predict_learn_many(X[a:b], y[a:b], alpha=list(ALPHAS))
    secs = time.perf_counter() - t0
    r = score(y, pred, iv, list(ALPHAS))
    out = {"mae": r["mae"], "rows_per_s": n / secs, "seconds": secs}
    for al in ALPHAS:
        m = r["intervals"][f"{al:g}"]
        out[f"mer{al:g}"], out[f"ris{al:g}"] = m["mer"], m["ris"]
    return out


def sweep(args, out_path) -> None:
    makers = candidates()
    labels = [c for c in args.candidates.split(",") if c]
    for c in labels:
        if c not in makers:
            raise SystemExit(f"unknown candidate {c!r}; known: {', '.join(makers)}")
    done = set()
    if out_path and os.path.exists(out_path):
        with open(out_path) as fh:
            for line in fh:
                r = json.loads(line)
                done.add((r["set"], r["order"], r["candidate"], r["rows"]))
    for name, order, load in runs(args):
        X0, y0 = load()
        X, y = prepared(X0, y0, order, None if name.startswith("friedman") else args.max_rows)
        for c in labels:
            key = (name, order, c, len(y))
            if key in done:
                continue
            res = run_one(makers[c][1], X, y)
            rec = {"set": name, "order": order, "candidate": c, "rows": len(y),
                   "rows_in_set": len(y0), **res}  # fmt: skip
            print(f"{name:<18} {order:<8} {c:<11} MAE {res['mae']:.4g}  "
                  + "  ".join(f"{al:g}: {res[f'mer{al:g}']:.4f}/{res[f'ris{al:g}']:.4f}"
                              for al in ALPHAS)
                  + f"  {res['rows_per_s']:8.0f} rows/s", flush=True)  # fmt: skip
            if out_path:
                with open(out_path, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")


def valid(r) -> bool:
    return all(r[f"mer{al:g}"] <= al + SLACK for al in ALPHAS)


def table(records, labels=None) -> str:
    """Markdown: per run, each candidate's MAE relative to the run's best, MER and RIS at both
    levels (``*``: invalid), rows/s; then each candidate's wins, invalid runs and median rows/s."""
    by_run: dict = {}
    for r in records:
        by_run.setdefault((r["set"], r["order"]), {})[r["candidate"]] = r
    labels = labels or list(dict.fromkeys(r["candidate"] for r in records))
    head = "| set | order | rows | " + " | ".join(labels) + " | winner |"
    lines = [
        "Each cell: MAE / best MAE of the row; MER / RIS at 0.1; MER / RIS at 0.05; thousand "
        "rows/s (`*`: MER above alpha + 0.005)",
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
    ]
    wins = dict.fromkeys(labels, 0)
    invalid = dict.fromkeys(labels, 0)
    speed: dict = {c: [] for c in labels}
    mae_ratio: dict = {c: [] for c in labels}
    order_key = {"time": 0, "shuffled": 1}
    for (name, order), rs in sorted(
        by_run.items(),
        key=lambda kv: (
            kv[0][0].startswith("friedman"),
            kv[0][0],
            order_key.get(kv[0][1], 2),
        ),  # fmt: skip
    ):
        present = [c for c in labels if c in rs]
        if not present:
            continue
        best_mae = min(rs[c]["mae"] for c in present)
        cells = []
        for c in labels:
            if c not in rs:
                cells.append("")
                continue
            r = rs[c]
            mark = {al: "*" if r[f"mer{al:g}"] > al + SLACK else "" for al in ALPHAS}
            invalid[c] += not valid(r)
            speed[c].append(r["rows_per_s"])
            mae_ratio[c].append(r["mae"] / best_mae if best_mae > 0 else 1.0)
            cells.append(
                f"{r['mae'] / best_mae:.2f}; "
                + "; ".join(f"{r[f'mer{al:g}']:.3f}{mark[al]} / {r[f'ris{al:g}']:.3f}"
                            for al in ALPHAS)
                + f"; {r['rows_per_s'] / 1000:.1f}k"
            )  # fmt: skip
        ok = [c for c in present if valid(rs[c])]
        winner = min(ok, key=lambda c: (rs[c]["ris0.1"], rs[c]["mae"])) if ok else "none valid"
        if ok:
            wins[winner] += 1
        rows = rs[present[0]]["rows"]
        cut = f" of {rs[present[0]]['rows_in_set']}" if rows < rs[present[0]]["rows_in_set"] else ""
        lines.append(f"| {name} | {order} | {rows}{cut} | " + " | ".join(cells) + f" | {winner} |")
    lines += ["", "| candidate | wins | invalid runs | median MAE / best | median rows/s |",
              "|---|---|---|---|---|"]  # fmt: skip
    for c in labels:
        if speed[c]:
            lines.append(
                f"| {c} | {wins[c]} | {invalid[c]} | {np.median(mae_ratio[c]):.3f} | "
                f"{np.median(speed[c]):,.0f} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-rows", type=int, default=20_000)
    p.add_argument("--n", type=int, default=100_000, help="rows of each Friedman stream")
    p.add_argument("--datasets", default="")
    p.add_argument("--candidates", default="")
    p.add_argument("--frontier", action="store_true")
    p.add_argument("--orders", default="time,shuffled")
    p.add_argument("--no-streams", action="store_true")
    p.add_argument("--no-sets", action="store_true")
    p.add_argument("--jsonl", default="")
    p.add_argument("--table-from", default="")
    args = p.parse_args(argv)
    args.candidates_given = bool(args.candidates)
    args.candidates = args.candidates or "forest,sgbt,sgbt-tuned,amf,amf-forest"
    if args.frontier:
        print("| setting | MAE | MER 0.1 | RIS 0.1 | MER 0.05 | RIS 0.05 | rows/s |")
        print("|---|---|---|---|---|---|---|")
        run_frontier(args, args.jsonl)
        return 0
    if args.table_from:
        with open(args.table_from) as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        labels = [c for c in args.candidates.split(",") if c]
        print(table(records, [c for c in labels if any(r["candidate"] == c for r in records)]))
        return 0
    for c, (what, _) in candidates().items():
        print(f"# {c}: {what}")
    sweep(args, args.jsonl)
    return 0


if __name__ == "__main__":
    sys.exit(main())
