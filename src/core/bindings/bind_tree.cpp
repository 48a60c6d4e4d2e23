// Bindings of the trees' layout: the field and parameter tables the Python side must agree with.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings/arena.hpp"
#include "tree/tree_ref.hpp"

namespace sf::bind {

void bind_tree(nb::module_& m) {
  std::vector<std::tuple<std::string, std::string, int>> fields;
#define SF_FIELD_ROW(k, name, which, T, V, nd) fields.emplace_back(#name, #which, nd);
  SF_TREE_FIELDS(SF_FIELD_ROW)
#undef SF_FIELD_ROW
  std::vector<std::tuple<std::string, std::string>> params;
#define SF_PARAM_ROW(i, name, T) params.emplace_back(#name, #T);
  SF_TREE_PARAMS(SF_PARAM_ROW)
#undef SF_PARAM_ROW
  m.attr("FIELDS") = nb::cast(fields);
  m.attr("PARAMS") = nb::cast(params);
}

}  // namespace sf::bind
