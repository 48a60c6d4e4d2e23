"""The compiled core's block metrics (``streamforest._core.metrics``): the prequential
evaluator's blocks against numpy on each block's rows, and what it refuses."""

import math

import numpy as np
import pytest

from streamforest import _core
from streamforest import metrics as M

core = _core.metrics
INF = math.inf


def same_bits(a, b):
    """Equal to the bit (the sign of zero included; a NaN equals a NaN: which of two NaN
    operands an operation returns is the compiler's choice)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    nan = np.isnan(a)
    return (
        a.shape == b.shape
        and bool((nan == np.isnan(b)).all())
        and bool((a[~nan].view(np.uint64) == b[~nan].view(np.uint64)).all())
    )


def _rows(rng, n, A, edge=False):
    y = rng.standard_normal(n) * 5 + 3
    pred = y + rng.standard_normal(n)
    w = (
        np.abs(rng.standard_normal((n, A))) * np.linspace(2, 1, A)[None, :]
        if A
        else np.zeros((n, 0))
    )
    lo, hi = pred[:, None] - w, pred[:, None] + w
    if edge and A:
        k = rng.random(n)
        lo[k < 0.1], hi[k < 0.1] = -INF, INF
        hi[(k > 0.1) & (k < 0.15), 0] = INF
        lo[(k > 0.15) & (k < 0.2), 0] = hi[(k > 0.15) & (k < 0.2), 0]  # zero width
        y[(k > 0.2) & (k < 0.25)] = lo[(k > 0.2) & (k < 0.25), 0]  # on a bound
        lo[(k > 0.25) & (k < 0.27)] = np.nan
    return y, pred, np.ascontiguousarray(lo), np.ascontiguousarray(hi)


def _run(fn, y, pred, lo, hi, step, cuts):
    """The rows through ``fn`` in calls cut at ``cuts``; returns ``(blocks, carry)``."""
    n, A = lo.shape
    blocks = np.zeros((max(1, -(-n // step)), M.n_columns(A)))
    carry = M.new_carry()
    edges = [0, *cuts, n]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        fn(y[a:b], pred[a:b], lo[a:b], hi[a:b], a, step, blocks, carry)
    return blocks, carry


@pytest.mark.parametrize("step", [1, 7, 50, 1000])
def test_blocks_against_numpy(step):
    rng = np.random.default_rng(step)
    n, A = 230, 3
    y, pred, lo, hi = _rows(rng, n, A, edge=True)
    lo[np.isnan(lo)] = -1.0
    blocks, carry = _run(core.accumulate, y, pred, lo, hi, step, [13, 100, 101])
    base = np.concatenate([[0.0], np.cumsum(y)[:-1] / np.arange(1, n)])  # mean of those before
    run_range = np.maximum.accumulate(y) - np.minimum.accumulate(y)
    for b in range(blocks.shape[0]):
        rows = slice(b * step, min(n, (b + 1) * step))
        t, e, be = y[rows], y[rows] - pred[rows], y[rows] - base[rows]
        row = blocks[b]
        assert row[M.N] == t.shape[0]
        assert row[M.SAE] == pytest.approx(np.abs(e).sum(), rel=1e-12)
        assert row[M.SSE] == pytest.approx((e * e).sum(), rel=1e-12)
        assert row[M.YMEAN] == pytest.approx(t.mean(), rel=1e-12)
        assert row[M.YM2] == pytest.approx(((t - t.mean()) ** 2).sum(), rel=1e-9)
        assert row[M.YMIN] == t.min() and row[M.YMAX] == t.max()
        assert row[M.BAE] == pytest.approx(np.abs(be).sum(), rel=1e-9)
        assert row[M.BSE] == pytest.approx((be * be).sum(), rel=1e-9)
        for a in range(A):
            c = M.POINT + M.K * a
            low, up = lo[rows, a], hi[rows, a]
            width = up - low
            fin = np.isfinite(width)
            assert row[c + M.MISS] == ((t < low) | (t > up)).sum()
            assert row[c + M.BELOW] == (t < low).sum()
            assert row[c + M.NINF] == (~fin).sum()
            assert row[c + M.WSUM] == pytest.approx(width[fin].sum(), rel=1e-12)
            beta = np.where(t < low, low - t, np.where(t > up, t - up, 0.0)).sum()
            assert row[c + M.BETA] == pytest.approx(beta, rel=1e-12)
            rr = run_range[rows]
            wrun = np.where(~fin, 1.0, np.where(rr > 0, width / np.where(rr > 0, rr, 1), 0.0))
            wrun = np.where(fin & (rr <= 0) & (width > 0), 1.0, wrun)
            assert row[c + M.WRUN] == pytest.approx(wrun.sum(), rel=1e-12)
    assert carry[M.C_N] == n and carry[M.C_MIN] == y.min() and carry[M.C_MAX] == y.max()
    assert carry[M.C_MEAN] == pytest.approx(y.mean(), rel=1e-12)
    # the cut of the calls does not matter
    again, carry2 = _run(core.accumulate, y, pred, lo, hi, step, [])
    assert same_bits(again, blocks) and same_bits(carry2, carry)


def test_accumulate_refuses_what_it_would_overrun():
    y, pred, lo, hi = _rows(np.random.default_rng(0), 10, 2)
    blocks, carry = np.zeros((2, M.n_columns(2))), M.new_carry()
    with pytest.raises(ValueError):  # rows 5 .. 14 reach block 2
        core.accumulate(y, pred, lo, hi, 5, 5, blocks, carry)
    with pytest.raises(ValueError):
        core.accumulate(y, pred, lo, hi, 0, 0, blocks, carry)
    with pytest.raises(ValueError):
        core.accumulate(y, pred, lo, hi, -1, 5, blocks, carry)
    with pytest.raises(ValueError):  # the blocks have no columns for a third level
        core.accumulate(y, pred, np.zeros((10, 3)), np.zeros((10, 3)), 0, 5, blocks, carry)
    with pytest.raises(ValueError):
        core.accumulate(y, pred[:9], lo, hi, 0, 5, blocks, carry)
    with pytest.raises(TypeError):  # the blocks are written: no silent copy
        core.accumulate(y, pred, lo, hi, 0, 5, blocks.astype(np.float32), carry)
    core.accumulate(y, pred, lo, hi, 0, 5, blocks, carry)
    assert blocks[:, M.N].tolist() == [5.0, 5.0]


def test_accumulate_refuses_a_carry_with_no_count():
    """A carried state whose count is zero (but whose minimum is set) divides by zero."""
    carry = np.array([-1.0, 0.0, INF, -INF])
    with pytest.raises(ZeroDivisionError):
        core.accumulate(np.ones(1), np.ones(1), np.zeros((1, 0)), np.zeros((1, 0)), 0, 1,
                        np.zeros((1, M.POINT)), carry)  # fmt: skip
