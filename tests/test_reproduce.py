"""The reproduction suite's code path (``benchmarks/reproduce.py``) on its tiny ``smoke`` profile:
every section runs and writes a report whose tables hold the expected rows and finite values.
The datasets are synthetic stand-ins written to a temporary folder (tests do not read
``../shared/data``)."""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("river")
pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def data_folder(tmp_path):
    """Small regression sets under the names the smoke profile reads, with a manifest."""
    from suite.profiles import PROFILES

    prof = PROFILES["smoke"]
    names = set(prof["jmlr"]["datasets"]) | set(prof["hdi"]["datasets"])
    names |= set(prof["peers"]["datasets"])
    rng = np.random.default_rng(0)
    manifest = {}
    for k, name in enumerate(sorted(names)):
        n, d = 700, 4 + k % 3
        X = rng.random((n, d))
        y = 3 * X[:, 0] + np.sin(5 * X[:, 1]) + (0.2 + X[:, 2]) * rng.exponential(size=n)
        lines = [",".join([*(f"f{j}" for j in range(d)), "target"])]
        lines += [",".join(f"{v:.6f}" for v in [*X[i], y[i]]) for i in range(n)]
        with gzip.open(tmp_path / f"{name}.csv.gz", "wt") as fh:
            fh.write("\n".join(lines) + "\n")
        manifest[name] = {"file": f"{name}.csv.gz", "rows": n, "features": d}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


@pytest.fixture(autouse=True)
def bench_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    yield
    for m in [m for m in sys.modules if m == "suite" or m.startswith("suite.")]:
        sys.modules.pop(m)


def finite_numbers(rows):
    vals = [v for r in rows for v in r if isinstance(v, float)]
    return vals, all(math.isfinite(v) for v in vals)


def test_smoke_profile_writes_a_report_with_the_expected_tables(data_folder, tmp_path):
    import reproduce
    from suite import jmlr, qo
    from suite.profiles import PROFILES

    prof = PROFILES["smoke"]
    out = tmp_path / "report"
    res = reproduce.main(
        ["--profile", "smoke", "--out", str(out), "--data", str(data_folder)]
        + ["--sections", "jmlr", "hdi", "qo", "peers"]
    )
    text = (out / "report.md").read_text()
    for title in ("1. JMLR 2019", "2. HDI-Forest", "3. Quantization Observer", "5. Peers"):
        assert title in text
    for fig in ("jmlr_fig1_mer_ris", "jmlr_fig5_drift", "qo_fig1"):
        assert (out / f"{fig}.png").stat().st_size > 1000
    assert (out / "results.json").is_file()
    T = res["tables"]

    # JMLR: one row per (dataset, method); the sweep: our MER/RIS rows per method plus the paper's
    header, rows = T["jmlr_per_dataset"]
    assert [(r[0], r[1]) for r in rows] == [
        (d, m) for d in prof["jmlr"]["datasets"] for m in jmlr.METHODS
    ]
    vals, ok = finite_numbers(rows)
    assert ok and vals
    for r in rows:
        assert 0 <= r[2] <= 1 and r[3] > 0  # MER, RIS
    header, rows = T["jmlr_table3"]
    assert header[2:] == [f"α={a:g}" for a in jmlr.ALPHAS]
    ours = [r for r in rows if not r[0].startswith("paper")]
    assert len(ours) == 2 * len(jmlr.METHODS) and finite_numbers(ours)[1]
    assert ["paper OnlineQRF", "RIS", 0.20, 0.23, 0.31, 0.345, 0.51] in rows
    # nominal coverage: the conformal methods' MER is below alpha + slack even on 400 rows
    mer = {r[0]: r[2:] for r in ours if r[1] == "MER"}
    assert all(m <= a + 0.1 for m, a in zip(mer["CPExact"], jmlr.ALPHAS, strict=True))
    assert len(T["jmlr_best_valid"][1]) == len(jmlr.ALPHAS)
    _, rows = T["jmlr_time"]
    assert [r[0] for r in rows] == jmlr.METHODS and all(r[1] > 0 for r in rows)
    _, rows = T["jmlr_drift"]
    assert len(rows) == len(prof["drift"]["streams"]) * len(jmlr.METHODS)

    # HDI-Forest: one row per dataset, PICPs in [0, 1], HDI never wider than QRF on average
    _, rows = T["hdi_table2"]
    assert len(rows) == len(prof["hdi"]["datasets"])
    for r in rows:
        assert 0 <= r[1] <= 1 and 0 <= r[3] <= 1 and 0 < r[2] <= r[4] + 1e-12

    # QO: every observer for both tasks; E-BST is the reference (ratio 1), QO stores fewer bins
    _, rows = T["qo_summary"]
    assert [(r[0], r[1]) for r in rows] == [(t, o) for t in ("lin", "cub") for o in qo.OBSERVERS]
    assert finite_numbers(rows)[1]
    for r in rows:
        assert r[3] <= 1 + 1e-9  # no observer's merit beats the exhaustive E-BST
        if r[1] == "E-BST":
            assert r[3] == r[5] == 1.0
        if r[1].startswith("QO σ"):
            assert r[5] < 0.2
    assert T["qo_river"][1]

    # peers: every pairing on every stream, with finite ratios
    _, rows = T["peers_point"]
    assert len(rows) == 3 * (1 + len(prof["peers"]["datasets"]))
    assert finite_numbers(rows)[1]
    _, rows = T["peers_intervals"]
    assert {r[1] for r in rows} == {"River Jackknife(ARF10)", "OnlineQRF", "CPApproximate",
                                    "ConformalQRF"}  # fmt: skip

    # MOA peers: run when CapyMOA loads (a JVM), otherwise skipped with a note, never required
    from streamforest._extras import have
    from suite import peers
    from suite.report import readme_results

    readme = readme_results(json.loads((out / "results.json").read_text()))
    assert readme.startswith("## Results") and "Throughput and error vs River" in readme
    if have("capymoa"):
        _, rows = T["peers_moa_point"]
        assert [(r[1], r[2]) for r in rows] == peers.MOA_POINT * (
            1 + len(prof["peers"]["datasets"])
        )
        assert finite_numbers(rows)[1] and all(r[3] > 0 and r[4] > 0 for r in rows)
        _, rows = T["peers_moa_intervals"]
        assert {r[1] for r in rows} == set(peers.MOA_INTERVALS)
        assert all(0 <= r[3] <= 1 for r in rows)  # MER
        assert "Throughput and error vs MOA" in readme
    else:
        assert not any(k.startswith("peers_moa") for k in T)
        assert "CapyMOA is not installed here" in text
        assert "No MOA ratios in this run" in readme
