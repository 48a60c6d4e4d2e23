// The online conformal methods after ACI (AdaptiveConformal's other methods): SF-OGD,
// SAOCP, DtACI, AgACI and NExCP over the intervals of a base model, rows in order.
//
// Every method picks, per tracked level ``r``, a threshold on a score of the base model's
// interval ``[lo, hi]`` at that level: ``scaled`` (regression) ``s = |y - m| / h`` with
// ``m = (lo + hi) / 2``, ``h = (hi - lo) / 2`` and the interval ``m +- theta h``; additive
// (prediction sets) ``s = max(lo - y, y - hi)`` and the interval ``[lo - theta, hi + theta]``.
// Rows have the modes of controllers.hpp (0 serve, 1 serve then learn, 2 learn from the
// record ``rec`` of what was served, 3 skip); ``rec(i, r)``: ``[own_lo, own_hi, base_lo,
// base_hi, extras..., served_at]``.  A row whose base interval is not finite (or, scaled, of
// zero width) is served the base interval and teaches nothing.  Under a lag, what a row
// teaches is taken at what was served; every step on a served miss is capped by ``lag_step``
// (SF-OGD's step is divided by ``sqrt(1 + lag)`` instead).
//
// State per level: ``st(r, .)`` the scalars ``TH .. CLOCK``, ``cal.row(r)`` the window of
// recent scores (a ring: ``CALN`` held, ``CALPOS`` the next slot), ``ex.mat(r)`` the experts
// (SAOCP: ``E_*`` fields, the live ones first by start time; DtACI: ``[level, log weight]``;
// AgACI: ``A_*``).  Invariants the bindings check: every index below is inside its view, the
// windows' counts and positions are inside ``cal``, SAOCP's clocks are at least 1.
#pragma once

#include "common/views.hpp"

namespace sf::intervals {

inline constexpr i64 SFOGD = 0, SAOCP = 1, DTACI = 2, AGACI = 3, NEXCP = 4;
// per-level scalars: threshold, sum of squared gradients, largest score, steps, window count,
// window position, SAOCP's clock
inline constexpr i64 TH = 0, GSQ = 1, SMAX = 2, STEPS = 3, CALN = 4, CALPOS = 5, CLOCK = 6;
inline constexpr i64 N_SCALARS = 7;
/// DtACI's (and SAOCP's, AgACI's) served-miss correction of its level.
inline constexpr i64 CORR = GSQ;
// SAOCP expert fields
inline constexpr i64 E_ALIVE = 0, E_START = 1, E_YHAT = 2, E_GRAD = 3, E_Z = 4, E_WZ = 5,
                     E_AGE = 6, E_LIFE = 7, E_SCALE = 8;
inline constexpr i64 N_SAOCP_FIELDS = 9;
// AgACI expert fields: level, then BOA state of the lower and upper bound
inline constexpr i64 A_LEVEL = 0, A_LLO = 1, A_SQLO = 2, A_MAXLO = 3, A_ETALO = 4, A_LHI = 5,
                     A_SQHI = 6, A_MAXHI = 7, A_ETAHI = 8;
inline constexpr i64 N_AGACI_FIELDS = 9;

/// The methods' pass over the rows.  ``gammas``: the experts' steps (DtACI, AgACI); ``eta``
/// (per level), ``sigma``: DtACI's learning rate and mixing; ``gamma``: the step of the
/// served-miss corrections (DtACI's level, SAOCP's and AgACI's thresholds); ``lifetime``:
/// SAOCP's ``g``; ``scale``: SF-OGD's / SAOCP's scale (``<= 0``: ``sqrt(3)`` times the largest
/// score so far); ``rho``: NExCP's recency weight; ``clip``: DtACI's levels clipped to [0, 1];
/// ``buf`` (at least ``cal.cols()``) and ``probs`` (2 x K) scratch.
void online_pass(i64 method, bool scaled, double floor, double theta0, Mat<const double> blo,
                 Mat<const double> bhi, Vec<const double> pred, Vec<const double> y,
                 Vec<const i8> mode, Cube<double> rec, Vec<const double> alphas,
                 Vec<const bool> learns, Vec<const double> gammas, Vec<const double> eta,
                 double sigma, double gamma, double lifetime, double scale, double rho, bool clip,
                 Mat<double> st, Mat<double> cal, Cube<double> ex, Vec<const i64> order,
                 Mat<double> out_lo, Mat<double> out_hi, Vec<double> own_lo, Vec<double> own_hi,
                 Vec<double> buf, Mat<double> probs);

}  // namespace sf::intervals
