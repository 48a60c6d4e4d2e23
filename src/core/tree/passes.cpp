// A tree's passes over rows (see passes.hpp).
#include "tree/passes.hpp"

namespace sf::tree {

i64 learn_batch(const TreeRef& st, ParamRef prm, Mat<const double> X, Vec<const double> y,
                Vec<const double> w, i64 start) {
  const i64 n = X.rows();
  for (i64 i = start; i < n; ++i) {
    if (!needs_step(prm, w[i])) {
      st.ints()[I_NSEEN] += 1;
      continue;
    }
    if (!room(st, prm)) return i;
    if (task_learn_one_row(st, prm, X.row(i), y[i], w[i])) return i + 1;
  }
  return n;
}

void predict_batch(const TreeRef& st, ParamRef prm, Mat<const double> X, Mat<double> out) {
  const i64 n = X.rows();
  for (i64 i = 0; i < n; ++i) task_predict_one_row_into(st, prm, X.row(i), out, i);
}

void apply_batch(const TreeRef& st, Mat<const double> X, Vec<i64> out) {
  const i64 n = X.rows();
  for (i64 i = 0; i < n; ++i) out[i] = route(st, X.row(i));
}

i64 predict_learn_batch(const TreeRef& st, ParamRef prm, Mat<const double> X,
                        Vec<const double> y, Vec<const double> w, i64 start, Vec<double> out) {
  const i64 n = X.rows();
  for (i64 i = start; i < n; ++i) {
    if (needs_step(prm, w[i]) && !room(st, prm)) return i;
    Step s = learn_step(st, prm, X.row(i), y[i], w[i], true);
    out[i] = s.pred;
    if (s.drifted) return i + 1;
  }
  return n;
}

i64 predict_learn_batch_lw(const TreeRef& st, ParamRef prm, Mat<const double> X,
                           Vec<const double> y, Vec<const double> w, i64 start, Vec<double> out,
                           Vec<double> lw) {
  const i64 n = X.rows();
  for (i64 i = start; i < n; ++i) {
    if (needs_step(prm, w[i]) && !room(st, prm)) return i;
    lw[i] = st.evidence()[EV_LOGW];
    Step s = learn_step(st, prm, X.row(i), y[i], w[i], true);
    out[i] = s.pred;
    if (s.drifted) return i + 1;
  }
  return n;
}

}  // namespace sf::tree
