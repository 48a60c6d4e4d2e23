// The binding layer's one way to turn a numpy array argument into a core view.
//
// Every array a binding takes is declared with its item type, C order and the CPU device, so
// nanobind refuses anything else with a TypeError before the core runs (no silent copy: an
// output array must be the caller's own memory).  ``vec`` / ``mat`` / ``cube`` then check the
// number of dimensions and give the view.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <stdexcept>
#include <string>

#include "common/views.hpp"

namespace sf::bind {

namespace nb = nanobind;

template <class T>
using Array = nb::ndarray<T, nb::c_contig, nb::device::cpu>;

template <class T>
inline void need_ndim(const Array<T>& a, size_t nd, const char* name) {
  if (a.ndim() != nd)
    throw nb::value_error((std::string(name) + ": expected a " + std::to_string(nd) +
                           "-d array, got " + std::to_string(a.ndim()) + "-d")
                              .c_str());
}

template <class T>
inline Vec<T> vec(Array<T>& a, const char* name) {
  need_ndim(a, 1, name);
  return Vec<T>(a.data(), static_cast<i64>(a.shape(0)));
}

template <class T>
inline Mat<T> mat(Array<T>& a, const char* name) {
  need_ndim(a, 2, name);
  return Mat<T>(a.data(), static_cast<i64>(a.shape(0)), static_cast<i64>(a.shape(1)));
}

template <class T>
inline Cube<T> cube(Array<T>& a, const char* name) {
  need_ndim(a, 3, name);
  return Cube<T>(a.data(), static_cast<i64>(a.shape(0)), static_cast<i64>(a.shape(1)),
                 static_cast<i64>(a.shape(2)));
}

/// ``n`` items of ``v`` exist (a count argument the kernel will read that far with).
inline void need_items(i64 size, i64 n, const char* name) {
  if (n > size)
    throw nb::value_error((std::string(name) + ": " + std::to_string(n) +
                           " items asked of an array of " + std::to_string(size))
                              .c_str());
}

}  // namespace sf::bind
