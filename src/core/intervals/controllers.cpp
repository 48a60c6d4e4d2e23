// ACI and conformal PID control: the passes (see controllers.hpp).
#include "intervals/controllers.hpp"

namespace sf::intervals {

namespace {

using detail::INF;

/// Range (max - min) of the first ``m`` recent scores (0 for fewer than two).
double scale(Vec<const double> win, i64 m) {
  if (m < 2) return 0.0;
  double lo = win[0];
  double hi = win[0];
  for (i64 j = 1; j < m; ++j) {
    lo = py_min(lo, win[j]);
    hi = py_max(hi, win[j]);
  }
  return hi - lo;
}

inline constexpr double PI = 3.141592653589793;

/// ``ki * scale * tan(s log(t + 1) / (csat (t + 1)))``, +-inf once the argument leaves
/// ``(-pi/2, pi/2)`` (the saturation that bounds the long-run error).
double integrator(double s, i64 t, double ki, double csat, double sc) {
  double tf = static_cast<double>(t);
  double x = py_div(s * std::log(tf + 1.0), csat * (tf + 1.0));
  if (x >= PI / 2) return INF;
  if (x <= -PI / 2) return -INF;
  return ki * sc * std::tan(x);
}

}  // namespace

void aci_pass(Mat<const double> blo, Mat<const double> bhi, Vec<const double> pred,
              Vec<const double> y, Vec<const i8> mode, Cube<double> rec, Mat<const i64> lad_idx,
              Mat<const double> lad_logit, Vec<const double> alphas, Vec<const bool> learns,
              double gamma, Vec<double> alpha_t, Vec<i64> steps, Vec<const i64> order,
              Mat<double> out_lo, Mat<double> out_hi, Vec<double> own_lo, Vec<double> own_hi) {
  i64 n = y.size();
  i64 R = alphas.size();
  i64 K = lad_idx.cols();
  i64 LAG = rec.n2 - 1;
  for (i64 i = 0; i < n; ++i) {
    i8 md = mode[i];
    if (md == 3) continue;
    for (i64 r = 0; r < R; ++r) {
      if (md == 2) {
        own_lo[r] = rec(i, r, 0);
        own_hi[r] = rec(i, r, 1);
        continue;
      }
      rec(i, r, LAG) = static_cast<double>(steps[r]);
      double a = alpha_t[r];
      if (a <= 0.0) {
        own_lo[r] = -INF;
        own_hi[r] = INF;
      } else if (a >= 1.0) {
        own_lo[r] = INF;
        own_hi[r] = -INF;
      } else {
        double z = detail::logit(a);
        i64 k = 0;
        while (k < K - 2 && lad_logit(r, k + 1) <= z) k += 1;
        double z0 = lad_logit(r, k);
        double z1 = lad_logit(r, k + 1);
        double w = py_div(z - z0, z1 - z0);
        w = py_min(py_max(w, 0.0), 1.0);
        i64 j0 = lad_idx(r, k);
        i64 j1 = lad_idx(r, k + 1);
        own_lo[r] = detail::blend(blo(i, j0), blo(i, j1), w, true);
        own_hi[r] = detail::blend(bhi(i, j0), bhi(i, j1), w, false);
      }
      rec(i, r, 0) = own_lo[r];
      rec(i, r, 1) = own_hi[r];
      // (teaches: the level's own interval, not the base's infinite one)
      bool finite = std::isfinite(own_lo[r]) && std::isfinite(own_hi[r]);
      rec(i, r, 2) = (a <= 0.0 || a >= 1.0 || finite) ? 1.0 : 0.0;
    }
    detail::nest(order, const_view(own_lo), const_view(own_hi), pred, out_lo, out_hi, i);
    if (md == 0) continue;
    for (i64 r = 0; r < R; ++r) {
      if (!learns[r]) continue;
      double lag = py_max(static_cast<double>(steps[r]) - rec(i, r, LAG), 0.0);
      steps[r] += 1;  // (every learnt row: a lag counts the rows, teaching or not)
      if (rec(i, r, 2) == 0.0) continue;
      bool miss = detail::missed(own_lo[r], own_hi[r], y[i]);
      double step = lag_step(gamma, lag, LAG_GAIN);
      alpha_t[r] += step * (alphas[r] - (miss ? 1.0 : 0.0));
    }
  }
}

void pid_pass(Mat<const double> blo, Mat<const double> bhi, Vec<const double> pred,
              Vec<const double> y, Vec<const i8> mode, Cube<double> rec,
              Vec<const double> alphas, Vec<const bool> learns, double lr, double ki, double csat,
              Vec<double> p, Vec<double> isum, Vec<i64> steps, Mat<double> win, Vec<i64> win_n,
              Vec<i64> win_pos, Vec<const i64> order, Mat<double> out_lo, Mat<double> out_hi,
              Vec<double> own_lo, Vec<double> own_hi) {
  i64 n = y.size();
  i64 R = alphas.size();
  i64 W = win.cols();
  i64 LAG = rec.n2 - 1;
  auto window = [&](i64 r) {
    return scale(const_view(win.row(r)), win_n[r]);
  };
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
      rec(i, r, LAG) = static_cast<double>(steps[r]);
      if (!(std::isfinite(lo) && std::isfinite(hi))) {
        own_lo[r] = lo;
        own_hi[r] = hi;
      } else {
        double q = p[r] + integrator(isum[r], steps[r], ki, csat, window(r));
        own_lo[r] = lo - q;
        own_hi[r] = hi + q;
      }
      rec(i, r, 0) = own_lo[r];
      rec(i, r, 1) = own_hi[r];
    }
    detail::nest(order, const_view(own_lo), const_view(own_hi), pred, out_lo, out_hi, i);
    if (md == 0) continue;
    for (i64 r = 0; r < R; ++r) {
      if (!learns[r]) continue;
      double lag = py_max(static_cast<double>(steps[r]) - rec(i, r, LAG), 0.0);
      steps[r] += 1;  // (every learnt row: a lag counts the rows, teaching or not)
      double lo = rec(i, r, 2);
      double hi = rec(i, r, 3);
      if (!(std::isfinite(lo) && std::isfinite(hi))) continue;
      double miss = !(own_lo[r] <= y[i] && y[i] <= own_hi[r]) ? 1.0 : 0.0;
      double sc = window(r);
      p[r] += lag_step(lr, lag, LAG_GAIN) * sc * (miss - alphas[r]);
      isum[r] += miss - alphas[r];
      win(r, win_pos[r]) = py_max(lo - y[i], y[i] - hi);
      win_pos[r] = pymod(win_pos[r] + 1, W);
      if (win_n[r] < W) win_n[r] += 1;
    }
  }
}

}  // namespace sf::intervals
