// Streaming gradient-boosted trees (see sgbt.hpp).
#include "boosting/sgbt.hpp"

#include "common/label_guard.hpp"
#include "tree/passes.hpp"

namespace sf::boosting {

namespace {

using tree::ParamRef;
using tree::TreeRef;

/// Every step learns row ``(x, y, w)``; see boost_one.
inline i64 boost_row(const tree::Arena& A, Vec<const double> x, double y, double w, double lr,
                     i64 t0, Vec<double> acc, Vec<i8> drifted, Vec<double> guard) {
  const i64 T = A.n_trees();
  if (t0 == FRESH) {
    acc[0] = 0.0;
    acc[1] = 0.0;
    double learnt = guard::guard_label(guard, y, w);
    acc[2] = learnt;
    acc[3] = guard::flagged(learnt, y) ? 0.0 : w;
    for (i64 t = 0; t < T; ++t) drifted[t] = 0;
    t0 = 0;
  }
  y = acc[2];
  w = acc[3];
  for (i64 t = t0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    ParamRef prm = tree::params_at(A, t);
    if (tree::needs_step(prm, w) && !tree::has_room(st, prm)) return t;
    tree::Step s = tree::learn_step(st, prm, x, y - acc[0], w, true);
    acc[1] += lr * s.pred;
    if (s.drifted) drifted[t] = 1;
    acc[0] += lr * tree::predict_row(st, prm, x);
  }
  for (i64 t = 0; t < T; ++t)
    if (drifted[t]) return DRIFTED;
  return DONE;
}

}  // namespace

i64 boost_one(const tree::Arena& A, Vec<const double> x, double y, double w, double lr, i64 t0,
              Vec<double> acc, Vec<i8> drifted, Vec<double> guard) {
  return boost_row(A, x, y, w, lr, t0, acc, drifted, guard);
}

std::pair<i64, i64> boost_rows(const tree::Arena& A, Mat<const double> X, Vec<const double> y,
                               Vec<const double> w, double lr, i64 start, i64 t0,
                               Vec<double> acc, Vec<i8> drifted, Vec<double> guard,
                               Vec<double> out) {
  const i64 n = X.rows();
  for (i64 i = start; i < n; ++i) {
    i64 s = boost_row(A, X.row(i), y[i], w[i], lr, t0, acc, drifted, guard);
    t0 = FRESH;
    if (s >= 0) return {i, s};
    out[i] = acc[1];
    if (s == DRIFTED) return {i + 1, DRIFTED};
  }
  return {n, DONE};
}

double boost_predict_one(const tree::Arena& A, Vec<const double> x, double lr) {
  double s = 0.0;
  const i64 T = A.n_trees();
  for (i64 t = 0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    s += lr * tree::predict_row(st, tree::params_at(A, t), x);
  }
  return s;
}

void boost_predict_rows(const tree::Arena& A, Mat<const double> X, double lr, Vec<double> out) {
  const i64 n = X.rows();
  for (i64 i = 0; i < n; ++i) out[i] = boost_predict_one(A, X.row(i), lr);
}

}  // namespace sf::boosting
