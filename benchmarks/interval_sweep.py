"""The alpha sweep of issue 12: every interval method at alpha in {0.3, 0.2, 0.1, 0.05, 0.01} on
every real regression set in ``../shared/data/``, rows shuffled and in their time order, and
whether the recommended default (:class:`streamforest.NormalizedConformal`) meets the targets.

Protocol: the first ``--max-rows`` rows of a set (20k), shuffled by the seed or kept in order; a
fresh model with ``n_trees=10`` and the seed; test-then-train in chunks of 50 rows (each chunk's
intervals are predicted by ``predict_interval`` at all the levels at once, then the chunk is
learnt with ``learn_many``).  MER: fraction of targets outside; RIS: mean width over the range of
y of the evaluated rows (an infinite interval counts as that range).  A set's figures are
averaged over seeds, the table's over sets.

Targets for the default, at every alpha (issue 12): mean MER <= alpha (both orders); not
wasteful, MER >= 0.85 alpha (shuffled); RIS <= 0.95 x the better of CPApproximate and CPExact
(both orders: reported for each).

    python benchmarks/interval_sweep.py [--quick] [--max-rows 20000] [--seeds 3]
        [--datasets a,b] [--methods default,cp-approx,...] [--orders shuffled,time]
        [--jsonl out/sweep.jsonl] [--table-from out/sweep.jsonl]

``--quick``: 6 sets, 4000 rows, 1 seed.  Every run is appended to ``--jsonl`` as it ends, so a
long sweep can be tabulated while it runs (``--table-from``) and resumed (finished runs are
skipped).  Friedman 'gra'/'gsg' and ``wind`` with the adaptive wrapper: ``--drift`` runs
benchmarks/adaptive_intervals.py's protocol for the default (``--n`` rows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ALPHAS = (0.3, 0.2, 0.1, 0.05, 0.01)
CHUNK = 50
DATA = Path(
    os.environ.get("STREAMFOREST_DATA")
    or Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
)
QUICK_SETS = ("abalone", "cal_housing", "concrete", "elevators", "kin8nm", "wine_quality_red")
DEFAULT = "default"
#: The methods a sweep runs unless ``--methods`` names others (the default's variants in
#: :func:`methods` are run by name).
MAIN_METHODS = (DEFAULT, "normalized-none", "adaptive-default", "cp-approx", "cp-exact", "qrf",
                "conformal-qrf", "gaussian")  # fmt: skip


class ScaleTracker:
    """Prototype measured in docs/intervals.md (not in the library): the default with, per
    tracked level, a multiplier ``exp(theta)`` on its half-width, ``theta += eta * (err -
    alpha)`` after each row (quantile tracking in log scale; a chunk's rows use the multiplier
    of the chunk's start).  Other levels interpolate ``theta`` in ``log alpha``; intervals are
    nested by a running hull from the largest level down."""

    def __init__(self, base, alphas, eta):
        self.base, self.alphas, self.eta = base, np.asarray(alphas, float), eta
        self.theta = np.zeros(len(alphas))

    def predict_interval(self, X, alpha):
        al = np.asarray(alpha, float)
        iv = self.base.predict_interval(X, alpha=list(al))
        with np.errstate(invalid="ignore"):
            c = (iv[:, :, 0] + iv[:, :, 1]) / 2
        h = (iv[:, :, 1] - iv[:, :, 0]) / 2
        th = np.interp(np.log(al), np.log(self.alphas[::-1]), self.theta[::-1])
        h = h * np.exp(th)[None, :]
        order = np.argsort(-al)
        h[:, order] = np.maximum.accumulate(h[:, order], axis=1)
        self._last = (c, h, al)
        return np.stack([c - h, c + h], axis=2)

    def learn_many(self, X, y):
        c, h, al = self._last
        for j, a in enumerate(self.alphas):
            k = int(np.flatnonzero(np.abs(al - a) < 1e-12)[0])
            for e in np.abs(y - c[:, k]) > h[:, k]:  # an infinite interval covers (NaN > inf)
                self.theta[j] += self.eta * (float(e) - a)
        self.base.learn_many(X, y)


def methods():
    """label -> constructor ``(seed) -> model``."""
    import streamforest as sf

    def forest(seed):
        return sf.OnlineForestRegressor(n_trees=10, seed=seed)

    return {
        DEFAULT: lambda s: sf.NormalizedConformal(forest=forest(s)),
        "normalized-none": lambda s: sf.NormalizedConformal(forest=forest(s), normalize="none"),
        "adaptive-default": lambda s: sf.AdaptiveConformal(
            sf.NormalizedConformal(forest=forest(s)), alphas=ALPHAS
        ),
        # variants of the default measured in docs/intervals.md ("What was tried")
        "default-forest": lambda s: sf.NormalizedConformal(
            forest=forest(s), center="forest", offset=1.0
        ),
        "default-plain": lambda s: sf.NormalizedConformal(
            forest=forest(s), batch_scores=False, guard=False
        ),
        "default-noguard": lambda s: sf.NormalizedConformal(forest=forest(s), guard=False),
        "default-rowscores": lambda s: sf.NormalizedConformal(forest=forest(s), batch_scores=False),
        "default-es100": lambda s: sf.NormalizedConformal(forest=forest(s), error_span=100),
        "default-es250": lambda s: sf.NormalizedConformal(forest=forest(s), error_span=250),
        "default-cal500-es250": lambda s: sf.NormalizedConformal(
            forest=forest(s), calibration_size=500, error_span=250
        ),
        "default-offset0.5": lambda s: sf.NormalizedConformal(forest=forest(s), offset=0.5),
        "default-offset0.25": lambda s: sf.NormalizedConformal(forest=forest(s), offset=0.25),
        "adaptive-default-pid": lambda s: sf.AdaptiveConformal(
            sf.NormalizedConformal(forest=forest(s)), alphas=ALPHAS, method="pid"
        ),
        "adaptive-default-pid-es250": lambda s: sf.AdaptiveConformal(
            sf.NormalizedConformal(forest=forest(s), error_span=250), alphas=ALPHAS, method="pid"
        ),
        "adaptive-default-g0.05": lambda s: sf.AdaptiveConformal(
            sf.NormalizedConformal(forest=forest(s)), alphas=ALPHAS, gamma=0.05
        ),
        "default-track0.05": lambda s: ScaleTracker(
            sf.NormalizedConformal(forest=forest(s)), ALPHAS, 0.05
        ),
        "default-track0.1": lambda s: ScaleTracker(
            sf.NormalizedConformal(forest=forest(s)), ALPHAS, 0.1
        ),
        "cp-approx": lambda s: sf.CPApproximate(forest=forest(s)),
        "cp-exact": lambda s: sf.CPExact(forest=forest(s)),
        "qrf": lambda s: sf.OnlineQRF(forest=forest(s)),
        "conformal-qrf": lambda s: sf.ConformalQRF(forest=forest(s), alphas=ALPHAS),
        "gaussian": lambda s: sf.GaussianInterval(forest=forest(s)),
    }


def datasets(names=None):
    if names:
        return list(names)
    return sorted(p.name[: -len(".csv.gz")] for p in DATA.glob("*.csv.gz"))


def load(name, max_rows):
    from streamforest.streams import dataset

    return dataset(name, root=DATA).arrays(max_rows)


def run_one(make, seed, X, y, alphas=ALPHAS):
    """Test-then-train in chunks of :data:`CHUNK`: ``(mer, ris, seconds)`` per level."""
    from streamforest.metrics import score

    model = make(seed)
    n = len(y)
    iv = np.empty((n, len(alphas), 2))
    pred = np.zeros(n)
    t0 = time.perf_counter()
    for a in range(0, n, CHUNK):
        b = min(n, a + CHUNK)
        iv[a:b] = model.predict_interval(X[a:b], alpha=list(alphas))
        pred[a:b] = (iv[a:b, 0, 0] + iv[a:b, 0, 1]) / 2
        model.learn_many(X[a:b], y[a:b])
    secs = time.perf_counter() - t0
    pred = np.where(np.isfinite(pred), pred, 0.0)
    m = score(y, pred, iv, list(alphas))["intervals"]
    return {f"{al:g}": [m[f"{al:g}"]["mer"], m[f"{al:g}"]["ris"]] for al in alphas}, secs


def sweep(args, out):
    labels = [m for m in args.methods.split(",") if m]
    make = methods()
    done = set()
    if out and os.path.exists(out):
        with open(out) as fh:
            for line in fh:
                r = json.loads(line)
                done.add((r["set"], r["order"], r["seed"], r["method"], r["rows"]))
    for name in datasets(args.datasets.split(",") if args.datasets else None):
        X0, y0 = load(name, args.max_rows)
        for order in args.orders.split(","):
            for seed in range(args.seeds):
                if order == "shuffled":
                    p = np.random.default_rng(seed).permutation(len(y0))
                    X, y = X0[p], y0[p]
                else:
                    X, y = X0, y0
                for label in labels:
                    key = (name, order, seed, label, len(y))
                    if key in done:
                        continue
                    res, secs = run_one(make[label], seed, X, y)
                    rec = {"set": name, "order": order, "seed": seed, "method": label,
                           "rows": len(y), "levels": res, "seconds": secs}  # fmt: skip
                    print(f"{name:<20} {order:<8} seed {seed} {label:<16} "
                          + " ".join(f"{k}:{v[0]:.4f}/{v[1]:.3f}" for k, v in res.items())
                          + f"  {secs:6.1f} s", flush=True)  # fmt: skip
                    if out:
                        with open(out, "a") as fh:
                            fh.write(json.dumps(rec) + "\n")


def table(records):
    """Mean MER / RIS per order, method and level (a set's seeds averaged first), and the
    targets of the default."""
    sets = {}
    for r in records:
        sets.setdefault((r["order"], r["method"]), set()).add(r["set"])
    common = {}  # per order: the sets every method has run on (the table compares like with like)
    for (order, _), ss in sets.items():
        common[order] = common.get(order, ss) & ss
    by = {}
    for r in records:
        if r["set"] in common[r["order"]]:
            by.setdefault((r["order"], r["method"], r["set"]), []).append(r["levels"])
    agg = {}
    for (order, method, _), runs in by.items():
        m = {k: np.mean([run[k] for run in runs], axis=0) for k in runs[0]}
        agg.setdefault((order, method), []).append(m)
    lines = []
    for order in ("shuffled", "time"):
        meths = sorted({m for o, m in agg if o == order}, key=lambda m: (m != DEFAULT, m))
        if not meths:
            continue
        nsets = {m: len(agg[(order, m)]) for m in meths}
        lines.append(f"\n{order} order: mean MER / RIS over the {nsets[meths[0]]} sets every "
                     f"method ran on: {', '.join(sorted(common[order]))}")  # fmt: skip
        lines.append(f"{'alpha':<6}" + "".join(f"{m:>18}" for m in meths))
        mean = {}
        for al in ALPHAS:
            k = f"{al:g}"
            cells = []
            for m in meths:
                v = np.mean([s[k] for s in agg[(order, m)] if k in s], axis=0)
                mean[(m, k)] = v
                cells.append(f"{v[0]:.4f} / {v[1]:.3f}".rjust(18))
            lines.append(f"{k:<6}" + "".join(cells))
        if DEFAULT in meths:
            lines.append(f"targets of '{DEFAULT}' ({order}):")
            cps = [m for m in ("cp-approx", "cp-exact") if m in meths]
            for al in ALPHAS:
                k = f"{al:g}"
                mer, ris = mean[(DEFAULT, k)]
                ok = [f"MER <= a: {'pass' if mer <= al else 'FAIL'}"]
                if order == "shuffled":
                    ok.append(f"MER >= 0.85a: {'pass' if mer >= 0.85 * al else 'FAIL'}")
                if cps:
                    best = min(mean[(m, k)][1] for m in cps)
                    ok.append(
                        f"RIS/best CP = {ris / best:.3f} {'pass' if ris <= 0.95 * best else 'FAIL'}"
                    )
                lines.append(f"  {k:<5} " + "; ".join(ok))
    return "\n".join(lines)


def drift(n, data):
    """Friedman 'gra' / 'gsg' (windowed MER after each change) and ``wind`` for the default,
    plain and with AdaptiveConformal (ACI, PID), via benchmarks/adaptive_intervals.py."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import adaptive_intervals as AI

    AI.BASES.setdefault("normalized-cp", ("NormalizedConformal", {}))
    argv = ["--n", str(n), "--methods", "normalized-cp,cp-approx"]
    if data:
        argv += ["--data", data]
    return AI.main(argv)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="6 sets, 4000 rows, 1 seed")
    ap.add_argument("--max-rows", type=int, default=20_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--datasets", default="")
    ap.add_argument("--orders", default="shuffled,time")
    ap.add_argument("--methods", default=",".join(MAIN_METHODS))
    ap.add_argument("--jsonl", help="append each run here (and skip runs already in it)")
    ap.add_argument("--table-from", help="only print the table of this file's runs")
    ap.add_argument("--drift", action="store_true", help="the gra/gsg/wind runs instead")
    ap.add_argument("--n", type=int, default=100_000, help="rows of gra/gsg (--drift)")
    ap.add_argument("--data", help="datasets folder for wind (--drift)")
    args = ap.parse_args(argv)
    if args.drift:
        return drift(args.n, args.data)
    if args.table_from:
        with open(args.table_from) as fh:
            print(table([json.loads(line) for line in fh]))
        return 0
    if args.quick:
        args.max_rows = min(args.max_rows, 4000)
        args.seeds = 1
        args.datasets = args.datasets or ",".join(QUICK_SETS)
    sweep(args, args.jsonl)
    if args.jsonl:
        with open(args.jsonl) as fh:
            print(table([json.loads(line) for line in fh]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
