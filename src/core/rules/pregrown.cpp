// Placeholders of the pre-grown trees and evidence weights (see pregrown.hpp): its owner
// replaces them.
#include "rules/pregrown.hpp"

#include <stdexcept>

namespace sf::rules {

void evidence_update(const tree::TreeRef&, tree::ParamRef, i64, double, double, double, i64) {
  throw std::logic_error("pregrown: not ported yet");
}

double weighted_mean_at(const tree::Arena&, Vec<const double>) {
  throw std::logic_error("pregrown: not ported yet");
}

}  // namespace sf::rules
