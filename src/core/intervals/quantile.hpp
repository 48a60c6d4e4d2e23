// OnlineQRF's passes (streamforest/intervals/quantile_forest.py): each tree copies the leaf
// sketch every row reaches (before learning the row), then the mixture of the trees' copies is
// queried for quantiles and highest-density intervals.  A tree's copies at row ``i`` are taken
// before it learns row ``i`` and trees are independent, so the chunked passes give exactly the
// row-by-row (prequential) result; ``query_one`` reads the leaves in place for one row.
//
// A *record* of a chunk of ``n`` rows and ``T`` trees: ``bufs (T, capacity)``, row t holding
// tree t's copies of the sketches' retained items (row i's at ``goff(t, i)``), ``glv (T, n',
// LV_WIDTH)`` the level rows of those copies (``n' >= n``; only the level count, its
// boundaries and the total weight are written).  In a mixture, tree t weighs ``1 / (n_t *
// teff)`` per unit of sketch weight (Meinshausen's weighting: ``n_t`` its sketch's total weight,
// ``teff`` the trees in the mask with data for the row) or 1 (the KLL weights).
//
// Invariants the bindings check before a kernel runs: every tree is one this core runs, with
// leaf sketches (a level row of LV_WIDTH items per leaf); a record's level rows are well formed
// (``1 <= H <= MAX_LEVELS``, boundaries ascending) and their items lie inside ``bufs``; scratch
// arrays have the sizes given below.
#pragma once

#include <utility>

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::intervals {

/// Tree ``t``: ``P[i]`` its prediction for row i; a copy of the sketch of the leaf row i reaches
/// (its retained items appended to ``gbuf`` at ``goff[i]``, its level row in ``glv.row(i)``),
/// both taken before learning row i (with weight ``w[i]``, when ``learn``).  Stops before a row
/// when the tree or ``gbuf`` lacks room; returns the row it stopped before (``X.rows()``: all),
/// or the row after one on which the tree's drift detector fired.
i64 sketch_tree_pass(const tree::Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                     Vec<const double> w, i64 start, bool learn, Vec<double> P, Vec<double> gbuf,
                     Vec<i64> gpos, Vec<i64> goff, Mat<i64> glv);

/// For rows ``r0..r1``: quantiles ``qs`` (into ``out_q``) and highest-density intervals of the
/// masses ``masses`` (into ``out_lo``, ``out_hi``) of the mixture of the trees' leaf sketches
/// in the record ``(bufs, goff, glv)``, trees with ``mask(t, i)`` only.
void mixture_query(Mat<const double> bufs, Mat<const i64> goff, Cube<const i64> glv,
                   Mat<const i8> mask, bool meinshausen, Vec<const double> qs,
                   Vec<const double> masses, Mat<double> out_q, Mat<double> out_lo,
                   Mat<double> out_hi, i64 r0, i64 r1);

/// The scratch arrays of ``query_one``: ``leaves`` (``n_trees``); ``rs``, ``re``, ``rw``,
/// ``heap``, ``hv``, ``cur`` (``n_trees * (LV_WIDTH - 3)``: a run per level); ``sv``, ``sw``
/// (the retained items of every tree's leaf sketch; used when there are masses).
struct QueryScratch {
  Vec<i64> leaves;
  Vec<i64> rs;
  Vec<i64> re;
  Vec<double> rw;
  Vec<i64> heap;
  Vec<double> hv;
  Vec<i64> cur;
  Vec<double> sv;
  Vec<double> sw;
};

/// For one row ``x``: quantiles ``qs`` (into ``out_q``) and highest-density intervals of the
/// masses (into ``out_lo``, ``out_hi``) of the mixture of every tree's leaf sketch for ``x``,
/// read in place; the same values as ``mixture_query`` on copies.
void query_one(const tree::Arena& A, Vec<const double> x, bool meinshausen, Vec<const double> qs,
               Vec<const double> masses, Vec<double> out_q, Vec<double> out_lo,
               Vec<double> out_hi, const QueryScratch& s);

/// ``(lower, upper)`` of one level: ``query_one`` with two quantiles ``qs`` (an equal-tailed
/// interval: ``out_q[0]``, ``out_q[1]``) or, without ``qs``, one mass (a highest-density one:
/// ``out_lo[0]``, ``out_hi[0]``); a missing bound (NaN: no data) made infinite.
std::pair<double, double> interval_one(const tree::Arena& A, Vec<const double> x,
                                       bool meinshausen, Vec<const double> qs,
                                       Vec<const double> masses, Vec<double> out_q,
                                       Vec<double> out_lo, Vec<double> out_hi,
                                       const QueryScratch& s);

}  // namespace sf::intervals
