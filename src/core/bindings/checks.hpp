// Checks of a binding's arguments, made before a kernel runs and before the GIL is released: a
// wrong argument from Python is a ValueError that names it, never a crash.  Every binding file
// uses these (one definition of each message's wording).
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "common/views.hpp"

namespace sf::bind {

namespace nb = nanobind;

/// Refuse the call: a ValueError with ``msg``.
[[noreturn]] inline void fail(const std::string& msg) { throw nb::value_error(msg.c_str()); }

/// Refuse the call with ``msg`` unless ``ok``.
inline void need(bool ok, const char* msg) {
  if (!ok) throw nb::value_error(msg);
}

/// ``v`` holds at least ``n`` items.
template <class T>
void need_len(Vec<T> v, i64 n, const char* name) {
  if (v.size() < n)
    fail(std::string(name) + ": " + std::to_string(v.size()) + " items, " + std::to_string(n) +
         " needed");
}

/// ``m`` has at least ``rows`` rows and ``cols`` columns.
template <class T>
void need_shape(Mat<T> m, i64 rows, i64 cols, const char* name) {
  if (m.rows() < rows || m.cols() < cols)
    fail(std::string(name) + ": shape (" + std::to_string(m.rows()) + ", " +
         std::to_string(m.cols()) + "), at least (" + std::to_string(rows) + ", " +
         std::to_string(cols) + ") needed");
}

/// ``c`` is at least ``(a, b, d)``.
template <class T>
void need_shape(Cube<T> c, i64 a, i64 b, i64 d, const char* name) {
  if (c.n0 < a || c.n1 < b || c.n2 < d)
    fail(std::string(name) + ": shape (" + std::to_string(c.n0) + ", " + std::to_string(c.n1) +
         ", " + std::to_string(c.n2) + "), at least (" + std::to_string(a) + ", " +
         std::to_string(b) + ", " + std::to_string(d) + ") needed");
}

}  // namespace sf::bind
