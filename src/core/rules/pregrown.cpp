// ABORF's pre-grown trees and evidence weights (see pregrown.hpp).
#include "rules/pregrown.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/rng.hpp"
#include "leaves/leaf_models.hpp"
#include "rules/extra.hpp"
#include "tree/leaf_sketch.hpp"

namespace sf::rules {

using namespace tree;

namespace {

/// Whether Monte Carlo point ``i`` goes left at split node ``node``.
bool point_goes_left(const TreeRef& st, i64 node, Mat<double> pts, i64 i) {
  i64 kind = st.nd_cat_len()[node];
  if (kind == NODE_PROJ) {
    Mat<double> u = st.nd_proj();
    double s = 0.0;
    for (i64 j = 0; j < pts.cols(); ++j) s += u(node, j) * pts(i, j);
    return s <= st.nd_thr()[node];
  }
  if (kind == NODE_SALT) return cat_goes_left(st.nd_thr()[node], static_cast<double>(i));
  return pts(i, st.nd_feat()[node]) <= st.nd_thr()[node];
}

/// Node ``node``'s split through its centre ``nd_centre[node]``.
void draw_split(const TreeRef& st, ParamRef prm, i64 node, i64 d) {
  u64& rng = st.rng()[0];
  Mat<double> ctr = st.nd_centre();
  Vec<i8> nominal = st.ft_nominal();
  Vec<double> thr_ = st.nd_thr();
  i64 f = rng::next_below(rng, d);
  st.nd_feat()[node] = f;
  st.nd_miss_left()[node] = 1;
  if (nominal[f]) {
    st.nd_cat_len()[node] = NODE_SALT;
    thr_[node] = static_cast<double>(rng::next_below(rng, SALT_RANGE));
    st.nd_miss_left()[node] = rng::next_float(rng) < 0.5 ? 1 : 0;
    return;
  }
  if (prm.oblique() == 0) {
    // f is uniform among the numeric features, given that it is one
    st.nd_cat_len()[node] = NODE_AXIS;
    thr_[node] = ctr(node, f);
    return;
  }
  st.nd_cat_len()[node] = NODE_PROJ;
  Mat<double> u = st.nd_proj();
  double norm = 0.0;
  while (norm == 0.0) {
    for (i64 j = 0; j < d; ++j) {
      double t = 0.0;
      if (!nominal[j]) t = 2.0 * rng::next_float(rng) - 1.0;
      u(node, j) = t;
      norm += t * t;
    }
  }
  norm = std::sqrt(norm);
  double thr = 0.0;
  for (i64 j = 0; j < d; ++j) {  // the sum child_pregrown makes for a row at the centre
    double uj = u(node, j) / norm;
    u(node, j) = uj;
    thr += uj * ctr(node, j);
  }
  thr_[node] = thr;
}

[[noreturn]] void cannot_hold(const std::string& what) {
  throw std::invalid_argument("pre-grown tree: " + what);
}

/// The fields ``build_pregrown`` writes hold the tree of depth ``q`` on ``d`` features and its
/// generator can draw its splits (else it would write outside them, or loop for ever).
void check_room(const TreeRef& st, ParamRef prm, i64 q, i64 d, i64 m) {
  if (q < 0 || q > MAX_DEPTH)
    cannot_hold("depth " + std::to_string(q) + " outside [0, " + std::to_string(MAX_DEPTH) + "]");
  if (m < 0) cannot_hold("a negative number of Monte Carlo points");
  if (q > 0 && d < 1) cannot_hold("no feature to split on");
  const i64 leaves = i64{1} << q;
  const i64 nodes = 2 * leaves - 1;
  const i64 node_fields[] = {st.nd_feat().size(), st.nd_thr().size(), st.nd_left().size(),
                             st.nd_right().size(), st.nd_miss_left().size(),
                             st.nd_leaf().size(), st.nd_cat_len().size(), st.nd_depth().size(),
                             st.nd_alt().size(), st.nd_centre().rows()};
  for (i64 n : node_fields)
    if (n < nodes) cannot_hold("fewer nodes than the balanced tree's");
  if (st.lf_node().size() < leaves || st.lf_active().size() < leaves ||
      st.lf_mask().rows() < leaves)
    cannot_hold("fewer leaf slots than the balanced tree's");
  if (st.ft_nominal().size() < d || st.nd_centre().cols() < d)
    cannot_hold("feature fields narrower than its features");
  if (q > 0 && prm.oblique() != 0 && (st.nd_proj().rows() < nodes || st.nd_proj().cols() < d))
    cannot_hold("no room for its projections");
  if (st.rng().size() < 1) cannot_hold("no generator state");
}

}  // namespace

void draw_points(u64& rng, Mat<double> pts) {
  for (i64 i = 0; i < pts.rows(); ++i)
    for (i64 j = 0; j < pts.cols(); ++j) pts(i, j) = rng::next_float(rng);
}

void build_pregrown(const TreeRef& st, ParamRef prm) {
  Vec<i64> ints = st.ints();
  const i64 q = prm.max_depth();
  const i64 d = ints[I_NFEAT];
  const i64 m = prm.mc_points();
  check_room(st, prm, q, d, m);
  std::vector<double> pts_(static_cast<size_t>(m * d));
  Mat<double> pts(pts_.data(), m, d);
  draw_points(st.rng()[0], pts);
  std::vector<i64> pos_(static_cast<size_t>(m), 0);
  Vec<i64> pos(pos_.data(), m);
  const i64 width_max = i64{1} << q;
  std::vector<double> sums_(static_cast<size_t>(width_max * d), 0.0);
  Mat<double> sums(sums_.data(), width_max, d);
  std::vector<i64> cnt_(static_cast<size_t>(width_max), 0);
  Vec<i64> cnt(cnt_.data(), width_max);
  Mat<double> ctr = st.nd_centre();
  Vec<i64> depth_ = st.nd_depth(), left = st.nd_left(), right = st.nd_right(),
           leaf_ = st.nd_leaf();
  for (i64 depth = 0; depth < q + 1; ++depth) {
    const i64 width = i64{1} << depth;
    const i64 first = width - 1;
    for (i64 k = 0; k < width; ++k) {
      for (i64 j = 0; j < d; ++j) sums(k, j) = 0.0;
      cnt[k] = 0;
    }
    for (i64 i = 0; i < m; ++i) {
      i64 k = pos[i] - first;
      cnt[k] += 1;
      for (i64 j = 0; j < d; ++j) sums(k, j) += pts(i, j);
    }
    for (i64 k = 0; k < width; ++k) {
      i64 node = first + k;
      depth_[node] = depth;
      if (cnt[k] > 0) {
        for (i64 j = 0; j < d; ++j) ctr(node, j) = sums(k, j) / static_cast<double>(cnt[k]);
      } else if (node == 0) {
        for (i64 j = 0; j < d; ++j) ctr(node, j) = 0.5;
      } else {
        i64 parent = (node - 1) / 2;  // (node >= 1)
        for (i64 j = 0; j < d; ++j) ctr(node, j) = ctr(parent, j);
      }
      if (depth < q) {
        draw_split(st, prm, node, d);
        left[node] = 2 * node + 1;
        right[node] = 2 * node + 2;
        leaf_[node] = -1;
      }
    }
    if (depth < q) {
      for (i64 i = 0; i < m; ++i) {
        i64 node = pos[i];
        pos[i] = 2 * node + (point_goes_left(st, node, pts, i) ? 1 : 2);
      }
    }
  }
  const i64 n_leaves = i64{1} << q;
  const i64 first = n_leaves - 1;
  Vec<i64> feat = st.nd_feat(), alt = st.nd_alt(), lf_node = st.lf_node();
  Vec<i8> active = st.lf_active();
  Mat<i8> mask = st.lf_mask();
  for (i64 s = 0; s < n_leaves; ++s) {
    i64 node = first + s;
    feat[node] = -1;
    left[node] = -1;
    right[node] = -1;
    leaf_[node] = s;
    alt[node] = -1;
    lf_node[s] = node;
    active[s] = 0;  // no observers, no split attempts
    for (i64 j = 0; j < mask.cols(); ++j) mask(s, j) = 0;
    if (prm.sketch_k() > 0) reset_sketch(st, prm, s);
  }
  ints[I_NNODES] = 2 * n_leaves - 1;
  ints[I_NLEAVES] = n_leaves;
  ints[I_LEAF_HW] = n_leaves;
  ints[I_NSPLITS] = n_leaves - 1;
}

namespace {

/// The arrays a pre-grown tree's tests read, taken once per routed row.
struct PregrownTests {
  Vec<i64> feat, left, right, kind;
  Vec<double> thr;
  Vec<i8> miss_left;
  Mat<double> mm, proj, centre;

  explicit PregrownTests(const TreeRef& st)
      : feat(st.nd_feat()), left(st.nd_left()), right(st.nd_right()), kind(st.nd_cat_len()),
        thr(st.nd_thr()), miss_left(st.nd_miss_left()), mm(st.ft_minmax()), proj(st.nd_proj()),
        centre(st.nd_centre()) {}
};

inline i64 child_of(const PregrownTests& nd, i64 node, Row x) {
  i64 kind = nd.kind[node];
  bool go_left;
  if (kind == NODE_PROJ) {
    // (a weight of 0 adds 0: inputs are finite, inf is refused)
    double s = 0.0;
    const i64 n = py_min(x.size(), nd.proj.cols());
    for (i64 j = 0; j < n; ++j) {
      double inv = nd.mm(j, MM_INV);
      double z = (x[j] - nd.mm(j, MM_MIN)) * inv;
      s += nd.proj(node, j) * (inv != 0.0 && z == z ? z : nd.centre(node, j));
    }
    go_left = s <= nd.thr[node];
  } else {
    i64 f = nd.feat[node];
    double v = f < x.size() ? x[f] : std::numeric_limits<double>::quiet_NaN();
    if (kind == NODE_SALT) {
      go_left = is_nan(v) ? nd.miss_left[node] == 1 : cat_goes_left(nd.thr[node], v);
    } else {  // feature f's value min-max scaled, NaN when missing or its range unknown
      double inv = nd.mm(f, MM_INV);
      double z = is_nan(v) || inv == 0.0 ? std::numeric_limits<double>::quiet_NaN()
                                         : (v - nd.mm(f, MM_MIN)) * inv;
      go_left = is_nan(z) || z <= nd.thr[node];
    }
  }
  return go_left ? nd.left[node] : nd.right[node];
}

}  // namespace

i64 child_pregrown(const TreeRef& st, i64 node, Row x) {
  return child_of(PregrownTests(st), node, x);
}

i64 route_pregrown(const TreeRef& st, i64 node, Row x) {
  const PregrownTests nd(st);
  while (nd.feat[node] >= 0) node = child_of(nd, node, x);
  return node;
}

void update_scaling(const TreeRef& st, Row x, i64 nfeat) {
  Mat<double> mm = st.ft_minmax();
  Vec<i8> nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    double v = x[j];
    if (!(std::fabs(v) <= leaves::HUGE_X) || nominal[j]) continue;
    double lo = mm(j, MM_MIN);
    double hi = mm(j, MM_MAX);
    if (!(v < lo || v > hi || is_nan(lo))) continue;
    if (is_nan(lo) || v < lo) {
      lo = v;
      mm(j, MM_MIN) = v;
    }
    if (is_nan(hi) || v > hi) {
      hi = v;
      mm(j, MM_MAX) = v;
    }
    mm(j, MM_INV) = hi > lo ? 1.0 / (hi - lo) : 0.0;
  }
}

bool room_pregrown(const TreeRef&, ParamRef) { return true; }

void evidence_update(const TreeRef& st, ParamRef prm, i64 leaf, double y, double w, double pred,
                     i64 nfeat) {
  Vec<double> ev = st.evidence();
  Mat<double> le = st.lf_evidence();
  const double n_leaves = static_cast<double>(st.ints()[I_NLEAVES]);
  if (st.lf_stat()(leaf, S_W) <= w) {  // the leaf was empty: it made no prediction, no error
    ev[EV_ERR] = prm.ev_fade() * ev[EV_ERR];
    ev[EV_LOGW] = (ev[EV_LOGB] - ev[EV_ERR]) / n_leaves;
    return;
  }
  if (prm.leaf_model() == LEAF_BAYES) {  // the leaf left its log predictive density of y there
    ev[EV_ERR] = prm.ev_fade() * ev[EV_ERR] - w * le(leaf, LEV_TERM);
    ev[EV_LOGW] = -ev[EV_ERR] / n_leaves;
    return;
  }
  double e2 = int_power(y - pred, 2);
  double g = prm.ev_decay();
  double n = g * le(leaf, LEV_N) + w;
  double sse = py_max(g * le(leaf, LEV_SSE) + w * e2, TINY);
  le(leaf, LEV_N) = n;
  le(leaf, LEV_SSE) = sse;
  double term = 0.5 * (n - static_cast<double>(nfeat)) * (std::log(n) - std::log(sse));
  ev[EV_LOGB] += term - le(leaf, LEV_TERM);
  le(leaf, LEV_TERM) = term;
  ev[EV_ERR] = prm.ev_fade() * ev[EV_ERR] + 0.5 * w * n * e2 / sse;
  ev[EV_LOGW] = (ev[EV_LOGB] - ev[EV_ERR]) / n_leaves;
}

void log_weights(const Arena& A, Vec<double> out) {
  const i64 T = A.n_trees();
  for (i64 t = 0; t < T; ++t) out[t] = log_weight(A, t);
}

double weighted_mean_at(const Arena& A, Vec<const double> p) {
  if (A.n_trees() == 0) return std::numeric_limits<double>::quiet_NaN();  // (no tree to read)
  return weighted_mean(
      A.n_trees(), [&A](i64 t) { return log_weight(A, t); }, [p](i64 t) { return p[t]; });
}

const SplitRule& pregrown_rule() {
  static const SplitRule rule = [] {
    SplitRule r;
    r.code = static_cast<int>(SPLIT_PREGROWN);
    r.name = "pregrown";
    r.route_from = route_pregrown;
    r.child = child_pregrown;
    r.init_root = build_pregrown;
    r.room = room_pregrown;
    r.after_learning = update_scaling;
    r.grown_before_data = true;
    r.compiled_with.evidence = true;
    return r;
  }();
  return rule;
}

}  // namespace sf::rules
