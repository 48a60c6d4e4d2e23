"""Loading: learnt state whose meaning changed between format versions, converted after
validation (the arrays keep their layout; what they hold is moved to today's meaning).

- Format 6: ABORF's Bayesian leaves keep their scatter about the leaf's running means and predict
  around the leaf's target mean (``src/core/leaves/bayes.hpp``); files of formats 4 and 5 hold a
  raw-unit scatter and intercepts about 0, converted by :func:`centre_raw_scatter` (the model
  predicts as saved).
"""

from __future__ import annotations

import numpy as np

from ..tree_kinds import arena, state
from ..tree_kinds.state import S_HI, S_LO, S_W
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


def centre_raw_scatter(st) -> None:
    """Convert the Bayesian leaves of tree state ``st`` (numpy views, changed in place) saved
    before their scatter was kept about the leaf's means (files of format 4 and 5: a raw-unit
    scatter of ``(y, 1, x)``, a prior mean of 0 for ``y``): each scatter is moved to the leaf's
    current means (``E M E^T``, ``E = I - m e_1^T``) and each intercept lowered by the leaf's
    target mean, so that the leaf predicts as it did until it learns its next example (which
    solves its posterior with the prior about the mean)."""
    M = st.lf_bayes
    if M.shape[1] == 0:
        return
    n = M.shape[1]
    for leaf in range(M.shape[0]):
        w = st.lf_stat[leaf, S_W]
        if not (w > 0.0 and M[leaf, 1, 1] > 0.0):
            continue
        shift = np.zeros(n)
        shift[0] = st.lf_stat[leaf, S_HI] + st.lf_stat[leaf, S_LO]
        k = min(n - 2, st.lf_x.shape[1])
        known = (st.lf_x[leaf, :k, S_W] > 0.0) & (st.ft_nominal[:k] == 0)
        shift[2 : 2 + k] = np.where(known, st.lf_x[leaf, :k, S_HI] + st.lf_x[leaf, :k, S_LO], 0.0)
        E = np.eye(n)
        E[:, 1] -= shift
        M[leaf] = E @ M[leaf] @ E.T
        st.lf_coef[leaf, 0] -= shift[0]
