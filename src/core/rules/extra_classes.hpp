// The extremely randomised split's classification part (ACTSER, Seah's thesis §5.2.1): the C++
// side of class_splitting.py's ``_choose_extra``, ``_extra_observe``, ``_split_extra_class`` and
// classification.py's ``_extra_class_learns`` (the extra rule's ``class_learn_at_leaf``, wired in
// the rules' table).
//
// The candidates are ATSER's (rules/extra: one random threshold or category salt per feature,
// drawn at the leaf's ``m_min``-th example), but a nominal one always splits the categories the
// leaf buffered when they are two or more (``NominalCandidate::split_buffered``: the thesis'
// "binary split between the observed categories"; any salt could leave them all on one side, a
// candidate that never splits); each keeps the class weights of its two sides
// (``lf_candidate_classes(leaf, j, 2k + side)``), replayed from the buffered examples when the
// candidates are drawn.  Every grace period of weight at an impure leaf the candidates are
// scored by information gain; the best splits when ``IG(best) - IG(second) > eps``, or once
// ``eps < tau`` one drawn among those within ``eps`` of the best; the children start with the
// class weights of their sides.
//
// Invariant: a candidate's class weights are those of the examples with the feature present
// the leaf saw since it had ``m_min`` (the buffered ones included).
#pragma once

#include "tree/split_rule.hpp"

namespace sf::rules {

/// Stage 1 or 2 of example ``(x, y, w)`` at ``leaf``: buffer it (drawing the candidates and
/// replaying the buffer into their class weights at the ``m_min``-th), or add its weight to
/// the side of each candidate it falls on.
void extra_class_observe(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x,
                         double y, double w, i64 nfeat);

/// The feature of ACTSER's split at ``leaf``, or -1 (counts the attempt; may draw among ties).
i64 choose_extra(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf);

/// Split ``leaf`` on its candidate of feature ``f``; the children start with its sides' class
/// weights.
void split_extra_class(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, i64 f);

/// The rule's part of learning a row at an active leaf: observe it, try a split every grace
/// period of weight at an impure leaf (or freeze the tree at ``max_leaves``).
void extra_class_learns(const tree::TreeRef& st, tree::ParamRef prm, i64 leaf, tree::Row x,
                        double y, double w, i64 nfeat);

}  // namespace sf::rules
