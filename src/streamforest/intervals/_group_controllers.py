"""A controller per group under :class:`~streamforest.AdaptiveConformal` (and
:class:`~streamforest.AdaptiveConformalClassifier`): the wrapper's long-run error rate held at
``alpha`` in every group, not only over all rows.

The wrapper's groups (its ``groups`` parameter; ``None``: the wrapped method's own groups) are
numbered as the group windows number them (:class:`~._groups.GroupVocabulary`: cell 0 the pool,
a cell per ``(family, value)`` learnt).  The pool's controllers are the wrapper's marginal ones
(its state arrays, every row teaches them); each group has controllers of its own, one per tracked
level, of the wrapper's method, which only its rows teach.  Controllers of different groups share
nothing, so running each group's rows in order through its controllers (the compiled passes of
the wrapper, on the rows of one group at a time) is the row-by-row process.

- A row is served, per family, its group's interval (the pool's when it has no group there: a
  missing value, or a group not learnt yet); with several families the hull of those (each
  family's groups then err at most as their controllers let them).  Levels stay nested.
- A *young* group, whose controller at a level has been taught fewer than
  ``ceil((1 - alpha) / alpha)`` rows, is served the pool's interval at that level (its
  controller still learns from its own): the windowed methods (DtACI, AgACI, NExCP) have no
  quantile before that.
- **Feedback on what was served** (batches, delayed labels): the served log's record of a row
  holds the record of each of its controllers (the pool's and its group's of each family) and
  the groups that served it; when its label is learnt each controller learns from its own
  record.  A row served while its group was not learnt yet (the pool served it there) teaches
  its group's controller from the interval that controller gives when the label comes (as
  ``unmatched="current"``).  Each controller's lag is counted in its own rows.
- The controllers' state is committed only when the call succeeds (a refused call changes
  nothing), and saved and loaded with the wrapper.
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from ..features import check_target, check_targets, check_weight, check_weights, n_rows
from . import _groups
from ._served_log import row_keys
from .base import check_alphas

#: The calls of :class:`~streamforest.AdaptiveConformal` that take ``groups=``.
CALLS = ("predict_learn_many", "learn_many", "predict_interval", "learn_one",
         "predict_interval_one")  # fmt: skip


def families(wrapper) -> tuple:
    """The families the wrapper keeps controllers per group for (``()``: one marginal
    controller): its ``groups``, else (``None``) its model's; ``False``: none."""
    g = getattr(wrapper, "groups", None)
    if g is False:
        return ()
    if g is None:
        model = wrapper.__dict__.get("_model", wrapper.model)
        g = getattr(model, "groups", None)
    return _groups.check_groups(g)


def check(wrapper) -> None:
    """The wrapper's ``groups`` parameter: None, False, or what an interval method takes."""
    g = wrapper.groups
    if g is not False and g is not None:
        _groups.check_groups(g)


def configure(wrapper, model) -> None:
    """A wrapper given ``groups`` over a method without: the method (the wrapper's clone) is
    calibrated by the same groups."""
    g = wrapper.groups
    if g is not None and g is not False and getattr(model, "groups", 0) is None:
        model.groups = g


def base_kwargs(wrapper, groups) -> dict:
    """The ``groups=`` argument for the wrapped method's calls: a call's group values go to the
    method when it is grouped too."""
    m = wrapper.__dict__.get("_model")
    grouped = m is not None and (getattr(m, "groups", None) is not None
                                 or m.__dict__.get("_groups") is not None)  # fmt: skip
    return {"groups": groups} if groups is not None and grouped else {}


class GroupControllers(_groups.GroupVocabulary):
    """The groups' controllers: ``state[k]`` ``(cells, levels, ...)`` for each of the wrapper's
    controller arrays ``k`` (row 0 unused: the pool is the wrapper's own), ``levels`` the levels
    they track (in the order first tracked), ``taught[c, r]`` the rows each has learnt from."""

    def __init__(self, n_families: int):
        super().__init__(n_families)
        self.levels = np.zeros(0)
        self.state: dict = {}
        self.taught = np.zeros((1, 0), np.int64)

    def gather(self, wrapper, c: int, levels: np.ndarray) -> tuple[dict, np.ndarray]:
        """Copies of cell ``c``'s state at ``levels`` (initial rows where it has none) and its
        taught counts."""
        s = wrapper._initial_rows(levels.shape[0], levels)
        taught = np.zeros(levels.shape[0], np.int64)
        if c >= self.taught.shape[0] or not self.levels.shape[0]:
            return s, taught
        for r, a in enumerate(levels):
            hit = np.flatnonzero(np.abs(self.levels - a) <= 1e-12)
            if hit.size:
                j = hit[0]
                for k in s:
                    s[k][r] = self.state[k][c, j]
                taught[r] = self.taught[c, j]
        return s, taught

    def _fit(self, wrapper, cells: int, levels: np.ndarray) -> None:
        """Room for ``cells`` cells and every level of ``levels`` (initial state)."""
        new = [float(a) for a in levels if not np.any(np.abs(self.levels - a) <= 1e-12)]
        C = max(cells, self.taught.shape[0])
        R = self.levels.shape[0] + len(new)
        all_levels = np.concatenate([self.levels, new])
        if C == self.taught.shape[0] and R == self.levels.shape[0]:
            return
        init = wrapper._initial_rows(R, all_levels)
        for k, v in init.items():
            grown = np.broadcast_to(v, (C, *v.shape)).copy()
            old = self.state.get(k)
            if old is not None:
                grown[: old.shape[0], : old.shape[1]] = old
            self.state[k] = grown
        taught = np.zeros((C, R), np.int64)
        taught[: self.taught.shape[0], : self.taught.shape[1]] = self.taught
        self.taught, self.levels = taught, all_levels

    def store(self, wrapper, c: int, levels, learns, s: dict, taught) -> None:
        """Cell ``c``'s state at the tracked levels (``learns``) after a call."""
        self._fit(wrapper, c + 1, levels[learns])
        for r in np.flatnonzero(learns):
            j = np.flatnonzero(np.abs(self.levels - levels[r]) <= 1e-12)[0]
            for k in self.state:
                self.state[k][c, j] = s[k][r]
            self.taught[c, j] = taught[r]

    def forget_untracked(self, tracked: np.ndarray) -> None:
        """Drop the levels the wrapper no longer tracks (forgotten past its cap)."""
        keep = np.array([np.any(np.abs(tracked - a) <= 1e-12) for a in self.levels], bool)
        if keep.all():
            return
        self.levels = self.levels[keep]
        self.taught = self.taught[:, keep]
        for k, v in self.state.items():
            self.state[k] = v[:, keep]

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.state.values()) + self.taught.nbytes


def group_rows(wrapper, X, n: int, one: bool, groups, learn: bool):
    """``(controllers, ids, new)`` for a call's rows (``ids`` their cells, ``new`` the groups
    learning would add; nothing changes here), or None for a wrapper without groups."""
    fams = families(wrapper)
    gc = wrapper.__dict__.get("_group_controllers")
    if not fams and groups is None and gc is None:
        return None
    names = list(wrapper.feature_names_in_) if fams else []
    cols = _groups.call_values(groups, fams, X, names, n, one,
                               None if gc is None else gc.n_families)  # fmt: skip
    if gc is None:
        gc = GroupControllers(len(cols))
    ids, new = gc.lookup(cols, learn)
    return gc, ids, new


def _young_need(levels) -> np.ndarray:
    return np.array([math.ceil((1 - a) / a - 1e-9) for a in levels], np.int64)


def run(self, grp, base_call, y, alphas, learn: bool, keys=None, serve=False, after=None):
    """:meth:`AdaptiveConformal._run` with a controller per group (see the module docstring);
    ``after()``: the base model's learning when ``base_call`` does not learn (one row)."""
    gc, ids, new = grp
    levels, pos, learns = self._levels_for(alphas)
    R, L, F = self.levels_.shape[0], levels.shape[0], ids.shape[1]
    n = None if y is None else y.shape[0]
    fb = self._feedback(keys, n, parts=F + 1) if learn else None
    pred, iv = base_call(self._plan(levels)[0])
    n = iv.shape[0]
    if y is None:
        y = np.zeros(n)
    W = self._record_width()
    recs = [np.zeros((n, L, W)) for _ in range(F + 1)]  # the pool's, then each family's
    mode = np.zeros(n, np.int8)
    served_in = None
    if fb is not None:
        mode = fb[0]
        for p in range(F + 1):
            recs[p][:, :R] = fb[1][:, p * R : (p + 1) * R]
        log = self._log
        if log.cells is not None and log.cells.shape[1] == F:
            served_in = np.where((fb[2] >= 0)[:, None], log.cells[np.maximum(fb[2], 0)], -2)
    blo = np.ascontiguousarray(iv[:, :, 0], dtype=np.float64)
    bhi = np.ascontiguousarray(iv[:, :, 1], dtype=np.float64)
    pred = np.ascontiguousarray(pred, dtype=np.float64)
    s0 = self._state_of(levels)
    lo0, hi0 = self._pass(levels, learns, blo, bhi, pred, y, mode.copy(), recs[0], s0)
    sel_lo = np.repeat(lo0[:, None, :], F, axis=1)
    sel_hi = np.repeat(hi0[:, None, :], F, axis=1)
    need = _young_need(levels)
    stored = []
    for f in range(F):
        col = ids[:, f]
        for c in np.unique(col[col > 0]).tolist():
            rows = np.flatnonzero(col == c)
            s, taught = gc.gather(self, c, levels)
            m = mode[rows].copy()
            if served_in is not None:
                m[(m == 2) & (served_in[rows, f] != c)] = 1  # (served by the pool there)
            rec = np.ascontiguousarray(recs[f + 1][rows])
            lo, hi = self._pass(levels, learns, blo[rows], bhi[rows], pred[rows], y[rows], m,
                                   rec, s)  # fmt: skip
            recs[f + 1][rows] = rec
            teaches = ((m == 1) | (m == 2)) if learn else np.zeros(rows.shape[0], bool)
            before = taught[None, :] + (np.cumsum(teaches) - teaches)[:, None]
            young = before < need[None, :]
            sel_lo[rows, f] = np.where(young, lo0[rows], lo)
            sel_hi[rows, f] = np.where(young, hi0[rows], hi)
            stored.append((c, s, taught + int(teaches.sum())))
    lo, hi = sel_lo.min(axis=1), sel_hi.max(axis=1)
    order = np.argsort(-levels, kind="stable")  # (the largest alpha, the narrowest, first)
    lo[:, order] = np.minimum.accumulate(lo[:, order], axis=1)
    hi[:, order] = np.maximum.accumulate(hi[:, order], axis=1)
    if learn:
        if after is not None:
            after()
        self._store_state(levels, s0)
        gc.commit(new)
        gc._fit(self, gc.n_cells, levels[learns])
        for c, s, taught in stored:
            gc.store(self, c, levels, learns, s, taught)
        self.__dict__["_group_controllers"] = gc
        if keys is not None:
            self._log.commit(keys, fb[2], fb[3])
    elif serve and keys is not None and R > 0:
        rec = np.concatenate([r[:, :R] for r in recs], axis=1)
        self._log.add(keys, rec, self._version, cells=ids, layout=self._layout)
    return pred, lo[:, pos], hi[:, pos]


# --- the wrapper's calls with groups= ----------------------------------------------------------
def grouped(fn):
    """``fn``, a call of :data:`CALLS`, taking ``groups=``: a wrapper without groups (none
    given, none of its own or its model's, no group state) runs ``fn`` itself."""
    grouped_form = _FORMS[fn.__name__]

    @functools.wraps(fn)
    def call(self, *args, groups=None, **kwargs):
        if groups is None and "_group_controllers" not in self.__dict__ and not families(self):
            return fn(self, *args, **kwargs)
        return grouped_form(self, *args, groups=groups, **kwargs)

    sig = inspect.signature(fn)
    keyword = inspect.Parameter("groups", inspect.Parameter.KEYWORD_ONLY, default=None)
    call.__signature__ = sig.replace(parameters=[*sig.parameters.values(), keyword])
    return call


def _predict_learn_many(self, X, y, alpha=0.1, w=None, groups=None):
    alphas, scalar = check_alphas(alpha)
    if "_model" not in self.__dict__:
        return self._first_call(type(self).predict_learn_many, X, y, alpha, w, groups=groups)
    m = self.model_
    ya = check_targets(y, n_rows(X))
    check_weights(w, ya.shape[0])
    grp = group_rows(self, X, ya.shape[0], False, groups, True)
    kw = base_kwargs(self, groups)

    def base(levels):
        return m.predict_learn_many(X, y, alpha=levels.copy(), w=w, **kw)

    with self._atomic():
        self._track(alphas)
        pred, lo, hi = run(self, grp, base, ya, alphas, True)
        self._n_seen += ya.shape[0]
        if self._log.by_key:
            self._drop_served(row_keys(X, False))
    out = np.stack([lo, hi], axis=-1)
    return pred, (out[:, 0, :] if scalar else out)


def _learn_many(self, X, y, w=None, groups=None):
    if "_model" not in self.__dict__:
        return self._first_call(type(self).learn_many, X, y, w, groups=groups)
    m = self.model_
    ya = check_targets(y, n_rows(X))
    check_weights(w, ya.shape[0])
    grp = group_rows(self, X, ya.shape[0], False, groups, True)
    kw = base_kwargs(self, groups)

    def base(levels):
        return m.predict_learn_many(X, y, alpha=levels.copy(), w=w, **kw)

    with self._atomic():
        run(self, grp, base, ya, self.levels_.copy(), True, keys=row_keys(X, False))
        self._n_seen += ya.shape[0]
    return self


def _predict_interval(self, X, alpha=0.1, log: bool = True, groups=None):
    alphas, scalar = check_alphas(alpha)
    if "_model" not in self.__dict__:
        return self._first_call(type(self).predict_interval, X, alpha, log, groups=groups,
                                keep=False)  # fmt: skip
    m = self.model_
    grp = group_rows(self, X, n_rows(X), False, groups, False)
    kw = base_kwargs(self, groups)

    def base(levels):
        return m.predict(X), m.predict_interval(X, alpha=levels.copy(), **kw)

    keys = row_keys(X, False) if log and self._log.size else None
    _, lo, hi = run(self, grp, base, None, alphas, False, keys=keys, serve=True)
    out = np.stack([lo, hi], axis=-1)
    return out[:, 0, :] if scalar else out


def _one_base(m, x, kw):
    def base(levels):
        iv = np.array(m.predict_interval_one(x, alpha=levels.copy(), **kw), dtype=np.float64)
        return np.array([m.predict_one(x)], dtype=np.float64), iv.reshape(1, -1, 2)

    return base


def _learn_one(self, x, y, w=1.0, groups=None):
    yf = check_target(y)
    check_weight(w)
    if "_model" not in self.__dict__:
        return self._first_call(type(self).learn_one, x, y, w, groups=groups)
    m = self.model_
    kw = base_kwargs(self, groups)
    with self._atomic():
        grp = group_rows(self, x, 1, True, groups, True)
        run(self, grp, _one_base(m, x, kw), np.array([yf]), self.levels_.copy(), True,
            keys=row_keys(x, True), after=lambda: m.learn_one(x, yf, w, **kw))  # fmt: skip
        self._n_seen += 1


def _predict_interval_one(self, x, alpha=0.1, log: bool = True, groups=None):
    alphas, scalar = check_alphas(alpha)
    if "_model" not in self.__dict__:
        return self._first_call(type(self).predict_interval_one, x, alpha, log, groups=groups,
                                keep=False)  # fmt: skip
    m = self.model_
    grp = group_rows(self, x, 1, True, groups, False)
    keys = row_keys(x, True) if log and self._log.size else None
    _, lo, hi = run(self, grp, _one_base(m, x, base_kwargs(self, groups)), None, alphas, False,
                    keys=keys, serve=True)  # fmt: skip
    if scalar:
        return (float(lo[0, 0]), float(hi[0, 0]))
    return [(float(lo[0, r]), float(hi[0, r])) for r in range(alphas.shape[0])]


_FORMS = {
    "predict_learn_many": _predict_learn_many,
    "learn_many": _learn_many,
    "predict_interval": _predict_interval,
    "learn_one": _learn_one,
    "predict_interval_one": _predict_interval_one,
}
