// The extremely randomised split's classification part (see extra_classes.hpp).
#include "rules/extra_classes.hpp"

#include <cmath>
#include <limits>

#include "common/rng.hpp"
#include "rules/class_split.hpp"
#include "rules/extra.hpp"
#include "tree/room.hpp"
#include "tree/splitting.hpp"
#include "tree/state.hpp"

namespace sf::rules {

using namespace tree;

namespace {

bool goes_left(const TreeRef& st, i64 j, double thr, double v) {
  if (st.ft_nominal()[j]) return cat_goes_left(thr, v);
  return v <= thr;
}

/// The candidates just drawn from the buffered examples get their class weights.
void replay_candidates(const TreeRef& st, i64 leaf, i64 nfeat) {
  Cube<double> xcc = st.lf_candidate_classes();
  Cube<double> buf = st.lf_buffer();
  Cube<double> cand = st.lf_candidate();
  const i64 n = st.lf_nexamples()[leaf];
  for (i64 j = 0; j < nfeat; ++j) {
    for (i64 c = 0; c < xcc.n2; ++c) xcc(leaf, j, c) = 0.0;
    double thr = cand(leaf, j, XC_THR);
    if (is_nan(thr)) continue;
    for (i64 i = 0; i < n; ++i) {
      double v = buf(leaf, 2 + j, i);
      if (!is_nan(v)) {
        i64 k = to_i64(buf(leaf, XB_Y, i));
        i64 side = goes_left(st, j, thr, v) ? 0 : 1;
        xcc(leaf, j, 2 * k + side) += buf(leaf, XB_W, i);
      }
    }
  }
}

/// IG of the candidate on feature ``j`` (-1 when a side is lighter than ``min_branch``).
double candidate_gain(const TreeRef& st, i64 leaf, i64 j, i64 K, double min_branch) {
  Cube<double> xcc = st.lf_candidate_classes();
  double lw = 0.0, rw = 0.0, sp = 0.0, sl = 0.0, sr = 0.0;
  for (i64 k = 0; k < K; ++k) {
    double a = xcc(leaf, j, 2 * k);
    double b = xcc(leaf, j, 2 * k + 1);
    lw += a;
    rw += b;
    sl += xlx(a);
    sr += xlx(b);
    sp += xlx(a + b);
  }
  if (lw < min_branch || rw < min_branch || lw <= 0.0 || rw <= 0.0) return -1.0;
  return gain(lw + rw, lw, rw, sp, sl, sr);
}

}  // namespace

void extra_class_observe(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                         i64 nfeat) {
  Vec<i64> nexamples = st.lf_nexamples();
  if (nexamples[leaf] < prm.m_min()) {
    // buffers; draws the candidates at m_min (nominal ones split the buffered categories)
    extra_observe(st, prm, leaf, x, y, w, nfeat, NominalCandidate::split_buffered);
    if (nexamples[leaf] == prm.m_min()) replay_candidates(st, leaf, nfeat);
    return;
  }
  i64 k = to_i64(y);
  Cube<double> cand = st.lf_candidate();
  Cube<double> xcc = st.lf_candidate_classes();
  for (i64 j = 0; j < nfeat; ++j) {
    double thr = cand(leaf, j, XC_THR);
    double v = x[j];
    if (is_nan(thr) || is_nan(v)) continue;
    i64 side = goes_left(st, j, thr, v) ? 0 : 1;
    xcc(leaf, j, 2 * k + side) += w;
  }
}

i64 choose_extra(const TreeRef& st, ParamRef prm, i64 leaf) {
  Vec<i64> ints = st.ints();
  ints[I_NATTEMPTS] += 1;
  st.lf_last()[leaf] = st.lf_stat()(leaf, S_W);
  if (st.lf_nexamples()[leaf] < prm.m_min()) return -1;
  const i64 K = st.lf_class_weights().cols();
  const i64 nfeat = ints[I_NFEAT];
  Cube<double> cand = st.lf_candidate();
  Vec<double> gains = st.ft_spread();  // each candidate's gain, computed once (zeroed after)
  double best1 = 0.0;
  double best2 = 0.0;
  i64 f1 = -1;
  for (i64 j = 0; j < nfeat; ++j) {
    if (is_nan(cand(leaf, j, XC_THR))) {
      gains[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    double g = candidate_gain(st, leaf, j, K, prm.min_branch());
    gains[j] = g;
    if (g > best1) {
      best2 = best1;
      best1 = g;
      f1 = j;
    } else if (g > best2) {
      best2 = g;
    }
  }
  i64 out = -1;
  if (f1 >= 0 && best1 > 0.0) {
    double eps = bound(st, prm, leaf);
    if (best1 - best2 > eps) {
      out = f1;
    } else if (eps < prm.tau()) {
      i64 tied = 0;
      for (i64 j = 0; j < nfeat; ++j)
        if (gains[j] >= best1 - eps) tied += 1;
      i64 pick = rng::next_below(st.rng()[0], tied);
      out = f1;
      for (i64 j = 0; j < nfeat; ++j) {
        if (gains[j] >= best1 - eps) {
          if (pick == 0) {
            out = j;
            break;
          }
          pick -= 1;
        }
      }
    }
  }
  for (i64 j = 0; j < nfeat; ++j) gains[j] = 0.0;
  return out;
}

void split_extra_class(const TreeRef& st, ParamRef prm, i64 leaf, i64 f) {
  Mat<double> cw = st.lf_class_weights();
  const i64 K = cw.cols();
  Cube<double> xcc = st.lf_candidate_classes();
  i64 node = st.lf_node()[leaf];
  st.nd_thr()[node] = st.lf_candidate()(leaf, f, XC_THR);
  if (st.ft_nominal()[f] == 1) {
    st.nd_cat_off()[node] = 0;
    st.nd_cat_len()[node] = -1;  // categories go to the salt's random sides (route)
    st.nd_cat_right()[node] = 0;
  }
  double l0 = 0.0, l1 = 0.0, l2 = 0.0, r0 = 0.0, r1 = 0.0, r2 = 0.0;
  for (i64 k = 0; k < K; ++k) {
    double a = xcc(leaf, f, 2 * k);
    double b = xcc(leaf, f, 2 * k + 1);
    const double fk = static_cast<double>(k);
    const double fkk = static_cast<double>(k * k);
    l0 += a;
    l1 += fk * a;
    l2 += fkk * a;
    r0 += b;
    r1 += fk * b;
    r2 += fkk * b;
  }
  SideStat l = side_stat(l0, l1, l2);
  SideStat r = side_stat(r0, r1, r2);
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  grow_children(st, prm, leaf, f, stats::Stat{l.w, l.mean, 0.0, l.m2},
                stats::Stat{r.w, r.mean, 0.0, r.m2});
  i64 right = st.nd_leaf()[st.nd_right()[node]];
  for (i64 k = 0; k < K; ++k) {  // the left child keeps the parent's slot: candidates intact
    cw(right, k) = xcc(leaf, f, 2 * k + 1);
    cw(leaf, k) = xcc(leaf, f, 2 * k);
  }
  children_start(st, node, leaf, right);
}

void extra_class_learns(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                        i64 nfeat) {
  extra_class_observe(st, prm, leaf, x, y, w, nfeat);
  Mat<double> s = st.lf_stat();
  if (s(leaf, S_W) - st.lf_last()[leaf] >= prm.grace() && s(leaf, S_M2) > 0.0) {
    i64 f = choose_extra(st, prm, leaf);
    if (f >= 0) {
      if (st.ints()[I_NLEAVES] >= prm.max_leaves()) {
        freeze(st);
        return;
      }
      split_extra_class(st, prm, leaf, f);
    }
  }
}

}  // namespace sf::rules
