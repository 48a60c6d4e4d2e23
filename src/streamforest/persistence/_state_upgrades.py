"""Loading: learnt state whose meaning changed between format versions, converted after
validation (the arrays keep their layout; what they hold is moved to today's meaning).

- Format 6: ABORF's Bayesian leaves keep their scatter about the leaf's running means and predict
  around the leaf's target mean (:mod:`streamforest.tree_kinds.leaf_models`); files of formats 4
  and 5 hold a raw-unit scatter and intercepts about 0, converted by
  :func:`~streamforest.tree_kinds.leaf_models.centre_raw_scatter` (the model predicts as saved).
"""

from __future__ import annotations

from ..tree_kinds import arena, state
from ..tree_kinds.leaf_models import centre_raw_scatter
from ._validation import _objects

__all__ = ["upgrade_state"]

CENTRED_BAYES_SCATTER = 6  # the first format whose Bayesian leaves are centred


def upgrade_state(model, version: int) -> None:
    """Convert, in place, the state of ``model`` loaded from a file of format ``version``."""
    if version >= CENTRED_BAYES_SCATTER:
        return
    from ..engine.core import Engine

    for _, obj in _objects(model, type(model).__name__):
        if not isinstance(obj, Engine):
            continue
        for A, live in ((obj.arena, obj.created), (obj.bg, obj.bg_on)):
            for t in live.nonzero()[0].tolist():
                if int(arena.params_at(A, t).leaf_model) == state.LEAF_BAYES:
                    centre_raw_scatter(arena.load(A, t))
