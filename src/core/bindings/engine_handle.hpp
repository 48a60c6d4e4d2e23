// An engine handle from Python (streamforest/engine/handle.py, ``PerExample.handle``) as the
// core's ``engine::EngineViews``, every shape a per-example pass indexes with checked: for the
// interval methods' handle kernels (bind_intervals_trees.cpp).  The same checks as
// bind_engine.cpp's ``checked_views`` (which stays private to that file).
#pragma once

#include <string>

#include "bindings/arena.hpp"
#include "engine/handle.hpp"

namespace sf::bind {

namespace detail {

[[noreturn]] inline void bad_handle(const std::string& what) {
  throw nb::value_error(what.c_str());
}

/// The memo ``M`` a per-example pass reads (``t < M.cols()``) and writes (``writes``: every
/// tree's column): 4 rows.
inline void need_handle_memo(Mat<double> M, i64 T, bool writes, const char* name) {
  if ((M.cols() > 0 || writes) && M.rows() < 4)
    bad_handle(std::string(name) + ": fewer than 4 rows");
  if (writes && M.cols() < T) bad_handle(std::string(name) + ": fewer columns than trees");
}

}  // namespace detail

/// The views of engine handle ``H``: its arena well formed, every tree runnable on the handle's
/// row, the scratch one item per tree, the memos of 4 rows; with ``regression``, every tree a
/// regression tree.  Raises ValueError / TypeError otherwise.
inline engine::EngineViews checked_engine_views(nb::handle H, bool regression) {
  i64 n;
  const i64* p = detail::buffer_of<i64>(H, 1, false, &n, "H");
  Vec<const i64> h(p, n);
  if (h.size() != engine::H_SIZE) detail::bad_handle("H: not an engine handle");
  engine::EngineViews v = engine::engine_views(h);
  const tree::Arena& A = v.A;
  i64 T = A.lay.n0;
  if (A.fa.n0 != T || A.ia.n0 != T || A.ba.n0 != T || A.pa.n0 != T)
    detail::bad_handle("H: malformed tree arena (a row per tree in every array)");
  if (A.lay.n1 != SF_TREE_N_FIELDS || A.lay.n2 != 4 || A.pa.n1 != SF_TREE_N_PARAMS)
    detail::bad_handle("H: tree arena of another layout than this core's fields and parameters");
  if (v.frng.size() < 1) detail::bad_handle("H: no generator state");
  if (v.wt.size() < T || v.P.size() < T || v.drifted.size() < T)
    detail::bad_handle("H: scratch arrays shorter than the trees");
  if (v.P.size() == 0) detail::bad_handle("H: no tree");
  detail::need_handle_memo(v.M, T, true, "H memo");
  detail::need_handle_memo(v.M0, T, false, "H empty memo");
  for (i64 t = 0; t < T; ++t)
    if (runnable_tree(A, t, v.x.size()).kind.classification && regression)
      detail::bad_handle("tree " + std::to_string(t) + ": a classification tree");
  return v;
}

}  // namespace sf::bind
