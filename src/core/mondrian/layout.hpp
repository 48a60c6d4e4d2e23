// The arrays of an aggregated Mondrian forest (AMF; Mourtada, Gaïffas & Scornet, JRSS-B 2021)
// as the kernels read them (the layout of streamforest/mondrian/state.py).
//
// The trees of one forest share one array of node records, ``nodes`` ``(T, C, R)`` float64
// (tree ``t`` owns ``nodes[t]``): a node's links (stored as exact integers), split,
// statistics, aggregation weights, ``K`` value columns (regression: the targets' mean, K = 1;
// else each class's weight) and range box (lower and upper bound of each feature, NaN: none
// seen yet) lie together.  ``meta`` ``(T, 2)`` int64: nodes in use, rows learnt; each tree's
// SplitMix64 state is ``rng[t, 0]``.  The parameters are one float64 array (``P_*``).
//
// Invariants (streamforest/mondrian/state.py ``check`` runs on a loaded forest; the kernels keep
// them): ``R == VALUE + max(K, 1) + 2 P`` for ``P`` features, node 0 is the root, every link of
// a node in use is a node in use (``-1``: none), a split feature is ``< P``.
#pragma once

#include "common/numeric.hpp"
#include "common/views.hpp"

namespace sf::mondrian {

// columns of a node record (``nodes[t, v]``)
inline constexpr i64 LEFT = 0, RIGHT = 1, FEATURE = 2, THRESHOLD = 3, COUNT = 4, MIX = 5;
inline constexpr i64 PARENT = 6, TIME = 7, SPLIT_TIME = 8;  // birth time; the children's
inline constexpr i64 LOG_WEIGHT = 9, LOG_TREE = 10, LEFT_TREE = 11, RIGHT_TREE = 12;
inline constexpr i64 VALUE = 13;  // then K value columns, then the range box
// columns of ``meta``
inline constexpr i64 N_NODES = 0, N_SEEN = 1;
// entries of the parameters
inline constexpr i64 P_STEP = 0, P_AGGREGATE = 1, P_DIRICHLET = 2, P_SPLIT_PURE = 3;
inline constexpr i64 P_MAX_NODES = 4, P_CLASSES = 5;
inline constexpr i64 N_PARAMS = 6;

inline constexpr double LOG2 = 0.6931471805599453;  // math.log(2.0)

/// The parameters, read once per call with the meaning the kernels give each entry.
struct Params {
  double step = 1.0;
  bool aggregate = true;  // params[P_AGGREGATE] != 0.0
  double dirichlet = 0.5;
  bool split_pure = false;  // params[P_SPLIT_PURE] != 0.0
  double max_nodes = 0.0;   // <= 0: no limit
  i64 classes = 0;          // int(params[P_CLASSES]): 0 for regression

  /// The first box column of a node record (after the ``K`` value columns).
  i64 box_at() const { return VALUE + py_max(classes, i64{1}); }
};

inline Params params_of(Vec<const double> params) {
  Params p;
  p.step = params[P_STEP];
  p.aggregate = params[P_AGGREGATE] != 0.0;
  p.dirichlet = params[P_DIRICHLET];
  p.split_pure = params[P_SPLIT_PURE] != 0.0;
  p.max_nodes = params[P_MAX_NODES];
  p.classes = to_i64(params[P_CLASSES]);
  return p;
}

/// numba's ``a[i]`` for an index that may be -1: the last item.
inline i64 wrap(i64 i, i64 n) { return i < 0 ? i + n : i; }

template <class T>
inline Vec<const T> cview(Vec<T> v) {
  return Vec<const T>(v.data, v.n);
}
template <class T>
inline Mat<const T> cview(Mat<T> m) {
  return Mat<const T>(m.data, m.n0, m.n1);
}

}  // namespace sf::mondrian
