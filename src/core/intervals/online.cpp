// SF-OGD, SAOCP, DtACI, AgACI and NExCP: the pass and its experts' updates (see online.hpp).
#include "intervals/online.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "common/numeric.hpp"
#include "common/sorting.hpp"
#include "intervals/arith.hpp"
#include "intervals/controllers.hpp"

namespace sf::intervals {

namespace {

using detail::INF;

const double SQRT3 = std::sqrt(3.0);

double pinball(double y, double q, double tau) {
  return py_max(tau * (y - q), (1.0 - tau) * (q - y));
}

/// d/dq of ``pinball(y, q, tau)`` (0 at a tie), as the reference implementation.
double pinball_grad(double y, double q, double tau) {
  if (y > q) return -tau;
  if (y < q) return 1.0 - tau;
  return 0.0;
}

/// The level's window of scores, ascending, in ``buf[:n]``; returns ``n``.
i64 sorted_window(Mat<double> cal, Mat<double> st, i64 r, Vec<double> buf) {
  i64 n = to_i64(st(r, CALN));
  for (i64 j = 0; j < n; ++j) buf[j] = cal(r, j);
  sorting::sort_into(buf, n);
  return n;
}

/// ``np.quantile(window, p, method="inverted_cdf")`` of ``n >= 1`` sorted scores (``p``
/// clipped to [0, 1]).
double quantile(Vec<double> sorted, i64 n, double p) {
  p = py_min(py_max(p, 0.0), 1.0);
  // (int(math.ceil(n * p)) - 1, wrapping as numba's int64 does for a NaN p)
  i64 k = static_cast<i64>(static_cast<u64>(ceil_i64(static_cast<double>(n) * p)) - 1u);
  return sorted[py_min(py_max(k, i64{0}), n - 1)];
}

/// DtACI's family at level ``a``: the ``1 - a`` quantile of the window; outside (0, 1) the
/// whole line (``a <= 0``) and the empty set (``a >= 1``), or with ``clip`` the window's
/// maximum and minimum.
double dtaci_threshold(Vec<double> sorted, i64 n, double a, bool clip, double theta0) {
  if (n == 0) return theta0;
  if (!clip && a <= 0.0) return INF;
  if (!clip && a >= 1.0) return -INF;
  return quantile(sorted, n, 1.0 - a);
}

/// Non-exchangeable conformal quantile (Barber et al. 2023): the window's scores weighted
/// ``rho ** age`` (age 0 the newest), the test point's weight 1 at ``+inf``; the smallest score
/// whose normalised cumulative weight reaches ``p`` (``inf`` if none).
double weighted_quantile(Mat<double> cal, Mat<double> st, i64 r, double rho, double p,
                         Vec<double> buf) {
  i64 n = to_i64(st(r, CALN));
  i64 W = cal.cols();
  i64 pos = to_i64(st(r, CALPOS));
  double total = 1.0;
  for (i64 j = 0; j < n; ++j) {
    buf[j] = cal(r, j);
    i64 age = pymod(pos - 1 - j, W);
    total += numba_ipow(rho, age);
  }
  std::vector<i64> order(static_cast<size_t>(n > 0 ? n : 0));
  sorting::argsort_into(buf, n, Vec<i64>(order.data(), static_cast<i64>(order.size())));
  double acc = 0.0;
  for (i64 k = 0; k < n; ++k) {
    i64 j = order[static_cast<size_t>(k)];
    acc += numba_ipow(rho, pymod(pos - 1 - j, W));
    if (py_div(acc, total) >= p) return buf[j];
  }
  return INF;
}

/// Score ``s`` enters level r's window (the oldest leaves once it is full).
void push(Mat<double> cal, Mat<double> st, i64 r, double s) {
  i64 W = cal.cols();
  i64 pos = to_i64(st(r, CALPOS));
  cal(r, pos) = s;
  st(r, CALPOS) = static_cast<double>(pymod(pos + 1, W));
  if (st(r, CALN) < static_cast<double>(W)) st(r, CALN) += 1;
}

/// An expert's prior weight by its start time ``t``: ``1 / (t^2 (1 + floor(log2 t)))``.
double start_prior(double t) {
  return py_div(1.0, t * t * (1.0 + static_cast<double>(floor_i64(std::log2(t)))));
}

/// An SAOCP expert's coin-betting weight.
double coin_weight(Mat<double> e, i64 k) {
  double age = e(k, E_AGE);
  return age == 0.0 ? 0.0 : py_div(e(k, E_Z), age) * (1.0 + e(k, E_WZ));
}

/// SAOCP's aggregate: experts weighted by their start time's prior times ``max(0, w)``, or by
/// the prior alone when no weight is positive (the reference implementation's arithmetic, in
/// its order: the live experts by start time).
double saocp_theta(Cube<double> ex, i64 r, double theta0) {
  Mat<double> e = ex.mat(r);
  i64 E = ex.n1;
  double z = 0.0;
  for (i64 k = 0; k < E; ++k) {
    if (e(k, E_ALIVE) == 0.0) break;
    z += start_prior(e(k, E_START));
  }
  if (z == 0.0) return theta0;
  double sum_p = 0.0;
  for (i64 k = 0; k < E; ++k) {
    if (e(k, E_ALIVE) == 0.0) break;
    double prior = py_div(start_prior(e(k, E_START)), z);
    double w = coin_weight(e, k);
    sum_p += prior * py_max(0.0, w);
  }
  double out = 0.0;
  for (i64 k = 0; k < E; ++k) {
    if (e(k, E_ALIVE) == 0.0) break;
    double prior = py_div(start_prior(e(k, E_START)), z);
    if (sum_p > 0.0) {
      double w = coin_weight(e, k);
      out += py_div(prior * py_max(0.0, w), sum_p) * e(k, E_YHAT);
    } else {
      out += prior * e(k, E_YHAT);
    }
  }
  return out;
}

void copy_expert(Mat<double> e, i64 to, i64 from) {
  for (i64 f = 0; f < e.cols(); ++f) e(to, f) = e(from, f);
}

/// One step of SAOCP (Bhatnagar et al. 2023, Alg. 1 with the reference implementation's
/// order): retire expired experts, start one at the current aggregate, update the experts'
/// coin-betting weights and their scale-free gradient steps on the pinball loss.  The live
/// experts are kept first, by start time; when all slots are taken the oldest goes.
void saocp_update(Cube<double> ex, Mat<double> st, i64 r, double s, double tau, double alpha,
                  double lifetime, double scale, double floor, double theta0) {
  Mat<double> e = ex.mat(r);
  i64 E = ex.n1;
  double t = st(r, CLOCK);
  double s_hat = saocp_theta(ex, r, theta0);
  i64 live = 0;
  for (i64 k = 0; k < E; ++k) {
    if (e(k, E_ALIVE) == 0.0) break;
    if (e(k, E_AGE) <= e(k, E_LIFE)) {
      if (live != k) copy_expert(e, live, k);
      live += 1;
    }
  }
  for (i64 k = live; k < E; ++k) e(k, E_ALIVE) = 0.0;
  if (live == E) {
    for (i64 k = 0; k < E - 1; ++k) copy_expert(e, k, k + 1);
    live = E - 1;
  }
  i64 u = 0;
  i64 k2 = to_i64(t);  // (the bindings check t >= 1: a zero would never halve to odd)
  while (pymod(k2, 2) == 0) {
    k2 = floordiv(k2, 2);
    u += 1;
  }
  for (i64 f = 0; f < e.cols(); ++f) e(live, f) = 0.0;
  e(live, E_ALIVE) = 1.0;
  e(live, E_START) = t;
  e(live, E_YHAT) = s_hat;
  e(live, E_LIFE) = lifetime * numba_ipow(2.0, u);
  e(live, E_SCALE) = scale;
  double meta = pinball(s, saocp_theta(ex, r, theta0), tau);
  for (i64 k = 0; k < live + 1; ++k) {
    double age = e(k, E_AGE);
    double w = coin_weight(e, k);
    double sc = e(k, E_SCALE);
    double yh = e(k, E_YHAT);
    double g = py_div(py_div(meta - pinball(s, yh, tau), sc), py_max(alpha, 1.0 - alpha));
    g = py_min(py_max(g, w > 0.0 ? -1.0 : 0.0), 1.0);
    e(k, E_Z) += g;
    e(k, E_WZ) += g * w;
    e(k, E_AGE) = age + 1.0;
    double grad = pinball_grad(s, yh, tau);
    e(k, E_GRAD) += grad * grad;
    if (e(k, E_GRAD) != 0.0)
      e(k, E_YHAT) = py_max(floor, yh - py_div(sc / SQRT3, std::sqrt(e(k, E_GRAD))) * grad);
  }
  st(r, CLOCK) = t + 1.0;
}

/// Bernstein online aggregation (Wintenberger 2017, multiple learning rates, as R's opera) of
/// expert ``k`` for one bound (``side`` 0 lower, 1 upper), linearised loss ``loss``.
void boa(Cube<double> ex, i64 r, i64 k, i64 K, int side, double loss) {
  i64 L = side == 0 ? A_LLO : A_LHI;
  i64 sq = L + 1, mx = L + 2, et = L + 3;
  ex(r, k, sq) += loss * loss;
  ex(r, k, mx) = py_max(ex(r, k, mx), std::fabs(loss));
  double Ev =
      std::pow(2.0, static_cast<double>(ceil_i64(std::log2(ex(r, k, mx) + 1e-3))) + 1.0);
  double eta = ex(r, k, et);
  ex(r, k, L) += 0.5 * (loss * (1.0 + eta * loss) + (eta * loss > 0.5 ? Ev : 0.0));
  if (ex(r, k, sq) > 0.0) {
    double first = py_div(1.0, Ev);
    ex(r, k, et) = py_min(first, std::sqrt(py_div(std::log(static_cast<double>(K)),
                                                  ex(r, k, sq))));
  } else {
    ex(r, k, et) = py_div(1.0, Ev);
  }
}

/// BOA's weights of the K experts for one bound, in ``out[:K]``.
void boa_probs(Cube<double> ex, i64 r, i64 K, int side, Vec<double> out) {
  i64 L = side == 0 ? A_LLO : A_LHI;
  i64 et = L + 3;
  double top = -INF;
  for (i64 k = 0; k < K; ++k) top = py_max(top, ex(r, k, et) * ex(r, k, L));
  double tot = 0.0;
  for (i64 k = 0; k < K; ++k) {
    out[k] = ex(r, k, et) * std::exp(-ex(r, k, et) * ex(r, k, L) + top);
    tot += out[k];
  }
  for (i64 k = 0; k < K; ++k)
    out[k] = tot > 0.0 ? out[k] / tot : 1.0 / static_cast<double>(K);
}

}  // namespace

void online_pass(i64 method, bool scaled, double floor, double theta0, Mat<const double> blo,
                 Mat<const double> bhi, Vec<const double> pred, Vec<const double> y,
                 Vec<const i8> mode, Cube<double> rec, Vec<const double> alphas,
                 Vec<const bool> learns, Vec<const double> gammas, Vec<const double> eta,
                 double sigma, double gamma, double lifetime, double scale, double rho, bool clip,
                 Mat<double> st, Mat<double> cal, Cube<double> ex, Vec<const i64> order,
                 Mat<double> out_lo, Mat<double> out_hi, Vec<double> own_lo, Vec<double> own_hi,
                 Vec<double> buf, Mat<double> probs) {
  i64 n = y.size();
  i64 R = alphas.size();
  i64 K = gammas.size();
  i64 LAG = rec.n2 - 1;  // (the record's last slot: the level's learnt rows when served)
  for (i64 i = 0; i < n; ++i) {
    i8 md = mode[i];
    if (md == 3) continue;
    for (i64 r = 0; r < R; ++r) {
      if (md == 2) {
        own_lo[r] = rec(i, r, 0);
        own_hi[r] = rec(i, r, 1);
        continue;
      }
      double lo = blo(i, r);
      double hi = bhi(i, r);
      rec(i, r, 2) = lo;
      rec(i, r, 3) = hi;
      rec(i, r, LAG) = st(r, STEPS);
      double h = 0.5 * (hi - lo);
      if (!(std::isfinite(lo) && std::isfinite(hi)) || (scaled && !(h > 0.0))) {
        own_lo[r] = lo;
        own_hi[r] = hi;
        rec(i, r, 0) = lo;
        rec(i, r, 1) = hi;
        continue;
      }
      double a = alphas[r];
      double b_lo = 0.0;
      double b_hi = 0.0;
      if (method == SFOGD) {
        b_hi = st(r, TH);
        b_lo = -b_hi;
      } else if (method == SAOCP) {
        b_hi = saocp_theta(ex, r, theta0) + st(r, CORR);
        b_lo = -b_hi;
      } else if (method == NEXCP) {
        b_hi = weighted_quantile(cal, st, r, rho, 1.0 - a, buf);
        b_lo = -b_hi;
      } else {
        i64 m = sorted_window(cal, st, r, buf);
        if (method == DTACI) {
          double wsum = 0.0;
          double at = 0.0;
          for (i64 k = 0; k < K; ++k) {
            double wk = std::exp(ex(r, k, 1));
            wsum += wk;
            at += wk * ex(r, k, 0);
            rec(i, r, 4 + k) = ex(r, k, 0);
          }
          at = py_div(at, wsum) + st(r, CORR);
          b_hi = dtaci_threshold(buf, m, at, clip, theta0);
          b_lo = -b_hi;
          for (i64 k = 0; k < K; ++k)  // each expert's served threshold
            rec(i, r, 4 + K + k) = dtaci_threshold(buf, m, ex(r, k, 0), clip, theta0);
        } else {  // AgACI
          for (int side = 0; side < 2; ++side) boa_probs(ex, r, K, side, probs.row(side));
          for (i64 k = 0; k < K; ++k) {
            double ak = ex(r, k, A_LEVEL);
            double qk;
            if (m == 0) {
              qk = theta0;
            } else if (ak <= 0.0) {  // an infinite bound: the window's largest score
              qk = buf[m - 1];
            } else {
              qk = quantile(buf, m, 1.0 - ak);
            }
            rec(i, r, 4 + k) = qk;
            b_lo -= probs(0, k) * qk;
            b_hi += probs(1, k) * qk;
          }
          rec(i, r, 4 + K) = st(r, CORR);  // the served-miss correction, widening
          b_lo -= st(r, CORR);
          b_hi += st(r, CORR);
        }
      }
      if (method != AGACI && method != DTACI) rec(i, r, 4) = b_hi;
      if (b_hi == -INF) {  // the empty set
        own_lo[r] = INF;
        own_hi[r] = -INF;
      } else if (scaled) {
        double mid = 0.5 * (lo + hi);
        if (b_hi == INF) {
          own_lo[r] = -INF;
          own_hi[r] = INF;
        } else {
          own_lo[r] = mid + b_lo * h;
          own_hi[r] = mid + b_hi * h;
        }
      } else {
        own_lo[r] = lo + b_lo;
        own_hi[r] = hi + b_hi;
      }
      rec(i, r, 0) = own_lo[r];
      rec(i, r, 1) = own_hi[r];
    }
    detail::nest(order, const_view(own_lo), const_view(own_hi), pred, out_lo, out_hi, i);
    if (md == 0) continue;
    double yi = y[i];
    for (i64 r = 0; r < R; ++r) {
      if (!learns[r]) continue;
      double lag = py_max(st(r, STEPS) - rec(i, r, LAG), 0.0);
      st(r, STEPS) += 1.0;  // (every learnt row: a lag counts the rows, teaching or not)
      double lo = rec(i, r, 2);
      double hi = rec(i, r, 3);
      double h = 0.5 * (hi - lo);
      if (!(std::isfinite(lo) && std::isfinite(hi)) || (scaled && !(h > 0.0))) continue;
      double a = alphas[r];
      double tau = 1.0 - a;
      double z_lo, z_hi, s;
      if (scaled) {
        z_lo = py_div(yi - 0.5 * (lo + hi), h);
        z_hi = z_lo;
        s = std::fabs(z_lo);
      } else {
        z_lo = yi - lo;
        z_hi = yi - hi;
        s = py_max(-z_lo, z_hi);
      }
      st(r, SMAX) = py_max(st(r, SMAX), std::fabs(s));
      double D = scale > 0.0 ? scale : st(r, SMAX) * SQRT3;
      if (method == SFOGD) {
        double g = pinball_grad(s, rec(i, r, 4), tau);  // (served threshold: s > it iff a miss)
        st(r, GSQ) += g * g;
        if (st(r, GSQ) != 0.0 && D > 0.0) {
          // (stale by ``lag`` rows: the delay-tolerant step of AdaGrad-style methods)
          double step = py_div(D, std::sqrt(3.0 * st(r, GSQ) * (1.0 + lag)));
          st(r, TH) = py_max(floor, st(r, TH) - step * g);
        }
      } else if (method == SAOCP) {
        // the served threshold's miss corrects it, the experts learn the scores
        bool miss = detail::missed(own_lo[r], own_hi[r], yi);
        double step = lag_step(gamma, lag, LAG_GAIN) * D / SQRT3;
        st(r, CORR) += step * ((miss ? 1.0 : 0.0) - a);
        saocp_update(ex, st, r, s, tau, a, lifetime, D, floor, theta0);
      } else if (method == DTACI) {
        // the served aggregate's miss (an empty set always misses)
        bool miss = detail::missed(own_lo[r], own_hi[r], yi);
        st(r, CORR) += lag_step(gamma, lag, LAG_GAIN) * (a - (miss ? 1.0 : 0.0));
        if (st(r, CALN) > static_cast<double>(floor_i64(py_div(1.0, a)))) {
          i64 m = to_i64(st(r, CALN));
          i64 above = 0;
          for (i64 j = 0; j < m; ++j)
            if (cal(r, j) >= s) above += 1;
          double beta = py_div(static_cast<double>(above), static_cast<double>(m));
          double top = -INF;
          Vec<double> wbar = probs.row(0);
          for (i64 k = 0; k < K; ++k) {
            double ak = rec(i, r, 4 + k);
            wbar[k] = ex(r, k, 1) - eta[r] * pinball(beta, ak, a);
            top = py_max(top, wbar[k]);
          }
          double tot = 0.0;
          for (i64 k = 0; k < K; ++k) tot += std::exp(wbar[k] - top);
          double lse = top + std::log(tot);
          double norm = 0.0;
          for (i64 k = 0; k < K; ++k) {
            double v = (1.0 - sigma) * std::exp(wbar[k] - lse) +
                       py_div(sigma, static_cast<double>(K));
            ex(r, k, 1) = std::log(v);
            norm += v;
          }
          for (i64 k = 0; k < K; ++k) {
            ex(r, k, 1) -= std::log(norm);
            // the miss of the expert's served interval (level <= 0: the whole line)
            double ak = rec(i, r, 4 + k);
            double err = ((ak > 0.0 || !clip) && s > rec(i, r, 4 + K + k)) ? 1.0 : 0.0;
            ex(r, k, 0) += lag_step(gammas[k], lag, LAG_GAIN) * (a - err);
            if (clip) ex(r, k, 0) = py_min(py_max(ex(r, k, 0), 0.0), 1.0);
          }
        }
      } else if (method == AGACI) {
        double b_lo = rec(i, r, 0);
        double b_hi = rec(i, r, 1);
        if (scaled) {
          double mid = 0.5 * (lo + hi);
          b_lo = py_div(b_lo - mid, h);
          b_hi = py_div(b_hi - mid, h);
        } else {
          b_lo -= lo;
          b_hi -= hi;
        }
        // the experts' losses at the served aggregate, without its correction
        b_lo += rec(i, r, 4 + K);
        b_hi -= rec(i, r, 4 + K);
        bool miss = detail::missed(own_lo[r], own_hi[r], yi);
        double step = lag_step(gamma, lag, LAG_GAIN) * D / SQRT3;
        st(r, CORR) += step * ((miss ? 1.0 : 0.0) - a);
        double g_lo = (z_lo < b_lo ? 1.0 : 0.0) - 0.5 * a;
        double g_hi = (z_hi < b_hi ? 1.0 : 0.0) - (1.0 - 0.5 * a);
        for (i64 k = 0; k < K; ++k) {
          double qk = rec(i, r, 4 + k);
          boa(ex, r, k, K, 0, g_lo * (-qk - b_lo));
          boa(ex, r, k, K, 1, g_hi * (qk - b_hi));
          double err = s > qk ? 1.0 : 0.0;
          ex(r, k, A_LEVEL) += lag_step(gammas[k], lag, LAG_GAIN) * (a - err);
        }
      }
      push(cal, st, r, s);
    }
  }
}

}  // namespace sf::intervals
