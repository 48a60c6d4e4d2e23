"""The arrays of a forest of Mondrian trees: made, grown, widened, trimmed and checked.

Every tree of a forest has row ``t`` of each array (the kernels' layout,
:mod:`streamforest.mondrian._kernels`), ``C`` nodes of room (the same for all trees), ``P``
features and ``K`` value columns:

- ``links`` ``(T, C, 4)`` int64: parent (-1 at the root), left and right child (-1 for a
  leaf), split feature;
- ``nodes`` ``(T, C, 5 + K)`` float64: threshold, birth time, weight of the examples seen, log
  aggregation weight, log subtree weight, then the value (the targets' mean, or each class's
  weight);
- ``box`` ``(T, C, P, 2)`` float64: each node's range box, lower and upper bound per feature
  (NaN: no value of the feature seen at the node);
- ``meta`` ``(T, 2)`` int64: nodes in use, rows learnt;
- ``tree_rng`` ``(T, 1)`` uint64: each tree's random state.

A :class:`Trees` holds them; :func:`check` is what loading a saved forest runs before any
compiled code reads it (the kernels index without bounds checks).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _kernels as mondrian_kernels

LINK_COLUMNS = mondrian_kernels.N_LINKS
VALUE = mondrian_kernels.VALUE
_FIELDS = ("links", "nodes", "box", "meta", "tree_rng")


class Trees(NamedTuple):
    """The arrays of every tree of a forest (see the module docstring)."""

    links: np.ndarray
    nodes: np.ndarray
    box: np.ndarray
    meta: np.ndarray
    tree_rng: np.ndarray


def node_bytes(n_features: int, n_values: int) -> int:
    """Bytes one node holds (links, floats, box)."""
    return 8 * (LINK_COLUMNS + VALUE + n_values + 2 * n_features)


def allocate(seeds, capacity: int, n_features: int, n_values: int) -> Trees:
    """Empty trees (each a root without examples), one per seed."""
    T = len(seeds)
    links = np.full((T, capacity, LINK_COLUMNS), -1, np.int64)
    nodes = np.zeros((T, capacity, VALUE + n_values))
    box = np.full((T, capacity, n_features, 2), np.nan)
    meta = np.zeros((T, 2), np.int64)
    meta[:, mondrian_kernels.N_NODES] = 1
    tree_rng = np.array([[int(s) % (1 << 64)] for s in seeds], dtype=np.uint64).reshape(T, 1)
    return Trees(links, nodes, box, meta, tree_rng)


def resized(trees: Trees, capacity: int, n_features: int, n_values: int) -> Trees:
    """``trees`` with room for ``capacity`` nodes, ``n_features`` features and ``n_values``
    value columns (each at least what it holds), contents kept: a new feature's box is empty,
    a new class has weight 0."""
    T, C, _ = trees.links.shape
    P, K = trees.box.shape[2], trees.nodes.shape[2] - VALUE
    capacity, n_features, n_values = max(capacity, C), max(n_features, P), max(n_values, K)
    if (capacity, n_features, n_values) == (C, P, K):
        return trees
    links = np.full((T, capacity, LINK_COLUMNS), -1, np.int64)
    links[:, :C] = trees.links
    nodes = np.zeros((T, capacity, VALUE + n_values))
    nodes[:, :C, : VALUE + K] = trees.nodes
    box = np.full((T, capacity, n_features, 2), np.nan)
    box[:, :C, :P] = trees.box
    return Trees(links, nodes, box, trees.meta, trees.tree_rng)


def trimmed(trees: Trees) -> Trees:
    """``trees`` cut to the nodes in use (what a saved forest holds)."""
    used = max(1, int(trees.meta[:, mondrian_kernels.N_NODES].max()))
    if used == trees.links.shape[1]:
        return trees
    return trees._replace(
        links=np.ascontiguousarray(trees.links[:, :used]),
        nodes=np.ascontiguousarray(trees.nodes[:, :used]),
        box=np.ascontiguousarray(trees.box[:, :used]),
    )


def nbytes(trees: Trees) -> int:
    return int(sum(a.nbytes for a in trees))


def _need(ok, what: str) -> None:
    if not ok:
        raise ValueError(f"malformed Mondrian trees: {what}")


def check(trees, n_trees: int, n_features: int, n_values: int) -> None:
    """Raise ``ValueError`` unless ``trees`` is a well-formed forest of ``n_trees`` trees over
    ``n_features`` features with ``n_values`` value columns: shapes and types, node counts
    within the arrays, and in each tree every node in use reached exactly once from the root
    through consistent parent and child links, split features within the features."""
    _need(isinstance(trees, Trees), "not a Trees")
    for name, dtype, ndim in (("links", np.int64, 3), ("nodes", np.float64, 3),
                              ("box", np.float64, 4), ("meta", np.int64, 2),
                              ("tree_rng", np.uint64, 2)):  # fmt: skip
        a = getattr(trees, name)
        _need(
            isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim,
            f"{name} is not a {ndim}-d {np.dtype(dtype)} array",
        )
        _need(a.shape[0] == n_trees, f"{name} has not one row per tree")
    T, C, L = trees.links.shape
    _need(L == LINK_COLUMNS and C >= 1, "links have a wrong shape")
    _need(trees.nodes.shape == (T, C, VALUE + n_values), "nodes have a wrong shape")
    _need(trees.box.shape == (T, C, n_features, 2), "boxes have a wrong shape")
    _need(trees.meta.shape == (T, 2) and trees.tree_rng.shape == (T, 1), "wrong per-tree shapes")
    for t in range(T):
        _check_tree(trees.links[t], int(trees.meta[t, mondrian_kernels.N_NODES]), n_features, t)


def _check_tree(links: np.ndarray, n: int, n_features: int, t: int) -> None:
    C = links.shape[0]
    _need(1 <= n <= C, f"tree {t}: {n} nodes in use for room for {C}")
    parent, left, right, feature = (links[:n, c] for c in range(LINK_COLUMNS))
    _need(parent[0] == -1, f"tree {t}: the root has a parent")
    split = left >= 0
    _need(np.array_equal(split, right >= 0), f"tree {t}: a node with one child")
    _need(
        bool(np.all((left[split] < n) & (right[split] < n) & (left[split] > 0)
                    & (right[split] > 0))),
        f"tree {t}: a child outside the nodes in use",
    )  # fmt: skip
    _need(
        bool(np.all((feature[split] >= 0) & (feature[split] < n_features))),
        f"tree {t}: a split on a feature the model does not know",
    )
    # every node in use reached once from the root, level by level
    seen = np.zeros(n, bool)
    seen[0] = True
    level = np.zeros(1, np.int64)
    reached = 1
    while level.shape[0]:
        inner = level[split[level]]
        below = np.concatenate([left[inner], right[inner]])
        _need(not seen[below].any(), f"tree {t}: a node reached twice (a cycle)")
        _need(np.unique(below).shape[0] == below.shape[0], f"tree {t}: a node reached twice")
        _need(
            bool(np.all(parent[below] == np.concatenate([inner, inner]))),
            f"tree {t}: a child whose parent link is not its parent",
        )
        seen[below] = True
        reached += below.shape[0]
        level = below
    _need(reached == n, f"tree {t}: {n - reached} nodes in use not in the tree")


__all__ = ["Trees", "allocate", "check", "nbytes", "node_bytes", "resized", "trimmed"]
