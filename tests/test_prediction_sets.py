"""Prediction sets: coverage within binomial bounds at several alpha for each score (with the exact
Bayes-optimal model of a stream of known class-conditional distributions, and with River models),
scores against a direct computation, nestedness, chunking invariance, classes appearing
mid-stream, set size of a better model, ACI / PID long-run bounds on a drifting stream, refused
calls leave the model unchanged, pickle / save-load."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.prediction_sets import SCORES as SCORE_CODES

set_kernels = _core.sets

# --- a stream with known class-conditional distributions and its Bayes-optimal model -------------
CLASSES = ("a", "b", "c")
PRIORS = np.array([0.5, 0.3, 0.2])
MEANS = np.array([[0.0, 0.0], [1.5, 0.5], [0.5, 1.8]])
SD = 1.0


def gaussian_stream(n, seed, noise=None, classes=CLASSES, means=MEANS, priors=PRIORS):
    """Rows ``x ~ N(means[k], SD^2 I)`` of class ``k ~ priors``; ``noise[i]``: the probability
    that row i's label is replaced by a uniformly drawn one."""
    rng = np.random.default_rng(seed)
    k = rng.choice(len(priors), size=n, p=priors)
    X = means[k] + SD * rng.standard_normal((n, means.shape[1]))
    if noise is not None:
        flip = rng.random(n) < noise
        k = np.where(flip, rng.integers(0, len(priors), n), k)
    y = np.array(classes, dtype=object)[k]
    return X, y


class BayesOracle:
    """The exact posterior ``P(class | x)`` of :func:`gaussian_stream` (using only the features
    ``features``: the posterior given those, also exact since the coordinates are independent).
    It does not learn; ``classes_`` are the labels seen so far (the classifier protocol)."""

    def __init__(self, features=(0, 1), means=MEANS, priors=PRIORS, classes=CLASSES):
        self.features = tuple(features)
        self.means, self.priors, self.labels = means, priors, tuple(classes)
        self.classes_ = []

    def clone(self):
        return BayesOracle(self.features, self.means, self.priors, self.labels)

    def _posterior(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.means.shape[1]:
            raise ValueError(f"X must have {self.means.shape[1]} columns, got shape {X.shape}")
        f = list(self.features)
        d2 = ((X[:, None, f] - self.means[None, :, f]) ** 2).sum(axis=2)
        logp = np.log(self.priors)[None, :] - d2 / (2 * SD**2)
        p = np.exp(logp - logp.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def predict_proba(self, X):
        P = self._posterior(X)
        return P[:, [self.labels.index(c) for c in self.classes_]]

    def learn_many(self, X, y, w=None):
        self._posterior(X)
        for v in y:
            if v not in self.classes_:
                self.classes_.append(v)

    def _x(self, x):
        return np.array([[x[0], x[1]]], dtype=float)

    def predict_proba_one(self, x):
        return dict(zip(self.classes_, self.predict_proba(self._x(x))[0].tolist(), strict=True))

    def learn_one(self, x, y, w=None):
        self.learn_many(self._x(x), [y])


class RiverClassifier:
    """A River classifier with the array API of the protocol (``classes_``: labels seen)."""

    def __init__(self, model):
        self.model = model
        self.classes_ = []

    def clone(self):
        return RiverClassifier(self.model.clone())

    def learn_one(self, x, y, w=None):
        if y not in self.classes_:
            self.classes_.append(y)
        self.model.learn_one(x, y)

    def predict_proba_one(self, x):
        return self.model.predict_proba_one(x)

    def predict_one(self, x):
        return self.model.predict_one(x)

    def learn_many(self, X, y, w=None):
        for row, t in zip(np.asarray(X).tolist(), list(y), strict=True):
            self.learn_one(dict(enumerate(row)), t)

    def predict_proba(self, X):
        out = np.zeros((len(X), len(self.classes_)))
        for i, row in enumerate(np.asarray(X).tolist()):
            p = self.model.predict_proba_one(dict(enumerate(row)))
            out[i] = [p.get(c, 0.0) for c in self.classes_]
        return out


def covered(sets, y, classes):
    col = np.array([classes.index(v) for v in y])
    return sets[np.arange(len(y)), ..., col] if sets.ndim == 2 else sets[np.arange(len(y)), :, col]


def binomial_tol(alpha, n, z=4.0):
    """Tolerance on the coverage of ``n`` rows: z standard errors of a binomial share, doubled in
    variance for the shared calibration set."""
    return z * math.sqrt(2 * alpha * (1 - alpha) / n)


SCORES = [("lac", True), ("aps", True), ("aps", False), ("raps", True), ("raps", False)]


# --- scores --------------------------------------------------------------------------------------
def reference_score(p, y, kind, u, penalty, k_reg):
    order = sorted(range(len(p)), key=lambda k: (-p[k], k))
    r = order.index(y)
    if kind == "lac":
        return 1 - p[y]
    s = sum(p[k] for k in order[:r]) + u * p[y]
    return s + (penalty * max(0, r + 1 - k_reg) if kind == "raps" else 0.0)


@pytest.mark.parametrize("kind", ["lac", "aps", "raps"])
def test_scores_match_a_direct_computation(kind):
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(5), size=200)
    P[:20, 1] = P[:20, 3]  # ties: broken by column
    P /= P.sum(axis=1, keepdims=True)
    U = rng.random(200)
    known = rng.integers(1, 6, 200)
    S = np.empty((200, 6))
    set_kernels.class_scores(P, U, known, SCORE_CODES[kind], 0.05, 2, S)
    for i in range(200):
        kn = known[i]
        p = P[i, :kn].tolist()
        for y in range(kn):
            assert S[i, y] == pytest.approx(reference_score(p, y, kind, U[i], 0.05, 2), abs=1e-12)
        assert np.all(np.isnan(S[i, kn:5]))
        unseen = reference_score(p + [0.0], kn, kind, U[i], 0.05, 2)
        assert S[i, 5] == pytest.approx(unseen, abs=1e-12)


def test_row_uniforms_do_not_depend_on_chunking():
    whole = np.empty(1000)
    set_kernels.row_uniforms(7, 0, whole)
    parts = np.empty(1000)
    for s in range(0, 1000, 137):
        part = np.empty(min(137, 1000 - s))
        set_kernels.row_uniforms(7, s, part)
        parts[s : s + len(part)] = part
    assert np.array_equal(whole, parts)
    assert 0 <= whole.min() and whole.max() < 1
    assert abs(whole.mean() - 0.5) < 4 * math.sqrt(1 / 12 / 1000)
    other = np.empty(1000)
    set_kernels.row_uniforms(8, 0, other)
    assert not np.array_equal(whole, other)


# --- coverage ------------------------------------------------------------------------------------
@pytest.mark.parametrize("score,randomized", SCORES)
def test_coverage_on_an_iid_stream_within_binomial_bounds(score, randomized):
    C, N = 500, 20_000
    X, y = gaussian_stream(C + N, seed=1)
    alphas = [0.2, 0.1, 0.05]
    cc = sf.ConformalClassifier(BayesOracle(), conformity_score=score, randomized=randomized,
                                calibration_size=C, seed=3)  # fmt: skip
    cc.learn_many(X[:C], y[:C])
    sets = np.concatenate([
        cc.predict_learn_many(X[s : s + 2000], y[s : s + 2000], alpha=alphas)[2]
        for s in range(C, C + N, 2000)
    ])  # fmt: skip
    assert cc.classes_ == sorted(cc.classes_, key=list(y).index)
    cov = covered(sets, y[C:], cc.classes_).mean(axis=0)
    for a, c in zip(alphas, cov, strict=True):
        tol = binomial_tol(a, N)
        assert 1 - a - tol <= c, (a, c)
        # continuous scores: at most 1 / (C + 1) above; the non-randomised APS/RAPS score of a
        # label ranked last is the whole mass (a tie at 1): conservative, no upper bound
        if randomized or score == "lac":
            assert c <= 1 - a + 1 / (C + 1) + tol, (a, c)


@pytest.mark.parametrize("score", ["lac", "aps"])
def test_coverage_with_a_learning_river_model(score):
    from river import naive_bayes

    C, N = 500, 8000
    X, y = gaussian_stream(C + N, seed=2)
    cc = sf.ConformalClassifier(RiverClassifier(naive_bayes.GaussianNB()), conformity_score=score,
                                calibration_size=C, seed=4)  # fmt: skip
    cc.learn_many(X[:C], y[:C])
    sets = np.concatenate([
        cc.predict_learn_many(X[s : s + 500], y[s : s + 500], alpha=0.1)[2]
        for s in range(C, C + N, 500)
    ])  # fmt: skip
    c = covered(sets, y[C:], cc.classes_).mean()
    assert abs(c - 0.9) <= binomial_tol(0.1, N) + 1 / (C + 1)


# --- structure -----------------------------------------------------------------------------------
@pytest.mark.parametrize("score,randomized", SCORES)
def test_sets_are_nested_and_one_row_agrees_with_arrays(score, randomized):
    X, y = gaussian_stream(1500, seed=5)
    cc = sf.ConformalClassifier(BayesOracle(), conformity_score=score, randomized=randomized,
                                calibration_size=300, seed=1)  # fmt: skip
    cc.learn_many(X[:1000], y[:1000])
    alphas = [0.4, 0.2, 0.1, 0.02]
    S = cc.predict_sets(X[1000:], alpha=alphas)
    assert S.shape == (500, 4, 3) and S.dtype == bool
    assert np.all(S[:, 1:] >= S[:, :-1])  # smaller alpha: superset
    assert np.array_equal(cc.predict_sets(X[1000:], alpha=0.1), S[:, 2])
    for i in range(0, 500, 50):
        x = dict(enumerate(X[1000 + i]))
        one = cc.predict_set_one(x, alpha=alphas)
        for j in range(4):
            assert sorted(one[j]) == sorted(np.array(cc.classes_, dtype=object)[S[i, j]])
            p = cc.predict_proba_one(x)
            assert [p[c] for c in one[j]] == sorted((p[c] for c in one[j]), reverse=True)


def test_learn_one_equals_learn_many_for_a_fixed_model():
    X, y = gaussian_stream(700, seed=6)
    a = sf.ConformalClassifier(BayesOracle(), conformity_score="raps", calibration_size=200, seed=2)
    a.learn_many(X[:50], y[:50])  # the oracle reports the classes it has seen: all three
    b = copy.deepcopy(a)
    X, y = X[50:], y[50:]
    sets_one = []
    for row, t in zip(X, y, strict=True):
        x = dict(enumerate(row))
        sets_one.append([set(s) for s in a.predict_set_one(x, alpha=[0.1, 0.3])])
        a.learn_one(x, t)
    labels, proba, sets = b.predict_learn_many(X[:300], y[:300], alpha=[0.1, 0.3])
    _, _, sets2 = b.predict_learn_many(X[300:], y[300:], alpha=[0.1, 0.3])
    cols = np.array(b.classes_, dtype=object)
    for i in range(650):
        row = sets[i] if i < 300 else sets2[i - 300]
        got = [set(cols[: row.shape[-1]][row[j]]) for j in range(2)]
        assert got == sets_one[i], i
    assert np.array_equal(a.calibration_scores_, b.calibration_scores_)
    assert a.classes_ == b.classes_
    assert np.array_equal(a.predict_sets(X[:50], [0.1, 0.2]), b.predict_sets(X[:50], [0.1, 0.2]))


def test_calibration_set_is_a_bounded_fifo():
    X, y = gaussian_stream(1000, seed=7)
    cc = sf.ConformalClassifier(BayesOracle(), conformity_score="lac", calibration_size=100)
    cc.learn_many(X[:20], y[:20])  # from now on the oracle knows the three classes
    cc.learn_many(X[20:], y[20:])
    P = BayesOracle()._posterior(X)  # columns a, b, c
    lac = 1 - P[np.arange(1000), [CLASSES.index(v) for v in y]]
    assert np.allclose(cc.calibration_scores_, lac[-100:])
    # the threshold is the ceil((m + 1)(1 - alpha))-th smallest, inf beyond m
    s = np.sort(lac[-100:])
    assert cc.thresholds(0.1) == s[math.ceil(101 * 0.9) - 1]
    assert cc.thresholds(0.005) == math.inf
    assert np.all(cc.predict_sets(X[:10], alpha=0.005))


def test_classes_appearing_mid_stream():
    from river import naive_bayes

    X1, y1 = gaussian_stream(1500, seed=8, classes=("a", "b", "c"), priors=np.array([0.5, 0.5, 0]))
    X2, y2 = gaussian_stream(3000, seed=9)
    cc = sf.ConformalClassifier(RiverClassifier(naive_bayes.GaussianNB()), conformity_score="aps",
                                calibration_size=300, seed=5)  # fmt: skip
    cc.learn_many(X1, y1)
    assert cc.classes_ == ["a", "b"]
    assert cc.predict_sets(X2[:5]).shape == (5, 2)
    first = list(y2).index("c")
    _, proba, sets = cc.predict_learn_many(X2, y2, alpha=0.1)
    assert cc.classes_ == ["a", "b", "c"] and sets.shape == (3000, 3) and proba.shape == (3000, 3)
    assert not sets[: first + 1, 2].any()  # not a class before it is seen
    assert np.all(proba[:, 2] == 0)  # the model's probabilities from before the chunk
    after = cc.predict_learn_many(X2, y2, alpha=0.1)[2]  # the model now knows c
    assert covered(after[1000:], y2[1000:], cc.classes_).mean() >= 0.9 - binomial_tol(0.1, 2000)


@pytest.mark.parametrize(
    "labels, kind", [(("a", "b", "c"), "U"), ((3, 1, 2), "i"), (("a", 2, "c"), "O")]
)
def test_predict_gives_the_wrapped_models_labels_and_dtype(labels, kind):
    """The wrapper's ``predict`` is its model's: the same labels, as an array of the same dtype
    (str/int labels stay str/int arrays; mixed labels an object array); ``None`` before any."""
    X, y = gaussian_stream(1200, seed=12)
    y = np.array([labels[CLASSES.index(v)] for v in y], dtype=object)
    model = sf.HoeffdingTreeClassifier(grace_period=50, seed=3)
    cc = sf.ConformalClassifier(model, calibration_size=200, seed=4)
    assert cc.predict(X[:3]).tolist() == [None, None, None]
    cc.learn_many(X, y)
    ours, theirs = cc.predict(X[:300]), cc.model_.predict(X[:300])
    assert ours.dtype == theirs.dtype and ours.dtype.kind == kind
    assert ours.tolist() == theirs.tolist() and set(ours.tolist()) <= set(labels)


def test_better_model_gives_smaller_sets():
    C, N = 500, 10_000
    X, y = gaussian_stream(C + N, seed=10)
    sizes, covs = {}, {}
    for name, feats in (("both", (0, 1)), ("first only", (0,))):
        cc = sf.ConformalClassifier(
            BayesOracle(feats), conformity_score="lac", calibration_size=C, seed=1
        )
        cc.learn_many(X[:C], y[:C])
        sets = cc.predict_learn_many(X[C:], y[C:], alpha=0.1)[2]
        sizes[name], covs[name] = sets.sum(axis=1).mean(), covered(sets, y[C:], cc.classes_).mean()
    assert sizes["both"] < sizes["first only"] - 0.1
    for c in covs.values():
        assert c >= 0.9 - binomial_tol(0.1, N)


# --- adaptive ------------------------------------------------------------------------------------
def drifting(n, seed):
    """:func:`gaussian_stream` with the labels rotated (a -> b -> c -> a) in the 2nd and 4th
    quarters: the fixed oracle is then badly wrong, and a FIFO calibration set lags."""
    X, y = gaussian_stream(n, seed)
    rot = {"a": "b", "b": "c", "c": "a"}
    swap = (np.arange(n) // (n // 4)) % 2 == 1
    return X, np.array([rot[v] if s else v for v, s in zip(y, swap, strict=True)], dtype=object)


@pytest.mark.parametrize("method", ["aci", "pid"])
def test_adaptive_long_run_miss_rate_on_a_drifting_stream(method):
    N = 20_000
    X, y = drifting(N, seed=11)
    base = sf.ConformalClassifier(
        BayesOracle(), conformity_score="aps", calibration_size=4000, seed=1
    )
    ad = sf.AdaptiveConformalClassifier(base, alphas=0.1, method=method)
    plain = base.clone()
    miss_ad, miss_plain = [], []
    for s in range(0, N, 1000):
        sl = slice(s, s + 1000)
        _, _, sets = ad.predict_learn_many(X[sl], y[sl], alpha=0.1)
        miss_ad.append(~covered(sets, y[sl], ad.classes_))
        _, _, sets = plain.predict_learn_many(X[sl], y[sl], alpha=0.1)
        miss_plain.append(~covered(sets, y[sl], plain.classes_))
    mer, mer_plain = np.concatenate(miss_ad).mean(), np.concatenate(miss_plain).mean()
    bound = ad.long_run_bound(N)[0.1]
    assert abs(mer - 0.1) <= bound, (mer, bound)
    assert mer_plain > 0.1 + 0.03  # the stream defeats plain conformal sets (0.14)
    if method == "aci":
        assert bound < 0.01


def test_adaptive_batch_equals_row_by_row():
    X, y = drifting(1200, seed=12)
    base = sf.ConformalClassifier(
        BayesOracle(), conformity_score="lac", calibration_size=200, seed=1
    )
    a = sf.AdaptiveConformalClassifier(base, alphas=[0.1, 0.3], gamma=0.02)
    a.learn_many(X[:50], y[:50])  # the oracle reports the classes it has seen: all three
    b = copy.deepcopy(a)
    X, y = X[50:], y[50:]
    rows = []
    for row, t in zip(X, y, strict=True):
        x = dict(enumerate(row))
        rows.append([set(s) for s in a.predict_set_one(x, alpha=[0.1, 0.3])])
        a.learn_one(x, t)
    _, _, sets = b.predict_learn_many(X, y, alpha=[0.1, 0.3])
    cols = np.array(b.classes_, dtype=object)
    for i in (0, 1, 5, 100, 549, 550, 1149):
        assert [set(cols[sets[i, j]]) for j in range(2)] == rows[i], i
    assert a.alpha_t == b.alpha_t
    assert np.all(sets[:, 0] >= sets[:, 1])  # nested


# --- refused calls and persistence ---------------------------------------------------------------
def fitted(cls=sf.ConformalClassifier):
    X, y = gaussian_stream(400, seed=13)
    m = sf.ConformalClassifier(BayesOracle(), calibration_size=100, seed=1)
    m = m if cls is sf.ConformalClassifier else sf.AdaptiveConformalClassifier(m, gamma=0.01)
    m.learn_many(X[:300], y[:300])
    return m, X, y


@pytest.mark.parametrize("cls", [sf.ConformalClassifier, sf.AdaptiveConformalClassifier])
def test_refused_calls_leave_the_model_unchanged(cls):
    m, X, y = fitted(cls)
    before = pickle.dumps(m)
    bad = [
        (ValueError, lambda: m.predict_sets(X, alpha=1.5)),
        (ValueError, lambda: m.predict_learn_many(X[:5], y[:5], alpha=0.0)),
        (TypeError, lambda: m.predict_set_one(dict(enumerate(X[0])), alpha="0.1")),
        (ValueError, lambda: m.learn_many(X[:5], y[:4])),
        (ValueError, lambda: m.learn_many(X[:3], ["a", None, "b"])),
        (ValueError, lambda: m.learn_many(X[:3], np.array([1.0, np.nan, 2.0]))),
        (TypeError, lambda: m.learn_many(X[:2], [["a"], "b"])),
        (ValueError, lambda: m.learn_many(X[:5, :1], y[:5])),  # the model refuses the width
        (ValueError, lambda: m.learn_one(dict(enumerate(X[0])), None)),
    ]
    for err, call in bad:
        with pytest.raises(err):
            call()
        assert pickle.dumps(m) == before


@pytest.mark.parametrize(
    "params",
    [{"conformity_score": "top-k"}, {"calibration_size": 0}, {"penalty": -1.0}, {"k_reg": 1.5},
     {"seed": -1}, {"randomized": "yes"}, {"model": "tree"}],
)  # fmt: skip
def test_bad_parameters_are_refused_when_learning_starts(params):
    X, y = gaussian_stream(10, seed=14)
    m = sf.ConformalClassifier(**{"model": BayesOracle(), **params})
    with pytest.raises((ValueError, TypeError)):
        m.learn_many(X, y)
    assert m.n_seen == 0 and m.classes_ == []


@pytest.mark.parametrize("cls", [sf.ConformalClassifier, sf.AdaptiveConformalClassifier])
def test_pickle_and_deepcopy_round_trip(cls):
    m, X, y = fitted(cls)
    for other in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert np.array_equal(other.predict_sets(X, [0.1, 0.2]), m.predict_sets(X, [0.1, 0.2]))
        a = other.predict_learn_many(X[300:], y[300:], alpha=0.1)[2]
        b = copy.deepcopy(m).predict_learn_many(X[300:], y[300:], alpha=0.1)[2]
        assert np.array_equal(a, b)


def test_save_load_round_trip_unfitted_and_foreign_models_refused(tmp_path):
    m = sf.ConformalClassifier(conformity_score="raps", penalty=0.1, calibration_size=50, seed=3)
    sf.save(m, tmp_path / "u.sfm")
    back = sf.load(tmp_path / "u.sfm")
    assert type(back) is sf.ConformalClassifier and back.get_params() == m.get_params()
    fit, _, _ = fitted()
    with pytest.raises(TypeError, match="model"):  # a model from outside streamforest
        sf.save(fit, tmp_path / "f.sfm")


@pytest.mark.parametrize("cls", [sf.ConformalClassifier, sf.AdaptiveConformalClassifier])
def test_save_load_round_trip_over_a_streamforest_classifier(cls, tmp_path):
    tree_cls = getattr(sf, "HoeffdingTreeClassifier", None)
    if tree_cls is None:
        pytest.skip("streamforest.HoeffdingTreeClassifier is not in this build")
    X, y = gaussian_stream(1500, seed=15)
    m = sf.ConformalClassifier(tree_cls(), calibration_size=200, seed=2)
    m = m if cls is sf.ConformalClassifier else sf.AdaptiveConformalClassifier(m)
    m.learn_many(X[:1000], y[:1000])
    sf.save(m, tmp_path / "m.sfm")
    back = sf.load(tmp_path / "m.sfm")
    assert np.array_equal(back.predict_sets(X[1000:], [0.1, 0.05]),
                          m.predict_sets(X[1000:], [0.1, 0.05]))  # fmt: skip
    a = back.predict_learn_many(X[1000:], y[1000:], alpha=0.1)[2]
    b = m.predict_learn_many(X[1000:], y[1000:], alpha=0.1)[2]
    assert np.array_equal(a, b)


def test_scikit_learn_api_fit_and_accuracy_score():
    X, y = gaussian_stream(800, seed=16)
    m = sf.ConformalClassifier(BayesOracle(), calibration_size=100, seed=1)
    m.learn_many(X[:100], y[:100])
    m.fit(X[100:], y[100:])  # forgets, then learns
    assert m.n_seen == 700 and m.__sklearn_tags__().estimator_type == "classifier"
    assert m.score(X, y) == pytest.approx(np.mean(m.predict(X) == y))
    assert m.score(X, y) > 0.6  # the Bayes classifier of this stream is about 0.7 accurate
    ad = sf.AdaptiveConformalClassifier(m.clone()).fit(X, y)
    assert ad.score(X, y) == m.score(X, y) and not hasattr(ad, "predict_interval")


def test_score_is_the_classifiers_accuracy_with_any_labels_and_checked_weights():
    """The wrapper's ``score`` is its model's: tuple labels compare as labels (a numpy scalar
    against a tuple used to broadcast and fail), ``y`` may be a column, and the weights are
    checked as everywhere (found by the classifier fuzzing)."""
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    y = (X[:, 0] > 0.5).astype(int)
    m = sf.ConformalClassifier(sf.ACTSERClassifier(grace_period=50, seed=0), seed=0)
    m.learn_many(X, y)
    inner = m.model_
    for labels in ([0, (1, "x")] * 50, y[:100].reshape(-1, 1)):
        assert m.score(X[:100], labels) == inner.score(X[:100], labels)
    w = rng.random(100)
    assert m.score(X[:100], y[:100], w) == inner.score(X[:100], y[:100], w)
    hits = (m.predict(X[:100]) == y[:100]).astype(float)
    assert m.score(X[:100], y[:100], w) == pytest.approx(np.sum(w * hits) / np.sum(w))
    for bad in (-w, np.full(100, np.nan), w[:50]):
        with pytest.raises(ValueError, match="weight|w"):
            m.score(X[:100], y[:100], bad)
