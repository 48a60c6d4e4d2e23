// Sorting networks of 16 and 32 values held in registers, for the level 0 of a KLLSketch:
// Batcher's odd-even merge sort, its compare-exchanges unrolled at compile time.  No branch
// depends on the values.  Not stable: ``-0.0`` and ``0.0`` may come out swapped (callers give them no
// zeros and no NaN; for such values any sort gives the same bits).
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "common/numeric.hpp"

namespace sf::sketch {

namespace detail {

struct Exchange {
  int a, b;  // after the exchange, position a holds the smaller value (a < b)
};

/// The compare-exchanges of Batcher's odd-even merge sort of ``n`` (a power of two) values
/// (``_sortnet.network``); writes them to ``out`` when given, returns their count.
constexpr int batcher(int n, Exchange* out) {
  int count = 0;
  for (int p = 1; p < n; p *= 2) {
    for (int k = p; k >= 1; k /= 2) {
      for (int j = k % p; j < n - k; j += 2 * k) {
        int lim = k < n - j - k ? k : n - j - k;
        for (int i = 0; i < lim; ++i) {
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p)) {
            if (out != nullptr) out[count] = Exchange{i + j, i + j + k};
            count += 1;
          }
        }
      }
    }
  }
  return count;
}

template <int N>
struct Network {
  static constexpr int size = batcher(N, nullptr);
  static constexpr std::array<Exchange, size> make() {
    std::array<Exchange, size> out{};
    batcher(N, out.data());
    return out;
  }
  static constexpr std::array<Exchange, size> pairs = make();
};

/// ``a, b = min(a, b), max(a, b)`` (Python's min and max).
inline void exchange(double& a, double& b) {
  double lo = py_min(a, b);
  double hi = py_max(a, b);
  a = lo;
  b = hi;
}

template <int N, std::size_t M, std::size_t... I>
inline void run_network(std::array<double, M>& x, std::index_sequence<I...>) {
  static_assert(N <= static_cast<int>(M), "network wider than its array");
  constexpr auto& net = Network<N>::pairs;
  (exchange(x[static_cast<std::size_t>(net[I].a)], x[static_cast<std::size_t>(net[I].b)]), ...);
}

}  // namespace detail

/// Sort ``x[0:16]`` in place (``_sortnet.sort16``).
template <std::size_t M>
inline void sort16(std::array<double, M>& x) {
  detail::run_network<16>(x, std::make_index_sequence<detail::Network<16>::size>{});
}

/// Sort ``x[0:32]`` in place (``_sortnet.sort32``).
template <std::size_t M>
inline void sort32(std::array<double, M>& x) {
  detail::run_network<32>(x, std::make_index_sequence<detail::Network<32>::size>{});
}

}  // namespace sf::sketch
