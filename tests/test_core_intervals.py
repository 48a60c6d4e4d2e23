"""The compiled core's interval kernels that do not touch the trees (``streamforest._core.
intervals``): the sorted score sets, the online conformal controllers (ACI, PID, SF-OGD, SAOCP,
DtACI, AgACI, NExCP), NormalizedConformal's and ConformalQRF's passes.  Against definitions
(sorted lists, plain-Python replays of the controllers' update rules) and, while the numba core
is there, bit for bit against its kernels on random and edge-case inputs."""

import math

import numpy as np
import pytest

from streamforest import _core

core = _core.intervals
INF = math.inf
EXPERT_GAMMAS = 0.001 * 2.0 ** np.arange(8)
METHODS = {"sfogd": 0, "saocp": 1, "dtaci": 2, "agaci": 3, "nexcp": 4}
TH, GSQ, SMAX, STEPS, CALN, CALPOS, CLOCK = range(7)


def same_bits(a, b):
    """Equal to the bit, the sign of zero included; ints exactly.  A NaN equals a NaN whatever
    its sign and payload: which of two NaN operands an operation returns is the compiler's
    choice of operand order (numba's and GCC's differ for ``a + b`` with both NaN), and no
    result but a NaN depends on it."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == np.float64:
        nan = np.isnan(a)
        return bool(
            (nan == np.isnan(b)).all()
            and (a[~nan].view(np.uint64) == b[~nan].view(np.uint64)).all()
        )
    return bool((a == b).all())


# ------------------------------------------------------------------------------------------------
# sorted score sets
def _fill(rng, cap, n_ops, values, fns):
    """Run ``n_ops`` ring entries (insert until full, then replace the oldest) through
    ``fns = (ss_insert, ss_update)``; yields the state after each."""
    ins, upd = fns
    order = np.zeros(cap, np.int64)
    pos = np.full(cap, -1, np.int64)
    ss = np.zeros(cap)
    size, head = 0, 0
    for k in range(n_ops):
        v = values[k]
        if pos[head] >= 0:
            upd(order, pos, ss, size, v, head)
        else:
            size = ins(order, pos, ss, size, v, head)
        head = (head + 1) % cap
        yield order, pos, ss, size, head


@pytest.mark.parametrize("cap", [1, 2, 7, 50])
def test_sorted_set_is_the_sorted_ring(cap):
    rng = np.random.default_rng(cap)
    values = np.round(rng.standard_normal(300), 1)  # ties on purpose
    ring = []
    for k, (order, pos, ss, size, _) in enumerate(
        _fill(rng, cap, 300, values, (core.ss_insert, core.ss_update))
    ):
        ring.append(values[k])
        ring = ring[-cap:]
        assert size == len(ring)
        assert ss[:size].tolist() == sorted(ring)
        assert all(pos[order[j]] == j for j in range(size))
        held = ring[-size:]
        for j in range(size):  # the slot order[j] holds the j-th smallest
            slot = order[j]
            age = (k - slot) % cap if cap > 1 else 0
            assert held[len(held) - 1 - age] == ss[j]


@pytest.mark.parametrize("n", [0, 1, 2, 5, 19, 100])
def test_sorted_half_width_is_the_conformal_rank(n):
    ss = np.sort(np.random.default_rng(n).standard_normal(n + 3))
    for alpha in (1e-12, 0.01, 0.05, 0.1, 0.5, 0.9, 1 - 1e-12, 0.0, 1.0):
        r = math.ceil((n + 1) * (1 - alpha) - 1e-9)
        assert core.conformal_rank(n, alpha) == r
        expected = INF if (r > n or n == 0) else (-INF if r < 1 else ss[r - 1])
        assert core.sorted_half_width(ss, n, alpha) == expected
    assert core.sorted_half_width(ss, n, math.nan) == (INF if n == 0 else -INF)


def test_ring_slots_take_the_out_of_bag_rows():
    rng = np.random.default_rng(0)
    W = rng.integers(0, 3, (4, 50)).astype(np.float64)
    ring = np.array([5, 7], np.int64)
    slots = np.empty(50, np.int64)
    core.ring_slots(ring, W, slots)
    head, expected = 5, []
    for i in range(50):
        if (W[:, i] == 0).any():
            expected.append(head)
            head = (head + 1) % 7
        else:
            expected.append(-1)
    assert slots.tolist() == expected and ring[0] == head


def test_score_sets_refuse_what_they_would_overrun():
    order, pos, ss = np.zeros(3, np.int64), np.full(3, -1, np.int64), np.zeros(3)
    with pytest.raises(ValueError):
        core.ss_insert(order, pos, ss, 3, 1.0, 0)  # full
    with pytest.raises(ValueError):
        core.ss_insert(order, pos, ss, 0, 1.0, 3)  # no such slot
    with pytest.raises(ValueError):
        core.ss_update(order, pos, ss, 1, 1.0, 0)  # slot 0 is not held
    with pytest.raises(TypeError):
        core.ss_insert(order.astype(np.int32), pos, ss, 0, 1.0, 0)
    with pytest.raises(ValueError):
        core.sorted_half_width(ss, 4, 0.1)
    with pytest.raises(ValueError):
        core.ring_slots(np.array([0, 0], np.int64), np.zeros((2, 3)), np.zeros(3, np.int64))


# ------------------------------------------------------------------------------------------------
# the controllers: random score streams
# ------------------------------------------------------------------------------------------------
# the controllers: random score streams
def _state(method, levels, scaled=True, clip=False, scale=0.0, W=40, saocp_cap=6):
    """A controller's initial state for ``levels`` (as AdaptiveConformal makes it)."""
    R, K = levels.shape[0], EXPERT_GAMMAS.shape[0]
    if method == "aci":
        return {"alpha_t": levels.copy(), "steps": np.zeros(R, np.int64)}
    if method == "pid":
        return {"p": np.zeros(R), "isum": np.zeros(R), "steps": np.zeros(R, np.int64),
                "win": np.zeros((R, 25)), "win_n": np.zeros(R, np.int64),
                "win_pos": np.zeros(R, np.int64)}  # fmt: skip
    st = np.zeros((R, 7))
    st[:, TH] = 1.0 if scaled else 0.0
    st[:, CLOCK] = 1.0
    if method == "dtaci":
        ex = np.zeros((R, K, 2))
        ex[:, :, 0] = levels[:, None]
    elif method == "agaci":
        ex = np.zeros((R, K, 9))
        ex[:, :, 0] = levels[:, None]
    elif method == "saocp":
        ex = np.zeros((R, saocp_cap, 9))
    else:
        ex = np.zeros((R, 1, 1))
    Wc = W if method in ("dtaci", "agaci", "nexcp") else 1
    return {"st": st, "cal": np.zeros((R, Wc)), "ex": ex, "scaled": scaled, "clip": clip,
            "scale": scale}  # fmt: skip


def _record_width(method):
    K = EXPERT_GAMMAS.shape[0]
    return 5 + 2 * K if method == "dtaci" else (6 + K if method == "agaci" else 6)


def _base_levels(method, levels):
    if method != "aci":
        return levels.shape[0]
    from streamforest.intervals._adaptive_kernels import aci_plan

    return aci_plan(levels)[0].shape[0]


def _call(impl, method, s, levels, learns, pred, blo, bhi, y, mode, rec):
    """One pass of ``method`` by ``impl`` (a module with the pass functions) on state ``s``;
    returns ``(out_lo, out_hi, own_lo, own_hi)`` (``rec`` and ``s`` are updated in place)."""
    n, R = y.shape[0], levels.shape[0]
    order = np.argsort(levels, kind="stable").astype(np.int64)
    out_lo, out_hi = np.full((n, R), -7.0), np.full((n, R), -7.0)
    own_lo, own_hi = np.zeros(R), np.zeros(R)
    if method == "aci":
        from streamforest.intervals._adaptive_kernels import aci_plan

        _, idx, logit = aci_plan(levels)
        impl.aci_pass(blo, bhi, pred, y, mode, rec, idx, logit, levels, learns, 0.05,
                      s["alpha_t"], s["steps"], order, out_lo, out_hi, own_lo, own_hi)  # fmt: skip
    elif method == "pid":
        impl.pid_pass(blo, bhi, pred, y, mode, rec, levels, learns, 0.05, 0.7, 10.0, s["p"],
                      s["isum"], s["steps"], s["win"], s["win_n"], s["win_pos"], order, out_lo,
                      out_hi, own_lo, own_hi)  # fmt: skip
    else:
        K = EXPERT_GAMMAS.shape[0]
        eta = np.array([0.3 + a for a in levels])
        W = s["cal"].shape[1]
        scaled = s["scaled"]
        impl.online_pass(METHODS[method], scaled, 0.0 if scaled else -INF, 1.0 if scaled else 0.0,
                         blo, bhi, pred, y, mode, rec, levels, learns, EXPERT_GAMMAS, eta,
                         1.0 / 200, 0.01, 8.0, s["scale"], 0.99, s["clip"], s["st"], s["cal"],
                         s["ex"], order, out_lo, out_hi, own_lo, own_hi, np.empty(max(W, 1)),
                         np.empty((2, K)))  # fmt: skip
    return out_lo, out_hi, own_lo, own_hi


def _copy(s):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}


def _base(rng, n, L, edge=None):
    """Base intervals ``(pred, blo, bhi, y)`` of ``n`` rows at ``L`` levels (the j-th level's
    narrower for larger j, as ascending levels are).  ``edge="soft"``: some rows with infinite
    or NaN bounds, zero widths, targets on a bound; ``"hard"``: also NaN, infinite and huge
    targets (which leave NaN or infinite state behind)."""
    pred = rng.standard_normal(n) * 3
    y = pred + rng.standard_normal(n) * (1 + 2 * (rng.random(n) < 0.1))
    width = np.abs(rng.standard_normal(n))[:, None] * np.linspace(3.0, 0.5, L)[None, :] + 0.1
    blo, bhi = pred[:, None] - width, pred[:, None] + width
    if edge:
        k = rng.random(n)
        blo[k < 0.05], bhi[k < 0.05] = -INF, INF
        bhi[(k >= 0.05) & (k < 0.08), 0] = np.nan
        z = (k >= 0.08) & (k < 0.11)
        blo[z] = bhi[z] = pred[z, None]  # zero width
        z = (k >= 0.11) & (k < 0.14)
        y[z] = bhi[z, 0]  # on a bound
        if edge == "hard":
            y[(k >= 0.14) & (k < 0.15)] = np.nan
            y[(k >= 0.15) & (k < 0.16)] = INF
            y[(k >= 0.16) & (k < 0.17)] *= 1e300
    return pred, np.ascontiguousarray(blo), np.ascontiguousarray(bhi), y


def stream_results(impl, method, levels, state, seed, chunks=12, n=40, edge=None):
    """``method`` by ``impl`` over a random stream in chunks: prequential (mode 1), serve only
    (mode 0), then the served rows learnt from their records a chunk late (mode 2, some
    skipped: mode 3) after a chunk of random modes; returns every call's outputs and state."""
    rng = np.random.default_rng(seed)
    R = levels.shape[0]
    learns = np.ones(R, np.bool_)
    learns[-1] = R == 1  # a level that only serves (a level asked for, not tracked)
    L = _base_levels(method, levels)
    width = _record_width(method)
    out, served = [], None
    for c in range(chunks):
        pred, blo, bhi, y = _base(rng, n, L, edge)
        kind = c % 4
        if kind == 0:
            mode = np.ones(n, np.int8)
        elif kind == 1:
            mode = np.zeros(n, np.int8)
        elif kind == 2:
            mode = rng.choice(np.array([0, 1, 3], np.int8), n)
        else:  # the rows served two chunks ago, learnt late from their records
            pred, blo, bhi, y, rec0 = served
            mode = np.full(n, 2, np.int8)
            mode[rng.random(n) < 0.1] = 3
        rec = rec0 if kind == 3 else np.zeros((n, R, width))
        res = _call(impl, method, state, levels, learns, pred, blo, bhi, y, mode, rec)
        if kind == 1:
            served = (pred, blo, bhi, y, rec.copy())
        out.append([*res, rec.copy(), *(_copy(state).values())])
    return out


def _levels(edge):
    return np.array([0.1, 0.05, 1e-6, 1 - 1e-6, 0.5]) if edge else np.array([0.1, 0.2, 0.05])


def same_results(a, b):
    assert len(a) == len(b)
    for k, (ra, rb) in enumerate(zip(a, b, strict=True)):
        for j, (x, y) in enumerate(zip(ra, rb, strict=True)):
            if isinstance(x, np.ndarray):
                assert same_bits(x, y), (k, j, x, y)
            else:
                assert x == y


CONTROLLERS = ["aci", "pid", "sfogd", "saocp", "dtaci", "agaci", "nexcp"]


def _numba_module(method):
    from streamforest.intervals import _adaptive_kernels, _online_kernels

    return _adaptive_kernels if method in ("aci", "pid") else _online_kernels


@pytest.mark.parametrize("method", CONTROLLERS)
@pytest.mark.parametrize("edge", [None, "soft", "hard"])
def test_same_as_numba_controllers(method, edge):
    """Every controller, bit for bit the numba kernels' on random streams in the protocols
    (prequential, serve only, served records learnt late, skipped rows), with and without
    edge cases (levels near 0 and 1, infinite and NaN bounds and targets, zero widths)."""
    pytest.importorskip("numba")
    levels = _levels(edge)
    variants = [{}]
    if method not in ("aci", "pid"):
        variants = [{"scaled": True}, {"scaled": False}]
        if method == "dtaci":
            variants.append({"scaled": True, "clip": True})
        if method in ("sfogd", "saocp"):
            variants.append({"scaled": True, "scale": 2.0})
        if method == "saocp":
            variants.append({"scaled": False, "saocp_cap": 128})
    for k, v in enumerate(variants):
        seed = k + 10 * len(edge or "")
        a = stream_results(_numba_module(method), method, levels, _state(method, levels, **v),
                           seed, edge=edge)  # fmt: skip
        b = stream_results(core, method, levels, _state(method, levels, **v), seed, edge=edge)
        same_results(a, b)


def test_same_as_numba_aci_refuses_a_flat_ladder():
    """A level so small that its ladder's levels are clipped to the same value: both cores raise
    Python's ZeroDivisionError (numba's error model), having served the rows before."""
    pytest.importorskip("numba")
    from streamforest.intervals import _adaptive_kernels

    levels = np.array([1e-12])
    outs = []
    for impl in (_adaptive_kernels, core):
        s = _state("aci", levels)
        rng = np.random.default_rng(0)
        pred, blo, bhi, y = _base(rng, 5, _base_levels("aci", levels))
        rec = np.zeros((5, 1, 6))
        with pytest.raises(ZeroDivisionError):
            _call(impl, "aci", s, levels, np.ones(1, np.bool_), pred, blo, bhi, y,
                  np.ones(5, np.int8), rec)  # fmt: skip
        outs.append((rec, s["alpha_t"], s["steps"]))
    same_results([outs[0]], [outs[1]])


def test_same_as_numba_long_windows():
    """Windows past numba's repeated-squaring cutoff (``rho ** age``, age > 65536: a call of
    ``pow``) weigh the scores as numba does."""
    pytest.importorskip("numba")
    from streamforest.intervals import _online_kernels

    levels = np.array([0.1, 0.3])
    W = 70_000
    rng = np.random.default_rng(5)
    res = []
    for impl in (_online_kernels, core):
        s = _state("nexcp", levels, W=W)
        s["cal"][:] = np.abs(rng.standard_normal((2, W)))
        s["st"][:, CALN] = W
        s["st"][:, CALPOS] = [123, 69_999]
        rng = np.random.default_rng(5)
        pred, blo, bhi, y = _base(rng, 4, 2)
        rec = np.zeros((4, 2, 6))
        out = _call(impl, "nexcp", s, levels, np.ones(2, np.bool_), pred, blo, bhi, y,
                    np.ones(4, np.int8), rec)  # fmt: skip
        res.append([*out, rec, s["st"], s["cal"]])
        rng = np.random.default_rng(5)
    same_results([res[0]], [res[1]])


def test_controllers_refuse_what_they_would_overrun():
    levels = np.array([0.1, 0.2])
    pred, blo, bhi, y = _base(np.random.default_rng(0), 3, 2)
    learns, mode = np.ones(2, np.bool_), np.ones(3, np.int8)
    s = _state("pid", levels)
    good = dict(rec=np.zeros((3, 2, 6)))
    _call(core, "pid", s, levels, learns, pred, blo, bhi, y, mode, **good)
    with pytest.raises(ValueError):  # a record of fewer rows
        _call(core, "pid", s, levels, learns, pred, blo, bhi, y, mode, np.zeros((2, 2, 6)))
    with pytest.raises(ValueError):  # base intervals of fewer levels
        _call(core, "pid", s, levels, learns, pred, blo[:, :1], bhi, y, mode, **good)
    s["win_pos"][0] = 25  # a window position outside the window
    with pytest.raises(ValueError):
        _call(core, "pid", s, levels, learns, pred, blo, bhi, y, mode, **good)
    s = _state("saocp", levels)
    s["st"][1, CLOCK] = 0.0  # (would never halve to an odd number)
    with pytest.raises(ValueError):
        _call(core, "saocp", s, levels, learns, pred, blo, bhi, y, mode, **good)
    s = _state("dtaci", levels)
    with pytest.raises(ValueError):  # DtACI's record holds every expert's served levels
        _call(core, "dtaci", s, levels, learns, pred, blo, bhi, y, mode, **good)
    s["st"][0, CALN] = 41
    with pytest.raises(ValueError):
        _call(core, "dtaci", s, levels, learns, pred, blo, bhi, y, mode, np.zeros((3, 2, 21)))
    with pytest.raises(TypeError):  # the state's arrays are written: no silent copy
        s = _state("aci", levels)
        s["steps"] = s["steps"].astype(np.float64)
        _call(core, "aci", s, levels, learns, pred, blo, bhi, y, mode, **good)
    with pytest.raises(ValueError):  # an order naming a level that is not there
        core.aci_pass(blo, bhi, pred, y, mode, np.zeros((3, 2, 6)),
                      np.zeros((2, 2), np.int64), np.zeros((2, 2)), levels, learns, 0.1,
                      levels.copy(), np.zeros(2, np.int64), np.array([0, 2]), np.zeros((3, 2)),
                      np.zeros((3, 2)), np.zeros(2), np.zeros(2))  # fmt: skip


# ------------------------------------------------------------------------------------------------
# NormalizedConformal's pass
def _normalized_state(cap):
    return {"size": 0, "ring": np.array([0, cap], np.int64), "score": np.zeros(cap),
            "order": np.zeros(cap, np.int64), "pos": np.full(cap, -1, np.int64),
            "ss": np.zeros(cap), "cspread": np.zeros(cap), "level": np.zeros(2),
            "guard": np.zeros(2)}  # fmt: skip


def normalized_results(fn, cap, span, normalize, guard, seed, edge=False, chunks=10, n=37):
    """NormalizedConformal's pass by ``fn`` over a random stream in chunks (learning or only
    predicting); every call's outputs and state."""
    rng = np.random.default_rng(seed)
    s = _normalized_state(cap)
    alphas = np.array([0.1, 0.05, 1e-9, 1 - 1e-9])
    out = []
    for c in range(chunks):
        yhat = rng.standard_normal(n) * 2
        spread = np.abs(rng.standard_normal(n)) * (1 + c)
        y = yhat + rng.standard_normal(n) * (1 + 3 * (c >= chunks // 2))  # a drift: the guard
        if edge:
            k = rng.random(n)
            y[k < 0.05] = yhat[k < 0.05]  # zero residuals
            spread[(k > 0.05) & (k < 0.1)] = 0.0
            y[(k > 0.1) & (k < 0.12)] = np.nan
            y[(k > 0.12) & (k < 0.14)] = INF
            spread[(k > 0.14) & (k < 0.15)] = INF
        half = np.full((n, 4), -7.0)
        s["guard"][0] = 1.0 if guard else 0.0
        learn = c % 3 != 2
        s["size"] = fn(s["size"], s["ring"], s["score"], s["order"], s["pos"], s["ss"],
                       s["cspread"], s["level"], span, yhat, spread, y, learn, normalize, 0.1,
                       alphas, half, s["guard"])  # fmt: skip
        out.append([half, *_copy(s).values()])
    return out


@pytest.mark.parametrize("edge", [False, True])
def test_same_as_numba_normalized(edge):
    pytest.importorskip("numba")
    from streamforest.intervals import _normalized_kernels as NK

    for cap, span, normalize, guard in [(50, 30, True, True), (7, 0, False, False),
                                        (1, 5, True, True), (500, 30, True, True)]:  # fmt: skip
        a = normalized_results(NK.normalized_pass, cap, span, normalize, guard, cap, edge)
        b = normalized_results(core.normalized_pass, cap, span, normalize, guard, cap, edge)
        same_results(a, b)
    rng = np.random.default_rng(2)
    P = rng.standard_normal((7, 40))
    P[:, 3] = INF
    P[2, 4] = np.nan
    a, b = np.zeros(40), np.zeros(40)
    NK.tree_spread(P, a)
    core.tree_spread(P, b)
    assert same_bits(a, b)
    for row in (P[:, 0], P[:, 3], P[:, 4], P[:1, 0]):
        row = np.ascontiguousarray(row)
        assert same_bits(NK.tree_mean(row), core.tree_mean(row))
    for impl in (NK, core):
        with pytest.raises(ZeroDivisionError):
            impl.tree_mean(np.zeros(0))


def test_normalized_refuses_an_inconsistent_ring():
    s = _normalized_state(5)
    args = lambda: (s["size"], s["ring"], s["score"], s["order"], s["pos"], s["ss"],  # noqa: E731
                    s["cspread"], s["level"], 3, np.zeros(2), np.ones(2), np.ones(2), True, True,
                    0.1, np.array([0.1]), np.zeros((2, 1)), s["guard"])  # fmt: skip
    s["size"] = core.normalized_pass(*args())
    assert s["size"] == 2
    s["pos"][4] = 0  # two slots of rank 0
    with pytest.raises(ValueError):
        core.normalized_pass(*args())
    s["pos"][4] = -1
    s["ring"][0] = 5  # a head past the capacity
    with pytest.raises(ValueError):
        core.normalized_pass(*args())
    s["ring"][:] = [0, 6]  # a capacity past the arrays
    with pytest.raises(ValueError):
        core.normalized_pass(*args())


def test_same_as_numba_score_kernels():
    """The small kernels numba inlines (conformal rank, lag step, scale, score rank, the
    weighted half-width past the squaring cutoff) and the sorted sets, on edge values."""
    numba = pytest.importorskip("numba")
    from streamforest.intervals import _adaptive_kernels as AK
    from streamforest.intervals import _normalized_kernels as NK
    from streamforest.intervals import scores as SC

    @numba.njit
    def small(n, alpha, step, lag, spread, mean, ss, size, v):
        return (SC.conformal_rank(n, alpha), AK.lag_step(step, lag, AK.LAG_GAIN),
                NK.scale_of(spread, mean, 0.1, True), NK.score_rank(ss, size, v))  # fmt: skip

    rng = np.random.default_rng(3)
    ss = np.sort(np.concatenate([rng.standard_normal(30), [1.0, 1.0, INF, np.nan]]))
    odd = [0.0, -0.0, 1e-300, 1e300, INF, -INF, np.nan, 0.1, 1 - 1e-16, 1e-16, -3.0]
    for k in range(300):
        n = int(rng.integers(0, 34))
        a, b, c = (odd[int(i)] if rng.random() < 0.5 else float(rng.standard_normal())
                   for i in rng.integers(0, len(odd), 3))  # fmt: skip
        want = small(n, a, b, abs(c), a, b, ss, n, c)
        got = (core.conformal_rank(n, a), core.lag_step(b, abs(c), core.LAG_GAIN),
               core.scale_of(a, b, 0.1, True), core.score_rank(ss, n, c))  # fmt: skip
        assert same_bits(np.array(want[1:]), np.array(got[1:])) and want[0] == got[0], k
        assert same_bits(SC.sorted_half_width(ss, n, a), core.sorted_half_width(ss, n, a))
    cap = 70_000
    big = np.sort(rng.standard_normal(cap))
    order = rng.permutation(cap).astype(np.int64)
    for size, head, alpha in [(cap, 17, 0.1), (cap, 0, 1e-9), (65_537, 9, 0.5), (3, 1, 0.2)]:
        want = NK.weighted_half_width(big, order, size, head, cap, 0.99999, alpha)
        assert same_bits(want, core.weighted_half_width(big, order, size, head, cap, 0.99999,
                                                        alpha))  # fmt: skip
    values = np.concatenate([np.round(rng.standard_normal(200), 1), [np.nan, INF, -INF, 0.0]])
    rng.shuffle(values)
    for cap in (1, 3, 40):
        nb = _fill(rng, cap, len(values), values, (SC.ss_insert, SC.ss_update))
        cc = _fill(rng, cap, len(values), values, (core.ss_insert, core.ss_update))
        for x, y in zip(nb, cc, strict=True):
            assert all(same_bits(p, q) for p, q in zip(x, y, strict=True))
    W = rng.integers(0, 2, (3, 30)).astype(np.float64)
    r1, r2 = np.array([4, 9], np.int64), np.array([4, 9], np.int64)
    s1, s2 = np.zeros(30, np.int64), np.zeros(30, np.int64)
    SC.ring_slots(r1, W, s1)
    core.ring_slots(r2, W, s2)
    assert same_bits(r1, r2) and same_bits(s1, s2)


# ------------------------------------------------------------------------------------------------
# ConformalQRF's pass
def _cqr_state(A, cap):
    return {"size": 0, "ring": np.array([0, cap], np.int64), "cscore": np.zeros((A, cap)),
            "order": np.zeros((A, cap), np.int64), "pos": np.full((A, cap), -1, np.int64),
            "ss": np.zeros((A, cap)), "alpha_t": None}  # fmt: skip


def cqr_results(fn, cap, gamma, seed, edge=False, chunks=8, n=45, T=4):
    rng = np.random.default_rng(seed)
    alphas = np.array([0.1, 0.3, 0.05])
    s = _cqr_state(3, cap)
    s["alpha_t"] = alphas.copy()
    req = np.array([0.1, 0.2, 0.01, 0.5])
    base = np.array([0, 0, 2, 1], np.int64)
    out = []
    for c in range(chunks):
        pred = rng.standard_normal(n)
        w = np.abs(rng.standard_normal((n, 3))) * np.array([1.6, 1.0, 2.0])
        lo, hi = pred[:, None] - w, pred[:, None] + w
        olo, ohi = lo + 0.1 * rng.standard_normal((n, 3)), hi + 0.1 * rng.standard_normal((n, 3))
        W = rng.poisson(1.0, (T, n)).astype(np.float64)
        olo[(W != 0).all(axis=0)] = np.nan  # in bag for every tree
        y = pred + rng.standard_normal(n) * 1.3
        if edge:
            k = rng.random(n)
            olo[k < 0.05, 0] = np.nan
            y[(k > 0.05) & (k < 0.08)] = np.nan
            ohi[(k > 0.08) & (k < 0.1)] = INF
            y[(k > 0.1) & (k < 0.12)] = lo[(k > 0.1) & (k < 0.12), 0]
        half, rhalf = np.full((n, 3), -7.0), np.full((n, 4), -7.0)
        learn = c % 4 != 3
        s["size"] = fn(s["size"], s["ring"], s["cscore"], s["order"], s["pos"], s["ss"], lo, hi,
                       olo, ohi, W, y, learn, alphas, gamma, s["alpha_t"], half, req, base,
                       rhalf)  # fmt: skip
        out.append([half, rhalf, *_copy(s).values()])
    return out


@pytest.mark.parametrize("edge", [False, True])
def test_same_as_numba_cqr(edge):
    pytest.importorskip("numba")
    from streamforest.intervals import _cqr_kernels as CK

    for cap, gamma in [(30, 0.0), (30, 0.01), (1, 0.05), (400, 0.005)]:
        a = cqr_results(CK.cqr_levels_pass, cap, gamma, cap, edge)
        b = cqr_results(core.cqr_levels_pass, cap, gamma, cap, edge)
        same_results(a, b)


# ------------------------------------------------------------------------------------------------
# the controllers against plain-Python replays of their update rules (one level, each row served
# then learnt: no lag), on random score streams
LAG_GAIN = 1.0 / math.e
SQRT3 = math.sqrt(3.0)


def _stream(seed, n=300, L=1):
    rng = np.random.default_rng(seed)
    pred, blo, bhi, y = _base(rng, n, L)
    y[n // 2 :] += 2.0 * rng.standard_normal(n - n // 2)  # a change of the errors' scale
    return pred, blo, bhi, y


def _core_served(method, levels, s, pred, blo, bhi, y):
    n, R = y.shape[0], levels.shape[0]
    rec = np.zeros((n, R, _record_width(method)))
    out = _call(core, method, s, levels, np.ones(R, np.bool_), pred, blo, bhi, y,
                np.ones(n, np.int8), rec)  # fmt: skip
    return out[0][:, 0], out[1][:, 0]


def _served(lo, hi, p):
    """A served interval as reported: an empty one as the point ``p``."""
    return (p, p) if lo > hi else (lo, hi)


def test_aci_is_its_update_rule():
    from streamforest.intervals._adaptive_kernels import aci_plan

    alpha, gamma = 0.1, 0.05
    levels = np.array([alpha])
    union, idx, logit = aci_plan(levels)
    pred, blo, bhi, y = _stream(1, L=union.shape[0])
    blo[::37] = -INF  # an unfitted base model's rows teach nothing
    s = _state("aci", levels)
    got = _core_served("aci", levels, s, pred, blo, bhi, y)
    a_t, want = alpha, []
    K = idx.shape[1]
    for i in range(y.shape[0]):
        if a_t <= 0:
            lo, hi = -INF, INF
        elif a_t >= 1:
            lo, hi = INF, -INF
        else:
            z = math.log(a_t / (1 - a_t))
            k = 0
            while k < K - 2 and logit[0, k + 1] <= z:
                k += 1
            w = min(max((z - logit[0, k]) / (logit[0, k + 1] - logit[0, k]), 0.0), 1.0)
            ends = []
            for b, low in ((blo, True), (bhi, False)):
                e0, e1 = b[i, idx[0, k]], b[i, idx[0, k + 1]]
                if w == 0.0:
                    ends.append(e0)
                elif math.isfinite(e0) and math.isfinite(e1):
                    ends.append(e0 + w * (e1 - e0))
                else:
                    ends.append(min(e0, e1) if low else max(e0, e1))
            lo, hi = ends
        want.append(_served(lo, hi, pred[i]))
        if a_t <= 0 or a_t >= 1 or (math.isfinite(lo) and math.isfinite(hi)):
            miss = lo > hi or not (lo <= y[i] <= hi)
            a_t += min(gamma, LAG_GAIN) * (alpha - miss)
    assert list(zip(*got, strict=True)) == want
    assert s["alpha_t"][0] == a_t and s["steps"][0] == y.shape[0]


def test_aci_learns_late_labels_from_what_was_served():
    """Rows served (mode 0), their labels learnt ``lag`` rows later from the records: each step
    is ``min(gamma, LAG_GAIN / (1 + lag)) (alpha - err)``, ``err`` the served interval's miss."""
    from streamforest.intervals._adaptive_kernels import aci_plan

    alpha, gamma, lag = 0.1, 0.05, 30
    levels = np.array([alpha])
    L = aci_plan(levels)[0].shape[0]
    s = _state("aci", levels)
    pred, blo, bhi, y = _stream(2, n=90, L=L)
    learns, a_t, steps = np.ones(1, np.bool_), alpha, 0
    rec = np.zeros((90, 1, 6))
    _call(core, "aci", s, levels, learns, pred, blo, bhi, y, np.zeros(90, np.int8), rec)
    assert s["alpha_t"][0] == alpha and (rec[:, 0, 5] == 0).all()  # serving changes nothing
    # the first `lag` rows' labels come in (prequential rows in between: lag for the later ones)
    _call(core, "aci", s, levels, learns, pred[:lag], blo[:lag], bhi[:lag], y[:lag],
          np.full(lag, 2, np.int8), rec[:lag].copy())  # fmt: skip
    for i in range(lag):
        lo, hi = rec[i, 0, :2]
        a_t += min(gamma, LAG_GAIN / (1 + i)) * (alpha - (not (lo <= y[i] <= hi)))
        steps += 1
    assert s["alpha_t"][0] == a_t and s["steps"][0] == steps


def test_pid_is_its_update_rule():
    alpha, lr, ki, csat, W = 0.1, 0.05, 0.7, 10.0, 25
    levels = np.array([alpha])
    pred, blo, bhi, y = _stream(3)
    s = _state("pid", levels)
    got = _core_served("pid", levels, s, pred, blo, bhi, y)
    p, isum, win, want = 0.0, 0.0, [], []
    for t in range(y.shape[0]):
        lo, hi = blo[t, 0], bhi[t, 0]
        scale = (max(win) - min(win)) if len(win) >= 2 else 0.0
        x = isum * math.log(t + 1.0) / (csat * (t + 1.0))
        integ = (
            INF if x >= math.pi / 2 else (-INF if x <= -math.pi / 2 else ki * scale * math.tan(x))
        )
        q = p + integ
        want.append(_served(lo - q, hi + q, pred[t]))
        miss = float(not (lo - q <= y[t] <= hi + q))
        p += min(lr, LAG_GAIN) * scale * (miss - alpha)
        isum += miss - alpha
        win = ([*win, max(lo - y[t], y[t] - hi)])[-W:]
    assert list(zip(*got, strict=True)) == want
    assert s["p"][0] == p and s["isum"][0] == isum


def _quantile(window, p):
    return float(np.quantile(np.asarray(window), min(max(p, 0.0), 1.0), method="inverted_cdf"))


def _pinball(y, q, tau):
    return max(tau * (y - q), (1.0 - tau) * (q - y))


def _grad(y, q, tau):
    return -tau if y > q else (1.0 - tau if y < q else 0.0)


def _scaled(lo, hi, y):
    h = 0.5 * (hi - lo)
    mid = 0.5 * (lo + hi)
    return mid, h, (y - mid) / h


def _own(mid, h, b_lo, b_hi):
    if b_hi == -INF:
        return INF, -INF
    if b_hi == INF:
        return -INF, INF
    return mid + b_lo * h, mid + b_hi * h


def test_sfogd_is_its_update_rule():
    alpha = 0.1
    levels = np.array([alpha])
    pred, blo, bhi, y = _stream(4)
    s = _state("sfogd", levels)
    got = _core_served("sfogd", levels, s, pred, blo, bhi, y)
    th, gsq, smax, want = 1.0, 0.0, 0.0, []
    for i in range(y.shape[0]):
        mid, h, z = _scaled(blo[i, 0], bhi[i, 0], y[i])
        want.append(_served(*_own(mid, h, -th, th), pred[i]))
        s_i = abs(z)
        smax = max(smax, s_i)
        D = smax * SQRT3
        g = _grad(s_i, th, 1 - alpha)
        gsq += g * g
        if gsq != 0 and D > 0:
            th = max(0.0, th - D / math.sqrt(3.0 * gsq * 1.0) * g)
    assert list(zip(*got, strict=True)) == want
    assert s["st"][0, TH] == th


def test_dtaci_is_its_update_rule():
    alpha, gamma, W, sigma = 0.1, 0.01, 40, 1.0 / 200
    levels = np.array([alpha])
    eta = 0.3 + alpha  # (the test's learning rate, as _call passes it)
    pred, blo, bhi, y = _stream(5)
    s = _state("dtaci", levels, W=W)
    got = _core_served("dtaci", levels, s, pred, blo, bhi, y)
    K = EXPERT_GAMMAS.shape[0]
    lv, lw, corr, win, want = [alpha] * K, [0.0] * K, 0.0, [], []

    def thr(a):
        if not win:
            return 1.0
        if a <= 0:
            return INF
        if a >= 1:
            return -INF
        return _quantile(win, 1.0 - a)

    for i in range(y.shape[0]):
        mid, h, z = _scaled(blo[i, 0], bhi[i, 0], y[i])
        ws = [math.exp(v) for v in lw]
        at = sum(w * a for w, a in zip(ws, lv, strict=True)) / sum(ws) + corr
        b = thr(at)
        lo, hi = _own(mid, h, -b, b)
        want.append(_served(lo, hi, pred[i]))
        served = [thr(a) for a in lv]
        s_i = abs(z)
        miss = lo > hi or not (lo <= y[i] <= hi)
        corr += min(gamma, LAG_GAIN) * (alpha - miss)
        if len(win) > math.floor(1.0 / alpha):
            beta = sum(v >= s_i for v in win) / len(win)
            wbar = [lw[k] - eta * _pinball(beta, lv[k], alpha) for k in range(K)]
            top = max(wbar)
            lse = top + math.log(sum(math.exp(v - top) for v in wbar))
            v = [(1.0 - sigma) * math.exp(wb - lse) + sigma / K for wb in wbar]
            lw = [math.log(x) - math.log(sum(v)) for x in v]
            for k in range(K):
                err = 1.0 if s_i > served[k] else 0.0
                lv[k] += min(EXPERT_GAMMAS[k], LAG_GAIN) * (alpha - err)
        win = [*win, s_i][-W:]
    assert list(zip(*got, strict=True)) == want
    assert s["ex"][0, :, 0].tolist() == lv and s["st"][0, 1] == corr


def test_agaci_is_its_update_rule():
    alpha, gamma, W = 0.1, 0.01, 40
    levels = np.array([alpha])
    pred, blo, bhi, y = _stream(6)
    s = _state("agaci", levels, W=W)
    got = _core_served("agaci", levels, s, pred, blo, bhi, y)
    K = EXPERT_GAMMAS.shape[0]
    lv = [alpha] * K
    boa = {side: [{"L": 0.0, "sq": 0.0, "mx": 0.0, "eta": 0.0} for _ in range(K)]
           for side in ("lo", "hi")}  # fmt: skip
    corr, smax, win, want = 0.0, 0.0, [], []

    def probs(side):
        ex = boa[side]
        top = max(e["eta"] * e["L"] for e in ex)
        out = [e["eta"] * math.exp(-e["eta"] * e["L"] + top) for e in ex]
        tot = sum(out)
        return [o / tot if tot > 0 else 1.0 / K for o in out]

    def learn(e, loss):
        e["sq"] += loss * loss
        e["mx"] = max(e["mx"], abs(loss))
        Ev = 2.0 ** (math.ceil(math.log2(e["mx"] + 1e-3)) + 1.0)
        e["L"] += 0.5 * (loss * (1.0 + e["eta"] * loss) + (Ev if e["eta"] * loss > 0.5 else 0.0))
        e["eta"] = min(1.0 / Ev, math.sqrt(math.log(K) / e["sq"])) if e["sq"] > 0 else 1.0 / Ev

    for i in range(y.shape[0]):
        mid, h, z = _scaled(blo[i, 0], bhi[i, 0], y[i])
        p_lo, p_hi = probs("lo"), probs("hi")
        q = [1.0 if not win else (max(win) if a <= 0 else _quantile(win, 1.0 - a)) for a in lv]
        b_lo, b_hi = 0.0, 0.0
        for k in range(K):
            b_lo -= p_lo[k] * q[k]
            b_hi += p_hi[k] * q[k]
        b_lo, b_hi = b_lo - corr, b_hi + corr
        lo, hi = _own(mid, h, b_lo, b_hi)
        want.append(_served(lo, hi, pred[i]))
        s_i = abs(z)
        smax = max(smax, s_i)
        D = smax * SQRT3
        served_lo, served_hi = (lo - mid) / h + corr, (hi - mid) / h - corr
        miss = lo > hi or not (lo <= y[i] <= hi)
        corr += min(gamma, LAG_GAIN) * D / SQRT3 * (miss - alpha)
        g_lo = (1.0 if z < served_lo else 0.0) - 0.5 * alpha
        g_hi = (1.0 if z < served_hi else 0.0) - (1.0 - 0.5 * alpha)
        for k in range(K):
            learn(boa["lo"][k], g_lo * (-q[k] - served_lo))
            learn(boa["hi"][k], g_hi * (q[k] - served_hi))
            lv[k] += min(EXPERT_GAMMAS[k], LAG_GAIN) * (alpha - (1.0 if s_i > q[k] else 0.0))
        win = [*win, s_i][-W:]
    assert list(zip(*got, strict=True)) == want
    assert s["ex"][0, :, 0].tolist() == lv


def test_saocp_is_its_update_rule():
    alpha, gamma, lifetime, cap = 0.1, 0.01, 8.0, 6
    tau = 1 - alpha
    levels = np.array([alpha])
    pred, blo, bhi, y = _stream(7)
    s = _state("saocp", levels, saocp_cap=cap)
    got = _core_served("saocp", levels, s, pred, blo, bhi, y)
    experts, corr, smax, clock, want = [], 0.0, 0.0, 1.0, []

    def prior(e):
        t = e["start"]
        return 1.0 / (t * t * (1.0 + math.floor(math.log2(t))))

    def weight(e):
        return 0.0 if e["age"] == 0 else e["z"] / e["age"] * (1.0 + e["wz"])

    def theta():
        z = sum(prior(e) for e in experts)
        if z == 0:
            return 1.0
        sum_p = sum(prior(e) / z * max(0.0, weight(e)) for e in experts)
        if sum_p > 0:
            return sum(prior(e) / z * max(0.0, weight(e)) / sum_p * e["yhat"] for e in experts)
        return sum(prior(e) / z * e["yhat"] for e in experts)

    for i in range(y.shape[0]):
        mid, h, z = _scaled(blo[i, 0], bhi[i, 0], y[i])
        b = theta() + corr
        lo, hi = _own(mid, h, -b, b)
        want.append(_served(lo, hi, pred[i]))
        s_i = abs(z)
        smax = max(smax, s_i)
        D = smax * SQRT3
        miss = lo > hi or not (lo <= y[i] <= hi)
        corr += min(gamma, LAG_GAIN) * D / SQRT3 * (miss - alpha)
        s_hat = theta()
        experts = [e for e in experts if e["age"] <= e["life"]][-(cap - 1) :]
        u, k = 0, int(clock)
        while k % 2 == 0:
            k, u = k // 2, u + 1
        experts.append({"start": clock, "yhat": s_hat, "grad": 0.0, "z": 0.0, "wz": 0.0,
                        "age": 0.0, "life": lifetime * 2.0**u, "scale": D})  # fmt: skip
        meta = _pinball(s_i, theta(), tau)
        for e in experts:
            w = weight(e)
            g = (meta - _pinball(s_i, e["yhat"], tau)) / e["scale"] / max(alpha, 1 - alpha)
            g = min(max(g, -1.0 if w > 0 else 0.0), 1.0)
            e["z"] += g
            e["wz"] += g * w
            e["age"] += 1.0
            gr = _grad(s_i, e["yhat"], tau)
            e["grad"] += gr * gr
            if e["grad"] != 0:
                e["yhat"] = max(0.0, e["yhat"] - e["scale"] / SQRT3 / math.sqrt(e["grad"]) * gr)
        clock += 1.0
    assert list(zip(*got, strict=True)) == want
    assert s["st"][0, CLOCK] == clock


def _rank_quantile(scores, alpha):
    """The conformal quantile of ``scores``: the ``ceil((n + 1)(1 - alpha))``-th smallest."""
    n = len(scores)
    r = math.ceil((n + 1) * (1 - alpha) - 1e-9)
    return INF if (r > n or n == 0) else (-INF if r < 1 else sorted(scores)[r - 1])


@pytest.mark.parametrize(
    "normalize,span,guard", [(True, 400, True), (True, 0, True), (False, 30, False)]
)
def test_normalized_pass_is_its_definition(normalize, span, guard):
    """Half-widths from a FIFO ring of scaled scores (a plain list here), the running level of
    the residuals, the drift guard's CUSUM on the scores' mid-ranks and its weighted quantile."""
    import bisect

    cap, offset, n = 50, 0.1, 400
    rng = np.random.default_rng(8)
    yhat = rng.standard_normal(n)
    spread = np.abs(rng.standard_normal(n)) + 0.1
    y = yhat + rng.standard_normal(n) * np.where(np.arange(n) > 250, 4.0, 1.0)
    alphas = np.array([0.1, 0.02, 0.5])
    s = _normalized_state(cap)
    s["guard"][0] = 1.0 if guard else 0.0
    half = np.empty((n, 3))
    size = core.normalized_pass(0, s["ring"], s["score"], s["order"], s["pos"], s["ss"],
                                s["cspread"], s["level"], span, yhat, spread, y, True, normalize,
                                offset, alphas, half, s["guard"])  # fmt: skip
    ring = []  # (score, spread), oldest first
    lev = cnt = tot = S = 0.0
    alarms = 0
    for i in range(n):
        sc_list = [v for v, _ in ring]
        g = 1.0
        mean = tot / len(ring) if ring else 0.0
        if normalize and mean > 0:
            g = spread[i] / mean + offset
        sc = g * lev if span > 0 else g
        for a, alpha in enumerate(alphas):
            q = _rank_quantile(sc_list, alpha)
            if guard and S > 5.0 and ring:
                alarms += 1
                w = 0.99 ** np.arange(len(ring))[::-1]
                o = np.argsort(sc_list, kind="stable")
                cum = np.cumsum(w[o]) / (w.sum() + 1.0)
                k = np.searchsorted(cum, 1 - alpha - 1e-12)
                wq = sc_list[o[k]] if k < len(ring) else (max(sc_list) if len(ring) >= cap else INF)
                q = max(q, wq)
            assert half[i, a] == (q * sc if math.isfinite(q) else q), (i, a)
        r = abs(y[i] - yhat[i])
        if span > 0 and cnt < 20:
            w_ = min(cnt, float(span))
            sc = g * (lev * w_ + r) / (w_ + 1.0)
        v = r / sc if sc > 0 else (0.0 if r == 0 else INF)
        if guard and len(ring) >= 20:
            srt = sorted(sc_list)
            u = (0.5 * (bisect.bisect_left(srt, v) + bisect.bisect_right(srt, v)) + 0.5) / (
                len(ring) + 1.0
            )
            S = max(0.0, S + u - 0.5 - 0.05)
        if len(ring) == cap:
            tot -= ring.pop(0)[1]
        ring.append((v, spread[i]))
        tot += spread[i]
        if span > 0:
            cnt += 1.0
            lev += (r - lev) / min(cnt, float(span))
    assert size == len(ring) and s["level"].tolist() == [lev, cnt] and s["guard"][1] == S
    assert alarms > 0 or not guard  # (the change of scale sets the guard off)
    assert s["ss"][:size].tolist() == sorted(v for v, _ in ring)


def test_cqr_pass_is_its_definition():
    """Per calibrated level, a FIFO ring of out-of-bag CQR scores (plain lists here), its
    conformal quantile at the ACI-moved level, and the requested levels read from their bases'
    scores at the same moment."""
    cap, gamma, n, T = 40, 0.01, 300, 3
    rng = np.random.default_rng(9)
    alphas = np.array([0.1, 0.3])
    req, base = np.array([0.1, 0.2, 0.05]), np.array([0, 0, 1], np.int64)
    pred = rng.standard_normal(n)
    w = np.abs(rng.standard_normal((n, 2))) * np.array([1.6, 1.0])
    lo, hi = pred[:, None] - w, pred[:, None] + w
    olo, ohi = lo + 0.1 * rng.standard_normal((n, 2)), hi + 0.1 * rng.standard_normal((n, 2))
    W = rng.poisson(1.0, (T, n)).astype(np.float64)
    olo[(W != 0).all(axis=0)] = np.nan
    y = pred + rng.standard_normal(n) * 1.3
    s = _cqr_state(2, cap)
    alpha_t = alphas.copy()
    half, rhalf = np.empty((n, 2)), np.empty((n, 3))
    size = core.cqr_levels_pass(0, s["ring"], s["cscore"], s["order"], s["pos"], s["ss"], lo, hi,
                                olo, ohi, W, y, True, alphas, gamma, alpha_t, half, req, base,
                                rhalf)  # fmt: skip
    rings, at = [[], []], alphas.tolist()
    for i in range(n):
        for a in range(2):
            assert half[i, a] == _rank_quantile(rings[a], at[a])
        for r in range(3):
            b = base[r]
            assert rhalf[i, r] == _rank_quantile(rings[b], req[r] + at[b] - alphas[b])
        for a in range(2):
            inside = lo[i, a] - half[i, a] <= y[i] <= hi[i, a] + half[i, a]
            at[a] += gamma * (alphas[a] - (0.0 if inside else 1.0))
        if (W[:, i] == 0).any() and not np.isnan(olo[i, 0]):
            for a in range(2):
                rings[a] = [*rings[a], max(olo[i, a] - y[i], y[i] - ohi[i, a])][-cap:]
    assert size == len(rings[0]) and alpha_t.tolist() == at


# ------------------------------------------------------------------------------------------------
# end to end: AdaptiveConformal's every method, the core's passes against numba's
def _protocols(model, X, y):
    """Prequential batches, served batches learnt late (the served log), and one example at a
    time; every number the model gives."""
    out = []
    out.append(model.predict_learn_many(X[:200], y[:200], alpha=[0.1, 0.05])[1])
    for s in range(200, 400, 50):
        out.append(model.predict_interval(X[s : s + 50], alpha=[0.1, 0.05]))
        if s > 200:
            model.learn_many(X[s - 50 : s], y[s - 50 : s])  # a batch late
    model.learn_many(X[350:400], y[350:400])
    for i in range(400, 430):
        x = dict(enumerate(X[i]))
        out.append(model.predict_interval_one(x, alpha=0.1))
        model.learn_one(x, float(y[i]))
    return [np.asarray(o, dtype=np.float64) for o in out]


@pytest.mark.parametrize("method", CONTROLLERS)
def test_same_as_numba_adaptive_conformal(method, monkeypatch):
    pytest.importorskip("numba")
    import types

    import streamforest as sf
    from streamforest.intervals import _adaptive_kernels, _online_kernels
    from streamforest.intervals import adaptive as adaptive_module

    numba_passes = types.SimpleNamespace(**{k: getattr(core, k) for k in dir(core)})
    numba_passes.aci_pass = _adaptive_kernels.aci_pass
    numba_passes.pid_pass = _adaptive_kernels.pid_pass
    numba_passes.online_pass = _online_kernels.online_pass

    rng = np.random.default_rng(12)
    X = rng.random((430, 3))
    y = 4 * X[:, 0] + rng.standard_normal(430) * (1 + 2 * (np.arange(430) > 250))

    def model():
        forest = sf.OnlineForestRegressor(
            n_trees=3, tree=sf.HoeffdingTreeRegressor(grace_period=30)
        )
        base = sf.CPApproximate(calibration_size=100, forest=forest, seed=3)
        return sf.AdaptiveConformal(base, alphas=[0.1, 0.05], method=method, log_size=500)

    ours = _protocols(model(), X, y)
    monkeypatch.setattr(adaptive_module, "_core", types.SimpleNamespace(intervals=numba_passes))
    theirs = _protocols(model(), X, y)
    assert len(ours) == len(theirs)
    assert all(same_bits(a, b) for a, b in zip(ours, theirs, strict=True))
