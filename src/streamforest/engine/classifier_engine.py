"""The engine of the classifiers: :class:`ClassifierEngine`, whose memory budget counts a
classification tree's leaves as wide as they will be (see :mod:`.budget`)."""

from __future__ import annotations

from ..tree_kinds import arena, state
from ..tree_kinds import rules as split_rules
from . import budget
from .core import Engine


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

    so a tree at its cap holds at most its share (a tree already past a cap that came down, on
    a new class or category, keeps what it holds).
    """

    def _budget_caps(self, spec, p: int, background: bool):
        prm = spec._tree_params(p)
        rule = split_rules.of(prm)
        if self.max_memory_mb is None or prm.task != state.TASK_CLASSIFICATION:
            return super()._budget_caps(spec, p, background)
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

    def _class_widths(self, spec, p: int, background: bool) -> tuple[int, int, int]:
        """``(feature capacity, rows of lf_nominal_class_weights, category room)`` tree ``spec``
        will have once widened to ``p`` features and the categories known: a new tree's are exactly
        those; an existing one's follow the engine's growth (``_widen``: features doubled past the
        capacity; ``_widen_classes``: category room doubled, at least the categories known)."""
        fs = self.features
        cats = fs.max_categories
        rows = sum(map(bool, fs.nominal[:p]))
        t = next((i for i, s in enumerate(self.specs) if s is spec), -1)
        live = self.bg_on if background else self.created
        if t < 0 or not live[t]:
            return p, rows, cats
        st = arena.load(self.bg if background else self.arena, t)
        pc = st.ft_nominal.shape[0]
        if p > pc:
            pc = max(p, 2 * pc)
        c0 = state.n_cat_codes(st) if state.n_classes(st) else 0
        room = c0 if cats <= c0 else max(cats, 2 * c0)
        return pc, max(rows, int(st.lf_nominal_class_weights.shape[1])), room
