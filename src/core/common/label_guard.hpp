// The label guard: sets aside a regression label far outside the range of the labels learnt so
// far (a sensor spike, a unit slip, 1e12 typed for 12), so that one glitch cannot stay in a
// model's leaf statistics for good.
//
// The guard keeps the range ``[lo, hi]`` of the labels it let through.  Once it has counted
// ``GUARD_WARMUP`` labels and the range has a width ``d = hi - lo > 0``, a label ``y`` is
// *flagged* when it lies more than ``f * d`` outside the range (``y < lo - f d`` or
// ``y > hi + f d``), ``f`` the margin, ``GUARD_WIDTHS`` range widths at rest.  A flagged label
// is not let through: the owner learns the row with weight 0 and the label clipped into
// ``[lo, hi]`` (its trees count the row, no leaf statistic learns it), and the range does not
// move.  Each flag doubles the margin, and each label let through relaxes it by a factor
// ``1 - 1 / GUARD_RELAX`` back towards ``GUARD_WIDTHS`` (a halving per ~700 labels): a
// genuine change of scale (every label from now on 1000 times larger) is let through after
// ``log2(1000 / GUARD_WIDTHS) + 1 = 8`` flagged rows, while isolated glitches further apart than
// a few hundred rows always meet the resting margin.  On a stream whose labels stay inside
// ``GUARD_WIDTHS`` widths of their range (any stationary stream with a light tail, and every
// stream the result fingerprints use) the guard never flags, and the owner's results are
// those it had without a guard, bit for bit.
//
// Rows of weight 0 (or a NaN weight) and non-finite labels are not the guard's: it neither
// counts nor flags them.
//
// State: a float64 array of ``GUARD_SIZE`` items owned by the model (saved with it), all zeros
// for a fresh guard.  Any values are safe (a corrupt state flags more or fewer labels, never
// reads outside the array); the bindings check its length.
#pragma once

#include "views.hpp"

namespace sf::guard {

inline constexpr i64 G_COUNT = 0;    // labels counted (flagged or not)
inline constexpr i64 G_LO = 1;       // the smallest label let through
inline constexpr i64 G_HI = 2;       // the largest label let through
inline constexpr i64 G_MARGIN = 3;   // the margin f, in range widths (0: GUARD_WIDTHS)
inline constexpr i64 G_FLAGGED = 4;  // labels flagged so far
inline constexpr i64 GUARD_SIZE = 5;

inline constexpr i64 GUARD_WARMUP = 32;     // labels let through before the guard flags any
inline constexpr double GUARD_WIDTHS = 10;  // the margin at rest, in range widths
inline constexpr double GUARD_RELAX = 1000;  // the margin relaxes by 1 - 1/this per label
inline constexpr double GUARD_MAX_MARGIN = 1e300;

/// One label of weight ``w``: returns the label to learn, ``y`` itself unless the guard flags
/// it, then ``y`` clipped into the range (the row is then learnt with weight 0: flagged iff
/// the result differs from ``y``).
double guard_label(Vec<double> state, double y, double w);

/// What ``guard_label`` would return, without changing the state (a caller that learns the row
/// only if it is let through, then commits it with ``guard_label``).
double guard_peek(Vec<const double> state, double y, double w);

/// Whether ``guard_label`` flagged label ``y`` (returned ``learnt``).
inline bool flagged(double learnt, double y) { return learnt != y && y == y; }

/// ``guard_label`` of each row in order: ``y_out[i]`` its label to learn, ``flags[i]`` 1 if
/// flagged (else 0).  Returns the number of rows flagged.  ``y_out`` may be ``y``'s memory.
i64 guard_labels(Vec<double> state, Vec<const double> y, Vec<const double> w, Vec<double> y_out,
                 Vec<i8> flags);

}  // namespace sf::guard
