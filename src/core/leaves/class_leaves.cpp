// A classification leaf (see class_leaves.hpp): naive Bayes scores, the leaf's votes and
// probabilities, learning a row.
#include "leaves/class_leaves.hpp"

#include "common/stats.hpp"

namespace sf::leaves {

using namespace tree;

namespace {

constexpr double NEG_INF = -std::numeric_limits<double>::infinity();

struct Scored {
  double f;    // the score
  double tol;  // the bound on its rounding difference from nb_score's
};

/// ``nb_score`` of class ``k`` (``lc = log p(k)``) with three or four logarithms instead of
/// one per feature, and a bound on its rounding difference from ``nb_score``: the products of
/// the variances >= 1, those < 1 and the nominal likelihoods are flushed into a logarithm
/// before they could leave [1e-150, 1e150].
Scored nb_score_fast(const TreeRef& st, i64 leaf, Row x, i64 nfeat, i64 k, double lc) {
  const i64 K = st.lf_class_weights().cols();
  const i64 C = n_cats(st);
  Cube<double> gs = st.lf_class_stats();
  Vec<i8> ft_nominal = st.ft_nominal();
  double q = 0.0;
  double pbig = 1.0;
  double psmall = 1.0;
  double pnom = 1.0;
  double lbig = 0.0;
  double lsmall = 0.0;
  double lnom = 0.0;
  i64 nnum = 0;
  i64 nnom = 0;
  i64 slot = 0;
  for (i64 j = 0; j < nfeat; ++j) {
    bool nominal = ft_nominal[j] != 0;
    slot += nominal;
    double v = x[j];
    if (is_nan(v)) continue;
    double wk = gs(leaf, j, 3 * k);
    if (nominal) {
      i64 code = to_i64(v);
      double n = 0 <= code && code < C ? ncc(st, leaf, slot - 1, code * K + k) : 0.0;
      pnom *= (n + 1.0) / (wk + py_max(gs(leaf, j, GS_NCATS), 1.0));  // in (0, 1]
      if (pnom < 1e-150) {
        lnom += std::log(pnom);
        pnom = 1.0;
      }
      nnom += 1;
    } else if (wk > 0.0) {
      double mean = gs(leaf, j, 3 * k + 1);
      double var = py_max(gs(leaf, j, 3 * k + 2) / wk, VAR_FLOOR * (1.0 + mean * mean));
      double d = v - mean;
      q += d * d / var;
      if (var >= 1.0) {
        pbig *= var;
        if (pbig > 1e150) {
          lbig += std::log(pbig);
          pbig = 1.0;
        }
      } else {
        psmall *= var;
        if (psmall < 1e-150) {
          lsmall += std::log(psmall);
          psmall = 1.0;
        }
      }
      nnum += 1;
    }
  }
  lbig += std::log(pbig);
  lsmall += std::log(psmall);
  lnom += std::log(pnom);
  const double fnum = static_cast<double>(nnum);
  double f = lc + lnom - 0.5 * (q + lbig + lsmall + fnum * LOG_2PI);
  double mag = 1.0 + std::fabs(lc) - lnom + q + lbig - lsmall + fnum * LOG_2PI;
  return {f, static_cast<double>(nnum + nnom + 8) * 1e-13 * mag};
}

/// The running state of the certification of ``nb_class_fast``: the best class so far, its
/// score and its score minus margin, the largest and second largest score plus margin and
/// the class of the largest.
struct Certify {
  i64 best = -1;
  double best_f = NEG_INF;
  double best_lo = NEG_INF;
  double u1 = NEG_INF;
  double u2 = NEG_INF;
  i64 u1k = -1;

  void step(i64 k, double f, double tol) {
    if (f > best_f) {
      best_f = f;
      best_lo = f - tol;
      best = k;
    }
    double hi = f + tol;
    if (hi > u1) {
      u2 = u1;
      u1 = hi;
      u1k = k;
    } else if (hi > u2) {
      u2 = hi;
    }
  }

  /// The best class's score minus margin beats every other class's score plus margin.
  bool certified() const {
    double other = u1k == best ? u2 : u1;
    return best_lo > other;
  }
};

/// ``out[0..K)``, log scores whose largest is ``top``, turned into probabilities in place.
void normalise_scores(Vec<double> out, i64 K, double top) {
  double s = 0.0;
  for (i64 k = 0; k < K; ++k) {
    out[k] = out[k] > NEG_INF ? std::exp(out[k] - top) : 0.0;
    s += out[k];
  }
  for (i64 k = 0; k < K; ++k) out[k] /= s;
}

}  // namespace

double nb_score(const TreeRef& st, i64 leaf, Row x, i64 nfeat, i64 k, double total) {
  Mat<double> cw = st.lf_class_weights();
  double ck = cw(leaf, k);
  if (ck <= 0.0) return NEG_INF;
  double s = std::log(ck / total);
  const i64 K = cw.cols();
  const i64 C = n_cats(st);
  Cube<double> gs = st.lf_class_stats();
  Vec<i8> ft_nominal = st.ft_nominal();
  i64 slot = 0;
  for (i64 j = 0; j < nfeat; ++j) {
    bool nominal = ft_nominal[j] != 0;
    slot += nominal;
    double v = x[j];
    if (is_nan(v)) continue;
    double wk = gs(leaf, j, 3 * k);
    if (nominal) {
      i64 code = to_i64(v);
      double n = 0 <= code && code < C ? ncc(st, leaf, slot - 1, code * K + k) : 0.0;
      s += std::log((n + 1.0) / (wk + py_max(gs(leaf, j, GS_NCATS), 1.0)));
    } else if (wk > 0.0) {
      double mean = gs(leaf, j, 3 * k + 1);
      double var = py_max(gs(leaf, j, 3 * k + 2) / wk, VAR_FLOOR * (1.0 + mean * mean));
      double d = v - mean;
      s -= 0.5 * (d * d / var + std::log(var) + LOG_2PI);
    }
  }
  return s;
}

i64 nb_class(const TreeRef& st, i64 leaf, Row x, i64 nfeat, double total, i64 mc) {
  i64 nb = mc;
  double bs = NEG_INF;
  const i64 K = st.lf_class_weights().cols();
  for (i64 k = 0; k < K; ++k) {
    double sc = nb_score(st, leaf, x, nfeat, k, total);
    if (sc > bs) {
      bs = sc;
      nb = k;
    }
  }
  return nb;
}

i64 nb_class_fast(const TreeRef& st, i64 leaf, Row x, i64 nfeat, double total) {
  Mat<double> cw = st.lf_class_weights();
  const i64 K = cw.cols();
  Certify c;
  for (i64 k = 0; k < K; ++k) {
    double ck = cw(leaf, k);
    if (ck <= 0.0) continue;
    Scored s = nb_score_fast(st, leaf, x, nfeat, k, std::log(ck / total));
    if (!(std::isfinite(s.f) && std::isfinite(s.tol))) return -1;
    c.step(k, s.f, s.tol);
  }
  return c.certified() ? c.best : -1;
}

Votes leaf_votes(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat) {
  Counts c = class_counts(st, leaf);
  if (prm.leaf_model() == LEAF_MC || c.present <= 1) return {c.mc, c.mc};
  i64 nb = nb_class_fast(st, leaf, x, nfeat, c.total);
  if (nb >= 0) return {c.mc, nb};
  return {c.mc, nb_class(st, leaf, x, nfeat, c.total, c.mc)};
}

void leaf_proba(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat, Vec<double> out) {
  Mat<double> cw = st.lf_class_weights();
  const i64 K = cw.cols();
  double total = 0.0;
  for (i64 k = 0; k < K; ++k) total += cw(leaf, k);
  if (total <= 0.0) {
    for (i64 k = 0; k < K; ++k) out[k] = 1.0 / static_cast<double>(K);
    return;
  }
  if (!uses_nb(st, prm, leaf)) {
    for (i64 k = 0; k < K; ++k) out[k] = cw(leaf, k) / total;
    return;
  }
  double top = NEG_INF;
  for (i64 k = 0; k < K; ++k) {
    double ck = cw(leaf, k);
    if (ck <= 0.0) {
      out[k] = NEG_INF;
      continue;
    }
    Scored s = nb_score_fast(st, leaf, x, nfeat, k, std::log(ck / total));
    out[k] = std::isfinite(s.f) && std::isfinite(s.tol) ? s.f
                                                        : nb_score(st, leaf, x, nfeat, k, total);
    top = py_max(top, out[k]);
  }
  normalise_scores(out, K, top);
}

Votes leaf_proba_votes(const TreeRef& st, ParamRef prm, i64 leaf, Row x, i64 nfeat,
                       Vec<double> out) {
  Mat<double> cw = st.lf_class_weights();
  const i64 K = cw.cols();
  Counts c = class_counts(st, leaf);
  bool one = prm.leaf_model() == LEAF_MC || c.present <= 1;  // leaf_votes: naive Bayes is mc
  if (c.total <= 0.0) {  // as leaf_proba (and leaf_votes: nothing present)
    for (i64 k = 0; k < K; ++k) out[k] = 1.0 / static_cast<double>(K);
    return {c.mc, c.mc};
  }
  if (!uses_nb(st, prm, leaf)) {
    for (i64 k = 0; k < K; ++k) out[k] = cw(leaf, k) / c.total;
    return {c.mc, one ? c.mc : -1};
  }
  // naive Bayes answers: leaf_proba's scores, and nb_class_fast's choice from the same scores
  double top = NEG_INF;
  Certify cert;
  bool certified = true;
  for (i64 k = 0; k < K; ++k) {
    double ck = cw(leaf, k);
    if (ck <= 0.0) {
      out[k] = NEG_INF;
      continue;
    }
    Scored s = nb_score_fast(st, leaf, x, nfeat, k, std::log(ck / c.total));
    if (std::isfinite(s.f) && std::isfinite(s.tol)) {
      out[k] = s.f;
      cert.step(k, s.f, s.tol);
    } else {
      certified = false;
      out[k] = nb_score(st, leaf, x, nfeat, k, c.total);
    }
    top = py_max(top, out[k]);
  }
  normalise_scores(out, K, top);
  if (one) return {c.mc, c.mc};
  i64 nb = cert.best;
  if (!(certified && cert.certified())) nb = nb_class(st, leaf, x, nfeat, c.total, c.mc);
  return {c.mc, nb};
}

void reset_class_leaf(const TreeRef& st, i64 leaf) {
  Cube<double> ncw = st.lf_nominal_class_weights();
  for (i64 s = 0; s < ncw.n1; ++s)
    for (i64 c = 0; c < ncw.n2; ++c) ncw(leaf, s, c) = 0.0;
  Cube<double> gs = st.lf_class_stats();
  Cube<double> range = st.lf_range();
  for (i64 j = 0; j < gs.n1; ++j) {
    for (i64 c = 0; c < gs.n2; ++c) gs(leaf, j, c) = 0.0;
    if (range.n2) {
      range(leaf, j, 0) = std::numeric_limits<double>::infinity();
      range(leaf, j, 1) = NEG_INF;
    }
  }
  Mat<double> err = st.lf_err();
  err(leaf, 0) = 0.0;
  err(leaf, 1) = 0.0;
}

void init_root_class(const TreeRef& st) {
  i64 leaf = st.nd_leaf()[0];
  Mat<double> cw = st.lf_class_weights();
  for (i64 k = 0; k < cw.cols(); ++k) cw(leaf, k) = 0.0;
  reset_class_leaf(st, leaf);
}

void observe_leaf(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                  i64 nfeat, i64 mc, i64 nb) {
  i64 k = to_i64(y);
  if (prm.leaf_model() == LEAF_NBA) {
    Mat<double> err = st.lf_err();
    if (mc == k) err(leaf, 0) += w;
    if (nb == k) err(leaf, 1) += w;
  }
  Mat<double> cw = st.lf_class_weights();
  cw(leaf, k) += w;
  Mat<double> s = st.lf_stat();
  stats::Stat u = stats::welford_update(s(leaf, 0), s(leaf, 1), s(leaf, 2), s(leaf, 3), y, w);
  s(leaf, 0) = u.w;
  s(leaf, 1) = u.hi;
  s(leaf, 2) = u.lo;
  s(leaf, 3) = u.m2;
  if (prm.leaf_model() == LEAF_MC && prm.split_rule() != SPLIT_GAUSS)
    return;  // nothing reads the naive Bayes statistics
  const i64 K = cw.cols();
  const i64 C = n_cats(st);
  Cube<double> gs = st.lf_class_stats();
  Cube<double> ncw = st.lf_nominal_class_weights();
  Cube<double> range = st.lf_range();
  const bool ranges = range.n2 > 0;
  Vec<i8> ft_nominal = st.ft_nominal();
  i64 slot = 0;
  for (i64 j = 0; j < nfeat; ++j) {
    bool nominal = ft_nominal[j] != 0;
    slot += nominal;
    double v = x[j];
    if (is_nan(v)) continue;
    if (nominal) {
      gs(leaf, j, 3 * k) += w;
      i64 code = to_i64(v);
      if (0 <= code && code < C && slot <= ncw.n1) {
        double seen = 0.0;
        for (i64 c = 0; c < K; ++c) seen += ncw(leaf, slot - 1, code * K + c);
        if (seen == 0.0) gs(leaf, j, GS_NCATS) += 1.0;  // a category new at this leaf
        ncw(leaf, slot - 1, code * K + k) += w;
      }
      continue;
    }
    double gw = gs(leaf, j, 3 * k) + w;
    double d = v - gs(leaf, j, 3 * k + 1);
    gs(leaf, j, 3 * k + 1) += d * w / gw;
    gs(leaf, j, 3 * k + 2) += w * d * (v - gs(leaf, j, 3 * k + 1));
    gs(leaf, j, 3 * k) = gw;
    if (ranges) {
      range(leaf, j, 0) = py_min(range(leaf, j, 0), v);
      range(leaf, j, 1) = py_max(range(leaf, j, 1), v);
    }
  }
}

}  // namespace sf::leaves
