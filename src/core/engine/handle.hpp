// Handles: the arrays of a per-example call packed into one int64 array of addresses and
// shapes, as streamforest/engine/handle.py ``build`` packs them.  For each array in turn: its address, then its shape; the engine's
// arrays come in the order of ``PerExample._handle_of``.
//
// A handle holds no reference to its arrays: its owner keeps them alive and builds a new handle
// whenever one is replaced.  ``engine_views`` trusts the addresses; the binding checks every
// shape a pass will index with (``check_engine_views``) before it runs.
#pragma once

#include <cstdint>

#include "common/views.hpp"
#include "tree/tree_ref.hpp"

namespace sf::engine {

inline constexpr i64 H_SIZE = 32;  // entries of an engine handle
inline constexpr i64 H_ROW = 18;   // where the row's address is

template <class T>
inline T* h_ptr(Vec<const i64> H, i64 i) {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(H[i]));
}

template <class T>
inline Vec<T> h1(Vec<const i64> H, i64 i) {
  return Vec<T>(h_ptr<T>(H, i), H[i + 1]);
}

template <class T>
inline Mat<T> h2(Vec<const i64> H, i64 i) {
  return Mat<T>(h_ptr<T>(H, i), H[i + 1], H[i + 2]);
}

template <class T>
inline Cube<T> h3(Vec<const i64> H, i64 i) {
  return Cube<T>(h_ptr<T>(H, i), H[i + 1], H[i + 2], H[i + 3]);
}

/// The engine's arrays of a handle: its arena, generator, row, bagging weights, predictions,
/// drift flags, memo and empty memo.
struct EngineViews {
  tree::Arena A;
  Vec<u64> frng;
  Vec<const double> x;
  Vec<double> wt;
  Vec<double> P;
  Vec<i8> drifted;
  Mat<double> M;
  Mat<double> M0;
};

inline EngineViews engine_views(Vec<const i64> H) {
  EngineViews v;
  v.A = tree::Arena{h2<double>(H, 0), h2<i64>(H, 3), h2<i8>(H, 6), h3<i64>(H, 9),
                    h2<double>(H, 13)};
  v.frng = h1<u64>(H, 16);
  v.x = h1<const double>(H, 18);
  v.wt = h1<double>(H, 20);
  v.P = h1<double>(H, 22);
  v.drifted = h1<i8>(H, 24);
  v.M = h2<double>(H, 26);
  v.M0 = h2<double>(H, 29);
  return v;
}

}  // namespace sf::engine
