"""Recovery from a label glitch (issue 48): one absurd label among normal rows is forgotten.

The label guard (``src/core/common/label_guard.hpp``) sets aside a label far outside the range of
those learnt so far: the models learn the row with weight 0.  The recovery tests compare a run
with one glitch label to the same run without it (``benchmarks/glitch_recovery.py`` does the
same on the whole registry at 50k rows); before the guard the glitch stayed in the leaves (mean
absolute error millions of times the glitch-free one 10k rows later).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import streamforest._core as _core

from streamforest import registry
from streamforest.streams import BUILTIN, Friedman, make

WARM, AFTER, LAST = 5000, 10_000, 8000  # rows before the glitch, after it, scored at the end
CHUNK = 500
GUARDED = ("normalized-cp", "sgbt", "gaussian", "qrf", "conformal-qrf", "cp-approx", "cp-exact",
           "forest", "tree", "atser-obag", "aborf", "amf")  # fmt: skip


@pytest.fixture(scope="module")
def stream():
    return Friedman(function=1, n=WARM + 1 + AFTER, seed=3).arrays()


def prequential(name, X, y, one_at=None):
    """Each row's prediction (and interval at 0.1) before the model learns it; the row
    ``one_at`` goes alone through ``predict_one`` and ``learn_one``."""
    m = registry.build(name, {}, seed=0)
    pred = np.empty(y.shape[0])
    lo, hi = np.full(y.shape[0], -np.inf), np.full(y.shape[0], np.inf)
    cuts = {*range(0, y.shape[0], CHUNK), y.shape[0]}
    cuts = sorted(cuts if one_at is None else cuts | {one_at, one_at + 1})
    for s, e in zip(cuts[:-1], cuts[1:], strict=True):
        if s == one_at:
            x = {f"x{j}": float(v) for j, v in enumerate(X[s])}
            pred[s] = m.predict_one(x)
            m.learn_one(x, float(y[s]))
            continue
        out = m.predict_learn_many(X[s:e], y[s:e])
        if isinstance(out, tuple):
            pred[s:e], lo[s:e], hi[s:e] = out[0], out[1][:, 0], out[1][:, 1]
        else:
            pred[s:e] = out
    return m, pred, lo, hi


def tail_mae(pred, y):
    return float(np.abs(pred - y)[-LAST:].mean())


@pytest.mark.parametrize("name", GUARDED)
def test_a_glitch_label_is_forgotten(name, stream):
    X, y = stream
    _, clean, *_ = prequential(name, X, y)
    yg = y.copy()
    yg[WARM] = 1e12
    _, glitch, *_ = prequential(name, X, yg)
    assert tail_mae(glitch, y) <= 1.05 * tail_mae(clean, y)


@pytest.mark.parametrize("name", ["normalized-cp", "sgbt", "gaussian", "qrf"])
def test_a_glitch_learnt_one_example_at_a_time_is_forgotten(name, stream):
    X, y = stream
    _, clean, *_ = prequential(name, X, y, one_at=WARM)
    yg = y.copy()
    yg[WARM] = -1e12
    m, glitch, *_ = prequential(name, X, yg, one_at=WARM)
    assert tail_mae(glitch, y) <= 1.05 * tail_mae(clean, y)
    if name != "sgbt":
        assert m.n_flagged_labels == 1


@pytest.mark.parametrize("name", GUARDED)
def test_a_glitch_among_examples_learnt_one_at_a_time_is_set_aside(name, stream):
    """Every row through ``learn_one`` (the per-example fast paths, once the model has its
    trees): the glitch is flagged once, not learnt, and the guard counts every label."""
    X, y = stream
    m = registry.build(name, {}, seed=0)
    for i in range(3001):
        x = {f"x{j}": float(v) for j, v in enumerate(X[i])}
        m.learn_one(x, 1e12 if i == 2000 else float(y[i]))
    state = m.label_guard_  # (SGBT: its front's, which flags first)
    assert state[_core.common.GUARD_FLAGGED] == 1 and state[0] == 3001
    assert np.abs(m.predict(X[:300]) - y[:300]).mean() < 5


def test_normalized_conformal_intervals_after_a_glitch(stream):
    """The default model: its centre, its intervals' error rate, its error level; the glitch's
    score leaves the calibration set ``calibration_size`` rows later."""
    X, y = stream
    yg = y.copy()
    yg[WARM] = 1e6
    c_model, clean, c_lo, c_hi = prequential("normalized-cp", X, y)
    g_model, glitch, lo, hi = prequential("normalized-cp", X, yg)
    tail = slice(-LAST, None)
    assert tail_mae(glitch, y) <= 1.05 * tail_mae(clean, y)
    mer = float(np.mean((y[tail] < lo[tail]) | (y[tail] > hi[tail])))
    clean_mer = float(np.mean((y[tail] < c_lo[tail]) | (y[tail] > c_hi[tail])))
    assert abs(clean_mer - 0.1) <= 0.01 and abs(mer - 0.1) <= 0.01
    assert g_model.level_[0] == pytest.approx(c_model.level_[0], rel=0.05)  # (it skipped it)
    m = registry.build("normalized-cp", {}, seed=0)
    m.learn_many(X[: WARM + 1], yg[: WARM + 1])
    assert m.n_flagged_labels == 1
    assert m.calibration_scores.max() > 1e4  # its score is in the calibration set
    c = m.calibration_size
    m.learn_many(X[WARM + 1 : WARM + 1 + c], y[WARM + 1 : WARM + 1 + c])
    assert m.calibration_scores.max() < 100  # and out of it


# --- the guard itself --------------------------------------------------------------------------
def reference_guard(state, y, w):
    """The guard's definition (label_guard.hpp), one label."""
    c = _core.common
    K, WARMUP, RELAX = c.GUARD_WIDTHS, c.GUARD_WARMUP, c.GUARD_RELAX  # noqa: N806
    if not w > 0 or not math.isfinite(y):
        return y
    n, lo, hi = state[0], state[1], state[2]
    state[0] = n + 1
    if not n > 0:
        state[1] = state[2] = y
        return y
    f = max(state[3], K)
    if n >= WARMUP and hi > lo:
        m = f * (hi - lo)
        if y < lo - m or y > hi + m:
            state[3] = min(2 * f, 1e300)
            state[4] += 1
            return lo if y < lo else hi
    state[1], state[2] = min(lo, y), max(hi, y)
    state[3] = max(f * (1 - 1 / RELAX), K)
    return y


def labels_with_glitches(seed, n=3000):
    rng = np.random.default_rng(seed)
    y = rng.normal(10, 3, n)
    y[rng.random(n) < 0.01] = rng.choice([1e12, -1e12, 1e6, 500.0, -400.0], size=1)[0]
    y[2000:] *= 1000.0  # a change of scale
    w = np.where(rng.random(n) < 0.05, 0.0, 1.0)
    return y, w


@pytest.mark.parametrize("seed", range(4))
def test_guard_is_its_definition(seed):
    y, w = labels_with_glitches(seed)
    ref = np.zeros(_core.common.GUARD_SIZE)
    expected = np.array([reference_guard(ref, v, u) for v, u in zip(y, w, strict=True)])
    state = np.zeros(_core.common.GUARD_SIZE)
    out, flags = np.empty(y.shape[0]), np.empty(y.shape[0], np.int8)
    count = _core.common.guard_labels(state, y, w, out, flags)
    assert np.array_equal(out, expected) and np.array_equal(state, ref)
    assert np.array_equal(flags, (expected != y).astype(np.int8)) and count == flags.sum()
    one = np.zeros(_core.common.GUARD_SIZE)  # the per-example call: the same
    assert [_core.common.guard_label(one, v, u) for v, u in zip(y, w, strict=True)] == list(out)
    assert np.array_equal(one, state)


def test_guard_lets_a_change_of_scale_through():
    y = np.concatenate([np.linspace(0, 30, 500), 1000 * np.linspace(0, 30, 500)[::-1]])
    state = np.zeros(_core.common.GUARD_SIZE)
    out, flags = np.empty(y.shape[0]), np.empty(y.shape[0], np.int8)
    n = _core.common.guard_labels(state, y, np.ones(y.shape[0]), out, flags)
    assert 1 <= n <= math.log2(1000 / _core.common.GUARD_WIDTHS) + 1  # a few, then the new scale
    assert not flags[520:].any()


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_guard_never_flags_a_normal_stream(name):
    """The built-in streams, drifts included: nothing flagged, so the models learn every row as
    they did without a guard (as on the result fingerprints' stream), but for the one drift to
    a concept of another scale: Friedman #2's ``gra`` concept has labels up to 170 times the
    range of the first half's, and its first two are taken for glitches."""
    _, y = make(name, n=100_000, seed=1).arrays()
    state = np.zeros(_core.common.GUARD_SIZE)
    out, flags = np.empty(y.shape[0]), np.empty(y.shape[0], np.int8)
    count = _core.common.guard_labels(state, y, np.ones(y.shape[0]), out, flags)
    assert count == (2 if name == "friedman2-gra" else 0)


def test_guard_refuses_a_short_state():
    with pytest.raises(ValueError):
        _core.common.guard_label(np.zeros(2), 1.0, 1.0)
    y = np.ones(3)
    with pytest.raises(ValueError):
        _core.common.guard_labels(np.zeros(5), y, np.ones(2), np.empty(3), np.empty(3, np.int8))


@pytest.mark.parametrize("name", ["normalized-cp", "sgbt", "qrf"])
def test_a_saved_model_keeps_its_guard(name, stream, tmp_path):
    import streamforest

    X, y = stream
    yg = y[:2000].copy()
    yg[1500] = 1e12
    m = registry.build(name, {}, seed=0).learn_many(X[:2000], yg)
    path = tmp_path / "m.sf"
    streamforest.save(m, path)
    back = streamforest.load(path)
    state = m.label_guard_  # (SGBT: its front's, which flags first: its steps' sees weight 0)
    assert state[_core.common.GUARD_FLAGGED] == 1
    assert np.array_equal(back.label_guard_, state)
    assert np.array_equal(back.predict(X[2000:2100]), m.predict(X[2000:2100]))
