"""ACTSER on the nominal XOR concept of issues 32 and 49: the accuracy of each seed.

The concept: ``colour`` uniform in 5 values, ``size`` uniform in 3, label = colour in {red,
blue} XOR size == "L", no noise; dicts of two nominal features learnt one at a time
(``predict_one`` then ``learn_one``); accuracy over rows ``--start`` to ``--rows`` (10k-20k);
the data seed is the model's seed.  Two ways of drawing the rows from the seed's generator:

- ``rows``: one row at a time, its colour then its size (issue 49's stream);
- ``columns``: all colours, then all sizes (``tests/test_defaults.py``'s stream).

Models: ``ACTSERClassifier()`` (its defaults) and ``ACTSERClassifier(**THESIS)`` (Table 5.3's
settings).  Prints each seed's accuracy, then the minimum, the mean and the number of seeds
below 0.99.

    python benchmarks/nominal_concept.py [--seeds 20] [--rows 20000] [--start 10000]
        [--draws rows,columns] [--models defaults,thesis]
"""

from __future__ import annotations

import argparse

import numpy as np

COLOURS = ("red", "blue", "green", "yellow", "black")
SIZES = ("S", "M", "L")


def concept(n: int, seed: int, draws: str) -> tuple[list[dict], list[bool]]:
    """``n`` dicts of the concept and their labels, drawn as ``draws`` says."""
    rng = np.random.default_rng(seed)
    if draws == "rows":
        pairs = [(int(rng.integers(0, len(COLOURS))), int(rng.integers(0, len(SIZES))))
                 for _ in range(n)]  # fmt: skip
    elif draws == "columns":
        colour, size = rng.integers(0, len(COLOURS), n), rng.integers(0, len(SIZES), n)
        pairs = list(zip(colour.tolist(), size.tolist(), strict=True))
    else:
        raise ValueError(f"unknown draws {draws!r}")
    X = [{"colour": COLOURS[c], "size": SIZES[s]} for c, s in pairs]
    y = [bool((c < 2) ^ (s == 2)) for c, s in pairs]
    return X, y


def prequential_accuracy(model, X, y, start: int) -> float:
    """Accuracy over rows ``start:`` of a test-then-train pass, one dict at a time."""
    hits = 0
    for i, (x, label) in enumerate(zip(X, y, strict=True)):
        if i >= start:
            hits += model.predict_one(x) == label
        model.learn_one(x, label)
    return hits / (len(y) - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--start", type=int, default=10_000)
    ap.add_argument("--draws", default="rows,columns")
    ap.add_argument("--models", default="defaults,thesis")
    args = ap.parse_args()

    import streamforest as sf

    settings = {"defaults": {}, "thesis": dict(sf.ACTSERClassifier.THESIS)}
    for draws in args.draws.split(","):
        for name in args.models.split(","):
            accuracies = []
            for seed in range(args.seeds):
                X, y = concept(args.rows, seed, draws)
                model = sf.ACTSERClassifier(**settings[name], seed=seed)
                accuracies.append(prequential_accuracy(model, X, y, args.start))
            a = np.array(accuracies)
            print(f"\n== draws {draws}, ACTSERClassifier ({name}), accuracy over rows "
                  f"{args.start:,}-{args.rows:,}")  # fmt: skip
            print(" ".join(f"{s}:{v:.4f}" for s, v in enumerate(accuracies)))
            print(f"min {a.min():.4f}  mean {a.mean():.4f}  below 0.99: {(a < 0.99).sum()} of "
                  f"{len(a)}")  # fmt: skip


if __name__ == "__main__":
    main()
