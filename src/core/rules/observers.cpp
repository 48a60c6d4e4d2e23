// Attribute observers (see observers.hpp): the bin pool's maintenance, split search over an
// observer's bins, and the rule's part of learning a row.
#include "rules/observers.hpp"

#include "tree/room.hpp"
#include "tree/splitting.hpp"

namespace sf::rules {

using namespace tree;

namespace {

i64 bin_home(Mat<double> bn, i64 b, i64 m) {
  return home(to_i64(bn(b, B_LEAF)), to_i64(bn(b, B_FEAT)), bn(b, B_KEY), static_cast<u64>(m));
}

void hash_delete(Vec<i64> ht, Mat<double> bn, i64 b) {
  i64 m = ht.size() - 1;
  i64 i = bin_home(bn, b, m);
  while (ht[i] != b) i = (i + 1) & m;
  // backward-shift deletion (linear probing)
  i64 j = i;
  while (true) {
    j = (j + 1) & m;
    i64 c = ht[j];
    if (c < 0) break;
    i64 k = bin_home(bn, c, m);
    // c may move into the hole at i unless its home lies cyclically in (i, j]
    bool stays;
    if (i <= j) {
      stays = i < k && k <= j;
    } else {
      stays = k > i || k <= j;
    }
    if (!stays) {
      ht[i] = c;
      i = j;
    }
  }
  ht[i] = -1;
}

void sift_down(Vec<double> keys, Vec<i64> vals, i64 root, i64 n) {
  while (true) {
    i64 child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && keys[child + 1] > keys[child]) child += 1;
    if (keys[root] >= keys[child]) return;
    double k = keys[root];
    keys[root] = keys[child];
    keys[child] = k;
    i64 v = vals[root];
    vals[root] = vals[child];
    vals[child] = v;
    root = child;
  }
}

/// Sort ``keys[:n]`` ascending in place, permuting ``vals[:n]`` alongside.
void heapsort_by_key(Vec<double> keys, Vec<i64> vals, i64 n) {
  for (i64 start = floordiv(n, 2) - 1; start > -1; --start) sift_down(keys, vals, start, n);
  for (i64 end = n - 1; end > 0; --end) {
    double k = keys[0];
    keys[0] = keys[end];
    keys[end] = k;
    i64 v = vals[0];
    vals[0] = vals[end];
    vals[end] = v;
    sift_down(keys, vals, 0, end);
  }
}

}  // namespace

void free_observers(const TreeRef& st, i64 leaf) {
  Vec<i64> ints = st.ints();
  Vec<i64> ht = st.bin_hash();
  Mat<double> bn = st.bins();
  Mat<i64> head = st.lf_head();
  Mat<i64> nbins = st.lf_nbins();
  const i64 nf = head.cols();
  for (i64 f = 0; f < nf; ++f) {
    i64 b = head(leaf, f);
    while (b >= 0) {
      i64 nxt = to_i64(bn(b, B_NEXT));
      hash_delete(ht, bn, b);
      bn(b, B_LEAF) = -1.0;
      bn(b, B_NEXT) = static_cast<double>(ints[I_BIN_FREE]);
      ints[I_BIN_FREE] = b;
      ints[I_BINS_LIVE] -= 1;
      b = nxt;
    }
    head(leaf, f) = -1;
    nbins(leaf, f) = 0;
  }
}

void rebuild_hash(const TreeRef& st) {
  Vec<i64> ht = st.bin_hash();
  Mat<double> bn = st.bins();
  for (i64 i = 0; i < ht.size(); ++i) ht[i] = -1;
  i64 m = ht.size() - 1;
  const i64 hw = st.ints()[I_BIN_HW];
  for (i64 b = 0; b < hw; ++b) {
    if (bn(b, B_LEAF) >= 0) {
      i64 i = bin_home(bn, b, m);
      while (ht[i] >= 0) i = (i + 1) & m;
      ht[i] = b;
    }
  }
}

i64 sorted_bins(const TreeRef& st, i64 leaf, i64 feat, bool nominal) {
  i64 nb = st.lf_nbins()(leaf, feat);
  Vec<i64> idx = st.scratch_bins();
  Vec<double> order_key = st.scratch_keys();
  Mat<double> bn = st.bins();
  i64 b = st.lf_head()(leaf, feat);
  i64 k = 0;
  while (b >= 0) {
    idx[k] = b;
    order_key[k] = nominal ? bn(b, B_HI) + bn(b, B_LO) : bn(b, B_XMIN);
    k += 1;
    b = to_i64(bn(b, B_NEXT));
  }
  heapsort_by_key(order_key, idx, nb);
  return nb;
}

stats::Stat merged_stat(const TreeRef& st, Vec<i64> idx, i64 lo, i64 hi) {
  stats::Stat s;
  Mat<double> bn = st.bins();
  for (i64 k = lo; k < hi; ++k) {
    i64 b = idx[k];
    s = stats::chan_merge(s.w, s.hi, s.lo, s.m2, bn(b, B_W), bn(b, B_HI), bn(b, B_LO),
                          bn(b, B_M2));
  }
  return s;
}

Cut best_cut(const TreeRef& st, Vec<i64> idx, i64 n, double min_branch) {
  if (n < 2) return {-1.0, -1};
  stats::Stat t = merged_stat(st, idx, 0, n);
  Mat<double> bn = st.bins();
  stats::Stat l;
  double best = -1.0;
  i64 best_k = -1;
  for (i64 k = 0; k < n - 1; ++k) {
    i64 b = idx[k];
    l = stats::chan_merge(l.w, l.hi, l.lo, l.m2, bn(b, B_W), bn(b, B_HI), bn(b, B_LO),
                          bn(b, B_M2));
    stats::Stat r = stats::chan_subtract(t.w, t.hi, t.lo, t.m2, l.w, l.hi, l.lo, l.m2);
    if (l.w < min_branch || r.w < min_branch) continue;
    double dm = (r.hi - l.hi) + (r.lo - l.lo);
    double vr = l.w * r.w * dm * dm / (t.w * t.w);
    if (vr > best) {
      best = vr;
      best_k = k;
    }
  }
  return {best, best_k};
}

double cut_threshold(const TreeRef& st, Vec<i64> idx, i64 k) {
  Mat<double> bn = st.bins();
  i64 a = idx[k];
  i64 b = idx[k + 1];
  double c = 0.5 * (bn(a, B_XSUM) / bn(a, B_W)) + 0.5 * (bn(b, B_XSUM) / bn(b, B_W));
  if (!(bn(a, B_XMAX) <= c && c < bn(b, B_XMIN))) c = bn(a, B_XMAX);
  return c;
}

double feature_spread(const TreeRef& st, i64 leaf, i64 feat) {
  Mat<double> bn = st.bins();
  double w = 0.0;
  double s = 0.0;
  const i64 first = st.lf_head()(leaf, feat);
  i64 b = first;
  while (b >= 0) {
    w += bn(b, B_W);
    s += bn(b, B_XSUM);
    b = to_i64(bn(b, B_NEXT));
  }
  if (w <= 0.0) return 0.0;
  double mean = s / w;
  double v = 0.0;
  b = first;
  while (b >= 0) {
    double d = bn(b, B_XSUM) / bn(b, B_W) - mean;
    double r = bn(b, B_XMAX) - bn(b, B_XMIN);
    v += bn(b, B_W) * (d * d + r * r / 12.0);
    b = to_i64(bn(b, B_NEXT));
  }
  return std::sqrt(v / w);
}

Cut leaf_best_cut(const TreeRef& st, i64 leaf, i64 j, double min_branch) {
  i64 k = sorted_bins(st, leaf, j, st.ft_nominal()[j] == 1);
  Cut c = best_cut(st, st.scratch_bins(), k, min_branch);
  if (c.k >= 0) cut_threshold(st, st.scratch_bins(), c.k);
  return {c.vr, k};
}

void observers_learn(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                     i64 nfeat) {
  Mat<double> s = st.lf_stat();
  if (free_bins(st) < nfeat) {  // budget reached, nothing else to deactivate: stop observing
    deactivate(st, leaf);
    return;
  }
  Mat<i8> mask = st.lf_mask();
  Vec<i8> nominal = st.ft_nominal();
  Mat<double> scale = st.lf_scale();
  const i64 observer = prm.observer();
  const BinPool pool(st);
  const u64 m = static_cast<u64>(pool.ht.size() - 1);
  // The features' observers in blocks: each block's hash slots, then their bins, are fetched
  // ahead (prefetch: the pool outgrows the caches, and the lookups are independent), then
  // observed in order, as one loop over the features would (a key and its home slot depend on
  // nothing an observation writes).
  constexpr i64 BLOCK = 16;
  double keys[BLOCK];
  i64 slots[BLOCK];
  i64 feats[BLOCK];
  for (i64 j0 = 0; j0 < nfeat; j0 += BLOCK) {
    const i64 j1 = py_min(nfeat, j0 + BLOCK);
    i64 k = 0;
    for (i64 j = j0; j < j1; ++j) {
      double xj = x[j];
      if (mask(leaf, j) == 1 && !is_nan(xj)) {
        bool nom = nominal[j] == 1;
        keys[k] = bin_key(xj, observer, scale(leaf, j), nom);
        slots[k] = home(leaf, j, keys[k], m);
        feats[k] = j;
        prefetch(&pool.ht[slots[k]]);
        ++k;
      }
    }
    for (i64 q = 0; q < k; ++q) {
      i64 b = pool.ht[slots[q]];
      if (b >= 0) prefetch_bin(pool.bn, b);
    }
    for (i64 q = 0; q < k; ++q)
      observe_at(pool, leaf, feats[q], keys[q], x[feats[q]], y, w, slots[q]);
  }
  if (s(leaf, S_W) - st.lf_last()[leaf] >= prm.grace() && s(leaf, S_M2) > 0.0)
    attempt_observer_split(st, prm, leaf);
}

const SplitRule& observers_rule() {
  static const SplitRule rule = [] {
    SplitRule r;
    r.code = static_cast<int>(SPLIT_OBSERVERS);
    r.name = "observers";
    r.learn_at_leaf = observers_learn;
    r.bin_room = observer_bin_room;
    r.observer_bins = true;
    return r;
  }();
  return rule;
}

}  // namespace sf::rules
