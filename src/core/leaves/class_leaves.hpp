// A classification leaf: its class weights and per-feature class statistics, and what it
// predicts (majority class, naive Bayes, adaptive naive Bayes): the C++ side of
// streamforest/tree_kinds/class_leaves.py.
//
// - ``lf_class_weights(leaf, k)``: the weight of class ``k`` at the leaf (K = its columns);
// - ``lf_class_stats(leaf, j, 3k ..)``: per feature and class the weight, mean and m2 of the
//   values (a nominal feature: only the weight of present values; its ``GS_NCATS`` slot counts
//   the categories seen at the leaf, the Laplace smoothing's denominator);
// - ``lf_nominal_class_weights(leaf, s, code * K + k)``: per *nominal* feature (row ``s``: the
//   nominal features before it, ``nominal_slot``), category and class a weight; a slot past its
//   rows, a code past its room: nothing held;
// - ``lf_err(leaf, 0 / 1)``: the weight the majority class / naive Bayes predicted correctly
//   (adaptive naive Bayes answers with the better one, ties: majority class).
//
// The learning step's naive Bayes class comes from ``nb_class_fast`` (a few logarithms per
// class), certified equal to the per-feature loop's ``nb_class``, which runs when it cannot
// certify, so a tree is exactly the one the per-feature loop learns.
//
// Invariants: ``0 <= y < K`` for a learnt class index; ``nfeat`` is at most the feature
// columns of the class fields and of ``x``; ``out`` holds at least ``K`` items.
#pragma once

#include <cmath>
#include <limits>

#include "common/numeric.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::leaves {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

// log(2 pi), math.log(2.0 * math.pi) as Python computed it
inline constexpr double LOG_2PI = 0x1.d67f1c864beb4p+0;
inline constexpr i64 N_THRESHOLDS = 10;  // SPLIT_GAUSS: candidate thresholds per feature
inline constexpr double VAR_FLOOR = 1e-9;  // relative floor of a naive Bayes variance
inline constexpr i64 GS_NCATS = 1;  // a nominal feature's slot counting its categories

/// The category room of the nominal class weights (codes ``0 .. C-1``).
inline i64 n_cats(const TreeRef& st) {
  i64 K = st.lf_class_weights().cols();
  return K > 0 ? floordiv(st.lf_nominal_class_weights().n2, K) : 0;
}

/// The row of nominal feature ``j`` in ``lf_nominal_class_weights``: the nominal features
/// before it.
inline i64 nominal_slot(const TreeRef& st, i64 j) {
  Vec<i8> nominal = st.ft_nominal();
  i64 s = 0;
  for (i64 i = 0; i < j; ++i) s += nominal[i] != 0;
  return s;
}

/// ``lf_nominal_class_weights(leaf, slot, i)``, 0 for a slot the tree does not hold.
inline double ncc(const TreeRef& st, i64 leaf, i64 slot, i64 i) {
  Cube<double> c = st.lf_nominal_class_weights();
  return slot < c.n1 ? c(leaf, slot, i) : 0.0;
}

struct Counts {
  double total;
  i64 mc;       // the majority class (the first of the largest weights)
  i64 present;  // classes of positive weight
};

/// ``(total weight, majority class, classes present)`` of ``leaf``'s class weights.
inline Counts class_counts(const TreeRef& st, i64 leaf) {
  Mat<double> cw = st.lf_class_weights();
  double total = 0.0;
  i64 mc = 0;
  double best = -1.0;
  i64 present = 0;
  for (i64 k = 0; k < cw.cols(); ++k) {
    double c = cw(leaf, k);
    total += c;
    present += c > 0.0;
    if (c > best) {
      best = c;
      mc = k;
    }
  }
  return {total, mc, present};
}

/// The two votes of a leaf: majority class, naive Bayes class (-1: not computed).
struct Votes {
  i64 mc;
  i64 nb;
};

/// Whether the leaf model answers with naive Bayes.
inline bool uses_nb(const TreeRef& st, ParamRef prm, i64 leaf) {
  i64 lm = prm.leaf_model();
  return lm == tree::LEAF_NB || (lm == tree::LEAF_NBA && st.lf_err()(leaf, 1) > st.lf_err()(leaf, 0));
}

/// The leaf model's class from the two votes.
inline i64 choose(const TreeRef& st, ParamRef prm, i64 leaf, i64 mc, i64 nb) {
  return uses_nb(st, prm, leaf) ? nb : mc;
}

/// The first index of the largest of ``p[0..K)`` (0 when ``K <= 1``).
template <class T>
inline i64 argmax(Vec<T> p, i64 K) {
  i64 best = 0;
  for (i64 k = 1; k < K; ++k)
    if (p[k] > p[best]) best = k;
  return best;
}

/// ``log p(k) + sum_j log p(x_j | k)`` at ``leaf`` (``-inf`` for a class without weight).
double nb_score(const TreeRef& st, i64 leaf, Row x, i64 nfeat, i64 k, double total);

/// The naive Bayes class at ``leaf``: the first class of largest ``nb_score`` (``mc`` when
/// every class has weight 0).
i64 nb_class(const TreeRef& st, i64 leaf, Row x, i64 nfeat, double total, i64 mc);

/// ``nb_class`` from three or four logarithms per class, or -1 when it cannot certify it.
i64 nb_class_fast(const TreeRef& st, i64 leaf, Row x, i64 nfeat, double total);

/// ``(majority class, naive Bayes class)`` at ``leaf`` (the majority class twice for
/// majority-class leaves and leaves of one class; class 0 at an empty leaf).
Votes leaf_votes(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat);

/// Class probabilities at ``leaf`` for row ``x`` into ``out[0..K)`` (uniform at an empty
/// leaf).
void leaf_proba(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat, Vec<double> out);

/// ``leaf_proba`` into ``out`` and the votes (the naive Bayes class -1 when the leaf does not
/// answer with naive Bayes and has more than one class: not computed).
Votes leaf_proba_votes(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat,
                       Vec<double> out);

/// Empty naive Bayes statistics, ranges and adaptive counts of a new leaf (its class weights
/// are set by its creator).
void reset_class_leaf(const TreeRef& st, i64 leaf);

/// The class fields of a new tree's root leaf (after ``init_root``).
void init_root_class(const TreeRef& st);

/// The leaf's class weight, statistics and adaptive counts learn ``(x, y, w)`` (``mc``,
/// ``nb``: the leaf's votes for ``x`` before).
void observe_leaf(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                  i64 nfeat, i64 mc, i64 nb);

}  // namespace sf::leaves
