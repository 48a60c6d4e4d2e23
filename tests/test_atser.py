"""ATSER (thesis ch. 4): the extremely randomised split rule, its ensembles, and both as a tree
kind of the engine (interval methods, persistence, per-example == batch)."""

from __future__ import annotations

import numpy as np
import pytest

import streamforest as sf
from streamforest import streams
from streamforest.tree_kinds import state

from .conftest import trees_bytes


def friedman(n, seed=0):
    return streams.Friedman(function=1, n=n, seed=seed).arrays()


def root_leaf(model):
    st = model.state_
    return st, int(st.nd_leaf[0])


# --- the split rule, checked against a direct computation ----------------------------------------
def test_candidates_and_side_statistics_match_a_direct_computation():
    rng = np.random.default_rng(3)
    n, m_min = 150, 10
    X = rng.normal(size=(n, 4))
    X[rng.random((n, 4)) < 0.1] = np.nan  # missing values stay out of both sides
    y = rng.normal(size=n) * 3 + 2
    model = sf.ATSERRegressor(grace_period=10_000, m_min=m_min, seed=7).learn_many(X, y)
    st, leaf = root_leaf(model)
    assert st.ints[state.I_NSPLITS] == 0 and st.lf_nexamples[leaf] == m_min
    for j in range(4):
        xj = X[:, j]
        first = xj[:m_min][~np.isnan(xj[:m_min])]
        thr = st.lf_candidate[leaf, j, state.XC_THR]
        # stage 1: uniform between the smallest and largest value of the first m_min examples
        assert first.min() <= thr < first.max()
        # stage 2: every example (buffered ones replayed) on the side its value falls
        left = ~np.isnan(xj) & (xj <= thr)
        right = ~np.isnan(xj) & (xj > thr)
        for side, (cw, chi, clo, cm2) in (
            (left, (state.XC_LW, state.XC_LHI, state.XC_LLO, state.XC_LM2)),
            (right, (state.XC_RW, state.XC_RHI, state.XC_RLO, state.XC_RM2)),
        ):
            ys = y[side]
            assert st.lf_candidate[leaf, j, cw] == pytest.approx(side.sum())
            mean = st.lf_candidate[leaf, j, chi] + st.lf_candidate[leaf, j, clo]
            assert mean == pytest.approx(ys.mean(), rel=1e-12)
            assert st.lf_candidate[leaf, j, cm2] == pytest.approx(
                ((ys - ys.mean()) ** 2).sum(), rel=1e-9
            )


def test_thresholds_are_random_across_seeds():
    X, y = friedman(50)
    thr = []
    for seed in range(20):
        st, leaf = root_leaf(sf.ATSERRegressor(grace_period=10_000, seed=seed).learn_many(X, y))
        thr.append(st.lf_candidate[leaf, 0, state.XC_THR])
    assert len(set(thr)) == 20
    lo, hi = X[:10, 0].min(), X[:10, 0].max()
    # uniform on [lo, hi): the mean of 20 draws is within 4 standard errors of the centre
    assert abs(np.mean(thr) - (lo + hi) / 2) < 4 * (hi - lo) / np.sqrt(12 * 20)


def test_splits_on_the_only_informative_feature():
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.uniform(size=(n, 5))
    y = 10.0 * X[:, 3] + rng.normal(scale=0.1, size=n)
    model = sf.ATSERRegressor(seed=1).learn_many(X, y)
    st = model.state_
    assert st.ints[state.I_NSPLITS] >= 3
    assert st.nd_feat[0] == 3  # the root split: VR of x3 is far above the others'
    split = st.nd_feat[: st.ints[state.I_NNODES]] >= 0
    assert (st.nd_feat[: st.ints[state.I_NNODES]][split] == 3).mean() > 0.8


def test_learns_a_concept_of_a_nominal_feature_only():
    """y depends on the category alone; a numeric-only tree sees nothing (the nominal feature is
    the only informative one), ATSER's random category sides separate it."""
    rng = np.random.default_rng(5)
    cats = [f"c{i}" for i in range(12)]
    effect = {c: float(v) for c, v in zip(cats, rng.normal(scale=5, size=12), strict=True)}
    n = 20_000
    cs = rng.choice(cats, n)
    noise = rng.uniform(size=n)
    y = np.array([effect[c] for c in cs]) + rng.normal(scale=0.5, size=n)
    model = sf.ATSERRegressor(leaf_model="mean", seed=2)
    pred = np.empty(n)
    for i in range(n):
        x = {"cat": cs[i], "u": noise[i]}
        pred[i] = model.predict_one(x)
        model.learn_one(x, y[i])
    late = slice(n - 5000, n)
    mae = np.abs(pred[late] - y[late]).mean()
    spread = np.abs(y[late] - y[late].mean()).mean()
    assert mae < 0.2 * spread  # the target's own spread is ~4: ~0.4 is the noise floor
    # a category first seen after the splits still gets a prediction (a random side), not an error
    assert np.isfinite(model.predict_one({"cat": "never-seen", "u": 0.5}))


def test_nominal_columns_of_arrays():
    rng = np.random.default_rng(1)
    n = 8000
    code = rng.integers(0, 6, n).astype(float)
    X = np.column_stack([code, rng.uniform(size=n)])
    y = np.where(np.isin(code, [0, 2, 3]), 4.0, -4.0) + rng.normal(scale=0.3, size=n)
    model = sf.ATSERRegressor(nominal_features=(0,), leaf_model="mean", seed=3)
    p = model.predict_learn_many(X, y)
    assert np.abs(p[-2000:] - y[-2000:]).mean() < 0.6


# --- ensembles ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,rate", [("seeds", 1.0), ("rforest", 1.0), ("obag", 3.0)])
def test_ensemble_members_see_the_weights_of_their_mode(mode, rate):
    X, y = friedman(3000, seed=2)
    model = sf.ATSEREnsembleRegressor(mode=mode, n_members=6, grace_period=10**9, seed=4)
    model.learn_many(X, y)
    e = model.engine_
    weights = np.array([e.state(t).lf_stat[:, state.S_W].sum() for t in range(6)])
    if rate == 1.0:  # every member learns every example with weight 1
        assert (weights == len(y)).all()
    else:  # Poisson(3): mean weight 3, sd sqrt(3 / n) per example
        assert abs(weights.mean() / len(y) - 3.0) < 4 * np.sqrt(3.0 / (6 * len(y)))


def test_rforest_draws_candidates_for_a_subset_of_features():
    X, y = friedman(2000, seed=3)  # 10 features: 'sqrt' observes floor(sqrt(10)) + 1 = 4
    model = sf.ATSEREnsembleRegressor(mode="rforest", n_members=3, grace_period=10**9, seed=1)
    model.learn_many(X, y)
    for t in range(3):
        st = model.engine_.state(t)
        leaf = int(st.nd_leaf[0])
        assert np.isfinite(st.lf_candidate[leaf, :10, state.XC_THR]).sum() == 4


def test_ensemble_beats_a_single_tree_and_members_differ():
    X, y = friedman(30_000, seed=4)
    single = sf.ATSERRegressor(seed=1).predict_learn_many(X, y)
    ens = sf.ATSEREnsembleRegressor(mode="seeds", n_members=5, seed=1)
    p = ens.predict_learn_many(X, y)
    late = slice(20_000, None)
    assert np.abs(p[late] - y[late]).mean() < 0.95 * np.abs(single[late] - y[late]).mean()
    P = ens.tree_predictions(X[:200])
    assert np.unique(P.round(9), axis=1).shape[1] == 5


@pytest.mark.parametrize(
    "make",
    [
        lambda: sf.ATSERRegressor(grace_period=50, seed=1),
        lambda: sf.ATSEREnsembleRegressor(mode="obag", n_members=3, grace_period=50, seed=2),
        lambda: sf.ATSEREnsembleRegressor(
            mode="seeds", n_members=3, grace_period=50, seed=2, drift_threshold=5.0
        ),  # fmt: skip
    ],
)
def test_per_example_equals_batch(make):
    X, y = friedman(3000, seed=5)
    y = y.copy()
    y[1500:] = -2 * y[1500:]  # a change, so that detectors may fire
    a, b = make(), make()
    pa = np.empty(len(y))
    for i, r in enumerate(X):
        x = dict(enumerate(r))
        pa[i] = a.predict_one(x)
        a.learn_one(x, y[i])
    pb = b.predict_learn_many(X, y)
    np.testing.assert_array_equal(pa[1:], pb[1:])
    np.testing.assert_array_equal(a.predict(X[:300]), b.predict(X[:300]))


# --- under the interval methods -------------------------------------------------------------------
@pytest.mark.parametrize("method", ["qrf", "cpa"])
def test_interval_methods_over_an_atser_ensemble_cover(method):
    X, y = friedman(8000, seed=6)
    forest = sf.ATSEREnsembleRegressor(mode="obag", n_members=6, seed=3)
    if method == "qrf":
        model = sf.OnlineQRF(forest=forest, seed=1)
    else:
        model = sf.CPApproximate(forest=forest, calibration_size=500, seed=1)
    model.learn_many(X[:5000], y[:5000])
    lo, hi = model.predict_interval(X[5000:], alpha=0.1).T
    miss = np.mean((y[5000:] < lo) | (y[5000:] > hi))
    assert 0.02 < miss < 0.18  # alpha = 0.1 on 3000 i.i.d. rows
    assert np.all(lo <= hi)


# --- change adaptation at split nodes (alternate subtrees) ---------------------------------------
def permuted_friedman(n, change, seed):
    """Friedman #1 whose concept is permuted at ``change`` (the thesis' abrupt drift)."""
    X, _ = friedman(n, seed=seed)
    rng = np.random.default_rng(seed + 100)

    def f(A):
        return (10 * np.sin(np.pi * A[:, 0] * A[:, 1]) + 20 * (A[:, 2] - 0.5) ** 2
                + 10 * A[:, 3] + 5 * A[:, 4])  # fmt: skip

    y = f(X) + rng.normal(size=n)
    y[change:] = f(X[change:][:, [3, 4, 1, 0, 2]]) + rng.normal(size=n - change)
    return X, y


def tree_invariants(model):
    """Every live node is reachable once (from the root or an alternate's root), leaf slots and
    nodes agree, counts match the lists."""
    st = model.state_
    seen = set()
    stack = [(0, 0)]
    live_leaves = 0
    while stack:
        n, alt = stack.pop()
        assert n not in seen
        seen.add(n)
        assert st.nd_isalt[n] == alt
        if st.nd_alt[n] >= 0:
            assert alt == 0  # no alternate inside an alternate
            stack.append((int(st.nd_alt[n]), 1))
        if st.nd_feat[n] < 0:
            leaf = int(st.nd_leaf[n])
            assert st.lf_node[leaf] == n
            live_leaves += 1
        else:
            stack += [(int(st.nd_left[n]), alt), (int(st.nd_right[n]), alt)]
    assert len(seen) == st.ints[state.I_NNODES] - st.ints[state.I_NODE_NFREE]
    assert (
        live_leaves
        == st.ints[state.I_NLEAVES]
        == (st.lf_node[: st.ints[state.I_LEAF_HW]] >= 0).sum()
    )
    free, f = 0, st.ints[state.I_NODE_FREE]
    while f >= 0:
        assert f not in seen
        free += 1
        f = int(st.nd_left[f])
    assert free == st.ints[state.I_NODE_NFREE]
    alts = sum(1 for n in seen if st.nd_alt[n] >= 0)
    assert alts == st.ints[state.I_NALTS] == model.alternate_stats["live"]


@pytest.mark.parametrize("cls", [sf.HoeffdingTreeRegressor, sf.ATSERRegressor])
def test_alternate_subtrees_replace_stale_ones_after_an_abrupt_drift(cls):
    X, y = permuted_friedman(40_000, 20_000, seed=1)
    adapted = cls(drift_detection=True, seed=1)
    plain = cls(drift_detection=False, seed=1)
    pa = adapted.predict_learn_many(X, y)
    pp = plain.predict_learn_many(X, y)
    stats = adapted.alternate_stats
    assert stats["adopted"] >= 1 and stats["started"] >= stats["adopted"] + stats["discarded"]
    after = slice(20_000, 30_000)
    assert np.abs(pa[after] - y[after]).mean() < 0.95 * np.abs(pp[after] - y[after]).mean()
    tree_invariants(adapted)


def test_alternates_rarely_start_on_a_stationary_stream():
    X, y = friedman(40_000, seed=2)
    started = []
    for seed in range(3):
        m = sf.ATSERRegressor(seed=seed).learn_many(X, y)
        started.append(m.alternate_stats["started"])
        tree_invariants(m)
    assert np.mean(started) <= 3  # false alarms per 40k rows, over ~100 split nodes


def test_adaptation_keeps_per_example_equal_to_batch_and_round_trips():
    X, y = permuted_friedman(12_000, 4_000, seed=3)
    make = lambda: sf.ATSERRegressor(grace_period=50, alt_period=50, ph_threshold=10.0, seed=4)  # noqa: E731
    a, b = make(), make()
    for i, r in enumerate(X):
        a.learn_one(dict(enumerate(r)), y[i])
    b.learn_many(X, y)
    assert a.alternate_stats == b.alternate_stats and b.alternate_stats["adopted"] >= 1
    np.testing.assert_array_equal(a.predict(X[:500]), b.predict(X[:500]))
    tree_invariants(b)
    c = __import__("pickle").loads(__import__("pickle").dumps(b))
    np.testing.assert_array_equal(c.predict(X[:500]), b.predict(X[:500]))


def test_cpexact_refuses_trees_with_alternates():
    with pytest.raises(ValueError, match="drift_detection"):
        sf.CPExact(forest=sf.ATSEREnsembleRegressor(mode="obag", n_members=2)).learn_many(
            *friedman(100)
        )


def test_heavy_sample_weights_do_not_blow_up_linear_leaves():
    """With Poisson(3)-like weights a split side can hold two examples of weight 3 and a tiny
    spread; a linear model rescaled to it multiplied the parent's slopes as the spread recovered
    (errors 5x the target's range, which also fired the drift detectors of ATSER-OBag)."""
    X, y = streams.Friedman(function=1, n=300_000, seed=3).arrays()
    e = np.abs(sf.ATSERRegressor(seed=3).predict_learn_many(X, y, w=np.full(len(y), 3.0)) - y)
    assert e.max() < 30.0  # the target spans about 36; the noise sd is 1


def test_ensemble_default_budget_is_the_forests_and_binds():
    """The ensembles' default memory budget is the forest's bounded one (256 MiB), and a budget
    holds: with 1 MiB for 3 members the trees stop growing at their caps on a stream that keeps
    splitting, and ``memory_bytes`` stays within it."""
    default = sf.ATSEREnsembleRegressor().max_memory_mb
    assert default == sf.OnlineForestRegressor().max_memory_mb and default <= 512
    assert f"{default:g}" in sf.ATSEREnsembleRegressor.__doc__
    model = sf.ATSEREnsembleRegressor(mode="obag", n_members=3, max_memory_mb=1.0, seed=0)
    X, y = friedman(60_000, seed=4)
    for i in range(0, len(y), 5000):
        model.learn_many(X[i : i + 5000], y[i : i + 5000])
        assert trees_bytes(model) <= 2**20
    e = model.engine_
    assert all(e.state(t).ints[state.I_FROZEN] for t in range(3))  # the budget was binding
