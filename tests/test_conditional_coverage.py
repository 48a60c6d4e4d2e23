"""Conditional coverage in the prequential evaluator: the error rate per width bin (all rows and
each group's, on the same bins) counted from the intervals the model gave, and the figure's
panels."""

from __future__ import annotations

import numpy as np
import pytest

import streamforest as sf
from streamforest.evaluate import prequential


def _stream(n=5000, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 2)), g]
    y = X[:, 0] + rng.normal(0, 1, n) * np.array([0.1, 0.2, 0.6])[g]
    return X, y, g


def _intervals(X, y, levels):
    twin = sf.NormalizedConformal(seed=1)
    return np.concatenate([twin.predict_learn_many(X[a : a + 1000], y[a : a + 1000], levels)[1]
                           for a in range(0, len(y), 1000)])  # fmt: skip


def test_width_bins_count_the_intervals_given():
    """Each bin's rows, errors and mean width are those of the twin's intervals whose width is
    in the bin's range; the bins cover every finite interval, hold about equal rows, and the
    worst bin is the one of the highest error; each group's rates are on the same bins."""
    X, y, g = _stream()
    levels = [0.1, 0.05]
    res = prequential(sf.NormalizedConformal(seed=1), (X, y), levels, groups=2, chunk_size=1000)
    iv = _intervals(X, y, levels)
    for k, alpha in enumerate(levels):
        lo, hi = iv[:, k, 0], iv[:, k, 1]
        width, miss = hi - lo, (y < lo) | (y > hi)
        finite = np.isfinite(width)
        summary = res.width_bins[alpha]
        bins = summary["bins"]
        assert sum(b["n"] for b in bins) == finite.sum()
        assert summary["infinite"]["n"] == (~finite).sum()
        assert max(b["n"] for b in bins) < 1.5 * finite.sum() / len(bins)
        for b in bins:
            rows = finite & (width >= b["lo"]) & (width <= b["hi"])
            assert rows.sum() == b["n"]
            assert b["mer"] == pytest.approx(miss[rows].mean(), abs=1e-12)
            assert b["mpiw"] == pytest.approx(width[rows].mean(), rel=1e-9)
            for v in range(3):
                got = res.groups[2]["groups"][float(v)]["intervals"][alpha]["width_bins"]
                mine = rows & (g == v)
                want = miss[mine].mean() if mine.any() else float("nan")
                j = bins.index(b)
                assert got[j] == pytest.approx(want, abs=1e-12, nan_ok=True)
        worst = max(range(len(bins)), key=lambda j: bins[j]["mer"])
        assert summary["worst"]["bin"] == worst
    # the noisy group's wide intervals: the marginal method errs most in its widest bins
    assert res.width_bins[0.1]["worst"]["bin"] >= len(res.width_bins[0.1]["bins"]) - 2
    text = res.table()
    assert "by interval width" in text and "worst width bin at alpha 0.1" in text
    assert "MER by width bin" in text
    d = res.to_dict(windows=False)
    assert len(d["width_bins"]["0.1"]["bins"]) == len(res.width_bins[0.1]["bins"])


def test_the_figure_shows_width_bins_and_groups():
    pytest.importorskip("matplotlib")
    X, y, g = _stream(3000)
    res = prequential(sf.NormalizedConformal(seed=1), (X, y), 0.1, groups=2, window=500)
    fig = res.plot()
    titles = [ax.get_title() for ax in fig.axes]
    assert "conditional coverage by width" in titles and "MER per group (worst outlined)" in titles
    assert fig.axes[-1].get_xlabel().startswith("examples")
    worst = [p for p in fig.axes[titles.index("MER per group (worst outlined)")].patches
             if p.get_linewidth() == 1.5]  # fmt: skip
    assert len(worst) == 1 and worst[0].get_height() == res.groups[2]["worst"][0.1]["mer"]
    plain = prequential(sf.NormalizedConformal(seed=1), (X, y), 0.1, window=500).plot()
    assert len(plain.axes) == 4  # width bins, MER, RIS, MAE


def test_prediction_sets_per_group_and_by_set_size():
    """A classifier's sets: each group's share of sets missing the label and mean set size, and
    the rates by set size (each size its own bin), are those of a twin's sets."""
    rng = np.random.default_rng(3)
    n = 4000
    g = rng.integers(0, 3, n)
    X = np.c_[rng.random((n, 2)), g]
    clean = (X[:, 0] > 0.5).astype(int)
    y = np.where(rng.random(n) < np.array([0.02, 0.1, 0.3])[g], 1 - clean, clean).astype(str)
    res = prequential(sf.ConformalClassifier(seed=1), (X, y), [0.1], groups=2, chunk_size=500)
    twin = sf.ConformalClassifier(seed=1)
    miss, size = [], []
    for a in range(0, n, 500):
        _, _, sets = twin.predict_learn_many(X[a : a + 500], y[a : a + 500], 0.1)
        col = np.array([twin.classes_.index(v) for v in y[a : a + 500]])
        miss.append(~sets[np.arange(len(col)), col])
        size.append(sets.sum(axis=1))
    miss, size = np.concatenate(miss), np.concatenate(size)
    fam = res.groups[2]
    for v in range(3):
        got = fam["groups"][float(v)]["intervals"][0.1]
        assert got["mer"] == pytest.approx(miss[g == v].mean(), abs=1e-12)
        assert got["mpiw"] == pytest.approx(size[g == v].mean(), abs=1e-12)
    assert fam["worst"][0.1]["group"] == 2.0
    bins = res.width_bins[0.1]["bins"]
    assert [b["lo"] for b in bins] == sorted(set(size.tolist()))
    for b in bins:
        assert b["mer"] == pytest.approx(miss[size == b["lo"]].mean(), abs=1e-12)
    assert "by set size" in res.table() and "MER by size bin" in res.table()


def test_run_groups_of_a_classifier_on_the_command_line(tmp_path, capsys):
    """``streamforest run --groups COL`` with prediction sets: the sets are calibrated per group
    (the model's ``groups``) and the table shows each group and the sets by size."""
    pytest.importorskip("rich")
    rng = np.random.default_rng(0)
    n = 2000
    g = rng.integers(0, 3, n)
    X = rng.random((n, 2))
    clean = X[:, 0] > 0.5
    y = np.where(rng.random(n) < np.array([0.02, 0.1, 0.3])[g], ~clean, clean)
    path = tmp_path / "c.csv"
    rows = [
        f"{a},{b},{'xyz'[k]},{'yes' if t else 'no'}" for (a, b), k, t in zip(X, g, y, strict=True)
    ]
    path.write_text("a,b,site,target\n" + "\n".join(rows) + "\n")
    from streamforest.cli import main

    argv = ["run", "--file", str(path), "--model", "conformal-ht-classifier", "--groups", "site"]
    assert main([*argv, "--no-plot", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "by site:" in out and "worst group at alpha 0.1" in out and "by set size" in out
    assert "groups=[2]" in out
