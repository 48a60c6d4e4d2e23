// A forest's arena from Python (streamforest/tree_kinds/arena.py's ``Arena``, a named tuple
// of five arrays) as the core's ``tree::Arena``, every array's type and shape checked.
#pragma once

#include <string>

#include "bindings/arrays.hpp"
#include "tree/state.hpp"
#include "tree/tree_ref.hpp"

namespace sf::bind {

/// The arena ``A`` (a tuple ``(fa, ia, ba, lay, pa)``); raises TypeError / ValueError unless
/// its arrays are the arena's types, C-contiguous, with one row per tree and the layout of
/// this core's fields and parameters.
inline tree::Arena arena_of(nb::handle A) {
  if (!nb::isinstance<nb::tuple>(A) || nb::len(A) != 5)
    throw nb::type_error("expected a tree arena (fa, ia, ba, lay, pa)");
  nb::tuple tup = nb::borrow<nb::tuple>(A);
  auto fa = nb::cast<Array<double>>(tup[0], false);
  auto ia = nb::cast<Array<i64>>(tup[1], false);
  auto ba = nb::cast<Array<i8>>(tup[2], false);
  auto lay = nb::cast<Array<i64>>(tup[3], false);
  auto pa = nb::cast<Array<double>>(tup[4], false);
  tree::Arena out{mat(fa, "arena fa"), mat(ia, "arena ia"), mat(ba, "arena ba"),
                  cube(lay, "arena lay"), mat(pa, "arena pa")};
  i64 T = out.lay.n0;
  if (out.fa.n0 != T || out.ia.n0 != T || out.ba.n0 != T || out.pa.n0 != T)
    throw nb::value_error("malformed tree arena (a row per tree in every array)");
  if (out.lay.n1 != SF_TREE_N_FIELDS || out.lay.n2 != 4 || out.pa.n1 != SF_TREE_N_PARAMS)
    throw nb::value_error("tree arena of another layout than this core's fields and parameters");
  return out;
}

/// Check that ``t`` names a tree of ``A``.
inline void need_tree(const tree::Arena& A, i64 t) {
  if (t < 0 || t >= A.n_trees()) throw nb::index_error("tree index outside the arena");
}

/// Tree ``t`` of ``A`` as the passes take it: it exists (its ``ints`` hold N_INTS items), its
/// kind is one this core runs (tree::runs), and rows of ``row_width`` columns hold its
/// features (``row_width < 0``: no rows).  Raises ValueError otherwise.
inline tree::TreeRef runnable_tree(const tree::Arena& A, i64 t, i64 row_width) {
  need_tree(A, t);
  const i64* lay = A.lay.data + t * A.lay.n1 * A.lay.n2;
  if (lay[1] < tree::N_INTS || lay[0] < 0 || lay[0] + lay[1] > A.ia.n1)
    throw nb::value_error(("tree " + std::to_string(t) + " of the arena does not exist").c_str());
  tree::TreeRef st = tree::state_at(A, t);
  if (!tree::runs(st.kind))
    throw nb::value_error(("tree " + std::to_string(t) +
                           ": a tree kind the compiled core does not run (yet)").c_str());
  if (row_width >= 0 && row_width < st.ints()[tree::I_NFEAT])
    throw nb::value_error(("rows of " + std::to_string(row_width) + " columns for tree " +
                           std::to_string(t) + " of " + std::to_string(st.ints()[tree::I_NFEAT]) +
                           " features").c_str());
  return st;
}

/// ``runnable_tree`` for every tree of ``A``.
inline void runnable_trees(const tree::Arena& A, i64 row_width) {
  for (i64 t = 0; t < A.n_trees(); ++t) runnable_tree(A, t, row_width);
}

}  // namespace sf::bind
