"""OnlineQRF design choices, measured: leaf-mixture weighting (Meinshausen vs the JMLR paper's
merge of all retained items) x what a split's children start with (empty vs a copy of the
parent's sketch), prequential at alpha = 0.1 on River's FriedmanDrift 'gra' (100k) and the real
datasets of ``../shared/data/`` (first 10k rows).  Prints MER / RIS / utility per dataset and the
mean utility and number of valid (MER <= alpha) runs per variant.

    python benchmarks/qrf_variants.py
"""

from __future__ import annotations

import json

import numpy as np

import streamforest as sf
from intervals_vs_river import DATA, gra_stream, metrics, real_dataset

VARIANTS = {
    "meinshausen/empty": {},
    "paper/empty": {"weighting": "paper"},
    "meinshausen/parent": {"split_sketch": "parent"},
    "paper/parent": {"weighting": "paper", "split_sketch": "parent"},
}


def main() -> None:
    names = ["gra"] + sorted(json.loads((DATA / "manifest.json").read_text()))
    res = {v: [] for v in VARIANTS}
    for name in names:
        X, y = gra_stream(100_000) if name == "gra" else real_dataset(name, 10_000)
        cells = []
        for v, kw in VARIANTS.items():
            m = sf.OnlineQRF(forest=sf.OnlineForestRegressor(seed=42), **kw)
            p, iv = m.predict_learn_many(X, y, alpha=0.1)
            r = metrics(y, iv[:, 0], iv[:, 1], p)
            res[v].append(r)
            cells.append(f"{v}: {r['mer']:.3f}/{r['ris']:.3f}/{r['utility']:.3f}")
        print(f"{name:18s}", "  ".join(cells), flush=True)
    print("\nvariant              mean utility  mean MER  mean RIS  valid")
    for v, rows in res.items():
        print(
            f"{v:20s} {np.mean([r['utility'] for r in rows]):12.3f} "
            f"{np.mean([r['mer'] for r in rows]):9.3f} {np.mean([r['ris'] for r in rows]):9.3f}"
            f"  {sum(r['mer'] <= 0.1 for r in rows)}/{len(rows)}"
        )


if __name__ == "__main__":
    main()
