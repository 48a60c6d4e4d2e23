"""Recovery from a label glitch: one absurd label among normal rows, then normal rows again.

Every regressor of :mod:`streamforest.registry` (defaults, ``seed=0``) learns a stationary
Friedman #1 stream (:class:`streamforest.streams.Friedman`, 10 features, N(0, 1) noise) in
prequential chunks of 1,000 rows (``predict_learn_many``; an interval method at ``alpha=0.1``):
``--warm`` rows (10k), then one row whose label is replaced by a glitch value, then ``--after``
rows (50k).  The same model learns the same stream without the glitch (the *clean* run).
Printed per model and glitch value:

- ``MAE clean`` / ``MAE glitch``: the mean absolute error of the point predictions over the
  last ``--last`` rows (40k), made before each row is learnt, and their ratio (``ratio``; the
  must-show of issue 48: within 5%, i.e. at most 1.05);
- ``MER``: the share of those rows outside the interval at ``alpha=0.1``, for the glitch run
  (the clean run's in brackets).  The must-show: within 0.01 of 0.1; a method that misses 0.1
  by more than 0.01 without any glitch (OnlineQRF's and the Gaussian intervals are not
  conformal: marked ``*``) is held to within 0.01 of its glitch-free MER instead;
- ``recover``: rows after the glitch until the glitch run's error is back, the end of the last
  2,000-row block after the glitch whose MAE exceeds the clean run's on the same block by more
  than 5% (0: none does).  Blocks of 2,000 rows of this stream have an MAE sampling error of
  about 2%, and two runs that learnt different trees differ by a few percent on a block, so
  this is an upper bound of the rows the glitch costs, to within a block or two.

    python benchmarks/glitch_recovery.py                            # every regressor, 1e12
    python benchmarks/glitch_recovery.py --models normalized-cp,sgbt --glitches 1e12,-1e12,1e6
    python benchmarks/glitch_recovery.py --json out.json            # the figures, as JSON

The glitch sits 237 rows into its chunk (not at a chunk boundary).  ``--one`` sends the glitch
row alone through ``learn_one`` (a dict) instead of inside its chunk: the per-example path.
Exit status 1 when a model misses the must-show.  About 20-40 s a model and glitch value on a
2-core machine (more under load): the whole registry at one glitch value is ~15 minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

CHUNK = 1000
BLOCK = 2000
ALPHA = 0.1
OFFSET = 237  # the glitch's position inside its chunk


def regressors() -> list[str]:
    from streamforest import registry

    return registry.names(task="regression")


def stream(n: int, seed: int):
    from streamforest.streams import Friedman

    return Friedman(function=1, n=n, seed=seed).arrays()


def run(name: str, X, y, glitch_at: int | None, one: bool, seed: int = 0):
    """Prequential predictions (and intervals at ALPHA) of model ``name`` over every row; the
    row ``glitch_at`` (if any) is learnt with the label ``y[glitch_at]`` (the caller has put the
    glitch there); with ``one`` that row goes alone through ``learn_one``."""
    from streamforest import registry

    m = registry.build(name, {}, seed=seed)
    interval = hasattr(m, "predict_interval")
    n = X.shape[0]
    pred = np.full(n, np.nan)
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    bounds = [0]
    for s in range(0, n, CHUNK):
        e = min(s + CHUNK, n)
        if one and glitch_at is not None and s <= glitch_at < e:
            bounds += [glitch_at, glitch_at + 1]
        bounds.append(e)
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        if e <= s:
            continue
        if one and s == glitch_at:
            x = {f"x{j}": float(v) for j, v in enumerate(X[s])}
            pred[s] = m.predict_one(x)
            m.learn_one(x, float(y[s]))
            continue
        if interval:
            p, iv = m.predict_learn_many(X[s:e], y[s:e], alpha=ALPHA)
            lo[s:e], hi[s:e] = iv[:, 0], iv[:, 1]
        else:
            p = m.predict_learn_many(X[s:e], y[s:e])
        pred[s:e] = p
    return pred, lo, hi, interval


def recover_rows(err_clean, err_glitch, start: int) -> int:
    """Rows after ``start`` to the end of the last BLOCK-row block whose glitch MAE exceeds the
    clean run's by more than 5% (0 if none does)."""
    last = 0
    for s in range(start, err_clean.shape[0] - BLOCK + 1, BLOCK):
        c, g = err_clean[s : s + BLOCK].mean(), err_glitch[s : s + BLOCK].mean()
        if not g <= 1.05 * c:
            last = s + BLOCK - start
    return last


def measure(name, X, y, warm, last, glitches, one):
    y_true = y
    t0 = time.perf_counter()
    clean = run(name, X, y, None, False)
    out = []
    tail = slice(X.shape[0] - last, X.shape[0])
    err_c = np.abs(clean[0] - y_true)
    mae_c = float(err_c[tail].mean())
    mer_c = float(np.mean((y_true[tail] < clean[1][tail]) | (y_true[tail] > clean[2][tail])))
    mer_ref = ALPHA if abs(mer_c - ALPHA) <= 0.01 else mer_c  # (see the docstring)
    for g in glitches:
        yg = y.copy()
        yg[warm] = g
        pred, lo, hi, interval = run(name, X, yg, warm, one)
        err_g = np.abs(pred - y_true)
        err_g[warm] = err_c[warm]  # (the glitch row itself: its error is against the glitch)
        mae_g = float(err_g[tail].mean()) if np.all(np.isfinite(err_g[tail])) else float("inf")
        mer_g = float(np.mean((y_true[tail] < lo[tail]) | (y_true[tail] > hi[tail])))
        out.append(
            {
                "model": name,
                "glitch": g,
                "mae_clean": mae_c,
                "mae_glitch": mae_g,
                "ratio": mae_g / mae_c,
                "mer_clean": mer_c if interval else None,
                "mer_glitch": mer_g if interval else None,
                "recover": recover_rows(err_c, err_g, warm + 1),
                "ok": bool(
                    mae_g <= 1.05 * mae_c and (not interval or abs(mer_g - mer_ref) <= 0.01)
                ),
            }
        )
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", help="comma-separated registry names (default: every regressor)")
    ap.add_argument("--glitches", default="1e12", help="comma-separated glitch labels")
    ap.add_argument("--warm", type=int, default=10_000, help="normal rows before the glitch")
    ap.add_argument("--after", type=int, default=50_000, help="normal rows after the glitch")
    ap.add_argument("--last", type=int, default=40_000, help="rows the MAE and MER are over")
    ap.add_argument("--seed", type=int, default=1, help="the stream's seed")
    ap.add_argument("--one", action="store_true", help="the glitch row through learn_one")
    ap.add_argument("--json", metavar="PATH", help="write the rows here")
    a = ap.parse_args(argv)
    names = a.models.split(",") if a.models else regressors()
    glitches = [float(g) for g in a.glitches.split(",")]
    warm = a.warm - a.warm % CHUNK + OFFSET
    X, y = stream(warm + 1 + a.after, a.seed)
    print(
        f"Friedman #1, {warm} rows, one glitch label, {a.after} rows; MAE and MER (alpha "
        f"{ALPHA}) over the last {a.last}; glitch {'by learn_one' if a.one else 'in its chunk'}"
    )
    head = (
        f"{'model':32s} {'glitch':>8s} {'MAE clean':>10s} {'MAE glitch':>11s} {'ratio':>8s} "
        f"{'MER (clean)':>15s} {'recover':>8s} {'s':>5s}"
    )
    print(head)
    rows = []
    for name in names:
        res, secs = measure(name, X, y, warm, a.last, glitches, a.one)
        for r in res:
            mer = "-"
            if r["mer_glitch"] is not None:
                star = "*" if abs(r["mer_clean"] - ALPHA) > 0.01 else " "
                mer = f"{r['mer_glitch']:.3f} ({r['mer_clean']:.3f}){star}"
            flag = "" if r["ok"] else "  FAIL"
            print(
                f"{name:32s} {r['glitch']:8.0e} {r['mae_clean']:10.3f} {r['mae_glitch']:11.4g} "
                f"{r['ratio']:8.4g} {mer:>15s} {r['recover']:8d} {secs:5.0f}{flag}",
                flush=True,
            )
        rows += res
        if a.json:
            with open(a.json, "w") as f:
                json.dump(rows, f, indent=1)
    bad = [f"{r['model']} ({r['glitch']:g})" for r in rows if not r["ok"]]
    print(
        f"{len(rows) - len(bad)} of {len(rows)} within 5% and MER within 0.01 of {ALPHA} "
        f"(*: of the glitch-free MER)"
    )
    if bad:
        print("missed: " + ", ".join(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
