"""Compiled pass of the online conformal methods after ACI (:class:`~streamforest.AdaptiveConformal`
methods ``"sfogd"``, ``"saocp"``, ``"dtaci"``, ``"agaci"``, ``"nexcp"``).

Every method picks, per tracked level ``r``, a threshold on a *score* of the base model's interval
``[lo, hi]`` at that level:

- ``scaled`` (regression): ``s = |y - m| / h`` with ``m = (lo + hi) / 2``, ``h = (hi - lo) / 2``;
  the interval for a threshold ``theta`` is ``m +- theta h`` (``theta = 1``: the base interval);
- additive (prediction sets): ``s = max(lo - y, y - hi)``; the interval
  ``[lo - theta, hi + theta]``.

Rows are processed in order, each with a ``mode``: 0 serve (the interval from the current state,
written to ``rec``), 1 serve then learn (prequential), 2 learn from the record ``rec`` of what was
served earlier (its own interval, base interval and the method's served quantities), 3 skip.
``rec[i, r]``: ``[own_lo, own_hi, base_lo, base_hi, extras..., served_at]``, ``served_at`` the
level's count of learnt rows when the row was served, so a label knows its *lag* (the rows learnt
between serving it and learning it: 0 one row at a time, up to ``b - 1`` in batches of ``b``,
``d`` with labels ``d`` rows late).  A row whose base interval is not finite (or, scaled, of zero
width) is served the base interval and teaches nothing.

Under a lag, a method's state has moved between serving and learning a row, so what the row
teaches is taken at what was served: SF-OGD's gradient at the served threshold; SAOCP's experts'
gradients at the served aggregate (their own served thresholds are not recorded); DtACI's experts
on the misses of their served thresholds, and its served level corrected by an ACI term on the
misses of the served aggregate (below).  Every step on a served miss (DtACI's and AgACI's
experts, DtACI's and SAOCP's corrections) is capped at ``LAG_GAIN / (1 + lag)`` per unit of the
level (:func:`~streamforest.intervals._adaptive_kernels.lag_step`: stale feedback makes a fixed
step a delayed integrator that overshoots); SF-OGD's step is divided by ``sqrt(1 + lag)`` (the
delay-tolerant AdaGrad step of McMahan & Streeter 2014; capping it as the others did worse on
the benchmark: Friedman, batches of 1000, MER 0.121 against 0.106).
"""

from __future__ import annotations

import math

import numpy as np

from ..compiled import entry, kernel
from ..sorting import argsort_into, sort_into
from ._adaptive_kernels import LAG_GAIN, _nest, lag_step

SFOGD, SAOCP, DTACI, AGACI, NEXCP = 0, 1, 2, 3, 4
# per-level scalars: threshold, sum of squared gradients, largest score, steps, window count,
# window position, SAOCP's clock
TH, GSQ, SMAX, STEPS, CALN, CALPOS, CLOCK = 0, 1, 2, 3, 4, 5, 6
N_SCALARS = 7
#: DtACI's served-miss correction of its level (DtACI has no gradient sum: the slot is free, and
#: a model saved before the correction starts at 0)
CORR = GSQ
# SAOCP expert fields
E_ALIVE, E_START, E_YHAT, E_GRAD, E_Z, E_WZ, E_AGE, E_LIFE, E_SCALE = range(9)
N_SAOCP_FIELDS = 9
# AgACI expert fields: level, then BOA state of the lower and upper bound
A_LEVEL, A_LLO, A_SQLO, A_MAXLO, A_ETALO, A_LHI, A_SQHI, A_MAXHI, A_ETAHI = range(9)
N_AGACI_FIELDS = 9


@kernel(inline="always")
def _pinball(y, q, tau):
    return max(tau * (y - q), (1.0 - tau) * (q - y))


@kernel(inline="always")
def _pinball_grad(y, q, tau):
    """d/dq of ``_pinball(y, q, tau)`` (0 at a tie), as the reference implementation."""
    if y > q:
        return -tau
    if y < q:
        return 1.0 - tau
    return 0.0


@kernel
def _sorted_window(cal, st, r, buf):
    """The level's window of scores, ascending, in ``buf[:n]``; returns ``n``."""
    n = int(st[r, CALN])
    for j in range(n):
        buf[j] = cal[r, j]
    sort_into(buf, n)
    return n


@kernel(inline="always")
def _quantile(sorted_, n, p):
    """``np.quantile(window, p, method="inverted_cdf")`` (``p`` clipped to [0, 1])."""
    p = min(max(p, 0.0), 1.0)
    k = int(math.ceil(n * p)) - 1
    return sorted_[min(max(k, 0), n - 1)]


@kernel(inline="always")
def _dtaci_threshold(sorted_, n, a, clip, theta0):
    """DtACI's family at level ``a``: the ``1 - a`` quantile of the window; outside ``(0, 1)``
    the paper's whole line (``a <= 0``) and empty set (``a >= 1``), or with ``clip`` the
    reference implementation's window maximum and minimum."""
    if n == 0:
        return theta0
    if not clip and a <= 0.0:
        return np.inf
    if not clip and a >= 1.0:
        return -np.inf
    return _quantile(sorted_, n, 1.0 - a)


@kernel
def _weighted_quantile(cal, st, r, rho, p, buf):
    """Non-exchangeable conformal quantile (Barber et al. 2023): the window's scores weighted
    ``rho ** age`` (age 0 the newest) and the test point's weight 1 at ``+inf``; the smallest
    score whose normalised cumulative weight reaches ``p`` (``inf`` if none)."""
    n = int(st[r, CALN])
    W = cal.shape[1]
    pos = int(st[r, CALPOS])
    total = 1.0
    for j in range(n):
        buf[j] = cal[r, j]
        age = (pos - 1 - j) % W
        total += rho**age
    order = np.empty(n, dtype=np.int64)
    argsort_into(buf, n, order)
    acc = 0.0
    for k in range(n):
        j = order[k]
        acc += rho ** ((pos - 1 - j) % W)
        if acc / total >= p:
            return buf[j]
    return np.inf


@kernel(inline="always")
def _push(cal, st, r, s):
    W = cal.shape[1]
    pos = int(st[r, CALPOS])
    cal[r, pos] = s
    st[r, CALPOS] = (pos + 1) % W
    if st[r, CALN] < W:
        st[r, CALN] += 1


@kernel
def _saocp_theta(ex, r, theta0):
    """SAOCP's aggregate: experts weighted by the prior ``1 / (t^2 (1 + floor(log2 t)))`` of their
    start time times ``max(0, w)``, or by the prior alone when no weight is positive (the
    reference implementation's arithmetic, in its order: the live experts by start time)."""
    E = ex.shape[1]
    z = 0.0
    for e in range(E):
        if ex[r, e, E_ALIVE] == 0.0:
            break
        t = ex[r, e, E_START]
        z += 1.0 / (t * t * (1.0 + math.floor(math.log2(t))))
    if z == 0.0:
        return theta0
    sum_p = 0.0
    for e in range(E):
        if ex[r, e, E_ALIVE] == 0.0:
            break
        t = ex[r, e, E_START]
        prior = 1.0 / (t * t * (1.0 + math.floor(math.log2(t)))) / z
        age = ex[r, e, E_AGE]
        w = 0.0 if age == 0.0 else ex[r, e, E_Z] / age * (1.0 + ex[r, e, E_WZ])
        sum_p += prior * max(0.0, w)
    out = 0.0
    for e in range(E):
        if ex[r, e, E_ALIVE] == 0.0:
            break
        t = ex[r, e, E_START]
        prior = 1.0 / (t * t * (1.0 + math.floor(math.log2(t)))) / z
        if sum_p > 0.0:
            age = ex[r, e, E_AGE]
            w = 0.0 if age == 0.0 else ex[r, e, E_Z] / age * (1.0 + ex[r, e, E_WZ])
            out += prior * max(0.0, w) / sum_p * ex[r, e, E_YHAT]
        else:
            out += prior * ex[r, e, E_YHAT]
    return out


@kernel
def _saocp_update(ex, st, r, s, tau, alpha, lifetime, scale, floor, theta0):
    """One step of SAOCP (Bhatnagar et al. 2023, Alg. 1 with the reference implementation's
    order): retire expired experts, start one at the current aggregate, update the experts'
    coin-betting weights and their scale-free gradient steps on the pinball loss.  The live
    experts are kept first, by start time; when all slots are taken the oldest goes."""
    E = ex.shape[1]
    t = st[r, CLOCK]
    s_hat = _saocp_theta(ex, r, theta0)
    live = 0
    for e in range(E):
        if ex[r, e, E_ALIVE] == 0.0:
            break
        if ex[r, e, E_AGE] <= ex[r, e, E_LIFE]:
            if live != e:
                ex[r, live, :] = ex[r, e, :]
            live += 1
    for e in range(live, E):
        ex[r, e, E_ALIVE] = 0.0
    if live == E:
        for e in range(E - 1):
            ex[r, e, :] = ex[r, e + 1, :]
        live = E - 1
    u = 0
    k = int(t)
    while k % 2 == 0:
        k //= 2
        u += 1
    ex[r, live, :] = 0.0
    ex[r, live, E_ALIVE] = 1.0
    ex[r, live, E_START] = t
    ex[r, live, E_YHAT] = s_hat
    ex[r, live, E_LIFE] = lifetime * 2.0**u
    ex[r, live, E_SCALE] = scale
    meta = _pinball(s, _saocp_theta(ex, r, theta0), tau)
    for e in range(live + 1):
        age = ex[r, e, E_AGE]
        w = 0.0 if age == 0.0 else ex[r, e, E_Z] / age * (1.0 + ex[r, e, E_WZ])
        sc = ex[r, e, E_SCALE]
        yh = ex[r, e, E_YHAT]
        g = (meta - _pinball(s, yh, tau)) / sc / max(alpha, 1.0 - alpha)
        g = min(max(g, -1.0 if w > 0.0 else 0.0), 1.0)
        ex[r, e, E_Z] += g
        ex[r, e, E_WZ] += g * w
        ex[r, e, E_AGE] = age + 1.0
        grad = _pinball_grad(s, yh, tau)
        ex[r, e, E_GRAD] += grad * grad
        if ex[r, e, E_GRAD] != 0.0:
            ex[r, e, E_YHAT] = max(
                floor, yh - sc / math.sqrt(3.0) / math.sqrt(ex[r, e, E_GRAD]) * grad
            )
    st[r, CLOCK] = t + 1.0


@kernel
def _boa(ex, r, k, K, side, loss):
    """Bernstein online aggregation (Wintenberger 2017, multiple learning rates, as R's opera)
    of expert ``k`` for one bound (``side`` 0 lower, 1 upper), linearised loss ``loss``."""
    L = A_LLO if side == 0 else A_LHI
    sq, mx, et = L + 1, L + 2, L + 3
    ex[r, k, sq] += loss * loss
    ex[r, k, mx] = max(ex[r, k, mx], abs(loss))
    Ev = 2.0 ** (math.ceil(math.log2(ex[r, k, mx] + 1e-3)) + 1.0)
    eta = ex[r, k, et]
    ex[r, k, L] += 0.5 * (loss * (1.0 + eta * loss) + (Ev if eta * loss > 0.5 else 0.0))
    if ex[r, k, sq] > 0.0:
        ex[r, k, et] = min(1.0 / Ev, math.sqrt(math.log(K) / ex[r, k, sq]))
    else:
        ex[r, k, et] = 1.0 / Ev


@kernel
def _boa_probs(ex, r, K, side, out):
    L = A_LLO if side == 0 else A_LHI
    et = L + 3
    top = -np.inf
    for k in range(K):
        top = max(top, ex[r, k, et] * ex[r, k, L])
    tot = 0.0
    for k in range(K):
        out[k] = ex[r, k, et] * math.exp(-ex[r, k, et] * ex[r, k, L] + top)
        tot += out[k]
    for k in range(K):
        out[k] = out[k] / tot if tot > 0.0 else 1.0 / K


@entry(nogil=True)
def online_pass(
    method, scaled, floor, theta0, blo, bhi, pred, y, mode, rec, alphas, learns, gammas, eta,
    sigma, gamma, lifetime, scale, rho, clip, st, cal, ex, order, out_lo, out_hi, own_lo, own_hi,
    buf, probs,
):  # fmt: skip
    """The methods' pass over the rows (see the module docstring).  ``gammas``: the experts'
    steps (DtACI, AgACI); ``eta`` (per level), ``sigma``: DtACI's learning rate and mixing;
    ``gamma``: the step of DtACI's served-miss correction ``c`` (0: none, the paper's DtACI),
    whose served level is the experts' weighted mean plus ``c``, ``c += gamma (alpha - err)``
    with ``err`` the miss of the interval served (so Gibbs & Candes' ACI bound holds for the
    served intervals, the experts' levels being bounded), and of SAOCP's and AgACI's
    threshold corrections (``gamma D / sqrt(3)`` a step, AgACI's widening both bounds);
    ``lifetime``: SAOCP's ``g``; ``scale``: SF-OGD's / SAOCP's scale, the reference
    implementation's ``max_scale`` (steps ``scale / sqrt(3 sum g^2)``; ``<= 0``: ``sqrt(3)``
    times the largest score seen so far); ``rho``: NExCP's recency weight."""
    n = y.shape[0]
    R = alphas.shape[0]
    K = gammas.shape[0]
    LAG = rec.shape[2] - 1  # (the record's last slot: the level's learnt rows when served)
    for i in range(n):
        md = mode[i]
        if md == 3:
            continue
        for r in range(R):
            if md == 2:
                own_lo[r] = rec[i, r, 0]
                own_hi[r] = rec[i, r, 1]
                continue
            lo = blo[i, r]
            hi = bhi[i, r]
            rec[i, r, 2] = lo
            rec[i, r, 3] = hi
            rec[i, r, LAG] = st[r, STEPS]
            h = 0.5 * (hi - lo)
            if not (np.isfinite(lo) and np.isfinite(hi)) or (scaled and not h > 0.0):
                own_lo[r] = lo
                own_hi[r] = hi
                rec[i, r, 0] = lo
                rec[i, r, 1] = hi
                continue
            a = alphas[r]
            b_lo = 0.0
            b_hi = 0.0
            if method == SFOGD:
                b_hi = st[r, TH]
                b_lo = -b_hi
            elif method == SAOCP:
                b_hi = _saocp_theta(ex, r, theta0) + st[r, CORR]
                b_lo = -b_hi
            elif method == NEXCP:
                b_hi = _weighted_quantile(cal, st, r, rho, 1.0 - a, buf)
                b_lo = -b_hi
            else:
                m = _sorted_window(cal, st, r, buf)
                if method == DTACI:
                    wsum = 0.0
                    at = 0.0
                    for k in range(K):
                        wk = math.exp(ex[r, k, 1])
                        wsum += wk
                        at += wk * ex[r, k, 0]
                        rec[i, r, 4 + k] = ex[r, k, 0]
                    at = at / wsum + st[r, CORR]
                    b_hi = _dtaci_threshold(buf, m, at, clip, theta0)
                    b_lo = -b_hi
                    for k in range(K):  # each expert's served threshold
                        rec[i, r, 4 + K + k] = _dtaci_threshold(buf, m, ex[r, k, 0], clip, theta0)
                else:  # AgACI
                    for side in range(2):
                        _boa_probs(ex, r, K, side, probs[side])
                    for k in range(K):
                        ak = ex[r, k, A_LEVEL]
                        if m == 0:
                            qk = theta0
                        elif ak <= 0.0:  # an infinite bound: the window's largest score
                            qk = buf[m - 1]
                        else:
                            qk = _quantile(buf, m, 1.0 - ak)
                        rec[i, r, 4 + k] = qk
                        b_lo -= probs[0, k] * qk
                        b_hi += probs[1, k] * qk
                    rec[i, r, 4 + K] = st[r, CORR]  # the served-miss correction, widening
                    b_lo -= st[r, CORR]
                    b_hi += st[r, CORR]
            if method != AGACI and method != DTACI:
                rec[i, r, 4] = b_hi
            if b_hi == -np.inf:  # the empty set
                own_lo[r] = np.inf
                own_hi[r] = -np.inf
            elif scaled:
                mid = 0.5 * (lo + hi)
                if b_hi == np.inf:
                    own_lo[r] = -np.inf
                    own_hi[r] = np.inf
                else:
                    own_lo[r] = mid + b_lo * h
                    own_hi[r] = mid + b_hi * h
            else:
                own_lo[r] = lo + b_lo
                own_hi[r] = hi + b_hi
            rec[i, r, 0] = own_lo[r]
            rec[i, r, 1] = own_hi[r]
        _nest(order, own_lo, own_hi, pred, out_lo, out_hi, i)
        if md == 0:
            continue
        yi = y[i]
        for r in range(R):
            if not learns[r]:
                continue
            lag = max(st[r, STEPS] - rec[i, r, LAG], 0.0)
            st[r, STEPS] += 1.0  # (every learnt row: a lag counts the rows, teaching or not)
            lo = rec[i, r, 2]
            hi = rec[i, r, 3]
            h = 0.5 * (hi - lo)
            if not (np.isfinite(lo) and np.isfinite(hi)) or (scaled and not h > 0.0):
                continue
            a = alphas[r]
            tau = 1.0 - a
            if scaled:
                z_lo = (yi - 0.5 * (lo + hi)) / h
                z_hi = z_lo
                s = abs(z_lo)
            else:
                z_lo = yi - lo
                z_hi = yi - hi
                s = max(-z_lo, z_hi)
            st[r, SMAX] = max(st[r, SMAX], abs(s))
            D = scale if scale > 0.0 else st[r, SMAX] * math.sqrt(3.0)
            if method == SFOGD:
                g = _pinball_grad(s, rec[i, r, 4], tau)  # (served threshold: s > it iff a miss)
                st[r, GSQ] += g * g
                if st[r, GSQ] != 0.0 and D > 0.0:
                    # (stale by ``lag`` rows: the delay-tolerant step of AdaGrad-style methods)
                    step = D / math.sqrt(3.0 * st[r, GSQ] * (1.0 + lag))
                    st[r, TH] = max(floor, st[r, TH] - step * g)
            elif method == SAOCP:
                # the served threshold's miss corrects it, the experts learn the scores
                miss = own_lo[r] > own_hi[r] or not (own_lo[r] <= yi <= own_hi[r])
                step = lag_step(gamma, lag, LAG_GAIN) * D / math.sqrt(3.0)
                st[r, CORR] += step * ((1.0 if miss else 0.0) - a)
                _saocp_update(ex, st, r, s, tau, a, lifetime, D, floor, theta0)
            elif method == DTACI:
                # the served aggregate's miss (an empty set always misses)
                miss = own_lo[r] > own_hi[r] or not (own_lo[r] <= yi <= own_hi[r])
                st[r, CORR] += lag_step(gamma, lag, LAG_GAIN) * (a - (1.0 if miss else 0.0))
                if st[r, CALN] > math.floor(1.0 / a):
                    m = int(st[r, CALN])
                    above = 0
                    for j in range(m):
                        if cal[r, j] >= s:
                            above += 1
                    beta = above / m
                    top = -np.inf
                    wbar = probs[0]
                    for k in range(K):
                        ak = rec[i, r, 4 + k]
                        wbar[k] = ex[r, k, 1] - eta[r] * _pinball(beta, ak, a)
                        top = max(top, wbar[k])
                    tot = 0.0
                    for k in range(K):
                        tot += math.exp(wbar[k] - top)
                    lse = top + math.log(tot)
                    norm = 0.0
                    for k in range(K):
                        v = (1.0 - sigma) * math.exp(wbar[k] - lse) + sigma / K
                        ex[r, k, 1] = math.log(v)
                        norm += v
                    for k in range(K):
                        ex[r, k, 1] -= math.log(norm)
                        # the miss of the expert's served interval (level <= 0: the whole line)
                        ak = rec[i, r, 4 + k]
                        err = 1.0 if (ak > 0.0 or not clip) and s > rec[i, r, 4 + K + k] else 0.0
                        ex[r, k, 0] += lag_step(gammas[k], lag, LAG_GAIN) * (a - err)
                        if clip:
                            ex[r, k, 0] = min(max(ex[r, k, 0], 0.0), 1.0)
            elif method == AGACI:
                b_lo = rec[i, r, 0]
                b_hi = rec[i, r, 1]
                if scaled:
                    mid = 0.5 * (lo + hi)
                    b_lo = (b_lo - mid) / h
                    b_hi = (b_hi - mid) / h
                else:
                    b_lo -= lo
                    b_hi -= hi
                # the experts' losses at the served aggregate, without its correction
                b_lo += rec[i, r, 4 + K]
                b_hi -= rec[i, r, 4 + K]
                miss = own_lo[r] > own_hi[r] or not (own_lo[r] <= yi <= own_hi[r])
                step = lag_step(gamma, lag, LAG_GAIN) * D / math.sqrt(3.0)
                st[r, CORR] += step * ((1.0 if miss else 0.0) - a)
                g_lo = (1.0 if z_lo < b_lo else 0.0) - 0.5 * a
                g_hi = (1.0 if z_hi < b_hi else 0.0) - (1.0 - 0.5 * a)
                for k in range(K):
                    qk = rec[i, r, 4 + k]
                    _boa(ex, r, k, K, np.int64(0), g_lo * (-qk - b_lo))
                    _boa(ex, r, k, K, np.int64(1), g_hi * (qk - b_hi))
                    err = 1.0 if s > qk else 0.0
                    ex[r, k, A_LEVEL] += lag_step(gammas[k], lag, LAG_GAIN) * (a - err)
            _push(cal, st, r, s)
