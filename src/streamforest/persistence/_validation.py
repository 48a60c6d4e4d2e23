"""``load`` as a validator: a loaded model's arrays checked before any compiled code reads them.

Compiled kernels index their arrays without bounds checks, so a model file whose arrays hold an
index outside what they index (damaged, or edited with valid checksums) could make the first
prediction read or write outside an array.  :func:`validate` walks the loaded object graph and
checks, for each object it knows, every index, count and size against the arrays they index:

- an :class:`~streamforest.engine.core.Engine` (the trees of every forest and tree model): its
  per-tree arrays one row per tree, and each tree of its arena and of its background arena
  (:mod:`._tree_validation`);
- a calibration set (the conformal methods' ``ring_``, ``size_``, ``cal_*`` arrays): the ring's
  slot and capacity, the members' sorted order (``cal_order_``) and positions (``cal_pos_``)
  inverse to each other, the per-tree columns one per tree, and CPExact's per-tree lists of
  members by leaf (``lf_aux``, ``cal_leaf_``, ``cal_next_``, ``cal_prev_``) without cycles,
  inside the set and pointing at live leaves;
- the classification prediction sets' score ring (``_ring``, ``_sorted``, ``_cal``);
- a :class:`~streamforest.sketches.KLLSketch`: its level boundaries and total weight.

Each failure is a ``ValueError`` naming the object's attribute path and what is wrong; the
caller (:func:`streamforest.load`) adds the file's name.
"""

from __future__ import annotations

import numpy as np

from ..tree_kinds import arena, state
from ._field_types import check_field_types, check_scalar_types
from ._tree_validation import _Bad, _need, check_arena, check_tree

__all__ = ["validate"]


def validate(model, where: str = "model") -> None:
    """Raise ``ValueError`` (naming ``where`` and the attribute path) unless every array of the
    objects in ``model``'s graph that compiled code indexes is consistent (module docstring)."""
    from ..engine.core import Engine
    from ..features import FeatureSpace
    from ..sketches.sketch import KLLSketch

    for path, obj in _objects(model, type(model).__name__):
        try:
            check_field_types(obj)
            check_scalar_types(obj)
            _check_ints(obj)
            if isinstance(obj, FeatureSpace):
                _check_features(obj)
            if isinstance(obj, Engine):
                _check_engine(obj)
            elif isinstance(obj, KLLSketch):
                _check_kll_sketch(obj)
            d = obj.__dict__
            if "ring_" in d and "cal_order_" in d:
                _check_calibration(obj)
            if "_ring" in d and "_cal" in d:
                _check_score_ring(obj)
            if "engine_" in d:
                _check_trees_count(obj, d["engine_"])
            if "levels_" in d and "st_" in d and hasattr(obj, "_initial_rows"):
                _check_controllers(obj)
            if "_resid_width" in d:
                _need(
                    type(d["_resid_width"]) is int and 0 <= d["_resid_width"] <= 2**31,
                    f"_resid_width = {d['_resid_width']!r}: not a feature count",
                )
            if "center_" in d:  # (NormalizedConformal's settings resolved for its base)
                _need(d["center_"] in ("boosted", "forest"), f"center_ = {d['center_']!r:.60}")
            if "batch_scores_" in d:
                _need(
                    isinstance(d["batch_scores_"], (bool, np.bool_)),
                    f"batch_scores_ = {d['batch_scores_']!r:.60}: not True or False",
                )
            for labels, index in (("classes_", "_class_index"), ("_classes", "_index")):
                if labels in d:
                    _check_classes(d, labels, index)
        except _Bad as e:
            raise ValueError(f"{where}: corrupt model file: {path}: {e}") from None
        except ValueError as e:
            raise ValueError(f"{where}: corrupt model file: {path}: {e}") from None


def _check_ints(obj) -> None:
    """Every int attribute fits the int64 the compiled code converts it to (a counter of 2**63
    loaded, then the next call raised OverflowError); a seed, the uint64 it is."""
    for k, v in obj.__dict__.items():
        lo, hi = (0, 2**64) if k == "seed" else (-(2**63), 2**63)
        if type(v) is int and not lo <= v < hi:
            raise _Bad(f"{k} = {v}: outside the integers the model counts with")


def _objects(root, name: str):
    """``(attribute path, object)`` of every streamforest object reachable from ``root``
    (through attributes, lists, tuples and dicts), each once."""
    seen: set[int] = set()
    stack = [(name, root)]
    while stack:
        path, v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (list, tuple)) and not isinstance(v, np.ndarray):
            stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v) if _container(x))
        elif isinstance(v, dict):
            stack.extend((f"{path}[{k!r}]", x) for k, x in v.items() if _container(x))
        elif type(v).__module__.startswith("streamforest") and hasattr(v, "__dict__"):
            yield path, v
            stack.extend((f"{path}.{k}", x) for k, x in v.__dict__.items() if _container(x))


def _container(v) -> bool:
    return isinstance(v, (list, tuple, dict)) or (
        type(v).__module__.startswith("streamforest") and hasattr(v, "__dict__")
    )


def _array(a, dtype, ndim: int, what: str) -> np.ndarray:
    _need(
        isinstance(a, np.ndarray) and a.dtype == dtype and a.ndim == ndim,
        f"{what} is not a {ndim}-d {np.dtype(dtype)} array",
    )
    return a


# ------------------------------------------------------------------------------------------------
def _check_engine(e) -> None:
    T = len(e.specs)
    _need(T >= 1, "an engine without trees")
    for name, dtype, shape in (
        ("created", np.int8, (T,)),
        ("bg_on", np.int8, (T,)),
        ("n_resets", np.int64, (T,)),
        ("bg_rng", np.uint64, None),
        ("drift_counts", np.int64, None),
    ):
        a = e.__dict__.get(name)
        _need(
            isinstance(a, np.ndarray)
            and a.dtype == dtype
            and a.shape[0] == T
            and (shape is None or a.shape == shape),
            f"{name} is not one row per tree",
        )
    _need(e.bg_rng.ndim == 2 and e.bg_rng.shape[1] >= 1, "bg_rng is not (trees, state)")
    for name, A, live in (("trees", e.arena, e.created), ("background trees", e.bg, e.bg_on)):
        _need(isinstance(A, arena.Arena) and A.lay.shape[0] == T, f"{name}: not one row per tree")
        _need(np.isin(live, (0, 1)).all(), f"{name}: flags not 0 or 1")
        check_arena(A, live, name)
    fitted = e.__dict__.get("fitted")
    _need(fitted is None or fitted == bool(e.created.all()), "fitted, but a tree does not exist")
    _need(
        not (e.bg_on.astype(bool) & ~e.created.astype(bool)).any(),
        "a background tree without its tree",
    )
    n_features = _check_features(e.features)
    n_cats = e.features.max_categories
    for A, live in ((e.arena, e.created), (e.bg, e.bg_on)):
        for t in np.flatnonzero(live).tolist():
            ints = arena.load(A, t).ints
            known = int(ints[state.I_NFEAT])
            _need(
                known <= n_features,
                f"tree {t} knows more features than the model ({known} > {n_features})",
            )
            # the room a tree keeps for a nominal split's categories (a count of 10**12 passed
            # the tree's own check, then learning asked for 14.6 TiB)
            _need(
                int(ints[state.I_MAXCAT]) <= n_cats,
                f"tree {t} counts more categories than the model knows "
                f"({int(ints[state.I_MAXCAT])} > {n_cats})",
            )
    # the trees' specifications, which make a new or reset tree (a sketch accuracy of 10**12
    # loaded, then the first tree reset raised in learning)
    for t, spec in enumerate(e.specs):
        try:
            spec._check_params()
        except (TypeError, ValueError) as err:
            raise _Bad(f"tree {t}'s specification: {err}") from None


def _check_features(fs) -> int:
    """A feature space's names, kinds and category codes agree; returns the feature count."""
    n = len(fs.names)
    _need(
        len(fs.nominal) == n and len(fs.categories) == n and len(fs.index) == n,
        "feature names, kinds and categories of different lengths",
    )
    _need(
        all(fs.index.get(name) == j for j, name in enumerate(fs.names)),
        "the feature index does not match the names",
    )
    for j, cats in enumerate(fs.categories):
        _need(
            isinstance(cats, dict) and sorted(cats.values()) == list(range(len(cats))),
            f"feature {j}'s category codes are not 0, 1, ...",
        )
    # the features of an array's columns: none yet, or distinct known features
    arr = fs.__dict__.get("array_names")
    if arr is not None:
        _need(isinstance(arr, list), "array_names is not a list")
        try:
            distinct = len(set(arr)) == len(arr)
        except TypeError:
            distinct = False
        _need(distinct and all(name in fs.index for name in arr),
              "array_names: a feature twice, or one the model does not know")  # fmt: skip
    # the feature cap: the features known at least, no more than any budget's room (the engine
    # works it out again as the trees change)
    from ..engine.budget import MAX_FEATURES

    most = fs.__dict__.get("max_features")
    _need(most is None or (type(most) is int and n <= most <= max(n, MAX_FEATURES)),
          f"feature cap {most!r} for {n} features")  # fmt: skip
    # the category cap and the buckets of the features past it (a bucket is a code: below the
    # codes the feature has)
    cap = fs.max_codes
    _need(cap is None or (type(cap) is int and cap >= 1), f"category cap {cap!r}")
    limits = fs.code_limits
    _need(isinstance(limits, list) and len(limits) == n, "category limits not one per feature")
    for j, lim in enumerate(limits):
        _need(
            lim is None
            or (type(lim) is int and fs.nominal[j] and 1 <= lim <= len(fs.categories[j])),
            f"feature {j}'s category buckets {lim!r} for {len(fs.categories[j])} codes",
        )
    return n


def _check_trees_count(model, engine) -> None:
    """A forest's tree count (a parameter that code sizes arrays with) is its engine's."""
    for name in ("n_trees", "n_members"):
        n = model.__dict__.get(name)
        if n is not None and hasattr(engine, "specs"):
            _need(
                isinstance(n, (int, np.integer)) and int(n) == engine.forest_trees,
                f"{name} = {n!r} for an engine of {engine.forest_trees} trees",
            )


def _check_classes(d: dict, labels_name: str, index_name: str) -> None:
    """A classifier's labels (``classes_``: distinct, none None or NaN) and, where it keeps one,
    its map from label to class index (``_class_index``: each label to its own position, and
    nothing else), and its engine's class count and trees' class columns: a class index
    outside the table made a classifier segfault at its next ``learn_one``; a dropped or
    repeated label gave other labels silently."""
    labels = d[labels_name]
    _need(isinstance(labels, list), f"{labels_name} is not a list")
    n = len(labels)
    for i, label in enumerate(labels):
        _need(
            label is not None and label == label,  # (NaN != NaN)
            f"{labels_name}[{i}] is {label!r}: not a label",
        )
    try:
        distinct = len({label: i for i, label in enumerate(labels)})
    except TypeError:
        raise _Bad(f"{labels_name} holds an unhashable label") from None
    _need(distinct == n, f"{labels_name} holds a label twice ({n} entries, {distinct} labels)")
    index = d.get(index_name)
    if index is not None or index_name in d:
        _need(isinstance(index, dict), f"{index_name} is not a dict")
        _need(len(index) == n, f"{index_name} maps {len(index)} labels for {n} in {labels_name}")
        for label, i in index.items():
            _need(
                type(i) is int and 0 <= i < n,
                f"{index_name} maps {label!r:.40} to {i!r:.40}, outside [0, {n})",
            )
            _need(
                labels[i] == label,
                f"{index_name} maps {label!r:.40} to {i}, where {labels_name} has "
                f"{labels[i]!r:.40}",
            )
    engine = d.get("engine_")
    k = getattr(engine, "__dict__", {}).get("n_classes")
    if k is None:
        return
    _need(type(k) is int and k == n, f"engine_.n_classes = {k!r} for {n} labels in {labels_name}")
    from ..engine.core import Engine

    if isinstance(engine, Engine):
        for A, live in ((engine.arena, engine.created), (engine.bg, engine.bg_on)):
            for t in np.flatnonzero(live).tolist():
                width = arena.load(A, t).lf_class_weights.shape[1]
                _need(width <= n, f"tree {t} holds {width} classes for {n} labels")


def _check_controllers(m) -> None:
    """The adaptive conformal wrappers' controllers (AdaptiveConformal and its classifier
    form): one row per tracked level of each controller array, shaped as the wrapper's own
    initial rows for those levels (its parameters are checked before), the window positions and
    counts inside the window, the counters whole numbers."""
    d = m.__dict__
    levels = _array(d["levels_"], np.float64, 1, "levels_")
    _need(bool(np.all((levels > 0) & (levels < 1))), "levels_: a level outside (0, 1)")
    k = levels.shape[0]
    for name, v in m._initial_rows(k, levels).items():
        got = d.get(name)
        _need(
            isinstance(got, np.ndarray) and got.dtype == v.dtype and got.shape == v.shape,
            f"{name} has shape {getattr(got, 'shape', None)}, not {v.shape} for {k} levels",
        )
    window = d["win_"].shape[1]
    _need(bool(np.all((d["win_n_"] >= 0) & (d["win_n_"] <= window))), "win_n_ outside the window")
    _need(bool(np.all((d["win_pos_"] >= 0) & (d["win_pos_"] < max(window, 1)))),
          "win_pos_ outside the window")  # fmt: skip
    _need(bool(np.all(d["steps_"] >= 0)), "steps_: a negative count")
    for name in ("_n_seen", "_version"):
        v = d.get(name)
        _need(type(v) is int and v >= 0, f"{name} = {v!r}: not a count")


def _check_sorted_set(order, pos, size: int, c: int, what: str) -> None:
    """``order[:size]``: distinct slots in ``[0, c)``; ``pos`` their positions, -1 elsewhere."""
    members = order[:size]
    _need(
        members.size == 0 or (members.min() >= 0 and members.max() < c),
        f"{what}: a member slot outside [0, {c})",
    )
    expect = np.full(c, -1, np.int64)
    expect[members] = np.arange(size)
    _need(np.array_equal(pos, expect), f"{what}: positions do not invert the sorted order")


def _check_calibration(m) -> None:
    ring = _array(m.ring_, np.int64, 1, "ring_")
    order, pos = m.cal_order_, m.cal_pos_
    two_d = isinstance(order, np.ndarray) and order.ndim == 2  # ConformalQRF: one set a level
    order = _array(order, np.int64, 2 if two_d else 1, "cal_order_")
    pos = _array(pos, np.int64, order.ndim, "cal_pos_")
    c = order.shape[-1]
    _need(
        ring.shape == (2,) and int(ring[1]) == c and c >= 1,
        f"ring_ {ring.tolist()} for a calibration set of {c}",
    )
    _need(0 <= ring[0] < c, f"ring slot {int(ring[0])} outside [0, {c})")
    size_param = m.__dict__.get("calibration_size")
    _need(
        size_param is None or (isinstance(size_param, (int, np.integer)) and size_param == c),
        f"calibration_size {size_param!r} for a calibration set of {c}",
    )
    if two_d and hasattr(m, "_levels"):
        levels = m._levels().shape[0]
        _need(order.shape[0] == levels, f"{order.shape[0]} calibration sets for {levels} levels")
    size = m.size_
    _need(
        isinstance(size, (int, np.integer)) and 0 <= size <= c, f"size_ {size!r} outside [0, {c}]"
    )
    size = int(size)
    _need(pos.shape == order.shape, "cal_pos_ is not the shape of cal_order_")
    for k, v in m.__dict__.items():
        if (
            k.startswith("cal_")
            and isinstance(v, np.ndarray)
            and k not in ("cal_leaf_", "cal_next_", "cal_prev_", "cal_birth_", "cal_cur_")
        ):
            _need(
                v.ndim >= 1 and v.shape[order.ndim - 1] == c if two_d else v.shape[0] == c,
                f"{k} has shape {v.shape} for a calibration set of {c}",
            )
    for a in range(order.shape[0]) if two_d else (None,):
        o, p = (order[a], pos[a]) if two_d else (order, pos)
        _check_sorted_set(o, p, size, c, "calibration set" if a is None else f"level {a}")
    forest = m.__dict__.get("_forest")
    engine = getattr(forest, "__dict__", {}).get("engine_") if forest is not None else None
    T = len(engine.specs) if engine is not None and hasattr(engine, "specs") else None
    # a shard of a forest (distributed.ShardedForest) keeps the whole forest's columns
    whole = int(getattr(engine, "forest_trees", T)) if T is not None else None
    for k in ("cal_oob_", "cal_pred_"):
        v = m.__dict__.get(k)
        if v is not None and T is not None:
            _need(v.ndim == 2 and v.shape[1] in (T, whole), f"{k} has {v.shape} for {T} trees")
    cnt = m.__dict__.get("cal_cnt_")
    if cnt is not None and T is not None:
        _need(cnt.min(initial=0) >= 0 and cnt.max(initial=0) <= whole,
              "cal_cnt_ outside [0, trees]")  # fmt: skip
    if "cal_leaf_" in m.__dict__:
        _check_exact_lists(m, engine, c, T)


def _check_exact_lists(m, engine, c: int, T) -> None:
    """CPExact: per tree, the members by leaf, a doubly linked list per leaf from ``lf_aux``."""
    leaf = _array(m.cal_leaf_, np.int64, 2, "cal_leaf_")
    nxt = _array(m.cal_next_, np.int64, 2, "cal_next_")
    prv = _array(m.cal_prev_, np.int64, 2, "cal_prev_")
    _need(T is not None, "CPExact lists without a forest")
    for k in ("cal_leaf_", "cal_next_", "cal_prev_", "cal_birth_", "cal_cur_"):
        _need(m.__dict__[k].shape == (T, c), f"{k} has shape {m.__dict__[k].shape}, not {(T, c)}")
    for t in range(T):
        if not engine.created[t]:
            _need((leaf[t] == -1).all(), f"tree {t} does not exist but has members")
            continue
        st = arena.load(engine.arena, t)
        hw = int(st.ints[state.I_LEAF_HW])
        lt, nt, pt = leaf[t], nxt[t], prv[t]
        _need(lt.min() >= -1 and lt.max() < hw, f"tree {t}: a member's leaf slot out of range")
        _need(
            nt.min() >= -1 and nt.max() < c and pt.min() >= -1 and pt.max() < c,
            f"tree {t}: a member link outside the calibration set",
        )
        heads = st.lf_aux[:hw]
        _need(
            heads.min(initial=-1) >= -1 and heads.max(initial=-1) < c,
            f"tree {t}: a leaf's first member outside the calibration set",
        )
        listed = np.zeros(c, bool)
        for s in np.flatnonzero(heads != -1).tolist():
            _need(st.lf_node[s] != -1, f"tree {t}: members listed at a free leaf slot {s}")
            j, prev = int(heads[s]), -1
            while j != -1:
                _need(not listed[j], f"tree {t}: member {j} listed twice (or a cycle)")
                _need(lt[j] == s and pt[j] == prev, f"tree {t}: member {j}'s links")
                listed[j] = True
                prev, j = j, int(nt[j])
        _need(np.array_equal(listed, lt != -1), f"tree {t}: a member with a leaf is not listed")


def _check_score_ring(m) -> None:
    ring = _array(m._ring, np.float64, 1, "_ring")
    srt = _array(m._sorted, np.float64, 1, "_sorted")
    cal = _array(m._cal, np.int64, 1, "_cal")
    C = ring.shape[0]
    _need(C >= 1 and srt.shape == (C,) and cal.shape == (2,), "score ring shapes")
    _need(0 <= cal[0] <= C and 0 <= cal[1] < C, f"score ring counts {cal.tolist()} for {C}")


def _check_kll_sketch(sk) -> None:
    from ..sketches import kll
    from ..sketches.sketch import capacity_tables

    items = _array(sk._items, np.float64, 2, "_items")
    lv = _array(sk._lv, np.int64, 2, "_lv")
    _need(items.shape[0] == lv.shape[0] == 1 and lv.shape[1] == kll.LV_WIDTH, "sketch shapes")
    k = sk.k
    _need(isinstance(k, (int, np.integer)) and kll.MIN_WIDTH <= k <= 65535, f"k {k!r}")
    table, cap = capacity_tables(int(k))
    _need(items.shape[1] == cap, "sketch row is not its k's")
    # the checks of a tree's leaf sketches, on a one-leaf tree of this row
    from ..rng import new_state

    st = state.allocate(1, new_state(0), leaves=1, nodes=1, bins=1, cats=1)
    st = st._replace(lf_sketch=items, lf_sketch_levels=lv, sketch_capacity=table)
    st.ints[state.I_NNODES] = st.ints[state.I_LEAF_HW] = 1
    st.nd_leaf[0], st.lf_node[0] = 0, 0
    prm = state.TreeParams(*[0] * 17)._replace(sketch_k=int(k), leaf_model=state.LEAF_MEAN)
    check_tree(st, prm)
