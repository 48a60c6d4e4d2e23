"""One large stream on Ray: the trees of one forest (or interval method) split over actors.

Each actor holds a copy of the model whose engine keeps only its trees
(:meth:`~streamforest.engine.core.Engine.restrict`): a kept tree has the seed it has in the
whole forest, and every copy draws the whole forest's bagging weights from the same generator,
so each tree learns exactly what it learns in the local model.  A batch is put in Ray's object
store once and every actor reads it.  The driver combines the trees' outputs with the local
model's own code, on arrays laid out as the local model lays them out:

- predictions: the ``(n_trees, n)`` tree predictions, stacked in tree order, then the forest's
  aggregation (:meth:`~streamforest.engine.core.Engine.aggregate`, mean or median);
- :class:`~streamforest.OnlineQRF` intervals: each tree's copies of the leaf KLL sketches the
  rows reach, merged by the same mixture query
  (``streamforest._core.quantile.mixture_query``);
- :class:`~streamforest.CPApproximate`: the driver holds the calibration set; while learning,
  the actors return their trees' predictions made before learning each row, and the driver
  draws the same bagging weights (the out-of-bag masks) and runs the method's own score stage.

So predictions and intervals are bit-identical to the local model with the same seed.

An interval method with groups (its ``groups`` parameter, or ``groups=`` given to
:meth:`ShardedForest.learn_many` and :meth:`ShardedForest.predict_interval`) keeps its group
windows on the driver: a learnt batch's new groups are added when it is submitted; the shards
return, made before learning each row, their trees' predictions (CPApproximate, whose score
stage the driver runs) or leaf-sketch records (OnlineQRF, merged by the driver), from which the
driver has each row's interval at the method's reference level, and the windows take the batch
in order once it is learnt (:meth:`~streamforest.intervals.base.IntervalRegressor.group_plan`,
``group_commit``, ``group_run``, the local model's own steps).  A grouped prediction waits for
the batches in flight.
"""

from __future__ import annotations

import numpy as np

import streamforest._core as _core

from ..features import check_targets, check_weights, n_rows
from ..intervals import groups as interval_groups
from ..intervals.base import IntervalRegressor, check_alphas, stack_bounds
from .keyed import check_matrix
from .runtime import DEFAULT_NUM_CPUS, DEFAULT_PLACEMENT_TIMEOUT, GroupFront, WorkerGroup
from .storage import CheckpointStore, model_bytes, read_model, write_model
from .workers import ShardWorker, forest_of, model_kind

_REFERENCE = np.array([interval_groups.REFERENCE])  # a grouped method's reference level


def _seeded(model):
    """A clone of ``model`` with a seed (drawn now when it has none): every shard must draw the
    same bagging weights and tree seeds."""
    fresh = int(np.random.SeedSequence().generate_state(1)[0])
    if isinstance(model, IntervalRegressor):
        f = model.forest
        if model.seed is None and (f is None or f.seed is None):
            return model.clone(seed=fresh)
        return model.clone()
    return model.clone(seed=fresh) if model.seed is None else model.clone()


class ShardedForest(GroupFront):
    """The trees of one forest (or interval method) split over Ray actors (module docstring).

    Parameters
    ----------
    model
        Unfitted forest whose trees can be split over processes (the capabilities tree shards
        and tree members, see :mod:`streamforest.engine.forest_interface`: an
        :class:`~streamforest.OnlineForestRegressor`, mean or median aggregation), or an interval
        method that offers its chunk stages (``shard_stages``: :class:`~streamforest.OnlineQRF`,
        :class:`~streamforest.CPApproximate`) over one.  Without a seed, one is drawn (shards
        must share it).
    n_workers
        Ray actors; the trees are split in contiguous blocks (at most one actor per tree).
    checkpoint_dir
        Directory or fsspec URL for checkpoints (reachable from every node on a cluster);
        None: checkpoints in Ray's object store.
    checkpoint_every
        Rows learnt between checkpoints (the replay buffer holds at most that, plus one batch);
        None: no checkpoints, and a dead worker cannot be restored.
    max_in_flight
        Learning batches outstanding at most (back-pressure).
    address
        Ray address when Ray is not initialised yet (None: a local Ray).
    num_cpus
        CPUs Ray reserves per actor (a fraction is allowed): the default, 0.25, lets several
        groups share a small machine; give 1 to reserve a core per worker.
    placement_timeout
        Seconds to wait for Ray to reserve ``num_cpus`` for every worker; when it cannot (the
        CPUs are held by other actors, or no node is big enough) the constructor raises
        :class:`~streamforest.distributed.WorkerPlacementError` saying what is missing.
        ``None``: wait without a limit (a cluster that adds nodes on demand).
    """

    def __init__(self, model, n_workers=2, checkpoint_dir=None, checkpoint_every=100_000, *,
                 max_in_flight=2, address=None, num_cpus=DEFAULT_NUM_CPUS,
                 placement_timeout=DEFAULT_PLACEMENT_TIMEOUT):  # fmt: skip
        self.kind = model_kind(model)
        if (
            forest_of(model.clone()).aggregation == "weighted"
        ):  # per-tree evidence weights of every tree at each row: not sharded
            raise ValueError("ShardedForest combines mean or median aggregation, not weighted")
        self.model = _seeded(model)
        self._driver = self.model.clone()  # the driver's state: features, bagging, calibration
        T = forest_of(self._driver).engine_.n_trees
        n = int(n_workers) if isinstance(n_workers, int) and not isinstance(n_workers, bool) else 0
        if not 1 <= n <= T:
            raise ValueError(f"n_workers must be in [1, n_trees={T}], got {n_workers!r}")
        self.tree_blocks = [b.tolist() for b in np.array_split(np.arange(T), n)]
        self._template = model_bytes(self.model)
        self._n_learnt = 0
        self._group = _ShardGroup(self)
        self._group._setup(n, checkpoint_dir, checkpoint_every, max_in_flight, address, num_cpus,
                           placement_timeout)  # fmt: skip
        self._group._spawn_all()

    @property
    def workers(self) -> list:
        """The actor handles (worker ``j`` holds trees ``tree_blocks[j]``)."""
        return self._group.workers

    @property
    def n_trees(self) -> int:
        return forest_of(self._driver).engine_.n_trees

    def _grouped(self, groups) -> bool:
        """Whether a call runs per group (the local model's rule: ``groups=`` given, the
        method's ``groups``, or group state learnt)."""
        d = self._driver
        return self.kind != "forest" and (
            groups is not None or d.groups is not None or "_groups" in d.__dict__
        )

    # --- learning ---------------------------------------------------------------------------------
    def learn_many(self, X, y, w=None, groups=None):
        """Learn the rows of ``X`` in order (optional sample weights; ``groups=``: the rows'
        groups, as the local method's ``learn_many`` takes them)."""
        if groups is not None and self.kind == "forest":
            raise TypeError("a forest has no intervals: groups= needs an interval method")
        f = forest_of(self._driver)
        fs = f.feature_space()
        n = n_rows(X)
        ya = check_targets(y, n)
        wa = check_weights(w, n)
        d = self._driver
        plan = d.group_plan(X, groups, n, True) if self._grouped(groups) and n else None
        Xa = check_matrix(X, None)
        Xa = f.pad(fs.encode_array(Xa, learn=True))
        if not n:
            return self
        if not len(fs):
            f.learn_featureless(0.0, 0.0)  # a forest refuses rows without any feature
        stage = None
        cp = self.kind == "cp"
        # the trees learn through the driver's label guard, as the local model's do (a glitch
        # label learnt with weight 0: docs/intervals.md, "Label glitches"); the calibration
        # scores the labels as given, as the local score stage does
        yl, wl = d.guard_labels(ya, wa)
        if cp:  # the driver's share of the method's tree stage: weights, calibration slots
            W = f.engine_.bagging_weights(wl)
            slots = np.empty(n, np.int64)
            _core.intervals.ring_slots(d.ring_, W, slots)
            d.store_calibration_rows(slots, Xa)
            stage = (W, slots)
        want = "predictions" if cp else ("records" if plan is not None else None)
        context = (stage, ya, plan) if want else None
        if plan is not None:
            d.group_commit(plan)
        batch = self._group._ray.put((Xa, yl, wl))
        self._n_learnt += n
        self._group._submit({j: (batch, want) for j in range(self.n_workers)}, n, context)
        return self

    def _finish_batch(self, results: dict, context) -> None:
        """A learnt batch's calibration update (CPApproximate's score stage, on the driver),
        then its group windows' (from the rows' reference intervals)."""
        if context is None:
            return
        stage, ya, plan = context
        d = self._driver
        parts = [results[j] for j in range(self.n_workers)]
        reference = _REFERENCE if plan is not None else None
        if stage is not None:
            W, slots = stage
            out = d.learn_scored(np.concatenate(parts, axis=0), W, slots, ya, reference)
            if plan is None:
                return
            lo, hi = out[1], out[2]
        else:
            lo, hi = d.query_records(_merged(parts), reference)
        lo = np.where(np.isnan(lo), -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        d.group_run(plan, lo[:, 0], hi[:, 0], ya, True)

    # --- prediction -------------------------------------------------------------------------------
    def _encode(self, X) -> np.ndarray:
        f = forest_of(self._driver)
        return f.encode_predict(check_matrix(X, None))

    def tree_predictions(self, X) -> np.ndarray:
        """``(n_trees, n)`` every tree's prediction, in tree order."""
        Xa = self._encode(X)
        if not self._n_learnt:
            return np.zeros((self.n_trees, Xa.shape[0]))
        res = self._group._call("predict_trees", {j: (Xa,) for j in range(self.n_workers)})
        return np.concatenate([res[j] for j in range(self.n_workers)], axis=0)

    def predict(self, X) -> np.ndarray:
        """The forest's predictions (as the local model's ``predict``)."""
        P = self.tree_predictions(X)
        return forest_of(self._driver).engine_.aggregate(P)

    def predict_interval(self, X, alpha=0.1, groups=None) -> np.ndarray:
        """Prediction intervals at significance ``alpha`` (a number or a list), as the local
        model's ``predict_interval`` (``groups=``: the rows' groups, as it takes them)."""
        if self.kind == "forest":
            raise TypeError("a forest has no intervals: shard an interval method over it")
        alphas, scalar = check_alphas(alpha)
        d = self._driver
        plan = None
        if self._grouped(groups):
            self._group._drain()  # every learnt batch is in the group windows
            if "_groups" in d.__dict__:  # (else: the method's own intervals, as the local model)
                plan = d.group_plan(X, groups, n_rows(X), False, alphas)
        Xa = self._encode(X)
        n = Xa.shape[0]
        if not self._n_learnt:
            lo = np.full((n, alphas.shape[0]), -np.inf)
            return stack_bounds(lo, -lo, scalar)
        lo, hi = self._intervals(Xa, alphas if plan is None else _REFERENCE)
        if plan is not None:
            lo, hi = d.group_run(plan, lo[:, 0], hi[:, 0], np.zeros(n), False)
        return stack_bounds(lo, hi, scalar)

    def _intervals(self, Xa, alphas):
        """``(lo, hi)``, each ``(n, levels)``: the method's intervals of the encoded rows."""
        n = Xa.shape[0]
        d = self._driver
        if self.kind == "qrf":
            res = self._group._call("sketch_records", {j: (Xa,) for j in range(self.n_workers)})
            lo, hi = d.query_records(_merged([res[j] for j in range(self.n_workers)]), alphas)
        else:
            self._group._drain()  # every learnt batch is in the calibration set
            yhat = forest_of(d).engine_.aggregate(self.tree_predictions(Xa))
            half = d.half_widths(n, alphas)
            lo, hi = yhat[:, None] - half, yhat[:, None] + half
        lo = np.where(np.isnan(lo), -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        return lo, hi

    # --- state ------------------------------------------------------------------------------------
    def stats(self) -> dict:
        """Per worker its trees, memory and leaves; rows kept for replay; restarts and
        checkpoints so far."""
        return self._worker_stats(("memory_bytes", "n_leaves"))

    @classmethod
    def restore(cls, checkpoint_dir, *, checkpoint_every=100_000, max_in_flight=2, address=None,
                num_cpus=DEFAULT_NUM_CPUS,
                placement_timeout=DEFAULT_PLACEMENT_TIMEOUT):  # fmt: skip
        """The sharded forest of the last checkpoint in ``checkpoint_dir`` (new actors, the same
        tree blocks), checkpointing there from then on."""
        store = CheckpointStore(checkpoint_dir)
        m = store.read_manifest()
        if m is None or m.get("kind") != "_ShardGroup":
            raise ValueError(f"{checkpoint_dir!r} holds no ShardedForest checkpoint")
        self = cls.__new__(cls)
        self._driver = read_model(m["driver"])
        self.model = self._driver.clone()
        self.kind = model_kind(self.model)
        self.tree_blocks = m["tree_blocks"]
        self._template = model_bytes(self.model)
        self._n_learnt = int(m["n_learnt"])
        g = self._group = _ShardGroup(self)
        g._setup(int(m["n_workers"]), checkpoint_dir, checkpoint_every, max_in_flight, address,
                 num_cpus, placement_timeout)  # fmt: skip
        g._ckpt_state = list(m["workers"])
        g._spawn_all(g._ckpt_state)
        return self


def _merged(parts) -> tuple:
    """The shards' leaf-sketch records (each as ``workers.sketch_records`` returns them) as one
    record of every tree, in tree order."""
    bufs = [b for p in parts for b in p[0]]  # every shard's trees' items (rows)
    goff = np.ascontiguousarray(np.concatenate([p[1] for p in parts], axis=0))
    glv = np.ascontiguousarray(np.concatenate([p[2] for p in parts], axis=0))
    return bufs, goff, glv


class _ShardGroup(WorkerGroup):
    _actor_class = ShardWorker

    def __init__(self, owner: ShardedForest):
        self._owner = owner

    def _initial_state(self, j: int):
        o = self._owner
        return (o._template, o.tree_blocks[j])

    def _finish(self, seq, results, context) -> None:
        self._owner._finish_batch(results, context)

    def _checkpoint_extra(self, seq: int) -> dict:
        o = self._owner
        target = self._store.file(seq, "driver.sfm")
        write_model(o._driver, target)
        return {"driver": target, "tree_blocks": o.tree_blocks, "n_learnt": o._n_learnt}
