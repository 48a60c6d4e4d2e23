"""Peers in the same run: River's HoeffdingTreeRegressor, ARFRegressor, OXTRegressor (10 models)
and ``conf.RegressionJackknife(ARFRegressor(10), window 1000)`` against our tree, forest and
interval methods, prequential on the same streams (River's FriedmanDrift 'gra' and real sets in
their file order).  River runs per example (``predict_one`` then ``learn_one`` on dicts); ours run
per example the same way and in one compiled pass (``predict_learn_many``).  Metrics: MAE, MER and
RIS at alpha = 0.1, examples per second and our / River ratios.  CapyMOA is used only when it can
be imported (it needs a Java runtime); otherwise the section says it was skipped.
"""

from __future__ import annotations

import time

import numpy as np

ALPHA = 0.1
POINT = [  # (ours, River peer)
    ("FIMT-style tree", "River HTR"),
    ("OnlineForest", "River ARF"),
    ("OnlineForest", "River OXT"),
]
INTERVALS = ["OnlineQRF", "CPApproximate", "ConformalQRF"]
JACKKNIFE = "River Jackknife(ARF10)"


def streams(cfg, data_root):
    from intervals_vs_river import gra_stream
    from streamforest.streams import dataset

    out = {"gra": gra_stream(cfg["n"])}
    for d in cfg["datasets"]:
        out[d] = dataset(d, root=data_root).arrays(cfg["n"])
    return out


def our_interval(label, seed):
    from suite.jmlr import make

    return make(label, seed)


def per_example(model, rows, y, interval):
    pred = np.zeros(len(y))
    lo = np.full(len(y), -np.inf)
    hi = np.full(len(y), np.inf)
    t0 = time.perf_counter()
    for i, x in enumerate(rows):
        if interval:
            iv = model.predict_interval_one(x, ALPHA)
            lo[i], hi[i] = iv
        pred[i] = model.predict_one(x)
        model.learn_one(x, y[i])
    return pred, lo, hi, time.perf_counter() - t0


def run(cfg, data_root, log):
    from intervals_vs_river import metrics, run_river
    from thesis_regression import dict_rows, make_ours, make_river, prequential_dicts

    seed = cfg["seed"]
    X0, y0 = streams({"n": 200, "datasets": []}, data_root)["gra"]
    rows0 = dict_rows(X0)
    for ours, _ in POINT:  # load our compiled kernels (per example and batched), not timed
        make_ours(ours, 999).predict_learn_many(X0, y0)
        prequential_dicts(make_ours(ours, 999), rows0, y0)
    for label in INTERVALS:
        our_interval(label, 999).predict_learn_many(X0, y0, alpha=ALPHA)
        per_example(our_interval(label, 999), rows0, y0, True)
    res = {}
    for name, (X, y) in streams(cfg, data_root).items():
        X, y = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)
        rows = dict_rows(X)
        r = res[name] = {}
        for ours, _ in POINT:
            if ours in r:
                continue
            m = make_ours(ours, seed)
            t0 = time.perf_counter()
            p = m.predict_learn_many(X, y)
            batch = time.perf_counter() - t0
            err, c = prequential_dicts(make_ours(ours, seed), rows, y)
            r[ours] = {
                "mae": float(np.mean(np.abs(p - y))),
                "eps_batch": len(y) / batch,
                "eps_one": len(y) / c.wall,
                "mae_one": float(err.mean()),
            }
        for _, river in POINT:
            err, c = prequential_dicts(make_river(river, seed), rows, y)
            r[river] = {"mae": float(err.mean()), "eps_one": len(y) / c.wall}
        for label in INTERVALS:
            m = our_interval(label, seed)
            t0 = time.perf_counter()
            p, iv = m.predict_learn_many(X, y, alpha=ALPHA)
            batch = time.perf_counter() - t0
            _, _, _, one = per_example(our_interval(label, seed), rows, y, True)
            r[label] = {
                **metrics(y, iv[:, 0], iv[:, 1], p),
                "eps_batch": len(y) / batch,
                "eps_one": len(y) / one,
            }
        p, lo, hi, secs = run_river(X, y)
        r[JACKKNIFE] = {**metrics(y, lo, hi, p), "eps_one": len(y) / secs}
        log(f"  peers {name}: {len(y):,} rows")
    return res


def capymoa_note() -> str:
    from streamforest._extras import have

    if not have("capymoa"):
        return (
            "CapyMOA is not installed here: its rows (FIMT-DD, ARF-Reg, SOKNL, MVE, AdaPI) are "
            "skipped."
        )
    try:
        import capymoa  # noqa: F401
    except Exception as e:  # a JVM problem, typically
        return f"CapyMOA could not be imported ({type(e).__name__}): skipped."
    return "CapyMOA is importable but not run by this suite yet."


def write(rep, res):
    head = {"point": [], "intervals": []}
    rep.h("5. Peers in the same run: River (and CapyMOA)")
    rep.p(__doc__.split("\n", 1)[1].replace("\n", " "))
    rep.p(capymoa_note())
    rows = []
    lines = []
    for s, r in res.items():
        for ours, river in POINT:
            o, p = r[ours], r[river]
            rows.append(
                [
                    s,
                    ours,
                    river,
                    o["mae"],
                    p["mae"],
                    o["mae"] / p["mae"],
                    o["eps_one"] / p["eps_one"],
                    o["eps_batch"] / p["eps_one"],
                ]
            )
            if o["mae"] > p["mae"] * 1.05:
                lines.append(
                    f"- {s}: our {ours} MAE {o['mae']:.3f} is **worse** than "
                    f"{river}'s {p['mae']:.3f}."
                )
    rep.table(
        "peers_point",
        [
            "stream",
            "ours",
            "River",
            "our MAE",
            "River MAE",
            "MAE ratio",
            "throughput ratio per example",
            "throughput ratio (ours batched)",
        ],
        rows,
    )
    head["point"] = rows
    rows = []
    for s, r in res.items():
        j = r[JACKKNIFE]
        rows.append(
            [
                s,
                JACKKNIFE,
                j["mae"],
                j["mer"],
                j["ris"],
                j["utility"],
                j["eps_one"],
                1.0,
                float("nan"),
            ]
        )
        for label in INTERVALS:
            o = r[label]
            rows.append(
                [
                    s,
                    label,
                    o["mae"],
                    o["mer"],
                    o["ris"],
                    o["utility"],
                    o["eps_one"],
                    o["eps_one"] / j["eps_one"],
                    o["eps_batch"] / j["eps_one"],
                ]
            )
            if o["utility"] < j["utility"] - 0.02:
                lines.append(
                    f"- {s}: our {label} utility {o['utility']:.3f} is **below** "
                    f"River's jackknife {j['utility']:.3f}."
                )
    rep.table(
        "peers_intervals",
        [
            "stream",
            "method",
            "MAE",
            "MER",
            "RIS",
            "utility",
            "examples/s per example",
            "ratio per example",
            "ratio batched",
        ],
        rows,
    )
    head["intervals"] = rows
    if lines:
        rep.p("Where we are worse than a peer:\n" + "\n".join(lines))
    return head
