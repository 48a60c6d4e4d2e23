// The split rules' table (the C++ side of streamforest/tree_kinds/rules.py's ``RULES``), the
// defaults of a rule's parts, and the kind of a tree (kinds.py's ``kind_of``).
//
// One line per rule in ``table()``: a rule is its unit (rules/<name>.cpp, a function giving its
// SplitRule) and its line here.  A part a rule leaves null is the growing trees' default:
// routing by axis-aligned tests, one empty root leaf, the room checks of a tree that grows, no
// bins, nothing learnt at a leaf beyond its statistics and leaf model, nothing after learning.
#include <cstring>
#include <vector>

#include "rules/extra.hpp"
#include "rules/extra_classes.hpp"
#include "rules/gauss.hpp"
#include "rules/observers.hpp"
#include "rules/pregrown.hpp"
#include "tree/room.hpp"
#include "tree/state.hpp"
#include "tree/structure.hpp"

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

/// ``rule`` with its classification part ``part`` (a rule whose unit leaves it to the
/// classification helpers' unit, as rules/extra's to rules/extra_classes).
SplitRule with_class_part(SplitRule r, decltype(SplitRule::class_learn_at_leaf) part) {
  r.class_learn_at_leaf = part;
  return r;
}

const std::vector<SplitRule>& table() {
  static const std::vector<SplitRule> rules = [] {
    std::vector<SplitRule> out;
    out.push_back(filled(rules::observers_rule()));
    out.push_back(filled(with_class_part(rules::extra_rule(), rules::extra_class_learns)));
    out.push_back(filled(rules::pregrown_rule()));
    out.push_back(filled(rules::gauss_rule()));
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
