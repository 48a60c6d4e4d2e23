// What a tree is made of: its split rule, its task and the components its kernels use (the
// C++ side of streamforest/tree_kinds/kinds.py).
//
// In the numba core the kind was part of a kernel's type, so each kind compiled its own code;
// here it is a small value read from the tree's parameters when a kernel takes the tree
// (``state_at``), and a component's step is a branch on its flag.  ``kind_of`` computes exactly
// what the Python ``kind_of`` does, including the components a split rule always runs with
// (``SplitRule::compiled_with``): an ATSER tree without alternate subtrees runs the kernels of
// one with them, reading ``alt_lambda = 0`` from its parameters.
#pragma once

namespace sf::tree {

struct SplitRule;  // split_rule.hpp

/// Component flags, in the order of the Python ``TreeKind``'s fields after ``rule``.
struct Components {
  bool sketch = false;      // KLL sketches of the leaves' targets (quantile forests)
  bool alternates = false;  // alternate subtrees at split nodes (change adaptation)
  bool evidence = false;    // evidence weights of the tree and its leaves (ABORF)
  bool bayes = false;       // Bayesian linear leaves (ABORF)
};

struct Kind {
  const SplitRule* rule = nullptr;
  bool classification = false;
  Components has;
};

/// The kind of a tree with parameter row ``pa`` (split_rules.cpp, beside the rules' table).
Kind kind_of(const double* pa);

/// Whether this core runs trees of kind ``k`` (its rule, task and components are known to it): a
/// binding refuses a tree of another kind (a tampered file's parameters) before any pass.
bool runs(const Kind& k);

}  // namespace sf::tree
