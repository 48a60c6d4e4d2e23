"""Online conformal controllers in the protocols users run, on the same base predictions.

For each time-ordered series and protocol, the base model (``NormalizedConformal``, 10 trees)
runs once: rows are served in batches of ``b`` (its intervals at every level a controller may
ask for, from the state it has then) and learnt ``d`` rows later (``b = 1, 50, 1000`` with
``d = 0``; ``d = 100, 1000`` with ``b = 1``).  Every controller then runs on those recorded
base intervals in the same protocol, so only the controller differs:

- ours: ``AdaptiveConformal(method=...)`` over a replay of the recorded base (the library's own
  wrapper code: the served log, the compiled passes);
- Salesforce's ``online-conformal`` (Bhatnagar et al. 2023: ``SAOCP``, ``ScaleFreeOGD``,
  ``FACI`` = DtACI, ``NExConformal``), asked for its interval when a row is served and updated
  when its label comes, on the residuals ``|y - m|`` of the base's centre (``resid``, the way
  the package is used with a point forecaster) and on our normalised scores ``|y - m| / h``
  (``scaled``, interval ``m +- delta h``); ``max_scale`` from the first 500 rows' scores;
- River's ``conf.RegressionJackknife`` over a regressor that returns the base's centre.
- hindsight (not controllers: they know every label in advance): the narrowest ``m +- theta h``
  on the same scaled scores at the same MER, one threshold for all rows (``constant``) or one per
  window of 500 rows (``window``): the width a controller reaches by adapting its threshold from
  one window to the next, had it foreseen each window's scores.

Series (time-ordered; the first ``--n`` rows of each, in their order): ``wind`` (daily wind
speeds in Ireland 1961-78, OpenML 503), River's bundled ``TrumpApproval`` (1,001 daily polls),
``friedman`` (Friedman #1 with the JMLR paper's global recurring abrupt drift, ``"gra"``: a new
concept on [n/2, 3n/4)) and ``elevators`` (the F16 elevator-control simulation in its recorded
order: the target's lag-1 autocorrelation is 0.92).  The real ones are read from
``$STREAMFOREST_DATA`` (default ``/work/shared/data``).

Reported per series, protocol, alpha and controller (the rows after the first 500 and after
those served before any label was learnt, ``max(500, b + d)``: no controller can act on those,
the unfitted base serves them infinite intervals; a protocol that leaves less than a window of
500 rows is skipped, as b = 1000 and d = 1000 on TrumpApproval's 1,001 rows): long-run MER,
the worst |MER - alpha| over tumbling windows of 500 rows, RIS (mean width over the range of y;
an infinite interval counts as 1) and the controller's rows/s (the base's time excluded).
``--table`` prints the results file as markdown tables.

    python benchmarks/online_conformal.py [--series wind,trump,friedman,elevators]
        [--protocols b1,b50,b1000,d100,d1000] [--n 20000] [--sf-modes scaled,resid]
        [--out results/online_conformal.jsonl] [--base-cache DIR] [--table]

``--base-cache DIR`` keeps each series' and protocol's recorded base predictions in ``DIR`` (one
``.npz`` per series, length and protocol) and reuses them, so a rerun of some controllers (for
instance ``--controllers ours`` after a change of ours) runs on the same base predictions
without paying for the forest again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

# (run as a script, this file's folder comes first on sys.path and its name hides the package)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

ALPHAS = (0.1, 0.05)
WARMUP = 500
WINDOW = 500
#: our methods (``method@gamma``: with that ``gamma``; aci@0.05 is the documented setting)
OURS = ("aci", "aci@0.05", "pid", "dtaci", "agaci", "sfogd", "saocp", "nexcp")
PROTOCOLS = {"b1": (1, 0), "b50": (50, 0), "b1000": (1000, 0), "d100": (1, 100), "d1000": (1, 1000)}


def load_series(name: str, n: int):
    import pandas as pd

    if name == "trump":
        from river import datasets

        rows = list(datasets.TrumpApproval())
        X = np.array([[float(v) for v in x.values()] for x, _ in rows])
        return X[:n], np.array([y for _, y in rows], dtype=float)[:n]
    if name == "friedman":  # Friedman #1 with the JMLR paper's global recurring abrupt drift
        from streamforest.streams import Friedman

        X, y = Friedman(function=1, drift="gra", n=n, seed=42).arrays()
        return np.asarray(X, float), np.asarray(y, float)
    root = os.environ.get("STREAMFOREST_DATA", "/work/shared/data")
    df = pd.read_csv(Path(root) / f"{name}.csv.gz")
    y = df.iloc[:, -1].to_numpy(float)
    X = df.iloc[:, :-1].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    return X[:n], y[:n]


def base_levels():
    from streamforest.intervals._adaptive_kernels import ladder

    return np.unique(np.concatenate([ladder(a) for a in ALPHAS] + [np.array(ALPHAS)]))


def run_base(X, y, batch, delay, levels):
    """The base's centre and intervals at ``levels`` for every row, served in ``batch``es and
    learnt ``delay`` rows later."""
    import streamforest as sf

    base = sf.NormalizedConformal(forest=sf.OnlineForestRegressor(n_trees=10, seed=42))
    n = y.shape[0]
    iv = np.empty((n, levels.shape[0], 2))
    pred = np.empty(n)
    learnt = 0
    for s in range(0, n, batch):
        e = min(n, s + batch)
        iv[s:e] = base.predict_interval(X[s:e], alpha=list(levels))
        pred[s:e] = base.predict(X[s:e])
        upto = max(0, e - delay)
        if upto > learnt:
            base.learn_many(X[learnt:upto], y[learnt:upto])
            learnt = upto
    return pred, iv


def cached_base(folder, series, proto, X, y, levels):
    """:func:`run_base` for the protocol, read from ``folder`` when it was recorded there (same
    series, length and levels); returns ``(pred, iv, seconds the base took)``."""
    batch, delay = PROTOCOLS[proto]
    path = None
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        path = Path(folder) / f"{series}-n{y.shape[0]}-{proto}.npz"
        if path.exists():
            z = np.load(path)
            if z["levels"].shape == levels.shape and np.allclose(z["levels"], levels):
                return z["pred"], z["iv"], float(z["seconds"])
    t0 = time.perf_counter()
    pred, iv = run_base(X, y, batch, delay, levels)
    sec = time.perf_counter() - t0
    if path is not None:
        np.savez(path, pred=pred, iv=iv, levels=levels, seconds=sec)
    return pred, iv, sec


class Replay:
    """A base interval method that answers from the recorded intervals (row index in column 0)
    and learns nothing: the wrapper's controllers run on the same base predictions."""

    def __init__(self, pred=None, iv=None, levels=None):
        self.pred, self.iv, self.levels = pred, iv, levels

    def clone(self):
        return Replay(self.pred, self.iv, self.levels)

    def _cols(self, alpha):
        return [int(np.argmin(np.abs(self.levels - a))) for a in alpha]

    def predict(self, X):
        return self.pred[np.asarray(X)[:, 0].astype(int)]

    def predict_interval(self, X, alpha):
        return self.iv[np.asarray(X)[:, 0].astype(int)][:, self._cols(alpha)]

    def predict_learn_many(self, X, y, alpha, w=None):
        return self.predict(X), self.predict_interval(X, alpha)

    def predict_interval_one(self, x, alpha):
        return [tuple(v) for v in self.iv[int(x[0])][self._cols(alpha)]]

    def predict_one(self, x):
        return float(self.pred[int(x[0])])


def protocol_events(n, batch, delay):
    """``("serve", s, e)`` and ``("learn", s, e)`` in the protocol's order."""
    learnt = 0
    for s in range(0, n, batch):
        e = min(n, s + batch)
        yield "serve", s, e
        upto = max(0, e - delay)
        if upto > learnt:
            yield "learn", learnt, upto
            learnt = upto
    if learnt < n:
        yield "learn", learnt, n


def run_ours(method, pred, iv, levels, y, alpha, batch, delay):
    import streamforest as sf

    n = y.shape[0]
    idx = np.arange(n, dtype=float)[:, None]
    method, _, gamma = method.partition("@")
    m = sf.AdaptiveConformal(Replay(pred, iv, levels), alphas=alpha, method=method,
                             gamma=float(gamma) if gamma else None,
                             log_size=max(10_000, 2 * (batch + delay)))  # fmt: skip
    out = np.empty((n, 2))
    for kind, s, e in protocol_events(n, batch, delay):
        if kind == "serve":
            out[s:e] = m.predict_interval(idx[s:e], alpha)
        else:
            m.learn_many(idx[s:e], y[s:e])
    # (rows served before anything was learnt are not logged: unmatched, never late)
    assert m.log_stats["late"] == 0, m.log_stats
    return out


def run_salesforce(name, mode, pred, iv, levels, y, alpha, batch, delay):
    import importlib

    import pandas as pd

    mod, cls = {
        "saocp": ("saocp", "SAOCP"),
        "sfogd": ("ogd", "ScaleFreeOGD"),
        "faci": ("faci", "FACI"),
        "nexcp": ("nex_conformal", "NExConformal"),
    }[name]
    C = getattr(importlib.import_module(f"online_conformal.{mod}"), cls)
    j = int(np.argmin(np.abs(levels - alpha)))
    lo, hi = iv[:, j, 0], iv[:, j, 1]
    m = 0.5 * (lo + hi) if mode == "scaled" else pred
    h = 0.5 * (hi - lo) if mode == "scaled" else np.ones_like(pred)
    ok = np.isfinite(m) & np.isfinite(h) & (h > 0)
    score = np.where(ok, np.abs(y - np.where(ok, m, 0.0)) / np.where(ok, h, 1.0), np.nan)
    kw = {}
    if name in ("saocp", "sfogd"):
        first = score[:WARMUP][np.isfinite(score[:WARMUP])]
        kw["max_scale"] = float(np.max(first)) * math.sqrt(3) if first.size else 1.0
    ctl = C(model=None, train_data=None, coverage=1 - alpha, **kw)
    n = y.shape[0]
    out = np.empty((n, 2))
    zero = pd.Series([0.0])
    for kind, s, e in protocol_events(n, batch, delay):
        for i in range(s, e):
            if kind == "serve":
                d = ctl.predict(horizon=1)[1] if ok[i] else np.inf
                out[i] = (m[i] - d * h[i], m[i] + d * h[i]) if ok[i] else (-np.inf, np.inf)
            elif ok[i]:
                ctl.update(pd.Series([score[i]]), zero, horizon=1)
    return out


def run_river_jackknife(pred, y, alpha, batch, delay):
    from river import base, conf

    class Centre(base.Regressor):
        def learn_one(self, x, y):
            pass

        def predict_one(self, x):
            return float(pred[int(x["i"])])

    jk = conf.RegressionJackknife(Centre(), confidence_level=1 - alpha)
    n = y.shape[0]
    out = np.empty((n, 2))
    for kind, s, e in protocol_events(n, batch, delay):
        for i in range(s, e):
            if kind == "serve":
                itv = jk.predict_one({"i": i}, with_interval=True)
                out[i] = itv.lower, itv.upper
            else:
                jk.learn_one({"i": i}, float(y[i]))
    return out


def run_hindsight(kind, pred, iv, levels, y, alpha, batch, delay):
    """Not a controller: the narrowest intervals ``m +- theta h`` on the base's scaled scores
    that an oracle knowing every label in advance gives at the same long-run MER: the most a
    controller of the threshold on these base predictions gains by adapting at that time scale
    (within a window it would have to foresee which rows' scores are large).  ``"constant"``: one
    threshold for all scored rows (their ``1 - alpha`` quantile); ``"window"``: one threshold
    per tumbling window of the metric's ``WINDOW`` rows, ``alpha`` times the scored rows'
    misses shared out between the windows to minimise the total width (exactly, by dynamic
    programming: a window with ``k`` misses has the threshold its ``k+1``-th largest score)."""
    j = int(np.argmin(np.abs(levels - alpha)))
    lo, hi = iv[:, j, 0], iv[:, j, 1]
    m, h = 0.5 * (lo + hi), 0.5 * (hi - lo)
    ok = np.isfinite(m) & np.isfinite(h) & (h > 0)
    score = np.abs(y - np.where(ok, m, 0.0)) / np.where(ok, h, 1.0)
    start = first_scored(batch, delay)
    theta = np.full(y.shape[0], np.inf)
    if kind == "constant":
        theta[start:] = np.quantile(score[start:][ok[start:]], 1 - alpha)
    else:
        misses = round(alpha * (y.shape[0] - start))
        segments, best = [], np.zeros(misses + 1)  # best[j]: least width with j misses so far
        choice = []  # per window, its misses for each total j
        for s in range(start, y.shape[0], WINDOW):
            rows = np.arange(s, min(s + WINDOW, y.shape[0]))
            rows = rows[ok[rows]]
            ranked = np.append(np.sort(score[rows])[::-1], 0.0)  # theta for k misses: ranked[k]
            cost = ranked * h[rows].sum()
            segments.append((rows, ranked))
            new, took = np.full(misses + 1, np.inf), np.zeros(misses + 1, dtype=int)
            for k in range(min(cost.shape[0], misses + 1)):
                cand = np.full(misses + 1, np.inf)
                cand[k:] = best[: misses + 1 - k] + cost[k]
                better = cand < new
                new[better], took[better] = cand[better], k
            best = new
            choice.append(took)
        j = misses
        for (rows, ranked), took in zip(segments[::-1], choice[::-1], strict=True):
            k = took[j]
            # (a row whose score is theta itself must not count as a miss after rounding)
            theta[rows] = ranked[k] * (1.0 + 1e-9)
            j -= k
    out = np.column_stack([m - theta * h, m + theta * h])
    out[~ok] = (-np.inf, np.inf)
    return out


def first_scored(batch, delay):
    """The first row scored: after the warm-up and after the rows served before any label was
    learnt (the first batch, the delay's rows: every controller serves them the unfitted
    base's infinite intervals)."""
    return max(WARMUP, batch + delay)


def metrics(y, out, alpha, start=WARMUP):
    yy, o = y[start:], out[start:]
    err = (yy < o[:, 0]) | (yy > o[:, 1])
    width = o[:, 1] - o[:, 0]
    rng = float(np.max(y) - np.min(y))
    rel = np.where(np.isfinite(width), np.maximum(width, 0.0) / rng, 1.0)
    k = err.shape[0] // WINDOW
    win = err[: k * WINDOW].reshape(k, WINDOW).mean(axis=1) if k else err.mean()[None]
    return {"mer": float(err.mean()), "worst_window": float(np.max(np.abs(win - alpha))),
            "ris": float(rel.mean())}  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", default="wind,trump,friedman,elevators")
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--controllers", default="ours,salesforce,river,hindsight")
    ap.add_argument("--sf-modes", default="scaled,resid")
    ap.add_argument("--ours", default=",".join(OURS))
    ap.add_argument("--table", action="store_true", help="print --out as tables and stop")
    ap.add_argument("--out", default="results/online_conformal.jsonl")
    ap.add_argument("--base-cache", default=None, help="folder of recorded base predictions")
    a = ap.parse_args(argv)
    if a.table:
        return print_tables(a.out)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    levels = base_levels()
    which = a.controllers.split(",")
    with open(a.out, "a") as fh:
        for series in a.series.split(","):
            X, y = load_series(series, a.n)
            for proto in a.protocols.split(","):
                batch, delay = PROTOCOLS[proto]
                if first_scored(batch, delay) >= y.shape[0] - WINDOW:
                    continue  # (nothing, or less than a window, served after a label)
                pred, iv, base_s = cached_base(a.base_cache, series, proto, X, y, levels)
                for alpha in ALPHAS:
                    runs = []
                    if "ours" in which:
                        runs += [
                            (f"ours-{m}", run_ours, (m, pred, iv, levels))
                            for m in a.ours.split(",")
                        ]
                    if "salesforce" in which:
                        runs += [
                            (f"sf-{c}-{mode}", run_salesforce, (c, mode, pred, iv, levels))
                            for mode in a.sf_modes.split(",")
                            for c in ("saocp", "sfogd", "faci", "nexcp")
                        ]
                    if "river" in which:
                        runs.append(("river-jackknife", run_river_jackknife, (pred,)))
                    if "hindsight" in which:
                        runs += [
                            (f"hindsight-{k}", run_hindsight, (k, pred, iv, levels))
                            for k in ("constant", "window")
                        ]
                    for name, fn, args in runs:
                        t = time.perf_counter()
                        out = fn(*args, y, alpha, batch, delay)
                        sec = time.perf_counter() - t
                        row = {"series": series, "protocol": proto, "alpha": alpha,
                               "controller": name, "n": int(y.shape[0]),
                               "scored_from": first_scored(batch, delay),
                               **metrics(y, out, alpha, first_scored(batch, delay)),
                               "rows_per_s": y.shape[0] / sec,
                               "base_seconds": base_s}  # fmt: skip
                        fh.write(json.dumps(row) + "\n")
                        fh.flush()
                        print(json.dumps(row), flush=True)


def print_tables(path) -> None:
    """The results as one markdown table per series and alpha: controllers by protocol (MER,
    worst window, RIS), and the rows/s."""
    rows = [json.loads(line) for line in open(path)]
    key = {}
    for r in rows:  # (the last run of a cell wins)
        key[r["series"], r["alpha"], r["protocol"], r["controller"]] = r
    for series in dict.fromkeys(r["series"] for r in rows):
        for alpha in ALPHAS:
            protos = [p for p in PROTOCOLS if any(k[:3] == (series, alpha, p) for k in key)]
            ctls = list(dict.fromkeys(k[3] for k in key if k[:2] == (series, alpha)))
            if not protos:
                continue
            n = next(r["n"] for k, r in key.items() if k[:2] == (series, alpha))
            print(f"\n{series} (n={n}), alpha {alpha}: MER / worst window |MER-a| / RIS")
            print("| controller | " + " | ".join(protos) + " | rows/s |")
            print("|---" * (len(protos) + 2) + "|")
            for c in ctls:
                cells, speed = [], []
                for p in protos:
                    r = key.get((series, alpha, p, c))
                    if r is None:
                        cells.append("-")
                        continue
                    ok = "" if abs(r["mer"] - alpha) <= 0.01 else "*"
                    cells.append(f"{r['mer']:.3f}{ok} / {r['worst_window']:.3f} / {r['ris']:.3f}")
                    speed.append(r["rows_per_s"])
                print(f"| {c} | " + " | ".join(cells) + f" | {np.median(speed):,.0f} |")
    print("\n(* : |MER - alpha| > 0.01)")


if __name__ == "__main__":
    main()
