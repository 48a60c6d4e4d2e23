// Placeholders of the alternate subtrees (see alternates.hpp): its owner replaces them.
#include "tree/alternates.hpp"

#include <stdexcept>

namespace sf::tree {

bool adapt(const TreeRef&, ParamRef, Row, double, double, double) {
  throw std::logic_error("alternates: not ported yet");
}

}  // namespace sf::tree
