// The forest engine's passes (see passes.hpp).
#include "engine/passes.hpp"

#include "engine/bagging.hpp"
#include "rules/observers.hpp"
#include "rules/pregrown.hpp"
#include "tree/passes.hpp"
#include "tree/structure.hpp"

namespace sf::engine {

using tree::ParamRef;
using tree::TreeRef;

i64 learn_rows(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
               Mat<const double> W, i64 start) {
  TreeRef st = tree::state_at(A, t);
  return tree::learn_batch(st, tree::params_at(A, t), X, y, W.row(t), start);
}

i64 predict_learn_rows(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                       Mat<const double> W, i64 start, Mat<double> P) {
  TreeRef st = tree::state_at(A, t);
  return tree::predict_learn_batch(st, tree::params_at(A, t), X, y, W.row(t), start, P.row(t));
}

i64 predict_learn_rows_lw(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                          Mat<const double> W, i64 start, Mat<double> P, Mat<double> LW) {
  TreeRef st = tree::state_at(A, t);
  return tree::predict_learn_batch_lw(st, tree::params_at(A, t), X, y, W.row(t), start,
                                      P.row(t), LW.row(t));
}

void predict_rows(const Arena& A, i64 t, Mat<const double> X, Mat<double> out) {
  TreeRef st = tree::state_at(A, t);
  tree::predict_batch(st, tree::params_at(A, t), X, out);
}

void apply_rows(const Arena& A, i64 t, Mat<const double> X, Vec<i64> out) {
  tree::apply_batch(tree::state_at(A, t), X, out);
}

i64 background_rows(const Arena& B, i64 t, Mat<const double> X, Vec<const double> y,
                    Vec<const double> w, i64 start) {
  TreeRef st = tree::state_at(B, t);
  return tree::learn_batch(st, tree::params_at(B, t), X, y, w, start);
}

void draw_background(u64& brng, double lam, Vec<const double> w, Vec<double> out, i64 start,
                     i64 stop) {
  if (!(lam > 0.0)) {
    for (i64 i = start; i < stop; ++i) out[i] = bagging_weight(brng, lam, w[i]);
    return;
  }
  const double limit = std::exp(-lam);  // (bagging_weight's draws, exp worked out once)
  for (i64 i = start; i < stop; ++i)
    out[i] = static_cast<double>(poisson_below(brng, limit)) * w[i];
}

void init_tree(const Arena& A, i64 t) {
  TreeRef st = tree::state_at(A, t);
  tree::init_root(st, tree::params_at(A, t));
  tree::init_task_fields(st);
}

void rebuild_hash_at(const Arena& A, i64 t) { rules::rebuild_hash(tree::state_at(A, t)); }

bool lacks_room(const Arena& A, i64 t) {
  return !tree::has_room(tree::state_at(A, t), tree::params_at(A, t));
}

void predict_trees_memo(const Arena& A, Vec<const double> x, Vec<double> P, Mat<double> M) {
  const i64 T = A.n_trees();
  for (i64 t = 0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    tree::NodePred np = tree::route_predict(st, tree::params_at(A, t), x);
    P[t] = np.pred;
    tree::remember(M, t, st, np.node, np.pred);
  }
}

i64 learn_one(const Arena& A, u64& frng, double lam, Vec<const double> x, double y, double w,
              Vec<double> wt, Vec<double> P, Vec<i8> drifted, i64 t0, Mat<double> M) {
  const i64 T = A.n_trees();
  if (t0 == FRESH) {
    for (i64 t = 0; t < T; ++t) {
      wt[t] = bagging_weight(frng, lam, w);
      drifted[t] = 0;
    }
    t0 = 0;
  }
  for (i64 t = t0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    ParamRef prm = tree::params_at(A, t);
    if (tree::needs_step(prm, wt[t]) && !tree::has_room(st, prm)) return t;
    tree::Step s = tree::task_learn_one_row_memo(st, prm, x, y, wt[t], M, t);
    P[t] = s.pred;
    if (s.drifted) drifted[t] = 1;
  }
  for (i64 t = 0; t < T; ++t)
    if (drifted[t]) return DRIFTED;
  return DONE;
}

i64 learn_background_one(const Arena& B, Vec<const i8> on, Mat<u64> brng, double lam,
                         Vec<const double> x, double y, double w, Vec<double> bw, i64 t0) {
  const i64 T = on.size();
  if (t0 == FRESH) {
    for (i64 t = 0; t < T; ++t)
      if (on[t]) bw[t] = bagging_weight(brng(t, 0), lam, w);
    t0 = 0;
  }
  for (i64 t = t0; t < T; ++t) {
    if (!on[t]) continue;
    TreeRef st = tree::state_at(B, t);
    ParamRef prm = tree::params_at(B, t);
    if (tree::needs_step(prm, bw[t]) && !tree::has_room(st, prm)) return t;
    tree::task_learn_one_row(st, prm, x, y, bw[t]);
  }
  return DONE;
}

double aggregate_at(const Arena& A, Vec<double> P, i64 agg) {
  if (agg == AGG_WEIGHTED) return rules::weighted_mean_at(A, Vec<const double>(P.data, P.n));
  return aggregate(P, agg);
}

void predict_trees(const Arena& A, Vec<const double> x, Vec<double> P) {
  const i64 T = A.n_trees();
  for (i64 t = 0; t < T; ++t) P[t] = tree::predict_row(tree::state_at(A, t), tree::params_at(A, t), x);
}

double predict_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P, Mat<double> M) {
  predict_trees_memo(A, x, P, M);
  return aggregate_at(A, P, agg);
}

void weighted_columns(Mat<const double> LW, Mat<const double> P, Vec<double> out) {
  const i64 T = LW.rows();
  const i64 last = LW.cols() - 1;
  for (i64 i = 0; i < P.cols(); ++i) {
    const i64 c = py_min(i, last);
    out[i] = rules::weighted_mean(
        T, [LW, c](i64 t) { return LW(t, c); }, [P, i](i64 t) { return P(t, i); });
  }
}

void tree_log_weights(const Arena& A, Vec<double> out) { rules::log_weights(A, out); }

}  // namespace sf::engine
