"""Coverage per group (issue 47): the default interval method with ``groups=`` against the
default without (today's: marginal coverage only), per-group split conformal fitted in hindsight,
and crepes' and MAPIE's Mondrian conformal (batch) on the same base predictions.

Streams (file order, test-then-train in chunks of ``--chunk`` rows, ``predict_learn_many``):

- ``noise-1-2-6``: ``--n`` rows (30k), three equally likely groups whose noise sd is 1:2:6
  (``y = sin(3 x0) + x1 + 0.1 s_g e``), the group a feature column;
- ``noise-1-2-6-unequal``: the same with groups of 60%, 30% and 10% of the rows;
- ``same-noise``: three groups with the same noise (the groups do not differ);
- ``abalone`` by sex (M, F, I from its one-hot columns), ``wind`` by season of its ``month``
  column (Dec-Feb, Mar-May, Jun-Aug, Sep-Nov), from ``../shared/data`` (or STREAMFOREST_DATA).

For each stream and alpha in {0.1, 0.05}: each group's MER (fraction of targets outside) for
the default, ``NormalizedConformal(seed)``, and for ``NormalizedConformal(seed, groups=g)``,
over all rows; the mean width of finite intervals of both; *hindsight*: per-group split
conformal on the grouped model's own base predictions (the method's centre ``m`` and scale
``h`` at the reference level), the conformal quantile of each group's scores ``|y - m| / h`` over
the whole stream, width ``2 q_g h``: the width the grouped intervals would have with every
group's scores known in advance.  Peers (exchangeable streams): the rows' first half calibrates
crepes' ``ConformalRegressor`` (Mondrian bins = groups; plain residuals ``|y - m|``, and
normalised with ``sigmas = h``) and MAPIE's ``SplitConformalRegressor`` (one per group:
Mondrian by hand, prefit on the same predictions); all are measured on the second half, beside
the online grouped intervals of the same rows.

``overlapping``: three families at once (the noise set by two of them, multiplied), each group
of each family, for Mondrian (the largest of a row's thresholds) and ``Multivalid``; with
``--mvp-seeds K``, ``Multivalid`` over model seeds 0..K-1 (its defaults, and the earlier 100
buckets and ``eta = 2``): the worst group of each seed, on those three families and on two
families alone (3 and 2 groups, ``2 n / 3`` rows: tests/test_groups.py's stream).

``drifting``: controllers per group under ``AdaptiveConformal`` (ACI) over the grouped method, on
``--n`` rows whose groups' noise drifts apart (one grows ``1 -> e^4``, one shrinks ``6 -> 6
e^-3``, one steady, and a small fourth group of 5% of the rows), served and learnt in the
protocols users run: batches of 50 (``b50``), one row at a time with labels 100 rows late
(``d100``) and both (``b50+d100``): the default, the grouped method alone, the wrapper with one
marginal controller (``groups=False``) and with a controller per group.  Rows after the first
500; the target (groups of at least 2,000 rows): |MER - alpha| <= 0.02.

``kddcup99`` (``--kdd-rows``, default all 494,021, in file order, chunks of ``--chunk``):
prediction sets (``ConformalClassifier``, APS over the default Hoeffding tree) by
``protocol_type`` (tcp, udp, icmp), marginal and with ``groups=``, and under
``AdaptiveConformalClassifier`` (ACI) with one controller and with a controller per group:
each group's share of sets missing the label at alpha 0.1 and 0.05 (target: within 0.015),
and the mean set size.

Targets: synthetic |MER - alpha| <= 0.015 per group with groups (the default misses one by
>= 0.05); real data within 0.025; on the exchangeable (synthetic) streams width <= 1.05 x
hindsight (shown for the real sets too); where the groups do not differ, at most 1.10 x the
default's width; overlapping families with Multivalid: every group within 0.02.

    python benchmarks/group_coverage.py [--n 30000] [--seed 1] [--chunk 1000] [--mvp-seeds 10]
        [--kdd-rows 494021] [--only synthetic,overlapping,real,drifting,kdd]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import streamforest as sf
from streamforest.intervals._groups import REFERENCE

ALPHAS = (0.1, 0.05)
_HERE = Path(__file__).resolve()
DATA = Path(
    os.environ.get("STREAMFOREST_DATA")
    or next(
        (p / "shared" / "data" for p in _HERE.parents[1:4] if (p / "shared" / "data").is_dir()),
        _HERE.parents[1].parent / "shared" / "data",
    )
)


def normalized(seed, **kw):
    """The method these figures were measured with: NormalizedConformal over the bagged forest
    (its default base before issue 49) with its settings for that base."""
    return sf.NormalizedConformal(forest=sf.OnlineForestRegressor(), seed=seed, **kw)


# --- streams -------------------------------------------------------------------------------------
def synthetic(n, seed, noise=(1.0, 2.0, 6.0), shares=None):
    rng = np.random.default_rng(seed)
    k = len(noise)
    g = rng.choice(k, n, p=shares).astype(float)
    X = np.c_[rng.random((n, 3)), g]
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.1 * np.asarray(noise)[g.astype(int)] * rng.normal(0, 1, n)
    return X, y, 3


def read_csv(name):
    import csv
    import gzip

    with gzip.open(DATA / f"{name}.csv.gz", "rt") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], dtype=float)


def abalone():
    head, a = read_csv("abalone")
    sex = np.argmax(a[:, :3], axis=1).astype(float)  # 0 M, 1 F, 2 I
    X = np.c_[sex, a[:, 3:-1]]
    return X, a[:, -1], 0


def wind():
    head, a = read_csv("wind")
    month = a[:, head.index("month")]
    season = ((month % 12) // 3).astype(float)  # 0 Dec-Feb, 1 Mar-May, 2 Jun-Aug, 3 Sep-Nov
    X = np.c_[season, a[:, :-1]]
    return X, a[:, -1], 0


# --- measures ------------------------------------------------------------------------------------
def run(model, X, y, alphas, chunk, **kw):
    ivs, preds = [], []
    for a in range(0, len(y), chunk):
        p, iv = model.predict_learn_many(X[a : a + chunk], y[a : a + chunk], list(alphas), **kw)
        ivs.append(iv)
        preds.append(p)
    return np.concatenate(preds), np.concatenate(ivs)


def group_mer(lo, hi, y, g, rows):
    miss = (y < lo) | (y > hi)
    return {v: float(miss[rows & (g == v)].mean()) for v in np.unique(g)}


def finite_width(lo, hi, rows):
    w = hi - lo
    ok = rows & np.isfinite(w)
    return float(w[ok].mean()), ok


def conformal_q(scores, alpha):
    s = np.sort(scores[np.isfinite(scores)])
    n = len(s)
    r = math.ceil((n + 1) * (1 - alpha) - 1e-9)
    return np.inf if r > n else s[r - 1]


def hindsight(m, h, y, g, alpha, rows):
    """Per-group split conformal in hindsight on the same centre and scale."""
    s = np.abs(y - m) / h
    half = np.full(len(y), np.inf)
    for v in np.unique(g):
        k = rows & (g == v)
        half[k] = conformal_q(s[k], alpha) * h[k]
    return m - half, m + half


def peers(m, h, y, g, alpha, half_at):
    """crepes (plain and normalised) and MAPIE Mondrian, calibrated on the rows before
    ``half_at``, intervals of the rows after."""
    out = {}
    cal, test = slice(0, half_at), slice(half_at, None)
    try:
        from crepes import ConformalRegressor

        for name, sig in (("crepes", None), ("crepes-norm", h)):
            cr = ConformalRegressor()
            cr.fit(np.abs(y[cal] - m[cal]), sigmas=None if sig is None else sig[cal], bins=g[cal])
            iv = cr.predict_int(m[test], sigmas=None if sig is None else sig[test], bins=g[test],
                                confidence=1 - alpha)  # fmt: skip
            out[name] = (iv[:, 0], iv[:, 1])
    except ImportError:
        pass
    try:
        from mapie.regression import SplitConformalRegressor
        from sklearn.base import BaseEstimator, RegressorMixin

        class Given(RegressorMixin, BaseEstimator):  # the base predictions, as a fitted model
            def fit(self, X, y):
                self.fitted_ = True
                return self

            def predict(self, X):
                return X[:, 0]

        lo, hi = np.empty(len(y) - half_at), np.empty(len(y) - half_at)
        gt = g[test]
        for v in np.unique(g):
            c = g[cal] == v
            est = Given().fit(None, None)
            sc = SplitConformalRegressor(est, confidence_level=1 - alpha, prefit=True)
            sc.conformalize(m[cal][c][:, None], y[cal][c])
            _, b = sc.predict_interval(m[test][gt == v][:, None], allow_infinite_bounds=True)
            lo[gt == v], hi[gt == v] = b[:, 0, 0], b[:, 1, 0]
        out["mapie"] = (lo, hi)
    except ImportError:
        pass
    return out


def fmt(d):
    return " ".join(f"{v:.4f}" for v in d.values())


def stream_report(name, X, y, col, seed, chunk, real, exchangeable, checks):
    g = X[:, col]
    n = len(y)
    rows = np.ones(n, bool)
    levels = (*ALPHAS, REFERENCE)
    t0 = time.perf_counter()
    _, marg = run(normalized(seed=seed), X, y, levels, chunk)
    t1 = time.perf_counter()
    _, grp = run(normalized(seed=seed, groups=col), X, y, ALPHAS, chunk)
    t2 = time.perf_counter()
    ref_lo, ref_hi = marg[:, -1, 0], marg[:, -1, 1]  # (the grouped model's base: the same)
    m, h = 0.5 * (ref_lo + ref_hi), 0.5 * (ref_hi - ref_lo)
    sizes = {v: int((g == v).sum()) for v in np.unique(g)}
    print(f"\n== {name}: {n:,} rows, groups {sizes}  (default {t1 - t0:.1f} s, grouped "
          f"{t2 - t1:.1f} s)")  # fmt: skip
    tol = 0.025 if real else 0.015
    for a, alpha in enumerate(ALPHAS):
        dm = group_mer(marg[:, a, 0], marg[:, a, 1], y, g, rows)
        gm = group_mer(grp[:, a, 0], grp[:, a, 1], y, g, rows)
        wd, _ = finite_width(marg[:, a, 0], marg[:, a, 1], rows)
        ok = rows & np.isfinite(grp[:, a, 1] - grp[:, a, 0]) & (h > 0) & np.isfinite(h)
        wg = float((grp[:, a, 1] - grp[:, a, 0])[ok].mean())
        hl, hh = hindsight(m, np.where(h > 0, h, np.nan), y, g, alpha, ok)
        wh = float((hh - hl)[ok].mean())
        dev_g = max(abs(v - alpha) for v in gm.values())
        dev_d = max(abs(v - alpha) for v in dm.values())
        print(f" alpha {alpha}: MER per group  default [{fmt(dm)}] (worst off by {dev_d:.4f})"
              f"  groups [{fmt(gm)}] (worst off by {dev_g:.4f})")  # fmt: skip
        print(f"            mean width  default {wd:.4f}  groups {wg:.4f}  hindsight {wh:.4f}"
              f"  groups/hindsight {wg / wh:.3f}  groups/default {wg / wd:.3f}")  # fmt: skip
        checks.append((f"{name} a={alpha} every group within {tol}", dev_g <= tol))
        if not real and exchangeable != "same":
            checks.append((f"{name} a={alpha} default misses a group by >= 0.05", dev_d >= 0.05))
        if exchangeable:  # (the target's streams: exchangeable; real data in file order, shown)
            checks.append((f"{name} a={alpha} width <= 1.05 x hindsight", wg <= 1.05 * wh))
        if exchangeable == "same":
            checks.append((f"{name} a={alpha} width <= 1.10 x default", wg <= 1.10 * wd))
        if exchangeable:
            half_at = n // 2
            test = np.arange(n) >= half_at
            gmt = group_mer(grp[:, a, 0], grp[:, a, 1], y, g, test)
            wgt = float((grp[:, a, 1] - grp[:, a, 0])[test & ok].mean())
            line = f"            2nd half: groups worst MER {max(gmt.values()):.4f} width {wgt:.4f}"
            for peer, (lo, hi) in peers(m, h, y, g, alpha, half_at).items():
                pm = group_mer(lo, hi, y[half_at:], g[half_at:], np.ones(n - half_at, bool))
                pw = float((hi - lo)[np.isfinite(hi - lo)].mean())
                line += f" | {peer} worst {max(pm.values()):.4f} width {pw:.4f} ({wgt / pw:.3f}x)"
            print(line)


def overlapping(n, seed, model_seed, checks, chunk):
    """Three families at once (noise by the first two, multiplied; the third without effect):
    Mondrian's largest threshold against Multivalid, every group of every family."""
    X, y, _ = three_families(n, seed)
    g, k, d = (X[:, j].astype(int) for j in (3, 4, 5))
    print(f"\n== overlapping families: {n:,} rows, families of 3, 2 and 4 groups (noise x "
          f"1:2:6 and x 1:2)")  # fmt: skip
    rows = np.ones(n, bool)
    for name, groups in (("default", None), ("mondrian", [3, 4, 5]),
                         ("multivalid", sf.Multivalid([3, 4, 5], alphas=ALPHAS))):  # fmt: skip
        t0 = time.perf_counter()
        _, iv = run(normalized(seed=model_seed, groups=groups), X, y, ALPHAS, chunk)
        took = time.perf_counter() - t0
        for a, alpha in enumerate(ALPHAS):
            devs = []
            for col in (g, k, d):
                devs += [
                    v - alpha for v in group_mer(iv[:, a, 0], iv[:, a, 1], y, col, rows).values()
                ]
            w, _ = finite_width(iv[:, a, 0], iv[:, a, 1], rows)
            worst = max(devs, key=abs)
            print(f" {name:>10} alpha {alpha}: worst group off by {worst:+.4f}, width {w:.4f}"
                  f" ({took:.1f} s)")  # fmt: skip
            if name == "multivalid":
                checks.append((f"overlapping a={alpha} multivalid every group within 0.02",
                               abs(worst) <= 0.02))  # fmt: skip


def three_families(n, seed):
    """The overlapping families of :func:`overlapping`: ``(X, y, group columns of X)``."""
    rng = np.random.default_rng(seed)
    g, k, d = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 4, n)
    X = np.c_[rng.random((n, 3)), g, k, d]
    sd = np.array([1.0, 2.0, 6.0])[g] * np.array([1.0, 2.0])[k]
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.1 * sd * rng.normal(0, 1, n)
    return X, y, [3, 4, 5]


def two_families(n, seed):
    """Two families (3 and 2 groups) whose noise multiplies, nothing else (tests/test_groups.py's
    stream with ``n`` = 20,000 and ``seed`` = 3): ``(X, y, group columns of X)``."""
    rng = np.random.default_rng(seed)
    g, k = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = np.c_[rng.random((n, 2)), g, k]
    y = np.sin(3 * X[:, 0]) + 0.1 * np.array([1, 2, 6])[g] * np.array([1, 2])[k] * rng.normal(
        0, 1, n
    )
    return X, y, [2, 3]


def mvp_seeds(name, stream, seeds, checks, chunk):
    """Multivalid on overlapping families (``stream``: ``(X, y, group columns)``) over model
    seeds: the worst group of each."""
    X, y, columns = stream
    n = X.shape[0]
    rows = np.ones(n, bool)
    default = sf.Multivalid(columns, alphas=ALPHAS)
    print(f"\n== Multivalid over model seeds 0..{seeds - 1} ({name}, {n:,} rows)")
    for label, rule in ((f"buckets {default.buckets}, eta {default.eta} (default)", default),
                        ("buckets 100, eta 2.0", sf.Multivalid(columns, alphas=ALPHAS,
                                                               buckets=100, eta=2.0))):  # fmt: skip
        worst = np.zeros((seeds, len(ALPHAS)))
        widths = []
        for ms in range(seeds):
            _, iv = run(normalized(seed=ms, groups=rule), X, y, ALPHAS, chunk)
            for a, alpha in enumerate(ALPHAS):
                devs = []
                for j in columns:
                    devs += [
                        v - alpha
                        for v in group_mer(iv[:, a, 0], iv[:, a, 1], y, X[:, j], rows).values()
                    ]
                worst[ms, a] = max(devs, key=abs)
            widths.append(finite_width(iv[:, 0, 0], iv[:, 0, 1], rows)[0])
        for a, alpha in enumerate(ALPHAS):
            dev = np.abs(worst[:, a])
            print(f" {label}: alpha {alpha} worst group per seed "
                  f"[{' '.join(f'{v:+.3f}' for v in worst[:, a])}]  max |.| {dev.max():.4f}"
                  f"  mean |.| {dev.mean():.4f}")  # fmt: skip
        print(f" {label}: mean width at alpha {ALPHAS[0]} {np.mean(widths):.4f}")
        if rule is default:
            for a, alpha in enumerate(ALPHAS):
                checks.append((f"multivalid {name} a={alpha} every seed's every group within "
                               "0.02", bool(np.abs(worst[:, a]).max() <= 0.02)))  # fmt: skip


def drifting_stream(n, seed):
    rng = np.random.default_rng(seed)
    g = rng.choice(4, n, p=(0.35, 0.3, 0.3, 0.05))
    t = np.arange(n) / n
    sd = np.select([g == 0, g == 1, g == 2, g == 3],
                   [np.exp(4 * t), 2 + 0 * t, 6 * np.exp(-3 * t), 3 + 0 * t])  # fmt: skip
    X = np.c_[rng.random((n, 3)), g]
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 2 * t + 0.1 * sd * rng.normal(0, 1, n)
    return X, y, g


def served(model, X, y, batch, delay, alpha):
    """Serve ``batch`` rows at a time (``predict_interval``); learn each batch (``learn_many``)
    once ``delay`` later rows were served; the intervals served."""
    n = len(y)
    out, learnt = np.empty((n, 2)), 0
    for a in range(0, n, batch):
        out[a : a + batch] = model.predict_interval(X[a : a + batch], alpha)
        while learnt + batch <= a + batch - delay:
            model.learn_many(X[learnt : learnt + batch], y[learnt : learnt + batch])
            learnt += batch
    return out


def drifting(n, seed, model_seed, checks):
    """Controllers per group in batches and with delayed labels on a drifting stream."""
    X, y, g = drifting_stream(n, seed)
    sizes = {int(v): int((g == v).sum()) for v in np.unique(g)}
    print(f"\n== drifting groups: {n:,} rows, groups {sizes} (noise 1 -> e^4, 2, 6 -> 6 e^-3, 3)")
    late = np.arange(n) >= 500
    models = {
        "default": lambda: normalized(seed=model_seed),
        "groups": lambda: normalized(seed=model_seed, groups=3),
        "ACI, one controller": lambda: sf.AdaptiveConformal(
            normalized(seed=model_seed, groups=3), groups=False),
        "ACI per group": lambda: sf.AdaptiveConformal(
            normalized(seed=model_seed, groups=3)),
    }  # fmt: skip
    for proto, batch, delay in (("b50", 50, 0), ("d100", 1, 100), ("b50+d100", 50, 100)):
        for alpha in ALPHAS:
            for name, make in models.items():
                if proto == "d100" and alpha != ALPHAS[0]:
                    continue  # (one row at a time is slow: alpha 0.1 only)
                t0 = time.perf_counter()
                model = make()
                if name.startswith("ACI"):
                    model.alphas = (alpha,)
                iv = served(model, X, y, batch, delay, alpha)
                took = time.perf_counter() - t0
                miss = (y < iv[:, 0]) | (y > iv[:, 1])
                mer = {v: float(miss[late & (g == v)].mean()) for v in sizes}
                big = [v for v in sizes if sizes[v] >= 2000]
                dev = max(abs(mer[v] - alpha) for v in big)
                w, _ = finite_width(iv[:, 0], iv[:, 1], late)
                print(f" {proto:>8} alpha {alpha} {name:>20}: MER per group [{fmt(mer)}]  worst"
                      f" (>= 2,000 rows) off by {dev:.4f}  width {w:.4f}"
                      f"  ({took:.1f} s)")  # fmt: skip
                if name == "ACI per group":
                    checks.append((f"drifting {proto} a={alpha} every group (>= 2,000 rows) "
                                   "within 0.02 per group", dev <= 0.02))  # fmt: skip


def kdd(rows, seed, chunk, checks):
    """Prediction sets on kddcup99 by protocol_type."""
    sys.path.insert(0, str(_HERE.parent))
    os.environ.setdefault("STREAMFOREST_DATA", str(DATA))
    from classification import load, typed

    try:
        X, y, names = load("kdd", rows, seed)
    except (FileNotFoundError, ValueError) as e:
        print(f"\n== kddcup99: no data ({e})")
        return
    Xd = typed(X, names)
    g = Xd["protocol_type"].to_numpy()
    sizes = {str(v): int((g == v).sum()) for v in np.unique(g)}
    print(f"\n== kddcup99 (10%) prediction sets by protocol_type: {len(y):,} rows, groups {sizes}")
    models = {
        "marginal": lambda: sf.ConformalClassifier(seed=seed),
        "groups": lambda: sf.ConformalClassifier(seed=seed, groups="protocol_type"),
        "ACI, one controller": lambda: sf.AdaptiveConformalClassifier(
            sf.ConformalClassifier(seed=seed), alphas=ALPHAS),
        "ACI per group": lambda: sf.AdaptiveConformalClassifier(
            sf.ConformalClassifier(seed=seed, groups="protocol_type"), alphas=ALPHAS),
    }  # fmt: skip
    for name, make in models.items():
        model, t0 = make(), time.perf_counter()
        missed, size = [], []
        for a in range(0, len(y), chunk):
            _, _, sets = model.predict_learn_many(Xd.iloc[a : a + chunk], y[a : a + chunk],
                                                  list(ALPHAS))  # fmt: skip
            index = {c: k for k, c in enumerate(model.classes_)}
            cols = np.array([index[v] for v in y[a : a + chunk]])
            missed.append(~sets[np.arange(len(cols)), :, cols])
            size.append(sets.sum(axis=2))
        miss, size = np.concatenate(missed), np.concatenate(size)
        took = time.perf_counter() - t0
        for a, alpha in enumerate(ALPHAS):
            mer = {str(v): float(miss[g == v, a].mean()) for v in np.unique(g)}
            dev = max(abs(v - alpha) for v in mer.values())
            print(f" alpha {alpha} {name:>20}: missed per group [{fmt(mer)}] (worst off by "
                  f"{dev:.4f})  mean set size {size[:, a].mean():.3f}  ({took:.1f} s)")  # fmt: skip
            if name in ("groups", "ACI per group"):
                checks.append((f"kddcup99 sets {name} a={alpha} every group within 0.015",
                               dev <= 0.015))  # fmt: skip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--mvp-seeds", type=int, default=10)
    ap.add_argument("--kdd-rows", type=int, default=494_021)
    ap.add_argument("--only", default="synthetic,overlapping,real,drifting,kdd")
    args = ap.parse_args()
    only = set(args.only.split(","))
    warnings.filterwarnings("ignore")  # (the peers' notes on a prefit model, a zero sigma)
    np.seterr(all="ignore")  # (the centre and scale of the first, infinite, intervals)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min)")
    checks: list = []
    n, s = args.n, args.seed
    if "synthetic" in only:
        stream_report("noise-1-2-6", *synthetic(n, s), s, args.chunk, False, True, checks)
        X, y, c = synthetic(n, s + 1, shares=(0.6, 0.3, 0.1))
        stream_report("noise-1-2-6-unequal", X, y, c, s, args.chunk, False, True, checks)
        X, y, c = synthetic(n, s + 2, noise=(2.0, 2.0, 2.0))
        stream_report("same-noise", X, y, c, s, args.chunk, False, "same", checks)
    if "overlapping" in only:
        overlapping(n, s + 3, s, checks, args.chunk)
        if args.mvp_seeds:
            mvp_seeds("three families", three_families(n, s + 3), args.mvp_seeds, checks,
                      args.chunk)  # fmt: skip
            mvp_seeds("two families", two_families(2 * n // 3, s + 2), args.mvp_seeds, checks,
                      args.chunk)  # fmt: skip
    if "drifting" in only:
        drifting(n, s + 4, s, checks)
    if "kdd" in only:
        kdd(args.kdd_rows, s, args.chunk, checks)
    for name, data in (
        (("abalone by sex", abalone), ("wind by season", wind)) if "real" in only else ()
    ):
        try:
            X, y, c = data()
        except FileNotFoundError:
            print(f"\n== {name}: no data in {DATA}")
            continue
        stream_report(name, X, y, c, s, args.chunk, True, False, checks)
    print("\nchecks:")
    for what, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {what}")
    print(f"{sum(ok for _, ok in checks)} passed, {sum(not ok for _, ok in checks)} failed")


if __name__ == "__main__":
    main()
