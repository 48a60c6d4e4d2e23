// Placeholders of the extremely randomised split (see extra.hpp): its owner replaces them.
#include "rules/extra.hpp"

#include <stdexcept>

namespace sf::rules {

bool cat_goes_left(double, double) { throw std::logic_error("extra: not ported yet"); }

}  // namespace sf::rules
