"""Sizes of the suite's runs: ``smoke`` (seconds, for the test), ``quick`` (target 15 minutes on the
2-core machine, compiled kernels cached; measured 2026-11-25 in a fresh clone: 3.9 min wall and
3.5 CPU min at load average 4-5, 26 min wall at load average 12-19) and ``full`` (the papers'
sizes)."""

from __future__ import annotations

JMLR_DATASETS = [  # the JMLR paper's Table 1 sets that ../shared/data/ holds (our file name)
    ("2dplanes", "2dplanes"),
    ("abalone", "abalone"),
    ("calHouse", "cal_housing"),
    ("cpuAct", "cpu_act"),
    ("elevators", "elevators"),
    ("friedman", "fried"),
    ("house8", "house_8L"),
    ("kin8nm", "kin8nm"),
    ("puma8", "puma8NH"),
]
DRIFT_STREAMS = [(f, d) for f in (1, 2, 3) for d in ("lea", "gra", "gsg")]
HDI_DATASETS = [  # zhu2019 Table 2 name -> our file
    ("Boston Housing", "boston"),
    ("Concrete Compression Strength", "concrete"),
    ("Energy Efficiency", "energy_efficiency"),
    ("Combined Cycle Power Plant", "ccpp_power_plant"),
    ("Wine Quality", "wine_quality_red"),
    ("Naval Propulsion", "naval_propulsion"),
    ("Protein Structure", "protein_casp"),
]
QO_SIZES_PAPER = [50, 100, 200, 400, 500, 750, 1000, 2500, 5000, 7000, 10_000, 15_000, 25_000,
                  50_000, 75_000, 100_000, 200_000, 500_000, 1_000_000]  # fmt: skip

PROFILES = {
    "smoke": {
        "jmlr": {"datasets": ["abalone", "kin8nm"], "max_rows": 400, "seeds": [0]},
        "drift": {"streams": [(1, "gra")], "n": 600, "window": 200},
        "hdi": {"datasets": ["boston", "concrete"], "max_rows": 600, "repeats": 1, "trees": 20},
        "qo": {"sizes": [200, 1000], "dists": ["uniform"], "repeats": 1},
        "thesis": None,
        "peers": {"n": 300, "datasets": [], "seed": 0},
    },
    "quick": {
        # all rows as in the paper (at 4000 rows per set the trees are younger and every
        # method's intervals wider: Table 3 is then above the paper's at alpha 0.2 and 0.05)
        "jmlr": {"datasets": [d for _, d in JMLR_DATASETS], "max_rows": None, "seeds": [0]},
        "drift": {"streams": DRIFT_STREAMS, "n": 20_000, "window": 1000},
        "hdi": {
            "datasets": [d for _, d in HDI_DATASETS],
            "max_rows": 8000,
            "repeats": 3,
            "trees": 50,
        },  # fmt: skip
        "qo": {
            "sizes": [100, 1000, 10_000, 100_000],
            "dists": ["uniform", "normal", "bimodal"],
            "repeats": 2,
        },  # fmt: skip
        "thesis": {"rows": 20_000, "peer_rows": 2000},
        "peers": {"n": 3000, "datasets": ["abalone", "kin8nm"], "seed": 0},
    },
    "full": {
        "jmlr": {
            "datasets": [d for _, d in JMLR_DATASETS],
            "max_rows": None,
            "seeds": list(range(10)),
        },  # fmt: skip
        "drift": {"streams": DRIFT_STREAMS, "n": 1_000_000, "window": 10_000},
        "hdi": {
            "datasets": [d for _, d in HDI_DATASETS],
            "max_rows": None,
            "repeats": 10,
            "trees": 100,
        },  # fmt: skip
        "qo": {"sizes": QO_SIZES_PAPER, "dists": ["uniform", "normal", "bimodal"], "repeats": 3},
        "thesis": {"rows": 1_000_000, "peer_rows": 100_000},
        "peers": {"n": 20_000, "datasets": ["abalone", "kin8nm", "cal_housing"], "seed": 0},
    },
}
