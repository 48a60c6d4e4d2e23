"""Prequential classification: our classifiers beside River's, in the same run, and prediction sets.

Streams (``--rows`` rows each, default 100k): SEA (function 1, 10% noise), Agrawal (function 1),
RandomRBF with drift (every centroid moving at speed 0.001), and the real sets of
``../shared/data/classification/`` (WISDM transformed, 5,418 rows, ``UNIQUE_ID`` dropped; KDD Cup
99 10%: its first ``--rows`` rows), found as :func:`streamforest.streams.data_root` says (set
``STREAMFOREST_DATA``).

Models, test-then-train on identical rows:

- ours, resolved by name from ``streamforest`` (``ACTSERClassifier``, ``ACTSEREnsembleClassifier``
  in modes ``seeds`` and ``rforest``, ``HoeffdingTreeClassifier``; a missing one is skipped with a
  note), per example (``predict_one`` then ``learn_one`` on dicts) and in chunks
  (``predict_proba`` on a chunk of ``--chunk`` rows, then ``learn_many``; a set with nominal
  columns as a DataFrame of float and object columns, see :func:`typed`) after a warm-up on a
  clone that loads the compiled code;
- River's ``tree.HoeffdingTreeClassifier``, ``tree.ExtremelyFastDecisionTreeClassifier`` and
  ``forest.ARFClassifier(n_models=10)``, per example.

Dicts leave missing values out (River's convention).  A model that predicts nothing yet counts
wrong.  Prints accuracy, Cohen's kappa, examples per second (CPU time of the process during the
model calls: the machine is shared, wall clock is not the model's) and the speed ratio to River's
ARF per example.  River's ARF is slow (100-300 rows/s): ``--arf-rows N`` runs it on the first
``N`` rows only (its speed from those rows) and adds every model's accuracy and kappa on those
same first ``N`` rows (``acc@N``, ``kappa@N``), the fair comparison with it.

Prediction sets: :class:`streamforest.ConformalClassifier` (APS, randomised, calibration 1000)
over each of our classifiers present and over River's Hoeffding tree (an adapter with the array
API), run by :func:`streamforest.evaluate.prequential` in chunks: coverage, mean set size and
share of singletons at alpha = 0.1 and 0.05.

    python benchmarks/classification.py [--rows 100000] [--chunk 1000] [--streams sea,agrawal]
        [--skip-river-arf] [--arf-rows 10000] [--no-sets] [--json out/classification.json]
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import time

import numpy as np

STREAMS = ("sea", "agrawal", "randomrbf-drift", "wisdm", "kdd")
# label: (class, preset (a class attribute of settings, e.g. the thesis'), or None, parameters)
OURS = {
    "ACTSER": ("ACTSERClassifier", "THESIS", {}),  # the thesis' tree, as in its Table 5.4
    "ACTSER (defaults)": ("ACTSERClassifier", None, {}),
    "ACTSER-Seeds": ("ACTSEREnsembleClassifier", None, {"mode": "seeds"}),
    "ACTSER-RForest": ("ACTSEREnsembleClassifier", None, {"mode": "rforest"}),
    "HT (ours)": ("HoeffdingTreeClassifier", None, {}),
}
ALPHAS = (0.1, 0.05)


def load(name: str, rows: int, seed: int):
    """``(X, y, feature_names)`` of the first ``rows`` rows of stream ``name``."""
    from streamforest import streams as S
    from streamforest.streams.files import classification_dataset

    if name == "sea":
        s = S.SEA(n=rows, seed=seed)
    elif name == "agrawal":
        s = S.Agrawal(n=rows, seed=seed)
    elif name == "randomrbf-drift":
        s = S.RandomRBF(speed=0.001, n=rows, seed=seed)
    elif name == "wisdm":
        s = classification_dataset("wisdm_ar_v1.1_transformed")
    elif name == "kdd":
        s = classification_dataset("kddcup99_10pct")
    else:
        raise ValueError(f"unknown stream {name!r}")
    Xs, ys, n = [], [], 0
    for X, y in s.chunks(10_000):
        Xs.append(X)
        ys.append(y)
        n += len(y)
        if n >= rows:
            break
    X = np.concatenate(Xs)[:rows]
    y = np.concatenate(ys)[:rows]
    return X, y, list(s.feature_names)


def dicts(X, names) -> list[dict]:
    out = []
    for row in X.tolist():
        d = {}
        for k, v in zip(names, row, strict=True):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            d[k] = v
        out.append(d)
    return out


def typed(X, names):
    """``X`` for the chunked calls: itself when numeric, else a DataFrame whose columns of numbers
    are float64 and whose other columns (categories) stay objects, as a user with mixed columns
    would pass them (an object matrix is converted value by value on every call)."""
    if X.dtype != object:
        return X
    import pandas as pd

    cols = {}
    for j, name in enumerate(names):
        c = X[:, j]
        numeric = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                      for v in c.tolist())  # fmt: skip
        cols[name] = (np.array([np.nan if v is None else v for v in c.tolist()], dtype=float)
                      if numeric else c)  # fmt: skip
    return pd.DataFrame(cols)


def rows_of(X, s, e):
    return X.iloc[s:e] if hasattr(X, "iloc") else X[s:e]


def score(y, pred) -> dict:
    from streamforest.classification_metrics import evaluate

    t = evaluate(y, np.asarray(pred, dtype=object))
    return {"accuracy": t["accuracy"], "kappa": t["kappa"]}


def per_example(model, rows, y) -> tuple[list, float]:
    pred = []
    t0 = time.process_time()
    for x, t in zip(rows, y.tolist(), strict=True):
        pred.append(model.predict_one(x))
        model.learn_one(x, t)
    return pred, time.process_time() - t0


def in_chunks(model, X, y, chunk: int) -> tuple[list, float]:
    pred = []
    t0 = time.process_time()
    for s in range(0, len(y), chunk):
        P = np.asarray(model.predict_proba(rows_of(X, s, s + chunk)))
        cols = list(getattr(model, "classes_", ()))  # none before learning
        pred += [cols[j] for j in np.argmax(P, axis=1)] if cols else [None] * P.shape[0]
        model.learn_many(rows_of(X, s, s + chunk), y[s : s + chunk])
    return pred, time.process_time() - t0


class RiverArrays:
    """A River classifier with the array API (``classes_``, ``predict_proba``, ``learn_many``) for
    :class:`streamforest.ConformalClassifier`; rows become dicts keyed by ``names``."""

    def __init__(self, model, names):
        self.model, self.names, self.classes_ = model, list(names), []

    def clone(self):
        return RiverArrays(self.model.clone(), self.names)

    def __repr__(self):
        return f"River {type(self.model).__name__}"

    def learn_one(self, x, y, w=None):
        if y not in self.classes_:
            self.classes_.append(y)
        self.model.learn_one(x, y)

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    def learn_many(self, X, y, w=None):
        for x, t in zip(dicts(np.asarray(X), self.names), list(y), strict=True):
            self.learn_one(x, t)

    def predict_proba(self, X):
        rows = dicts(np.asarray(X), self.names)
        out = np.zeros((len(rows), len(self.classes_)))
        for i, x in enumerate(rows):
            p = self.model.predict_proba_one(x)
            out[i] = [p.get(c, 0.0) for c in self.classes_]
        return out


def river_models(seed: int) -> dict:
    from river import forest, tree

    return {
        "River HT": lambda: tree.HoeffdingTreeClassifier(),
        "River EFDT": lambda: tree.ExtremelyFastDecisionTreeClassifier(),
        "River ARF(10)": lambda: forest.ARFClassifier(n_models=10, seed=seed),
    }


def our_models(seed: int) -> tuple[dict, list[str]]:
    import streamforest as sf

    found, missing = {}, []
    for label, (cls_name, preset, kw) in OURS.items():
        cls = getattr(sf, cls_name, None)
        if cls is None or (preset is not None and not hasattr(cls, preset)):
            missing.append(f"{label} (streamforest.{cls_name}{'.' + preset if preset else ''})")
            continue
        if preset is not None:
            kw = {**getattr(cls, preset), **kw}
        if "seed" in inspect.signature(cls.__init__).parameters:
            kw = {**kw, "seed": seed}
        found[label] = lambda cls=cls, kw=kw: cls(**kw)
    return found, missing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--streams", default=",".join(STREAMS))
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--skip-river-arf", action="store_true", help="leave ARF out (slow)")
    ap.add_argument("--arf-rows", type=int, default=0, help="River ARF on these first rows only")
    ap.add_argument("--no-sets", action="store_true", help="skip the prediction sets")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()

    import streamforest as sf
    from streamforest.evaluate import prequential
    from streamforest.streams import ArrayStream

    ours, missing = our_models(args.seed)
    if missing:
        print(f"note: not in this build, skipped: {', '.join(missing)}")
    rivers = river_models(args.seed)
    if args.skip_river_arf:
        rivers.pop("River ARF(10)")
    results: dict = {}
    for name in args.streams.split(","):
        X, y, names = load(name, args.rows, args.seed)
        rows = dicts(X, names)
        Xc = typed(X, names)
        n = len(y)
        print(f"\n== {name}: {n:,} rows, {X.shape[1]} features, {len(set(y.tolist()))} classes")
        table = []
        m = min(args.arf_rows, n) if args.arf_rows > 0 else n

        def add(label, mode, pred, sec, rows_run, y=y, m=m, n=n, table=table):
            head = score(y[:m], pred[:m]) if m < n else None
            table.append((label, mode, score(y[:rows_run], pred), rows_run / sec, head))

        for label, make in ours.items():
            warm = make()
            in_chunks(warm, rows_of(Xc, 0, 2000), y[:2000], args.chunk)  # load the compiled code
            per_example(make(), rows[:200], y[:200])
            pred, sec = per_example(make(), rows, y)
            add(label, "per example", pred, sec, n)
            pred, sec = in_chunks(make(), Xc, y, args.chunk)
            add(label, f"chunks of {args.chunk}", pred, sec, n)
        for label, make in rivers.items():
            k = m if label == "River ARF(10)" else n
            pred, sec = per_example(make(), rows[:k], y[:k])
            add(label, "per example", pred, sec, k)
        arf = next((t[3] for t in table if t[0] == "River ARF(10)"), None)
        at = f"@{m // 1000}k"
        print(f"{'model':<16} {'mode':<16} {'rows':>7} {'accuracy':>9} {'kappa':>7} "
              f"{'acc' + at:>9} {'kappa' + at:>9} {'ex/s CPU':>10} {'x ARF':>7}")  # fmt: skip
        for label, mode, sc, eps, head in table:
            ratio = f"{eps / arf:7.1f}" if arf else "      -"
            rows_run = n if label != "River ARF(10)" else m
            h = f"{head['accuracy']:>9.4f} {head['kappa']:>9.4f}" if head else f"{'':>9} {'':>9}"
            print(f"{label:<16} {mode:<16} {rows_run:>7} {sc['accuracy']:>9.4f} "
                  f"{sc['kappa']:>7.4f} {h} {eps:>10,.0f} {ratio}")  # fmt: skip
        results[name] = {
            "rows": n,
            "arf_rows": m,
            "models": [
                {"model": lb, "mode": md, **sc, "examples_per_second_cpu": e,
                 **({f"accuracy_first_{m}": hd["accuracy"], f"kappa_first_{m}": hd["kappa"]}
                    if hd else {})}
                for lb, md, sc, e, hd in table
            ],
        }  # fmt: skip
        if args.no_sets:
            continue
        sets = []
        bases = {**{k: v for k, v in ours.items()}, "River HT": None}
        for label, make in bases.items():
            base = make() if make else RiverArrays(rivers["River HT"](), names)
            cc = sf.ConformalClassifier(
                base, conformity_score="aps", calibration_size=1000, seed=args.seed
            )
            stream = ArrayStream(X, y, names)
            res = prequential(cc, stream, alphas=list(ALPHAS), chunk_size=args.chunk,
                              window=max(1, n))  # fmt: skip
            for a in ALPHAS:
                t = res.totals["sets"][f"{a:g}"]
                sets.append((label, a, t["coverage"], t["mean_set_size"], t["singletons"]))
        print(f"\nConformalClassifier (APS, calibration 1000, chunks of {args.chunk}) over:")
        print(f"{'model':<16} {'alpha':>6} {'coverage':>9} {'mean size':>10} {'singletons':>11}")
        for label, a, cov, size, single in sets:
            print(f"{label:<16} {a:>6g} {cov:>9.4f} {size:>10.3f} {single:>11.4f}")
        results[name]["sets"] = [
            {"model": lb, "alpha": a, "coverage": c, "mean_set_size": z, "singletons": g}
            for lb, a, c, z, g in sets
        ]
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
        print(f"\nfigures: {args.json}")


if __name__ == "__main__":
    main()
