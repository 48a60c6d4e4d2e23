"""Prediction intervals, prequential, alpha = 0.1: every streamforest method beside River's
``conf.RegressionJackknife(ARFRegressor(n_models=10), window_size=1000)`` in the same run (and
CapyMOA's MVE / AdaPI over a 10-tree ARF regressor when ``capymoa`` is installed).

Streams
- ``gra``: ``river.datasets.synth.FriedmanDrift(drift_type="gra", position=(n/2, 3n/4),
  seed=42)`` (River 0.26 requires ``position`` for 'gra'; these are the JMLR paper's change
  points at 1/2 and 3/4 of the stream), 100k examples by default;
- every real dataset in ``../shared/data/`` (rows in their original order, first ``--max-rows``).

Every model sees the identical examples, test-then-train.  Ours run through their compiled
prequential pass ``predict_learn_many`` after a warm-up on other data (so the time of loading
compiled code is not counted); River and CapyMOA run ``predict_one`` then ``learn_one``.

Metrics (JMLR 2019 §4.1.1): MER (fraction of y outside the interval), RIS (mean width over
rho = range of y over the evaluated stream; an infinite interval, which conformal methods give
for their first few examples, counts as width rho), utility ((1 - RIS), discounted by
exp(-gamma (MER - alpha)) with gamma = 2 ln 2 / alpha when MER > alpha, 0 when RIS > 1), MAE of
the point prediction, throughput, and throughput ratio to River's jackknife.

    python benchmarks/intervals_vs_river.py [--n 100000] [--max-rows 10000] [--datasets a,b]
        [--skip-river] [--skip-ours] [--peers-from results/intervals/peers.json]
        [--out results/intervals]

River's jackknife runs at a few hundred examples per second (about an hour for the default
streams), so ``--skip-ours`` measures the peers alone and ``--peers-from`` reuses those rows
(marked ``cached`` in the JSON; their throughput was then measured in another run).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ALPHA = 0.1
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def metrics(y, lo, hi, pred, alpha=ALPHA):
    from streamforest.metrics import score

    m = score(y, pred, np.stack([lo, hi], axis=-1), [alpha])
    iv = m["intervals"][f"{alpha:g}"]
    return {"mer": iv["mer"], "ris": iv["ris"], "utility": iv["utility"], "mae": m["mae"]}


def our_methods():
    import streamforest as sf

    def forest(n_jobs=1):
        return sf.OnlineForestRegressor(n_trees=10, n_jobs=n_jobs, seed=42)

    return {
        "OnlineQRF": lambda: sf.OnlineQRF(forest=forest()),
        "OnlineQRF 2 threads": lambda: sf.OnlineQRF(forest=forest(2)),
        "OnlineQRF hdi": lambda: sf.OnlineQRF(forest=forest(), interval="hdi"),
        "CPApproximate": lambda: sf.CPApproximate(forest=forest()),
        "CPApproximate 2 threads": lambda: sf.CPApproximate(forest=forest(2)),
        "CPExact": lambda: sf.CPExact(forest=forest()),
        "CPExact 2 threads": lambda: sf.CPExact(forest=forest(2)),
        "ConformalQRF": lambda: sf.ConformalQRF(forest=forest(), alphas=(ALPHA,)),
        "ConformalQRF+ACI": lambda: sf.ConformalQRF(
            forest=forest(), alphas=(ALPHA,), aci_gamma=0.005
        ),
        "Gaussian": lambda: sf.GaussianInterval(forest=forest()),
    }


def run_ours(make, X, y):
    model = make()
    t0 = time.perf_counter()
    pred, iv = model.predict_learn_many(X, y, alpha=ALPHA)
    secs = time.perf_counter() - t0
    return pred, iv[:, 0], iv[:, 1], secs


def run_river(X, y):
    from river import conf, forest

    model = conf.RegressionJackknife(
        forest.ARFRegressor(n_models=10, seed=42), confidence_level=1 - ALPHA, window_size=1000
    )
    n = len(y)
    pred, lo, hi = np.zeros(n), np.full(n, -np.inf), np.full(n, np.inf)
    rows = [dict(enumerate(r)) for r in X.tolist()]
    t0 = time.perf_counter()
    for i in range(n):
        x = rows[i]
        if i:
            iv = model.predict_one(x, with_interval=True)
            lo[i], hi[i] = iv.lower, iv.upper
            pred[i] = (iv.lower + iv.upper) / 2
        model.learn_one(x, float(y[i]))
    return pred, lo, hi, time.perf_counter() - t0


def run_capymoa(kind, X, y):
    from capymoa.regressor import AdaptiveRandomForestRegressor
    from capymoa.stream import NumpyStream
    from capymoa.uncertainty import MVE, AdaPI

    stream = NumpyStream(X, y, target_type="numeric")
    schema = stream.get_schema()
    base = AdaptiveRandomForestRegressor(schema=schema, ensemble_size=10, random_seed=42)
    cls = {"MVE": MVE, "AdaPI": AdaPI}[kind]
    model = cls(schema=schema, base_learner=base, confidence_level=1 - ALPHA, random_seed=42)
    n = len(y)
    pred, lo, hi = np.zeros(n), np.full(n, -np.inf), np.full(n, np.inf)
    t0 = time.perf_counter()
    i = 0
    while stream.has_more_instances():
        inst = stream.next_instance()
        if i:
            iv = model.predict(inst)
            if iv is not None:
                lo[i], hi[i] = iv[0], iv[2]
                pred[i] = iv[1]
        model.train(inst)
        i += 1
    return pred, lo, hi, time.perf_counter() - t0


def gra_stream(n):
    from river.datasets import synth

    data = list(
        synth.FriedmanDrift(drift_type="gra", position=(n // 2, 3 * n // 4), seed=42).take(n)
    )
    keys = list(data[0][0])
    X = np.array([[x[k] for k in keys] for x, _ in data])
    y = np.array([t for _, t in data])
    return X, y


def real_dataset(name, max_rows):
    from streamforest.streams import dataset

    return dataset(name, root=DATA).arrays(max_rows)


def evaluate(name, X, y, args, methods, report, cached):
    rows = {}
    if not args.skip_ours:
        for label, make in methods.items():
            pred, lo, hi, secs = run_ours(make, X, y)
            rows[label] = {**metrics(y, lo, hi, pred), "seconds": secs, "eps": len(y) / secs}
    if name in cached:  # peers measured by an earlier run (--peers-from)
        rows.update({k: {**v, "cached": True} for k, v in cached[name].items()})
    elif not args.skip_river:
        pred, lo, hi, secs = run_river(X, y)
        rows["River Jackknife(ARF10, w=1000)"] = {
            **metrics(y, lo, hi, pred),
            "seconds": secs,
            "eps": len(y) / secs,
        }
        if args.capymoa:
            for kind in ("MVE", "AdaPI"):
                try:
                    pred, lo, hi, secs = run_capymoa(kind, X, y)
                except Exception as e:  # optional peer: report and go on
                    print(f"  CapyMOA {kind} failed: {type(e).__name__}: {e}")
                    continue
                rows[f"CapyMOA {kind}(ARF10)"] = {
                    **metrics(y, lo, hi, pred),
                    "seconds": secs,
                    "eps": len(y) / secs,
                }
    ref = rows.get("River Jackknife(ARF10, w=1000)", {}).get("eps")
    print(f"\n== {name}: n={len(y)}, alpha={ALPHA}")
    print(
        f"{'method':34s} {'MER':>6s} {'RIS':>6s} {'util':>6s} {'MAE':>8s} "
        f"{'ex/s':>10s} {'xRiver':>8s}"
    )
    for label, r in rows.items():
        ratio = f"{r['eps'] / ref:8.0f}" if ref else "       -"
        print(
            f"{label:34s} {r['mer']:6.3f} {r['ris']:6.3f} {r['utility']:6.3f} {r['mae']:8.3f} "
            f"{r['eps']:10.0f} {ratio}"
        )
    report[name] = rows


def summarize(report) -> None:
    """Per method over the real datasets: how many kept MER <= alpha, mean MER, median RIS,
    mean utility, and the median throughput ratio to River."""
    real = [k for k in report if not k.startswith("FriedmanDrift")]
    if not real:
        return
    methods = list(dict.fromkeys(m for d in real for m in report[d]))
    print(f"\n== summary over {len(real)} real datasets (alpha={ALPHA})")
    print(f"{'method':34s} {'MER<=a':>7s} {'MER':>6s} {'RIS~':>6s} {'util':>6s} {'xRiver~':>8s}")
    for m in methods:
        rows = [(d, report[d][m]) for d in real if m in report[d]]
        ratios = [
            r["eps"] / report[d]["River Jackknife(ARF10, w=1000)"]["eps"]
            for d, r in rows
            if "River Jackknife(ARF10, w=1000)" in report[d]
        ]
        print(
            f"{m:34s} {sum(r['mer'] <= ALPHA for _, r in rows):3d}/{len(rows):<3d} "
            f"{np.mean([r['mer'] for _, r in rows]):6.3f} "
            f"{np.median([r['ris'] for _, r in rows]):6.3f} "
            f"{np.mean([r['utility'] for _, r in rows]):6.3f} "
            f"{np.median(ratios) if ratios else float('nan'):8.0f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="length of the gra stream (0: skip)")
    ap.add_argument("--max-rows", type=int, default=10_000, help="rows per real dataset")
    ap.add_argument("--datasets", default="all", help="comma-separated names, 'all' or 'none'")
    ap.add_argument("--skip-river", action="store_true")
    ap.add_argument("--skip-ours", action="store_true", help="measure the peers only")
    ap.add_argument(
        "--peers-from",
        default=None,
        help="JSON of an earlier run whose River/CapyMOA rows are reused (marked cached)",
    )
    ap.add_argument("--out", default="results/intervals")
    args = ap.parse_args()
    try:
        import capymoa  # noqa: F401

        args.capymoa = True
    except Exception:
        args.capymoa = False
        print("capymoa not installed: CapyMOA peers skipped")

    methods = our_methods()
    if not args.skip_ours:
        # warm-up: load every compiled kernel the runs use (more than one chunk, so the
        # pipelined path and tree growth run too)
        Xw, yw = gra_stream(20_000)
        for make in methods.values():
            warm = make()
            warm.predict_learn_many(Xw, yw, alpha=ALPHA)
            warm.load_kernels()
    cached = {}
    if args.peers_from:
        old = json.loads(Path(args.peers_from).read_text())
        for ds, rows in old.items():
            peers = {k: v for k, v in rows.items() if k.startswith(("River", "CapyMOA"))}
            if peers:
                cached[ds] = peers

    report = {}
    if args.n:
        evaluate(
            f"FriedmanDrift gra ({args.n})", *gra_stream(args.n), args, methods, report, cached
        )
    if args.datasets != "none":
        manifest = json.loads((DATA / "manifest.json").read_text())
        names = sorted(manifest) if args.datasets == "all" else args.datasets.split(",")
        for name in names:
            X, y = real_dataset(name, args.max_rows)
            evaluate(name, X, y, args, methods, report, cached)
    summarize(report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fname = "peers.json" if args.skip_ours else "intervals_vs_river.json"
    (out / fname).write_text(json.dumps(report, indent=1))
    print(f"\nwrote {out / fname}")


if __name__ == "__main__":
    main()
