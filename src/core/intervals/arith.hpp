// Arithmetic of the numba kernels that common/numeric.hpp does not spell (yet): numba's error
// model and its integer powers, as the interval, prediction-set and metric kernels use them.
//
// - ``py_div``: ``a / b`` on floats under numba's (Python's) error model: a zero divisor (either
//   sign) raises ZeroDivisionError instead of giving an infinity or NaN.  The exception is
//   ``ZeroDivision`` (a ``std::domain_error``: a ValueError where no translator is registered;
//   the bindings of this unit register one that raises Python's ZeroDivisionError).
// - ``numba_ipow``: ``x ** n`` for an int64 ``n`` as numba computes it: repeated squaring
//   (``int_power``) while ``|n| <= 0x10000``, ``pow(x, float(n))`` beyond (numba's cutoff).
// - ``ceil_i64`` / ``floor_i64``: ``math.ceil`` / ``math.floor`` of a float, which numba types
//   as int64 (NaN and out-of-range values give INT64_MIN, see ``to_i64``).
#pragma once

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/numeric.hpp"
#include "common/views.hpp"

namespace sf {

/// A division (or modulo) by zero in a kernel: Python's ZeroDivisionError.
struct ZeroDivision : std::domain_error {
  ZeroDivision() : std::domain_error("division by zero") {}
};

/// ``a / b`` as numba divides floats: a zero ``b`` raises.
inline double py_div(double a, double b) {
  if (b == 0.0) throw ZeroDivision();
  return a / b;
}

/// ``x ** n`` for an integer ``n``, numba's way (repeated squaring up to ``|n| = 0x10000``):
/// ``int_power``'s products, each bit's factor (``a`` or 1.0) selected by a mask instead of
/// branched on.  A product by 1.0 is exact, so the bits are int_power's; the branch on a random
/// exponent's bits was mispredicted half the time (four times numba's cost in the drift guard's
/// weighted quantile, whose exponents are the scores' ages), and a plain ``odd ? a : 1.0`` is
/// turned back into that branch by the compiler.
inline double numba_ipow(double x, i64 n) {
  bool invert = n < 0;
  u64 e = invert ? 0 - static_cast<u64>(n) : static_cast<u64>(n);
  if (e > 0x10000u) return std::pow(x, static_cast<double>(n));
  const u64 one = 0x3FF0000000000000ULL;  // the bits of 1.0
  double r = 1.0;
  double a = x;
  while (e != 0) {
    u64 mask = 0 - (e & 1u);
    u64 abits;
    std::memcpy(&abits, &a, sizeof abits);
    u64 fbits = (abits & mask) | (one & ~mask);
    double f;
    std::memcpy(&f, &fbits, sizeof f);
    r *= f;
    e >>= 1;
    a *= a;
  }
  return invert ? py_div(1.0, r) : r;
}

/// A read-only view of the same items.
template <class T>
inline Vec<const T> const_view(Vec<T> v) {
  return Vec<const T>(v.data, v.n);
}

/// ``math.ceil(x)`` in numba: an int64.
inline i64 ceil_i64(double x) { return to_i64(std::ceil(x)); }

/// ``math.floor(x)`` in numba: an int64.
inline i64 floor_i64(double x) { return to_i64(std::floor(x)); }

}  // namespace sf
