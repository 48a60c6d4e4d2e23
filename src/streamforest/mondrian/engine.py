"""The engine of an aggregated Mondrian forest: its trees' arrays behind the forest interface.

A :class:`MondrianEngine` is to :class:`~streamforest.AMFRegressor` and
:class:`~streamforest.AMFClassifier` what :class:`~streamforest.engine.core.Engine` is to the
Hoeffding forests: the door through which the model and the interval methods reach the trees.
It offers the public members of the forest interface that do not depend on how trees are
stored (see :mod:`streamforest.engine.core`): encoding a row into :attr:`row_buffer`
(:meth:`encode_one`, :attr:`synced_version`, :meth:`sync`), :attr:`fitted`,
:meth:`bagging_weights`, :meth:`learn`, :meth:`predict_learn`, :meth:`predict_trees`,
:meth:`aggregate` (the mean), :meth:`apply`, and the per-example :meth:`learn_one`,
:meth:`learn_row` and :meth:`predict_one` with :attr:`last_predictions`.

Mondrian nodes do not fit the engine's arena (a tree kind's :class:`~streamforest.tree_kinds.
state.TreeState`): every node, not only a leaf, holds statistics, a range box over all features,
a birth time and two aggregation weights, and a split inserts a node *above* a subtree.  So the
members that hand out the arena or run a compiled pass over it (``arena``, ``handle``,
``run``, ``learn_row_with``, ``int_of``, ``restrict``, a method kernel in
``learn_one``) raise ``TypeError`` naming what is missing: the interval methods that run their
own kernels over the arena's trees (out-of-bag per-example calibration, leaf sketches, leaf
variances, per-leaf member lists) cannot take this forest.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import streamforest._core as _core

from .. import rng as random_state
from ..concurrency import PicklableLock
from ..engine import budget
from ..features import kernel_array
from . import layout
from . import state as tree_arrays

_passes = _core.mondrian  # the trees' compiled passes (src/core/mondrian)
_bagging = _core.engine  # bagging weights and the mean of the trees' predictions
_INITIAL_NODES = 16
# the part of the budget the trees' nodes may hold: growing them copies every tree's arrays
# (doubled: the old and the new are held at once, 1.5x the new at the last step), so at most
# 80% is held, and 1.2x the budget at a growth's peak (1.5x at 100%: a default AMF on a stream
# that filled its 256 MiB peaked at 562 MiB of resident memory, benchmarks/growth_memory.py)
_HELD_SHARE = 0.8
_NOT_ARENA = (
    "{what}: the trees of an aggregated Mondrian forest are not in the engine's arena (a "
    "Mondrian node holds statistics, a range box and aggregation weights at every node), so "
    "compiled passes over the arena's trees do not apply to them"
)


class MondrianEngine:
    """The trees of one aggregated Mondrian forest (see the module docstring).

    Parameters
    ----------
    n_trees
        Number of trees.
    features
        The model's feature space (shared with the model).
    step, use_aggregation, dirichlet, split_pure
        The trees' aggregation (see :class:`~streamforest.AMFRegressor`).
    classify
        Classification trees (class weights at the nodes) instead of regression trees.
    max_nodes
        Nodes a tree may hold (``None``: no limit); a tree at its limit no longer splits.
    max_memory_mb
        Memory budget of all trees (``None``: none): a tree's node limit is its share.
    bagging
        Poisson rate of online bagging (0: every tree learns every row with its weight).
    seed
        Seed of the trees' random states and of the bagging weights.
    n_jobs
        Threads that run trees in parallel on chunks of at least 256 rows.
    """

    parallel_rows = 256
    aggregation = _bagging.AGG_MEAN  # the trees' predictions are averaged

    def __init__(self, n_trees, features, step, use_aggregation, dirichlet, split_pure,
                 classify, max_nodes, max_memory_mb, bagging, seed, n_jobs):  # fmt: skip
        seeds = np.random.SeedSequence(seed).generate_state(n_trees + 1, np.uint64)
        self.seeds = [int(s) for s in seeds[:n_trees]]
        self.rng = random_state.new_state(int(seeds[-1]))  # the bagging weights'
        self.features = features
        self.classify = bool(classify)
        self.max_nodes = max_nodes
        self.max_memory_mb = max_memory_mb
        self.bagging = float(bagging)
        self.n_jobs = int(n_jobs)
        self.settings = np.zeros(layout.N_PARAMS)
        self.settings[layout.P_STEP] = float(step)
        self.settings[layout.P_AGGREGATE] = 1.0 if use_aggregation else 0.0
        self.settings[layout.P_DIRICHLET] = float(dirichlet)
        self.settings[layout.P_SPLIT_PURE] = 1.0 if split_pure else 0.0
        self.trees = None  # made when the first feature is known (sync)
        self.tree_features = 0  # the features and values the trees' records hold
        self.tree_values = 1
        self.nominal = np.zeros(0, np.int8)
        self.fitted = False
        self.synced_version = -1
        self.n_classes = 0  # classification: classes known (set by the model)
        self.synced_classes = 0
        self.target_shift = None  # regression: the first target learnt (the trees learn y - it)
        self.n_trees_ = int(n_trees)
        self._lock = PicklableLock()
        self._scratch()

    # --- state ------------------------------------------------------------------------------------
    def _scratch(self) -> None:
        T = self.n_trees_
        self.row_buffer = np.empty(0)
        self.last_predictions = np.zeros(T)
        self._weights = np.zeros(T)
        self._weights_column = self._weights.reshape(T, 1)  # (the same memory)
        self._one_weight = np.zeros(1)
        P = self.tree_features
        self._extension = np.zeros((T, max(P, 1)))
        self._saved = np.zeros((T, max(P, 1)))
        self._clean = np.zeros(P)
        self._most = 0 if self.trees is None else int(self.trees.meta[:, 0].max())

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in ("row_buffer", "last_predictions", "_weights", "_weights_column", "_one_weight",
                  "_extension", "_saved", "_clean", "_most", "_pool"):  # fmt: skip
            d.pop(k, None)
        if d.get("trees") is not None:
            d["trees"] = tree_arrays.trimmed(d["trees"])
        return d

    def __setstate__(self, d):
        seeds = d.get("seeds")
        n_trees = len(seeds) if isinstance(seeds, list) else -1
        rng = d.get("rng")
        if not (n_trees >= 1 and d.get("n_trees_") == n_trees and isinstance(rng, np.ndarray)
                and rng.dtype == np.uint64 and rng.shape == (1,)):  # fmt: skip
            raise ValueError("malformed Mondrian trees: tree count or random state")
        trees = d.get("trees")
        if trees is not None:
            features = d.get("features")
            n_features = len(features) if hasattr(features, "__len__") else -1
            n_values = max(int(d.get("synced_classes", 0)), 1) if d.get("classify") else 1
            if d.get("tree_features") != n_features or d.get("tree_values") != n_values:
                raise ValueError("malformed Mondrian trees: widths not the features' and classes'")
            tree_arrays.check(trees, n_trees, n_features, n_values)
            nominal = d.get("nominal")
            if not (isinstance(nominal, np.ndarray) and nominal.dtype == np.int8
                    and nominal.shape == (n_features,)):  # fmt: skip
                raise ValueError("malformed Mondrian trees: nominal flags not one per feature")
            settings = d.get("settings")
            if not (isinstance(settings, np.ndarray) and settings.dtype == np.float64
                    and settings.shape == (layout.N_PARAMS,)):  # fmt: skip
                raise ValueError("malformed Mondrian trees: settings")
            step, aggregate, dirichlet, pure, limit, _ = settings.tolist()
            if not (0 < step < np.inf and aggregate in (0.0, 1.0) and 0 < dirichlet < np.inf
                    and pure in (0.0, 1.0) and 0 <= limit < np.inf):  # fmt: skip
                raise ValueError("malformed Mondrian trees: settings out of their ranges")
            classes = d.get("synced_classes", 0) if d.get("classify") else 0
            if settings[layout.P_CLASSES] != classes or d.get("n_classes") != classes:
                raise ValueError("malformed Mondrian trees: class count")
        self.__dict__.update(d)
        self._scratch()

    @property
    def n_trees(self) -> int:
        return self.n_trees_

    @property
    def forest_trees(self) -> int:
        return self.n_trees_

    @property
    def memory_bytes(self) -> int:
        """Bytes of the trees' arrays (allocated room)."""
        return tree_arrays.nbytes(self.trees) if self.trees is not None else 0

    @property
    def held_bytes(self) -> int:
        """What the process holds for the trees: their arrays, each one allocation of all the
        trees (no row ends shared with other rows, as a tree arena's; see
        :attr:`streamforest.engine.core.Engine.held_bytes`)."""
        return self.memory_bytes

    @property
    def capacity(self) -> int:
        return self.trees.nodes.shape[1] if self.trees is not None else 0

    def node_limit(self) -> int:
        """Nodes a tree may hold (0: no limit): ``max_nodes`` and the memory budget's share."""
        limit = int(self.max_nodes or 0)
        if self.max_memory_mb is not None and self.trees is not None:
            P, K = self.tree_features, self.tree_values
            held = _HELD_SHARE * self.max_memory_mb * 2**20  # (growing copies the arrays)
            share = int(held / (self.n_trees_ * tree_arrays.node_bytes(P, K)))
            share = max(share, 1)
            limit = share if limit == 0 else min(limit, share)
        return limit

    def feature_room(self) -> int | None:
        """The most features the trees may be widened to, each staying in its share of the budget
        whatever it learns next: a node limit of at least ``2 * FEATURE_LEAVES`` nodes and twice
        the nodes it holds (its arrays, and their copy while widened) as wide (None without a
        budget; see
        :meth:`streamforest.engine.tree_lifecycle.TreeLifecycle.feature_room`)."""
        if self.max_memory_mb is None:
            return None
        share = _HELD_SHARE * self.max_memory_mb * 2**20 / self.n_trees_
        K = max(self.n_classes, 1) if self.classify else 1
        held = max(self.capacity, 2 * budget.FEATURE_LEAVES + 2)

        def fits(q: int) -> bool:  # (widened, the old arrays and the new are both held)
            return 2 * held * tree_arrays.node_bytes(q, K) <= share or (
                q <= budget.FEW_FEATURES and self.capacity * tree_arrays.node_bytes(q, K) <= share
            )

        lo, hi = max(1, len(self.features)), budget.MAX_FEATURES
        if not fits(lo) or fits(hi):
            return lo if not fits(lo) else hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    def update_feature_room(self) -> None:
        """Set the feature space's cap to :meth:`feature_room`."""
        if self.max_memory_mb is not None:
            self.features.set_max_features(self.feature_room())
            self.features.room_refresh = None  # (set again after each growth: _grow)

    # --- life cycle -------------------------------------------------------------------------------
    def encode_one(self, x, learn: bool) -> np.ndarray:
        """The encoded row of dict ``x``, written into :attr:`row_buffer` (valid until the next
        call)."""
        r = self.features.encode_dict_into(x, learn, self.row_buffer)
        if r is not self.row_buffer:
            r = self.row_buffer = r.reshape(-1)
        return r

    def sync(self) -> None:
        """Make the trees (once a feature is known) and widen them to the features and classes
        known."""
        fs = self.features
        if fs.version == self.synced_version and self.n_classes == self.synced_classes:
            if fs.max_features is None and self.max_memory_mb is not None:
                self.update_feature_room()  # (a model saved before feature caps)
            return
        p = len(fs)
        if p == 0:
            self.update_feature_room()
            return
        with self._lock:
            K = max(self.n_classes, 1) if self.classify else 1
            if self.trees is None:
                self.trees = tree_arrays.allocate(self.seeds, _INITIAL_NODES, p, K)
            else:
                try:  # (all trees' arrays made anew, or none)
                    self.trees = tree_arrays.resized(self.trees, self.tree_values, self.capacity,
                                                     p, K)  # fmt: skip
                except BaseException:  # (a MemoryError): the call's new features forgotten
                    fs.forget_features(self.tree_features)
                    self.synced_version = fs.version
                    raise
            budget.release_free_memory()  # the old arrays (freed; glibc would keep them)
            self.tree_features, self.tree_values = p, K
            self._clean = np.zeros(p)
            self.nominal = np.array(fs.nominal, dtype=np.int8)
            self.settings[layout.P_CLASSES] = self.n_classes if self.classify else 0
            self.settings[layout.P_MAX_NODES] = self.node_limit()
            self._extension = np.zeros((self.n_trees_, p))
            self._saved = np.zeros((self.n_trees_, p))
            self.fitted = True
            self.update_feature_room()
        self.synced_version = fs.version
        self.synced_classes = self.n_classes

    def _grow(self) -> None:
        """Room for more nodes: twice as much, or the node limit and two once doubling twice
        would pass it (so the old arrays, copied at once, are at most half the new: growing
        from 4,096 nodes to a limit of 4,104 held both, 1.6x the budget)."""
        C = self.capacity
        limit = int(self.settings[layout.P_MAX_NODES])
        if limit <= 0:
            new = 2 * C
        else:
            new = max(C, limit + 2 if 4 * C > limit + 2 else 2 * C)
        if new == C:  # (a tree at its limit splits no more: the passes never stop for room)
            return
        P, K = self.tree_features, self.tree_values
        self.trees = tree_arrays.resized(self.trees, K, new, P, K)
        budget.release_free_memory()  # the old arrays (freed; glibc would keep them)
        self.update_feature_room()  # more nodes: fewer features fit

    # --- bagging and aggregation ------------------------------------------------------------------
    def bagging_weights(self, wa: np.ndarray) -> np.ndarray:
        """``(n_trees, n)`` weights of the next ``n`` rows: Poisson bagging weights times the
        sample weights, or the sample weights (no bagging)."""
        wa = kernel_array(wa)
        if self.bagging <= 0.0:
            return np.repeat(wa[None, :], self.n_trees_, axis=0)  # (a new, writeable array)
        out = np.empty((self.n_trees_, wa.shape[0]))
        _bagging.draw_weights(self.rng, self.bagging, wa, out)
        return out

    def aggregate(self, P: np.ndarray) -> np.ndarray:
        """The forest's predictions from ``(n_trees, n)`` tree predictions: their mean."""
        out = np.empty(P.shape[1])
        _bagging.mean_columns(kernel_array(P), out)
        return out

    # --- batches ----------------------------------------------------------------------------------
    def _shifted(self, ya: np.ndarray) -> tuple[np.ndarray, bool]:
        """Regression targets less the shift (set by the first row ever learnt)."""
        if self.classify:
            return kernel_array(ya), False
        first = self.target_shift is None and ya.shape[0] > 0
        if first:
            self.target_shift = float(ya[0])
        return np.ascontiguousarray(ya - (self.target_shift or 0.0), dtype=np.float64), first

    def executor(self) -> ThreadPoolExecutor:
        ex = self.__dict__.get("_pool")
        if ex is None:
            ex = self._pool = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="streamforest")
        return ex

    def _each_tree(self, run, trees, n: int) -> None:
        if self.n_jobs > 1 and n >= self.parallel_rows and len(trees) > 1:
            list(self.executor().map(run, trees))
        else:
            for t in trees:
                run(t)

    def rows(self, Xa) -> np.ndarray:
        """``Xa`` as the kernels read it: float64, C order, the trees' features (missing ones
        NaN, later ones dropped), nominal codes < 0 (unseen categories) as NaN."""
        P = self.tree_features
        n, p = Xa.shape
        X = Xa
        if p != P:
            X = np.full((n, P), np.nan)
            X[:, : min(p, P)] = Xa[:, : min(p, P)]
        if self.nominal.any():
            X = np.array(X, dtype=np.float64, order="C")  # (a copy: cleaned in place)
            _passes.clean_rows(self.nominal, X)
        return kernel_array(X)

    def _learn_pass(self, Xa, ya, W, P) -> None:
        n = Xa.shape[0]
        X = self.rows(Xa)
        W = kernel_array(W)
        predict = P is not None
        out = P if predict else np.zeros((1, 1))
        stop = [0] * self.n_trees_

        def run(t):
            tr = self.trees
            stop[t] = _passes.learn_rows(
                tr.nodes, tr.meta, tr.tree_rng, self._extension, self._saved, self.settings, t, X,
                ya, W, stop[t], predict, out,
            )  # fmt: skip

        todo = list(range(self.n_trees_))
        while todo:
            self._each_tree(run, todo, n - min(stop[t] for t in todo))
            todo = [t for t in todo if stop[t] < n]
            if todo:
                self._grow()
        self._most = int(self.trees.meta[:, 0].max())

    def learn(self, Xa, ya, W, wa) -> None:
        """Every tree learns the rows with its weights ``W[t]``."""
        if not Xa.shape[0]:
            return
        y, _ = self._shifted(ya)
        self._learn_pass(Xa, y, W, None)

    def predict_learn(self, Xa, ya, W, wa) -> np.ndarray:
        """``(n_trees, n)`` regression predictions made before learning each row; the trees
        learn (as :meth:`learn`)."""
        n = Xa.shape[0]
        P = np.zeros((self.n_trees_, n))
        if not n:
            return P
        y, first = self._shifted(ya)
        self._learn_pass(Xa, y, W, P)
        P += self.target_shift
        if first:  # row 0 was predicted before any target was known
            P[:, 0] = 0.0
        return P

    def predict_trees(self, Xa, n_classes: int = 0) -> np.ndarray:
        """``(n_trees, n)`` tree predictions, or for a classifier (``n_classes`` > 0)
        ``(n_trees, n, n_classes)`` class probabilities (zeros before any tree exists; the trees
        are synced to the features and classes known first)."""
        if n_classes:
            self.sync()  # (a class registered by a rejected call: the trees widen first)
        n = Xa.shape[0]
        T = self.n_trees_
        P = np.zeros((T, n, n_classes) if n_classes else (T, n))
        if not (self.fitted and n):
            return P
        X = self.rows(Xa)
        tr = self.trees
        if n_classes:
            if n_classes != self.n_classes:
                raise ValueError(f"the trees hold {self.n_classes} classes, not {n_classes}")

            def run(t):
                _passes.predict_class_rows(tr.nodes, self.settings, t, X, P)

        else:

            def run(t):
                _passes.predict_rows(tr.nodes, self.settings, t, X, P)

        self._each_tree(run, range(T), n)
        if not n_classes and self.target_shift is not None:
            P += self.target_shift
        return P

    def apply(self, t: int, Xa) -> np.ndarray:
        """The leaf node of tree ``t`` that each row of ``Xa`` reaches."""
        out = np.zeros(Xa.shape[0], dtype=np.int64)
        if self.fitted:
            _passes.apply_rows(self.trees.nodes, int(t), self.rows(Xa), out)
        return out

    # --- one example ------------------------------------------------------------------------------
    def learn_one(self, row, y, w, kernel=None, extra=(), memo=False, handle=None):
        """Every tree learns one encoded row (bagging weights drawn) in one compiled call;
        returns the trees' regression predictions made before learning (scratch, overwritten by
        the next call; zeros for a classifier)."""
        if kernel is not None or handle is not None:
            raise TypeError(_NOT_ARENA.format(what="a method kernel in learn_one"))
        if not (row.flags.c_contiguous and row.flags.writeable and row.dtype == np.float64
                and row.ndim == 1):  # (the entry points take exactly this type)  # fmt: skip
            row = kernel_array(row).reshape(-1)
        return self._one(row, float(y), float(w))

    def learn_row(self, y: float, w: float):
        """:meth:`learn_one` of :attr:`row_buffer`: the per-example hot path."""
        return self._one(self.row_buffer, y, w)

    def takes_array_rows(self) -> bool:
        """Whether a one-row batch may run as one example (see the engine's): once the trees
        exist."""
        return self.fitted

    def use_row(self, encoded: np.ndarray) -> np.ndarray:
        """An encoded array row copied into :attr:`row_buffer` for the per-example calls (the
        trees keep no memo of a prediction: nothing else to drop)."""
        row = self.row_buffer
        if row.shape[0] != encoded.shape[0]:
            row = self.row_buffer = np.empty(encoded.shape[0])
        self.features.forget_written()
        row[:] = encoded
        return row

    def _one(self, row, y, w):
        if self._most + 2 > self.capacity:
            self._grow()
        wt = self._weights
        if self.bagging > 0.0:
            self._one_weight[0] = w
            _bagging.draw_weights(self.rng, self.bagging, self._one_weight,
                                        self._weights_column)  # fmt: skip
        else:
            wt[:] = w
        shift = 0.0
        predict = not self.classify
        if predict:
            if self.target_shift is None:
                self.target_shift = float(y)  # (the predictions of empty trees are 0 then)
            else:
                shift = self.target_shift
            y = y - self.target_shift
        tr = self.trees
        self._most = _passes.learn_one(
            tr.nodes, tr.meta, tr.tree_rng, self._extension, self._saved, self.settings,
            self.nominal, row, self._clean, y, wt, predict, shift, self.last_predictions,
        )  # fmt: skip
        return self.last_predictions

    def predict_one(self, row) -> float:
        """The forest's regression prediction for one encoded row (each tree's in
        :attr:`last_predictions`)."""
        if not (row.flags.c_contiguous and row.flags.writeable and row.dtype == np.float64
                and row.ndim == 1):  # (the entry points take exactly this type)  # fmt: skip
            row = kernel_array(row).reshape(-1)
        tr = self.trees
        shift = self.target_shift if self.target_shift is not None else 0.0
        return _passes.predict_one(tr.nodes, self.settings, self.nominal, row, self._clean, shift,
                                   self.last_predictions)  # fmt: skip

    def predict_proba_one(self, row, scratch: np.ndarray, mean: np.ndarray) -> int:
        """The mean class probabilities of one encoded row into ``mean``; returns the most
        probable class."""
        if not (row.flags.c_contiguous and row.flags.writeable and row.dtype == np.float64
                and row.ndim == 1):  # (the entry points take exactly this type)  # fmt: skip
            row = kernel_array(row).reshape(-1)
        tr = self.trees
        return _passes.predict_proba_one(tr.nodes, self.settings, self.nominal, row, self._clean,
                                         scratch, mean)  # fmt: skip

    def remember(self, row) -> None:
        """(No memo of the last prediction: a learn routes the row again.)"""

    # --- what the trees do not offer --------------------------------------------------------------
    @property
    def arena(self):
        raise TypeError(_NOT_ARENA.format(what="the engine's arena"))

    def handle(self):
        raise TypeError(_NOT_ARENA.format(what="the per-example handle of the arena"))

    def learn_row_with(self, kernel, handle, y, w, s):
        raise TypeError(_NOT_ARENA.format(what="a method's per-example kernel (learn_row_with)"))

    def run(self, step, n, before=None, on_reset=None, rows=None):
        raise TypeError(_NOT_ARENA.format(what="a method's per-tree pass (run)"))

    def int_of(self, t, i):
        raise TypeError(_NOT_ARENA.format(what="a tree's counters (int_of)"))

    def restrict(self, trees):
        raise TypeError("the trees of an aggregated Mondrian forest cannot be split over processes")

    # --- counts -----------------------------------------------------------------------------------
    @property
    def n_resets(self) -> np.ndarray:
        return np.zeros(self.n_trees_, np.int64)

    def drift_stats(self) -> dict:
        """No drift detection: every count is 0."""
        keys = ("warnings", "drifts", "background_started", "background_swapped",
                "background_discarded", "background_live", "replacements")  # fmt: skip
        out = {k: 0 for k in keys}
        out["per_tree"] = {k: [0] * self.n_trees_ for k in keys}
        return out


__all__ = ["MondrianEngine"]
