// The kernels of ConformalClassifier:
// conformity scores of classes (LAC, APS, RAPS), the per-row uniforms that randomise APS and
// RAPS, and the pass over a chunk that reads each row's conformal thresholds from the FIFO
// calibration set before adding the row's score.
//
// The calibration set is two arrays of capacity ``C``: ``ring`` (scores in arrival order, the
// FIFO) and ``srt`` (the same scores sorted ascending), with ``state = [m, pos]`` (how many are
// held, the ring slot of the next score).  Adding a score to a full set first removes the
// oldest.  Invariants the bindings check: ``C >= 1``, ``0 <= m <= C``, ``0 <= pos < C``,
// ``srt`` at least ``C`` long; every row's ``known`` count is a column of the scores.
#pragma once

#include "common/views.hpp"

namespace sf::sets {

inline constexpr i64 LAC = 0, APS = 1, RAPS = 2;

/// ``out[i]``: a uniform in [0, 1) that depends only on ``seed`` and the row's position
/// ``start + i`` in the stream: SplitMix64 of ``seed * golden + position``, its top 53 bits.
void row_uniforms(i64 seed, i64 start, Vec<double> out);

/// Conformity score of every class (column) of every row of the probabilities ``P`` (n, K);
/// a larger score is less conforming.  Columns ``known[i] ..`` of row i are NaN (in no set);
/// ``out(i, K)`` is the score of a label that is not among them.  ``kind``: LAC ``1 - p_y``;
/// APS the probability of the classes ranked above ``y`` plus ``U[i] p_y`` (by decreasing
/// probability, ties by column); RAPS APS plus ``penalty * max(0, rank_y - k_reg)``.
void class_scores(Mat<const double> P, Vec<const double> U, Vec<const i64> known, i64 kind,
                  double penalty, i64 k_reg, Mat<double> out);

/// ``out[l]``: the current threshold at ``levels[l]``.
void thresholds(Vec<const double> srt, Vec<const i64> state, Vec<const double> levels,
                Vec<double> out);

/// Rows in order: ``thr(i, l)`` the threshold at ``levels[l]`` from the calibration set as it
/// is before row i, then row i's score ``scores[i]`` joins the set if ``use[i]`` (the oldest
/// leaves when it is full).  ``thr`` may have no columns (learning only).
void calibration_pass(Vec<const double> scores, Vec<const bool> use, Vec<const double> levels,
                      Vec<double> ring, Vec<double> srt, Vec<i64> state, Mat<double> thr);

}  // namespace sf::sets
