// Alternate subtrees (see alternates.hpp).
#include "tree/alternates.hpp"

#include <cmath>
#include <stdexcept>

#include "drift/page_hinkley.hpp"
#include "leaves/leaf_models.hpp"
#include "tree/leaf_learning.hpp"
#include "tree/leaf_sketch.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::tree {

namespace {

/// Node ``n``'s detector starts again (keeping its normaliser) and its comparison is reset.
void restart_detector(const TreeRef& st, i64 n) {
  Mat<double> det = st.nd_detector();
  for (i64 c = 0; c < drift::PHN_SD0; ++c) det(n, c) = 0.0;
  Mat<double> cmp = st.nd_alt_compare();
  for (i64 c = 0; c < cmp.cols(); ++c) cmp(n, c) = 0.0;
}

template <class T>
void zero_row(Mat<T> m, i64 r) {
  for (i64 c = 0; c < m.cols(); ++c) m(r, c) = 0;
}

}  // namespace

void start_alternate(const TreeRef& st, ParamRef prm, i64 n) {
  restart_detector(st, n);
  Vec<i64> ints = st.ints();
  if (ints[I_FROZEN] == 1 || ints[I_NLEAVES] >= prm.max_leaves()) return;
  i64 a = new_node(st);
  i64 leaf = new_leaf_slot(st);
  zero_row(st.lf_stat(), leaf);
  zero_row(st.lf_inherited(), leaf);
  zero_row(st.lf_coef(), leaf);
  zero_row(st.lf_rmsprop(), leaf);
  Mat<double> lx = st.lf_x().mat(leaf);
  for (i64 j = 0; j < lx.rows(); ++j) zero_row(lx, j);
  zero_row(st.lf_err(), leaf);
  Vec<double> spread = st.ft_spread();
  for (i64 j = 0; j < spread.size(); ++j) spread[j] = 0.0;
  init_leaf(st, prm, leaf, a, st.nd_depth()[n], spread);
  sketch_reset(st, prm, leaf);
  st.nd_isalt()[a] = 1;
  st.nd_alt()[n] = a;
  ints[I_NLEAVES] += 1;
  ints[I_NALTS] += 1;
  ints[I_ALT_STARTED] += 1;
}

void adopt_alternate(const TreeRef& st, i64 n) {
  Vec<i64> alt = st.nd_alt(), feat = st.nd_feat(), left = st.nd_left(), right = st.nd_right(),
           leaf = st.nd_leaf(), cat_off = st.nd_cat_off(), cat_len = st.nd_cat_len(),
           cat_right = st.nd_cat_right(), born = st.nd_born();
  Vec<double> thr = st.nd_thr();
  Vec<i8> miss_left = st.nd_miss_left(), isalt = st.nd_isalt();
  i64 a = alt[n];
  free_subtree(st, left[n]);
  free_subtree(st, right[n]);
  feat[n] = feat[a];
  thr[n] = thr[a];
  left[n] = left[a];
  right[n] = right[a];
  miss_left[n] = miss_left[a];
  leaf[n] = leaf[a];
  cat_off[n] = cat_off[a];
  cat_len[n] = cat_len[a];
  cat_right[n] = cat_right[a];
  born[n] = born[a];
  Mat<double> det = st.nd_detector();
  for (i64 c = 0; c < det.cols(); ++c) det(n, c) = det(a, c);
  Mat<double> cmp = st.nd_alt_compare();
  for (i64 c = 0; c < cmp.cols(); ++c) cmp(n, c) = 0.0;
  if (leaf[a] >= 0) st.lf_node()[leaf[a]] = n;
  alt[n] = -1;
  alt[a] = -1;
  feat[a] = -1;  // a's fields now live in n: free a without its subtree
  leaf[a] = -1;
  free_node(st, a);
  Vec<i64> stack = st.nd_path();  // the adopted nodes are part of the tree now
  stack[0] = n;
  i64 top = 1;
  while (top > 0) {
    top -= 1;
    i64 m = stack[top];
    isalt[m] = 0;
    if (feat[m] >= 0) {
      stack[top] = left[m];
      stack[top + 1] = right[m];
      top += 2;
    }
  }
  Vec<i64> ints = st.ints();
  ints[I_NALTS] -= 1;
  ints[I_ALT_SWAPPED] += 1;
}

void discard_alternate(const TreeRef& st, i64 n) {
  Vec<i64> alt = st.nd_alt();
  i64 a = alt[n];
  alt[n] = -1;
  free_subtree(st, a);
  restart_detector(st, n);
  Vec<i64> ints = st.ints();
  ints[I_NALTS] -= 1;
  ints[I_ALT_DISCARDED] += 1;
}

bool adapt(const TreeRef& st, ParamRef prm, Row x, double y, double w, double pred) {
  const double e = std::fabs(y - pred);
  const i64 nfeat = st.ints()[I_NFEAT];
  Mat<double> q = st.nd_alt_compare();
  Vec<i64> feat = st.nd_feat(), alt = st.nd_alt();
  i64 n = 0;
  while (feat[n] >= 0) {
    i64 a = alt[n];
    if (a >= 0) {
      i64 an = route_from(st, a, x);
      double ap = leaves::predict_leaf(st, prm, st.nd_leaf()[an], x, nfeat);
      double f = prm.alt_fade();
      double d_org = y - pred;
      double d_alt = y - ap;
      q(n, Q_ORG) = w * (d_org * d_org) + f * q(n, Q_ORG);
      q(n, Q_ALT) = w * (d_alt * d_alt) + f * q(n, Q_ALT);
      q(n, Q_SEEN) += 1.0;
      learn_row(st, prm, an, x, y, w);
      const i64 period = prm.alt_period();
      if (period == 0) throw std::domain_error("float modulo by zero (alt_period 0)");
      if (fmod_py(q(n, Q_SEEN), static_cast<double>(period)) == 0.0) {
        double r = std::log((q(n, Q_ORG) + 1e-300) / (q(n, Q_ALT) + 1e-300));
        if (r > 0.0) {
          adopt_alternate(st, n);
          return true;
        }
        q(n, Q_COUNT) += 1.0;
        q(n, Q_MEAN) += (r - q(n, Q_MEAN)) / q(n, Q_COUNT);
        if (q(n, Q_SEEN) >= 10.0 * prm.grace() && r < q(n, Q_MEAN)) discard_alternate(st, n);
      }
    } else if (drift::page_hinkley_row_update(st.nd_detector(), n, e, prm.alt_alpha(),
                                              prm.alt_lambda())) {
      start_alternate(st, prm, n);
    }
    n = child(st, n, x);
  }
  return false;
}

}  // namespace sf::tree
