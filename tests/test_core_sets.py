"""The compiled core's prediction-set kernels (``streamforest._core.sets``): ConformalClassifier's
conformity scores (LAC, APS, RAPS), its per-row uniforms and its FIFO calibration set, against
their definitions (plain Python: SplitMix64, sorted lists), and what they refuse."""

import bisect
import math

import numpy as np
import pytest

from streamforest import _core

core = _core.sets
INF = math.inf


def test_row_uniforms_are_splitmix64_of_the_position():
    mask = (1 << 64) - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    for seed, start in [(0, 0), (12345, 7), (2**63 - 1, 2**40), (3, 2**63 - 30)]:
        out = np.empty(20)
        core.row_uniforms(seed, start, out)
        s = (seed * 0x9E3779B97F4A7C15) & mask
        expected = [(mix((s + start + i) & mask) >> 11) / 2.0**53 for i in range(20)]
        assert out.tolist() == expected
        part = np.empty(5)
        core.row_uniforms(seed, start + 15, part)
        assert part.tolist() == expected[15:]  # a row's uniform: its position's, however cut


def _scores_by_definition(P, U, known, kind, penalty, k_reg):
    n, K = P.shape
    out = np.full((n, K + 1), np.nan)
    for i in range(n):
        kn = int(known[i])
        ranked = sorted(range(kn), key=lambda k: (-P[i, k], k))
        cum = 0.0
        for r, k in enumerate(ranked):
            if kind == core.LAC:
                out[i, k] = 1.0 - P[i, k]
            else:
                s = cum + U[i] * P[i, k]
                if kind == core.RAPS:
                    s += penalty * max(0, r + 1 - k_reg)
                out[i, k] = s
            cum += P[i, k]
        out[i, K] = 1.0 if kind == core.LAC else cum
        if kind == core.RAPS:
            out[i, K] += penalty * max(0, kn + 1 - k_reg)
    return out


def _probabilities(rng, n, K, ties=True):
    P = rng.random((n, K))
    if ties:
        P[:, : K // 2] = np.round(P[:, : K // 2], 1)  # ties, broken by column
    P /= P.sum(axis=1, keepdims=True)
    return np.ascontiguousarray(P)


@pytest.mark.parametrize("kind", ["LAC", "APS", "RAPS"])
def test_class_scores_by_definition(kind):
    rng = np.random.default_rng(1)
    for K in (0, 1, 2, 5):
        P = _probabilities(rng, 30, K) if K else np.zeros((30, 0))
        U = rng.random(30)
        known = rng.integers(0, K + 1, 30).astype(np.int64)
        out = np.empty((30, K + 1))
        code = getattr(core, kind)
        core.class_scores(P, U, known, code, 0.3, 2, out)
        expected = _scores_by_definition(P, U, known, code, 0.3, 2)
        np.testing.assert_array_equal(out, expected)


class FifoSet:
    """The calibration set by definition: a list of scores in arrival order."""

    def __init__(self, C):
        self.C, self.items = C, []

    def threshold(self, alpha):
        m = len(self.items)
        k = max(1, math.ceil((m + 1) * (1 - alpha) - 1e-9))
        return INF if k > m else sorted(self.items)[k - 1]

    def add(self, s):
        self.items = (self.items + [s])[-self.C :]


@pytest.mark.parametrize("C", [1, 2, 9, 100])
def test_calibration_pass_is_a_fifo_of_sorted_scores(C):
    rng = np.random.default_rng(C)
    levels = np.array([0.1, 0.5, 1e-9, 1 - 1e-9, 0.0, 1.0])
    ring, srt, state = np.zeros(C), np.zeros(C), np.zeros(2, np.int64)
    ref = FifoSet(C)
    for _chunk in range(5):
        scores = np.round(rng.random(40), 2)
        use = rng.random(40) < 0.8
        thr = np.empty((40, levels.shape[0]))
        core.calibration_pass(scores, use, levels, ring, srt, state, thr)
        for i in range(40):
            assert thr[i].tolist() == [ref.threshold(a) for a in levels]
            if use[i]:
                ref.add(scores[i])
        assert state[0] == len(ref.items) and srt[: state[0]].tolist() == sorted(ref.items)
        out = np.empty(levels.shape[0])
        core.thresholds(srt, state, levels, out)
        assert out.tolist() == [ref.threshold(a) for a in levels]
    # a learning-only pass (no levels) still adds the scores
    core.calibration_pass(np.array([0.5]), np.array([True]), levels, ring, srt, state,
                          np.empty((1, 0)))  # fmt: skip
    ref.add(0.5)
    assert srt[: state[0]].tolist() == sorted(ref.items)
    assert bisect.bisect_left(sorted(ref.items), 0.5) >= 0


def test_sets_refuse_what_they_would_overrun():
    P = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError):  # a known count beyond the columns
        core.class_scores(P, np.ones(2), np.array([4, 1]), core.APS, 0.0, 0, np.empty((2, 4)))
    with pytest.raises(ValueError):  # no column for the unknown label's score
        core.class_scores(P, np.ones(2), np.array([3, 1]), core.APS, 0.0, 0, np.empty((2, 3)))
    with pytest.raises(ValueError):  # more held than the set's capacity
        core.calibration_pass(np.ones(2), np.ones(2, np.bool_), np.array([0.1]), np.zeros(3),
                              np.zeros(3), np.array([4, 0]), np.empty((2, 1)))  # fmt: skip
    with pytest.raises(ValueError):
        core.thresholds(np.zeros(3), np.array([5, 0]), np.array([0.1]), np.empty(1))
    with pytest.raises(TypeError):  # the state is written: no silent copy
        bad = np.array([0, 0], np.int32)
        core.calibration_pass(np.ones(2), np.ones(2, np.bool_), np.array([0.1]), np.zeros(3),
                              np.zeros(3), bad, np.empty((2, 1)))  # fmt: skip
