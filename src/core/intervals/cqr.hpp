// The method pass of the conformalized quantile forest, ConformalQRF: out-of-bag CQR scores ``max(lo - y, y - hi)`` per
// calibrated level in sorted sets over one FIFO ring of slots (scores.hpp), optionally with
// ACI on each level.
//
// Invariants the bindings check before a pass: the ring ``[head, capacity]`` has
// ``0 <= head < capacity`` and ``capacity`` at most the arrays' widths; every level's sorted
// set holds the same ``size <= capacity`` slots consistently (a slot's eviction is read from
// level 0's positions); the requested levels' bases are calibrated levels.
#pragma once

#include "common/views.hpp"

namespace sf::intervals {

/// Rows in order.  ``base_lo/hi(i, a)``: the QRF interval of row i at ``alphas[a]`` from all
/// trees; ``oob_lo/hi``: from the trees for which row i is out of bag (NaN if none).  Per level
/// a: ``half(i, a)`` is the conformal quantile at level ``alpha_t[a]`` of the scores; then,
/// when learning, ACI updates ``alpha_t[a] += aci_gamma * (alphas[a] - err)`` and row i (out of
/// bag for some tree: a zero in its column of ``W``) enters the calibration set.  For each
/// requested level ``req[r]``, ``req_half(i, r)`` is the conformal quantile of the scores of
/// the calibrated level ``req_base[r]`` at the rank of ``req[r]`` shifted by that level's ACI
/// offset.  Returns the new size.
i64 cqr_levels_pass(i64 size, Vec<i64> ring, Mat<double> cscore, Mat<i64> order, Mat<i64> pos,
                    Mat<double> ss, Mat<const double> base_lo, Mat<const double> base_hi,
                    Mat<const double> oob_lo, Mat<const double> oob_hi, Mat<const double> W,
                    Vec<const double> y, bool learn, Vec<const double> alphas, double aci_gamma,
                    Vec<double> alpha_t, Mat<double> half, Vec<const double> req,
                    Vec<const i64> req_base, Mat<double> req_half);

}  // namespace sf::intervals
