"""Peers in the same run: River's HoeffdingTreeRegressor, ARFRegressor, OXTRegressor (10 models)
and ``conf.RegressionJackknife(ARFRegressor(10), window 1000)`` against our tree, forest and
interval methods, prequential on the same streams (River's FriedmanDrift 'gra' and real sets in
their file order).  River runs per example (``predict_one`` then ``learn_one`` on dicts); ours run
per example the same way and in one compiled pass (``predict_learn_many``).  Metrics: MAE, MER and
RIS at alpha = 0.1, examples per second and our / River ratios.  When CapyMOA can be imported (it
needs a Java runtime; ``pip install capymoa``), MOA's FIMT-DD, ARF-Reg (10 trees) and SOKNL (10
trees) run on the same streams twice: per example from Python (``predict`` then ``train``, what a
Python user calls) and in MOA's own Java prequential loop over an ARFF copy of the stream (MOA's
fastest path, compared with our compiled pass); MOA's interval methods MVE and AdaPI over a
10-tree ARF-Reg run per example (CapyMOA has no Java loop for interval learners).  Otherwise the
section says it was skipped.
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
MOA_POINT = [  # (ours, MOA peer)
    ("FIMT-style tree", "MOA FIMT-DD"),
    ("OnlineForest", "MOA ARF-Reg"),
    ("OnlineForest", "MOA SOKNL"),
]
MOA_INTERVALS = ["MOA MVE(ARF10)", "MOA AdaPI(ARF10)"]
MOA_ERRORS: list[str] = []  # a failed MOA run, reported instead of its tables


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
    ok, _ = capymoa_status()
    if ok:
        try:
            moa = run_moa({"warm-up": (X0, y0), **streams(cfg, data_root)}, seed, log)
        except Exception as e:  # an optional peer: say so in the report, keep the rest
            MOA_ERRORS.append(f"{type(e).__name__}: {e}")
            log(f"  MOA peers failed: {MOA_ERRORS[-1]}")
            moa = {}
        for name, r in moa.items():
            res[name].update(r)
    return res


def capymoa_status() -> tuple[bool, str]:
    """Whether the MOA peers can run here, and the report's sentence saying so."""
    from streamforest._extras import have

    if not have("capymoa"):
        return False, (
            "CapyMOA is not installed here (`pip install capymoa`, Java 8+): its rows (FIMT-DD, "
            "ARF-Reg, SOKNL, MVE, AdaPI) are skipped."
        )
    try:
        import capymoa
        from capymoa.regressor import FIMTDD  # noqa: F401  (starts the JVM)
    except Exception as e:  # a JVM problem, typically
        return False, f"CapyMOA could not be loaded ({type(e).__name__}: {e}): skipped."
    if MOA_ERRORS:
        return False, f"CapyMOA {capymoa.__version__} loaded but its run failed: {MOA_ERRORS[-1]}"
    return True, f"CapyMOA {capymoa.__version__} (MOA in a JVM via JPype) runs beside River."


def make_moa(label, schema, seed):
    from capymoa.regressor import FIMTDD, SOKNL, AdaptiveRandomForestRegressor
    from capymoa.uncertainty import MVE, AdaPI

    if label == "MOA FIMT-DD":
        return FIMTDD(schema=schema)
    if label == "MOA SOKNL":
        return SOKNL(schema=schema, ensemble_size=10, random_seed=seed)
    arf = AdaptiveRandomForestRegressor(schema=schema, ensemble_size=10, random_seed=seed)
    if label == "MOA ARF-Reg":
        return arf
    cls = MVE if label.startswith("MOA MVE") else AdaPI
    return cls(schema=schema, base_learner=arf, confidence_level=1 - ALPHA, random_seed=seed)


def moa_per_example(label, X, y, seed, interval=False):
    """MOA driven from Python, one example at a time: (pred, lo, hi, seconds)."""
    from capymoa.stream import NumpyStream

    stream = NumpyStream(X, y, target_type="numeric")
    model = make_moa(label, stream.get_schema(), seed)
    n = len(y)
    pred, lo, hi = np.zeros(n), np.full(n, -np.inf), np.full(n, np.inf)
    t0 = time.perf_counter()
    for i in range(n):
        inst = stream.next_instance()
        p = model.predict(inst)
        if interval:
            if p is not None and i:  # (lower, prediction, upper)
                lo[i], pred[i], hi[i] = p[0], p[1], p[2]
        elif p is not None:
            pred[i] = p
        model.train(inst)
    return pred, lo, hi, time.perf_counter() - t0


def write_arff(X, y, path):
    """The stream as an ARFF file (numeric features, the target last) for MOA's own loop."""
    head = ["@relation stream"] + [f"@attribute x{k} numeric" for k in range(X.shape[1])]
    head += ["@attribute target numeric", "@data"]
    with open(path, "w") as fh:
        fh.write("\n".join(head) + "\n")
        np.savetxt(fh, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    return path


def moa_java_loop(label, path, n, seed):
    """MOA's own prequential loop in Java over the ARFF stream at ``path``: (MAE, seconds)."""
    from capymoa.evaluation import prequential_evaluation
    from capymoa.stream import ARFFStream

    stream = ARFFStream(path=str(path), class_index=-1)
    model = make_moa(label, stream.get_schema(), seed)
    t0 = time.perf_counter()
    res = prequential_evaluation(stream, model, window_size=n)
    secs = time.perf_counter() - t0
    return float(res.cumulative.mae()), secs


def run_moa(streams_, seed, log):
    """``{stream: {MOA label: metrics}}`` for the MOA peers (CapyMOA must be loadable); the
    ``"warm-up"`` stream loads MOA's classes and gives the JIT a first pass, untimed."""
    import tempfile
    from pathlib import Path

    from intervals_vs_river import metrics

    out = {}
    with tempfile.TemporaryDirectory(prefix="streamforest-moa-") as tmp:
        for name, (X, y) in streams_.items():
            X, y = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)
            path = write_arff(X, y, Path(tmp) / f"{name}.arff")
            r = {}
            for _, label in MOA_POINT:
                pred, _, _, one = moa_per_example(label, X, y, seed)
                mae_java, java = moa_java_loop(label, path, len(y), seed)
                r[label] = {
                    "mae": float(np.mean(np.abs(pred - y))),
                    "mae_java": mae_java,
                    "eps_one": len(y) / one,
                    "eps_java": len(y) / java,
                }
            for label in MOA_INTERVALS:
                pred, lo, hi, one = moa_per_example(label, X, y, seed, interval=True)
                r[label] = {**metrics(y, lo, hi, pred), "eps_one": len(y) / one}
            if name != "warm-up":
                out[name] = r
                log(f"  MOA peers {name}: {len(y):,} rows")
    return out


def write(rep, res):
    head = {"point": [], "intervals": []}
    rep.h("5. Peers in the same run: River (and CapyMOA)")
    rep.p(__doc__.split("\n", 1)[1].replace("\n", " "))
    ok, note = capymoa_status()
    head["moa_note"] = note
    rep.p(note)
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
    if any(MOA_POINT[0][1] in r for r in res.values()):
        write_moa(rep, res, head, lines)
    if lines:
        rep.p("Where we are worse than a peer:\n" + "\n".join(lines))
    return head


def write_moa(rep, res, head, lines):
    """The MOA tables: point learners (per example from Python, and MOA's Java loop against
    our compiled pass) and the interval learners MVE / AdaPI against ours."""
    rep.h("MOA (CapyMOA) on the same streams", 3)
    rows = []
    for s, r in res.items():
        for ours, moa in MOA_POINT:
            o, p = r[ours], r[moa]
            rows.append(
                [
                    s,
                    ours,
                    moa,
                    o["mae"],
                    p["mae"],
                    o["mae"] / p["mae"],
                    o["eps_one"] / p["eps_one"],
                    o["eps_batch"] / p["eps_java"],
                    p["eps_one"],
                    p["eps_java"],
                ]
            )
            if o["mae"] > p["mae"] * 1.05:
                lines.append(
                    f"- {s}: our {ours} MAE {o['mae']:.3f} is **worse** than "
                    f"{moa}'s {p['mae']:.3f}."
                )
            for kind, ratio in (("per example", rows[-1][6]), ("batched", rows[-1][7])):
                if ratio < 1:
                    lines.append(
                        f"- {s}: our {ours} is **slower** than {moa} {kind} "
                        f"(throughput ratio {ratio:.2f})."
                    )
    rep.table(
        "peers_moa_point",
        [
            "stream",
            "ours",
            "MOA",
            "our MAE",
            "MOA MAE",
            "MAE ratio",
            "throughput ratio per example",
            "throughput ratio (ours batched / MOA Java loop)",
            "MOA examples/s from Python",
            "MOA examples/s Java loop",
        ],
        rows,
    )
    head["moa_point"] = rows
    rows = []
    ratios = []
    for s, r in res.items():
        for moa in MOA_INTERVALS:
            p = r[moa]
            rows.append([s, moa, p["mae"], p["mer"], p["ris"], p["utility"], p["eps_one"]])
            for label in INTERVALS:
                o = r[label]
                ratios.append(
                    [
                        s,
                        label,
                        moa,
                        o["utility"],
                        p["utility"],
                        o["eps_one"] / p["eps_one"],
                        o["eps_batch"] / p["eps_one"],
                    ]
                )
                if o["utility"] < p["utility"] - 0.02:
                    lines.append(
                        f"- {s}: our {label} utility {o['utility']:.3f} is **below** "
                        f"{moa}'s {p['utility']:.3f}."
                    )
                if ratios[-1][5] < 1:
                    lines.append(
                        f"- {s}: our {label} is **slower** than {moa} per example "
                        f"(throughput ratio {ratios[-1][5]:.2f})."
                    )
    rep.table(
        "peers_moa_intervals",
        ["stream", "method", "MAE", "MER", "RIS", "utility", "examples/s per example"],
        rows,
    )
    rep.table(
        "peers_moa_interval_ratios",
        [
            "stream",
            "ours",
            "MOA",
            "our utility",
            "MOA utility",
            "throughput ratio per example",
            "throughput ratio (ours batched)",
        ],
        ratios,
    )
    head["moa_intervals"] = rows
    head["moa_interval_ratios"] = ratios
