// A split rule: how a tree decides its tests (the C++ side of streamforest/tree_kinds/rules.py).
//
// Each rule is one unit (rules/<name>.cpp) that fills one ``SplitRule``: its code, the parts it
// does differently from a growing tree (a null part is the default of ``defaults()``), what its
// trees hold, and the components it always runs with.  The table of rules is
// tree/split_rules.cpp, one line per rule; the shared kernels call a part through
// ``st.kind.rule->part`` and never switch on the rule.
#pragma once

#include "tree/tree_ref.hpp"

namespace sf::tree {

using Row = Vec<const double>;  // one row of features (NaN: missing)

/// A tree's step on one row: its prediction made before learning, and whether its drift
/// detector signalled.
struct Step {
  double pred;
  bool drifted;
};

struct SplitRule {
  int code = -1;            // TreeParams.split_rule
  const char* name = "";   // the Python table's name
  // parts (see each default's comment in split_rules.cpp)
  void (*learn_at_leaf)(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                        i64 nfeat) = nullptr;
  void (*class_learn_at_leaf)(const TreeRef& st, ParamRef prm, i64 leaf, Row x, double y, double w,
                              i64 nfeat) = nullptr;
  i64 (*route_from)(const TreeRef& st, i64 node, Row x) = nullptr;
  i64 (*child)(const TreeRef& st, i64 node, Row x) = nullptr;
  void (*init_root)(const TreeRef& st, ParamRef prm) = nullptr;
  bool (*room)(const TreeRef& st, ParamRef prm) = nullptr;
  bool (*bin_room)(const TreeRef& st, ParamRef prm, i64 nfeat) = nullptr;
  void (*after_learning)(const TreeRef& st, Row x, i64 nfeat) = nullptr;
  // what a tree of the rule holds (the engine's allocation, the file validator)
  bool observer_bins = false;
  bool grown_before_data = false;
  bool buffers_examples = false;
  bool value_ranges = false;
  // components every tree of the rule runs with, used or not
  Components compiled_with;
};

/// The rule of code ``code`` (nullptr: none), with every null part filled by the default.
const SplitRule* split_rule(i64 code);

/// The rule named ``name`` in the table (nullptr: none).
const SplitRule* split_rule_named(const char* name);

}  // namespace sf::tree
