// The conformal methods CPApproximate and CPExact (JMLR 2019, section 3.1) over the forest's trees
// (their Python face: streamforest/intervals/conformal.py).
//
// A chunk runs in two steps: a *tree pass* per tree (predict each row before learning it and,
// for CPExact, keep the tree's out-of-bag predictions of the calibration members current,
// recording each change as an event), then a *method pass* over the rows in stream order
// (``conformal_pass``) that computes the half-widths from the calibration scores and updates the
// calibration set.  ``cp_learn_one`` and ``cp_predict_one`` do one row in one call (the
// per-example API of CPApproximate); their handle forms read the engine's arrays from an engine
// handle (engine/handle.hpp) and the calibration arrays from a calibration handle
// (``calibration_views``).
//
// The calibration set: ``c`` slots in a FIFO ring ``[head, capacity]``, a member's target
// ``cy``, its out-of-bag flags ``coob (c, T)``, the trees' predictions ``cpred (c, T)``, the sum
// and count of its out-of-bag predictions (``csum``, ``ccnt``), its score ``|y - csum / ccnt|``
// and the scores' sorted set (``order``, ``pos``, ``ss``: scores.hpp), its features ``cx``.
// CPExact also links, per tree, the members the tree is out of bag for into one list per leaf:
// the head in the tree's ``lf_aux[leaf]``, then ``cnext`` / ``cprev``; ``cleaf[m]`` the leaf
// of member ``m`` (-1: not linked), ``cbirth[m]`` the stream index of the row it came from,
// ``ccur[m]`` the tree's current prediction of it.
//
// Invariants.  The bindings check before a pass: every shape and count, the slots of the rows,
// that the method pass's ``size`` is the number of held slots (``pos >= 0``), and the rank of
// the per-example step's slot (the slots its sorted order moves are checked as it moves them,
// a slot outside the set stopping it with ``std::domain_error``); an event buffer has room for
// ``2c`` more events per row (the pass stops before a row otherwise, as the numba pass does).
// CPExact's lists are doubly linked and acyclic, each member listed once at its ``cleaf``
// (checked when a model is loaded, persistence/_validation.py, and kept by the passes);
// checking them whole before each call would cost more than a one-row pass, so the tree pass
// checks each link where it follows it: a member, leaf or row outside what it indexes, or a
// walk longer than the set, stops it with ``std::domain_error`` (a ValueError; the tree and
// lists then as far as the pass got).
#pragma once

#include <cstdint>

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::intervals {

using i32 = std::int32_t;
using tree::Arena;

/// Members kept in the top part of ``conformal_pass`` beyond what the ranks need.
inline constexpr i64 TOP_MARGIN = 16;

/// CPExact's refresh events of a chunk: ``ev_t(t, k)`` the row, ``ev_s(t, k)`` the member,
/// ``ev_v(t, k)`` the tree's new prediction (NaN: the tree left the member's out-of-bag set), the
/// first ``ev_n[t]`` of row ``t`` written.  ``present`` false: none (CPApproximate).
struct Events {
  bool present = false;
  Mat<const i32> ev_t;
  Mat<const i32> ev_s;
  Mat<const double> ev_v;
  Vec<const i64> ev_n;
};

/// Rows in order: ``half(i, a)`` from the scores before row i, then row i enters the calibration
/// set at ``slots[i]`` (-1: it does not) with the stored out-of-bag predictions ``P(:, i)``
/// (out of bag: ``W(t, i) == 0``), then the trees' refreshed predictions of time i (``ev``) are
/// applied.  The full sorted order is rebuilt at the end.  Returns the new size.
i64 conformal_pass(i64 size, Vec<double> cy, Mat<i8> coob, Mat<double> cpred, Vec<double> csum,
                   Vec<i64> ccnt, Vec<double> score, Vec<i64> order, Vec<i64> pos, Vec<double> ss,
                   Mat<const double> P, Mat<const double> W, Vec<const double> y,
                   Vec<const i64> slots, const Events& ev, Vec<const double> alphas,
                   Mat<double> half);

/// The features of the rows that entered the calibration set, into their slots of ``cx``.
void copy_entrants(Vec<const i64> slots, Mat<const double> X, Mat<double> cx);

/// Tree ``t`` through rows ``start..`` (prediction into ``P``, then learning with weights
/// ``w``), keeping its out-of-bag predictions of the calibration members current (events
/// appended to ``ev_*``).  Returns the row it stopped before (room, or no room for events) or
/// after (a drift signal).
i64 exact_tree_pass(const Arena& A, i64 t, Mat<const double> X, Vec<const double> y,
                    Vec<const double> w, Vec<const i64> slots, i64 g0, i64 start, Vec<double> P,
                    Mat<const double> cx, Vec<i64> cleaf, Vec<i64> cnext, Vec<i64> cprev,
                    Vec<i64> cbirth, Vec<double> ccur, Vec<i32> ev_t, Vec<i32> ev_s,
                    Vec<double> ev_v, Vec<i64> ev_n);

/// Tree t was replaced after row ``i``: every member it was out of bag for drops it (an event of
/// value NaN) and is unlinked.
void exact_tree_reset(i64 i, Vec<i64> cleaf, Vec<i32> ev_t, Vec<i32> ev_s, Vec<double> ev_v,
                      Vec<i64> ev_n);

/// The calibration arrays of CPApproximate's per-example kernels.
struct Calibration {
  Vec<i64> ring;
  Vec<double> cy;
  Mat<i8> coob;
  Mat<double> cpred;
  Vec<double> csum;
  Vec<i64> ccnt;
  Vec<double> score;
  Vec<i64> order;
  Vec<i64> pos;
  Vec<double> ss;
  Mat<double> cx;
};

/// Entries of a calibration handle (``CPApproximate._calibration_handle``).
inline constexpr i64 C_SIZE = 25;

/// The calibration arrays of a handle (addresses trusted: the binding checks the shapes).
Calibration calibration_views(Vec<const i64> C);

struct LearnResult {
  i64 status;
  i64 size;
};

/// CPApproximate, one example: every tree learns ``(x, y)`` (engine::learn_one); when the row is
/// out of bag for some tree it enters the calibration set at the ring's next slot (its features
/// into ``cx``).  Returns ``(status, size)``.
LearnResult cp_learn_one(const Arena& A, u64& frng, double lam, Vec<const double> x, double y,
                         double w, Vec<double> wt, Vec<double> P, Vec<i8> drifted, i64 t0,
                         Mat<double> M, const Calibration& C, i64 size);

/// The forest's prediction for ``x`` and its conformal interval at each level of ``alphas``
/// (into ``lo``, ``hi``); the trees' leaves and predictions also into the memo ``M``.
double cp_predict_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P, Mat<double> M,
                      Vec<const double> ss, i64 size, Vec<const double> alphas, Vec<double> lo,
                      Vec<double> hi);

struct Interval {
  double lo, hi;
};

/// ``(lower, upper)`` of ``cp_predict_one`` at one level ``alpha`` (the same arithmetic).
Interval cp_interval_one(const Arena& A, Vec<const double> x, i64 agg, Vec<double> P,
                         Mat<double> M, Vec<const double> ss, i64 size, double alpha);

}  // namespace sf::intervals
