// Streaming gradient-boosted trees (SGBTRegressor's passes).
//
// The boosting steps are the trees of one arena, tree ``t`` being step ``t``.  One row goes
// through every step in order (row-major passes, unlike a bagging forest's tree-major ones):
// step ``t`` learns the Newton step of the squared loss at the raw score ``F_t`` of the steps
// before it (target ``y - F_t``, weight ``w``), then its prediction after learning, scaled by
// the learning rate, is added: ``F_{t+1} = F_t + lr * f_t(x)``.  The model's prediction is
// ``lr * sum_t f_t(x)`` summed in step order; a prequential pass reports, for each row, that
// sum with every tree as it was before the row.  The kernels see the targets less the model's
// base score (Python's BoostEngine subtracts and adds it back).
//
// The label guard (common/label_guard.hpp, its state ``guard`` owned by the model) sees each
// row's target before the steps do: a row whose target it flags (one far outside the range of
// the targets learnt so far) goes through every step with weight 0 and its target clipped into
// that range, so no leaf learns it; its prediction is reported as any other's.  Without a flag
// the steps learn the row as they would without a guard.
//
// A per-row pass returns ``DONE``, ``DRIFTED`` (some step's own drift detector fired: the owner
// replaces that tree before the next row) or the index of a step that lacks room: the steps
// before it have learnt the row, its partial sums are in ``acc`` (``acc[0]`` the raw score after
// them, ``acc[1]`` the sum of their predictions before learning, ``acc[2]`` and ``acc[3]`` the
// target and weight the guard let through), and the call is repeated with ``t0`` = that step
// once the owner grew its tree (the guard sees the row once).
//
// Invariants the bindings check: every tree is a regression tree this core runs, rows hold its
// features, ``acc`` has ACC_SIZE items, ``drifted`` one per tree, ``guard`` GUARD_SIZE.
#pragma once

#include <utility>

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::boosting {

inline constexpr i64 FRESH = -1;  // t0 of a new row
inline constexpr i64 DONE = -1;
inline constexpr i64 DRIFTED = -2;
inline constexpr i64 ACC_SIZE = 4;

/// Every step learns row ``(x, y, w)`` (from step ``t0``, or all of them from ``FRESH``);
/// returns ``DONE``, ``DRIFTED`` or the step that lacks room.
i64 boost_one(const tree::Arena& A, Vec<const double> x, double y, double w, double lr, i64 t0,
              Vec<double> acc, Vec<i8> drifted, Vec<double> guard);

/// Rows ``start..`` of ``X`` through every step (row ``start`` resumes at step ``t0``);
/// ``out[i]``: the model's prediction of row i before learning it.  Returns ``(row, status)``:
/// ``(n, DONE)``; ``(i + 1, DRIFTED)`` after a row on which a detector fired; ``(i, t)`` when
/// step ``t`` lacks room for row ``i`` (resume there with ``t0 = t``).
std::pair<i64, i64> boost_rows(const tree::Arena& A, Mat<const double> X, Vec<const double> y,
                               Vec<const double> w, double lr, i64 start, i64 t0,
                               Vec<double> acc, Vec<i8> drifted, Vec<double> guard,
                               Vec<double> out);

/// ``lr * sum_t f_t(x)``, in step order.
double boost_predict_one(const tree::Arena& A, Vec<const double> x, double lr);

/// ``out[i]``: ``boost_predict_one`` of row i.
void boost_predict_rows(const tree::Arena& A, Mat<const double> X, double lr, Vec<double> out);

}  // namespace sf::boosting
