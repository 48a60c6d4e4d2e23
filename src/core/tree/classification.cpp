// The classification task of a tree (see classification.hpp).
#include "tree/classification.hpp"

#include <cmath>
#include <stdexcept>

#include "leaves/class_leaves.hpp"
#include "tree/alternates.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::tree::classification {

using leaves::Votes;

namespace {

/// Learn ``(x, y, w)`` at leaf ``node`` (``mc``, ``nb``: the leaf's votes for ``x``).
void learn_class_row(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                     i64 mc, i64 nb) {
  i64 nfeat = st.ints()[I_NFEAT];
  i64 leaf = st.nd_leaf()[node];
  leaves::observe_leaf(st, prm, leaf, x, y, w, nfeat, mc, nb);
  if (st.lf_active()[leaf] == 0) return;
  st.kind.rule->class_learn_at_leaf(st, prm, leaf, x, y, w, nfeat);
}

/// Node ``n``'s detector and comparison start again.
void restart(const TreeRef& st, i64 n) {
  Mat<double> det = st.nd_detector();
  Mat<double> q = st.nd_alt_compare();
  for (i64 c = 0; c < det.cols(); ++c) det(n, c) = 0.0;
  for (i64 c = 0; c < q.cols(); ++c) q(n, c) = 0.0;
}

/// Change detection and adaptation along the path of ``x`` (Algorithms 5.1-5.3): a node
/// without an alternate feeds its detector the tree's 0/1 error and starts one when it fires;
/// a node with one trains it on the example and lets McNemar's test decide.  True when an
/// adoption took the example's leaf away (the adopted subtree has learnt it).
bool adapt_class(const TreeRef& st, ParamRef prm, Row x, double y, double w, i64 pred) {
  i64 k = to_i64(y);
  double err = pred == k ? 0.0 : 1.0;
  const i64 nfeat = st.ints()[I_NFEAT];
  Mat<double> q = st.nd_alt_compare();
  Vec<i64> feat = st.nd_feat();
  Vec<i64> alt = st.nd_alt();
  Vec<i64> nd_leaf = st.nd_leaf();
  const double half = static_cast<double>(prm.alt_period()) / 2.0;
  i64 n = 0;
  while (feat[n] >= 0) {
    i64 a = alt[n];
    if (a >= 0) {
      i64 an = route_from(st, a, x);
      i64 aleaf = nd_leaf[an];
      Votes av = leaves::leaf_votes(st, prm, aleaf, x, nfeat);
      i64 ap = leaves::choose(st, prm, aleaf, av.mc, av.nb);
      q(n, MC_SEEN) += 1.0;
      if (q(n, MC_SEEN) > half) {
        if (ap == k && pred != k) {
          q(n, MC_B) += 1.0;
        } else if (pred == k && ap != k) {
          q(n, MC_C) += 1.0;
        }
      }
      learn_class_row(st, prm, an, x, y, w, av.mc, av.nb);
      i64 verdict =
          mcnemar_verdict(q(n, MC_B), q(n, MC_C), q(n, MC_SEEN), prm.alt_period(), prm.alt_chi2());
      if (verdict > 0) {
        adopt_alternate(st, n);
        restart(st, n);
        return true;
      }
      if (verdict < 0) {
        discard_alternate(st, n);
        restart(st, n);
      }
    } else if (page_hinkley_01(st, prm, n, err)) {
      start_alternate(st, prm, n);
      restart(st, n);
      a = alt[n];
      if (a >= 0) {
        i64 leaf = nd_leaf[a];
        Mat<double> cw = st.lf_class_weights();
        for (i64 c = 0; c < cw.cols(); ++c) cw(leaf, c) = 0.0;
        leaves::reset_class_leaf(st, leaf);
      }
    }
    n = child(st, n, x);
  }
  return false;
}

/// ``adapt_class`` (kinds with alternate subtrees; the others never adapt).
bool adapts_class(const TreeRef& st, ParamRef prm, Row x, double y, double w, i64 pred) {
  return st.kind.has.alternates ? adapt_class(st, prm, x, y, w, pred) : false;
}

/// The tree's step for a row routed to leaf node ``node`` (the tree unchanged since), whose
/// votes there are ``mc``, ``nb`` (``nb < 0``: not computed): the class predicted before
/// learning; learns ``(x, y, w)`` when ``w > 0``.
i64 learn_class_step_at(const TreeRef& st, ParamRef prm, i64 node, Row x, double y, double w,
                        i64 mc, i64 nb) {
  i64 leaf = st.nd_leaf()[node];
  Vec<i64> ints = st.ints();
  if (nb < 0) {
    Votes v = leaves::leaf_votes(st, prm, leaf, x, ints[I_NFEAT]);
    mc = v.mc;
    nb = v.nb;
  }
  i64 pred = leaves::choose(st, prm, leaf, mc, nb);
  ints[I_NSEEN] += 1;
  if (w > 0.0) {
    if (!(prm.alt_lambda() > 0.0 && st.nd_feat()[0] >= 0 && adapts_class(st, prm, x, y, w, pred)))
      learn_class_row(st, prm, node, x, y, w, mc, nb);
  }
  return pred;
}

}  // namespace

bool page_hinkley_01(const TreeRef& st, ParamRef prm, i64 n, double err) {
  Mat<double> ph = st.nd_detector();
  ph(n, CPH_N) += 1.0;
  ph(n, CPH_Q) += err;
  double t = ph(n, CPH_N);
  double p = ph(n, CPH_Q) / t;
  if (t < static_cast<double>(prm.ph_gamma())) ph(n, CPH_SD) = std::sqrt(p * (1.0 - p));
  double sd = ph(n, CPH_SD);
  double d = sd > 0.0 ? (err - p) / sd : 0.0;
  ph(n, CPH_DBAR) += (d - ph(n, CPH_DBAR)) / t;
  ph(n, CPH_SUM) += d - ph(n, CPH_DBAR) - prm.alt_alpha();
  if (ph(n, CPH_SUM) < ph(n, CPH_MIN)) ph(n, CPH_MIN) = ph(n, CPH_SUM);
  return ph(n, CPH_SUM) - ph(n, CPH_MIN) > prm.alt_lambda();
}

bool learn_one_row(const TreeRef& st, ParamRef prm, Row x, double y, double w) {
  learn_class_step_at(st, prm, route(st, x), x, y, w, -1, -1);
  return false;
}

Step learn_one_row_memo(const TreeRef& st, ParamRef prm, Row x, double y, double w,
                        Mat<double> M, i64 t) {
  Vec<i64> ints = st.ints();
  if (w <= 0.0) {
    ints[I_NSEEN] += 1;
    return {0.0, false};
  }
  i64 node, mc, nb;
  if (t < M.cols() && M(1, t) == static_cast<double>(ints[I_NSEEN])) {  // routed, voted before
    node = to_i64(M(0, t));
    mc = to_i64(M(2, t));
    nb = to_i64(M(3, t));
  } else {
    node = route(st, x);
    mc = -1;
    nb = -1;
  }
  i64 k = learn_class_step_at(st, prm, node, x, y, w, mc, nb);
  return {static_cast<double>(k), false};
}

void predict_one_row_into(const TreeRef& st, ParamRef prm, Row x, Mat<double> out, i64 i) {
  i64 node = route(st, x);
  leaves::leaf_proba(st, prm, st.nd_leaf()[node], x, st.ints()[I_NFEAT], out.row(i));
}

void remember(Mat<double> M, i64 t, const TreeRef& st, i64 node, i64 mc, i64 nb) {
  M(0, t) = static_cast<double>(node);
  M(1, t) = static_cast<double>(st.ints()[I_NSEEN]);
  M(2, t) = static_cast<double>(mc);
  M(3, t) = static_cast<double>(nb);
}

void init_task_fields(const TreeRef& st) { leaves::init_root_class(st); }

i64 mcnemar_verdict(double b, double c, double seen, i64 period, double crit) {
  if (period == 0) throw std::domain_error("modulo by zero");
  if (fmod_py(seen, static_cast<double>(period)) != 0.0) return 0;
  double chi2 = b + c > 0.0 ? int_power(b - c, 2) / (b + c) : 0.0;
  if (chi2 > crit) return b > c ? 1 : -1;
  if (seen >= 10.0 * static_cast<double>(period)) return b >= c ? 1 : -1;
  return 0;
}

}  // namespace sf::tree::classification
