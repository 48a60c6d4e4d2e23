// CPApproximate's and CPExact's passes (see conformal.hpp).
#include "intervals/conformal.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/numeric.hpp"
#include "engine/handle.hpp"
#include "engine/passes.hpp"
#include "intervals/arith.hpp"
#include "intervals/scores.hpp"
#include "leaves/leaf_models.hpp"
#include "tree/passes.hpp"
#include "tree/regression.hpp"
#include "tree/structure.hpp"

namespace sf::intervals {

namespace {

using tree::ParamRef;
using tree::Row;
using tree::TreeRef;

inline constexpr double INF = std::numeric_limits<double>::infinity();

template <class T>
Vec<T> vec_of(std::vector<T>& v) {
  return Vec<T>(v.data(), static_cast<i64>(v.size()));
}

/// ``out[:n]``: the indices that sort ``values[:n]`` ascending, ties in order of appearance,
/// NaN last: ``sorting::argsort_into``'s merge sort, the same comparisons in the same order (so
/// the same permutation), each merge step's choice taken without a branch (the pass sorts a
/// calibration set's scores twice per call: the mispredicted branch made the sorts most of its
/// time).
void argsort_scores(Vec<const double> values, i64 n, Vec<i64> out) {
  if (n <= 0) return;
  std::vector<i64> buf_a(static_cast<size_t>(n)), buf_b(static_cast<size_t>(n));
  Vec<i64> src = vec_of(buf_a), dst = vec_of(buf_b);
  for (i64 i = 0; i < n; ++i) src[i] = i;
  for (i64 width = 1; width < n; width *= 2) {
    for (i64 lo = 0; lo < n; lo += 2 * width) {
      i64 mid = py_min(lo + width, n);
      i64 hi = py_min(lo + 2 * width, n);
      i64 a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        i64 sa = src[a], sb = src[b];
        double va = values[sa];
        double vb = values[sb];
        // the right run's item only when strictly smaller (stable); NaN sorts last
        bool right = (vb < va) | ((va != va) & (vb == vb));
        dst[k] = right ? sb : sa;
        b += right;
        a += !right;
        k += 1;
      }
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
    }
    Vec<i64> tmp = src;
    src = dst;
    dst = tmp;
  }
  for (i64 i = 0; i < n; ++i) out[i] = src[i];
}

// --- the method pass's top part ------------------------------------------------------------
// The top part is kept as *negated* scores in ascending order (``nts``), so that the ascending
// helpers of scores.hpp serve it: ``-nts[0]`` is its largest score, ``-nts[tn - 1]`` its
// smallest.

i64 top_remove(Vec<i64> tord, Vec<double> nts, Vec<i64> tpos, i64 tn, i64 s) {
  i64 p = tpos[s];
  for (i64 k = p; k < tn - 1; ++k) {
    nts[k] = nts[k + 1];
    tord[k] = tord[k + 1];
    tpos[tord[k]] = k;
  }
  tpos[s] = -1;
  return tn - 1;
}

/// How many of the largest scores the levels' ranks reach into.
i64 needed(i64 size, Vec<const double> alphas) {
  i64 need = 0;
  for (i64 a = 0; a < alphas.size(); ++a) {
    i64 r = conformal_rank(size, alphas[a]);
    if (1 <= r && r <= size) need = py_max(need, size - r + 1);
  }
  return need;
}

/// Bring the top part up to ``target`` members with the largest scores of the rest.
i64 refill(Vec<i64> tord, Vec<double> nts, Vec<i64> tpos, i64 tn, Vec<const i8> present,
           Vec<const double> score, i64 c, i64 target, Vec<double> scr_s, Vec<i64> scr_o) {
  i64 m = 0;
  for (i64 s = 0; s < c; ++s) {
    if (present[s] && tpos[s] < 0) {
      scr_s[m] = score[s];
      scr_o[m] = s;
      m += 1;
    }
  }
  i64 want = py_min(target - tn, m);
  if (want <= 0) return tn;
  std::vector<i64> idx(static_cast<size_t>(m));
  Vec<i64> iv = vec_of(idx);
  argsort_scores(const_view(scr_s), m, iv);
  for (i64 q = m - 1; q > m - 1 - want; --q) {  // largest first: each goes to the end
    i64 s = scr_o[iv[q]];
    nts[tn] = -scr_s[iv[q]];
    tord[tn] = s;
    tpos[s] = tn;
    tn += 1;
  }
  return tn;
}

// --- CPExact's member lists ------------------------------------------------------------------
// The links are followed where they are used, each checked there (see conformal.hpp): a stored
// member, leaf or row outside what it indexes, or a walk longer than the set, stops the pass
// with ``std::domain_error`` (a ValueError).

[[noreturn]] void bad_links(const char* what) {
  throw std::domain_error(std::string("CPExact's member lists: ") + what);
}

/// Member ``m`` (followed from a link, ``m >= 0``) is one of the set's ``c``.
inline i64 member(i64 m, i64 c) {
  if (m >= c) bad_links("a link outside the calibration set (cal_next, cal_prev, lf_aux)");
  return m;
}

Row member_x(Mat<const double> X, Mat<const double> cx, Vec<const i64> cbirth, i64 g0, i64 m) {
  i64 b = cbirth[m];
  if (b >= g0 && b - g0 >= X.rows()) bad_links("a member born after the chunk (cal_birth)");
  return b >= g0 ? X.row(b - g0) : cx.row(m);
}

void link(Vec<i64> aux, Vec<i64> cleaf, Vec<i64> cnext, Vec<i64> cprev, i64 m, i64 leaf) {
  i64 h = aux[leaf];
  cnext[m] = h;
  cprev[m] = -1;
  if (h >= 0) cprev[member(h, cprev.size())] = m;
  aux[leaf] = m;
  cleaf[m] = leaf;
}

void unlink(Vec<i64> aux, Vec<i64> cleaf, Vec<i64> cnext, Vec<i64> cprev, i64 m) {
  i64 p = cprev[m];
  i64 nx = cnext[m];
  if (p >= 0) {
    cnext[member(p, cnext.size())] = nx;
  } else {
    if (cleaf[m] >= aux.size()) bad_links("a member's leaf outside the tree (cal_leaf)");
    aux[cleaf[m]] = nx;
  }
  if (nx >= 0) cprev[member(nx, cprev.size())] = p;
  cleaf[m] = -1;
}

/// A walk of a member list passed more members than the set holds: the links form a cycle.
[[noreturn]] void cyclic() { bad_links("a list with a cycle (cal_next)"); }

struct EventOut {
  Vec<i32> t, s;
  Vec<double> v;
  Vec<i64> n;
};

/// Recompute the tree's prediction for the calibration members at ``leaf``; append an event for
/// each that changed.
void refresh(const TreeRef& st, ParamRef prm, i64 leaf, Mat<const double> X,
             Mat<const double> cx, Vec<const i64> cbirth, i64 g0, Vec<const i64> cnext,
             Vec<double> ccur, i64 i, const EventOut& ev) {
  i64 m = st.lf_aux()[leaf];
  if (m < 0) return;
  i64 nfeat = st.ints()[tree::I_NFEAT];
  leaves::Folded f = leaves::fold_leaf_model(st, prm, leaf, nfeat);
  double a = f.a;
  Mat<double> fl = st.ft_linear();
  double a0 = a;  // the folded model as a0 + sum_j b_j x_j: a plain dot product per member
  if (f.linear)
    for (i64 j = 0; j < nfeat; ++j) a0 -= fl(j, 0) * fl(j, 1);
  i64 k = ev.n[0];
  const i64 c = cx.rows();
  i64 walked = 0;
  while (m >= 0) {
    member(m, c);
    if (++walked > c) cyclic();
    double v = a;
    if (f.linear) {
      Row x = member_x(X, cx, cbirth, g0, m);
      v = a0;
      for (i64 j = 0; j < nfeat; ++j) v += fl(j, 0) * x[j];
      if (v != v) v = leaves::folded_predict(st, a, x, nfeat);  // a missing value: skipped
    }
    if (v != ccur[m]) {
      ccur[m] = v;
      ev.t[k] = static_cast<i32>(i);
      ev.s[k] = static_cast<i32>(m);
      ev.v[k] = v;
      k += 1;
    }
    m = cnext[m];
  }
  ev.n[0] = k;
}

/// A slot read from ``order`` (a held slot, ``< c``), checked where the per-example step
/// follows it (see conformal.hpp).
inline i64 held_slot(i64 s, i64 c) {
  if (static_cast<u64>(s) >= static_cast<u64>(c))
    throw std::domain_error("the calibration set's order (cal_order): a slot outside the set");
  return s;
}

/// The row enters slot ``s`` (replacing its occupant) with the predictions ``P`` of the trees
/// for which it is out of bag; the sorted order is updated in place.  Returns the new size.
i64 enter(i64 size, const Calibration& C, Vec<const double> P, Vec<const double> wt, double y,
          i64 s) {
  C.cy[s] = y;
  double sm = 0.0;
  i64 cnt = 0;
  for (i64 t = 0; t < P.size(); ++t) {
    bool oob = wt[t] == 0.0;
    C.coob(s, t) = oob ? 1 : 0;
    C.cpred(s, t) = P[t];
    if (oob) {
      sm += P[t];
      cnt += 1;
    }
  }
  C.csum[s] = sm;
  C.ccnt[s] = cnt;
  double v = std::fabs(y - py_div(sm, static_cast<double>(cnt)));
  C.score[s] = v;
  if (C.pos[s] >= 0) {
    ss_update(C.order, C.pos, C.ss, size, v, s, held_slot);
    return size;
  }
  ss_insert(C.order, C.pos, C.ss, size, v, s, held_slot);
  return size + 1;
}

}  // namespace

i64 conformal_pass(i64 size, Vec<double> cy, Mat<i8> coob, Mat<double> cpred, Vec<double> csum,
                   Vec<i64> ccnt, Vec<double> score, Vec<i64> order, Vec<i64> pos, Vec<double> ss,
                   Mat<const double> P, Mat<const double> W, Vec<const double> y,
                   Vec<const i64> slots, const Events& ev, Vec<const double> alphas,
                   Mat<double> half) {
  const i64 T = P.rows(), n = P.cols();
  const i64 c = cy.size();
  const i64 A = alphas.size();
  std::vector<i64> cur_(static_cast<size_t>(T), 0), touched_(static_cast<size_t>(c), 0),
      tord_(static_cast<size_t>(c + 1), 0), tpos_(static_cast<size_t>(c), -1),
      scr_o_(static_cast<size_t>(c), 0);
  std::vector<i8> mark_(static_cast<size_t>(c), 0), present_(static_cast<size_t>(c), 0);
  std::vector<double> nts_(static_cast<size_t>(c + 1), 0.0), scr_s_(static_cast<size_t>(c), 0.0);
  Vec<i64> cur = vec_of(cur_), touched = vec_of(touched_), tord = vec_of(tord_),
           tpos = vec_of(tpos_), scr_o = vec_of(scr_o_);
  Vec<i8> mark = vec_of(mark_), present = vec_of(present_);
  Vec<double> nts = vec_of(nts_), scr_s = vec_of(scr_s_);
  for (i64 s = 0; s < c; ++s)
    if (pos[s] >= 0) present[s] = 1;
  i64 tn = 0;
  i64 need = 0;
  for (i64 i = 0; i < n; ++i) {
    need = needed(size, alphas);
    if (tn < need)
      tn = refill(tord, nts, tpos, tn, const_view(present), const_view(score), c,
                  need + TOP_MARGIN, scr_s, scr_o);
    for (i64 a = 0; a < A; ++a) {
      i64 r = conformal_rank(size, alphas[a]);
      if (r > size || size == 0) {
        half(i, a) = INF;
      } else if (r < 1) {
        half(i, a) = -INF;
      } else {
        half(i, a) = -nts[size - r];
      }
    }
    i64 s = slots[i];
    if (s >= 0) {
      cy[s] = y[i];
      double sm = 0.0;
      i64 cnt = 0;
      for (i64 t = 0; t < T; ++t) {
        bool oob = W(t, i) == 0.0;
        coob(s, t) = oob ? 1 : 0;
        cpred(s, t) = P(t, i);
        if (oob) {
          sm += P(t, i);
          cnt += 1;
        }
      }
      csum[s] = sm;
      ccnt[s] = cnt;
      double v = std::fabs(y[i] - py_div(sm, static_cast<double>(cnt)));
      score[s] = v;
      if (present[s]) {
        if (tpos[s] >= 0) tn = top_remove(tord, nts, tpos, tn, s);
      } else {
        present[s] = 1;
        size += 1;
      }
      if (tn > 0 && v > -nts[tn - 1]) tn = ss_insert(tord, tpos, nts, tn, -v, s);
    }
    i64 nt = 0;
    if (ev.present) {  // CPExact's events
      for (i64 t = 0; t < T; ++t) {
        i64 k = cur[t];
        if (k >= ev.ev_n[t]) continue;  // no event left for this tree
        while (k < ev.ev_n[t] && ev.ev_t(t, k) == i) {
          i64 s2 = ev.ev_s(t, k);
          double v = ev.ev_v(t, k);
          if (std::isnan(v)) {
            if (coob(s2, t)) {
              coob(s2, t) = 0;
              csum[s2] -= cpred(s2, t);
              ccnt[s2] -= 1;
            }
          } else {
            csum[s2] += v - cpred(s2, t);
            cpred(s2, t) = v;
          }
          if (mark[s2] == 0) {
            mark[s2] = 1;
            touched[nt] = s2;
            nt += 1;
          }
          k += 1;
        }
        cur[t] = k;
      }
    }
    for (i64 k = 0; k < nt; ++k) {
      i64 s2 = touched[k];
      mark[s2] = 0;
      if (!present[s2]) continue;
      if (ccnt[s2] == 0) {
        present[s2] = 0;
        size -= 1;
        if (tpos[s2] >= 0) tn = top_remove(tord, nts, tpos, tn, s2);
        continue;
      }
      double v = std::fabs(cy[s2] - py_div(csum[s2], static_cast<double>(ccnt[s2])));
      if (tpos[s2] >= 0) {
        // rest <= min(top) must hold: the bound is the smallest other top member (or this
        // member's old score when it is the only one)
        i64 p = tpos[s2];
        double low;
        if (p != tn - 1) {
          low = -nts[tn - 1];
        } else if (tn >= 2) {
          low = -nts[tn - 2];
        } else {
          low = score[s2];
        }
        if (v < low) {
          tn = top_remove(tord, nts, tpos, tn, s2);
        } else {
          ss_update(tord, tpos, nts, tn, -v, s2);
        }
        score[s2] = v;
      } else {
        score[s2] = v;
        if (tn > 0 && v > -nts[tn - 1]) tn = ss_insert(tord, tpos, nts, tn, -v, s2);
      }
    }
    if (tn > need + 4 * TOP_MARGIN) {  // keep the top part small: its minimum goes to the rest
      while (tn > need + TOP_MARGIN) {
        tpos[tord[tn - 1]] = -1;
        tn -= 1;
      }
    }
  }
  // the full sorted view for later predictions and inspection
  i64 m = 0;
  for (i64 s = 0; s < c; ++s) {
    pos[s] = -1;
    if (present[s]) {
      scr_s[m] = score[s];
      scr_o[m] = s;
      m += 1;
    }
  }
  std::vector<i64> idx(static_cast<size_t>(m));
  Vec<i64> iv = vec_of(idx);
  argsort_scores(const_view(scr_s), m, iv);
  for (i64 k = 0; k < m; ++k) {
    order[k] = scr_o[iv[k]];
    ss[k] = scr_s[iv[k]];
    pos[order[k]] = k;
  }
  return size;
}

void copy_entrants(Vec<const i64> slots, Mat<const double> X, Mat<double> cx) {
  for (i64 i = 0; i < X.rows(); ++i)
    if (slots[i] >= 0)
      for (i64 j = 0; j < X.cols(); ++j) cx(slots[i], j) = X(i, j);
}

i64 exact_tree_pass(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                    Vec<const double> w, Vec<const i64> slots, i64 g0, i64 start, Vec<double> P,
                    Mat<const double> cx, Vec<i64> cleaf, Vec<i64> cnext, Vec<i64> cprev,
                    Vec<i64> cbirth, Vec<double> ccur, Vec<i32> ev_t, Vec<i32> ev_s,
                    Vec<double> ev_v, Vec<i64> ev_n) {
  TreeRef st = tree::state_at(A, t);
  ParamRef prm = tree::params_at(A, t);
  const i64 c = cx.rows();
  const i64 cap = ev_t.size();
  Vec<i64> ints = st.ints();
  Vec<i64> aux = st.lf_aux();
  Vec<i64> nd_leaf = st.nd_leaf();
  Vec<i64> nd_right = st.nd_right();
  const i64 nfeat = ints[tree::I_NFEAT];
  const EventOut ev{ev_t, ev_s, ev_v, ev_n};
  Vec<const i64> cb = const_view(cbirth);
  Vec<const i64> cn = const_view(cnext);
  for (i64 i = start; i < X.rows(); ++i) {
    if ((tree::needs_step(prm, w[i]) && !tree::has_room(st, prm)) || ev_n[0] + 2 * c > cap)
      return i;
    Row x = X.row(i);
    i64 node = tree::route(st, x);
    i64 leaf = nd_leaf[node];
    P[i] = leaves::predict_leaf(st, prm, leaf, x, nfeat);
    i64 s = slots[i];
    if (s >= 0) {
      if (cleaf[s] >= 0) unlink(aux, cleaf, cnext, cprev, s);
      if (w[i] == 0.0) {
        cbirth[s] = g0 + i;
        ccur[s] = P[i];
        link(aux, cleaf, cnext, cprev, s, leaf);
      }
    }
    i64 nsplit = ints[tree::I_NSPLITS];
    bool drifted = tree::learn_at(st, prm, node, x, y[i], w[i], P[i]);
    if (w[i] > 0.0) {
      if (ints[tree::I_NSPLITS] != nsplit) {  // the leaf split: its members move to the children
        i64 m = aux[leaf];
        i64 rslot = nd_leaf[nd_right[node]];
        aux[leaf] = -1;
        aux[rslot] = -1;
        i64 walked = 0;
        while (m >= 0) {
          member(m, c);
          if (++walked > c) cyclic();
          i64 nx = cnext[m];
          i64 child = nd_leaf[tree::route(st, member_x(X, cx, cb, g0, m))];
          link(aux, cleaf, cnext, cprev, m, child);
          m = nx;
        }
        refresh(st, prm, leaf, X, cx, cb, g0, cn, ccur, i, ev);
        refresh(st, prm, rslot, X, cx, cb, g0, cn, ccur, i, ev);
      } else {
        refresh(st, prm, leaf, X, cx, cb, g0, cn, ccur, i, ev);
      }
    }
    if (drifted) return i + 1;
  }
  return X.rows();
}

void exact_tree_reset(i64 i, Vec<i64> cleaf, Vec<i32> ev_t, Vec<i32> ev_s, Vec<double> ev_v,
                      Vec<i64> ev_n) {
  for (i64 m = 0; m < cleaf.size(); ++m) {
    if (cleaf[m] < 0) continue;
    cleaf[m] = -1;
    i64 k = ev_n[0];
    ev_t[k] = static_cast<i32>(i);
    ev_s[k] = static_cast<i32>(m);
    ev_v[k] = std::numeric_limits<double>::quiet_NaN();
    ev_n[0] = k + 1;
  }
}

Calibration calibration_views(Vec<const i64> C) {
  using engine::h1;
  using engine::h2;
  return Calibration{h1<i64>(C, 0),     h1<double>(C, 2),  h2<i8>(C, 4),      h2<double>(C, 7),
                     h1<double>(C, 10), h1<i64>(C, 12),    h1<double>(C, 14), h1<i64>(C, 16),
                     h1<i64>(C, 18),    h1<double>(C, 20), h2<double>(C, 22)};
}

LearnResult cp_learn_one(const Arena& A, u64& frng, double lam, Vec<const double> x, double y,
                         double w, Vec<double> wt, Vec<double> P, Vec<i8> drifted, i64 t0,
                         Mat<double> M, const Calibration& C, i64 size) {
  i64 status = engine::learn_one(A, frng, lam, x, y, w, wt, P, drifted, t0, M);
  if (status >= 0) return {status, size};
  bool oob = false;
  for (i64 t = 0; t < P.size(); ++t)
    if (wt[t] == 0.0) oob = true;
  if (oob) {
    i64 s = C.ring[0];
    C.ring[0] = pymod(s + 1, C.ring[1]);
    for (i64 j = 0; j < x.size(); ++j) C.cx(s, j) = x[j];
    size = enter(size, C, const_view(P), const_view(wt), y, s);
  }
  return {status, size};
}

double cp_predict_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P, Mat<double> M,
                      Vec<const double> ss, i64 size, Vec<const double> alphas, Vec<double> lo,
                      Vec<double> hi) {
  engine::predict_trees_memo(A, x, P, M);
  double yhat = engine::aggregate_at(A, P, agg);
  for (i64 a = 0; a < alphas.size(); ++a) {
    double h = sorted_half_width(ss, size, alphas[a]);
    lo[a] = yhat - h;
    hi[a] = yhat + h;
  }
  return yhat;
}

Interval cp_interval_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P,
                         Mat<double> M, Vec<const double> ss, i64 size, double alpha) {
  engine::predict_trees_memo(A, x, P, M);
  double yhat = engine::aggregate_at(A, P, agg);
  double h = sorted_half_width(ss, size, alpha);
  return {yhat - h, yhat + h};
}

}  // namespace sf::intervals
