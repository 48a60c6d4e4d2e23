// Placeholders of the extremely randomised split (see extra.hpp): its owner replaces them.
// ``cat_goes_left`` is ported (the pre-grown trees' nominal splits route with it).
#include "rules/extra.hpp"

#include "common/numeric.hpp"
#include "common/rng.hpp"

namespace sf::rules {

bool cat_goes_left(double salt, double code) {
  u64 z = static_cast<u64>(to_i64(salt)) + (static_cast<u64>(to_i64(code)) + 1u) * rng::GOLDEN;
  return (rng::mix64(z) & 1u) == 0u;
}

}  // namespace sf::rules
