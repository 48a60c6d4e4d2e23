"""The engine of the classifiers: :class:`ClassifierEngine`, whose memory budget counts a
classification tree's leaves as wide as they will be and bounds what grows with the categories
and the classes (see :mod:`.budget`)."""

from __future__ import annotations

from ..tree_kinds import arena, state
from ..tree_kinds import rules as split_rules
from . import budget
from .background_trees import DS_STARTED
from .core import Engine
from .tree_lifecycle import _CLASS_WEIGHTS, _INTS, _NOMINAL_WEIGHTS

_LEAF_NODE, _NODE_FEAT = (state.TreeState._fields.index(f) for f in ("lf_node", "nd_feat"))


def _held(st, alternates: bool) -> tuple[int, int]:
    """``(leaf slots, nodes)`` a tree holds and may still take past its caps: its arrays, or
    the slots ever used and its nodes plus the room its kernels keep free for a split of each
    live alternate (a tree past a cap that came down grows by that much)."""
    k = int(st.ints[state.I_NALTS]) + 2 if alternates else 1
    slots = max(int(st.lf_node.shape[0]), int(st.ints[state.I_LEAF_HW]) + k)
    nodes = max(int(st.nd_feat.shape[0]), int(st.ints[state.I_NNODES]) + 2 * k)
    return slots, nodes


class ClassifierEngine(Engine):
    """The engine of a classifier: an :class:`~streamforest.engine.core.Engine` whose memory
    budget counts a classification tree's leaves as wide as they will be.

    A classification leaf holds, besides its per-feature statistics, ``C x K`` category weights per
    *nominal* feature (``lf_nominal_class_weights``; ``C`` the category room, ``K`` the classes).
    The engine's default caps count that room for every feature at ``C`` = the categories known
    (:func:`~streamforest.engine.budget.unit_bytes` without ``n_nominal``), which on KDD Cup 99 (41
    features, 7 nominal, 63 categories, 20 classes) left a 25-tree ensemble 20 leaves a tree of its
    256 MiB.  Here (:meth:`_budget_caps`) a tree's leaves are counted with

    - its feature capacity (per-feature arrays are doubled when features are added, see
      ``Engine._widen``), the rows of its nominal features and the category room it will hold
      (doubled when it lacks codes, see ``Engine._widen_classes``): the widths its arrays will
      have once the engine has widened it to the features, classes and categories known;
    - the slots and nodes it keeps free past its leaf cap for its live alternate subtrees, the
      token bin pool and the category lists, at their worst case
      (:func:`~streamforest.engine.budget.classifier_caps`),

    so a tree at its cap holds at most its share.

    **Categories and classes under the budget** (``max_memory_mb`` set).  A leaf's category
    weights grow with categories times classes (50k user ids and 2 classes: 800 kB a leaf; with 500
    classes 200 MB), beyond what any leaf cap can hold, so:

    - a tree's category room grows (by doubling, as without a budget) only while the tree could
      still hold :data:`~streamforest.engine.budget.CATEGORY_LEAVES` leaves, and the leaves it
      holds already, within its share (:func:`~streamforest.engine.budget.category_room`); a
      category whose code is past a tree's room is an unseen category to that tree's naive
      Bayes (its splits still route it).  When new classes (or features) make the leaves wider,
      a tree's room is cut to what then fits (the cut codes' weights are dropped), and a tree
      whose leaves in use do not fit even without category codes is replaced by a fresh tree
      (counted in ``n_resets``);
    - the feature space codes at most as many categories per nominal feature as a fresh tree's
      room (:meth:`~streamforest.features.FeatureSpace.set_max_codes`, worked out again at each
      sync for the features and classes known): a feature that reaches it codes every later
      category as one of that many hash buckets (:func:`~streamforest.features.category_bucket`,
      the same in every process), so the categories the model keeps are bounded too;
    - a tree that grows past its share all the same (it held more leaves than a cap that came
      down allows, and takes the slots its live alternates need) has its room cut, or is
      replaced, when it grows (:meth:`make_room`);
    - a label that would make more classes than a tree of two leaves without category codes can
      hold in its share is refused (``ValueError``, nothing learnt: :meth:`check_new_classes`).

    What the process holds follows: the pages of a tree's row that hold none of its fields
    (moved or cut ones) are given back to the system, and while no pass runs trees on threads a
    lengthened arena gives each tree's old row back once copied
    (:func:`~streamforest.tree_kinds.arena.release_dead_pages`, ``arena.store``'s
    ``release_old``).  Without a budget (``max_memory_mb=None``) nothing is capped.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._code_cap_key = None
        self._widened = set()  # trees widened to new features in this sync
        self._capped = {}  # (tree, background): _shape_key when the budget capped its room
        self._cap_codes()  # before the first chunk is encoded: one nominal feature, one class

    def __getstate__(self):
        d = super().__getstate__()
        d.pop("_code_cap_key", None)  # a cache of _cap_codes (the cap itself is the features')
        d.pop("_widened", None)
        d.pop("_capped", None)
        return d

    def __setstate__(self, d):
        super().__setstate__(d)
        self._code_cap_key = None
        self._widened = set()
        self._capped = {}

    # --- the budget's caps ------------------------------------------------------------------------
    def _budget_caps(self, spec, p: int, background: bool, width: int | None = None):
        # (a classification tree's width: its feature capacity, see _class_widths)
        prm = spec._tree_params(p)
        rule = split_rules.of(prm)
        if self.max_memory_mb is None or prm.task != state.TASK_CLASSIFICATION:
            return super()._budget_caps(spec, p, background, width)
        share = self._tree_share(background)
        pc, rows, room = self._class_widths(spec, p, background)
        units = budget.unit_bytes(
            pc,
            m_min=prm.m_min if rule.buffers_examples else 0,
            alternates=prm.alt_lambda > 0,
            n_classes=max(1, self.n_classes),
            n_cats=room,
            ranges=rule.value_ranges,
            n_nominal=rows,
        )
        return budget.classifier_caps(
            share,
            units,
            prm.alt_lambda > 0,
            max_bins=int(prm.max_bins),
            n_cats=self.features.max_categories,
            cat_splits=rule.value_ranges,
        )

    def _unit_args(self, spec, prm) -> dict:
        # the feature room (TreeLifecycle.feature_room) counts a feature as a numeric one: the
        # category room (_room) keeps the nominal rows in the share
        kw = super()._unit_args(spec, prm)
        if prm.task == state.TASK_CLASSIFICATION:
            kw["n_cats"] = 0
        return kw

    def _caps_of(self, prm, units, share: float) -> tuple[int, int]:
        if prm.task != state.TASK_CLASSIFICATION:
            return super()._caps_of(prm, units, share)
        rule = split_rules.of(prm)
        return budget.classifier_caps(share, units, prm.alt_lambda > 0, max_bins=int(prm.max_bins),
                                      cat_splits=rule.value_ranges)  # fmt: skip

    def _class_widths(self, spec, p: int, background: bool) -> tuple[int, int, int]:
        """``(feature capacity, rows of lf_nominal_class_weights, category room)`` tree ``spec``
        will have once widened to ``p`` features and the categories known: a new tree's are exactly
        those; an existing one's follow the engine's growth (``_widen``: features doubled past the
        capacity; ``_widen_classes``: category room doubled, at least the categories known), the
        room capped by the budget (:meth:`_room`)."""
        fs = self.features
        rows = sum(map(bool, fs.nominal[:p]))
        t = next((i for i, s in enumerate(self.specs) if s is spec), -1)
        live = self.bg_on if background else self.created
        if t < 0 or not live[t]:
            return p, rows, self._room(spec, p, p, rows, background, None)
        st = arena.load(self.bg if background else self.arena, t)
        pc = st.ft_nominal.shape[0]
        if p > pc:
            pc = max(p, 2 * pc)
        rows = max(rows, int(st.lf_nominal_class_weights.shape[1]))
        room = self._room(spec, p, pc, rows, background, st)
        return pc, rows, max(0, -1 if room is None else room)

    def _room(self, spec, p: int, pc: int, rows: int, background: bool, st) -> int | None:
        """The category room of a tree of ``spec`` with feature capacity ``pc`` and ``rows``
        nominal rows: the categories known (a tree ``st`` that holds codes: doubled past its
        room, at least the codes it holds), capped by the budget so that the tree could hold
        :data:`~streamforest.engine.budget.CATEGORY_LEAVES` leaves and those it holds in its
        share; None when a tree ``st`` does not fit its share at these widths even without
        codes (it must be replaced)."""
        cats = self.features.max_categories
        slots = nodes = 0
        if st is None:
            wanted = cats
        else:
            K0 = max(1, state.n_classes(st))
            held = int(st.lf_nominal_class_weights.shape[2]) // K0
            c0 = state.n_cat_codes(st)
            wanted = max(held, c0 if cats <= c0 else max(cats, 2 * c0))
            slots, nodes = _held(st, spec._tree_params(p).alt_lambda > 0)
        if self.max_memory_mb is None:
            return wanted
        cap = self._room_cap(spec, p, pc, rows, background, budget.CATEGORY_LEAVES, slots, nodes)
        if self.features.max_codes is not None:  # no feature codes past its cap (or its codes)
            cap = min(cap, max(cats, self.features.max_codes))
        if cap < 0:
            if st is None:
                return 0
            if self._room_cap(spec, p, pc, rows, background, 2, slots, nodes) < 0:
                return None  # its leaves in use alone are past its share
            return 0
        return min(wanted, cap)

    def _room_cap(self, spec, p, pc, rows, background, leaves, slots=0, nodes=0,
                  pool=True) -> int:  # fmt: skip
        """:func:`~streamforest.engine.budget.category_room` of a tree of ``spec`` (``pool``:
        its category lists bounded by the categories known, else by the room itself)."""
        prm = spec._tree_params(p)
        rule = split_rules.of(prm)
        K = max(1, self.n_classes)
        units = budget.unit_bytes(
            pc,
            m_min=prm.m_min if rule.buffers_examples else 0,
            alternates=prm.alt_lambda > 0,
            n_classes=K,
            n_cats=0,
            ranges=rule.value_ranges,
            n_nominal=rows,
        )
        return budget.category_room(
            self._tree_share(background),
            units,
            rows,
            K,
            prm.alt_lambda > 0,
            max_bins=int(prm.max_bins),
            n_cats=self.features.max_categories if pool else None,
            cat_splits=rule.value_ranges,
            leaves=leaves,
            slots=slots,
            nodes=nodes,
        )

    # --- widening under the budget ----------------------------------------------------------------
    def _new_category_room(self, t: int, p: int, bg: bool) -> int:
        rows = sum(map(bool, self.features.nominal[:p]))
        return self._room(self.specs[t], p, p, rows, bg, None)

    def _new_tree(self, t: int, p: int, seed, bg: bool = False) -> None:
        # a new tree's caps and room are a new tree's, also when it replaces one in row t
        live = self.bg_on if bg else self.created
        was = live[t]
        live[t] = 0
        try:
            super()._new_tree(t, p, seed, bg)
        finally:
            live[t] = was

    def _widen(self, t: int, p: int, bg: bool = False) -> None:
        super()._widen(t, p, bg)  # (which gives the row's holes back)
        self._widened.add((t, bg))  # its leaves are wider: its room is worked out again

    def _room_made(self, t: int, bg: bool) -> None:
        if self.max_memory_mb is not None:
            self._keep_in_share(t, bg)

    def _keep_in_share(self, t: int, bg: bool) -> None:
        """A tree that grew past its share (it holds more leaves than a cap that came down
        allows, and the slots its live alternates need) gets the category room that fits what
        it holds, or is replaced when nothing does."""
        A = self._arena_of(bg)
        if arena.used_bytes(A, t) <= self._tree_share(bg):
            return
        st = arena.load(A, t)
        K0 = state.n_classes(st)
        if not K0:
            return
        p = int(st.ints[state.I_NFEAT])
        pc, rows, _ = self._class_widths(self.specs[t], p, bg)
        room = self._room(self.specs[t], p, pc, rows, bg, st)
        if room is None:
            self._replace_tree(t, bg)
        elif room < int(st.lf_nominal_class_weights.shape[2]) // K0:
            super()._widen_classes(t, bg, room)

    def _widen_classes(self, t: int, bg: bool = False, room: int | None = None) -> None:
        if self.max_memory_mb is None or room is not None:
            A = self._arena_of(bg)
            super()._widen_classes(t, bg, room)
            if self._arena_of(bg) is not A or room is not None:  # it was widened
                arena.release_dead_pages(self._arena_of(bg), t)
            return
        widened = (t, bg) in self._widened
        self._widened.discard((t, bg))
        if not widened and self._classes_held(t, bg):
            return  # nothing new to hold (its caps keep it in its share at its room)
        key = self._shape_key(t, bg)
        if not widened and self._capped.get((t, bg)) == key:
            return  # at the room the budget gave it, and nothing changed since
        st = arena.load(self._arena_of(bg), t)
        K0 = state.n_classes(st)
        if not K0:
            return
        held = int(st.lf_nominal_class_weights.shape[2]) // K0
        rows_held = st.lf_nominal_class_weights.shape[1] >= state.n_nominal(st)
        p = int(st.ints[state.I_NFEAT])
        pc, rows, _ = self._class_widths(self.specs[t], p, bg)
        room = self._room(self.specs[t], p, pc, rows, bg, st)
        if room is None:  # even without category codes its leaves in use are past its share
            self._replace_tree(t, bg)
            return
        if K0 >= self.n_classes and rows_held and room == held:
            self._capped[(t, bg)] = key  # as wide as the budget lets it be
            return
        super()._widen_classes(t, bg, room)
        arena.release_dead_pages(self._arena_of(bg), t)

    def _shape_key(self, t: int, bg: bool) -> tuple:
        """What tree ``t``'s category room depends on, besides the categories known (its
        classes, codes, nominal rows, features, arrays, slots and nodes used, alternates),
        read from the arena's layout."""
        A = self._arena_of(bg)
        lay = A.lay[t]
        ints = A.ia[t, int(lay[_INTS, 0]) : int(lay[_INTS, 0]) + state.N_INTS]
        return (*lay[_NOMINAL_WEIGHTS, 1:].tolist(), int(lay[_CLASS_WEIGHTS, 2]),
                int(lay[_LEAF_NODE, 1]), int(lay[_NODE_FEAT, 1]),
                *ints[[state.I_NFEAT, state.I_LEAF_HW, state.I_NNODES, state.I_NALTS]].tolist(),
                self.n_classes)  # fmt: skip

    def _replace_tree(self, t: int, bg: bool) -> None:
        """Tree ``t`` (or its background tree) no longer fits its share: a fresh one in its
        row, with the caps and room of the widths known."""
        self._hint = None
        p = len(self.features)
        if bg:
            k = int(self.drift_counts[t, DS_STARTED])  # a seed of its own
            self._new_tree(t, p, self._sub_seed(t, k, 3), bg=True)
        else:
            self.n_resets[t] += 1
            self._new_tree(t, p, self._tree_seed(t))
        arena.release_dead_pages(self._arena_of(bg), t)

    # --- the category and class caps --------------------------------------------------------------
    def sync(self) -> None:
        super().sync()
        self._cap_codes()

    def _cap_codes(self) -> None:
        """Cap the categories the feature space codes per nominal feature at a fresh tree's
        category room for the features and classes known (see the class docstring)."""
        if self.max_memory_mb is None:
            return
        fs = self.features
        p = max(1, len(fs))
        rows = max(1, sum(map(bool, fs.nominal)))
        key = (p, rows, self.n_classes)
        if key == self._code_cap_key:
            return
        cap = self._room_cap(self.specs[0], p, p, rows, False, budget.CATEGORY_LEAVES, pool=False)
        fs.set_max_codes(max(1, min(cap, budget.UNBOUNDED_ROOM)))
        self._code_cap_key = key

    def max_classes(self) -> int | None:
        """The most classes the budget holds: a tree of two leaves without category codes, as
        wide as the features known make it, fits its share (None without a budget)."""
        if self.max_memory_mb is None:
            return None
        spec = self.specs[0]
        p = max(1, len(self.features))
        prm = spec._tree_params(p)
        rule = split_rules.of(prm)
        kw = dict(m_min=prm.m_min if rule.buffers_examples else 0, alternates=prm.alt_lambda > 0,
                  n_cats=0, ranges=rule.value_ranges, n_nominal=0)  # fmt: skip
        one = budget.unit_bytes(p, n_classes=1, **kw)
        two = budget.unit_bytes(p, n_classes=2, **kw)
        return budget.class_room(self._tree_share(False), one, two, prm.alt_lambda > 0,
                                 max_bins=int(prm.max_bins))  # fmt: skip

    def check_new_classes(self, known: int, new: int) -> None:
        """Raise ``ValueError`` when ``new`` more classes than the ``known`` ones would be past
        :meth:`max_classes` (before anything is learnt)."""
        if not new:
            return
        cap = self.max_classes()
        if cap is not None and known + new > cap:
            many = self.forest_trees > 1
            trees = f"{self.forest_trees} trees" if many else "its one tree"
            fewer = "use fewer trees, " if many else ""
            raise ValueError(
                f"{known + new} classes are more than this model's memory budget holds: "
                f"max_memory_mb={self.max_memory_mb:g} over {trees} holds at "
                f"most {cap} classes with {max(1, len(self.features))} features (a tree needs "
                f"room for two leaves, whose class statistics grow with the classes); raise "
                f"max_memory_mb, {fewer}or map the labels to fewer classes"
            )
