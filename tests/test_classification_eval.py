"""Prequential evaluation of classifiers: the task comes from the model; River classifiers row by
row agree with River's own metrics on the same loop; array classifiers chunk by chunk; prediction
sets' coverage / size match a direct computation; JSON and figure outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import streamforest as sf
from streamforest import classification_metrics, streams
from streamforest.evaluate import ClassificationResult, PrequentialResult, prequential

from .test_prediction_sets import BayesOracle, RiverClassifier, gaussian_stream


def test_river_classifier_row_by_row_matches_river_metrics():
    from river import metrics, tree

    stream = streams.SEA(n=3000, seed=3)
    res = prequential(tree.HoeffdingTreeClassifier(grace_period=50), stream, window=500)
    assert isinstance(res, ClassificationResult) and res.task == "classification"
    model = tree.HoeffdingTreeClassifier(grace_period=50)
    acc, kappa, f1 = metrics.Accuracy(), metrics.CohenKappa(), metrics.MacroF1()
    for x, y in stream:
        p = model.predict_one(x)
        if p is not None:
            acc.update(y, p)
            kappa.update(y, p)
            f1.update(y, p)
        else:  # no prediction: counted wrong
            acc.update(y, -1)
        model.learn_one(x, y)
    assert res.n == 3000
    assert res.totals["accuracy"] == pytest.approx(acc.get(), abs=1e-12)
    none_rows = 3000 - kappa.cm.total_weight
    assert none_rows <= 1
    if none_rows == 0:
        assert res.totals["kappa"] == pytest.approx(kappa.get(), abs=1e-12)
        assert res.totals["macro_f1"] == pytest.approx(f1.get(), abs=1e-12)


def test_array_classifier_in_chunks_matches_a_direct_loop():
    from river import naive_bayes

    X, y = gaussian_stream(2500, seed=1)
    res = prequential(RiverClassifier(naive_bayes.GaussianNB()), (X, y), chunk_size=300,
                      window=500)  # fmt: skip
    m = RiverClassifier(naive_bayes.GaussianNB())
    preds, probas, cols = [], [], []
    for s in range(0, 2500, 300):
        P = m.predict_proba(X[s : s + 300])
        c = list(m.classes_)
        preds += [c[j] if c else None for j in (np.argmax(P, 1) if c else [0] * len(P))]
        m.learn_many(X[s : s + 300], y[s : s + 300])
        probas.append(P)
        cols.append(c)
    ref = classification_metrics.ClassificationMetrics(step=500)
    for k, s in enumerate(range(0, 2500, 300)):
        P = np.pad(probas[k], ((0, 0), (0, len(cols[-1]) - probas[k].shape[1])))
        ref.update(y[s : s + 300], np.array(preds[s : s + 300], dtype=object), proba=P,
                   columns=cols[-1] if P.shape[1] else [])  # fmt: skip
    t = ref.totals()
    for key in ("accuracy", "kappa", "kappa_m", "kappa_t", "macro_f1", "log_loss"):
        assert res.totals[key] == pytest.approx(t[key], abs=1e-12), key
    assert res.totals["accuracy"] > 0.6  # it learnt (Bayes accuracy of this stream ~0.7)


def test_prediction_sets_coverage_and_size_match_direct_computation():
    X, y = gaussian_stream(6000, seed=2)

    def make():
        return sf.ConformalClassifier(
            BayesOracle(), conformity_score="aps", calibration_size=300, seed=1
        )

    res = prequential(make(), (X, y), alphas=[0.1, 0.05], chunk_size=1000, window=1000)
    m = make()
    sets = np.concatenate([
        m.predict_learn_many(X[s : s + 1000], y[s : s + 1000], alpha=[0.1, 0.05])[2]
        for s in range(0, 6000, 1000)
    ])  # fmt: skip
    cols = m.classes_
    idx = np.array([cols.index(v) for v in y])
    for j, a in enumerate((0.1, 0.05)):
        got = res.totals["sets"][f"{a:g}"]
        cov = sets[np.arange(6000), j, idx].mean()
        assert got["coverage"] == pytest.approx(cov, abs=1e-12)
        assert got["mean_set_size"] == pytest.approx(sets[:, j].sum(1).mean(), abs=1e-12)
        assert got["singletons"] == pytest.approx((sets[:, j].sum(1) == 1).mean(), abs=1e-12)
        assert got["coverage"] >= 1 - a - 0.02
    w = res.windows()
    assert list(w["end"]) == [1000, 2000, 3000, 4000, 5000, 6000]
    cov_w = w["sets"]["0.1"]["coverage"]
    for k in range(6):
        part = slice(1000 * k, 1000 * (k + 1))
        assert cov_w[k] == pytest.approx(sets[part, 0][np.arange(1000), idx[part]].mean())
    assert "0.05" in res.table().split("alpha")[1]


def test_outputs_json_and_figure(tmp_path):
    from river import naive_bayes

    X, y = gaussian_stream(3000, seed=4)
    cc = sf.ConformalClassifier(
        RiverClassifier(naive_bayes.GaussianNB()), conformity_score="lac", seed=1,
        calibration_size=200,
    )  # fmt: skip
    res = prequential(cc, (X, y), alphas=0.1, window=500)
    res.save_json(tmp_path / "r.json")
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["task"] == "classification" and d["n"] == 3000
    assert len(d["windows"]["accuracy"]) == 6 and len(d["windows"]["sets"]["0.1"]["coverage"]) == 6
    assert d["sets"]["0.1"]["mean_set_size"] == pytest.approx(
        res.totals["sets"]["0.1"]["mean_set_size"]
    )
    pytest.importorskip("matplotlib")
    fig = res.plot(tmp_path / "r.png")
    # (conditional coverage by set size, then accuracy, coverage and set size over the stream)
    assert len(fig.axes) == 4 and (tmp_path / "r.png").stat().st_size > 1000


def test_regression_models_still_give_a_prequential_result():
    X = np.random.default_rng(0).random((300, 3))
    res = prequential(sf.HoeffdingTreeRegressor(grace_period=50), (X, X.sum(1)), window=100)
    assert type(res) is PrequentialResult and res.task == "regression"


def test_classification_stream_with_nominal_features_runs_through_a_river_model():
    from river import tree

    res = prequential(
        tree.HoeffdingTreeClassifier(grace_period=100), streams.Agrawal(n=4000, seed=1), window=1000
    )
    assert res.totals["accuracy"] > 0.8  # Agrawal function 1 is learnable from age alone
    assert res.totals["n_classes"] == 2


@pytest.mark.parametrize("name", ["ACTSERClassifier", "HoeffdingTreeClassifier"])
def test_streamforest_classifiers_are_evaluated_when_present(name):
    cls = getattr(sf, name, None)
    if cls is None:
        pytest.skip(f"streamforest.{name} is not in this build")
    # chunks of 200 rows: the first is predicted by a model that knows no class (counted wrong)
    res = prequential(cls(), streams.SEA(n=5000, seed=1), window=1000, chunk_size=200)
    assert isinstance(res, ClassificationResult) and res.totals["accuracy"] > 0.8
    res = prequential(
        sf.ConformalClassifier(cls(), seed=1),
        streams.SEA(n=5000, seed=1),
        alphas=0.1,
        chunk_size=200,
    )
    assert res.totals["sets"]["0.1"]["coverage"] > 0.85
