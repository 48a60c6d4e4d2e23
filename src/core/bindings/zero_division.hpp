// Python's ZeroDivisionError for the core's ``ZeroDivision`` (intervals/arith.hpp: a float
// division by zero, which numba's error model raises): one translator, registered once by
// whichever binding needs it first.
#pragma once

#include <nanobind/nanobind.h>

#include "intervals/arith.hpp"

namespace sf::bind {

inline void register_zero_division() {
  static bool done = false;
  if (done) return;
  done = true;
  nanobind::register_exception_translator(
      [](const std::exception_ptr& p, void*) {
        try {
          std::rethrow_exception(p);
        } catch (const ZeroDivision& e) {
          PyErr_SetString(PyExc_ZeroDivisionError, e.what());
        }
      },
      nullptr);
}

}  // namespace sf::bind
