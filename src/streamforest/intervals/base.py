"""Shared API of the interval meta-algorithms (River-style and array-style)."""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext

import numpy as np

from ..base import Estimator
from ..concurrency import forwarding
from ..engine.forest_interface import LEAF_PAYLOADS, RegressionForest, has, require
from ..features import check_target, check_targets, check_weight, kernel_array
from ..forests import OnlineForestRegressor
from . import _groups
from ._label_guard import guarded, new_state

_ONE_LEVEL: dict[float, np.ndarray] = {}


def memory_budget(models) -> int | None:
    """The memory budget of ``models`` in bytes: the sum of each one's ``memory_budget_bytes``
    (a wrapper's) or ``max_memory_mb`` (a forest's, a tree's, a classifier's); None if one of
    them has no budget."""
    total = 0
    for m in models:
        b = getattr(m, "memory_budget_bytes", None)
        if b is None:
            mb = getattr(m, "max_memory_mb", None)
            b = None if mb is None else int(float(mb) * 2**20)
        if b is None:
            return None
        total += b
    return total


def check_alphas(alpha) -> tuple[np.ndarray, bool]:
    """``(levels, scalar)``: significance level(s) as a float array, each in (0, 1)."""
    if type(alpha) is float and 0.0 < alpha < 1.0:  # the per-example fast path
        a = _ONE_LEVEL.get(alpha)
        if a is None:
            if len(_ONE_LEVEL) > 256:
                _ONE_LEVEL.clear()
            # shared: never written (a read-only flag would give kernels a second signature)
            a = _ONE_LEVEL[alpha] = np.array([alpha])
        return a, True
    if type(alpha) is np.ndarray and alpha.dtype == np.float64 and alpha.ndim == 1:
        # (the levels a wrapper asks its base for: no element to inspect for a string)
        if alpha.shape[0] == 0 or not np.all((alpha > 0) & (alpha < 1)):
            raise ValueError(
                f"alpha must be in (0, 1) (or a non-empty list of such), got {alpha!r}"
            )
        return kernel_array(alpha), False
    scalar = isinstance(alpha, numbers.Real) and not isinstance(alpha, bool)
    try:
        if isinstance(alpha, (str, bytes, bool)) or (
            not scalar and any(isinstance(a, (str, bytes, bool)) for a in np.ravel(alpha))
        ):
            raise TypeError
        a = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    except OverflowError:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}") from None
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a number or a list of numbers, got {alpha!r}") from None
    if a.ndim != 1 or a.shape[0] == 0 or not np.all((a > 0) & (a < 1)):
        raise ValueError(f"alpha must be in (0, 1) (or a non-empty list of such), got {alpha!r}")
    return kernel_array(a), scalar


def check_quantiles(q, closed: bool = True) -> tuple[np.ndarray, bool]:
    """``(levels, scalar)``: quantile level(s) ``q`` as a float array, each in [0, 1] (in (0, 1)
    unless ``closed``)."""
    scalar = isinstance(q, numbers.Real) and not isinstance(q, bool)
    try:
        if isinstance(q, (str, bytes, bool)) or (
            not scalar and any(isinstance(v, (str, bytes, bool)) for v in np.ravel(q))
        ):
            raise TypeError
        a = np.atleast_1d(np.asarray(q, dtype=np.float64))
    except OverflowError:
        raise ValueError(f"q must be in [0, 1], got {q!r}") from None
    except (TypeError, ValueError):
        raise TypeError(f"q must be a number or a list of numbers, got {q!r}") from None
    inside = (a >= 0) & (a <= 1) if closed else (a > 0) & (a < 1)
    if a.ndim != 1 or a.shape[0] == 0 or not np.all(inside):
        what = "[0, 1]" if closed else "(0, 1)"
        raise ValueError(f"q must be in {what} (or a non-empty list of such), got {q!r}")
    return kernel_array(a), scalar


_NO_LEVELS = np.zeros(0)  # the levels of a grouped learning call (no interval asked)


def _row_count(X) -> int:
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else len(X)


def doubled(a: np.ndarray, k: int) -> np.ndarray:
    """An array twice as long as ``a`` holding ``a[:k]`` (a pass's scratch buffer, grown)."""
    out = np.empty(2 * a.shape[0], a.dtype)
    out[:k] = a[:k]
    return out


def stack_bounds(lo: np.ndarray, hi: np.ndarray, scalar: bool) -> np.ndarray:
    out = np.stack([lo, hi], axis=-1)  # (n, A, 2)
    return out[:, 0, :] if scalar else out


#: The calls that take ``groups=`` (see :meth:`IntervalRegressor._grouped`).
GROUPED_CALLS = frozenset(
    {"learn_one", "learn_many", "predict_learn_many", "predict_interval", "predict_interval_one"}
)


def _grouping(fn):
    """``fn`` (a call of :data:`GROUPED_CALLS`) taking ``groups=``: a model without groups (no
    ``groups`` parameter, none given, no group state) runs ``fn`` itself; else the call's
    grouped form, ``IntervalRegressor._grouped_<name>``, which runs the method's own calls
    (``fn``, inside :meth:`IntervalRegressor._base_calls`) at the reference level."""
    body = (
        "    if {extra} is None and {self}.groups is None and '_groups' not in {self}.__dict__:\n"
        "        return fn({args})\n"
        "    if getattr({self}, '_in_base', False):\n"
        "        return fn({args})\n"
        "    return getattr({self}, grouped)({rest}{extra}={extra})\n"
    )
    grouped = "_grouped_" + fn.__name__
    call = forwarding(fn, body, {"fn": fn, "grouped": grouped}, "groups")
    call._grouping = True
    return call


class IntervalRegressor(Estimator):
    """Base of the interval methods: a forest plus the method's own state.

    The forest is any :class:`~streamforest.engine.forest_interface.RegressionForest` that has
    the capabilities :meth:`forest_needs` lists (checked when learning starts).
    Subclasses implement ``_configure(forest)`` (tree settings the method needs),
    ``_init_state()`` and ``_chunk(Xa, ya, wa, alphas, learn)`` returning
    ``(prediction, lower, upper)`` for the rows of one chunk, predicted before learning them
    when ``learn``; or, for learning, the two stages of :meth:`_run` (``_staged``).
    Intervals are ``(n, 2)`` for one ``alpha`` and ``(n, len(alpha), 2)`` for a list.  Before
    the method has enough data for a level, its interval is ``(-inf, inf)``.

    Every method takes ``groups`` (its parameter, and a ``groups=`` argument of its learning and
    interval calls): intervals calibrated per group, see :mod:`streamforest.intervals._groups`
    and :meth:`_grouped`.  The grouped form of a call is one implementation for every method
    (the subclasses' own forms of the calls are wrapped by ``__init_subclass__``).
    """

    __slots__ = ("_in_base",)  # inside a grouped call: the method's own calls (not state)
    groups = None  # (models saved before groups existed)

    def __init_subclass__(cls, **kwargs):
        for name in GROUPED_CALLS.intersection(cls.__dict__):
            fn = cls.__dict__[name]
            if callable(fn) and not getattr(fn, "_grouping", False):
                setattr(cls, name, _grouping(fn))
        super().__init_subclass__(**kwargs)  # (then the calls take the model's lock)

    _chunk_rows = 8192
    #: How the distributed layer combines the method's shards (``"qrf"``, ``"cp"``), when the
    #: method offers the chunk stages it drives (``None``: it cannot be sharded, because
    #: :attr:`not_sharded`).
    shard_stages: str | None = None
    not_sharded: str = ""
    _scratch_keys: tuple = ("_one_lohi", "_px")  # reused buffers, not model state (not pickled)
    # the forest engine's compiled per-example object (``engine_.example_path()``) of a method
    # whose per-example calls run in it (CPApproximate, OnlineQRF), kept once the trees exist:
    # it checks on each call that it still is the engine's and the engine the forest's (False:
    # an engine without one)
    _px = None

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in self._scratch_keys:
            d.pop(k, None)
        return d

    def _check_common(self) -> None:
        if self.forest is not None:
            if not isinstance(self.forest, RegressionForest):
                raise TypeError(
                    "forest must be a regression forest (the forest interface, "
                    "streamforest.engine.forest_interface.RegressionForest: OnlineForestRegressor, "
                    f"AMFRegressor, SGBTRegressor, ...), got {type(self.forest).__name__}"
                )
            require(self.forest, self.forest_needs(), type(self).__name__)
        if self.seed is not None and not isinstance(self.seed, numbers.Integral):
            raise TypeError(f"seed must be an int or None, got {self.seed!r}")
        _groups.check_groups(self.groups)

    def default_forest(self) -> RegressionForest:
        """The forest used when ``forest`` is None (unfitted): ``OnlineForestRegressor()``."""
        return OnlineForestRegressor()

    def forest_needs(self) -> tuple[str, ...]:
        """The forest capabilities this method needs with its parameters (names of
        :data:`streamforest.engine.forest_interface.CAPABILITIES`); a forest that lacks one is
        refused when learning starts, with a ``TypeError`` naming it."""
        return ()

    @property
    def forest_(self) -> RegressionForest:
        f = self.__dict__.get("_forest")
        if f is None:
            self._check_params()
            f = (self.forest if self.forest is not None else self.default_forest()).clone()
            if self.seed is not None:
                f.seed = self.seed
            self._configure(f)
            f.feature_space()
            self._forest = f
            self._n_seen = 0
            self._init_state()
        return f

    def _create_state(self) -> None:  # see Estimator._first_call
        _ = self.forest_

    # --- hooks -----------------------------------------------------------------------------------
    def _check_params(self) -> None:
        self._check_common()

    def _configure(self, forest: RegressionForest) -> None:
        pass

    def _init_state(self) -> None:
        pass

    def _chunk(self, Xa, ya, wa, alphas, learn):
        raise NotImplementedError

    # --- driving ---------------------------------------------------------------------------------
    def _staged(self, alphas) -> bool:
        """Whether learning these levels runs as two stages per chunk, :meth:`_tree_stage` (the
        trees learn) then :meth:`_score_stage` (the intervals), instead of :meth:`_chunk`."""
        return False

    def _tree_stage(self, Xa, ya, wa, parity: int):
        raise NotImplementedError

    def _score_stage(self, stage, ya, alphas, alone: bool):
        raise NotImplementedError

    def _run(self, Xa, ya, wa, alphas, learn):
        """Chunk by chunk, of equal length (at most :meth:`_rows_per_chunk` rows).  Staged
        learning with ``n_jobs >= 2`` and several chunks overlaps chunk k's score stage
        (sequential, on its own thread; ``alone`` False) with the trees learning chunk k+1; the
        last chunk's score stage has the forest's threads (``alone`` True: nothing else runs).
        The stages share no written state (scratch buffers come in two sets, by chunk parity),
        so the results are those of the sequential order."""
        n = Xa.shape[0]
        A = alphas.shape[0]
        pred = np.zeros(n)
        lo = np.full((n, A), -np.inf)
        hi = np.full((n, A), np.inf)
        staged = learn and self._staged(alphas)
        per = self._rows_per_chunk()
        chunks = self._chunk_count(n, per)
        per = -(-n // chunks)  # (e.g. 1000 rows of at most 760 a chunk: two of 500, not 760 + 240)
        overlap = staged and chunks > 1 and self.forest_.n_jobs > 1

        def score(stage, a, b, alone):
            pred[a:b], lo[a:b], hi[a:b] = self._score_stage(stage, ya[a:b], alphas, alone)

        pending = None
        with ThreadPoolExecutor(1) if overlap else nullcontext() as scorer:
            a, k = 0, 0
            while a < n:
                b = min(n, a + per)
                if not staged:
                    pred[a:b], lo[a:b], hi[a:b] = self._chunk(
                        Xa[a:b], ya[a:b], wa[a:b], alphas, learn
                    )
                else:
                    stage = self._tree_stage(Xa[a:b], ya[a:b], wa[a:b], k % 2)
                    if pending is not None:
                        p, pending = pending, None
                        p.result()
                    if not overlap or b == n:
                        score(stage, a, b, True)
                    else:
                        pending = scorer.submit(score, stage, a, b, False)
                if learn:
                    self._n_seen += b - a
                a, k = b, k + 1
        lo = np.where(np.isnan(lo), -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        return pred, lo, hi

    def _rows_per_chunk(self) -> int:
        return self._chunk_rows

    def _chunk_count(self, n: int, per: int) -> int:
        """Chunks of a call of ``n`` rows, ``per`` rows a chunk at most (:meth:`_run` makes
        them of equal length)."""
        return max(1, -(-n // per))

    def _learn_levels(self) -> np.ndarray:
        """Levels computed while only learning (their intervals are discarded)."""
        return np.array([0.1])

    # --- array API -------------------------------------------------------------------------------
    @_grouping
    def learn_many(self, X, y, w=None):
        """Learn the rows of ``X`` in order (optional sample weights)."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.learn_many, X, y, w)
        Xa, ya, wa = f.prepare_batch(X, y, w)
        if Xa.shape[0]:
            f.check_fittable()  # a forest that knows no feature refuses rows
            row = self._as_one_example(Xa, self._learn_row)
            if row is not None:  # one row: the per-example call, as learn_one
                self._learn_row(row, float(ya[0]), float(wa[0]))
                return self
            self._run(Xa, ya, wa, self._learn_levels(), learn=True)
        return self

    @_grouping
    def predict_learn_many(self, X, y, alpha=0.1, w=None):
        """Prequential pass: for each row the prediction and interval made *before* learning it,
        then learn it.  Returns ``(predictions, intervals)``."""
        alphas, scalar = check_alphas(alpha)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.predict_learn_many, X, y, alpha, w)
        Xa, ya, wa = f.prepare_batch(X, y, w)
        if Xa.shape[0]:
            f.check_fittable()  # a forest that knows no feature refuses rows
        row = self._as_one_example(Xa, self._learn_row)
        if row is not None:  # one row: predict_one, predict_interval_one, learn_one
            pred = np.array([f.engine_.predict_one(row)])
            lo, hi = self._one_row_interval(row, alphas)
            self._learn_row(row, float(ya[0]), float(wa[0]))
            return pred, stack_bounds(lo, hi, scalar)
        pred, lo, hi = self._run(Xa, ya, wa, alphas, learn=True)
        return pred, stack_bounds(lo, hi, scalar)

    def _as_one_example(self, Xa, per_example) -> np.ndarray | None:
        """A one-row batch's row in the engine's row buffer, when the method has the
        per-example call ``per_example`` and the forest's trees are in the arena (the method's
        per-example kernels read them); else None (the batch pass).  The per-example calls give
        the batch pass's results (tests/test_engine.py)."""
        if Xa.shape[0] != 1 or per_example is None or self._one_kernel is None:
            return None
        f = self.forest_
        e = f.engine_
        if not (f.is_fitted and has(f, LEAF_PAYLOADS) and e.takes_array_rows()):
            return None
        return e.use_row(Xa[0])

    def _one_row_interval(self, row, alphas):
        """``(lower, upper)``, each ``(1, levels)``, of the row in the row buffer
        (:meth:`_one_kernel`; NaN bounds infinite, as :meth:`_run` gives)."""
        A = alphas.shape[0]
        lo, hi = self._one_scratch(A)
        self._one_kernel(row, alphas, lo, hi)
        lo = np.where(np.isnan(lo[:A]), -np.inf, lo[:A])[None, :]
        hi = np.where(np.isnan(hi[:A]), np.inf, hi[:A])[None, :]
        return lo, hi

    def _encode(self, X) -> np.ndarray:
        f = self.forest_
        return f.encode_predict(X)

    # --- the stages the distributed layer drives (its shards learn the forest's trees) ---------
    def encode_predict(self, X) -> np.ndarray:
        """The encoded matrix of a batch to predict (the forest's :meth:`encode_predict`)."""
        return self._encode(X)

    def add_seen(self, n: int) -> None:
        """Count ``n`` examples learnt by the forest's trees outside this method (the
        distributed layer's shards): :attr:`n_seen`."""
        self._n_seen = self.__dict__.get("_n_seen", 0) + int(n)

    def predict(self, X) -> np.ndarray:
        """Point predictions (the forest's)."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.predict, X, keep=False)
        return f.predict(X)

    @_grouping
    def predict_interval(self, X, alpha=0.1) -> np.ndarray:
        """Prediction intervals at significance ``alpha`` (a number or a list)."""
        alphas, scalar = check_alphas(alpha)
        if "_forest" not in self.__dict__:
            return self._first_call(IntervalRegressor.predict_interval, X, alpha, keep=False)
        Xa = self._encode(X)
        row = self._as_one_example(Xa, self._one_kernel)
        if row is not None:  # one row: one compiled call, as predict_interval_one
            return stack_bounds(*self._one_row_interval(row, alphas), scalar)
        _, lo, hi = self._predict_only(Xa, alphas)
        return stack_bounds(lo, hi, scalar)

    def _predict_only(self, Xa, alphas):
        n = Xa.shape[0]
        if not self.forest_.is_fitted:
            return (
                np.zeros(n),
                np.full((n, alphas.shape[0]), -np.inf),
                np.full((n, alphas.shape[0]), np.inf),
            )
        y0, w0 = np.zeros(n), np.ones(n)
        return self._run(Xa, y0, w0, alphas, learn=False)

    # --- River-style API -------------------------------------------------------------------------
    @_grouping
    def learn_one(self, x: Mapping[Hashable, object], y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values)."""
        yf = check_target(y)
        wa = check_weight(w)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.learn_one, x, y, w)
        Xa = f.encode_one(x, learn=True)
        self._run(Xa, np.array([yf]), wa, self._learn_levels(), learn=True)

    def predict_one(self, x: Mapping[Hashable, object]) -> float:
        """Point prediction for one example (the forest's)."""
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.predict_one, x, keep=False)
        return f.predict_one(x)

    @_grouping
    def predict_interval_one(self, x: Mapping[Hashable, object], alpha=0.1):
        """``(lower, upper)`` for one example, or a list of them for a list of ``alpha``."""
        alphas, scalar = check_alphas(alpha)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(IntervalRegressor.predict_interval_one, x, alpha, keep=False)
        if self._one_kernel is not None and f.is_fitted:
            e = f.engine_
            row = e.features.encode_dict_into(x, False, e.row_buffer)  # e.encode_one(x, False)
            if row is not e.row_buffer:
                row = e.row_buffer = row.reshape(-1)
            lo, hi = self._one_scratch(alphas.shape[0])
            self._one_kernel(row, alphas, lo, hi)
        else:
            Xa = f.encode_one(x, learn=False)
            _, lo2, hi2 = self._predict_only(Xa, alphas)
            lo, hi = lo2[0], hi2[0]
        if scalar:
            return (float(lo[0]), float(hi[0]))
        return [(float(lo[a]), float(hi[a])) for a in range(alphas.shape[0])]

    # --- groups: the grouped form of the calls (one implementation for every method) ----------
    def _grouped(self, X, y, w, groups, alphas, learn: bool, one_row: bool):
        """The rows' ``(prediction, lower, upper)`` calibrated per group (``lower``, ``upper``
        ``(n, levels)``), learning them when ``learn``.  The method's own call at
        :data:`~._groups.REFERENCE` gives each row's prediction and reference interval (before
        learning it); the group values are read and checked first and the groups a call meets
        are added only after the method's call succeeded, so a refused call changes nothing.
        Without group state (a model that never learnt with groups) a prediction is the
        method's own."""
        if self.__dict__.get("_groups") is None and not learn:
            return None
        n = 1 if one_row else _row_count(X)
        plan = self._group_plan(X, groups, n, one_row, learn, alphas)
        with self._base_calls():
            if one_row:
                if learn:
                    yf = check_target(y)
                    lo, hi = self.predict_interval_one(X, _groups.REFERENCE)
                    self.learn_one(X, yf, w)
                    ya = np.array([yf])
                else:
                    lo, hi = self.predict_interval_one(X, _groups.REFERENCE)
                    ya = np.zeros(1)
                pred = None
                lo, hi = np.array([lo]), np.array([hi])
            else:
                if learn:
                    ya = check_targets(y, n)
                    pred, iv = self.predict_learn_many(X, ya, _groups.REFERENCE, w)
                else:
                    ya = np.zeros(n)
                    pred, iv = self.predict(X), self.predict_interval(X, _groups.REFERENCE)
                lo, hi = iv[:, 0], iv[:, 1]
        self.group_commit(plan)
        out_lo, out_hi = self.group_run(plan, lo, hi, ya, learn)
        return pred, out_lo, out_hi

    # (the three steps of a grouped call, also driven by the distributed layer, whose driver
    # commits a batch's new groups when it submits the batch and runs the windows once the
    # shards return the batch's reference intervals)
    def group_plan(self, X, groups, n: int, learn: bool, alphas=_NO_LEVELS):
        """The group cells of the ``n`` rows of ``X`` (their values read from ``groups=``, else
        from the model's ``groups``) and the groups new to this model when ``learn``; the
        values and levels are checked here and nothing changes.  An opaque plan for
        :meth:`group_commit` and :meth:`group_run`."""
        return self._group_plan(X, groups, n, False, learn, alphas)

    def _group_plan(self, X, groups, n, one_row, learn, alphas):
        state = self.__dict__.get("_groups")
        families = _groups.check_groups(self.groups)
        rule = _groups.multivalid_of(self.groups)
        columns = rule.columns(alphas) if rule is not None else None
        names = list(self.feature_names_in_)
        cols = _groups.call_values(groups, families, X, names, n, one_row,
                                   None if state is None else state.n_families)  # fmt: skip
        if state is None:
            state = _groups.GroupCalibration(self._group_window(), len(cols), rule)
        elif rule is not None and state.__dict__.get("mvp_v") is None:
            raise ValueError("this model's groups are calibrated by Mondrian windows, not "
                             "Multivalid: clone it to start multivalid groups")  # fmt: skip
        elif rule is not None and state.mvp_v.shape[:2] != (len(rule.levels()), rule.buckets):
            raise ValueError("Multivalid alphas or buckets changed after learning started")
        ids, new = state.lookup(cols, learn)
        return state, ids, new, rule, columns, alphas

    def group_commit(self, plan) -> None:
        """Keep the plan's group state and add its new groups (the call is accepted)."""
        state, _, new = plan[:3]
        self.__dict__["_groups"] = state
        state.commit(new)

    def group_run(self, plan, lo, hi, ya, learn: bool):
        """``(lower, upper)``, each ``(n, levels)``: the planned rows' intervals from their
        reference intervals ``lo``, ``hi`` (the method's, at :data:`~._groups.REFERENCE`, made
        before learning each row) and the group windows before each row; the rows' scores
        (targets ``ya``) enter the windows after when ``learn``."""
        state, ids, _, rule, columns, alphas = plan
        if rule is None:
            return state.run(ids, lo, hi, ya, learn, alphas)
        out_lo, out_hi = state.run_multivalid(ids, lo, hi, ya, learn, rule, self.seed or 0)
        return out_lo[:, columns], out_hi[:, columns]

    @contextmanager
    def _base_calls(self):
        """Inside: the calls run the method's own form (not the grouped one)."""
        self._in_base = True
        try:
            yield
        finally:
            self._in_base = False

    def _group_window(self) -> int:
        """The groups' window: the method's calibration size, else
        :data:`~._groups.DEFAULT_WINDOW`."""
        c = getattr(self, "calibration_size", None)
        return int(c) if isinstance(c, numbers.Integral) else _groups.DEFAULT_WINDOW

    @property
    def group_state_(self):
        """The group windows (:class:`~._groups.GroupCalibration`), or None."""
        return self.__dict__.get("_groups")

    def _grouped_predict_learn_many(self, X, y, alpha=0.1, w=None, groups=None):
        alphas, scalar = check_alphas(alpha)
        if "_forest" not in self.__dict__:
            return self._first_call(type(self)._grouped_predict_learn_many, X, y, alpha, w,
                                    groups)  # fmt: skip
        pred, lo, hi = self._grouped(X, y, w, groups, alphas, True, False)
        return pred, stack_bounds(lo, hi, scalar)

    def _grouped_learn_many(self, X, y, w=None, groups=None):
        if "_forest" not in self.__dict__:
            return self._first_call(type(self)._grouped_learn_many, X, y, w, groups)
        self._grouped(X, y, w, groups, _NO_LEVELS, True, False)
        return self

    def _grouped_predict_interval(self, X, alpha=0.1, groups=None):
        alphas, scalar = check_alphas(alpha)
        out = self._grouped(X, None, None, groups, alphas, False, False)
        if out is None:
            with self._base_calls():
                return self.predict_interval(X, alpha)
        return stack_bounds(out[1], out[2], scalar)

    def _grouped_learn_one(self, x, y, w=1.0, groups=None):
        if "_forest" not in self.__dict__:
            return self._first_call(type(self)._grouped_learn_one, x, y, w, groups)
        self._grouped(x, y, w, groups, _NO_LEVELS, True, True)

    def _grouped_predict_interval_one(self, x, alpha=0.1, groups=None):
        alphas, scalar = check_alphas(alpha)
        out = self._grouped(x, None, None, groups, alphas, False, True)
        if out is None:
            with self._base_calls():
                return self.predict_interval_one(x, alpha)
        lo, hi = out[1][0], out[2][0]
        if scalar:
            return (float(lo[0]), float(hi[0]))
        return [(float(lo[a]), float(hi[a])) for a in range(alphas.shape[0])]

    def _attach_px(self) -> None:
        """After a call of the Python path: keep the forest engine's per-example object for the
        next calls (the trees exist; the engine's current one), or False for an engine of
        another kind, which has none."""
        f = self.__dict__.get("_forest")
        e = None if f is None else f.__dict__.get("engine_")
        if e is None or self._px is False:
            return
        path = getattr(e, "example_path", None)
        if path is None:
            self._px = False
        elif e.fitted:
            self._px = path() or False

    _one_kernel = None  # a method's per-example interval: (row, alphas, lo, hi) -> None
    # a method's per-example learning of the row in the engine's row buffer: (row, y, w) -> None
    _learn_row = None

    def _one_scratch(self, n: int):
        s = self.__dict__.get("_one_lohi")
        if s is None or s[0].shape[0] < n:
            s = self._one_lohi = (np.empty(max(n, 4)), np.empty(max(n, 4)))
        return s

    @property
    def n_features_in_(self) -> int:
        """Features seen so far (the forest's; 0 before learning)."""
        f = self.__dict__.get("_forest")
        return f.n_features_in_ if f is not None else 0

    @property
    def feature_names_in_(self) -> list:
        f = self.__dict__.get("_forest")
        return f.feature_names_in_ if f is not None else []

    @property
    def n_seen(self) -> int:
        return self.__dict__.get("_n_seen", 0)

    @property
    def drift_stats_(self) -> dict:
        """The forest's drift counts (:attr:`OnlineForestRegressor.drift_stats_`)."""
        return self.forest_.drift_stats_

    @property
    def memory_bytes(self) -> int:
        f = self.__dict__.get("_forest")
        g = self.__dict__.get("_groups")
        own = self._own_bytes() + (g.nbytes() if g is not None else 0)
        return f.memory_bytes + own if f is not None else 0

    def _own_bytes(self) -> int:
        return 0

    # --- the label guard (docs/intervals.md, "Label glitches") -----------------------------------
    def _label_guard(self) -> np.ndarray:
        """The label guard's state (a fresh one at the first learnt row, or in a model saved
        before the guard)."""
        g = self.__dict__.get("label_guard_")
        if g is None:
            g = self.label_guard_ = new_state()
        return g

    def guard_labels(self, ya: np.ndarray, wa: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(labels, weights)`` the trees learn rows ``ya``, ``wa`` with, through this method's
        label guard (which moves on): a flagged row's label clipped, its weight 0.  For a
        driver whose trees learn elsewhere (:mod:`streamforest.distributed`); the method's own
        learning calls guard their rows themselves."""
        ya, wa, _ = guarded(self._label_guard(), ya, wa)
        return ya, wa

    @property
    def memory_budget_bytes(self) -> int | None:
        """The budget of the models this method learns, in bytes: the sum of the
        ``max_memory_mb`` of its forest and of its auxiliary ones (e.g.
        :class:`NormalizedConformal`'s residual and bias forests); None if one is unbounded, 0
        before learning.  Its calibration sets and group windows come on top (``memory_bytes``
        counts them)."""
        d = self.__dict__
        held = [v for k, v in d.items() if k.startswith("_") and isinstance(v, Estimator)]
        return memory_budget(held)
