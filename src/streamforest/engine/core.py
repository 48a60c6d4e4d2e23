"""The forest engine: the compiled state of a forest's trees and its life cycle.

An :class:`Engine` owns the trees of one forest (a single tree is an engine of one tree without
bagging) in one :class:`~streamforest.trees._arena.Arena`, and is the one door through which
estimators and interval methods reach them:

- **encode**: rows come from the model's :class:`~streamforest.features.FeatureSpace`;
  :meth:`Engine.sync` creates the trees when the first feature is known and widens them when new
  features emerge;
- **bagging weights**: :meth:`Engine.bagging_weights` (Poisson online bagging, or none);
- **run the trees**: per example, :meth:`Engine.learn_one` / :meth:`Engine.predict_one` (one
  compiled call for every tree); per chunk, :meth:`Engine.run` drives a compiled pass of each
  tree (any kernel ``step(arena, t, start) -> stop``, e.g. an interval method's own pass) on
  ``n_jobs`` threads, growing a tree when its pass stopped for room and replacing it when its
  drift detector fired;
- **aggregate**: :meth:`Engine.aggregate`.

A tree's hyper-parameters come from a *spec*, a :class:`~streamforest.trees.HoeffdingTreeRegressor`
that is never fitted itself (its ``_tree_params`` gives the compiled parameters).  The tree kind is
chosen there: split rule (observers), leaf model and drift detector are parameters of the spec.

Threads: trees write only their own arena rows, so they run concurrently and never wait for each
other.  A tree that outgrows its row reallocates the arena (under a lock, copying every row as it
is); a tree whose pass was running on the old arrays meanwhile copies its own row over when its
call returns (:meth:`Engine.drive`), so no update is lost.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import rng as _rng
from ..compilation import entry_point
from ..sketches import kll
from ..trees import _arena as AR
from ..trees import _kernels as TK
from ..trees import _state as S
from ..trees.observers import rebuild_hash
from . import _kernels as FK

AGGREGATIONS = {"mean": FK.AGG_MEAN, "median": FK.AGG_MEDIAN}
_ENTRY_POINTS: dict = {}  # kernel -> its compiled entry point (see Engine.call)


class _Lock:
    """A re-entrant lock that pickles as a new one (models pickle with their engine)."""

    def __init__(self):
        self._lock = threading.RLock()

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        self.__init__()

    def __enter__(self):
        self._lock.acquire()

    def __exit__(self, *exc):
        self._lock.release()


class Engine:
    """The trees of one forest (see module docstring).

    Parameters
    ----------
    specs
        One tree spec per tree (hyper-parameters; their caps may be lowered by the budget).
    features
        The model's feature space (shared with the model).
    bagging
        Poisson rate of online bagging, 0 for none (each tree learns each row with weight ``w``).
    seed
        Seed of the bagging weights.
    aggregation
        ``"mean"`` or ``"median"`` of the tree predictions.
    max_memory_mb
        Memory budget of all trees (``None``: only each spec's own caps); see
        :class:`~streamforest.OnlineForestRegressor`.
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows.
    """

    parallel_rows = 256  # chunks this long run their trees on threads (when n_jobs > 1)

    def __init__(self, specs, features, bagging=0.0, seed=None, aggregation="mean",
                 max_memory_mb=None, n_jobs=1):  # fmt: skip
        self.specs = list(specs)
        self.features = features
        self.bagging = float(bagging)
        self.rng = _rng.new_state(seed)
        self.aggregation = AGGREGATIONS[aggregation]
        self.max_memory_mb = max_memory_mb
        self.n_jobs = int(n_jobs)
        T = len(self.specs)
        self.arena = AR.empty(T)
        self.created = np.zeros(T, np.int8)
        self._fitted = False
        self.n_resets = np.zeros(T, np.int64)
        self._synced = -1  # the version of the feature space the trees match
        self._lock = _Lock()
        self._scratch()

    def _scratch(self) -> None:
        T = len(self.specs)
        self._wt = np.zeros(T)
        self._p = np.zeros(T)
        self._drifted = np.zeros(T, np.int8)
        self._row = np.empty(0)

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in ("_wt", "_p", "_drifted", "_pool", "_row"):
            d.pop(k, None)
        return d

    def __setstate__(self, d):
        A = d.get("arena")
        if not isinstance(A, AR.Arena):
            raise ValueError("malformed engine state (no tree arena)")
        AR.check(A, d.get("created"))
        self.__dict__.update(d)
        self._scratch()

    # --- shape ------------------------------------------------------------------------------------
    @property
    def n_trees(self) -> int:
        return len(self.specs)

    @property
    def fitted(self) -> bool:
        """Whether every tree exists (once the first feature is known)."""
        return self._fitted

    def _set_created(self, t: int) -> None:
        self.created[t] = 1
        self._fitted = bool(self.created.all())

    def state(self, t: int) -> S.TreeState:
        """Tree ``t``'s state (numpy views, valid until the arena changes)."""
        return AR.load(self.arena, t)

    def params(self, t: int) -> S.TreeParams:
        return AR.params_at(self.arena, t)

    def int_of(self, t: int, i: int) -> int:
        """Entry ``i`` of tree ``t``'s ``ints`` (see :mod:`streamforest.trees._state`)."""
        A = self.arena
        return int(A.ia[t, A.lay[t, 0, 0] + i])

    def tree_bytes(self, t: int) -> int:
        return AR.used_bytes(self.arena, t)

    @property
    def memory_bytes(self) -> int:
        return int(sum(self.tree_bytes(t) for t in range(self.n_trees) if self.created[t]))

    # --- life cycle -------------------------------------------------------------------------------
    def sync(self) -> None:
        """Create the trees (once a feature is known) and widen them to the feature space."""
        fs = self.features
        key = fs.version
        if key == self._synced:
            return
        p = len(fs)
        if p == 0:
            return
        with self._lock:
            for t in range(self.n_trees):
                if not self.created[t]:
                    self._create(t, p)
                elif self.int_of(t, S.I_NFEAT) < p:
                    self._widen(t, p)
                A = self.arena
                A.ia[t, A.lay[t, 0, 0] + S.I_MAXCAT] = fs.max_categories
        self._synced = key

    def _tree_seed(self, t: int):
        seed, k = self.specs[t].seed, int(self.n_resets[t])
        if seed is None or k == 0:
            return seed
        return int(np.random.SeedSequence([int(seed), k]).generate_state(1, np.uint64)[0])

    def _create(self, t: int, p: int) -> None:
        spec = self.specs[t]
        self._apply_memory_budget(spec, p)
        prm = spec._tree_params(p)
        extra = prm.split_rule == S.SPLIT_EXTRA  # no observers: a token bin pool
        st = S.allocate(
            p,
            _rng.new_state(self._tree_seed(t)),
            sketch_k=int(spec.leaf_quantile_k or 0),
            bins=16 if extra else min(4096, int(spec.max_observer_bins)),
            nodes=256,
            leaves=128,
            m_min=prm.m_min if extra else 0,
            alternates=prm.alt_lambda > 0,
        )
        st.ft_nominal[:p] = self.features.nominal
        TK.init_root(st, prm)
        st.ints[S.I_MAXCAT] = self.features.max_categories
        self.arena = AR.store(self.arena, t, st, prm, kept=[False] * len(st))
        self._set_created(t)

    def _widen(self, t: int, p: int) -> None:
        before = st = self.state(t)
        old = int(st.ints[S.I_NFEAT])
        pc = st.ft_nominal.shape[0]
        if p > pc:
            st = S.grow(st, features=max(p, 2 * pc))
        st.ft_nominal[:p] = self.features.nominal
        # new features are observed by every existing leaf (see _choose_features)
        st.lf_mask[:, old:p] = 1
        prm = self.params(t)
        st.lf_scale[:, old:p] = 1.0 / prm.qo_radius if prm.observer == S.OBS_QO else prm.tebst_scale
        if st.lf_xc.shape[2]:  # extremely randomised split: no candidate on a new feature, and
            st.lf_xc[:, old:p, S.XC_THR] = np.nan  # the examples buffered before it lack it
            st.lf_buf[:, 2 + old : 2 + p, :] = np.nan
        st.ints[S.I_NFEAT] = p
        kept = [a is b for a, b in zip(st, before, strict=True)]
        self.arena = AR.store(self.arena, t, st, self.specs[t]._tree_params(p), kept)

    def _apply_memory_budget(self, spec, p: int) -> None:
        """Cap a new tree's bins and leaves so the forest stays within ``max_memory_mb``."""
        if self.max_memory_mb is None:
            return
        share = self.max_memory_mb * 2**20 / self.n_trees / 2  # allocation <= 2x use
        k = spec.leaf_quantile_k
        sketch = 8 * (kll.row_capacity(k) + kll.LV_WIDTH) if k else 0
        # per leaf slot: stats, models, feature statistics, observers' heads; two nodes per leaf
        leaf_bytes = 8 * (12 + 2 * (p + 1) + 4 * p + 3 * p) + p + sketch + 2 * 8 * 13
        bin_bytes = 8 * 11 + 4 * 8 + 2 * 8  # bin row, hash slots (load <= 1/2), split scratch
        spec.max_observer_bins = int(min(spec.max_observer_bins, max(64, share / 2 / bin_bytes)))
        spec.max_leaves = int(min(spec.max_leaves, max(2, share / 2 / leaf_bytes)))

    def reset(self, t: int) -> None:
        """Replace tree ``t`` by a fresh one (after a detected drift)."""
        with self._lock:
            self.n_resets[t] += 1
            self._create(t, len(self.features))

    def make_room(self, t: int) -> None:
        """Grow tree ``t``'s arrays (it stopped for lack of room)."""
        with self._lock:
            before = st = self.state(t)
            prm = self.params(t)
            ints = st.ints
            kw = {}
            k = ints[S.I_NALTS] + 2 if prm.alt_lambda > 0 else 1  # as the kernels' _room
            if ints[S.I_NNODES] + 2 * k > st.nd_feat.shape[0]:
                kw["nodes"] = 2 * st.nd_feat.shape[0] + 2 * k
            free_leaves = ints[S.I_LEAF_NFREE] + st.lf_node.shape[0] - ints[S.I_LEAF_HW]
            if free_leaves < k:
                kw["leaves"] = 2 * st.lf_node.shape[0] + k
            if ints[S.I_CAT_USED] + ints[S.I_MAXCAT] > st.cats.shape[0]:
                kw["cats"] = 2 * (st.cats.shape[0] + ints[S.I_MAXCAT])
            n_bins = st.bn.shape[0]
            if n_bins - ints[S.I_BINS_LIVE] < ints[S.I_NFEAT] and n_bins < prm.max_bins:
                kw["bins"] = min(prm.max_bins, 2 * n_bins)
            if not kw:
                raise RuntimeError("internal error: the tree asked for room it does not need")
            st = S.grow(st, **kw)
            if "bins" in kw:
                rebuild_hash(st)
            kept = [a is b for a, b in zip(st, before, strict=True)]
            self.arena = AR.store(self.arena, t, st, kept=kept)

    def after_stop(self, t: int, stop: int, n: int) -> bool:
        """After tree ``t``'s pass returned ``stop`` (of ``n`` rows): replace the tree if its
        drift detector fired (returns True), else grow it if it stopped for lack of room.  Under
        the lock: the room check may free observer bins, which another tree's reallocation must
        not copy half-done."""
        with self._lock:
            if self.int_of(t, S.I_DRIFT):
                self.reset(t)
                return True
            if stop < n and FK.lacks_room(self.arena, t):
                self.make_room(t)
            return False

    def load_kernels(self) -> None:
        """Load (or compile) kernels that only run when a tree grows, so that a timed run does
        not pay for them; rehashing the observer bins in place changes nothing."""
        if self.fitted:
            with self._lock:
                rebuild_hash(self.state(0))

    # --- bagging and aggregation ------------------------------------------------------------------
    def bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """``(n_trees, n)`` bagging weights of the next ``n`` rows (advances the generator)."""
        out = np.empty((self.n_trees, wa.shape[0]))
        FK.draw_weights(self.rng, self.bagging, wa, out)
        return out

    def aggregate(self, P: np.ndarray) -> np.ndarray:
        """The forest's predictions from ``(n_trees, n)`` tree predictions."""
        if self.aggregation == FK.AGG_MEDIAN:
            return np.median(P, axis=0)
        return P.mean(axis=0)

    # --- running the trees ------------------------------------------------------------------------
    def _carry_row(self, old: AR.Arena, t: int) -> None:
        """Tree ``t`` ran on arena ``old`` while another tree reallocated the arena (copying
        every row as it was then): copy ``t``'s row, which only ``t``'s thread writes, into the
        current arrays."""
        with self._lock:
            cur = self.arena
            if cur is old:
                return
            for a, b in zip((old.fa, old.ia, old.ba), (cur.fa, cur.ia, cur.ba), strict=True):
                b[t, : a.shape[1]] = a[t]

    def drive(self, t: int, step, n: int, before=None, on_reset=None) -> None:
        """Call ``step(arena, t, start) -> stop`` until all ``n`` rows are done.  After each call:
        ``before(stop)`` if given (a pass grows its own buffers there), then the tree is grown if
        it stopped for lack of room, or replaced if its drift detector fired (then
        ``on_reset(stop)`` if given)."""
        i = 0
        while True:
            A = self.arena
            i = step(A, t, i)
            self._carry_row(A, t)  # if another tree reallocated the arena meanwhile
            if before is not None:
                before(i)
            if self.after_stop(t, i, n) and on_reset is not None:
                on_reset(i)
            if i >= n:
                return

    def executor(self) -> ThreadPoolExecutor:
        """The engine's ``n_jobs`` worker threads (created once, not saved)."""
        ex = self.__dict__.get("_pool")
        if ex is None:
            ex = self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="streamforest")
        return ex

    def each_tree(self, run, n: int) -> None:
        """``run(t)`` for every tree, on ``n_jobs`` threads when the chunk is long enough."""
        if self.n_jobs > 1 and n >= self.parallel_rows:
            list(self.executor().map(run, range(self.n_trees)))
        else:
            for t in range(self.n_trees):
                run(t)

    def run(self, step, n: int, before=None, on_reset=None) -> None:
        """:meth:`drive` every tree through ``step``; ``before`` and ``on_reset`` take
        ``(t, stop)``."""

        def one(t):
            b = (lambda stop: before(t, stop)) if before is not None else None
            r = (lambda stop: on_reset(t, stop)) if on_reset is not None else None
            self.drive(t, step, n, b, r)

        self.each_tree(one, n)

    def learn(self, Xa, ya, W) -> None:
        """Every tree learns the rows with its weights ``W[t]``."""
        self.run(lambda A, t, i: FK.learn_rows(A, t, Xa, ya, W, i), Xa.shape[0])

    def predict_learn(self, Xa, ya, W) -> np.ndarray:
        """``(n_trees, n)`` predictions made before learning each row; the trees learn."""
        P = np.zeros((self.n_trees, Xa.shape[0]))
        self.run(lambda A, t, i: FK.predict_learn_rows(A, t, Xa, ya, W, i, P), Xa.shape[0])
        return P

    def predict_trees(self, Xa) -> np.ndarray:
        """``(n_trees, n)`` tree predictions (zeros before any tree exists)."""
        n = Xa.shape[0]
        P = np.zeros((self.n_trees, n))
        if self.fitted and n:

            def run(t):
                FK.predict_rows(self.arena, t, Xa, P)

            self.each_tree(run, n)
        return P

    def apply(self, t: int, Xa) -> np.ndarray:
        out = np.empty(Xa.shape[0], dtype=np.int64)
        FK.apply_rows(self.arena, t, Xa, out)
        return out

    # --- one example ------------------------------------------------------------------------------
    def call(self, kernel, args: tuple):
        """``kernel(*args)`` through its compiled entry point (see
        :func:`streamforest.compilation.entry_point`): the per-example calls skip numba's type
        dispatch, about 0.8 us for an Arena argument.  Only for the engine's own argument types
        (its arena, row buffer and scratch, converted floats), the same for every engine, so the
        entry points are kept once per process (outside the engine: nothing of numba's hangs on
        a model, e.g. for River's memory walk)."""
        ep = _ENTRY_POINTS.get(kernel)
        if ep is None:
            ep = _ENTRY_POINTS[kernel] = entry_point(kernel, args)
        return ep(*args)

    def encode_one(self, x, learn: bool) -> np.ndarray:
        """The encoded row of dict ``x`` (see :meth:`FeatureSpace.encode_dict`), written into the
        engine's row buffer: valid until the next call (the kernels read it and drop it)."""
        r = self.features.encode_dict_into(x, learn, self._row)
        if r is not self._row:  # the general path made a new row: it is the buffer from now on
            r = self._row = r.reshape(-1)
        return r

    def learn_one(self, row: np.ndarray, y: float, w: float, kernel=None, extra=()):
        """Every tree learns one encoded row (bagging weights drawn) in one compiled call.

        ``kernel`` (default :func:`~streamforest.engine._kernels.learn_one`) is called as
        ``kernel(arena, rng, bagging, row, y, w, weights, predictions, drifted, t0, *extra)``;
        a method kernel returns ``(status, result)``, the default ``status``: ``t >= 0`` names a
        tree that lacks room (the trees before it learnt the row: the engine grows it and calls
        again with ``t0 = t``; a new row starts with ``t0 = FRESH``).  Afterwards the
        trees whose drift detector fired are replaced.  Returns the method kernel's result, or
        the trees' predictions made before learning (scratch, overwritten by the next call)."""
        t0 = FK.FRESH
        while True:
            if kernel is None:
                ep = _ENTRY_POINTS.get(FK.learn_one)
                if ep is None:
                    args = (self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                            self._drifted, t0)  # fmt: skip
                    ep = _ENTRY_POINTS[FK.learn_one] = entry_point(FK.learn_one, args)
                status = ep(self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                            self._drifted, t0)  # fmt: skip
                out = self._p
            else:
                args = (self.arena, self.rng, self.bagging, row, y, w, self._wt, self._p,
                        self._drifted, t0, *extra)  # fmt: skip
                status, out = self.call(kernel, args)
            if status == FK.DONE:  # the common case
                return out
            if status < 0:
                break
            self.make_room(status)
            t0 = status
        for t in np.flatnonzero(self._drifted):  # status == DRIFTED
            self.reset(int(t))
        return out

    def predict_one(self, row: np.ndarray) -> float:
        """The forest's prediction for one encoded row."""
        ep = _ENTRY_POINTS.get(FK.predict_one)
        if ep is None:
            return self.call(FK.predict_one, (self.arena, row, self.aggregation, self._p))
        return ep(self.arena, row, self.aggregation, self._p)
