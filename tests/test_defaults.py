"""Defaults that learn a user's stream: every learner, as constructed with no argument but a
seed, on a small battery (a nominal concept, Friedman #1, a real set); and the thesis' settings
as a preset per learner (``THESIS``), which the reproduction benchmarks use.

The concept of issue 32: ``colour`` in 5 values, ``size`` in 3, label = colour in {red, blue}
XOR size == "L", no noise, learnt one dict at a time (predict, then learn).  With the thesis'
settings (``delta=1e-7``, ``grace_period=200``) a single ACTSER tree reaches 0.86-1.0 over rows
10k-20k (mean 0.975 over 20 seeds; 0.66-1.0, mean 0.90, before issue 49's fix of its nominal
candidates): a leaf waits thousands of examples to break a tie."""

import numpy as np
import pytest

import streamforest as sf
from streamforest import datasets, streams

COLOURS = ("red", "blue", "green", "yellow", "black")
SIZES = ("S", "M", "L")
SEEDS = range(5)


def nominal_concept(n, seed):
    """Dicts of two nominal features and the XOR label, seeded."""
    rng = np.random.default_rng(seed)
    colour, size = rng.integers(0, len(COLOURS), n), rng.integers(0, len(SIZES), n)
    X = [{"colour": COLOURS[c], "size": SIZES[s]} for c, s in zip(colour, size, strict=True)]
    y = [bool((c < 2) ^ (s == 2)) for c, s in zip(colour, size, strict=True)]
    return X, y


def prequential_accuracy(model, X, y, start):
    """Accuracy over rows ``start:`` of a test-then-train pass, one dict at a time."""
    hits = 0
    for i, (x, label) in enumerate(zip(X, y, strict=True)):
        if i >= start:
            hits += model.predict_one(x) == label
        model.learn_one(x, label)
    return hits / (len(y) - start)


CLASSIFIERS = {
    "ACTSERClassifier": lambda seed: sf.ACTSERClassifier(seed=seed),
    "HoeffdingTreeClassifier": lambda seed: sf.HoeffdingTreeClassifier(seed=seed),
    "ACTSEREnsembleClassifier(seeds)": lambda seed: sf.ACTSEREnsembleClassifier(seed=seed),
    "ACTSEREnsembleClassifier(rforest)": lambda seed: sf.ACTSEREnsembleClassifier(
        mode="rforest", seed=seed
    ),
    "ConformalClassifier": lambda seed: sf.ConformalClassifier(seed=seed),
}


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_default_classifiers_learn_a_nominal_concept(name):
    """Rows 10k-20k of the XOR concept, seeds 0-4: ACTSER at least 0.99 on every seed (0.91-0.96
    on two of them with the thesis' settings, its defaults before), no learner below 0.95."""
    floor = 0.99 if name == "ACTSERClassifier" else 0.95
    accuracies = []
    for seed in SEEDS:
        X, y = nominal_concept(20_000, seed)
        accuracies.append(prequential_accuracy(CLASSIFIERS[name](seed), X, y, 10_000))
    assert min(accuracies) >= floor, accuracies


def test_the_thesis_preset_is_the_thesis_tree():
    """``ACTSERClassifier(**THESIS)`` is Table 5.3's tree, still learning the concept at row 20k
    where the defaults have learnt it: the preset really is another setting, and the defaults
    are not it."""
    preset = sf.ACTSERClassifier(**sf.ACTSERClassifier.THESIS)
    assert (preset.delta, preset.grace_period) == (1e-7, 200)
    assert sf.ACTSERClassifier().get_params() != preset.get_params()
    accuracies = []
    for seed in (11, 16):  # two seeds where the thesis' tree is slow (0.86, 0.87; 1.0 at 40k)
        X, y = nominal_concept(20_000, seed)
        model = sf.ACTSERClassifier(**sf.ACTSERClassifier.THESIS, seed=seed)
        accuracies.append(prequential_accuracy(model, X, y, 10_000))
    assert max(accuracies) < 0.95, accuracies


@pytest.mark.parametrize(
    "cls, fields",
    [
        (sf.ACTSERClassifier, {"delta": 1e-7, "grace_period": 200}),
        (sf.ACTSEREnsembleClassifier, {"delta": 1e-7, "lambda_value": 0.0, "n_members": 25}),
        (sf.ABORFRegressor, {"depth": 10, "learning_rate": 0.25, "n_trees": 10}),
        (sf.ATSERRegressor, {"delta": 1e-6, "learning_rate": 0.01}),
        (sf.ATSEREnsembleRegressor, {"learning_rate": 0.025, "n_members": 10}),
    ],
)
def test_thesis_presets_hold_the_thesis_settings_and_are_read_only(cls, fields):
    model = cls(**cls.THESIS)
    assert {k: model.get_params()[k] for k in fields} == fields
    assert set(cls.THESIS) <= set(model.get_params())
    with pytest.raises(TypeError):
        cls.THESIS["delta"] = 0.5  # a shared preset cannot be changed by accident


REGRESSORS = {
    "HoeffdingTreeRegressor": lambda seed: sf.HoeffdingTreeRegressor(seed=seed),
    "ATSERRegressor": lambda seed: sf.ATSERRegressor(seed=seed),
    "ATSEREnsembleRegressor": lambda seed: sf.ATSEREnsembleRegressor(seed=seed),
    "ABORFRegressor": lambda seed: sf.ABORFRegressor(seed=seed),
    "OnlineForestRegressor": lambda seed: sf.OnlineForestRegressor(seed=seed),
}


def prequential_r2(model, X, y, start):
    """R² over rows ``start:`` of a test-then-train pass in chunks of 100 rows."""
    p = np.concatenate(
        [model.predict_learn_many(X[a : a + 100], y[a : a + 100]) for a in range(0, len(y), 100)]
    )
    return 1 - np.mean((y[start:] - p[start:]) ** 2) / np.var(y[start:])


@pytest.mark.parametrize("name", REGRESSORS)
def test_default_regressors_learn_friedman_and_a_real_set(name):
    """Seeds 0-2: R² over rows 10k-20k of Friedman #1 at least 0.75 (measured 0.79-0.84), and
    over the second half of the concrete set in a shuffled order at least 0.5 (measured
    0.57-0.69; ABORF with the thesis' depth 10 and leaf rate 0.25 was at -1.3, worse than the
    mean)."""
    for seed in range(3):
        X, y = streams.Friedman(function=1, n=20_000, seed=seed).arrays()
        assert prequential_r2(REGRESSORS[name](seed), X, y, 10_000) >= 0.75
        X, y = datasets.load("concrete")
        order = np.random.default_rng(seed).permutation(len(y))
        assert prequential_r2(REGRESSORS[name](seed), X[order], y[order], len(y) // 2) >= 0.5
