// A tree's structure (see structure.hpp).
#include "tree/structure.hpp"

#include "rules/observers.hpp"
#include "tree/leaf_sketch.hpp"

namespace sf::tree {

i64 route_axis(const TreeRef& st, i64 node, Row x) {
  const AxisTests nd(st);
  while (nd.feat[node] >= 0) node = child_axis(nd, node, x);
  return node;
}

i64 new_node(const TreeRef& st) {
  Vec<i64> ints = st.ints();
  i64 f = ints[I_NODE_FREE];
  if (f >= 0) {
    ints[I_NODE_FREE] = st.nd_left()[f];
    ints[I_NODE_NFREE] -= 1;
    return f;
  }
  i64 n = ints[I_NNODES];
  ints[I_NNODES] = n + 1;
  return n;
}

i64 new_leaf_slot(const TreeRef& st) {
  Vec<i64> ints = st.ints();
  if (ints[I_LEAF_NFREE] > 0) {
    ints[I_LEAF_NFREE] -= 1;
    return st.lf_free()[ints[I_LEAF_NFREE]];
  }
  i64 s = ints[I_LEAF_HW];
  ints[I_LEAF_HW] += 1;
  return s;
}

void choose_features(const TreeRef& st, ParamRef prm, i64 leaf) {
  i64 p = st.ints()[I_NFEAT];
  i64 k = prm.max_features();
  Mat<i8> mask = st.lf_mask();
  const i64 pc = mask.cols();
  if (k <= 0 || k >= p) {
    for (i64 j = 0; j < pc; ++j) mask(leaf, j) = 1;
    return;
  }
  for (i64 j = 0; j < pc; ++j) mask(leaf, j) = 0;
  Vec<i64> perm = st.ft_perm();
  u64& rng_state = st.rng()[0];
  for (i64 i = 0; i < p; ++i) perm[i] = i;
  for (i64 i = 0; i < k; ++i) {
    i64 j = i + rng::next_below(rng_state, p - i);
    i64 t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    mask(leaf, perm[i]) = 1;
  }
  // features that emerge later are observed by every existing leaf
  for (i64 j = p; j < pc; ++j) mask(leaf, j) = 1;
}

void set_scale(const TreeRef& st, ParamRef prm, i64 leaf, Vec<double> spread) {
  Mat<double> scale = st.lf_scale();
  const i64 n = scale.cols();
  const bool qo = prm.observer() == OBS_QO;
  for (i64 j = 0; j < n; ++j) {
    if (!qo) {
      scale(leaf, j) = prm.tebst_scale();
      continue;
    }
    double r = prm.qo_radius();
    if (prm.qo_sigma() > 0.0 && j < spread.size() && spread[j] > 0.0) r = spread[j] / prm.qo_sigma();
    scale(leaf, j) = 1.0 / r;
  }
}

void init_leaf(const TreeRef& st, ParamRef prm, i64 leaf, i64 node, i64 depth,
               Vec<double> spread) {
  Vec<i64> ints = st.ints();
  st.lf_node()[leaf] = node;
  st.nd_leaf()[node] = leaf;
  st.nd_feat()[node] = -1;
  st.nd_left()[node] = -1;
  st.nd_right()[node] = -1;
  st.nd_depth()[node] = depth;
  st.nd_born()[node] = ints[I_NSEEN];
  st.lf_last()[leaf] = st.lf_stat()(leaf, S_W);
  st.lf_active()[leaf] = depth < prm.max_depth() && ints[I_FROZEN] == 0 ? 1 : 0;
  Mat<i64> head = st.lf_head();
  Mat<i64> nbins = st.lf_nbins();
  for (i64 j = 0; j < head.cols(); ++j) head(leaf, j) = -1;
  for (i64 j = 0; j < nbins.cols(); ++j) nbins(leaf, j) = 0;
  st.lf_nexamples()[leaf] = 0;
  st.nd_alt()[node] = -1;
  choose_features(st, prm, leaf);
  set_scale(st, prm, leaf, spread);
}

void init_root_leaf(const TreeRef& st, ParamRef prm) {
  Vec<i64> ints = st.ints();
  ints[I_NNODES] = 1;
  ints[I_NLEAVES] = 1;
  i64 leaf = new_leaf_slot(st);
  Mat<double> stat = st.lf_stat(), inh = st.lf_inherited(), coef = st.lf_coef(),
              rms = st.lf_rmsprop(), err = st.lf_err();
  for (i64 c = 0; c < stat.cols(); ++c) stat(leaf, c) = 0.0;
  for (i64 c = 0; c < inh.cols(); ++c) inh(leaf, c) = 0.0;
  for (i64 c = 0; c < coef.cols(); ++c) coef(leaf, c) = 0.0;
  for (i64 c = 0; c < rms.cols(); ++c) rms(leaf, c) = 0.0;
  Mat<double> lx = st.lf_x().mat(leaf);
  for (i64 j = 0; j < lx.rows(); ++j)
    for (i64 c = 0; c < lx.cols(); ++c) lx(j, c) = 0.0;
  for (i64 c = 0; c < err.cols(); ++c) err(leaf, c) = 0.0;
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  init_leaf(st, prm, leaf, 0, 0, spread);
  sketch_reset(st, prm, leaf);
}

void free_leaf(const TreeRef& st, i64 leaf) {
  rules::free_observers(st, leaf);
  Vec<i64> ints = st.ints();
  st.lf_node()[leaf] = -1;
  st.lf_active()[leaf] = 0;
  st.lf_free()[ints[I_LEAF_NFREE]] = leaf;
  ints[I_LEAF_NFREE] += 1;
  ints[I_NLEAVES] -= 1;
}

void free_node(const TreeRef& st, i64 node) {
  Vec<i64> ints = st.ints();
  st.nd_feat()[node] = -1;
  st.nd_leaf()[node] = -1;
  st.nd_alt()[node] = -1;
  st.nd_isalt()[node] = 0;
  st.nd_depth()[node] = 0;
  st.nd_left()[node] = ints[I_NODE_FREE];
  ints[I_NODE_FREE] = node;
  ints[I_NODE_NFREE] += 1;
}

void free_subtree(const TreeRef& st, i64 root) {
  Vec<i64> stack = st.nd_path();
  Vec<i64> alt = st.nd_alt(), feat = st.nd_feat(), leaf = st.nd_leaf(), left = st.nd_left(),
           right = st.nd_right();
  Vec<i64> ints = st.ints();
  stack[0] = root;
  i64 top = 1;
  while (top > 0) {
    top -= 1;
    i64 n = stack[top];
    if (alt[n] >= 0) {
      stack[top] = alt[n];
      top += 1;
      ints[I_NALTS] -= 1;
    }
    if (feat[n] < 0) {
      if (leaf[n] >= 0) free_leaf(st, leaf[n]);
    } else {
      stack[top] = left[n];
      stack[top + 1] = right[n];
      top += 2;
    }
    free_node(st, n);
  }
}

}  // namespace sf::tree
