"""The columns of an aggregated Mondrian forest's arrays and the entries of its parameters (the
compiled core's ``src/core/mondrian/layout.hpp``; :mod:`streamforest.mondrian.state` describes
the arrays).  Plain constants: reading them compiles and loads nothing."""

from __future__ import annotations

# columns of a node record (``nodes[t, v]``); links are stored as floats (exact integers)
LEFT, RIGHT, FEATURE, THRESHOLD, COUNT, MIX = 0, 1, 2, 3, 4, 5  # what routing and predicting read
PARENT, TIME, SPLIT_TIME = 6, 7, 8  # birth time; the children's (inf for a leaf)
LOG_WEIGHT, LOG_TREE, LEFT_TREE, RIGHT_TREE = 9, 10, 11, 12  # (copies of the children's LOG_TREE)
VALUE = 13  # then K value columns (regression: the targets' mean, K = 1; else each class's
# weight), then the range box: lower and upper bound of each feature (NaN: none seen yet)
# columns of ``meta`` (int64, (T, 2))
N_NODES, N_SEEN = 0, 1
# entries of the parameters (float64 array)
P_STEP, P_AGGREGATE, P_DIRICHLET, P_SPLIT_PURE, P_MAX_NODES, P_CLASSES = 0, 1, 2, 3, 4, 5
N_PARAMS = 6
