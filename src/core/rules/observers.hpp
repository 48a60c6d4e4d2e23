// Attribute observers: E-BST, TE-BST and the Quantization Observer (QO), the split rule of
// Hoeffding/FIMT trees (ported from the numba-era streamforest/tree_kinds/observers.py; the rule's
// table line is ``observers_rule`` below).
//
// Per (leaf, feature) an observer keeps a set of *bins* (rows of ``bins``: the target statistic
// (w, hi, lo, m2), the weighted sum of x, the smallest and largest x).  The key of a bin is the
// value itself (E-BST), ``floor(x * 10**d)`` (TE-BST) or ``floor(x / r)`` (QO); a nominal
// feature's key is the category code.  A split attempt sorts an observer's bins (by x; by mean
// target for a nominal feature), accumulates the left statistic by Chan merges and gets the
// right one by Chan subtraction: ``VR = w_L w_R (mean_R - mean_L)^2 / W^2``; the threshold of
// a numeric cut sends exactly the examples counted left to the left child.
//
// Every bin of a tree sits in one open-addressing hash table (``bin_hash``) keyed by (leaf
// slot, feature, key), linear probing, backward-shift deletion (no tombstones).
//
// Invariants: ``bin_hash`` has a power-of-two size above the bin pool's; a bin is live iff
// ``bins[b, B_LEAF] >= 0``, and then it is in the hash table and on its observer's chain
// (``lf_head`` / ``B_NEXT``), whose length is ``lf_nbins``; ``observe`` is called only with a
// free bin left (``free_bins(st) >= 1``).
#pragma once

#include <cmath>
#include <cstring>

#include "common/rng.hpp"
#include "common/stats.hpp"
#include "tree/split_rule.hpp"
#include "tree/state.hpp"

namespace sf::rules {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

inline constexpr double KEY_LIMIT = 9.0e15;  // |key| cap: integer-valued keys stay exact

/// The split rule of per-feature attribute observers (Hoeffding tree, FIMT): what its line in
/// the rules' table (tree/split_rules.cpp) names.
const tree::SplitRule& observers_rule();

/// ``std::floor(k)`` without a call to the math library (x86-64's baseline has no rounding
/// instruction): exact for ``|k| <= KEY_LIMIT``, whose integer part an int64 holds and whose
/// ``t - 1`` is exact (NaN: ``std::floor``).
inline double floor_key(double k) {
  if (!(k >= -KEY_LIMIT && k <= KEY_LIMIT)) return std::floor(k);
  double t = static_cast<double>(static_cast<i64>(k));
  return t > k ? t - 1.0 : t;
}

/// Key of value ``x`` for an observer: ``scale`` is ``10**d`` for TE-BST, ``1 / radius`` for
/// QO.
inline double bin_key(double x, i64 observer, double scale, bool nominal) {
  if (nominal || observer == tree::OBS_EBST) return x + 0.0;  // -0.0 -> 0.0
  double k = x * scale;
  if (k > KEY_LIMIT) {
    k = KEY_LIMIT;
  } else if (k < -KEY_LIMIT) {
    k = -KEY_LIMIT;
  }
  return floor_key(k) + 0.0;
}

/// The home slot of (leaf, feat, key) in a hash table of mask ``mask``.
inline i64 home(i64 leaf, i64 feat, double key, u64 mask) {
  u64 owner = static_cast<u64>(leaf) * (u64{1} << 20) + static_cast<u64>(feat);
  u64 bits;
  std::memcpy(&bits, &key, sizeof bits);
  return static_cast<i64>(rng::mix64(bits ^ (owner * rng::GOLDEN)) & mask);
}

/// Bins that can still be allocated without growing the pool.
inline i64 free_bins(const TreeRef& st) { return st.bins().rows() - st.ints()[tree::I_BINS_LIVE]; }

/// The arrays of a tree's bin pool, read once per pass over a row's features (a store into
/// an int64 field might change the arena's layout as far as the compiler knows: views taken
/// once are not read again).
struct BinPool {
  Mat<double> bn;
  Vec<i64> ht;
  Vec<i64> ints;
  Mat<i64> head;
  Mat<i64> nbins;

  explicit BinPool(const TreeRef& st)
      : bn(st.bins()), ht(st.bin_hash()), ints(st.ints()), head(st.lf_head()),
        nbins(st.lf_nbins()) {}
};

/// A hint that ``p`` is read soon (no effect on results): a tree's bin pool and hash table
/// are larger than the caches, and a row's observers are independent lookups, so fetching
/// them all ahead overlaps their cache misses.
inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

/// ``prefetch`` of every cache line of bin ``b``'s row: its ``N_BIN_COLS`` (11) doubles span at
/// most three lines of 64 bytes, each of which holds its first, middle or last item.
inline void prefetch_bin(Mat<double> bn, i64 b) {
  prefetch(&bn(b, 0));
  prefetch(&bn(b, tree::N_BIN_COLS / 2));
  prefetch(&bn(b, tree::N_BIN_COLS - 1));
}

/// Add ``(x, y)`` with weight ``w`` to the bin ``key`` of observer (leaf, feat), whose home
/// slot in the hash table is ``i`` (a free bin exists: the caller checked ``free_bins``).
inline void observe_at(const BinPool& pool, i64 leaf, i64 feat, double key, double x, double y,
                       double w, i64 i) {
  using namespace tree;
  Mat<double> bn = pool.bn;
  Vec<i64> ht = pool.ht;
  i64 m = ht.size() - 1;
  double fl = static_cast<double>(leaf);
  double ff = static_cast<double>(feat);
  while (true) {
    i64 b = ht[i];
    if (b < 0) break;
    if (bn(b, B_KEY) == key && bn(b, B_FEAT) == ff && bn(b, B_LEAF) == fl) {
      stats::Stat s = stats::welford_update(bn(b, B_W), bn(b, B_HI), bn(b, B_LO), bn(b, B_M2), y, w);
      bn(b, B_W) = s.w;
      bn(b, B_HI) = s.hi;
      bn(b, B_LO) = s.lo;
      bn(b, B_M2) = s.m2;
      bn(b, B_XSUM) += w * x;
      if (x < bn(b, B_XMIN)) {
        bn(b, B_XMIN) = x;
      } else if (x > bn(b, B_XMAX)) {
        bn(b, B_XMAX) = x;
      }
      return;
    }
    i = (i + 1) & m;
  }
  // new bin
  Vec<i64> ints = pool.ints;
  i64 b = ints[I_BIN_FREE];
  if (b >= 0) {
    ints[I_BIN_FREE] = to_i64(bn(b, B_NEXT));
  } else {
    b = ints[I_BIN_HW];
    ints[I_BIN_HW] += 1;
  }
  ints[I_BINS_LIVE] += 1;
  ht[i] = b;
  Mat<i64> head = pool.head;
  bn(b, B_KEY) = key;
  bn(b, B_W) = w;
  bn(b, B_HI) = y;
  bn(b, B_LO) = 0.0;
  bn(b, B_M2) = 0.0;
  bn(b, B_XSUM) = w * x;
  bn(b, B_XMIN) = x;
  bn(b, B_XMAX) = x;
  bn(b, B_LEAF) = fl;
  bn(b, B_FEAT) = ff;
  bn(b, B_NEXT) = static_cast<double>(head(leaf, feat));
  head(leaf, feat) = b;
  pool.nbins(leaf, feat) += 1;
}

/// Add ``(x, y)`` with weight ``w`` to the bin ``key`` of observer (leaf, feat) (a free bin
/// exists: the caller checked ``free_bins``).
inline void observe(const BinPool& pool, i64 leaf, i64 feat, double key, double x, double y,
                    double w) {
  observe_at(pool, leaf, feat, key, x, y, w,
             home(leaf, feat, key, static_cast<u64>(pool.ht.size() - 1)));
}

/// ``observe`` of tree ``st``'s pool.
inline void observe(const TreeRef& st, i64 leaf, i64 feat, double key, double x, double y,
                    double w) {
  observe(BinPool(st), leaf, feat, key, x, y, w);
}

/// Release every bin of every observer of ``leaf``.
void free_observers(const TreeRef& st, i64 leaf);

/// Re-insert every live bin into the hash table (after it was resized).
void rebuild_hash(const TreeRef& st);

/// Sort the bin ids of observer (leaf, feat) into ``scratch_bins[:n]`` (by x; by mean target
/// for a nominal feature) and return ``n``; valid until the next call.
i64 sorted_bins(const TreeRef& st, i64 leaf, i64 feat, bool nominal);

/// Chan merge of the target statistics of bins ``idx[lo:hi]``.
stats::Stat merged_stat(const TreeRef& st, Vec<i64> idx, i64 lo, i64 hi);

struct Cut {
  double vr;
  i64 k;
};

/// Best partition ``idx[:k+1] | idx[k+1:n]`` by variance reduction (``k = -1`` when no
/// partition leaves ``min_branch`` weight on both sides).
Cut best_cut(const TreeRef& st, Vec<i64> idx, i64 n, double min_branch);

/// Threshold ``c`` of the numeric split after ``idx[k]``: ``max_k <= c < min_{k+1}``.
double cut_threshold(const TreeRef& st, Vec<i64> idx, i64 k);

/// Standard deviation of feature ``feat`` at ``leaf`` from its observer's bins (0: empty).
double feature_spread(const TreeRef& st, i64 leaf, i64 feat);

/// ``(variance reduction, bins)`` of the best cut of feature ``j``'s observer at leaf slot
/// ``leaf`` (sorted, best cut found and its threshold computed, as a split attempt does).
Cut leaf_best_cut(const TreeRef& st, i64 leaf, i64 j, double min_branch);

/// The attribute observers' part of learning a row at an active leaf (the rule's
/// ``learn_at_leaf``): observe each observed feature, try a split every grace period.
void observers_learn(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                     i64 nfeat);

}  // namespace sf::rules
