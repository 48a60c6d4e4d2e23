"""The compiled core's OnlineQRF passes (``streamforest._core.quantile``): the leaves' KLL
sketches copied per row, merged across trees, queried for quantiles and highest-density
intervals.

A record's copies are the leaves' sketches the rows reach; the merged quantile is the weighted
quantile of the union of those leaves' retained items and the highest-density interval the
shortest interval of that union holding the mass (both in numpy); the chunked prequential pass
gives the row-by-row result; edge cases (no data, one item, q at 0 and 1); the bindings refuse
what they would overrun."""

import numpy as np
import pytest

import streamforest as sf
from streamforest import _core
from streamforest.sketches import kll

CQ = _core.quantile
LVW = kll.LV_WIDTH


# ------------------------------------------------------------------------------------------------
# data and models
def stream(n, seed=0, nan=0.03):
    """A heteroscedastic Friedman-like stream on 5 features, NaN at rate ``nan``."""
    r = np.random.default_rng(seed)
    X = r.random((n, 5))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    y = y + (0.2 + 3 * X[:, 4]) * r.standard_normal(n)
    if nan:
        X[r.random((n, 5)) < nan] = np.nan
    return X, y


def _observers():
    return sf.OnlineForestRegressor(
        n_trees=4, tree=sf.HoeffdingTreeRegressor(grace_period=40), seed=1
    )


def _atser():
    return sf.OnlineForestRegressor(
        n_trees=3,
        tree=sf.ATSERRegressor(grace_period=30, m_min=5, ph_threshold=8.0, alt_period=20),
        seed=2,
    )


def _aborf():
    return sf.ABORFRegressor(n_trees=3, depth=4, seed=3)


CONFIGS = {
    # name: OnlineQRF factory
    "observers-k16-mein-equal": lambda: sf.OnlineQRF(forest=_observers(), k=16),
    "observers-k200-paper-hdi-parent": lambda: sf.OnlineQRF(
        forest=_observers(), weighting="paper", interval="hdi", split_sketch="parent"
    ),
    "atser-k24-mein-hdi-parent": lambda: sf.OnlineQRF(
        forest=_atser(), k=24, interval="hdi", split_sketch="parent"
    ),
    "atser-k200-paper-equal": lambda: sf.OnlineQRF(forest=_atser(), weighting="paper"),
    "aborf-k16-paper-equal": lambda: sf.OnlineQRF(forest=_aborf(), k=16, weighting="paper"),
}

QS = [0.0, 1e-12, 0.01, 0.25, 0.5, 0.5 + 1e-12, 0.9, 0.999, 1.0]


def same_bits(a, b) -> bool:
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return np.array_equal(a.view(np.uint8), b.view(np.uint8))


def arena_arrays(m):
    e = m.forest_.engine_
    out = list(e.arena) + [e.rng, e.created, e.n_resets, e.drift_counts]
    if e.bg_on.any():
        out += list(e.bg)
    return out


def assert_same_models(ma, mb, what=""):
    A, B = arena_arrays(ma), arena_arrays(mb)
    assert len(A) == len(B), what
    for k, (a, b) in enumerate(zip(A, B, strict=True)):
        assert same_bits(a, b), f"{what}: array {k} differs"


def dicts(m, X):
    """The rows of ``X`` as dicts of the (fitted) model's feature names."""
    names = list(m.feature_names_in_)
    return [dict(zip(names, map(float, row), strict=True)) for row in X]


def fitted(name, n=1500, seed=4):
    m = CONFIGS[name]()
    X, y = stream(n, seed=seed)
    m.learn_many(X, y)
    return m, X, y


def _records_from_sketches(groups, k=200, seed=0):
    """Records ``(bufs, goff, glv)`` of KLL sketches of ``groups[i][t] = (values, weights)``
    (row i, tree t), laid out as the tree pass writes them."""
    T, n = len(groups[0]), len(groups)
    glv = np.zeros((T, n, LVW), np.int64)
    goff = np.zeros((T, n), np.int64)
    bufs = [[] for _ in range(T)]
    pos = [0] * T
    for i, row in enumerate(groups):
        for t, (vals, w) in enumerate(row):
            s = sf.KLLSketch(k, seed=seed + i * T + t)
            if len(vals):
                s.update_many(vals, w)
            glv[t, i] = s._lv[0]
            items = s._items[0, s._lv[0, 1] :]
            goff[t, i] = pos[t]
            bufs[t].append(items)
            pos[t] += items.shape[0]
    width = max(max(pos), 1)
    out = np.zeros((T, width))
    for t in range(T):
        if pos[t]:
            out[t, : pos[t]] = np.concatenate(bufs[t])
    return out, goff, glv


# ------------------------------------------------------------------------------------------------
# reference tests
def _leaf_items(m, Xa):
    """For each row: the retained items of every tree's leaf sketch for it, their KLL weights
    ``2**h`` and each tree's total weight, read from the trees' states (numpy)."""
    e = m.forest_.engine_
    leaves = [e.apply(t, Xa) for t in range(e.n_trees)]
    states = [e.state(t) for t in range(e.n_trees)]
    out = []
    for i in range(Xa.shape[0]):
        row = []
        for t, st in enumerate(states):
            leaf = st.nd_leaf[leaves[t][i]]
            lv = st.lf_sketch_levels[leaf]
            vals, wts = [], []
            for h in range(lv[0]):
                vals.append(st.lf_sketch[leaf, lv[h + 1] : lv[h + 2]])
                wts.append(np.full(lv[h + 2] - lv[h + 1], 2.0**h))
            row.append((np.concatenate(vals), np.concatenate(wts), int(lv[kll.LV_N])))
        out.append(row)
    return out


def _weighted_quantile(v, w, q):
    """The inclusive weighted quantile: the smallest item whose cumulative weight reaches
    ``q`` times the total (NaN when there is none)."""
    if v.shape[0] == 0:
        return np.nan
    o = np.argsort(v, kind="stable")
    cum = np.cumsum(w[o])
    j = int(np.searchsorted(cum, q * cum[-1], side="left"))
    return v[o][min(j, v.shape[0] - 1)]


def _shortest(v, w, mass):
    """The shortest ``[v_i, v_j]`` holding ``mass`` of the weight (ties: the leftmost), by
    brute force over every start."""
    if v.shape[0] == 0:
        return np.nan, np.nan
    o = np.argsort(v, kind="stable")
    v, w = v[o], w[o]
    cum = np.concatenate([[0.0], np.cumsum(w)])
    need = mass * cum[-1] * (1.0 - 1e-12)
    best = (v[-1] - v[0], v[0], v[-1])
    for i in range(v.shape[0]):
        j = int(np.searchsorted(cum, cum[i] + need, side="left"))  # first j: cum[j] - cum[i]
        if j > v.shape[0]:
            break
        j = max(j, i + 1)
        if v[j - 1] - v[i] < best[0]:
            best = (v[j - 1] - v[i], v[i], v[j - 1])
    return best[1], best[2]


@pytest.mark.parametrize("name", ["observers-k200-paper-hdi-parent", "atser-k200-paper-equal",
                                  "aborf-k16-paper-equal"])  # fmt: skip
def test_quantiles_and_hdi_of_the_union_of_leaf_sketches(name):
    """With the KLL weights (``weighting="paper"``, integer weights: every sum exact), the
    merged quantile is the weighted quantile of the union of the leaves' retained items and the
    HDI the shortest interval of that union holding the mass, computed in numpy; the batch
    query and the per-example one agree."""
    m, X, y = fitted(name, n=1200)
    X2, _ = stream(60, seed=13)
    Xa = m.encode_predict(X2)
    items = _leaf_items(m, Xa)
    qs = np.array(QS)
    masses = np.array([0.001, 0.5, 0.9, 1.0])
    bufs, goff, glv = m.sketch_records(Xa)
    n = Xa.shape[0]
    mask = np.ones(goff.shape, np.int8)
    out_q, lo, hi = np.empty((n, qs.shape[0])), np.empty((n, 4)), np.empty((n, 4))
    CQ.mixture_query(bufs, goff, glv, mask, False, qs, masses, out_q, lo, hi, 0, n)
    for i in range(n):
        v = np.concatenate([r[0] for r in items[i]])
        w = np.concatenate([r[1] for r in items[i]])
        for k, q in enumerate(qs):
            assert out_q[i, k] == _weighted_quantile(v, w, q), (i, q)
        for k, ms in enumerate(masses):
            assert (lo[i, k], hi[i, k]) == _shortest(v, w, ms), (i, ms)
        got = m.predict_quantiles_one(dicts(m, X2[i : i + 1])[0], QS)
        assert same_bits(np.array(got), out_q[i])


def test_meinshausen_weights_are_each_trees_share():
    """Meinshausen's weighting: tree t's items weigh ``2**h / (n_t * T)``; the quantile is the
    weighted quantile of the union up to the rounding of the sums (numpy sums in another
    order): it is one of the items next to the exact one."""
    m, X, y = fitted("observers-k16-mein-equal")
    X2, _ = stream(40, seed=17)
    Xa = m.encode_predict(X2)
    items = _leaf_items(m, Xa)
    qs = np.array([0.05, 0.3, 0.5, 0.77, 0.95])
    for i, row in enumerate(items):
        T = sum(1 for r in row if r[2] > 0)
        v = np.concatenate([r[0] for r in row])
        w = np.concatenate([r[1] / (r[2] * T) for r in row])
        got = np.empty(qs.shape[0])
        x = dicts(m, X2[i : i + 1])[0]
        got[:] = m.predict_quantiles_one(x, list(qs))
        for k, q in enumerate(qs):
            near = {_weighted_quantile(v, w, q * (1 + d)) for d in (-1e-9, 0.0, 1e-9)}
            assert got[k] in near, (i, q)


def test_records_are_copies_of_the_leaf_sketches():
    """``sketch_tree_pass`` without learning: each row's copy is its leaf's sketch (level row
    and items), ``P`` the trees' predictions, and nothing changes in the trees."""
    m, X, y = fitted("atser-k24-mein-hdi-parent")
    e = m.forest_.engine_
    X2, _ = stream(300, seed=19)
    Xa = np.ascontiguousarray(m.encode_predict(X2))
    before = [a.copy() for a in e.arena]
    bufs, goff, glv = m.sketch_records(Xa)
    for a, b in zip(before, e.arena, strict=True):
        assert same_bits(a, b)
    P = e.predict_trees(Xa)
    Pr = m._tree_records(Xa, np.zeros(len(Xa)), np.ones(len(Xa)), False)[0]
    assert same_bits(P, Pr)
    for t in range(e.n_trees):
        st = e.state(t)
        leaves = st.nd_leaf[e.apply(t, Xa)]
        for i, leaf in enumerate(leaves):
            lv = st.lf_sketch_levels[leaf]
            H = lv[0]
            assert np.array_equal(glv[t, i, : H + 2], lv[: H + 2])
            assert glv[t, i, kll.LV_N] == lv[kll.LV_N]
            r = st.lf_sketch.shape[1] - lv[1]
            assert np.array_equal(bufs[t, goff[t, i] : goff[t, i] + r], st.lf_sketch[leaf, lv[1] :])


def test_chunked_prequential_pass_is_row_by_row():
    """The staged pass (records taken before each tree learns each row) gives the intervals
    of the per-example loop (interval, then learn), bit for bit."""
    X, y = stream(900, seed=23)
    a, b = CONFIGS["observers-k16-mein-equal"](), CONFIGS["observers-k16-mein-equal"]()
    a.learn_many(X[:200], y[:200])
    b.learn_many(X[:200], y[:200])
    pred, got = a.predict_learn_many(X[200:], y[200:], alpha=0.1)
    D = dicts(b, X)
    ref, ref_pred = [], []
    for i in range(200, 900):
        ref_pred.append(b.predict_one(D[i]))
        ref.append(b.predict_interval_one(D[i], alpha=0.1))
        b.learn_one(D[i], float(y[i]))
    assert same_bits(np.asarray(got), np.array(ref))
    assert same_bits(np.asarray(pred), np.array(ref_pred))
    assert_same_models(a, b)


def test_edge_cases():
    """No data: NaN quantiles and HDIs (``interval_one``: infinite bounds); one item: it, at
    every level; q = 0 and 1: the smallest and largest item; mass 1: the whole range; no tree
    and empty row ranges."""
    qs, masses = np.array([0.0, 0.3, 1.0]), np.array([0.5, 1.0])
    # one tree, two rows: an empty sketch, then one item of weight 3
    rec = _records_from_sketches([[(np.zeros(0), np.zeros(0, int))], [(np.array([2.5]), [3])]])
    oq, lo, hi = np.full((2, 3), 7.0), np.full((2, 2), 7.0), np.full((2, 2), 7.0)
    CQ.mixture_query(*rec, np.ones((1, 2), np.int8), True, qs, masses, oq, lo, hi, 0, 2)
    assert np.isnan(oq[0]).all() and np.isnan(lo[0]).all() and np.isnan(hi[0]).all()
    assert (oq[1] == 2.5).all() and (lo[1] == 2.5).all() and (hi[1] == 2.5).all()
    # masked out: no data
    CQ.mixture_query(*rec, np.zeros((1, 2), np.int8), False, qs, masses, oq, lo, hi, 0, 2)
    assert np.isnan(oq).all() and np.isnan(lo).all()
    # quantiles 0 and 1, mass 1 (several trees, ties)
    r = np.random.default_rng(3)
    groups = [[(np.round(r.normal(size=50), 1), np.ones(50, int)) for _ in range(3)]]
    rec = _records_from_sketches(groups)
    oq, lo, hi = np.empty((1, 3)), np.empty((1, 2)), np.empty((1, 2))
    CQ.mixture_query(*rec, np.ones((3, 1), np.int8), False, qs, masses, oq, lo, hi, 0, 1)
    allv = np.concatenate([g[0] for g in groups[0]])
    assert oq[0, 0] == allv.min() and oq[0, 2] == allv.max()
    assert (lo[0, 1], hi[0, 1]) == (allv.min(), allv.max())
    # no tree, an empty range
    z = np.zeros((0, 1, LVW), np.int64)
    o = np.full((1, 3), 7.0)
    CQ.mixture_query(np.zeros((0, 1)), np.zeros((0, 1), np.int64), z, np.zeros((0, 1), np.int8),
                     True, qs, masses, o, o[:, :2].copy(), o[:, :2].copy(), 0, 1)  # fmt: skip
    assert np.isnan(o).all()
    o = np.full((1, 3), 7.0)
    CQ.mixture_query(*rec, np.ones((3, 1), np.int8), True, qs, masses, o, lo, hi, 1, 1)
    assert (o == 7.0).all()
    # interval_one on trees without data for the row: infinite bounds
    m = sf.OnlineQRF(forest=_observers(), k=16)
    m.learn_many(*stream(50, seed=1), w=np.zeros(50))  # trees exist, their sketches are empty
    x = dicts(m, np.full((1, 5), 0.5))[0]
    assert m.predict_interval_one(x, 0.1) == (-np.inf, np.inf)
    assert np.isnan(m.predict_quantiles_one(x, 0.5))


def test_refusals():
    """Wrong types, shapes, records, scratch and trees are refused before a kernel runs."""
    m, X, y = fitted("observers-k16-mein-equal", n=400)
    e = m.forest_.engine_
    T = e.n_trees
    Xa = np.ascontiguousarray(m.encode_predict(X[:20]))
    n = Xa.shape[0]
    bufs, goff, glv = (np.array(a) for a in m.sketch_records(Xa))
    glv = np.ascontiguousarray(glv[:, :n])
    mask = np.ones((T, n), np.int8)
    qs, ms = np.array([0.5]), np.array([0.9])
    o = lambda c=1: np.empty((n, c))  # noqa: E731

    def mq(*a, **kw):
        args = dict(bufs=bufs, goff=goff, glv=glv, mask=mask, meinshausen=True, qs=qs, masses=ms,
                    out_q=o(), out_lo=o(), out_hi=o(), r0=0, r1=n)  # fmt: skip
        args.update(kw)
        CQ.mixture_query(*args.values())

    mq()  # (the good call)
    mq(bufs=bufs.astype(np.float32))  # (an input array is converted)
    with pytest.raises(TypeError):
        mq(out_q=o().astype(np.float32))
    with pytest.raises(TypeError):
        mq(out_q=np.empty((n, 2))[:, :1])
    ro = o()
    ro.flags.writeable = False
    with pytest.raises((TypeError, ValueError)):
        mq(out_q=ro)
    with pytest.raises(ValueError, match="glv"):
        mq(glv=np.ascontiguousarray(glv[:, :, :-1]))
    with pytest.raises(ValueError, match="glv"):
        mq(r1=n + 1)
    with pytest.raises(ValueError, match="r0"):
        mq(r0=3, r1=2)
    bad = glv.copy()
    bad[0, 3, 0] = 0
    with pytest.raises(ValueError, match="level count"):
        mq(glv=bad)
    bad = glv.copy()
    bad[1, 2, 1], bad[1, 2, 2] = bad[1, 2, 2] + 1, bad[1, 2, 1]
    with pytest.raises(ValueError):
        mq(glv=bad)
    bad = goff.copy()
    bad[0, 5] = bufs.shape[1]
    if glv[0, 5, kll.LV_N] > 0:
        with pytest.raises(ValueError, match="outside bufs"):
            mq(goff=bad)
    with pytest.raises(ValueError, match="mask"):
        mq(mask=np.ones((T - 1, n), np.int8))
    with pytest.raises(ValueError, match="out_q"):
        mq(qs=np.array([0.1, 0.5]))
    with pytest.raises(ValueError, match="out_lo"):
        mq(out_hi=np.empty((n - 1, 1)))
    # sketch_tree_pass
    P, gb = np.zeros(n), np.zeros(100)
    gp, go, gl = np.zeros(1, np.int64), np.zeros(n, np.int64), np.zeros((n, LVW), np.int64)
    args = [e.arena, 0, Xa, np.zeros(n), np.ones(n), 0, False, P, gb, gp, go, gl]
    CQ.sketch_tree_pass(*args)
    for k, v, err in ((1, T, IndexError), (2, np.ascontiguousarray(Xa[:, :2]), ValueError),
                      (5, -1, ValueError), (7, np.zeros(n - 1), ValueError),
                      (9, np.array([101]), ValueError), (11, np.zeros((n, 5), np.int64),
                                                         ValueError)):  # fmt: skip
        a = list(args)
        a[k] = v
        with pytest.raises(err):
            CQ.sketch_tree_pass(*a)
    a = list(args)
    a[3], a[6] = np.zeros(n - 1), True  # learning reads y
    with pytest.raises(ValueError, match="y"):
        CQ.sketch_tree_pass(*a)
    # a forest without leaf sketches
    plain = sf.OnlineForestRegressor(n_trees=2, seed=1).learn_many(X[:100], y[:100])
    pe = plain.engine_
    with pytest.raises(ValueError, match="sketches"):
        CQ.sketch_tree_pass(pe.arena, 0, Xa, np.zeros(n), np.ones(n), 0, False, P, gb, gp, go, gl)
    s = m._qone_scratch()
    x = np.ascontiguousarray(Xa[0])
    with pytest.raises(ValueError, match="sketches"):
        CQ.query_one(pe.arena, x, True, qs, ms, np.empty(1), np.empty(1), np.empty(1), *s[0])
    # query scratch and outputs
    CQ.query_one(e.arena, x, True, qs, ms, np.empty(1), np.empty(1), np.empty(1), *s[0])
    short = list(s[0])
    short[1] = np.empty(3, np.int64)
    with pytest.raises(ValueError, match="rs"):
        CQ.query_one(e.arena, x, True, qs, ms, np.empty(1), np.empty(1), np.empty(1), *short)
    short = list(s[0])
    short[7] = np.empty(3)
    with pytest.raises(ValueError, match="sv"):
        CQ.query_one(e.arena, x, True, qs, ms, np.empty(1), np.empty(1), np.empty(1), *short)
    CQ.query_one(e.arena, x, True, qs, np.zeros(0), np.empty(1), np.empty(0), np.empty(0), *short)
    with pytest.raises(ValueError, match="out_q"):
        CQ.query_one(e.arena, x, True, qs, ms, np.empty(0), np.empty(1), np.empty(1), *s[0])
    with pytest.raises(ValueError, match="columns"):
        CQ.query_one(e.arena, x[:2].copy(), True, qs, ms, np.empty(1), np.empty(1), np.empty(1),
                     *s[0])  # fmt: skip
    # handles
    e.use_row(x)
    H = e.handle()
    one = np.empty(1)
    with pytest.raises(ValueError, match="out_q"):  # one quantile: no interval
        CQ.interval_one_h(H, s[2], True, qs, np.zeros(0), one, one, one)
    with pytest.raises(ValueError, match="out_lo"):
        CQ.interval_one_h(H, s[2], True, np.zeros(0), np.zeros(0), one, np.empty(0), one)
    with pytest.raises(ValueError, match="Q"):
        CQ.query_one_h(H, s[2][:-2].copy(), True, qs, ms, one, one, one)
    with pytest.raises(ValueError, match="H"):
        CQ.query_one_h(H[:-1].copy(), s[2], True, qs, ms, one, one, one)
    with pytest.raises(ValueError, match="P"):
        CQ.interval_one_hp(H, s[2], s[2], True)
    with pytest.raises(TypeError):
        CQ.query_one_h(H.astype(np.float64), s[2], True, qs, ms, one, one, one)
