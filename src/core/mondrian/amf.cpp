// Aggregated Mondrian forests' passes (see amf.hpp): each function does what the numba kernel
// of the same name did before the core moved ahead of time, operation for operation.
#include "mondrian/amf.hpp"

#include <cmath>

#include "common/rng.hpp"
#include "mondrian/node.hpp"
#include "mondrian/split.hpp"

namespace sf::mondrian {

void learn_tree(Mat<double> nodes, Vec<i64> meta, u64& rng, Vec<double> extension,
                Vec<double> saved, const Params& params, Vec<const double> x, double y,
                double w) {
  if (!(w > 0.0)) return;
  meta[N_SEEN] += 1;
  i64 K = params.classes;
  double max_nodes = params.max_nodes;
  i64 box = params.box_at();
  i64 root = 0;
  if (meta[N_NODES] == 1 && nodes(root, COUNT) == 0.0) {  // the first row
    box_of_row(nodes, box, root, x);
    take_stats(nodes, params, root, y, w, false);
    nodes(root, LOG_TREE) = nodes(root, LOG_WEIGHT);
    return;
  }
  i64 P = x.size();
  i64 v = root;
  i64 leaf = root;
  while (true) {
    double total = extend_box(nodes, box, extension, saved, v, x);
    bool split = false;
    double time = 0.0;
    if (total > 0.0 &&
        (max_nodes <= 0.0 || static_cast<double>(meta[N_NODES] + 2) <= max_nodes)) {
      if (K == 0 || params.split_pure || !is_pure(cview(nodes), v, y)) {
        double u = rng::next_float(rng);
        time = nodes(v, TIME) - std::log1p(-u) / total;
        split = time < nodes(v, SPLIT_TIME);  // (inf at a leaf)
      }
    }
    if (split) {
      i64 j = draw_feature(cview(extension), rng, P, total);
      // (j = -1, see draw_feature: numba read the last item of x and of saved)
      double xv = x[wrap(j, P)];
      double bound = saved[wrap(j, saved.size())];
      double u = rng::next_float(rng);
      bool right = !(xv < bound);  // the row extends the box to the right
      double threshold;
      if (right) {  // hi <= threshold < x
        double hi = bound;
        threshold = hi + u * (xv - hi);
        if (!(threshold < xv)) threshold = hi;
      } else {  // x <= threshold < lo
        double lo = bound;
        threshold = xv + u * (lo - xv);
        if (!(threshold < lo)) threshold = xv;
      }
      leaf = add_children(nodes, meta, v, j, threshold, time, right, box);
      i64 old = to_i64(nodes(v, right ? LEFT : RIGHT));
      box_before(nodes, box, cview(extension), cview(saved), old, x);
      take_stats(nodes, params, v, y, w, true);
      box_of_row(nodes, box, leaf, x);
      take_stats(nodes, params, leaf, y, w, false);
      break;
    }
    take_stats(nodes, params, v, y, w, true);
    if (nodes(v, LEFT) < 0.0) {
      leaf = v;
      break;
    }
    v = child_of(cview(nodes), v, x);
  }
  if (!params.aggregate) return;
  nodes(leaf, LOG_TREE) = nodes(leaf, LOG_WEIGHT);
  i64 u = leaf;
  while (u != 0) {
    i64 up = to_i64(nodes(u, PARENT));
    if (nodes(up, LEFT) == static_cast<double>(u)) {
      nodes(up, LEFT_TREE) = nodes(u, LOG_TREE);
    } else {
      nodes(up, RIGHT_TREE) = nodes(u, LOG_TREE);
    }
    mix_up(nodes, up);
    u = up;
  }
}

// --- passes called from Python --------------------------------------------------------------------
i64 learn_rows(Cube<double> nodes, Mat<i64> meta, Mat<u64> rng, Mat<double> extension,
               Mat<double> saved, const Params& params, i64 t, Mat<const double> X,
               Vec<const double> y, Mat<const double> W, i64 start, bool predict, Mat<double> P) {
  i64 n = X.rows();
  i64 capacity = nodes.n1;
  Mat<double> tree = nodes.mat(t);
  Vec<i64> tree_meta = meta.row(t);
  u64& tree_rng = rng(t, 0);
  Vec<double> tree_extension = extension.row(t);
  Vec<double> tree_saved = saved.row(t);
  for (i64 i = start; i < n; ++i) {
    if (tree_meta[N_NODES] + 2 > capacity) return i;
    Vec<const double> x = X.row(i);
    if (predict) P(t, i) = predict_value(cview(tree), params, x);
    learn_tree(tree, tree_meta, tree_rng, tree_extension, tree_saved, params, x, y[i], W(t, i));
  }
  return n;
}

void predict_rows(Cube<const double> nodes, const Params& params, i64 t, Mat<const double> X,
                  Mat<double> P) {
  Mat<const double> tree = nodes.mat(t);
  for (i64 i = 0; i < X.rows(); ++i) P(t, i) = predict_value(tree, params, X.row(i));
}

void predict_class_rows(Cube<const double> nodes, const Params& params, i64 t,
                        Mat<const double> X, Cube<double> P) {
  Mat<const double> tree = nodes.mat(t);
  Mat<double> Pt = P.mat(t);
  for (i64 i = 0; i < X.rows(); ++i) predict_classes(tree, params, X.row(i), Pt.row(i));
}

void apply_rows(Cube<const double> nodes, i64 t, Mat<const double> X, Vec<i64> out) {
  Mat<const double> tree = nodes.mat(t);
  for (i64 i = 0; i < X.rows(); ++i) out[i] = leaf_of(tree, X.row(i));
}

i64 learn_one(Cube<double> nodes, Mat<i64> meta, Mat<u64> rng, Mat<double> extension,
              Mat<double> saved, const Params& params, Vec<const i8> nominal,
              Vec<const double> row, Vec<double> clean, double y, Vec<const double> weights,
              bool predict, double shift, Vec<double> out) {
  Vec<const double> x = clean_row(nominal, row, clean);
  i64 most = 0;
  for (i64 t = 0; t < nodes.n0; ++t) {
    Mat<double> tree = nodes.mat(t);
    if (predict) out[t] = predict_value(cview(tree), params, x) + shift;
    learn_tree(tree, meta.row(t), rng(t, 0), extension.row(t), saved.row(t), params, x, y,
               weights[t]);
    most = py_max(most, meta(t, N_NODES));
  }
  return most;
}

double predict_one(Cube<const double> nodes, const Params& params, Vec<const i8> nominal,
                   Vec<const double> row, Vec<double> clean, double shift, Vec<double> out) {
  Vec<const double> x = clean_row(nominal, row, clean);
  i64 T = nodes.n0;
  double s = 0.0;
  for (i64 t = 0; t < T; ++t) {
    double p = predict_value(nodes.mat(t), params, x) + shift;
    out[t] = p;
    s += p;
  }
  return s / static_cast<double>(T);
}

i64 predict_proba_one(Cube<const double> nodes, const Params& params, Vec<const i8> nominal,
                      Vec<const double> row, Vec<double> clean, Vec<double> scratch,
                      Vec<double> mean) {
  Vec<const double> x = clean_row(nominal, row, clean);
  i64 T = nodes.n0;
  i64 K = mean.size();
  for (i64 k = 0; k < K; ++k) mean[k] = 0.0;
  for (i64 t = 0; t < T; ++t) {
    predict_classes(nodes.mat(t), params, x, scratch);
    for (i64 k = 0; k < K; ++k) mean[k] += scratch[k];
  }
  i64 best = 0;
  for (i64 k = 0; k < K; ++k) {
    mean[k] /= static_cast<double>(T);
    if (mean[k] > mean[best]) best = k;
  }
  return best;
}

void mean_probabilities(Cube<const double> P, Mat<double> mean, Vec<i64> best) {
  i64 T = P.n0, n = P.n1, K = P.n2;
  for (i64 i = 0; i < n; ++i) {
    for (i64 k = 0; k < K; ++k) mean(i, k) = 0.0;
    for (i64 t = 0; t < T; ++t)
      for (i64 k = 0; k < K; ++k) mean(i, k) += P(t, i, k);
    i64 b = 0;
    for (i64 k = 0; k < K; ++k) {
      mean(i, k) /= static_cast<double>(T);
      if (mean(i, k) > mean(i, b)) b = k;
    }
    best[i] = b;
  }
}

void clean_rows(Vec<const i8> nominal, Mat<double> X) {
  for (i64 i = 0; i < X.rows(); ++i) clean_row(nominal, cview(X.row(i)), X.row(i));
}

}  // namespace sf::mondrian
