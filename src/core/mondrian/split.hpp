// A Mondrian node's range box and its splits.
//
// A row's *range extension* at node ``v`` is the distance by which it lies outside ``v``'s box
// in each feature, ``e_j``; with ``E = sum_j e_j > 0`` the node may split: feature ``j`` drawn
// with probability ``e_j / E``, the threshold uniform between the box and the row's value.  A
// split keeps ``v`` where it is (with the new feature and threshold) and moves its old content
// (statistics, box, children) to a new child, as the Mondrian process inserts a split above a
// subtree; the other child is a new, empty leaf.
//
// Missing values (NaN) extend no box; a feature whose box is empty at a node (no value seen
// there yet) has no extension: the first value seen sets it.  ``nodes`` is one tree's records,
// ``extension`` and ``saved`` its rows of the forest's scratch arrays, ``box`` the records'
// first box column.
#pragma once

#include <limits>

#include "common/rng.hpp"
#include "mondrian/layout.hpp"

namespace sf::mondrian {

/// Node ``v``'s box (empty) becomes row ``x``'s point.
inline void box_of_row(Mat<double> nodes, i64 box, i64 v, Vec<const double> x) {
  for (i64 j = 0; j < x.size(); ++j) {
    double xv = x[j];
    if (xv == xv) {
      nodes(v, box + 2 * j) = xv;
      nodes(v, box + 2 * j + 1) = xv;
    }
  }
}

/// Node ``v``'s box grows to hold row ``x`` (one pass over the features); ``extension[j]``: how
/// far ``x`` lay outside it in feature ``j`` (-1: the feature's box was empty, the row's value
/// fills it), ``saved[j]`` the bound a positive extension replaced; returns the sum of the
/// extensions.
inline double extend_box(Mat<double> nodes, i64 box, Vec<double> extension, Vec<double> saved,
                         i64 v, Vec<const double> x) {
  double total = 0.0;
  for (i64 j = 0; j < x.size(); ++j) {
    double xv = x[j];
    i64 c = box + 2 * j;
    double lo = nodes(v, c);
    double hi = nodes(v, c + 1);
    double e = 0.0;
    if (xv < lo) {  // (false when either is NaN)
      e = lo - xv;
      saved[j] = lo;
      nodes(v, c) = xv;
      total += e;
    } else if (xv > hi) {
      e = xv - hi;
      saved[j] = hi;
      nodes(v, c + 1) = xv;
      total += e;
    } else if (lo != lo && xv == xv) {
      e = -1.0;
      nodes(v, c) = xv;
      nodes(v, c + 1) = xv;
    }
    extension[j] = e;
  }
  return total;
}

/// Node ``v``'s box as it was before ``extend_box`` took row ``x`` (whose ``extension`` and
/// ``saved`` it reads).
inline void box_before(Mat<double> nodes, i64 box, Vec<const double> extension,
                       Vec<const double> saved, i64 v, Vec<const double> x) {
  for (i64 j = 0; j < x.size(); ++j) {
    double e = extension[j];
    if (e > 0.0) {
      if (x[j] < saved[j]) {
        nodes(v, box + 2 * j) = saved[j];
      } else {
        nodes(v, box + 2 * j + 1) = saved[j];
      }
    } else if (e < 0.0) {
      nodes(v, box + 2 * j) = std::numeric_limits<double>::quiet_NaN();
      nodes(v, box + 2 * j + 1) = std::numeric_limits<double>::quiet_NaN();
    }
  }
}

/// A feature drawn with probability proportional to its extension (of the first ``P``).  When
/// the extensions' sum overflowed to infinity without an infinite one, none is drawn: -1 (the
/// numba kernel then indexed the last feature, see ``wrap``).
inline i64 draw_feature(Vec<const double> extension, u64& rng, i64 P, double total) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  i64 last = -1;
  if (total < inf) {
    double r = rng::next_float(rng) * total;
    double acc = 0.0;
    for (i64 j = 0; j < P; ++j) {
      double e = extension[j];
      if (e > 0.0) {
        acc += e;
        last = j;
        if (r < acc) return j;
      }
    }
    return last;
  }
  // an infinite extension (values near the float range): the first infinite one
  rng::next_float(rng);
  for (i64 j = 0; j < P; ++j)
    if (extension[j] == inf) return j;
  return last;
}

/// Split node ``v`` on feature ``j`` at ``threshold`` at ``time``; its old content moves to the
/// child on the box's side (``right``: the row extends the box to the right, so the old content
/// goes left), ``box`` the records' first box column; returns the new leaf.  ``meta`` is the
/// tree's row (``meta[N_NODES] + 2 <= C``: the caller made room).
inline i64 add_children(Mat<double> nodes, Vec<i64> meta, i64 v, i64 j, double threshold,
                        double time, bool right, i64 box) {
  i64 first = meta[N_NODES];
  i64 second = first + 1;
  meta[N_NODES] = first + 2;
  i64 old = right ? first : second;
  i64 leaf = right ? second : first;
  i64 R = nodes.cols();
  for (i64 c = 0; c < R; ++c) nodes(old, c) = nodes(v, c);
  for (i64 c = 0; c < box; ++c) nodes(leaf, c) = 0.0;
  for (i64 c = box; c < R; ++c) nodes(leaf, c) = std::numeric_limits<double>::quiet_NaN();
  nodes(leaf, LEFT) = -1.0;
  nodes(leaf, RIGHT) = -1.0;
  nodes(leaf, FEATURE) = -1.0;
  nodes(leaf, MIX) = 0.5;
  nodes(leaf, PARENT) = static_cast<double>(v);
  nodes(leaf, TIME) = time;
  nodes(leaf, SPLIT_TIME) = std::numeric_limits<double>::infinity();
  nodes(old, PARENT) = static_cast<double>(v);
  nodes(old, TIME) = time;
  if (nodes(old, LEFT) >= 0.0) {
    nodes(to_i64(nodes(old, LEFT)), PARENT) = static_cast<double>(old);
    nodes(to_i64(nodes(old, RIGHT)), PARENT) = static_cast<double>(old);
  }
  nodes(v, LEFT) = static_cast<double>(first);
  nodes(v, RIGHT) = static_cast<double>(second);
  nodes(v, FEATURE) = static_cast<double>(j);
  nodes(v, THRESHOLD) = threshold;
  nodes(v, SPLIT_TIME) = time;
  double lt_old = nodes(v, LOG_TREE);  // the moved subtree's (the new leaf's: set going up)
  nodes(v, LEFT_TREE) = right ? lt_old : 0.0;
  nodes(v, RIGHT_TREE) = right ? 0.0 : lt_old;
  return leaf;
}

}  // namespace sf::mondrian
