// A leaf's KLL sketch (see leaf_sketch.hpp).  The KLL kernels are the sketch unit's
// (sketch/kll.hpp, not on this branch yet): until then a tree with sketches is not run by the
// core (tree::runs), and these steps refuse.
#include "tree/leaf_sketch.hpp"

#include <stdexcept>

namespace sf::tree {

namespace {
[[noreturn]] void kll_missing() { throw std::logic_error("sketch: not ported yet"); }
}  // namespace

void sketch_target(const TreeRef&, ParamRef prm, i64, double, double) {
  if (prm.sketch_k() <= 0) return;
  kll_missing();
}

void reset_sketch(const TreeRef&, ParamRef prm, i64) {
  if (prm.sketch_k() > 0) kll_missing();
}

void split_sketch(const TreeRef&, ParamRef prm, i64, i64) {
  if (prm.sketch_k() > 0) kll_missing();
}

}  // namespace sf::tree
