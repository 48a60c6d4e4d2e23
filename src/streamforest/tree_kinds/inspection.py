"""Read-only inspection of one tree of an engine: size, splits, leaf statistics.

:class:`TreeInspection` serves both :class:`~streamforest.HoeffdingTreeRegressor` (tree 0 of its
own engine) and :class:`TreeView` (tree ``t`` of a forest, as listed by
``OnlineForestRegressor.trees_``).  A subclass provides ``_tree_engine()`` (the engine, or
``None`` before learning) and ``_tree_index``.
"""

from __future__ import annotations

import streamforest._core as _core

from . import state


class TreeInspection:
    _tree_index = 0

    def _tree_engine(self):
        e = self.__dict__.get("engine_")
        return e if e is not None and e.fitted else None

    def _int(self, i: int) -> int:
        e = self._tree_engine()
        return e.int_of(self._tree_index, i) if e is not None else 0

    @property
    def n_leaves(self) -> int:
        return self._int(state.I_NLEAVES) if self._tree_engine() is not None else 1

    @property
    def n_nodes(self) -> int:
        if self._tree_engine() is None:
            return 1
        return self._int(state.I_NNODES) - self._int(state.I_NODE_NFREE)

    @property
    def alternate_stats(self) -> dict:
        """Change adaptation at split nodes (``drift_detection``): alternate subtrees
        ``started``, ``adopted``, ``discarded`` and ``live``."""
        if self._tree_engine() is None:
            return {"started": 0, "adopted": 0, "discarded": 0, "live": 0}
        return {
            "started": self._int(state.I_ALT_STARTED),
            "adopted": self._int(state.I_ALT_SWAPPED),
            "discarded": self._int(state.I_ALT_DISCARDED),
            "live": self._int(state.I_NALTS),
        }

    @property
    def n_splits(self) -> int:
        return self._int(state.I_NSPLITS)

    @property
    def height(self) -> int:
        e = self._tree_engine()
        if e is None:
            return 0
        st = e.state(self._tree_index)
        return int(st.nd_depth[: st.ints[state.I_NNODES]].max())

    @property
    def tree_memory_bytes(self) -> int:
        """Bytes of this tree's compiled state (allocated capacity)."""
        e = self._tree_engine()
        return e.tree_bytes(self._tree_index) if e is not None else 0

    def leaf_stats(self, node: int) -> tuple[float, float, float]:
        """``(weight, mean, variance)`` of the targets that reached leaf ``node``."""
        st = self._tree_engine().state(self._tree_index)
        leaf = st.nd_leaf[node]
        w = float(st.lf_stat[leaf, state.S_W])
        mean = float(st.lf_stat[leaf, state.S_HI] + st.lf_stat[leaf, state.S_LO])
        m2 = float(st.lf_stat[leaf, state.S_M2])
        return w, mean, (m2 / w if w > 0 else 0.0)

    def splits(self) -> list[dict]:
        """The split nodes, root first: for each, its ``node`` id, ``feature`` name, ``threshold``
        (numeric: ``x <= threshold`` goes left) or ``left_categories`` / ``right_categories``
        (nominal), ``missing_left`` (where missing values and unseen categories go) and the
        ``left`` and ``right`` child ids.  A pre-grown tree's (ABORF) numeric splits compare
        min-max scaled values: a random projection has ``projection`` (``{feature: weight}``)
        instead of ``feature``, its ``threshold`` and ``centre`` are in scaled units, and an
        axis-aligned split's ``threshold`` is given in the feature's units at the current
        scaling."""
        e = self._tree_engine()
        if e is None:
            return []
        st = e.state(self._tree_index)
        out = []
        fs = e.features
        names = fs.names
        for node in range(int(st.ints[state.I_NNODES])):
            f = int(st.nd_feat[node])
            if f < 0 or st.nd_isalt[node]:  # a leaf, a free node, or inside an alternate
                continue
            if st.nd_proj.shape[1] and st.nd_cat_len[node] != state.NODE_SALT:
                out.append(self._pregrown_split(st, node, names))
                continue
            d = {
                "node": node,
                "feature": names[f],
                "missing_left": bool(st.nd_miss_left[node]),
                "left": int(st.nd_left[node]),
                "right": int(st.nd_right[node]),
            }
            if st.ft_nominal[f] and st.nd_cat_len[node] < 0:  # random sides (extra split)
                salt = float(st.nd_thr[node])
                cats = fs.categories[f].items()
                left = _core.tree.cat_goes_left
                d["left_categories"] = [v for v, c in cats if left(salt, float(c))]
                d["right_categories"] = [v for v, c in cats if not left(salt, float(c))]
            elif st.ft_nominal[f]:
                inv = {c: v for v, c in fs.categories[f].items()}
                off, nl, nr = (
                    int(st.nd_cat_off[node]),
                    int(st.nd_cat_len[node]),
                    int(st.nd_cat_right[node]),
                )
                d["left_categories"] = [inv[int(c)] for c in st.cats[off : off + nl]]
                d["right_categories"] = [inv[int(c)] for c in st.cats[off + nl : off + nl + nr]]
            else:
                d["threshold"] = float(st.nd_thr[node])
            out.append(d)
        return out

    @staticmethod
    def _pregrown_split(st, node: int, names) -> dict:
        d = {"node": node, "missing_left": True, "left": int(st.nd_left[node]),
             "right": int(st.nd_right[node])}  # fmt: skip
        p = min(len(names), st.nd_proj.shape[1])
        if st.nd_cat_len[node] == state.NODE_PROJ:
            d["projection"] = {names[j]: float(st.nd_proj[node, j]) for j in range(p)
                               if st.nd_proj[node, j] != 0.0}  # fmt: skip
            d["threshold"] = float(st.nd_thr[node])
            d["centre"] = [float(v) for v in st.nd_centre[node, :p]]
            return d
        f = int(st.nd_feat[node])
        lo, inv = st.ft_minmax[f, state.MM_MIN], st.ft_minmax[f, state.MM_INV]
        d["feature"] = names[f]
        d["threshold"] = float(lo + st.nd_thr[node] / inv) if inv > 0 else float("nan")
        return d


class TreeView(TreeInspection):
    """Tree ``t`` of a forest's engine, read-only (``OnlineForestRegressor.trees_``)."""

    def __init__(self, engine, t: int):
        self._engine_ref = engine
        self._tree_index = t

    def _tree_engine(self):
        e = self._engine_ref
        return e if e.created[self._tree_index] else None

    @property
    def n_resets(self) -> int:
        """Times this tree was replaced after a detected drift."""
        return int(self._engine_ref.n_resets[self._tree_index])

    @property
    def state_(self) -> state.TreeState | None:
        e = self._tree_engine()
        return e.state(self._tree_index) if e is not None else None

    def __repr__(self) -> str:
        return f"TreeView(tree={self._tree_index}, leaves={self.n_leaves})"


__all__ = ["TreeInspection", "TreeView"]
