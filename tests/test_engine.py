"""The forest engine: one compiled structure for all trees, per-example calls equal to batch
passes, no recompilation for a new forest shape, arena bookkeeping."""

import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest.tree_kinds import arena as AR
from streamforest.tree_kinds import rules as split_rules
from streamforest.tree_kinds import state as S

from .conftest import friedman1


def _dicts(X):
    return [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]


@pytest.mark.parametrize("drift", [None, 2.0])
def test_per_example_calls_equal_the_batch_pass(rng, drift):
    """predict_interval_one (a list of levels, and each level alone) then learn_one, row by
    row, gives exactly what one compiled prequential pass gives, also while trees grow, warn
    (background trees start and learn with their own weights, or are discarded) and drift
    (background trees swapped in)."""
    X, y = friedman1(3000, rng)
    y[1500:] += 8.0  # an abrupt change (the detectors signal often with the low threshold)
    forest = sf.OnlineForestRegressor(n_trees=5, drift_threshold=drift, seed=3,
                                      tree=sf.HoeffdingTreeRegressor(grace_period=50))  # fmt: skip
    methods = [
        (sf.CPApproximate, {"calibration_size": 300}),
        (sf.OnlineQRF, {"k": 32}),
        (sf.GaussianInterval, {}),
    ]
    for cls, kw in methods:
        a = cls(forest=forest.clone(), seed=3, **kw)
        b = cls(forest=forest.clone(), seed=3, **kw)
        pred, iv = a.predict_learn_many(X, y, alpha=[0.1, 0.3])
        one = np.empty_like(iv)
        preds = np.empty(len(y))
        for i, (d, v) in enumerate(zip(_dicts(X), y, strict=True)):
            preds[i] = b.predict_one(d)
            one[i] = b.predict_interval_one(d, alpha=[0.1, 0.3])
            for k, level in enumerate((0.1, 0.3)):  # one level: the scalar fast path
                assert b.predict_interval_one(d, alpha=level) == tuple(one[i, k]), (cls, i, k)
            b.learn_one(d, float(v))
        assert np.array_equal(pred, preds)
        assert np.array_equal(iv, one)
        if drift:
            st = a.forest_.drift_stats_
            assert st["background_swapped"] > 0 and st["background_discarded"] > 0, st
        assert a.forest_.n_resets == b.forest_.n_resets
        assert a.drift_stats_ == b.drift_stats_


@pytest.mark.parametrize(
    "make",
    [
        lambda: sf.HoeffdingTreeRegressor(grace_period=40),
        lambda: sf.OnlineForestRegressor(
            n_trees=5, drift_threshold=2.0, seed=3, tree=sf.HoeffdingTreeRegressor(grace_period=40)
        ),
        lambda: sf.ATSEREnsembleRegressor(n_members=3, seed=2),
        lambda: sf.ABORFRegressor(n_trees=3, depth=5, seed=3),
        lambda: sf.AMFRegressor(n_trees=3, seed=1),
        lambda: sf.SGBTRegressor(n_steps=5, seed=1),
    ],
    ids=["tree", "forest-drift", "atser-seeds", "aborf", "amf", "sgbt"],
)
def test_a_one_row_batch_is_one_example(rng, make):
    """``learn_many`` / ``predict`` / ``predict_learn_many`` of one row run the per-example
    calls (one compiled call, not a batch pass): exactly the results of the batch pass and of
    ``predict_one`` / ``learn_one`` on dicts, interleaved with dict calls in any order (no memo
    of a dict's encoding or prediction applies to an array row), and the caller's array is
    never written."""
    X, y = friedman1(1200, rng, p=5)
    y[600:] += 8.0
    batch, rows, dicts = make(), make(), make()
    expected = batch.predict_learn_many(X, y)
    D = [dict(enumerate(map(float, r))) for r in X]
    X_before = X.copy()
    got_rows, got_dicts = [], []
    for i in range(X.shape[0]):
        got_dicts.append(dicts.predict_one(D[i]))
        dicts.learn_one(D[i], float(y[i]))
        if i % 3 == 0:
            got_rows.append(rows.predict(X[i : i + 1])[0])
            rows.learn_many(X[i : i + 1], y[i : i + 1])
        elif i % 3 == 1:
            got_rows.append(rows.predict_one(D[i]))
            k = (7 * i) % len(D)
            rows.predict_one(D[k])  # another dict's memos, then an array row
            rows.learn_many(X[i : i + 1], y[i : i + 1])
            assert rows.predict_one(D[k]) == dicts.predict_one(D[k])  # not the array's row
        else:
            got_rows.append(rows.predict_learn_many(X[i : i + 1], y[i : i + 1])[0])
            rows.predict_one(D[i - 1])  # an array row, then a dict encoded into the buffer
    assert np.array_equal(got_rows, expected)
    assert np.array_equal(got_dicts, expected)
    assert np.array_equal(rows.predict(X[:300]), batch.predict(X[:300]))
    assert np.array_equal(X, X_before)


@pytest.mark.parametrize("method", ["cp", "cp-exact", "qrf-hdi", "cqr", "gaussian", "aci-aborf"])
def test_a_one_row_interval_batch_is_one_example(rng, method):
    """``predict_interval``, ``learn_many`` and ``predict_learn_many`` of one row run the
    method's per-example kernels (one compiled call each) with exactly the results of the batch
    pass, at one level and several, while trees grow and drift; a forest whose trees are not in
    the arena (AMF) keeps the batch pass."""
    X, y = friedman1(1200, rng, p=5)
    y[600:] += 8.0

    def forest():
        tree = sf.HoeffdingTreeRegressor(grace_period=40)
        return sf.OnlineForestRegressor(n_trees=4, drift_threshold=2.0, seed=3, tree=tree)

    make = {
        "cp": lambda: sf.CPApproximate(forest=forest(), calibration_size=200, seed=3),
        "cp-exact": lambda: sf.CPExact(
            forest=sf.OnlineForestRegressor(n_trees=4, seed=3), calibration_size=200, seed=3
        ),
        "qrf-hdi": lambda: sf.OnlineQRF(forest=forest(), k=32, interval="hdi", seed=3),
        "cqr": lambda: sf.ConformalQRF(forest=forest(), seed=3),
        "gaussian": lambda: sf.GaussianInterval(forest=forest(), seed=3),
        "aci-aborf": lambda: sf.AdaptiveConformal(
            sf.CPApproximate(
                forest=sf.ABORFRegressor(n_trees=3, depth=5, lambda_value=1.0, seed=3),
                calibration_size=200,
                seed=3,
            ),
            alphas=[0.1, 0.3],
        ),
    }[method]
    batch, rows = make(), make()
    for start in range(0, X.shape[0], 200):
        stop = start + 200
        # (not served: an adaptive wrapper learns from the intervals served, see below)
        quiet = {"log": False} if isinstance(batch, sf.AdaptiveConformal) else {}
        if start:
            for alpha in ([0.1, 0.3], 0.2):
                expected = batch.predict_interval(X[start:stop], alpha=alpha, **quiet)
                got = [
                    rows.predict_interval(X[i : i + 1], alpha=alpha, **quiet)[0]
                    for i in range(start, stop)
                ]
                assert np.array_equal(np.array(got), expected), (start, alpha)
        # learning: the batch pass against one-row predict_learn_many and learn_many calls
        pred, iv = batch.predict_learn_many(X[start:stop], y[start:stop], alpha=[0.1, 0.3])
        for i in range(start, stop):
            one = slice(i, i + 1)
            if i % 2:
                p, v = rows.predict_learn_many(X[one], y[one], alpha=[0.1, 0.3])
            else:
                p = rows.predict(X[one])
                v = rows.predict_interval(X[one], alpha=[0.1, 0.3])
                rows.learn_many(X[one], y[one])
            assert p[0] == pred[i - start] and np.array_equal(v[0], iv[i - start]), i
    amf = sf.CPApproximate(forest=sf.AMFRegressor(n_trees=3, lambda_value=1.0, seed=0), seed=0)
    amf.learn_many(X[:600], y[:600])
    one = [amf.predict_interval(X[i : i + 1], alpha=0.1)[0] for i in range(600, 620)]
    assert np.array_equal(np.array(one), amf.predict_interval(X[600:620], alpha=0.1))


def test_learning_after_a_prediction_is_learning_alone(rng):
    """A per-example prediction leaves the trees' leaves in a memo that learning the same dict
    next uses (engine.kernels): whatever comes in between (another dict predicted, a batch
    pass, a changed value, trees replaced after a drift), the model learns exactly what a model
    that never predicted learns."""
    X, y = friedman1(2400, rng)
    y[1200:] += 8.0
    forest = sf.OnlineForestRegressor(n_trees=4, drift_threshold=2.0, seed=5,
                                      tree=sf.HoeffdingTreeRegressor(grace_period=40))  # fmt: skip
    D = _dicts(X)
    for make in [
        lambda: sf.HoeffdingTreeRegressor(grace_period=40, seed=5),
        lambda: forest.clone(),
        lambda: sf.CPApproximate(forest=forest.clone(), calibration_size=200, seed=5),
        lambda: sf.GaussianInterval(forest=forest.clone(), seed=5),
        lambda: sf.OnlineQRF(forest=forest.clone(), seed=5),
    ]:
        a, b = make(), make()
        for i, (d, v) in enumerate(zip(D, y, strict=True)):
            if i % 400 == 399:  # a batch pass of the next rows, for both
                a.learn_many(X[i + 1 : i + 11], y[i + 1 : i + 11])
                b.learn_many(X[i + 1 : i + 11], y[i + 1 : i + 11])
            x = dict(d)
            if i % 4 != 3:
                a.predict_one(x)
                if hasattr(a, "predict_interval_one") and i % 2:
                    a.predict_interval_one(x, alpha=0.1)
            if i % 9 == 0:  # another dict predicted in between
                a.predict_one(D[(i * 7) % len(D)])
            if i % 11 == 0:  # a batch prediction in between
                a.predict(X[:3])
            if i % 13 == 0:  # the same dict changed in place after its prediction
                x["x3"] = float(x["x3"] + 0.25)
            if i % 400 == 200:  # a batch pass between the prediction and the learning
                a.learn_many(X[:5], y[:5])
                b.learn_many(X[:5], y[:5])
            a.learn_one(x, float(v))
            b.learn_one(dict(x), float(v))
        assert np.array_equal(a.predict(X[:300]), b.predict(X[:300]))
        fa, fb = getattr(a, "forest_", a), getattr(b, "forest_", b)
        if hasattr(fa, "drift_stats_"):
            assert fa.drift_stats_ == fb.drift_stats_
            assert fa.drift_stats_["drifts"] > 0, fa.drift_stats_
        for za, zb in zip(fa.engine_.arena[:5], fb.engine_.arena[:5], strict=True):
            assert np.array_equal(za, zb, equal_nan=True)


def test_tree_and_forest_per_example_equal_batch(rng):
    X, y = friedman1(2000, rng)
    for m in [sf.HoeffdingTreeRegressor(grace_period=50, seed=2),
              sf.OnlineForestRegressor(n_trees=4, aggregation="median", seed=2)]:  # fmt: skip
        a, b = m.clone(), m.clone()
        pa = a.predict_learn_many(X, y)
        pb = np.empty(len(y))
        for i, (d, v) in enumerate(zip(_dicts(X), y, strict=True)):
            pb[i] = b.predict_one(d)
            b.learn_one(d, float(v))
        assert np.array_equal(pa, pb)
        assert np.array_equal(a.predict(X[:100]), b.predict(X[:100]))


def test_arena_round_trip_and_views(rng):
    """A tree state stored in an arena row reads back bit-identically, in Python and in
    compiled code, and rows of different sizes coexist."""
    X, y = friedman1(3000, rng)
    small = sf.HoeffdingTreeRegressor(seed=1, leaf_quantile_k=16).learn_many(X[:300], y[:300])
    big = sf.HoeffdingTreeRegressor(grace_period=50, seed=1).learn_many(X, y)
    A = AR.empty(3)
    A = AR.store(A, 2, big.state_, big.params_)
    A = AR.store(A, 0, small.state_, small.params_)
    for t, m in [(0, small), (2, big)]:
        st = AR.load(A, t)
        for name, a, b in zip(S.TreeState._fields, st, m.state_, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert a.tobytes() == b.tobytes(), name
        assert AR.params_at(A, t) == m.params_
        assert AR.used_bytes(A, t) == S.nbytes(m.state_)
    # storing a tree over its own row (views of that row) keeps it intact
    st = S.grow(AR.load(A, 2), nodes=4 * big.state_.nd_feat.shape[0])
    A = AR.store(A, 2, st)
    assert (
        AR.load(A, 2).nd_thr[: big.n_nodes].tobytes() == big.state_.nd_thr[: big.n_nodes].tobytes()
    )


def test_forest_state_is_one_arena_and_pickles(rng):
    X, y = friedman1(2000, rng)
    f = sf.OnlineForestRegressor(n_trees=6, seed=4).learn_many(X, y)
    A = f.engine_.arena
    assert A.fa.shape[0] == A.ia.shape[0] == A.ba.shape[0] == 6
    assert f.engine_.memory_bytes == sum(AR.used_bytes(A, t) for t in range(6)) > 0
    held = f.engine_.held_bytes  # the pages the fields lie on, + the names
    assert f.memory_bytes == held + f.features_.nbytes
    assert f.engine_.memory_bytes <= held <= f.engine_.memory_bytes + 6 * 3 * 2 * AR._page_size()
    g = pickle.loads(pickle.dumps(f))
    assert np.array_equal(g.predict(X[:200]), f.predict(X[:200]))
    g.learn_many(X[:500], y[:500])
    f.learn_many(X[:500], y[:500])
    assert np.array_equal(g.predict(X[:200]), f.predict(X[:200]))


def test_models_differing_only_in_what_their_rule_always_compiles_share_one_kind(rng):
    """A split rule's ``compiled_with`` components are in every kind of the rule: an ATSER or
    ACTSER tree without alternate subtrees, or an ABORF tree with RMSProp leaves, runs the
    steps of the model that has them (each tree reads from its parameters whether it uses
    them); the observers' kinds stay exact, and so do ABORF's Bayesian leaves; the compiled
    core runs every one of them."""
    from streamforest.tree_kinds.kinds import kind_of

    def kind(m):
        A = m.engine_.arena
        kinds = {kind_of(AR.params_at(A, t)) for t in range(A.lay.shape[0])}
        assert len(kinds) == 1 and next(iter(kinds)).runs
        return next(iter(kinds))

    X, y = friedman1(300, rng)
    labels = np.where(y > np.median(y), "high", "low")
    pairs = [
        (sf.ATSERRegressor(seed=0), sf.ATSERRegressor(drift_detection=False, seed=0), y),
        (sf.ACTSERClassifier(seed=0), sf.ACTSERClassifier(drift_detection=False, seed=0), labels),
        (sf.ABORFRegressor(n_trees=2, seed=0),
         sf.ABORFRegressor(n_trees=2, weighting="equal", seed=0), y),
    ]  # fmt: skip
    for full, reduced, target in pairs:
        kinds = [kind(m.learn_many(X, target)) for m in (full, reduced)]
        assert kinds[0] == kinds[1], kinds
        rule = split_rules.RULES[kinds[0].rule]
        assert rule.compiled_with and all(getattr(kinds[0], c) for c in rule.compiled_with)
    plain = kind(sf.HoeffdingTreeRegressor(seed=0).learn_many(X, y))
    assert not (plain.alternates or plain.sketch or plain.evidence or plain.bayes)
    assert not kind(pairs[2][0]).bayes


def test_qrf_per_example_follows_set_params_and_sizes_from_its_trees(rng):
    """After ``set_params`` on a fitted OnlineQRF, ``predict_interval_one`` answers the interval
    kind now set, exactly as a model made with it (the trees do not depend on it), for one
    level and for a list; and its per-example query scratch is sized from the trees' own
    sketches, not from a ``k`` set since (a smaller one would let the compiled query write past
    its buffers)."""
    from streamforest.sketches import kll

    X, y = friedman1(2600, rng)
    D = _dicts(X)

    def fitted(**kw):
        m = sf.OnlineQRF(forest=sf.OnlineForestRegressor(n_trees=4, seed=2), seed=2, k=64, **kw)
        for d, v in zip(D[:2500], y[:2500], strict=True):
            m.learn_one(d, float(v))
        return m

    a, b = fitted(), fitted(interval="hdi")
    rows = D[2500:]
    before = [a.predict_interval_one(d, alpha=0.1) for d in rows]  # (caches the equal-tailed)
    a.predict_interval_one(rows[0], alpha=[0.1, 0.3])
    assert before != [b.predict_interval_one(d, alpha=0.1) for d in rows]
    a.set_params(interval="hdi")
    for d in rows:
        assert a.predict_interval_one(d, alpha=0.1) == b.predict_interval_one(d, alpha=0.1)
        assert a.predict_interval_one(d, [0.1, 0.3]) == b.predict_interval_one(d, [0.1, 0.3])
    a.set_params(interval="equal_tailed")
    assert [a.predict_interval_one(d, alpha=0.1) for d in rows] == before

    c = fitted(interval="hdi")
    c.set_params(k=8)
    c.predict_interval_one(rows[0], alpha=0.1)
    items = c._qone[0][-1].shape[0]  # the merged items' buffer of the query
    assert items >= c.forest_.engine_.n_trees * kll.row_capacity(64)


def test_per_example_calls_allocate_no_array(rng):
    """In steady state a per-example call allocates no array and keeps nothing: what it
    allocates for the moment (the compiled call's argument tuple, the returned float or tuple)
    stays below the call's fixed overhead plus one numpy array object (112 bytes; its data may
    come from numpy's small-buffer cache, which tracemalloc does not see), and the traced memory
    does not grow over 1700 calls."""
    import tracemalloc

    array_bytes = 112  # a numpy array object
    X, y = friedman1(4000, rng, p=10)
    D = _dicts(X)
    forest = sf.OnlineForestRegressor(n_trees=4, seed=1)
    models = [
        sf.HoeffdingTreeRegressor(seed=1),
        forest,
        sf.CPApproximate(forest=forest.clone(), calibration_size=300, seed=1),
        sf.OnlineQRF(forest=forest.clone(), k=32, seed=1),
    ]
    for m in models:
        for d, v in zip(D[:2000], y[:2000], strict=True):
            m.learn_one(d, float(v))
        rest = list(zip(D[2000:], y[2000:].tolist(), strict=True))
        calls = [  # (call, arguments, fixed overhead in bytes, measured on Python 3.11)
            (m.predict_one, [(d,) for d, _ in rest], 96),
            (m.learn_one, rest, 480 if isinstance(m, sf.CPApproximate) else 96),
        ]
        if hasattr(m, "predict_interval_one"):
            fixed = 240 if isinstance(m, sf.OnlineQRF) else 176
            calls.append((m.predict_interval_one, [(d, 0.1) for d, _ in rest], fixed))
        for call, args, fixed in calls:
            for a in args[:300]:  # also fills Python's free lists (floats, tuples)
                call(*a)
            args = args[300:]
            peaks = np.zeros(len(args), np.int64)
            tracemalloc.start()
            try:
                start = tracemalloc.get_traced_memory()[0]
                for i, a in enumerate(args):
                    tracemalloc.reset_peak()
                    before = tracemalloc.get_traced_memory()[0]
                    call(*a)
                    peaks[i] = tracemalloc.get_traced_memory()[1] - before
                grown = tracemalloc.get_traced_memory()[0] - start
            finally:
                tracemalloc.stop()
            name = f"{type(m).__name__}.{call.__name__}"
            assert np.median(peaks) < fixed + array_bytes, (name, np.median(peaks), peaks[:20])
            assert grown < 2048, (name, grown)


def test_threads_lose_nothing_while_the_arena_reallocates(rng, monkeypatch):
    """Trees on two threads while their rows keep outgrowing the arena (small grace period,
    many splits, rows lengthened little at a time): a tree that reallocates copies every row as
    it is, and a tree whose pass ran meanwhile carries its row over, so the forest equals the
    one-thread forest exactly."""
    monkeypatch.setattr(AR, "GROWTH", 1.02)
    lengthen = AR._lengthened
    reallocations = []

    def counted(arrays, need, *args, **kwargs):
        before = list(arrays)
        out = lengthen(arrays, need, *args, **kwargs)
        reallocations.append(any(a is not b for a, b in zip(before, out, strict=True)))
        return out

    monkeypatch.setattr(AR, "_lengthened", counted)
    X, y = friedman1(24_000, rng)
    tree = sf.HoeffdingTreeRegressor(grace_period=20, leaf_model="mean")
    for seed in range(4):  # the race is timing-dependent: several forests, several chances
        one = sf.OnlineForestRegressor(n_trees=8, tree=tree, seed=seed)
        two = sf.OnlineForestRegressor(n_trees=8, tree=tree, seed=seed, n_jobs=2)
        for part in np.array_split(np.arange(len(y)), 24):
            one.learn_many(X[part], y[part])
        reallocations.clear()
        for part in np.array_split(np.arange(len(y)), 24):
            two.learn_many(X[part], y[part])
        assert sum(reallocations) >= 4
        assert sum(t.n_splits for t in two.trees_) > 400
        assert np.array_equal(one.predict(X[:2000]), two.predict(X[:2000]))


def test_a_handle_packs_addresses_and_shapes():
    """A handle lists each array's address and shape (what the compiled core reads it back
    from), is rebuilt in place, and refuses arrays the core could not write through it."""
    from streamforest.engine import handle as H

    a = np.arange(6.0)
    b = np.arange(12, dtype=np.int64).reshape(3, 4)
    c = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    u = np.array([2**63 + 5], dtype=np.uint64)
    Hd = H.build((a, b, c, u))
    addr = [x.__array_interface__["data"][0] for x in (a, b, c, u)]
    assert list(Hd) == [addr[0], 6, addr[1], 3, 4, addr[2], 2, 3, 4, addr[3], 1]
    again = H.build((a, b, c, u), out=Hd)
    assert again is Hd
    with pytest.raises(TypeError):
        H.build((a[::2],))  # not contiguous
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(TypeError):
        H.build((ro,))


@pytest.mark.parametrize("kind", ["tree", "forest", "cpa", "qrf"])
def test_a_copy_learning_one_by_one_leaves_the_original_alone(rng, kind):
    """The per-example calls reach the arrays through handles (packed addresses): a deep copy,
    a pickled model, or the original, learning and predicting one example at a time, each
    changes only its own arrays, and each gives exactly what an uninterrupted model gives."""
    import copy

    X, y = friedman1(2600, rng, p=6)
    D = _dicts(X)
    make = {
        "tree": lambda: sf.HoeffdingTreeRegressor(seed=3, grace_period=50),
        "forest": lambda: sf.OnlineForestRegressor(n_trees=3, seed=3),
        "cpa": lambda: sf.CPApproximate(
            forest=sf.OnlineForestRegressor(n_trees=3, seed=3), calibration_size=200, seed=3
        ),
        "qrf": lambda: sf.OnlineQRF(forest=sf.OnlineForestRegressor(n_trees=3, seed=3), k=32),
    }[kind]
    interval = kind in ("cpa", "qrf")

    def step(m, d, v):
        out = m.predict_interval_one(d, 0.1) if interval else m.predict_one(d)
        m.learn_one(d, float(v))
        return out

    ref, m = make(), make()
    for d, v in zip(D[:1000], y[:1000], strict=True):
        step(ref, d, v)
        step(m, d, v)
    twins = [copy.deepcopy(m), pickle.loads(pickle.dumps(m))]
    frozen = [m.predict_one(d) for d in D[2400:]]
    for ahead in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):  # learn alone: m stays
        for d, v in zip(D[1000:1800], y[1000:1800], strict=True):
            step(ahead, d, v)
        assert [ahead.predict_one(d) for d in D[2400:]] != frozen
        assert [m.predict_one(d) for d in D[2400:]] == frozen
    engine = m.engine_ if kind in ("tree", "forest") else m.forest_.engine_
    before = engine.arena
    for d, v in zip(D[1000:2400], y[1000:2400], strict=True):  # the arrays grow meanwhile
        expect = step(ref, d, v)
        assert step(m, d, v) == expect
        for twin in twins:
            assert step(twin, d, v) == expect
    assert engine.arena is not before  # trees grew: the handle was rebuilt
    final = [ref.predict_one(d) for d in D[2400:]]
    for other in (m, *twins):
        assert [other.predict_one(d) for d in D[2400:]] == final
