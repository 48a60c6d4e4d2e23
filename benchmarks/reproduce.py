"""Reproduce the papers' tables beside the peers: one command, one Markdown report.

Sections (see ``benchmarks/suite/``): 1. JMLR 2019 online intervals (small-scale sets, the alpha
sweep of its Table 3, run-time ratios of its Table 4, the nine Friedman drift streams);
2. HDI-Forest's Table 2 (HDIForestRegressor vs QuantileForestRegressor); 3. the Quantization
Observer's Figure 1 (E-BST, TE-BST, QO); 4. Seah's thesis streams (``thesis_regression.py``);
5. River peers on the same streams (CapyMOA when importable).

Run from the repository root::

    PYTHONPATH=src python benchmarks/reproduce.py --profile quick     # < 15 min, warm cache
    PYTHONPATH=src python benchmarks/reproduce.py --profile full      # the papers' sizes (hours)

Writes ``out/report/report.md`` (tables and PNG figures beside it) and ``results.json``; prints
our / paper and our / peer ratios.  ``--sections jmlr hdi qo thesis peers`` runs a subset;
``--readme out/report/results.json`` prints the Results section of a run (the page
``docs/benchmarks/results.md``; the README's short table quotes it);
``--jmlr-rows N --jmlr-seeds K`` override the profile's JMLR rows per set and seeds; ``--data``
points at the datasets (default ``$STREAMFOREST_DATA``, else
``../shared/data``).  The first run compiles the
package's kernels (5-15 minutes on a loaded 2-core machine); the profiles' budgets assume a
warm cache.  Timings are from one run on a shared machine: compare the ratios, measured in the
same run, rather than absolute seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

SECTIONS = ["jmlr", "hdi", "qo", "thesis", "peers"]


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if hasattr(obj, "item"):
        return obj.item()
    if isinstance(obj, float) and obj != obj:
        return None
    return obj


def main(argv=None) -> dict:
    """Run the suite; returns ``{"report": path, "tables": {...}, "headline": {...}}``."""
    from suite import hdi_table, jmlr, peers, qo, thesis
    from suite.profiles import JMLR_DATASETS, PROFILES
    from suite.report import Report

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=SECTIONS)
    ap.add_argument("--out", default="out/report")
    default_data = os.environ.get("STREAMFOREST_DATA") or str(
        HERE.parent / ".." / "shared" / "data"
    )
    ap.add_argument("--data", default=default_data)
    ap.add_argument(
        "--jmlr-rows",
        type=int,
        metavar="N",
        help="rows per JMLR small-scale set (default: the profile's; 0 = all rows)",
    )
    ap.add_argument("--jmlr-seeds", type=int, metavar="K", help="seeds 0..K-1 of the JMLR sets")
    ap.add_argument(
        "--readme",
        metavar="RESULTS_JSON",
        help="print the Results section of a run (docs/benchmarks/results.md)",
    )
    args = ap.parse_args(argv)
    if args.readme:
        from suite.report import readme_results

        md = Path(args.readme).with_name("report.md")
        text = md.read_text() if md.exists() else ""
        print(readme_results(json.loads(Path(args.readme).read_text()), text))
        return {}
    prof = {k: (dict(v) if isinstance(v, dict) else v) for k, v in PROFILES[args.profile].items()}
    if args.jmlr_rows is not None:
        prof["jmlr"]["max_rows"] = args.jmlr_rows or None
    if args.jmlr_seeds:
        prof["jmlr"]["seeds"] = list(range(args.jmlr_seeds))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data)

    import numpy as np

    import streamforest

    t_start = time.perf_counter()

    def log(msg):
        print(f"[{time.perf_counter() - t_start:7.1f}s] {msg}", flush=True)

    def load():
        try:
            return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())
        except OSError:
            return "load average unknown"

    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rep = Report(out, f"streamforest: the papers' tables beside the peers ({args.profile})")
    given = argv if argv is not None else sys.argv[1:]
    cmd = " ".join(["python benchmarks/reproduce.py", *given])
    rep.p(
        f"Command: `{cmd}`. streamforest "
        f"{streamforest.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {load()} at the start. One run on a shared machine: the "
        "ratios are measured in this run; absolute times are noisy."
    )
    headline = {"profile": args.profile}
    names = {d: n for n, d in JMLR_DATASETS}
    if "jmlr" in args.sections:
        log("JMLR 2019 small-scale sets")
        small = jmlr.run_small_scale(prof["jmlr"], data, log)
        log("JMLR 2019 Friedman drift streams")
        drift = jmlr.run_drift(prof["drift"], log)
        headline["jmlr"] = jmlr.write(rep, small, drift, names, prof["jmlr"])
    if "hdi" in args.sections:
        log("HDI-Forest Table 2")
        headline["hdi"] = hdi_table.write(rep, hdi_table.run(prof["hdi"], data, log))
    if "qo" in args.sections:
        log("Quantization Observer")
        headline["qo"] = qo.write(rep, qo.run(prof["qo"], log))
    if "thesis" in args.sections:
        if prof["thesis"] is None:
            rep.h("4. Thesis (Seah 2021)")
            rep.p(f"Not run in the {args.profile} profile.")
        else:
            log("Thesis streams (thesis_regression.py)")
            headline["thesis"] = thesis.write(rep, thesis.run(prof["thesis"], out, log))
    if "peers" in args.sections:
        log("River peers")
        headline["peers"] = peers.write(rep, peers.run(prof["peers"], data, log))
    total = time.perf_counter() - t_start
    headline["seconds"] = total
    headline["cpu_seconds"] = sum(os.times()[:2])  # this process, its threads (the JVM's too)
    la = os.getloadavg() if hasattr(os, "getloadavg") else (None,)
    headline["load_start"], headline["load_end"] = load_start, la[0]
    rep.p(f"\nTotal wall time {total:.0f} s; {load()} at the end.")
    path = rep.write()
    tables = {k: {"header": h, "rows": r} for k, (h, r) in rep.tables.items()}
    (out / "results.json").write_text(
        json.dumps(_json_safe({"headline": headline, "tables": tables}), indent=1)
    )
    print_ratios(headline)
    log(f"wrote {path}")
    return {"report": path, "tables": rep.tables, "headline": headline}


def print_ratios(h) -> None:
    """The headline ratios, ours against the papers and the peers."""
    print("\n== ours / paper, ours / peers ==")
    if "jmlr" in h:
        for row in h["jmlr"]["table3_best_valid"]:
            a, best, ris, pbest, pris, ok = row
            print(
                f"Table 3 alpha={a}: our best valid {best} RIS {ris:.3f} vs paper {pbest} "
                f"{pris:.3f} -> ratio {ris / pris:.2f}{'' if ok else '  (WORSE)'}"
            )
        c = h["jmlr"]["cp_cost_ratio"]
        print(
            f"CPExact/CPApproximate time: {c['small']:.2f}x small-scale, {c['friedman']:.2f}x "
            f"Friedman (paper {c['paper']['small-scale']:.1f}x / {c['paper']['Friedman']:.1f}x)"
        )
    if "hdi" in h:
        for r in h["hdi"]["rows"]:
            print(
                f"HDI-Forest {r[0]}: PICP {r[1]:.3f} MPIW {r[2]:.2f} vs QRF {r[3]:.3f} / "
                f"{r[4]:.2f} (ratio {r[5]:.2f}; paper {r[10]:.2f})"
            )
    if "qo" in h:
        for r in h["qo"]["summary"]:
            print(
                f"QO {r[0]} {r[1]}: VR/E-BST {r[3]:.3f}, elements/E-BST {r[5]:.3f}, "
                f"query time/E-BST {r[9]:.3f}"
            )
    if "peers" in h:
        for r in h["peers"]["point"]:
            print(
                f"{r[0]} {r[1]} vs {r[2]}: MAE ratio {r[5]:.2f}, throughput x{r[6]:.1f} per "
                f"example, x{r[7]:.0f} batched"
            )
        for r in h["peers"]["intervals"]:
            if r[1] != "River Jackknife(ARF10)":
                print(
                    f"{r[0]} {r[1]} vs River jackknife: utility {r[5]:.3f}, throughput "
                    f"x{r[7]:.1f} per example, x{r[8]:.0f} batched"
                )


if __name__ == "__main__":
    main()
