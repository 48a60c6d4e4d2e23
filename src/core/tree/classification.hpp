// The classification task of a tree (Hoeffding classification trees: VFDT's Gaussian rule,
// ACTSER's extremely randomised one): how it learns and predicts a row, the C++ side of
// streamforest/tree_kinds/classification.py.  The task's interface is the one of
// tree/regression.hpp (see tree/passes.hpp).
//
// ``y`` is a class index ``0 .. K-1`` (a float in the passes), ``K`` the width of the class
// fields (leaves/class_leaves.hpp); a leaf answers with its majority class, naive Bayes or
// adaptive naive Bayes, and learns each row with the votes it had for it.  The split rule
// learns at an active leaf through its ``class_learn_at_leaf``.  With alternate subtrees
// (ACTSER, thesis §5.2.3) each split node runs Page-Hinkley on the 0/1 errors of the tree's
// predictions that pass it, grows an alternate when it fires and keeps the better subtree by
// McNemar's test.
//
// Invariant: as the regression task's, ``ints[I_NSEEN]`` counts every row given to learning,
// so a memo of a row (leaf node, rows seen, majority and naive Bayes votes) is valid exactly
// while that count is unchanged.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree::classification {

/// Learn one row (room checked) in a batch pass: false (a classification tree adapts in
/// place, it has no drift signal for its owner).
bool learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w);

/// Learn one row in a per-example pass: ``(class predicted before learning, false)``; a row
/// of weight 0 is only counted.  Column ``t`` of the memo ``M`` holds the row's leaf and votes
/// when the tree has not changed since a prediction left them.
Step learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                        Mat<double> M, i64 t);

/// ``out.row(i)``: the tree's class probabilities for row ``x``.
void predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out, i64 i);

/// Keep tree ``t``'s leaf node and votes of a row in the memo ``M`` (rows 0-3 of its column).
void remember(Mat<double> M, i64 t, const TreeRef& st, i64 node, i64 mc, i64 nb);

/// What a new root leaf needs for the task (the class fields).
void init_task_fields(const TreeRef& st);

/// The thesis' Algorithm 5.2 at split node ``n`` for a 0/1 error (the node's row of
/// ``nd_detector``): true when it fires.
bool page_hinkley_01(const TreeRef& st, ParamRef prm, i64 n, double err);

/// What a node does with its alternate after ``seen`` examples, ``b`` of them right only by
/// the alternate and ``c`` only by the original subtree: 1 adopt, -1 discard, 0 wait (a
/// decision every ``period`` examples: ``chi2 = (b - c)^2 / (b + c) > crit`` keeps the better
/// one; after ``10 period`` undecided, the alternate is adopted unless it is worse).
i64 mcnemar_verdict(double b, double c, double seen, i64 period, double crit);

}  // namespace sf::tree::classification
