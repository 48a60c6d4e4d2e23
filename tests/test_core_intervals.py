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
