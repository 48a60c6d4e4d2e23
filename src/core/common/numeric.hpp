// Arithmetic with the meaning the library's results were defined with (Python's, as numba
// compiled it), and without C++'s undefined behaviour.
//
// - ``py_min`` / ``py_max``: Python's ``min(a, b)`` / ``max(a, b)`` (the second argument only
//   when strictly smaller / larger, so a NaN first argument is kept, a NaN second one dropped).
// - ``floordiv`` / ``pymod``: Python's ``//`` and ``%`` on integers (rounding towards minus
//   infinity; the remainder has the divisor's sign); ``fmod_py`` the same for floats.
// - ``int_power``: ``x ** n`` for an integer ``n`` by repeated squaring, the exact order of
//   multiplications numba uses (``x ** 3`` is ``x * (x * x)``).
// - ``to_i64``: ``int(x)`` of a float (truncation); NaN and values outside int64 give
//   INT64_MIN, what the x86 conversion gives, instead of undefined behaviour.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace sf {

template <class A, class B>
inline auto py_max(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  return static_cast<R>(b) > static_cast<R>(a) ? static_cast<R>(b) : static_cast<R>(a);
}

template <class A, class B>
inline auto py_min(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  return static_cast<R>(b) < static_cast<R>(a) ? static_cast<R>(b) : static_cast<R>(a);
}

inline std::int64_t floordiv(std::int64_t a, std::int64_t b) {
  if (b == 0) throw std::domain_error("integer division by zero");
  if (b == -1) return a == std::numeric_limits<std::int64_t>::min() ? a : -a;
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline std::int64_t pymod(std::int64_t a, std::int64_t b) {
  if (b == 0) throw std::domain_error("integer modulo by zero");
  if (b == -1) return 0;
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

inline double fmod_py(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0.0) {
    if ((b < 0.0) != (r < 0.0)) r += b;
  } else {
    r = std::copysign(0.0, b);
  }
  return r;
}

inline double int_power(double x, std::int64_t n) {
  bool invert = n < 0;
  std::uint64_t e = invert ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  double r = 1.0;
  double a = x;
  while (e != 0) {
    if (e & 1u) r *= a;
    e >>= 1;
    a *= a;
  }
  return invert ? 1.0 / r : r;
}

inline std::int64_t to_i64(double x) {
  // 2**63 is exactly representable; any double below it and >= -2**63 converts defined
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(x);
}

inline bool is_nan(double x) { return x != x; }

}  // namespace sf
