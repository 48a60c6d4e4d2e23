// Leaf models (see leaf_models.hpp): a child's inherited model, a leaf model folded for many
// rows.
#include "leaves/leaf_models.hpp"

namespace sf::leaves {

using namespace tree;

void inherit_linear(const TreeRef& st, i64 parent, i64 child, double p_mean, double p_sd) {
  Mat<double> coef = st.lf_coef();
  if (child != parent) {
    Mat<double> rms = st.lf_rmsprop();
    Cube<double> lx = st.lf_x();
    Mat<double> err = st.lf_err();
    for (i64 j = 0; j < coef.cols(); ++j) {
      coef(child, j) = coef(parent, j);
      rms(child, j) = rms(parent, j);
    }
    for (i64 j = 0; j < lx.n1; ++j)
      for (i64 c = 0; c < 4; ++c) lx(child, j, c) = lx(parent, j, c);
    err(child, 0) = err(parent, 0);
    err(child, 1) = err(parent, 1);
  }
  MeanSd cm = target_mean_sd(st, child);
  if (p_sd > 0.0 && cm.sd * MAX_INHERIT_RATIO > p_sd) {
    double r = p_sd / cm.sd;
    coef(child, 0) = (coef(child, 0) * p_sd + p_mean - cm.mean) / cm.sd;
    for (i64 j = 1; j < coef.cols(); ++j) coef(child, j) *= r;
  } else {
    for (i64 j = 0; j < coef.cols(); ++j) coef(child, j) = 0.0;
  }
}

Folded fold_leaf_model(const TreeRef& st, ParamRef prm, i64 leaf, i64 nfeat) {
  i64 lm = prm.leaf_model();
  if (lm == LEAF_BAYES) {
    double a = st.kind.has.bayes ? bayes_fold(st, leaf, nfeat)
                                 : std::numeric_limits<double>::quiet_NaN();
    return {a, true};
  }
  MeanSd ms = target_mean_sd(st, leaf);
  Mat<double> err = st.lf_err();
  if (lm == LEAF_MEAN || ms.sd == 0.0 || (lm == LEAF_ADAPTIVE && err(leaf, 1) >= err(leaf, 0)))
    return {ms.mean, false};
  Mat<double> c = st.lf_coef();
  Mat<double> fl = st.ft_linear();
  Cube<double> lx = st.lf_x();
  Vec<i8> nominal = st.ft_nominal();
  for (i64 j = 0; j < nfeat; ++j) {
    fl(j, 0) = 0.0;
    double w = lx(leaf, j, S_W);
    double m2 = lx(leaf, j, S_M2);
    if (c(leaf, j + 1) != 0.0 && !nominal[j] && w > 0.0 && m2 > 0.0) {
      fl(j, 0) = ms.sd * c(leaf, j + 1) / (3.0 * std::sqrt(m2 / w));
      fl(j, 1) = lx(leaf, j, S_HI) + lx(leaf, j, S_LO);
    }
  }
  return {ms.mean + ms.sd * c(leaf, 0), true};
}

}  // namespace sf::leaves
