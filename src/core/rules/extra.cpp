// The extremely randomised split (see extra.hpp): candidates, their sides, the split attempt,
// the split, and the rule's part of learning a row.
#include "rules/extra.hpp"

#include <cmath>
#include <limits>

#include "rules/extra_classes.hpp"
#include "tree/room.hpp"
#include "tree/splitting.hpp"
#include "tree/state.hpp"

namespace sf::rules {

using namespace tree;

namespace {

constexpr i64 SALT_RANGE = i64{1} << 52;  // salts are integers stored exactly in a float64

inline bool goes_left(bool nominal, double thr, double v) {
  if (nominal) return cat_goes_left(thr, v);
  return v <= thr;
}

inline void add_to_side(Cube<double> xc, i64 leaf, i64 j, bool left, double y, double w) {
  const i64 c0 = left ? XC_LW : XC_RW;  // (w, hi, lo, m2) are consecutive on both sides
  stats::Stat s = stats::welford_update(xc(leaf, j, c0), xc(leaf, j, c0 + 1),
                                        xc(leaf, j, c0 + 2), xc(leaf, j, c0 + 3), y, w);
  xc(leaf, j, c0) = s.w;
  xc(leaf, j, c0 + 1) = s.hi;
  xc(leaf, j, c0 + 2) = s.lo;
  xc(leaf, j, c0 + 3) = s.m2;
}

/// Salts drawn at most for a candidate that must split the buffered categories; if none does,
/// the last is kept.  A draw leaves two or more distinct categories on one side with
/// probability at most 1/2 (one fair bit of the hash per category): all fail with
/// probability <= 2^-64.
constexpr int MAX_SALT_DRAWS = 64;

/// The salt of a nominal candidate of feature ``j`` drawn from the ``n`` buffered examples.
/// With ``NominalCandidate::split_buffered`` a salt is drawn again while every category the
/// leaf buffered falls on one side, when it buffered at least two (a binary split between
/// the observed categories, each equally likely); categories first seen later go to the
/// salt's random sides either way.
double nominal_salt(u64& rng_state, Cube<double> buf, i64 leaf, i64 j, i64 n,
                    NominalCandidate kind) {
  double salt = static_cast<double>(rng::next_below(rng_state, SALT_RANGE));
  if (kind != NominalCandidate::split_buffered) return salt;
  double first = std::numeric_limits<double>::quiet_NaN();
  bool several = false;
  for (i64 i = 0; i < n; ++i) {
    double v = buf(leaf, 2 + j, i);
    if (is_nan(v)) continue;
    if (is_nan(first)) {
      first = v;
    } else if (v != first) {
      several = true;
      break;
    }
  }
  if (!several) return salt;  // no binary split of one category: new ones decide
  for (int draw = 1;; ++draw) {
    const bool first_left = cat_goes_left(salt, first);
    for (i64 i = 0; i < n; ++i) {
      double v = buf(leaf, 2 + j, i);
      if (!is_nan(v) && cat_goes_left(salt, v) != first_left) return salt;
    }
    if (draw == MAX_SALT_DRAWS) return salt;
    salt = static_cast<double>(rng::next_below(rng_state, SALT_RANGE));
  }
}

/// Stage 1: one random candidate per allowed feature from the buffered examples, which are
/// then replayed into the candidates' side statistics.
void draw_candidates(const TreeRef& st, i64 leaf, i64 nfeat, NominalCandidate kind) {
  Cube<double> buf = st.lf_buffer();
  Cube<double> xc = st.lf_candidate();
  Mat<i8> mask = st.lf_mask();
  Vec<i8> ft_nominal = st.ft_nominal();
  u64& rng_state = st.rng()[0];
  const i64 n = st.lf_nexamples()[leaf];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (i64 j = 0; j < nfeat; ++j) {
    for (i64 c = 0; c < xc.n2; ++c) xc(leaf, j, c) = 0.0;
    xc(leaf, j, XC_THR) = nan;
    if (mask(leaf, j) == 0) continue;
    const bool nominal = ft_nominal[j] == 1;
    double lo = inf;
    double hi = -inf;
    for (i64 i = 0; i < n; ++i) {
      double v = buf(leaf, 2 + j, i);
      if (!is_nan(v)) {
        lo = py_min(lo, v);
        hi = py_max(hi, v);
      }
    }
    if (nominal) {
      if (lo < inf) xc(leaf, j, XC_THR) = nominal_salt(rng_state, buf, leaf, j, n, kind);
    } else if (lo < hi) {
      double thr = lo + rng::next_float(rng_state) * (hi - lo);
      xc(leaf, j, XC_THR) = thr < hi ? thr : lo;
    }
    const double thr = xc(leaf, j, XC_THR);
    if (is_nan(thr) || xc.n2 <= XC_RM2) continue;  // (a classifier's: no side statistics)
    for (i64 i = 0; i < n; ++i) {
      double v = buf(leaf, 2 + j, i);
      if (!is_nan(v))
        add_to_side(xc, leaf, j, goes_left(nominal, thr, v), buf(leaf, XB_Y, i),
                    buf(leaf, XB_W, i));
    }
  }
}

/// VR of candidate ``j`` (-1 when a side has less than ``min_branch`` weight).
inline double variance_reduction(Cube<double> xc, i64 leaf, i64 j, double min_branch) {
  double lw = xc(leaf, j, XC_LW), lm2 = xc(leaf, j, XC_LM2);
  double rw = xc(leaf, j, XC_RW), rm2 = xc(leaf, j, XC_RM2);
  if (lw < min_branch || rw < min_branch || lw <= 0.0 || rw <= 0.0) return -1.0;
  stats::Stat p = stats::chan_merge(lw, xc(leaf, j, XC_LHI), xc(leaf, j, XC_LLO), lm2, rw,
                                    xc(leaf, j, XC_RHI), xc(leaf, j, XC_RLO), rm2);
  // var(P) - wL/wP var(L) - wR/wP var(R), with var = m2 / w
  return (p.m2 - lm2 - rm2) / p.w;
}

}  // namespace

void extra_observe(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                   i64 nfeat, NominalCandidate kind) {
  Vec<i64> nexamples = st.lf_nexamples();
  const i64 n = nexamples[leaf];
  const i64 m_min = prm.m_min();
  if (n < m_min) {
    Cube<double> buf = st.lf_buffer();
    buf(leaf, XB_Y, n) = y;
    buf(leaf, XB_W, n) = w;
    for (i64 j = 0; j < nfeat; ++j) buf(leaf, 2 + j, n) = x[j];
    nexamples[leaf] = n + 1;
    if (n + 1 == m_min) draw_candidates(st, leaf, nfeat, kind);
    return;
  }
  Cube<double> xc = st.lf_candidate();
  Vec<i8> ft_nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    double thr = xc(leaf, j, XC_THR);
    double v = x[j];
    if (is_nan(thr) || is_nan(v)) continue;
    add_to_side(xc, leaf, j, goes_left(ft_nominal[j] == 1, thr, v), y, w);
  }
}

i64 choose_extra_split(const TreeRef& st, ParamRef prm, i64 leaf) {
  Vec<i64> ints = st.ints();
  Mat<double> stat = st.lf_stat();
  ints[I_NATTEMPTS] += 1;
  st.lf_last()[leaf] = stat(leaf, S_W);
  if (st.lf_nexamples()[leaf] < prm.m_min()) return -1;
  const i64 nfeat = ints[I_NFEAT];
  const double min_branch = prm.min_branch();
  Cube<double> xc = st.lf_candidate();
  double best1 = 0.0;
  double best2 = 0.0;
  i64 f1 = -1;
  for (i64 j = 0; j < nfeat; ++j) {
    if (is_nan(xc(leaf, j, XC_THR))) continue;
    double vr = variance_reduction(xc, leaf, j, min_branch);
    if (vr > best1) {
      best2 = best1;
      best1 = vr;
      f1 = j;
    } else if (vr > best2) {
      best2 = vr;
    }
  }
  if (f1 < 0 || best1 <= 0.0) return -1;
  // n >= grace > 0: the attempt came after a grace period since lf_last >= lf_inherited
  double n = stat(leaf, S_W) - st.lf_inherited()(leaf, S_W);
  double eps = std::sqrt(std::log(1.0 / prm.delta()) / (2.0 * n));
  if (best2 / best1 < 1.0 - eps) return f1;
  if (eps >= prm.tau()) return -1;
  i64 tied = 0;
  for (i64 j = 0; j < nfeat; ++j) {
    if (!is_nan(xc(leaf, j, XC_THR)))
      if (variance_reduction(xc, leaf, j, min_branch) >= (1.0 - eps) * best1) tied += 1;
  }
  i64 pick = rng::next_below(st.rng()[0], tied);
  for (i64 j = 0; j < nfeat; ++j) {
    if (!is_nan(xc(leaf, j, XC_THR))) {
      if (variance_reduction(xc, leaf, j, min_branch) >= (1.0 - eps) * best1) {
        if (pick == 0) return j;
        pick -= 1;
      }
    }
  }
  return f1;
}

Sides extra_sides(const TreeRef& st, i64 leaf, i64 j) {
  Cube<double> xc = st.lf_candidate();
  return {xc(leaf, j, XC_THR),
          {xc(leaf, j, XC_LW), xc(leaf, j, XC_LHI), xc(leaf, j, XC_LLO), xc(leaf, j, XC_LM2)},
          {xc(leaf, j, XC_RW), xc(leaf, j, XC_RHI), xc(leaf, j, XC_RLO), xc(leaf, j, XC_RM2)}};
}

void attempt_extra_split(const TreeRef& st, ParamRef prm, i64 leaf) {
  i64 f = choose_extra_split(st, prm, leaf);
  if (f >= 0) {
    if (st.ints()[I_NLEAVES] >= prm.max_leaves()) {
      freeze(st);
      return;
    }
    split_extra(st, prm, leaf, f);
  }
}

void split_extra(const TreeRef& st, ParamRef prm, i64 leaf, i64 f) {
  Sides s = extra_sides(st, leaf, f);
  i64 node = st.lf_node()[leaf];
  st.nd_thr()[node] = s.thr;  // a threshold, or a nominal candidate's salt
  if (st.ft_nominal()[f] == 1) {
    st.nd_cat_off()[node] = 0;
    st.nd_cat_len()[node] = -1;  // categories go to the salt's random sides (route)
    st.nd_cat_right()[node] = 0;
  }
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  grow_children(st, prm, leaf, f, s.left, s.right);
}

void extra_learns(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                  i64 nfeat) {
  Mat<double> s = st.lf_stat();
  extra_observe(st, prm, leaf, x, y, w, nfeat, NominalCandidate::any_salt);
  if (s(leaf, S_W) - st.lf_last()[leaf] >= prm.grace() && s(leaf, S_M2) > 0.0)
    attempt_extra_split(st, prm, leaf);
}

const SplitRule& extra_rule() {
  static const SplitRule rule = [] {
    SplitRule r;
    r.code = static_cast<int>(SPLIT_EXTRA);
    r.name = "extra";
    r.learn_at_leaf = extra_learns;
    r.class_learn_at_leaf = extra_class_learns;  // rules/extra_classes: ACTSER's part
    r.buffers_examples = true;
    r.compiled_with.alternates = true;
    return r;
  }();
  return rule;
}

}  // namespace sf::rules
