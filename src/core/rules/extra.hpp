// The two-stage extremely randomised split of ATSER (Seah's thesis, ch. 4, Algorithms 4.2-4.3):
// ported from the numba-era streamforest/tree_kinds/extra_split.py, with the rule's attempt and
// split (splitting.py's ``_attempt_extra_split`` / ``_split_extra``) and its part of learning a row
// (leaf_learning.py's ``_extra_learns``).  The rule's table line is ``extra_rule`` below.
//
// 1. A new leaf buffers its first ``m_min`` examples (``lf_buffer``: target, weight,
//    features).  At the ``m_min``-th it draws one random candidate per feature it may split on
//    (``lf_mask``): a numeric threshold uniform between the smallest and largest value
//    buffered, or for a nominal feature a random salt sending every category to a fixed random
//    side (``cat_goes_left``; ACTSER's salt splits the buffered categories, see
//    ``NominalCandidate``).  The buffered examples are replayed into the candidates' sides.
// 2. Every later example updates, per candidate, the target statistic of its side
//    (``lf_candidate``).
// 3. Every grace period the candidates are compared by variance reduction; the best splits
//    when ``VR(second) / VR(best) < 1 - eps``, or, once ``eps < tau``, one drawn among those
//    within the bound of the best.
//
// Invariants: a candidate's threshold ``lf_candidate[leaf, j, XC_THR]`` is NaN exactly when
// feature ``j`` has no candidate; its sides hold the statistics of the examples (with the
// feature present) the leaf saw since it had ``m_min``; a classifier's candidates have no side
// columns (``lf_candidate`` of fewer than ``XC_RM2 + 1`` columns) and keep only thresholds here.
#pragma once

#include "common/numeric.hpp"
#include "common/rng.hpp"
#include "common/stats.hpp"
#include "tree/split_rule.hpp"

namespace sf::rules {

/// The fixed random side of category ``code`` (a float code, -1 for unseen) under a
/// candidate's (or split node's) ``salt``: a hash of both, so no per-category storage
/// (inline: routing calls it at every salted split node).
inline bool cat_goes_left(double salt, double code) {
  // np.uint64(np.int64(salt)) + np.uint64(np.int64(code) + 1) * GOLDEN, wrapping as numba does
  u64 z = static_cast<u64>(to_i64(salt)) + (static_cast<u64>(to_i64(code)) + 1u) * rng::GOLDEN;
  return (rng::mix64(z) & 1u) == 0u;
}

/// The split rule of ATSER's extremely randomised split: what its line in the rules' table
/// (tree/split_rules.cpp) names.  (Its ``class_learn_at_leaf`` is the classification unit's.)
const tree::SplitRule& extra_rule();

/// How a nominal candidate's salt is drawn.
enum class NominalCandidate {
  /// Any salt: every category, buffered or not, on a random side (ATSER, thesis ch. 4); all
  /// the categories a leaf sees may fall on one side, a candidate that can never split.
  any_salt,
  /// A salt splitting the categories the leaf buffered when they are at least two, each such
  /// binary split equally likely; later categories on random sides (ACTSER, thesis §5.2.1:
  /// "every possible binary split between the observed categories is considered with equal
  /// probability").
  split_buffered,
};

/// Stage 1 or 2 for example ``(x, y, w)`` (``w > 0``) at ``leaf``: buffer it (drawing the
/// candidates at the ``m_min``-th, nominal ones as ``kind`` says), or add it to the side of
/// each candidate it falls on (a classification tree, whose candidates have no side columns,
/// calls it only while buffering).
void extra_observe(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x, double y,
                   double w, i64 nfeat, NominalCandidate kind);

/// Stage 3: the feature to split ``leaf`` on, or -1 (counts the attempt; may draw among ties).
i64 choose_extra_split(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf);

/// A candidate's threshold (or salt) and the target statistics of its two sides.
struct Sides {
  double thr;
  stats::Stat left, right;
};

/// ``(threshold or salt, left statistic, right statistic)`` of candidate ``j`` of ``leaf``.
Sides extra_sides(const tree::TreeRef& st, i64 leaf, i64 j);

/// The extremely randomised split's attempt: split on the chosen candidate, or freeze the tree
/// at ``max_leaves``.
void attempt_extra_split(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf);

/// Split ``leaf`` on its random candidate of feature ``f``.
void split_extra(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, i64 f);

/// The rule's part of learning a row at an active leaf (its ``learn_at_leaf``): observe it,
/// try a split every grace period.
void extra_learns(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x, double y,
                  double w, i64 nfeat);

}  // namespace sf::rules
