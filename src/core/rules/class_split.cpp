// What the classification split rules share (see class_split.hpp).
#include "rules/class_split.hpp"

#include <vector>

#include "leaves/class_leaves.hpp"

namespace sf::rules {

const double* xlx_table() {
  // float(i) * math.log2(float(i)), as Python built the table (the same C library log2)
  static const std::vector<double> table = [] {
    std::vector<double> t(static_cast<size_t>(XLX_N), 0.0);
    for (i64 i = 1; i < XLX_N; ++i) {
      double v = static_cast<double>(i);
      t[static_cast<size_t>(i)] = v * std::log2(v);
    }
    return t;
  }();
  return table.data();
}

void children_start(const tree::TreeRef& st, i64 node, i64 left, i64 right) {
  leaves::reset_class_leaf(st, left);
  leaves::reset_class_leaf(st, right);
  Mat<double> det = st.nd_detector();
  for (i64 c = 0; c < det.cols(); ++c) det(node, c) = 0.0;  // the split node's detector starts
}

}  // namespace sf::rules
