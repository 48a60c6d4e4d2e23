"""The arrays of a forest of Mondrian trees: made, grown, widened, trimmed and checked.

Every tree of a forest has row ``t`` of each array (the kernels' layout,
:mod:`streamforest.mondrian.layout`), ``C`` nodes of room (the same for all trees), ``P``
features and ``K`` value columns:

- ``nodes`` ``(T, C, 13 + K + 2 P)`` float64, one record per node: left and right child (-1
  for a leaf), split feature and threshold, weight of the examples seen, mixing weight (what
  routing and predicting read first), parent (-1 at the root), birth time, split time (the
  children's birth; infinite at a leaf), log aggregation weight, log subtree weight and its
  children's (copies, so that going up reads one record a node), the value (the targets' mean,
  or each class's weight), then the range box: lower and upper bound of each feature (NaN: no
  value of the feature seen at the node);
- ``meta`` ``(T, 2)`` int64: nodes in use, rows learnt;
- ``tree_rng`` ``(T, 1)`` uint64: each tree's random state.

A :class:`Trees` holds them; :func:`check` is what loading a saved forest runs before any
compiled code reads it (the kernels index without bounds checks).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import layout

VALUE = layout.VALUE
_LINKS = (layout.LEFT, layout.RIGHT, layout.FEATURE, layout.PARENT)


class Trees(NamedTuple):
    """The arrays of every tree of a forest (see the module docstring)."""

    nodes: np.ndarray
    meta: np.ndarray
    tree_rng: np.ndarray


def shape_of(trees: Trees, n_values: int) -> tuple[int, int, int]:
    """``(trees, capacity, features)`` of ``trees`` whose records hold ``n_values`` values."""
    T, C, R = trees.nodes.shape
    return T, C, (R - VALUE - n_values) // 2


def record_width(n_features: int, n_values: int) -> int:
    return VALUE + n_values + 2 * n_features


def node_bytes(n_features: int, n_values: int) -> int:
    """Bytes one node holds."""
    return 8 * record_width(n_features, n_values)


def _empty_record(n_features: int, n_values: int) -> np.ndarray:
    """The record of a node that does not exist yet (a leaf without examples)."""
    record = np.zeros(record_width(n_features, n_values))
    record[VALUE + n_values :] = np.nan
    for c in _LINKS:
        record[c] = -1.0
    record[layout.MIX] = 0.5
    record[layout.SPLIT_TIME] = np.inf
    return record


def _empty_records(T: int, capacity: int, n_features: int, n_values: int) -> np.ndarray:
    nodes = np.empty((T, capacity, record_width(n_features, n_values)))
    nodes[...] = _empty_record(n_features, n_values)
    return nodes


def allocate(seeds, capacity: int, n_features: int, n_values: int) -> Trees:
    """Empty trees (each a root without examples), one per seed."""
    T = len(seeds)
    meta = np.zeros((T, 2), np.int64)
    meta[:, layout.N_NODES] = 1
    tree_rng = np.array([int(s) % (1 << 64) for s in seeds], dtype=np.uint64).reshape(T, 1)
    return Trees(_empty_records(T, capacity, n_features, n_values), meta, tree_rng)


def resized(trees: Trees, n_values_now: int, capacity: int, n_features: int,
            n_values: int) -> Trees:  # fmt: skip
    """``trees`` (records of ``n_values_now`` values) with room for ``capacity`` nodes,
    ``n_features`` features and ``n_values`` values (each at least what it holds), contents
    kept: a new feature's box is empty, a new class has weight 0."""
    T, C, P = shape_of(trees, n_values_now)
    K = n_values_now
    capacity, n_features, n_values = max(capacity, C), max(n_features, P), max(n_values, K)
    if (capacity, n_features, n_values) == (C, P, K):
        return trees
    nodes = np.empty((T, capacity, record_width(n_features, n_values)))
    nodes[:, C:] = _empty_record(n_features, n_values)
    if (n_features, n_values) == (P, K):
        nodes[:, :C] = trees.nodes
    else:
        nodes[:, :C] = _empty_record(n_features, n_values)
        nodes[:, :C, : VALUE + K] = trees.nodes[:, :, : VALUE + K]
        b = VALUE + n_values
        nodes[:, :C, b : b + 2 * P] = trees.nodes[:, :, VALUE + K :]
    return Trees(nodes, trees.meta, trees.tree_rng)


def trimmed(trees: Trees) -> Trees:
    """``trees`` cut to the nodes in use (what a saved forest holds)."""
    used = max(1, int(trees.meta[:, layout.N_NODES].max()))
    if used == trees.nodes.shape[1]:
        return trees
    return trees._replace(nodes=np.ascontiguousarray(trees.nodes[:, :used]))


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
    for name, dtype, ndim in (("nodes", np.float64, 3), ("meta", np.int64, 2),
                              ("tree_rng", np.uint64, 2)):  # fmt: skip
        a = getattr(trees, name)
        _need(
            isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim,
            f"{name} is not a {ndim}-d {np.dtype(dtype)} array",
        )
        _need(a.shape[0] == n_trees, f"{name} has not one row per tree")
    T, C, R = trees.nodes.shape
    _need(C >= 1 and R == record_width(n_features, n_values), "node records of a wrong shape")
    _need(trees.meta.shape == (T, 2) and trees.tree_rng.shape == (T, 1), "wrong per-tree shapes")
    for t in range(T):
        _check_tree(trees.nodes[t], int(trees.meta[t, layout.N_NODES]), n_features, t)


def _check_tree(records: np.ndarray, n: int, n_features: int, t: int) -> None:
    C = records.shape[0]
    _need(1 <= n <= C, f"tree {t}: {n} nodes in use for room for {C}")
    links = records[:n][:, list(_LINKS)]
    _need(
        bool(np.all(np.isfinite(links) & (links == np.round(links)) & (links >= -1))),
        f"tree {t}: a link that is not a node index",
    )
    left, right, feature, parent = (links[:, c].astype(np.int64) for c in range(4))
    count = records[:n, layout.COUNT]
    _need(bool(np.all(np.isfinite(count) & (count >= 0))), f"tree {t}: a negative node weight")
    _need(bool(np.all(parent < n)), f"tree {t}: a parent outside the nodes in use")
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


__all__ = ["Trees", "allocate", "check", "nbytes", "node_bytes", "record_width", "resized",
           "shape_of", "trimmed"]  # fmt: skip
