// A leaf's KLL sketch (see leaf_sketch.hpp), over the sketch unit's kernels (sketch/kll.hpp).
#include "tree/leaf_sketch.hpp"

#include "common/rng.hpp"
#include "sketch/kll.hpp"

namespace sf::tree {

void sketch_target(const TreeRef& st, ParamRef prm, i64 leaf, double y, double w) {
  if (prm.sketch_k() <= 0) return;
  u64& rng_state = st.rng()[0];
  i64 wi = to_i64(w);
  double frac = w - static_cast<double>(wi);
  if (frac > 0.0 && rng::next_float(rng_state) < frac) wi += 1;
  if (wi > 0)
    sketch::kll_update(st.lf_sketch(), st.lf_sketch_levels(), leaf, y, wi, st.sketch_capacity(),
                       rng_state);
}

void reset_sketch(const TreeRef& st, ParamRef prm, i64 leaf) {
  if (prm.sketch_k() > 0) sketch::kll_reset(st.lf_sketch(), st.lf_sketch_levels(), leaf);
}

void split_sketch(const TreeRef& st, ParamRef prm, i64 lslot, i64 rslot) {
  if (prm.sketch_k() > 0) {
    if (prm.sketch_split() == 1) {
      sketch::kll_copy(st.lf_sketch(), st.lf_sketch_levels(), lslot, rslot);
    } else {
      sketch::kll_reset(st.lf_sketch(), st.lf_sketch_levels(), lslot);
      sketch::kll_reset(st.lf_sketch(), st.lf_sketch_levels(), rslot);
    }
  }
}

}  // namespace sf::tree
