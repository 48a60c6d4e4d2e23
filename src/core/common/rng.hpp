// The seeded generator of the compiled loops: SplitMix64 over one uint64 of state.
//
// The state is one item of a numpy uint64 array (a tree's ``rng`` field, a forest's
// generator), so a model pickles, copies and replays bit-identically (streamforest/rng.py
// makes a state from a seed).
#pragma once

#include "views.hpp"

namespace sf::rng {

inline constexpr u64 GOLDEN = 0x9E3779B97F4A7C15ULL;
inline constexpr u64 M1 = 0xBF58476D1CE4E5B9ULL;
inline constexpr u64 M2 = 0x94D049BB133111EBULL;

/// SplitMix64 finaliser: a bijective scramble of a uint64 (also used as a hash).
inline u64 mix64(u64 z) {
  z = (z ^ (z >> 30)) * M1;
  z = (z ^ (z >> 27)) * M2;
  return z ^ (z >> 31);
}

/// Advance ``state`` and return the next 64 random bits.
inline u64 next_u64(u64& state) {
  state = state + GOLDEN;
  return mix64(state);
}

/// Uniform float in [0, 1) with 53 random bits.
inline double next_float(u64& state) {
  return static_cast<double>(next_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

/// Uniform integer in [0, n) for n >= 1.
inline i64 next_below(u64& state, i64 n) {
  return static_cast<i64>(next_float(state) * static_cast<double>(n));
}

}  // namespace sf::rng
