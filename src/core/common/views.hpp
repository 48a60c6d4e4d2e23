// Array views: the core's only way to reach the memory of a numpy array.
//
// A view is a pointer and a shape (C order, no strides of its own); it owns nothing and is
// valid while the array it was made from is (the Python caller keeps that alive for the call).
// Views are cheap values: kernels pass them by value.
//
// Invariant: every index a kernel uses is inside the view's shape.  The arena's layout and the
// file validator guarantee it for the trees' fields; the bindings check the shapes of every
// array they are given.  Builds with STREAMFOREST_CHECKED (the sanitizer build, see
// docs/development.md) check each access and abort with the index and the bound, so that a
// broken invariant is a loud failure of the tests, never a silent read of other memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace sf {

using i64 = std::int64_t;
using u64 = std::uint64_t;
using i8 = std::int8_t;

[[noreturn]] inline void index_failure(const char* what, i64 index, i64 bound) {
  std::fprintf(stderr, "streamforest core: %s index %lld outside [0, %lld)\n", what,
               static_cast<long long>(index), static_cast<long long>(bound));
  std::abort();
}

#if defined(STREAMFOREST_CHECKED)
#define SF_INDEX(what, i, n)                                      \
  do {                                                            \
    if ((i) < 0 || (i) >= (n)) ::sf::index_failure(what, i, n);   \
  } while (0)
#else
#define SF_INDEX(what, i, n) \
  do {                       \
  } while (0)
#endif

/// A 1-d view: ``v[i]`` for ``0 <= i < size()``.
template <class T>
struct Vec {
  T* data = nullptr;
  i64 n = 0;

  Vec() = default;
  Vec(T* p, i64 size) : data(p), n(size) {}
  T& operator[](i64 i) const {
    SF_INDEX("1-d", i, n);
    return data[i];
  }
  i64 size() const { return n; }
};

/// A 2-d view in C order: ``m(i, j)``; ``m.row(i)`` is row ``i`` as a :class:`Vec`.
template <class T>
struct Mat {
  T* data = nullptr;
  i64 n0 = 0, n1 = 0;

  Mat() = default;
  Mat(T* p, i64 rows, i64 cols) : data(p), n0(rows), n1(cols) {}
  T& operator()(i64 i, i64 j) const {
    SF_INDEX("2-d row", i, n0);
    SF_INDEX("2-d column", j, n1);
    return data[i * n1 + j];
  }
  Vec<T> row(i64 i) const {
    SF_INDEX("2-d row", i, n0);
    return Vec<T>(data + i * n1, n1);
  }
  i64 rows() const { return n0; }
  i64 cols() const { return n1; }
};

/// A 3-d view in C order: ``c(i, j, k)``; ``c.mat(i)`` is ``c[i]`` as a :class:`Mat`.
template <class T>
struct Cube {
  T* data = nullptr;
  i64 n0 = 0, n1 = 0, n2 = 0;

  Cube() = default;
  Cube(T* p, i64 a, i64 b, i64 c) : data(p), n0(a), n1(b), n2(c) {}
  T& operator()(i64 i, i64 j, i64 k) const {
    SF_INDEX("3-d first", i, n0);
    SF_INDEX("3-d second", j, n1);
    SF_INDEX("3-d third", k, n2);
    return data[(i * n1 + j) * n2 + k];
  }
  Mat<T> mat(i64 i) const {
    SF_INDEX("3-d first", i, n0);
    return Mat<T>(data + i * n1 * n2, n1, n2);
  }
};

}  // namespace sf
