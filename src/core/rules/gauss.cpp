// The Gaussian split rule of VFDT (see gauss.hpp).
#include "rules/gauss.hpp"

#include <cmath>
#include <limits>

#include "leaves/class_leaves.hpp"
#include "rules/class_split.hpp"
#include "tree/room.hpp"
#include "tree/splitting.hpp"
#include "tree/state.hpp"

namespace sf::rules {

using namespace tree;
using leaves::n_cats;
using leaves::ncc;
using leaves::nominal_slot;

namespace {

constexpr double SQRT2 = 0x1.6a09e667f3bcdp+0;  // math.sqrt(2.0)

/// The weight of class ``k`` at or below ``thr`` on feature ``j`` under its Gaussian.
double gauss_left(const TreeRef& st, i64 leaf, i64 j, i64 k, double thr) {
  Cube<double> gs = st.lf_class_stats();
  double w = gs(leaf, j, 3 * k);
  if (w <= 0.0) return 0.0;
  double mean = gs(leaf, j, 3 * k + 1);
  double sd = std::sqrt(gs(leaf, j, 3 * k + 2) / w);
  if (sd <= 0.0) return mean <= thr ? w : 0.0;
  return w * 0.5 * (1.0 + std::erf((thr - mean) / (sd * SQRT2)));
}

/// The information gain of sides ``a_k`` (left) and ``w_k - a_k`` (right) of every class,
/// -1 when a side is lighter than ``min_branch`` (or empty).
template <class Left>
double sides_gain(const TreeRef& st, i64 leaf, i64 j, i64 K, double min_branch, Left left) {
  Cube<double> gs = st.lf_class_stats();
  double lw = 0.0, rw = 0.0, sp = 0.0, sl = 0.0, sr = 0.0;
  for (i64 k = 0; k < K; ++k) {
    double w = gs(leaf, j, 3 * k);
    double a = left(k);
    double b = py_max(0.0, w - a);
    lw += a;
    rw += b;
    sl += xlx(a);
    sr += xlx(b);
    sp += xlx(w);
  }
  if (lw < min_branch || rw < min_branch || lw <= 0.0 || rw <= 0.0) return -1.0;
  return gain(lw + rw, lw, rw, sp, sl, sr);
}

double threshold_gain(const TreeRef& st, i64 leaf, i64 j, i64 K, double thr, double min_branch) {
  return sides_gain(st, leaf, j, K, min_branch,
                    [&](i64 k) { return gauss_left(st, leaf, j, k, thr); });
}

/// IG of the split sending category ``code`` of nominal feature ``j`` (row ``slot`` of
/// ``lf_nominal_class_weights``) left, the rest right.
double category_gain(const TreeRef& st, i64 leaf, i64 j, i64 slot, i64 K, i64 code,
                     double min_branch) {
  return sides_gain(st, leaf, j, K, min_branch,
                    [&](i64 k) { return ncc(st, leaf, slot, code * K + k); });
}

}  // namespace

FeatureSplit best_of_feature(const TreeRef& st, ParamRef prm, i64 leaf, i64 j, i64 K) {
  double best = -1.0;
  double arg = std::numeric_limits<double>::quiet_NaN();
  if (st.ft_nominal()[j]) {
    i64 slot = nominal_slot(st, j);
    const i64 C = n_cats(st);
    for (i64 code = 0; code < C; ++code) {
      double g = category_gain(st, leaf, j, slot, K, code, prm.min_branch());
      if (g > best) {
        best = g;
        arg = static_cast<double>(code);
      }
    }
    return {best, arg};
  }
  Cube<double> range = st.lf_range();
  double lo = range(leaf, j, 0);
  double hi = range(leaf, j, 1);
  if (!(lo < hi)) return {best, arg};
  for (i64 i = 1; i < leaves::N_THRESHOLDS + 1; ++i) {
    double thr = lo + (hi - lo) * static_cast<double>(i) /
                          static_cast<double>(leaves::N_THRESHOLDS + 1);
    double g = threshold_gain(st, leaf, j, K, thr, prm.min_branch());
    if (g > best) {
      best = g;
      arg = thr;
    }
  }
  return {best, arg};
}

void attempt_gauss(const TreeRef& st, ParamRef prm, i64 leaf) {
  Vec<i64> ints = st.ints();
  ints[I_NATTEMPTS] += 1;
  st.lf_last()[leaf] = st.lf_stat()(leaf, S_W);
  const i64 K = st.lf_class_weights().cols();
  Mat<i8> mask = st.lf_mask();
  double best1 = 0.0;
  double best2 = 0.0;
  i64 f1 = -1;
  double arg1 = std::numeric_limits<double>::quiet_NaN();
  const i64 nfeat = ints[I_NFEAT];
  for (i64 j = 0; j < nfeat; ++j) {
    if (mask(leaf, j) == 0) continue;
    FeatureSplit s = best_of_feature(st, prm, leaf, j, K);
    if (s.gain > best1) {
      best2 = best1;
      best1 = s.gain;
      f1 = j;
      arg1 = s.arg;
    } else if (s.gain > best2) {
      best2 = s.gain;
    }
  }
  if (f1 < 0 || best1 <= 0.0) return;
  double eps = bound(st, prm, leaf);
  if (best1 - best2 > eps || eps < prm.tau()) {
    if (ints[I_NLEAVES] >= prm.max_leaves()) {
      freeze(st);
      return;
    }
    split_gauss(st, prm, leaf, f1, arg1);
  }
}

void split_gauss(const TreeRef& st, ParamRef prm, i64 leaf, i64 f, double arg) {
  Vec<i64> ints = st.ints();
  Mat<double> cw = st.lf_class_weights();
  const i64 K = cw.cols();
  Cube<double> gs = st.lf_class_stats();
  i64 node = st.lf_node()[leaf];
  const bool nominal = st.ft_nominal()[f] == 1;
  const i64 code = nominal ? to_i64(arg) : 0;
  const i64 slot = nominal_slot(st, f);
  auto left = [&](i64 k) {
    return nominal ? ncc(st, leaf, slot, code * K + k) : gauss_left(st, leaf, f, k, arg);
  };
  double l0 = 0.0, l1 = 0.0, l2 = 0.0, r0 = 0.0, r1 = 0.0, r2 = 0.0;
  for (i64 k = 0; k < K; ++k) {
    double w = gs(leaf, f, 3 * k);
    double a = left(k);
    double b = py_max(0.0, w - a);
    const double fk = static_cast<double>(k);
    const double fkk = static_cast<double>(k * k);
    l0 += a;
    l1 += fk * a;
    l2 += fkk * a;
    r0 += b;
    r1 += fk * b;
    r2 += fkk * b;
  }
  if (nominal) {  // the category left, every other one seen here right, unseen ones as missing
    Vec<double> cats = st.cats();
    i64 off = ints[I_CAT_USED];
    cats[off] = static_cast<double>(code);
    i64 nr = 0;
    const i64 C = n_cats(st);
    for (i64 c = 0; c < C; ++c) {
      if (c == code) continue;
      double seen = 0.0;
      for (i64 k = 0; k < K; ++k) seen += ncc(st, leaf, slot, c * K + k);
      if (seen > 0.0) {
        cats[off + 1 + nr] = static_cast<double>(c);
        nr += 1;
      }
    }
    ints[I_CAT_USED] = off + 1 + nr;
    st.nd_cat_off()[node] = off;
    st.nd_cat_len()[node] = 1;
    st.nd_cat_right()[node] = nr;
    st.nd_thr()[node] = std::numeric_limits<double>::quiet_NaN();
  } else {
    st.nd_thr()[node] = arg;
  }
  SideStat l = side_stat(l0, l1, l2);
  SideStat r = side_stat(r0, r1, r2);
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  grow_children(st, prm, leaf, f, stats::Stat{l.w, l.mean, 0.0, l.m2},
                stats::Stat{r.w, r.mean, 0.0, r.m2});
  i64 right = st.nd_leaf()[st.nd_right()[node]];
  for (i64 k = 0; k < K; ++k) {  // the parent's statistics are still in the left child's slot
    double w = gs(leaf, f, 3 * k);
    double a = left(k);
    cw(right, k) = py_max(0.0, w - a);
    cw(leaf, k) = a;
  }
  children_start(st, node, leaf, right);
}

void gauss_class_learns(const TreeRef& st, ParamRef prm, i64 leaf, Row, double, double, i64) {
  Mat<double> s = st.lf_stat();
  if (s(leaf, S_W) - st.lf_last()[leaf] >= prm.grace() && s(leaf, S_M2) > 0.0)
    attempt_gauss(st, prm, leaf);
}

const SplitRule& gauss_rule() {
  static const SplitRule rule = [] {
    SplitRule r;
    r.code = static_cast<int>(SPLIT_GAUSS);
    r.name = "gauss";
    r.class_learn_at_leaf = gauss_class_learns;
    r.value_ranges = true;
    return r;
  }();
  return rule;
}

}  // namespace sf::rules
