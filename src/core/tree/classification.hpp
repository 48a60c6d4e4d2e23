// The classification task of a tree (Hoeffding classification trees): how it learns and
// predicts a row, the C++ side of streamforest/tree_kinds/classification.py.  The task's
// interface is the one of tree/regression.hpp (see tree/passes.hpp).
//
// OWNER: the `classification` helper fills this unit.  What the passes call of it is declared
// here; tree/classification.cpp holds placeholders until then.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree::classification {

/// Learn one row (room checked) in a batch pass: whether the tree's drift detector fired.
bool learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w);

/// Learn one row in a per-example pass, with column ``t`` of the memo ``M``.
Step learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                        Mat<double> M, i64 t);

/// ``out.row(i)``: the tree's class probabilities for row ``x``.
void predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out, i64 i);

/// What a new root leaf needs for the task (the class fields).
void init_task_fields(const TreeRef& st);

}  // namespace sf::tree::classification
