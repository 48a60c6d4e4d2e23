// OnlineQRF's passes (see quantile.hpp).
#include "intervals/quantile.hpp"

#include <array>
#include <limits>
#include <string_view>
#include <vector>

#include "intervals/arith.hpp"
#include "sketch/kll.hpp"
#include "tree/passes.hpp"

namespace sf::intervals {

namespace {

using sketch::LV_N;
using sketch::LV_WIDTH;
using tree::ParamRef;
using tree::TreeRef;

// the leaf sketches' field (a float one): TreeState._fields.index("lf_sketch")
#define SF_LF_SK_INDEX(k, name, which, T, V, nd) +(std::string_view(#name) == "lf_sketch" ? k : 0)
inline constexpr i64 LF_SK = 0 SF_TREE_FIELDS(SF_LF_SK_INDEX);
#undef SF_LF_SK_INDEX
static_assert(LF_SK > 0, "the tree fields have no lf_sketch");

/// ``nt * teff`` as numba multiplies int64s (wrapping), then made a float.
inline double wrapped_product(i64 a, i64 b) {
  return static_cast<double>(static_cast<i64>(static_cast<u64>(a) * static_cast<u64>(b)));
}

/// Tree ``t``'s weight per unit of sketch weight in a mixture of ``teff`` trees.
inline double mixture_mult(bool meinshausen, i64 nt, i64 teff) {
  return meinshausen ? py_div(1.0, wrapped_product(nt, teff)) : 1.0;
}

struct Gathered {
  i64 nruns;
  double total;
};

/// Copy row i's leaf sketches of the trees with ``mask(t, i)`` into ``buf`` as sorted runs (one
/// per level, weights as chosen); returns ``(runs, total weight)``.
Gathered gather_runs(Mat<const double> bufs, Mat<const i64> goff, Cube<const i64> glv,
                     Mat<const i8> mask, i64 i, bool meinshausen, Vec<double> buf, Vec<i64> rs,
                     Vec<i64> re, Vec<double> rw) {
  const i64 T = glv.n0;
  i64 teff = 0;
  for (i64 t = 0; t < T; ++t)
    if (mask(t, i) && glv(t, i, LV_N) > 0) teff += 1;
  i64 nr = 0;
  i64 nb = 0;
  double total = 0.0;
  std::array<i64, LV_WIDTH> row;  // the level row, copied (the query functions take it mutable)
  Vec<i64> lv(row.data(), LV_WIDTH);
  for (i64 t = 0; t < T; ++t) {
    i64 nt = glv(t, i, LV_N);
    if (!(mask(t, i) && nt > 0)) continue;
    double mult = mixture_mult(meinshausen, nt, teff);
    for (i64 j = 0; j < LV_WIDTH; ++j) lv[j] = glv(t, i, j);
    auto r = sketch::append_runs(bufs.row(t), goff(t, i) - lv[1], lv, mult, buf, nb, rs, re, rw,
                                 nr);
    nb = r.first;
    nr = r.second;
    total += mult * static_cast<double>(nt);
  }
  return {nr, total};
}

/// As ``gather_runs`` for row ``x``, the runs read in place: ``rs``, ``re`` index the arena's
/// float array as one (the leaf sketches' items are not copied).
Gathered gather_leaf_runs(const tree::Arena& A, Vec<const double> x, bool meinshausen,
                          Vec<i64> leaves, Vec<i64> rs, Vec<i64> re, Vec<double> rw) {
  const i64 T = A.lay.n0;
  i64 teff = 0;
  for (i64 t = 0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    leaves[t] = st.nd_leaf()[tree::route(st, x)];
    if (st.lf_sketch_levels()(leaves[t], LV_N) > 0) teff += 1;
  }
  i64 nr = 0;
  double total = 0.0;
  for (i64 t = 0; t < T; ++t) {
    TreeRef st = tree::state_at(A, t);
    i64 leaf = leaves[t];
    Mat<i64> levels = st.lf_sketch_levels();
    i64 nt = levels(leaf, LV_N);
    if (nt <= 0) continue;
    double mult = mixture_mult(meinshausen, nt, teff);
    i64 start = t * A.fa.n1 + A.lay(t, LF_SK, 0) + leaf * st.lf_sketch().cols();
    nr = sketch::level_runs(levels.row(leaf), start, mult, rs, re, rw, nr);
    total += mult * static_cast<double>(nt);
  }
  return {nr, total};
}

}  // namespace

i64 sketch_tree_pass(const tree::Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                     Vec<const double> w, i64 start, bool learn, Vec<double> P, Vec<double> gbuf,
                     Vec<i64> gpos, Vec<i64> goff, Mat<i64> glv) {
  TreeRef st = tree::state_at(A, t);
  ParamRef prm = tree::params_at(A, t);
  Mat<double> items = st.lf_sketch();
  Mat<i64> levels = st.lf_sketch_levels();
  const i64 cap = items.cols();
  const i64 nfeat = st.ints()[tree::I_NFEAT];
  const i64 n = X.rows();
  for (i64 i = start; i < n; ++i) {
    if (gbuf.size() - gpos[0] < cap ||
        (learn && tree::needs_step(prm, w[i]) && !tree::has_room(st, prm)))
      return i;
    tree::Row x = X.row(i);
    i64 node = tree::route(st, x);
    i64 leaf = st.nd_leaf()[node];
    tree::Kept kept;
    P[i] = learn ? tree::predict_to_learn(st, prm, node, x, w[i], kept)
                 : leaves::predict_leaf(st, prm, leaf, x, nfeat);
    i64 H = levels(leaf, 0);
    for (i64 j = 0; j < H + 2; ++j) glv(i, j) = levels(leaf, j);  // level count and boundaries
    glv(i, LV_N) = levels(leaf, LV_N);
    i64 p = gpos[0];
    goff[i] = p;
    for (i64 j = levels(leaf, 1); j < cap; ++j) {
      gbuf[p] = items(leaf, j);
      p += 1;
    }
    gpos[0] = p;
    if (learn && tree::learn_at(st, prm, node, x, y[i], w[i], P[i], &kept)) return i + 1;
  }
  return n;
}

void mixture_query(Mat<const double> bufs, Mat<const i64> goff, Cube<const i64> glv,
                   Mat<const i8> mask, bool meinshausen, Vec<const double> qs,
                   Vec<const double> masses, Mat<double> out_q, Mat<double> out_lo,
                   Mat<double> out_hi, i64 r0, i64 r1) {
  const i64 T = glv.n0;
  i64 cap = 0;
  for (i64 t = 0; t < T; ++t)
    for (i64 i = r0; i < r1; ++i)
      cap = py_max(cap, glv(t, i, 1 + glv(t, i, 0)) - glv(t, i, 1));
  const i64 R = T * (LV_WIDTH - 3);
  const i64 nm = masses.size();
  std::vector<double> buf_(static_cast<size_t>(T * cap));
  std::vector<i64> rs_(static_cast<size_t>(R)), re_(static_cast<size_t>(R));
  std::vector<double> rw_(static_cast<size_t>(R)), hv_(static_cast<size_t>(R));
  std::vector<i64> heap_(static_cast<size_t>(R)), cur_(static_cast<size_t>(R));
  std::vector<double> sv_(static_cast<size_t>(nm ? T * cap : 0));
  std::vector<double> sw_(static_cast<size_t>(nm ? T * cap : 0));
  Vec<double> buf(buf_.data(), T * cap);
  Vec<i64> rs(rs_.data(), R), re(re_.data(), R), heap(heap_.data(), R), cur(cur_.data(), R);
  Vec<double> rw(rw_.data(), R), hv(hv_.data(), R);
  Vec<double> sv(sv_.data(), nm ? T * cap : 0), sw(sw_.data(), nm ? T * cap : 0);
  for (i64 i = r0; i < r1; ++i) {
    Gathered g = gather_runs(bufs, goff, glv, mask, i, meinshausen, buf, rs, re, rw);
    for (i64 k = 0; k < qs.size(); ++k)
      out_q(i, k) = sketch::runs_quantile_many(buf, rs, re, rw, g.nruns, g.total, qs[k], hv, cur,
                                               heap);
    if (nm) {
      i64 m = sketch::runs_sorted(buf, rs, re, rw, g.nruns, heap, cur, sv, sw);
      for (i64 k = 0; k < nm; ++k) {
        auto b = sketch::shortest_interval(sv, sw, m, masses[k]);
        out_lo(i, k) = b.first;
        out_hi(i, k) = b.second;
      }
    }
  }
}

void query_one(const tree::Arena& A, Vec<const double> x, bool meinshausen, Vec<const double> qs,
               Vec<const double> masses, Vec<double> out_q, Vec<double> out_lo,
               Vec<double> out_hi, const QueryScratch& s) {
  Gathered g = gather_leaf_runs(A, x, meinshausen, s.leaves, s.rs, s.re, s.rw);
  Vec<double> items(A.fa.data, A.fa.n0 * A.fa.n1);  // the arena's float array as one
  for (i64 k = 0; k < qs.size(); ++k)
    out_q[k] = sketch::runs_quantile_many(items, s.rs, s.re, s.rw, g.nruns, g.total, qs[k], s.hv,
                                          s.cur, s.heap);
  if (masses.size()) {
    i64 m = sketch::runs_sorted(items, s.rs, s.re, s.rw, g.nruns, s.heap, s.cur, s.sv, s.sw);
    for (i64 k = 0; k < masses.size(); ++k) {
      auto b = sketch::shortest_interval(s.sv, s.sw, m, masses[k]);
      out_lo[k] = b.first;
      out_hi[k] = b.second;
    }
  }
}

std::pair<double, double> interval_one(const tree::Arena& A, Vec<const double> x,
                                       bool meinshausen, Vec<const double> qs,
                                       Vec<const double> masses, Vec<double> out_q,
                                       Vec<double> out_lo, Vec<double> out_hi,
                                       const QueryScratch& s) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  query_one(A, x, meinshausen, qs, masses, out_q, out_lo, out_hi, s);
  double lo, hi;
  if (qs.size()) {
    lo = out_q[0];
    hi = out_q[1];
  } else {
    lo = out_lo[0];
    hi = out_hi[0];
  }
  if (lo != lo) lo = -inf;
  if (hi != hi) hi = inf;
  return {lo, hi};
}

}  // namespace sf::intervals
