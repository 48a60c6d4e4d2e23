"""The compiled core's classification trees (``streamforest._core``): the classification task,
its leaves (majority class, naive Bayes, adaptive naive Bayes), the Gaussian split rule of VFDT
and the classifier engine's votes.

Reference tests (they stay after numba is gone): a leaf's class weights are the counts of the
rows the tree routes to it, a tree's and a forest's class probabilities sum to 1, a majority
leaf answers its class frequencies, a naive Bayes leaf the plain-Python naive Bayes, the votes
are the majority of the trees' classes with ties broken by the mean probability, the
information gain's table is ``v log2 v``, and the bindings refuse what they would overrun.

Port tests (``test_same_as_numba_*``, transitional): the same engines and models driven by the
numba kernels and by the core's (the batch passes call by call with growth, new classes and
categories arriving, budgets, a frozen tree, the per-example paths with and without the memo,
the engine kernels and the votes called directly), every arena array compared bit for bit
after each call, with the harness of tests/test_core_tree_passes.py."""

import math
import pickle

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.engine import class_votes as NV
from streamforest.engine import dispatch
from streamforest.engine import kernels as NK
from streamforest.tree_kinds import state as S

from .test_core_tree_passes import _parent_of, assert_same, drive_pass, run_both, same_bits

CORE = _core.engine


# ------------------------------------------------------------------------------------------------
# data and models
def class_stream(n, seed=0, n_classes=4, new_class_at=None, nan=0.02, n_cats=40, drift_at=None):
    """Five numeric features (NaN at rate ``nan``), a nominal column of 4 codes (NaN too) and
    one of ``n_cats`` codes; ``n_classes`` classes from the quantiles of a score of them, only
    classes 0 and 1 before row ``new_class_at``, the classes reversed from row ``drift_at``."""
    r = np.random.default_rng(seed)
    X = r.random((n, 7))
    X[:, 5] = r.integers(0, 4, n)
    X[:, 6] = r.integers(0, n_cats, n)
    s = X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * (X[:, 5] == 2) + 0.6 * (X[:, 6] % 5 == 1)
    s = s + 0.1 * r.standard_normal(n)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1]))
    if drift_at is not None:
        y[drift_at:] = (n_classes - 1) - y[drift_at:]
    if new_class_at is not None:
        y[:new_class_at] = np.minimum(y[:new_class_at], 1)
    if nan:
        X[:, :5][r.random((n, 5)) < nan] = np.nan
        X[:, 5][r.random(n) < nan] = np.nan
    return X, y


def _ht(**kw):
    base = dict(grace_period=30, delta=0.05, tau=0.2, nominal_features=(5, 6), seed=1)
    return lambda: sf.HoeffdingTreeClassifier(**{**base, **kw})


def _actser(**kw):
    base = dict(delta=0.1, tau=0.3, nominal_features=(5, 6), seed=1)
    return lambda: sf.ACTSERClassifier(**{**base, **kw})


def _seeds(**kw):
    base = dict(mode="seeds", n_members=3, nominal_features=(5, 6), seed=4)
    return lambda: sf.ACTSEREnsembleClassifier(**{**base, **kw})


CONFIGS = {
    # name: model factory (the name says what the configuration must reach, see _check_exercised)
    "ht-mc": _ht(leaf_prediction="mc"),
    "ht-nb": _ht(leaf_prediction="nb"),
    "ht-nba": _ht(),
    "ht-nba-depth-subspace": _ht(max_depth=3, max_features=3, seed=2),
    "ht-nba-freeze": _ht(max_leaves=4),
    "ht-nba-budget": _ht(max_memory_mb=0.05),
    "actser-mc-drift": _actser(leaf_prediction="mc"),
    "actser-nb-mmin3-drift": _actser(leaf_prediction="nb", m_min=3),
    "actser-nba-fast-drift": _actser(ph_threshold=5.0, alt_period=30, seed=2),
    "actser-nba-freeze": _actser(max_leaves=5, ph_threshold=5.0, alt_period=30, seed=3),
    "actser-nba-no-alternates": _actser(drift_detection=False, seed=5),
    "actser-seeds-drift": _seeds(ph_threshold=5.0),
    "actser-rforest-drift": _seeds(mode="rforest", seed=5),
    "actser-seeds-budget-freeze": _seeds(max_memory_mb=0.15, seed=6),
}


def models_of(make, X, y):
    """Two identical models whose engine exists (made on the numba path) with the features and
    classes of ``(X, y)`` known and nothing learnt, and the encoded rows and class indices."""
    m = make()
    with dispatch.using_core(False):
        fs = m.feature_space()
        labels = m._checked_labels(y, len(y))
        Xa = fs.encode_array(X, learn=True)
        ya = m._indices_of(labels)
        m.engine_.sync()
        Xa = m.pad(Xa)
    return pickle.loads(pickle.dumps(m)), pickle.loads(pickle.dumps(m)), Xa, ya


def run_models(ma, mb, action, what=""):
    """``action(m)`` on ``ma`` with numba's kernels and on ``mb`` with the core's; the results
    and the engines compared bit for bit."""
    with dispatch.using_core(False):
        ra = action(ma)
    with dispatch.using_core(True):
        rb = action(mb)
        assert dispatch.core_runs(mb.engine_.arena.kind), what
    if isinstance(ra, np.ndarray) and ra.dtype == object:
        assert ra.tolist() == rb.tolist(), what
    elif ra is not None or rb is not None:
        assert same_bits(np.asarray(ra), np.asarray(rb)), what
    assert_same(ma.engine_, mb.engine_, what)
    return ra


def _check_exercised(name, m, decided=True):
    """The configuration reached what it is for (``decided``: alternates adopted or discarded
    too)."""
    e = m.engine_
    ints = [e.state(t).ints for t in range(e.n_trees)]
    assert sum(int(i[S.I_NSPLITS]) for i in ints) > 0
    if "freeze" in name:
        assert any(int(i[S.I_FROZEN]) for i in ints)
    if "drift" in name:  # alternates started, and adopted or discarded
        a = m.alternate_stats
        assert a["started"] > 0 and (a["adopted"] + a["discarded"] > 0 or not decided)
    if "budget" in name:  # the category room was cut: codes past it are unseen to naive Bayes
        assert all(e.state(t).lf_nominal_class_weights.shape[2] == 0 for t in range(e.n_trees))
    else:  # nominal splits, and room for the many categories
        states = [e.state(t) for t in range(e.n_trees)]
        nominal = [(st.nd_feat[: int(st.ints[S.I_NNODES])] >= 5).any() for st in states]
        assert any(nominal) or "freeze" in name
        assert states[0].lf_nominal_class_weights.shape[2] >= 40 * len(m.classes_)
    assert len(m.classes_) == 4


# ------------------------------------------------------------------------------------------------
# port tests: bit for bit against the numba kernels
@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_as_numba_batch_passes(name):
    """The engine's batch passes call by call (learn_rows with growth, predict_rows of class
    probabilities, apply_rows), then the models' batch calls as new classes and categories
    arrive (learn_many widens the trees; predict_proba and predict vote)."""
    X, y = class_stream(3000, seed=len(name), new_class_at=1000, drift_at=2200)
    n1 = 1000
    ma, mb, Xa, ya = models_of(CONFIGS[name], X[:n1], y[:n1])
    ea, eb = ma.engine_, mb.engine_
    assert_same(ea, eb, "created")
    wa = np.ones(n1)
    W = ea.bagging_weights(wa)
    eb.bagging_weights(wa)
    drive_pass(ea, eb, n1, lambda K, e, A, t, i: K.learn_rows(A, t, Xa, ya, W, i), "learn_rows",
               rows=(Xa, ya, wa))  # fmt: skip
    K = ea.state(0).lf_class_weights.shape[1]
    assert K == 2
    P = np.zeros((ea.n_trees, n1, K))
    for t in range(ea.n_trees):
        run_both(ea, eb, lambda e, K_, t=t: K_.predict_rows(e.arena, t, Xa, P) or P[t].copy(),
                 "predict_rows")  # fmt: skip
        leaf = np.zeros(n1, np.int64)
        run_both(ea, eb, lambda e, K_, t=t, o=leaf: K_.apply_rows(e.arena, t, Xa, o) or o.copy(),
                 "apply_rows")  # fmt: skip
    for a, b in ((1000, 1700), (1700, 2400), (2400, 2401), (2401, 3000)):  # (a one-row batch)
        run_models(ma, mb, lambda m, a=a, b=b: m.learn_many(X[a:b], y[a:b]) and None,
                   f"learn_many {a}")  # fmt: skip
        run_models(ma, mb, lambda m, b=b: m.predict_proba(X[b - 300 : b]), f"predict_proba {b}")
        run_models(ma, mb, lambda m, b=b: m.predict(X[b - 300 : b]), f"predict {b}")
    _check_exercised(name, ma)


def _dict(X, i):
    d = {f"x{j}": float(X[i, j]) for j in range(6)}
    if not math.isnan(X[i, 6]):
        d["x6"] = f"c{int(X[i, 6])}"  # (a string: nominal) and missing from some rows
    return d


@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_as_numba_per_example(name):
    """The per-example paths of dicts: ``predict_proba_one`` then ``learn_one`` (the votes'
    memo), ``predict_one``, ``learn_one`` alone, sample weights, new classes and categories
    arriving one example at a time, and the engine's calls of a row that is not its row
    buffer (``learn_one``)."""
    X, y = class_stream(1500, seed=5 + len(name), new_class_at=700, drift_at=1100)
    X[::37, 6] = np.nan
    ma, mb = CONFIGS[name](), CONFIGS[name]()
    for i in range(1500):
        x, yi = _dict(X, i), int(y[i])

        def step(m, x=x, yi=yi, i=i):
            out = []
            if i % 3 == 0:
                out += list(m.predict_proba_one(x).values())  # the handle's memo for learn_one
            elif i % 3 == 1:
                label = m.predict_one(x)
                out.append(-1.0 if label is None else float(label))
            m.learn_one(x, yi, 1.0 + (i % 4 == 0))
            e = m.engine_
            if i % 7 == 0 and e.fitted and yi in m._class_index:  # not the row buffer
                row = e.features.encode_dict(x, True).copy()
                e.sync()
                e.learn_one(row, float(m._class_index[yi]), 1.0)
            return np.array(out + list(e.last_predictions))

        with dispatch.using_core(False):
            ra = step(ma)
        with dispatch.using_core(True):
            rb = step(mb)
            if i == 1497:  # (the core ran the per-example entry points)
                kind = mb.engine_.arena.kind
                assert dispatch.ENTRY_POINTS[(NK.learn_one_h, kind)] is CORE.learn_one_h
                key = (NV.predict_proba_one, kind)
                assert dispatch.ENTRY_POINTS[key] is CORE.predict_proba_one
        assert same_bits(ra, rb), f"row {i}"
        if i % 50 == 0 or i == 1499:
            assert_same(ma.engine_, mb.engine_, f"row {i}")
    _check_exercised(name, ma, decided=False)


DIRECT = {
    "ht-nba": CONFIGS["ht-nba"],
    "ht-nb-budget": _ht(leaf_prediction="nb", max_memory_mb=0.05),
    "actser-seeds-drift": CONFIGS["actser-seeds-drift"],
}


@pytest.mark.parametrize("name", list(DIRECT))
def test_same_as_numba_kernels_called_directly(name):
    """The engine kernels called with their arrays: ``predict_proba_one`` then ``learn_one``
    with its memo (resuming at a tree that lacked room), ``learn_one`` without a memo,
    ``vote_rows`` of ``predict_rows``, the handle kernels, ``background_rows`` and
    ``init_tree`` of a classification arena."""
    make = DIRECT[name]
    X, y = class_stream(900, seed=3, drift_at=500)
    ma, mb, Xa, ya = models_of(make, X, y)
    ea, eb = ma.engine_, mb.engine_
    T = ea.n_trees
    K = ea.state(0).lf_class_weights.shape[1]
    for i in range(900):
        x = np.ascontiguousarray(Xa[i])
        yi = float(ya[i])
        kind = i % 4

        def step(e, Kn, x=x, yi=yi, kind=kind, i=i):
            V = NV if Kn is NK else CORE
            res = []
            memo = np.zeros((4, 0))
            if kind == 0:
                PT, mean, votes, M = np.zeros((T, 1, K)), np.zeros(K), np.zeros(K), np.zeros((4, T))
                res.append(V.predict_proba_one(e.arena, x, PT, mean, votes, M))
                res += list(PT.ravel()) + list(mean) + list(votes) + list(M.ravel())
                memo = M
            elif kind == 1 and i >= 60:
                rows = np.ascontiguousarray(Xa[i - 60 : i])
                PT = np.zeros((T, 60, K))
                for t in range(T):
                    Kn.predict_rows(e.arena, t, rows, PT)
                mean, votes, cls = np.zeros((60, K)), np.zeros(K), np.zeros(60, np.int64)
                V.vote_rows(PT, mean, votes, cls)
                res += list(PT.ravel()) + list(mean.ravel()) + list(cls)
            if kind == 3:  # through the handle of the engine's own arrays, with its memo
                e.use_row(x)
                res.append(V.predict_proba_one(e.arena, e.row_buffer, np.zeros((T, 1, K)),
                                               np.zeros(K), np.zeros(K), e.leaf_memo))  # fmt: skip
                H = e.handle()
                t0 = Kn.FRESH
                while True:
                    st = Kn.learn_one_h(H, e.arena.kind, e.bagging, yi, 1.0, t0, True)
                    res.append(st)
                    if st < 0:
                        break
                    e.make_room(st)
                    H = e.handle()
                    t0 = st
                return np.array(res + list(e.last_predictions) + list(e._wt), float)
            t0 = Kn.FRESH
            wt, Pl, dr = np.zeros(T), np.zeros(T), np.zeros(T, np.int8)
            while True:
                st = Kn.learn_one(e.arena, e.rng, e.bagging, x, yi, 1.0, wt, Pl, dr, t0, memo)
                res.append(st)
                if st < 0:
                    break
                e.make_room(st)
                t0 = st
                memo = np.zeros((4, 0)) if memo.shape[1] else memo
            return np.array(res + list(Pl) + list(wt) + list(dr), float)

        with dispatch.using_core(False):
            ra = step(ea, NK)
        with dispatch.using_core(True):
            rb = step(eb, dispatch.CORE)
        assert same_bits(ra, rb), f"row {i}"
        assert_same(ea, eb, f"row {i}")
    assert ea.state(0).ints[S.I_NSPLITS] > 0
    # a classification arena's background pass (as a tree's own) and a new tree in a row
    w = np.ones(200)
    Xb = np.ascontiguousarray(Xa[:200])
    drive_pass(ea, eb, 200, lambda Kn, e, A, t, i: Kn.background_rows(A, t, Xb, ya[:200], w, i),
               "background_rows")  # fmt: skip
    run_both(ea, eb, lambda e, Kn: Kn.init_tree(e.arena, 0), "init_tree")
    run_both(ea, eb, lambda e, Kn: Kn.lacks_room(e.arena, 0), "lacks_room")


def test_same_as_numba_votes():
    """``vote_rows`` on trees' probabilities with ties of votes and of probabilities, one
    class, one tree, no row."""
    r = np.random.default_rng(4)
    for T, n, K in ((5, 40, 3), (4, 30, 2), (1, 10, 4), (3, 8, 1), (2, 0, 3), (6, 50, 5)):
        PT = r.dirichlet(np.ones(K), size=(T, n)) if K > 1 else np.ones((T, n, 1))
        if n:
            PT[:, : n // 2] = np.round(PT[:, : n // 2] * 2) / 2  # ties everywhere
        outs = []
        for V in (NV, CORE):
            mean, votes, cls = np.zeros((n, K)), np.zeros(K), np.zeros(n, np.int64)
            V.vote_rows(np.ascontiguousarray(PT), mean, votes, cls)
            outs.append((mean, votes, cls))
        for a, b in zip(*outs, strict=True):
            assert same_bits(a, b)


# ------------------------------------------------------------------------------------------------
# reference tests: invariants that hold whatever the core
def _fit(make, X, y):
    m = make()
    with dispatch.using_core(True):
        m.learn_many(X, y)
        assert dispatch.core_runs(m.engine_.arena.kind)
    return m


@pytest.mark.parametrize("rule", ["gauss", "extra"])
def test_class_weights_are_the_counts_of_the_rows_routed_there(rule):
    """On nominal features without missing values a Gaussian tree's splits send one category
    left and every other one its leaf saw right (an extremely randomised one each category to
    its salt's side), and the children start with the class weights of their sides: every
    leaf's class weights are exactly the counts of the rows learnt since its parent was
    created that the final tree routes to it (single tree, unit weights, no alternates)."""
    r = np.random.default_rng(8)
    n = 4000
    X = np.column_stack([r.integers(0, 6, n), r.integers(0, 30, n), r.integers(0, 3, n)])
    X = X.astype(float)
    y = ((X[:, 0] == 1) + 2 * (X[:, 1] % 3 == 0) + (r.random(n) < 0.1)) % 3
    if rule == "gauss":
        make = _ht(nominal_features=(0, 1, 2), leaf_prediction="mc")
    else:
        make = _actser(nominal_features=(0, 1, 2), leaf_prediction="mc", drift_detection=False)
    m = _fit(make, X, y)
    e = m.engine_
    st = e.state(0)
    assert int(st.ints[S.I_NSPLITS]) >= 4
    Xa = m.encode_predict(X)
    leaves = e.apply(0, Xa)
    ya = np.array([m._class_index[v] for v in y.tolist()])
    parent = _parent_of(st)
    for node in np.unique(leaves):
        leaf = int(st.nd_leaf[node])
        born = int(st.nd_born[parent[int(node)]]) if int(node) in parent else 0
        rows = (leaves == node) & (np.arange(n) >= born)
        counts = np.bincount(ya[rows], minlength=len(m.classes_))
        assert (st.lf_class_weights[leaf] == counts).all(), node
        assert st.lf_stat[leaf, S.S_W] == counts.sum()
    assert any(int(node) in parent and int(st.nd_born[parent[int(node)]]) > 0 for node in leaves)
    P = m.predict_proba(X)  # majority leaves: their class frequencies, exactly
    for node in np.unique(leaves):
        c = st.lf_class_weights[int(st.nd_leaf[node])]
        assert (P[leaves == node] == c / c.sum()).all()


@pytest.mark.parametrize("leaf", ["mc", "nb", "nba"])
def test_probabilities_sum_to_one(leaf):
    X, y = class_stream(2500, seed=9)
    m = _fit(_ht(leaf_prediction=leaf), X, y)
    with dispatch.using_core(True):
        P = m.predict_proba(X)
        labels = m.predict(X)
        one = [m.predict_proba_one(_dict(X, i)) for i in range(0, 2500, 50)]
    assert P.shape == (2500, 4) and (P >= 0).all()
    assert max(abs(math.fsum(p) - 1.0) for p in P) < 1e-12
    assert max(abs(math.fsum(d.values()) - 1.0) for d in one) < 1e-12
    cls = np.array(m.classes_)[np.argmax(P, axis=1)]  # one tree: its most probable class
    assert (labels == cls).all()


def test_naive_bayes_leaf_is_naive_bayes():
    """A tree that has not split: its naive Bayes probabilities are the plain-Python naive
    Bayes of the rows (Gaussian likelihoods with the variance floor, Laplace-smoothed counts
    over the categories seen), and its majority-class probabilities the class frequencies."""
    r = np.random.default_rng(3)
    n = 300
    X = np.column_stack([r.normal(size=n), r.normal(2.0, 3.0, n), r.integers(0, 5, n)])
    y = (X[:, 0] + (X[:, 2] == 1) > 0.3).astype(int) + (X[:, 1] > 4)
    X[r.random(n) < 0.05, 0] = np.nan
    m = _fit(_ht(grace_period=10**6, leaf_prediction="nb", nominal_features=(2,)), X, y)
    assert m.n_splits == 0
    classes = m.classes_
    ya = np.array([classes.index(v) for v in y.tolist()])
    codes = m.encode_predict(X)[:, 2]
    K = len(classes)
    prior = np.bincount(ya, minlength=K) / n
    ncats = len(np.unique(codes))
    Xt = np.array([[0.1, 2.0, 1.0], [np.nan, -1.0, 3.0], [2.0, 9.0, 0.0]])
    P = m.predict_proba(Xt)
    for row, p in zip(m.encode_predict(Xt), P, strict=True):
        s = []
        for k in range(K):
            sc = math.log(prior[k])
            for j in (0, 1):
                v = X[ya == k, j]
                v = v[~np.isnan(v)]
                mean = math.fsum(v) / len(v)
                var = max(math.fsum((v - mean) ** 2) / len(v), 1e-9 * (1 + mean * mean))
                if not math.isnan(row[j]):
                    sc -= 0.5 * ((row[j] - mean) ** 2 / var + math.log(var) + math.log(2 * math.pi))
            cnt = int(np.sum(codes[ya == k] == row[2]))
            sc += math.log((cnt + 1) / (np.sum(ya == k) + ncats))
            s.append(sc)
        q = np.exp(np.array(s) - max(s))
        assert p == pytest.approx(q / q.sum(), rel=1e-9, abs=1e-12)


def test_votes_are_the_majority_of_the_trees_classes():
    """``vote_rows``: the mean of the trees' probabilities, and the class most trees find most
    probable (the first of their largest), ties of votes to the larger mean probability."""
    r = np.random.default_rng(11)
    T, n, K = 7, 200, 4
    PT = r.dirichlet(np.ones(K), size=(T, n))
    PT[:, :50] = np.round(PT[:, :50] * 3) / 3
    mean, votes, cls = np.zeros((n, K)), np.zeros(K), np.zeros(n, np.int64)
    CORE.vote_rows(PT, mean, votes, cls)
    for i in range(n):
        mu = np.array([math.fsum(PT[:, i, k] / T) for k in range(K)])
        assert mean[i] == pytest.approx(mu, rel=1e-14, abs=1e-15)
        count = np.bincount([int(np.argmax(PT[t, i])) for t in range(T)], minlength=K)
        best = max(range(K), key=lambda k: (count[k], mean[i, k], -k))
        assert cls[i] == best


def test_information_gain_table_is_v_log2_v():
    from streamforest.tree_kinds.class_splitting import XLX, XLX_N

    assert XLX_N == 4096
    for v in (1.0, 2.0, 3.0, 1000.0, 4095.0):
        assert XLX[int(v)] == v * math.log2(v)


def test_supports_classification_kinds_of_the_gauss_and_extra_rules():
    from streamforest.tree_kinds.kinds import KindTag, TreeKind

    assert ("gauss", S.SPLIT_GAUSS) in _core.tree.rules()
    gauss = TreeKind(rule="gauss", classification=True)
    assert _core.tree.supports(**gauss.__dict__)
    assert dispatch.core_runs(KindTag(gauss))
    for alternates in (False, True):  # (the extra rule always runs with alternates)
        extra = TreeKind(rule="extra", classification=True, alternates=alternates)
        assert _core.tree.supports(**extra.__dict__)
        assert dispatch.core_runs(KindTag(extra))
    for change in ({"classification": False}, {"sketch": True}, {"evidence": True}):
        assert not _core.tree.supports(**{**gauss.__dict__, **change}), change
    # the observers rule has no classification part
    assert not _core.tree.supports(**TreeKind(classification=True).__dict__)
    m = _fit(CONFIGS["ht-nba"], *class_stream(200))
    assert isinstance(m.engine_.passes, type(dispatch.CORE))


def test_bindings_refuse_what_they_would_overrun():
    X, y = class_stream(400, seed=1)
    m = _fit(CONFIGS["ht-nba"], X, y)
    e = m.engine_
    A = e.arena
    Xa = m.encode_predict(X)
    ya = np.array([m._class_index[v] for v in y.tolist()], float)
    W = np.ones((1, 400))
    K = len(m.classes_)
    bad = ya.copy()
    bad[7] = K  # not a class of the tree
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_rows(A, 0, Xa, bad, W, 0)
    bad[7] = np.nan
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_rows(A, 0, Xa, bad, W, 0)
    W0 = W.copy()
    W0[0, 7] = 0.0  # a row of weight 0 is not learnt: its label is not read
    CORE.learn_rows(A, 0, Xa[:10], bad[:10], np.ascontiguousarray(W0[:, :10]), 0)
    T = e.n_trees
    args = (e.rng, e.bagging, Xa[0], -1.0, 1.0, np.zeros(T), np.zeros(T), np.zeros(T, np.int8))
    with pytest.raises(ValueError, match="class index"):
        CORE.learn_one(A, *args, CORE.FRESH, np.zeros((4, 0)))
    with pytest.raises(ValueError):  # a memo of 3 rows: the votes need 4
        CORE.learn_one(A, e.rng, e.bagging, Xa[0], 0.0, 1.0, np.zeros(T), np.zeros(T),
                       np.zeros(T, np.int8), CORE.FRESH, np.zeros((3, T)))  # fmt: skip
    with pytest.raises(ValueError):  # class probabilities do not fit one column
        CORE.predict_rows(A, 0, Xa, np.zeros((T, 400)))
    with pytest.raises(ValueError):
        CORE.predict_rows(A, 0, Xa, np.zeros((T, 400, K - 1)))
    for f in (CORE.predict_trees, lambda A_, x, P: CORE.predict_one(A_, x, 0, P, np.zeros((4, T)))):
        with pytest.raises(ValueError, match="classification"):  # regression values only
            f(A, Xa[0], np.zeros(T))
    with pytest.raises(ValueError, match="classification"):
        CORE.predict_learn_rows(A, 0, Xa, ya, W, 0, np.zeros((T, 400)))
    PT, mean, votes, M = np.zeros((T, 1, K)), np.zeros(K), np.zeros(K), np.zeros((4, T))
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0], np.zeros((T, 1, K - 1)), mean, votes, M)
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0, :3], PT, mean, votes, M)
    with pytest.raises(ValueError):
        CORE.predict_proba_one(A, Xa[0], PT, mean[:1], votes, M)
    with pytest.raises(TypeError):
        CORE.predict_proba_one(A, Xa[0], PT.astype(np.float32), mean, votes, M)
    with pytest.raises(ValueError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((4, 3)), np.zeros(3), np.zeros(5, np.int64))
    with pytest.raises(ValueError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((5, 3)), np.zeros(2), np.zeros(5, np.int64))
    with pytest.raises(TypeError):
        CORE.vote_rows(np.zeros((2, 5, 3)), np.zeros((5, 3)), np.zeros(3), np.zeros(5, np.int32))
    for query in (lambda: _core.tree.leaf_best_cut(A, 0, 0, 0, 1.0),
                  lambda: _core.tree.fold_leaf_model(A, 0, 0),
                  lambda: _core.tree.folded_predict(A, 0, 0.0, Xa[0])):  # fmt: skip
        with pytest.raises(ValueError, match="classification tree"):
            query()
    reg = sf.HoeffdingTreeRegressor(grace_period=50, seed=0)
    reg.learn_many(np.nan_to_num(X[:, :5]), np.nan_to_num(X[:, 0]))
    with pytest.raises(ValueError, match="not a classification tree"):
        CORE.predict_proba_one(reg.engine_.arena, np.zeros(5), PT, mean, votes, M)
