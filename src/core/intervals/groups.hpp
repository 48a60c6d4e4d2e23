// Group-conditional (Mondrian) calibration of an interval method: each group's own bounded
// window of scores, and the pooled window of every row, kept sorted (scores.hpp's sorted sets).
//
// A *cell* is one window: cell 0 the pool, cells 1.. the groups (of every family: the Python
// side numbers each (family, value) pair with a cell of its own, so the cells of a row's
// families are distinct).  Cell ``c``'s window: ``meta(c, 0)`` the ring's head (the slot the
// next score takes), ``meta(c, 1)`` its size; its sorted set ``order.row(c)``, ``pos.row(c)``,
// ``ss.row(c)`` over the ``W`` slots (``W`` the matrices' columns: the same bound for every
// cell, the method's calibration size).  A full window replaces its oldest score (FIFO).
//
// A row's score is taken on the base method's interval at a reference level, ``[lo, hi]``:
// ``m = (lo + hi) / 2``, ``h = (hi - lo) / 2`` and ``s = |y - m| / h`` (``h == 0``: 0 when
// ``y == m``, else ``inf``; a base interval that is not finite: ``inf``, so no row is lost and
// a row the base could not bound counts as one no finite interval covers).  The row's
// interval at level ``alpha`` is ``m +- q h`` with ``q`` its threshold at ``alpha``:
//
// - a cell's quantile is scores.hpp's ``sorted_half_width``: the ``ceil((n + 1)(1 - alpha))``-th
//   smallest of its ``n`` scores, ``inf`` while that rank exceeds ``n``;
// - a group *borrows* the pool's quantile while its own is infinite, i.e. while
//   ``n < ceil((1 - alpha) / alpha)`` (the young group rule: its own quantile as soon as it
//   exists at that level);
// - a row of several families takes the largest of its families' thresholds (each family's
//   groups then cover at least as often as with that family alone); a row with no group in a
//   family (cell -1: a missing or unseen value) takes the pool's there.
//
// Learning a row puts its score into the pool and into each of its cells (every row reaches
// the pool, and its group of each family it has one in).
//
// Prediction sets (``group_set_pass``) use the same windows and rule on the sets' conformity
// scores themselves (sets/conformal.hpp): no base interval, the threshold is the quantile ``q``,
// and a row joins the windows only when it has a score (``use``: the model gave it a
// probability, as the sets' marginal calibration).
//
// Invariants the binding checks before a pass: every cell index of ``ids`` is -1 or a cell,
// and every cell the pass touches (the pool and the rows' cells) has a consistent sorted set
// of ``meta(c, 1)`` members among ``W`` slots with its head inside ``W``.
#pragma once

#include "common/views.hpp"

namespace sf::intervals {

/// Rows in order: ``out_lo(i, a)``, ``out_hi(i, a)`` from the windows before row ``i``, then
/// (``learn``) row i's score enters the pool and its cells ``ids.row(i)``.
void group_pass(Mat<const i64> ids, Vec<const double> lo, Vec<const double> hi,
                Vec<const double> y, bool learn, Vec<const double> alphas, Mat<i64> meta,
                Mat<i64> order, Mat<i64> pos, Mat<double> ss, Mat<double> out_lo,
                Mat<double> out_hi);

/// Prediction sets: rows in order, ``thr(i, a)`` the threshold of row i's cells at ``alphas[a]``
/// from the windows before it (``inf``: every class), then, when ``use[i]``, its score
/// ``scores[i]`` enters the pool and its cells.  ``thr`` may have no columns (learning only).
void group_set_pass(Mat<const i64> ids, Vec<const double> scores, Vec<const bool> use,
                    Vec<const double> alphas, Mat<i64> meta, Mat<i64> order, Mat<i64> pos,
                    Mat<double> ss, Mat<double> thr);

/// A row's score on its base interval ``[lo, hi]`` (see above).
double group_score(double lo, double hi, double y);

/// The threshold of a row whose cells are ``cells`` at level ``alpha`` (see above).
double group_threshold(Vec<const i64> cells, double alpha, Mat<const i64> meta,
                       Mat<const double> ss);

/// Score ``v`` enters cell ``c``'s window (its oldest score leaves a full window).
void group_push(i64 c, double v, Mat<i64> meta, Mat<i64> order, Mat<i64> pos, Mat<double> ss);

}  // namespace sf::intervals
