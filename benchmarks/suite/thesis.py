"""Seah's thesis (ATSER and its ensembles, Table 4.3 / 4.4): ``benchmarks/thesis_regression.py``
run at the profile's size, its printed tables folded into the report as they are."""

from __future__ import annotations

import contextlib
import io
import json


def run(cfg, out, log):
    """Run ``thesis_regression.main`` (output captured); ``(text, json report)``."""
    import thesis_regression

    path = out / "thesis_regression.json"
    argv = ["--rows", str(cfg["rows"]), "--peer-rows", str(cfg["peer_rows"]), "--json", str(path)]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        thesis_regression.main(argv)
    log(f"  thesis: {cfg['rows']:,} rows, River peers {cfg['peer_rows']:,}")
    return {"text": buf.getvalue(), "report": json.loads(path.read_text()), "argv": argv}


def write(rep, res):
    rep.h("4. Thesis (Seah 2021): FRIEDMAN and HYPERPLANE drift streams")
    rep.p(
        "Output of `python benchmarks/thesis_regression.py "
        + " ".join(res["argv"][:4])
        + "` (the thesis' streams at a reduced length; its own tables, River ratios and goals):"
    )
    rep.p("```\n" + res["text"].rstrip() + "\n```")
    goals = res["report"].get("goals", [])
    return {"goals": goals}
