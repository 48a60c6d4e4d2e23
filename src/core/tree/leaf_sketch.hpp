// A leaf's KLL sketch of its targets (OnlineQRF's leaves; the C++ side of
// streamforest/tree_kinds/leaf_sketch.py): reset, split between children, learn.  Only trees
// whose kind has sketches (``kind.has.sketch``, i.e. ``sketch_k > 0``) take these steps.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::tree {

/// Add ``y`` to the leaf's sketch with ``w`` rounded stochastically to an integer weight.
void sketch_target(const TreeRef& st, ParamRef prm, i64 leaf, double y, double w);
/// An empty sketch at ``leaf``.
void reset_sketch(const TreeRef& st, ParamRef prm, i64 leaf);
/// The children's sketches (the left child keeps the parent's slot, hence its sketch).
void split_sketch(const TreeRef& st, ParamRef prm, i64 lslot, i64 rslot);

/// A new leaf's sketch starts empty (kinds with sketches).
inline void sketch_reset(const TreeRef& st, ParamRef prm, i64 leaf) {
  if (st.kind.has.sketch) reset_sketch(st, prm, leaf);
}

/// A split leaf's children's sketches (kinds with sketches).
inline void sketch_children(const TreeRef& st, ParamRef prm, i64 lslot, i64 rslot) {
  if (st.kind.has.sketch) split_sketch(st, prm, lslot, rslot);
}

/// The leaf's sketch learns ``y`` (kinds with sketches).
inline void sketch_learn(const TreeRef& st, ParamRef prm, i64 leaf, double y, double w) {
  if (st.kind.has.sketch) sketch_target(st, prm, leaf, y, w);
}

}  // namespace sf::tree
