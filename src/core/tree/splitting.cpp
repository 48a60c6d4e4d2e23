// Splitting a leaf (see splitting.hpp).
#include "tree/splitting.hpp"

#include <cmath>
#include <limits>

#include "drift/page_hinkley.hpp"
#include "leaves/leaf_models.hpp"
#include "rules/observers.hpp"
#include "tree/leaf_sketch.hpp"
#include "tree/room.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::tree {

namespace {

void insertion_sort(Vec<double> a, i64 lo, i64 hi) {
  for (i64 i = lo + 1; i < hi; ++i) {
    double v = a[i];
    i64 j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      j -= 1;
    }
    a[j + 1] = v;
  }
}

}  // namespace

void attempt_observer_split(const TreeRef& st, ParamRef prm, i64 leaf) {
  Vec<i64> ints = st.ints();
  Mat<double> stat = st.lf_stat();
  Mat<i64> nbins = st.lf_nbins();
  Vec<i8> nominal = st.ft_nominal();
  ints[I_NATTEMPTS] += 1;
  st.lf_last()[leaf] = stat(leaf, S_W);
  const i64 nfeat = ints[I_NFEAT];
  const double min_branch = prm.min_branch();
  double best1 = -1.0;
  double best2 = 0.0;
  i64 f1 = -1;
  for (i64 j = 0; j < nfeat; ++j) {
    if (nbins(leaf, j) < 2) continue;
    i64 nb = rules::sorted_bins(st, leaf, j, nominal[j] == 1);
    rules::Cut c = rules::best_cut(st, st.scratch_bins(), nb, min_branch);
    if (c.k < 0) continue;
    if (c.vr > best1) {
      best2 = best1 > 0.0 ? best1 : 0.0;
      best1 = c.vr;
      f1 = j;
    } else if (c.vr > best2) {
      best2 = c.vr;
    }
  }
  if (f1 < 0 || best1 <= 0.0) return;
  double n = stat(leaf, S_W) - st.lf_inherited()(leaf, S_W);  // the sample the observers saw
  double eps = std::sqrt(std::log(1.0 / prm.delta()) / (2.0 * n));
  if (best2 / best1 < 1.0 - eps || eps < prm.tau()) {
    if (ints[I_NLEAVES] >= prm.max_leaves()) {
      freeze(st);
      return;
    }
    split(st, prm, leaf, f1);
  }
}

void split(const TreeRef& st, ParamRef prm, i64 leaf, i64 f) {
  Vec<i64> ints = st.ints();
  Vec<i8> ft_nominal = st.ft_nominal();
  bool nominal = ft_nominal[f] == 1;
  i64 n = rules::sorted_bins(st, leaf, f, nominal);
  Vec<i64> idx = st.scratch_bins();
  rules::Cut cut = rules::best_cut(st, idx, n, prm.min_branch());
  i64 k = cut.k;
  stats::Stat l = rules::merged_stat(st, idx, 0, k + 1);
  stats::Stat r = rules::merged_stat(st, idx, k + 1, n);
  i64 node = st.lf_node()[leaf];
  if (nominal) {
    Vec<double> cats = st.cats();
    Mat<double> bins = st.bins();
    i64 off = ints[I_CAT_USED];
    i64 nl = k + 1;
    for (i64 q = 0; q < nl; ++q) cats[off + q] = bins(idx[q], B_KEY);
    insertion_sort(cats, off, off + nl);
    for (i64 q = 0; q < n - nl; ++q) cats[off + nl + q] = bins(idx[nl + q], B_KEY);
    insertion_sort(cats, off + nl, off + n);
    ints[I_CAT_USED] = off + n;
    st.nd_cat_off()[node] = off;
    st.nd_cat_len()[node] = nl;
    st.nd_cat_right()[node] = n - nl;
    st.nd_thr()[node] = std::numeric_limits<double>::quiet_NaN();
  } else {
    st.nd_thr()[node] = rules::cut_threshold(st, idx, k);
  }
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  if (prm.observer() == OBS_QO && prm.qo_sigma() > 0.0) {
    const i64 nfeat = ints[I_NFEAT];
    for (i64 j = 0; j < nfeat; ++j)
      if (!ft_nominal[j]) spread[j] = rules::feature_spread(st, leaf, j);
  }
  rules::free_observers(st, leaf);
  grow_children(st, prm, leaf, f, l, r);
  reactivate(st, prm);
}

void grow_children(const TreeRef& st, ParamRef prm, i64 leaf, i64 f, stats::Stat l,
                   stats::Stat r) {
  stats::Stat t = stats::chan_merge(l.w, l.hi, l.lo, l.m2, r.w, r.hi, r.lo, r.m2);
  Mat<double> s = st.lf_stat();
  Mat<double> ih = st.lf_inherited();
  stats::Stat o = stats::chan_subtract(s(leaf, S_W), s(leaf, S_HI), s(leaf, S_LO), s(leaf, S_M2),
                                       ih(leaf, S_W), ih(leaf, S_HI), ih(leaf, S_LO),
                                       ih(leaf, S_M2));
  stats::Stat m = stats::chan_subtract(o.w, o.hi, o.lo, o.m2, t.w, t.hi, t.lo, t.m2);
  bool miss_left = l.w >= r.w;
  if (m.w > 0.0) {
    if (miss_left) {
      l = stats::chan_merge(l.w, l.hi, l.lo, l.m2, m.w, m.hi, m.lo, m.m2);
    } else {
      r = stats::chan_merge(r.w, r.hi, r.lo, r.m2, m.w, m.hi, m.lo, m.m2);
    }
  }

  Vec<i64> ints = st.ints();
  i64 node = st.lf_node()[leaf];
  i64 depth = st.nd_depth()[node];
  leaves::MeanSd p = leaves::target_mean_sd(st, leaf);
  i64 left = new_node(st);
  i64 right = new_node(st);
  ints[I_NLEAVES] += 1;
  Vec<i8> isalt = st.nd_isalt();
  isalt[left] = isalt[node];
  isalt[right] = isalt[node];
  Mat<double> det = st.nd_detector();
  if (det.cols()) {  // the new split node's change detector starts now
    for (i64 c = 0; c < det.cols(); ++c) det(node, c) = 0.0;
    det(node, drift::PHN_SD0) = p.sd;
    Mat<double> cmp = st.nd_alt_compare();
    for (i64 c = 0; c < cmp.cols(); ++c) cmp(node, c) = 0.0;
  }
  ints[I_NSPLITS] += 1;
  ints[I_LAST_SPLIT_LEAF] = node;
  st.nd_feat()[node] = f;
  st.nd_left()[node] = left;
  st.nd_right()[node] = right;
  st.nd_miss_left()[node] = miss_left ? 1 : 0;
  st.nd_leaf()[node] = -1;

  i64 rslot = new_leaf_slot(st);
  i64 lslot = leaf;
  s(lslot, S_W) = l.w;
  s(lslot, S_HI) = l.hi;
  s(lslot, S_LO) = l.lo;
  s(lslot, S_M2) = l.m2;
  s(rslot, S_W) = r.w;
  s(rslot, S_HI) = r.hi;
  s(rslot, S_LO) = r.lo;
  s(rslot, S_M2) = r.m2;
  for (i64 c = 0; c < 4; ++c) {
    ih(lslot, c) = s(lslot, c);
    ih(rslot, c) = s(rslot, c);
  }
  leaves::inherit_linear(st, leaf, rslot, p.mean, p.sd);  // copies from the parent's slot first
  leaves::inherit_linear(st, leaf, lslot, p.mean, p.sd);
  Vec<double> spread = st.ft_spread();
  init_leaf(st, prm, lslot, left, depth + 1, spread);
  init_leaf(st, prm, rslot, right, depth + 1, spread);
  sketch_children(st, prm, lslot, rslot);
}

}  // namespace sf::tree
