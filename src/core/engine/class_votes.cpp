// A classifier forest's answer (see class_votes.hpp).
#include "engine/class_votes.hpp"

#include "leaves/class_leaves.hpp"
#include "tree/classification.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

namespace sf::engine {

namespace {

/// ``out[0..K)``: votes of the trees' classes for row ``i`` of ``PT`` plus half their mean
/// probability (ties of votes go to the more probable class); ``mean[0..K)`` the mean
/// probabilities.  Returns the class of most votes.
template <class T>
i64 vote_row(Cube<T> PT, i64 i, i64 K, Vec<double> mean, Vec<double> out) {
  const i64 nT = PT.n0;
  const double fT = static_cast<double>(nT);
  for (i64 k = 0; k < K; ++k) {
    mean[k] = 0.0;
    out[k] = 0.0;
  }
  for (i64 t = 0; t < nT; ++t) {
    Vec<T> p = PT.mat(t).row(i);
    for (i64 k = 0; k < K; ++k) mean[k] += p[k] / fT;
    out[leaves::argmax(p, K)] += 1.0;
  }
  for (i64 k = 0; k < K; ++k) out[k] += 0.5 * mean[k];
  return leaves::argmax(out, K);
}

}  // namespace

void vote_rows(Cube<const double> PT, Mat<double> mean, Vec<double> votes, Vec<i64> cls) {
  const i64 K = PT.n2;
  for (i64 i = 0; i < PT.n1; ++i) cls[i] = vote_row(PT, i, K, mean.row(i), votes);
}

i64 predict_proba_one(const tree::Arena& A, Vec<const double> x, Cube<double> PT,
                      Vec<double> mean, Vec<double> votes, Mat<double> M) {
  const i64 K = PT.n2;
  const i64 T = A.n_trees();
  for (i64 t = 0; t < T; ++t) {
    tree::TreeRef st = tree::state_at(A, t);
    tree::ParamRef prm = tree::params_at(A, t);
    i64 node = tree::route(st, x);
    leaves::Votes v = leaves::leaf_proba_votes(st, prm, st.nd_leaf()[node], x,
                                               st.ints()[tree::I_NFEAT], PT.mat(t).row(0));
    tree::classification::remember(M, t, st, node, v.mc, v.nb);
  }
  return vote_row(PT, 0, K, mean, votes);
}

}  // namespace sf::engine
