// Placeholders of the Bayesian leaves (see bayes.hpp): their owner replaces them.
#include "leaves/bayes.hpp"

#include <stdexcept>

namespace sf::leaves {

double bayes_predict(const tree::TreeRef&, i64, tree::Row, i64) {
  throw std::logic_error("bayes: not ported yet");
}

double bayes_fold(const tree::TreeRef&, i64, i64) {
  throw std::logic_error("bayes: not ported yet");
}

void bayes_learn(const tree::TreeRef&, tree::ParamRef, i64, tree::Row, double, double, i64) {
  throw std::logic_error("bayes: not ported yet");
}

}  // namespace sf::leaves
