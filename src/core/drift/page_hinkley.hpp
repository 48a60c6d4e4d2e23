// Drift detectors as components (streamforest/drift.py holds their state layout): a detector's whole
// state is a small float64 array its owner allocates (a tree's ``drift_detector``, a row of a
// node's ``nd_detector``), updated by one function per observation.
//
// - ``page_hinkley_update``: the Page-Hinkley test as Seah (2021, Alg. 4.4) and FIMT-DD specify
//   it, on the absolute error normalised by the targets' sd over a warm-up, with warnings (a
//   lower threshold) for owners that prepare a replacement.  The trees' detector.
// - ``page_hinkley_standardised_update``: the earlier variant (errors standardised by their
//   own running mean and sd), kept for comparison.
// - ``page_hinkley_row_update``: Page-Hinkley on a row of a 2-d state (one per tree node).
//
// Invariant: a state array has at least the variant's N_* items (its owner's allocation).
#pragma once

#include <cmath>

#include "common/stats.hpp"
#include "common/views.hpp"

namespace sf::drift {

// Page-Hinkley (Seah 2021 §4.2.2; Ikonomovska et al. 2011)
inline constexpr i64 PH_N = 0;       // values seen since the detector started
inline constexpr i64 PH_YM = 1;      // warm-up: running mean of the targets
inline constexpr i64 PH_YM2 = 2;     // warm-up: running sum of squared deviations
inline constexpr i64 PH_SD = 3;      // the normaliser (0 while warming up)
inline constexpr i64 PH_T = 4;       // normalised errors seen after the warm-up
inline constexpr i64 PH_EBAR = 5;    // their mean
inline constexpr i64 PH_M = 6;       // m_t
inline constexpr i64 PH_MMIN = 7;    // M_t = min m
inline constexpr i64 PH_WARNED = 8;  // 1 after a warning, until withdrawn or fired
inline constexpr i64 PH_WARN = 9;    // the owner's warning threshold (0: none)
inline constexpr i64 N_PH = 10;

inline constexpr double PH_CLIP = 2.0;  // a normalised error counts at most this much

// signals of page_hinkley_update
inline constexpr i64 PH_NONE = 0;
inline constexpr i64 PH_DRIFT = 1;
inline constexpr i64 PH_WARNING = 2;
inline constexpr i64 PH_WITHDRAWN = 3;

namespace detail {
inline void ph_restart(Vec<double> state) {
  double w = state[PH_WARN];
  for (i64 k = 0; k < state.size(); ++k) state[k] = 0.0;
  state[PH_WARN] = w;
}
}  // namespace detail

/// One step of the Page-Hinkley test on the prediction error of target ``y``.
///
/// As specified by Seah (2021, Algorithm 4.4, after Ikonomovska et al. 2011; their defaults
/// ``alpha = 0.005``, ``lam = 50``): the error ``e_t = |y_t - pred_t| / sd`` is normalised by
/// the standard deviation of the targets when the detector started (here: over its first
/// ``warmup`` targets, extended while they are all equal), which the thesis keeps fixed so that
/// a gradual drift does not inflate it; with ``e_bar_t`` the mean of ``e_1..e_t``,
/// ``m_t = sum (e_t - e_bar_t - alpha)``, ``M_t = min m`` and the test fires when
/// ``m_t - M_t > lam``.
///
/// Robustness (measured on shuffled real data sets, see benchmarks/drift_false_alarms.py):
/// ``e_t`` is clipped at PH_CLIP (2 target sds), so a single outlier (heavy-tailed targets:
/// house prices, CPU loads) moves ``m`` by at most 2 and the test needs a sustained rise of the
/// error; a rise of ``d`` target sds still fires after about ``lam / min(d, 2)`` examples.
///
/// Warnings (when the owner set ``state[PH_WARN] > 0``): the same statistic above the lower
/// threshold ``state[PH_WARN]`` gives PH_WARNING once; if ``m`` then falls back to a new
/// minimum before the test fires, PH_WITHDRAWN.  After PH_DRIFT the detector restarts
/// (warm-up included).  Returns the signal (PH_NONE = 0 mostly).
inline i64 page_hinkley_update(Vec<double> state, double y, double pred, double alpha, double lam,
                               i64 warmup) {
  state[PH_N] += 1.0;
  double sd = state[PH_SD];
  if (sd <= 0.0) {  // warm-up: the targets' sd
    double n = state[PH_N];
    double d = y - state[PH_YM];
    state[PH_YM] += d / n;
    state[PH_YM2] += d * (y - state[PH_YM]);
    if (n >= static_cast<double>(warmup) && state[PH_YM2] > 0.0)
      state[PH_SD] = std::sqrt(state[PH_YM2] / n);
    return PH_NONE;
  }
  double e = std::fabs(y - pred) / sd;
  if (!(e <= PH_CLIP)) e = PH_CLIP;  // NaN or infinite too
  double t = state[PH_T] + 1.0;
  state[PH_T] = t;
  state[PH_EBAR] += (e - state[PH_EBAR]) / t;
  double m = state[PH_M] + e - state[PH_EBAR] - alpha;
  state[PH_M] = m;
  if (m < state[PH_MMIN]) {
    state[PH_MMIN] = m;
    if (state[PH_WARNED] != 0.0) {
      state[PH_WARNED] = 0.0;
      return PH_WITHDRAWN;
    }
    return PH_NONE;
  }
  double ph = m - state[PH_MMIN];
  if (ph > lam) {
    detail::ph_restart(state);
    return PH_DRIFT;
  }
  if (state[PH_WARN] > 0.0 && ph > state[PH_WARN] && state[PH_WARNED] == 0.0) {
    state[PH_WARNED] = 1.0;
    return PH_WARNING;
  }
  return PH_NONE;
}

/// ``out[i]``: the signal of page_hinkley_update after row ``i`` (tests and benchmarks).
inline void page_hinkley_scan(Vec<double> state, Vec<const double> y, Vec<const double> pred,
                              double alpha, double lam, i64 warmup, Vec<i64> out) {
  for (i64 i = 0; i < y.size(); ++i)
    out[i] = page_hinkley_update(state, y[i], pred[i], alpha, lam, warmup);
}

// the earlier variant: errors standardised by their own running mean and sd
inline constexpr i64 SPH_M = 0, SPH_MMIN = 1, SPH_W = 2, SPH_HI = 3, SPH_LO = 4, SPH_M2 = 5;
inline constexpr i64 N_SPH = 6;

/// Page-Hinkley test (Page 1954; Hinkley 1971) for an increase of the mean of ``e``, on values
/// standardised by their own running mean and sd since the detector started:
/// ``m_T = sum_t ((e_t - mean) / sd - delta)`` fires (returns true) when ``m_T - min_t m_t >
/// lam`` (after ``min_n`` values).  The trees used it until the thesis' test replaced it:
/// standardising by the errors' own sd lets one heavy-tailed error tens of sds away fire it at
/// once (measured on shuffled real sets, most of its rare false alarms were such single errors).
inline bool page_hinkley_standardised_update(Vec<double> state, double e, double delta,
                                             double lam, double min_n) {
  stats::Stat s = stats::welford_update(state[SPH_W], state[SPH_HI], state[SPH_LO],
                                        state[SPH_M2], e, 1.0);
  state[SPH_W] = s.w;
  state[SPH_HI] = s.hi;
  state[SPH_LO] = s.lo;
  state[SPH_M2] = s.m2;
  if (state[SPH_W] < min_n || state[SPH_M2] <= 0.0) return false;
  double z = (e - (state[SPH_HI] + state[SPH_LO])) / std::sqrt(state[SPH_M2] / state[SPH_W]);
  state[SPH_M] += z - delta;
  if (state[SPH_M] < state[SPH_MMIN]) state[SPH_MMIN] = state[SPH_M];
  return state[SPH_M] - state[SPH_MMIN] > lam;
}

/// ``out[i]``: page_hinkley_standardised_update after value ``i`` (tests and benchmarks).
inline void page_hinkley_standardised_scan(Vec<double> state, Vec<const double> e, double delta,
                                           double lam, double min_n, Vec<i8> out) {
  for (i64 i = 0; i < e.size(); ++i)
    out[i] = page_hinkley_standardised_update(state, e[i], delta, lam, min_n) ? 1 : 0;
}

// Page-Hinkley on a row of a 2-d state (one detector per tree node)
inline constexpr i64 PHN_N = 0, PHN_EBAR = 1, PHN_SUM = 2, PHN_MIN = 3, PHN_SD0 = 4;
inline constexpr i64 N_PHN = 5;

/// Feed absolute error ``e`` to the detector in row ``r`` of ``state`` (columns: count, mean
/// error, cumulative sum, its minimum, and the normaliser fixed when the detector started, the
/// sd of the targets then): with ``e`` divided by the row's normaliser, ``ebar_t`` the running
/// mean of the errors, ``m_t = m_{t-1} + e_t - ebar_t - alpha`` and ``M_t = min m``; fires
/// (returns true) when ``m_t - M_t > lam``.  Dividing by the sd of the targets *when the
/// detector started* keeps a slow rise of the error visible (the thesis' remedy for gradual
/// changes).
inline bool page_hinkley_row_update(Mat<double> state, i64 r, double e, double alpha,
                                    double lam) {
  double sd0 = state(r, PHN_SD0);
  if (sd0 > 0.0) e = e / sd0;
  double n = state(r, PHN_N) + 1.0;
  state(r, PHN_N) = n;
  double ebar = state(r, PHN_EBAR) + (e - state(r, PHN_EBAR)) / n;
  state(r, PHN_EBAR) = ebar;
  double m = state(r, PHN_SUM) + e - ebar - alpha;
  state(r, PHN_SUM) = m;
  if (m < state(r, PHN_MIN)) {
    state(r, PHN_MIN) = m;
    return false;
  }
  return m - state(r, PHN_MIN) > lam;
}

/// ``out[i]``: page_hinkley_row_update of row ``rows[i]`` with error ``e[i]`` (tests and
/// benchmarks).
inline void page_hinkley_row_scan(Mat<double> state, Vec<const i64> rows, Vec<const double> e,
                                  double alpha, double lam, Vec<i8> out) {
  for (i64 i = 0; i < e.size(); ++i)
    out[i] = page_hinkley_row_update(state, rows[i], e[i], alpha, lam) ? 1 : 0;
}

}  // namespace sf::drift
