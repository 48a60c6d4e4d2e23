// The split rules' table (the C++ side of streamforest/tree_kinds/rules.py's ``RULES``), the
// defaults of a rule's parts, and the kind of a tree (kinds.py's ``kind_of``).
//
// A split rule is its unit (src/core/rules/<name>.{hpp,cpp}: a function ``<name>_rule()``
// giving its SplitRule) and one line of SF_SPLIT_RULES below; the build compiles every unit of
// src/core, the Python side reads the table (``_core.tree.rules()``), so nothing else names a
// rule.  A part a rule leaves null is the growing trees' default: routing by axis-aligned
// tests, one empty root leaf, the room checks of a tree that grows, no bins, nothing learnt at
// a leaf beyond its statistics and leaf model, nothing after learning.
#include <cstring>
#include <vector>

#include "tree/room.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

// The rules' table: one line per rule (its unit's function), above the closing comment
#define SF_SPLIT_RULES(X) \
  X(observers_rule)       \
  X(extra_rule)           \
  X(pregrown_rule)        \
  X(gauss_rule)           \
  /* (the table ends) */

namespace sf::rules {
#define SF_DECLARE_RULE(make) const tree::SplitRule& make();
SF_SPLIT_RULES(SF_DECLARE_RULE)
#undef SF_DECLARE_RULE
}  // namespace sf::rules

namespace sf::tree {

namespace {

void nothing_to_learn(const TreeRef&, ParamRef, i64, Row, double, double, i64) {}
void nothing_after_learning(const TreeRef&, Row, i64) {}

/// ``rule`` with every null part filled by the default.
SplitRule filled(SplitRule r) {
  if (r.learn_at_leaf == nullptr) r.learn_at_leaf = nothing_to_learn;
  if (r.route_from == nullptr) r.route_from = route_axis;
  if (r.child == nullptr) r.child = child_axis;
  if (r.init_root == nullptr) r.init_root = init_root_leaf;
  if (r.room == nullptr) r.room = room_growing;
  if (r.bin_room == nullptr) r.bin_room = no_bins_needed;
  if (r.after_learning == nullptr) r.after_learning = nothing_after_learning;
  // (class_learn_at_leaf: no default, as in Python: a classification kind's rule names it)
  return r;
}

const std::vector<SplitRule>& table() {
  static const std::vector<SplitRule> rules = [] {
    std::vector<SplitRule> out;
#define SF_TABLE_LINE(make) out.push_back(filled(rules::make()));
    SF_SPLIT_RULES(SF_TABLE_LINE)
#undef SF_TABLE_LINE
    return out;
  }();
  return rules;
}

}  // namespace

const SplitRule* split_rule(i64 code) {
  for (const SplitRule& r : table())
    if (r.code == code) return &r;
  return nullptr;
}

const SplitRule* split_rule_named(const char* name) {
  for (const SplitRule& r : table())
    if (std::strcmp(r.name, name) == 0) return &r;
  return nullptr;
}

Kind kind_of(const double* pa) {
  ParamRef prm{pa};
  Kind k;
  k.rule = split_rule(prm.split_rule());
  k.classification = prm.task() == TASK_CLASSIFICATION;
  k.has.sketch = prm.sketch_k() > 0;
  k.has.alternates = prm.alt_lambda() > 0.0;
  k.has.evidence = prm.ev_fade() > 0.0;
  k.has.bayes = prm.leaf_model() == LEAF_BAYES;
  if (k.rule != nullptr) {
    const Components& w = k.rule->compiled_with;
    k.has.sketch = k.has.sketch || w.sketch;
    k.has.alternates = k.has.alternates || w.alternates;
    k.has.evidence = k.has.evidence || w.evidence;
    k.has.bayes = k.has.bayes || w.bayes;
  }
  return k;
}

bool runs(const Kind& k) {
  if (k.rule == nullptr) return false;
  if (k.classification)  // a rule that names its classification part (alternates included)
    return k.rule->class_learn_at_leaf != nullptr && !k.has.sketch && !k.has.evidence &&
           !k.has.bayes;
  // evidence weights and Bayesian leaves: the pre-grown trees' (their fields are allocated
  // for those trees only); alternate subtrees: the growing trees' (a pre-grown tree never
  // splits); sketches: every rule
  if (k.rule->code == SPLIT_PREGROWN) return !k.has.alternates;
  if (k.rule->code == SPLIT_GAUSS) return false;  // a classification rule only
  return !k.has.evidence && !k.has.bayes;
}

}  // namespace sf::tree
