"""Classification metrics against scikit-learn (whole sequences and windows), River (computed
incrementally on the same sequence), and row-by-row reference loops for kappa-M and kappa-T."""

import math

import numpy as np
import pytest

from streamforest import classification_metrics as cm

skm = pytest.importorskip("sklearn.metrics")


def noisy_predictions(rng, n, k, acc=0.6, labels=None):
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < acc, y, rng.integers(0, k, n))
    if labels is not None:
        labels = np.array(labels, dtype=object)
        return labels[y], labels[p]
    return y, p


def baselines_ref(y, p):
    """Row by row: is the no-change prediction (previous label) and the majority prediction
    (most frequent true label so far) right?  Nothing before row 0.  Majority ties go to the
    label that appeared first, reading each row's true then predicted label."""
    order = list(dict.fromkeys(np.stack([y, p], axis=1).ravel().tolist()))
    counts, nochange, majority = {}, [], []
    prev = None
    for t in y.tolist():
        nochange.append(prev is not None and t == prev)
        if counts:
            best = max(counts, key=lambda c: (counts[c], -order.index(c)))
            majority.append(t == best)
        else:
            majority.append(False)
        counts[t] = counts.get(t, 0) + 1
        prev = t
    return np.array(nochange), np.array(majority)


def kappa_ref(p0, pe):
    return (p0 - pe) / (1 - pe)


@pytest.mark.parametrize("seed, k", [(0, 2), (1, 3), (2, 5), (3, 7)])
def test_whole_sequence_matches_sklearn(seed, k):
    rng = np.random.default_rng(seed)
    y, p = noisy_predictions(rng, 3000, k, acc=0.5)
    assert math.isclose(cm.accuracy(y, p), skm.accuracy_score(y, p), rel_tol=1e-12)
    assert math.isclose(cm.cohen_kappa(y, p), skm.cohen_kappa_score(y, p), rel_tol=1e-9)
    assert math.isclose(cm.macro_f1(y, p), skm.f1_score(y, p, average="macro"), rel_tol=1e-9)
    proba = rng.dirichlet(np.ones(k), 3000)
    ref = skm.log_loss(y, proba, labels=list(range(k)))
    assert math.isclose(cm.log_loss(y, proba, columns=range(k)), ref, rel_tol=1e-9)
    # kappa-M and kappa-T from their definitions, with the baselines computed row by row
    nochange, majority = baselines_ref(y, p)
    p0 = np.mean(y == p)
    assert math.isclose(cm.kappa_t(y, p), kappa_ref(p0, nochange.mean()), rel_tol=1e-12)
    assert math.isclose(cm.kappa_m(y, p), kappa_ref(p0, majority.mean()), rel_tol=1e-12)


def test_string_labels_classes_absent_from_truth_and_column_order():
    rng = np.random.default_rng(4)
    y, p = noisy_predictions(rng, 2000, 4, labels=["cat", "dog", "eel", "fox"])
    p[:10] = "gnu"  # predicted, never true
    assert math.isclose(cm.macro_f1(y, p), skm.f1_score(y, p, average="macro"), rel_tol=1e-9)
    assert math.isclose(cm.cohen_kappa(y, p), skm.cohen_kappa_score(y, p), rel_tol=1e-9)
    cols = ["fox", "cat", "eel", "dog"]  # probability columns in any order
    proba = rng.dirichlet(np.ones(4), 2000)
    ref = skm.log_loss(y, proba[:, np.argsort(cols)], labels=sorted(cols))
    assert math.isclose(cm.log_loss(y, proba, columns=cols), ref, rel_tol=1e-9)


def test_matches_river_incrementally():
    metrics = pytest.importorskip("river.metrics")
    rng = np.random.default_rng(5)
    y, p = noisy_predictions(rng, 1500, 4, acc=0.4)
    c = cm.curves(y, p)  # step=1: the value after every row
    acc, kappa, f1 = metrics.Accuracy(), metrics.CohenKappa(), metrics.MacroF1()
    for i, (t, q) in enumerate(zip(y.tolist(), p.tolist(), strict=True)):
        for m in (acc, kappa, f1):
            m.update(t, q)
        assert math.isclose(c["accuracy"][i], acc.get(), rel_tol=1e-12)
        assert math.isclose(c["macro_f1"][i], f1.get(), rel_tol=1e-9, abs_tol=1e-12)
        if np.isnan(c["kappa"][i]):  # p_e = 1: River says 0 (division by zero), we say nan
            assert kappa.get() == 0
        else:
            assert math.isclose(c["kappa"][i], kappa.get(), rel_tol=1e-9, abs_tol=1e-12)
    assert c["row"].tolist() == list(range(1, 1501))


@pytest.mark.parametrize("step, window", [(1, 50), (25, 200), (100, 100)])
def test_windows_are_the_metrics_of_the_window_rows(step, window):
    rng = np.random.default_rng(6)
    n = 1234
    y, p = noisy_predictions(rng, n, 3, acc=0.55)
    proba = rng.dirichlet(np.ones(3), n)
    c = cm.curves(y, p, proba=proba, columns=[0, 1, 2], step=step, window=window)
    nochange, majority = baselines_ref(y, p)  # the baselines look back over the whole stream
    ends = c["row"]
    assert ends[-1] == n and len(ends) == -(-n // step)
    for i in range(0, len(ends), max(1, 10 // step)):  # every 10th row at step 1
        end = int(ends[i])
        lo = max(0, ((end - 1) // step + 1) * step - window)  # window = whole blocks
        yy, pp = y[lo:end], p[lo:end]
        assert math.isclose(c["accuracy"][i], skm.accuracy_score(yy, pp), rel_tol=1e-12)
        f1 = skm.f1_score(yy, pp, average="macro", labels=np.union1d(yy, pp))
        assert math.isclose(c["macro_f1"][i], f1, rel_tol=1e-9, abs_tol=1e-12)
        ll = -np.mean(np.log(proba[np.arange(lo, end), y[lo:end]]))
        assert math.isclose(c["log_loss"][i], ll, rel_tol=1e-9)
        p0 = np.mean(yy == pp)
        pe = sum(np.mean(yy == k) * np.mean(pp == k) for k in range(3))
        for name, base in (("kappa", pe), ("kappa_t", nochange[lo:end].mean()),
                           ("kappa_m", majority[lo:end].mean())):  # fmt: skip
            if base == 1:
                assert np.isnan(c[name][i])
            else:
                assert math.isclose(c[name][i], kappa_ref(p0, base), rel_tol=1e-9, abs_tol=1e-12)
    pre = cm.curves(y, p, step=step)  # prequential: from the first row
    assert math.isclose(pre["kappa_t"][-1], cm.kappa_t(y, p), rel_tol=1e-12)


def test_chunking_never_changes_the_result():
    rng = np.random.default_rng(7)
    n = 5000
    y, p = noisy_predictions(rng, n, 5, labels=list("abcde"))
    proba = rng.dirichlet(np.ones(5), n)
    sets = rng.random((n, 5)) < 0.3
    cols = list("edcba")
    whole = cm.ClassificationMetrics(step=100).update(y, p, proba=proba, sets=sets, columns=cols)
    parts = cm.ClassificationMetrics(step=100)
    cuts = np.sort(rng.choice(np.arange(1, n), 40, replace=False))
    for lo, hi in zip([0, *cuts], [*cuts, n], strict=True):
        parts.update(y[lo:hi], p[lo:hi], proba=proba[lo:hi], sets=sets[lo:hi], columns=cols)
    a, b = whole.curves(window=500), parts.curves(window=500)
    for k in a:
        assert np.allclose(a[k], b[k], equal_nan=True, rtol=1e-12), k
    assert whole.totals() == pytest.approx(parts.totals(), rel=1e-12, nan_ok=True)
    assert whole.classes == parts.classes == list(dict.fromkeys(np.stack([y, p], 1).ravel()))


def test_prediction_sets():
    y = np.array([0, 1, 2, 1, 0, 2])
    sets = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]], dtype=bool)
    assert cm.coverage(y, sets, columns=[0, 1, 2]) == pytest.approx(4 / 6)
    assert cm.mean_set_size(sets) == pytest.approx(9 / 6)
    assert cm.singleton_share(sets) == pytest.approx(2 / 6)
    as_lists = [{0}, {0, 1}, set(), {1, 2}, {0, 1, 2}, {1}]
    assert cm.coverage(y, as_lists) == pytest.approx(4 / 6)
    assert cm.mean_set_size(as_lists) == pytest.approx(9 / 6)
    # columns name the labels: reordered columns, and a label that is no column is not covered
    assert cm.coverage(y, sets[:, ::-1], columns=[2, 1, 0]) == pytest.approx(4 / 6)
    assert cm.coverage(np.array([7, 0]), sets[:2, :], columns=[0, 1, 2]) == pytest.approx(1 / 2)
    t = cm.evaluate(y, y, sets=sets, columns=[0, 1, 2])
    assert t["empty"] == pytest.approx(1 / 6) and t["accuracy"] == 1
    # on random data against direct counts, and windowed
    rng = np.random.default_rng(8)
    y = rng.integers(0, 4, 3000)
    sets = rng.random((3000, 4)) < 0.4
    c = cm.curves(y, y, sets=sets, columns=range(4), step=100, window=300)
    lo = 3000 - 300
    assert c["coverage"][-1] == pytest.approx(np.mean(sets[np.arange(lo, 3000), y[lo:]]))
    assert c["singletons"][-1] == pytest.approx(np.mean(sets[lo:].sum(1) == 1))
    assert c["mean_set_size"][-1] == pytest.approx(sets[lo:].sum(1).mean())


def test_log_loss_clips_and_predictions_from_probabilities():
    y = np.array([0, 1, 1])
    proba = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])  # the last one: probability 0
    assert cm.log_loss(y, proba, columns=[0, 1]) == pytest.approx(-math.log(1e-15) / 3)
    assert cm.log_loss(y, proba, columns=[0, 1], eps=1e-3) == pytest.approx(-math.log(1e-3) / 3)
    assert cm.log_loss(np.array([5]), np.array([[0.5, 0.5]]), [0, 1]) == pytest.approx(
        -math.log(1e-15)
    )  # a label that is no column gets probability 0
    t = cm.evaluate(y, proba=proba, columns=[0, 1])  # y_pred = the most probable column
    assert t["accuracy"] == pytest.approx(2 / 3)


def test_baseline_ties_and_undefined_values():
    y = np.array([1, 0, 0, 1])
    p = np.array([1, 0, 0, 0])  # p_o = 3/4
    # majority baseline: row 0 nothing seen (wrong); row 1 predicts 1 (wrong); row 2 a 1:1 tie;
    # row 3 predicts 0 (wrong).  The tie goes to the earlier class in `classes`
    by_order = cm.kappa_m(y, p, classes=[0, 1])  # predicts 0: right, p_m = 1/4
    assert by_order == pytest.approx((3 / 4 - 1 / 4) / (1 - 1 / 4))
    by_appearance = cm.kappa_m(y, p)  # classes [1, 0] (first seen): predicts 1, p_m = 0
    assert by_appearance == pytest.approx(3 / 4)
    assert baselines_ref(y, p)[1].tolist() == [False, False, False, False]
    # no-change baseline: rows 1..3 predict 1, 0, 0 -> right once (row 2)
    assert cm.kappa_t(y, p) == pytest.approx((3 / 4 - 1 / 4) / (1 - 1 / 4))
    # everything one class: p_e = 1, kappa undefined
    t = cm.evaluate([3, 3, 3], [3, 3, 3])
    assert t["accuracy"] == 1 and np.isnan(t["kappa"]) and t["macro_f1"] == 1
    empty = cm.ClassificationMetrics().totals()
    assert all(np.isnan(v) for v in empty.values())


def test_bad_arguments():
    m = cm.ClassificationMetrics(step=10)
    with pytest.raises(ValueError, match="multiple"):
        m.update([0, 1], [0, 1]).curves(window=15)
    with pytest.raises(ValueError, match="columns"):
        m.update([0], proba=[[1.0]])
    with pytest.raises(ValueError, match="y_pred or proba"):
        m.update([0])
    with pytest.raises(ValueError, match="shape"):
        m.update([0, 1], [0])
    with pytest.raises(ValueError, match="shape"):
        m.update([0, 1], proba=[[0.5, 0.5]], columns=[0, 1])
    with pytest.raises(ValueError):
        cm.ClassificationMetrics(step=0)
