// Placeholders of the classification task (see classification.hpp): its owner replaces them.
#include "tree/classification.hpp"

#include <stdexcept>

namespace sf::tree::classification {

namespace {
[[noreturn]] void missing() { throw std::logic_error("classification: not ported yet"); }
}  // namespace

bool learn_one_row(const TreeRef&, ParamRef, Row, double, double) { missing(); }

Step learn_one_row_memo(const TreeRef&, ParamRef, Row, double, double, Mat<double>, i64) {
  missing();
}

void predict_one_row_into(const TreeRef&, ParamRef, Row, Mat<double>, i64) { missing(); }

void init_task_fields(const TreeRef&) { missing(); }

}  // namespace sf::tree::classification
