"""The compiled core's interval kernels that do not touch the trees (``streamforest._core.
intervals``): the sorted score sets, the online conformal controllers (ACI, PID, SF-OGD, SAOCP,
DtACI, AgACI, NExCP), NormalizedConformal's and ConformalQRF's passes.  Against definitions
(sorted lists, plain-Python replays of the controllers' update rules), and what they refuse."""

import math

import numpy as np
import pytest

from streamforest import _core

core = _core.intervals
INF = math.inf
EXPERT_GAMMAS = 0.001 * 2.0 ** np.arange(8)
METHODS = {"sfogd": 0, "saocp": 1, "dtaci": 2, "agaci": 3, "nexcp": 4}
TH, GSQ, SMAX, STEPS, CALN, CALPOS, CLOCK = range(7)


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
# the controllers
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


def aci_plan(levels):
    """``(union, idx, logit)`` for ``aci_pass`` by their definition: each level ``a``'s ladder
    of base levels ``expit(logit(a) + 0.3 k)``, ``k`` in -8 .. 4, clipped to [1e-9, 1 - 1e-9]
    (AdaptiveConformal's); the base levels to ask for (the ladders' union, ascending); each
    ladder as columns of them, and its logits."""
    ladders = []
    for a in levels:
        z = math.log(a / (1 - a)) + 0.3 * np.arange(-8, 5)
        ladders.append(np.clip(1.0 / (1.0 + np.exp(-z)), 1e-9, 1 - 1e-9))
    union = np.unique(np.concatenate(ladders))
    idx = np.array([np.searchsorted(union, lad) for lad in ladders], dtype=np.int64)
    return union, idx, np.ascontiguousarray(np.log(np.stack(ladders) / (1 - np.stack(ladders))))


def _base_levels(method, levels):
    return aci_plan(levels)[0].shape[0] if method == "aci" else levels.shape[0]


def _call(impl, method, s, levels, learns, pred, blo, bhi, y, mode, rec):
    """One pass of ``method`` by ``impl`` (a module with the pass functions) on state ``s``;
    returns ``(out_lo, out_hi, own_lo, own_hi)`` (``rec`` and ``s`` are updated in place)."""
    n, R = y.shape[0], levels.shape[0]
    order = np.argsort(levels, kind="stable").astype(np.int64)
    out_lo, out_hi = np.full((n, R), -7.0), np.full((n, R), -7.0)
    own_lo, own_hi = np.zeros(R), np.zeros(R)
    if method == "aci":
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


def _base(rng, n, L):
    """Base intervals ``(pred, blo, bhi, y)`` of ``n`` rows at ``L`` levels (the j-th level's
    narrower for larger j, as ascending levels are)."""
    pred = rng.standard_normal(n) * 3
    y = pred + rng.standard_normal(n) * (1 + 2 * (rng.random(n) < 0.1))
    width = np.abs(rng.standard_normal(n))[:, None] * np.linspace(3.0, 0.5, L)[None, :] + 0.1
    blo, bhi = pred[:, None] - width, pred[:, None] + width
    return pred, np.ascontiguousarray(blo), np.ascontiguousarray(bhi), y


def test_aci_refuses_a_flat_ladder():
    """A level so small that its ladder's levels are clipped to the same value: Python's
    ZeroDivisionError."""
    levels = np.array([1e-12])
    s = _state("aci", levels)
    pred, blo, bhi, y = _base(np.random.default_rng(0), 5, _base_levels("aci", levels))
    with pytest.raises(ZeroDivisionError):
        _call(core, "aci", s, levels, np.ones(1, np.bool_), pred, blo, bhi, y,
              np.ones(5, np.int8), np.zeros((5, 1, 6)))  # fmt: skip


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


def test_tree_mean_refuses_no_trees():
    with pytest.raises(ZeroDivisionError):
        core.tree_mean(np.zeros(0))


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


# ------------------------------------------------------------------------------------------------
# ConformalQRF's pass
def _cqr_state(A, cap):
    return {"size": 0, "ring": np.array([0, cap], np.int64), "cscore": np.zeros((A, cap)),
            "order": np.zeros((A, cap), np.int64), "pos": np.full((A, cap), -1, np.int64),
            "ss": np.zeros((A, cap)), "alpha_t": None}  # fmt: skip


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
