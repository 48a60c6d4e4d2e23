"""The Ray actors' classes (plain classes: :class:`~.runtime.WorkerGroup` makes them actors)
and the per-worker state they save.

- :class:`KeyedWorker` holds a :class:`KeyedShard`, the models of the keys hashed to it;
- :class:`ShardWorker` holds one copy of a forest model (a plain forest or an interval method)
  whose engine keeps only the worker's trees (:meth:`~streamforest.engine.core.Engine.restrict`);
  it returns per-tree outputs that the driver combines.

Both start from model bytes (:func:`streamforest.save`) or a checkpoint's path/URL, and save
their state with :func:`streamforest.save`.
"""

from __future__ import annotations

import time

import numpy as np

from ..base import Estimator
from ..engine.forest_interface import TREE_MEMBERS, TREE_SHARDS, RegressionForest, require
from ..intervals.base import IntervalRegressor
from ..tree_kinds import state as tree_state
from .storage import model_bytes, read_model, write_model


def writable(a):
    """A writable copy of an array Ray handed over (it deserialises arrays read-only, zero-copy
    from its object store, and the compiled passes write some of the arrays they take)."""
    return None if a is None else np.array(a, order="C")


# ------------------------------------------------------------------------------------------------
# keys


def key_groups(keys: np.ndarray):
    """``[(key, rows)]``: each distinct key (a Python value) with its rows, in input order."""
    if keys.shape[0] == 0:
        return []
    uniq, inv = np.unique(keys, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    ends = np.cumsum(np.bincount(inv.reshape(-1), minlength=uniq.shape[0]))
    out = []
    a = 0
    for u in range(uniq.shape[0]):
        b = int(ends[u])
        out.append((uniq[u].item(), order[a:b]))
        a = b
    return out


class KeyedShard(Estimator):
    """The models of the keys one worker owns: a fresh clone of ``model`` per new key.

    Parameters
    ----------
    model
        The unfitted template (cloned for each new key).
    """

    def __init__(self, model=None):
        self.model = model

    @property
    def models_(self) -> dict:
        return self.__dict__.setdefault("_models", {})

    def learn_many(self, keys, X, y, w=None):
        """Each key's model learns its rows of ``(X, y, w)`` (in order)."""
        models = self.models_
        for key, rows in key_groups(keys):
            m = models.get(key)
            if m is None:
                m = models[key] = self.model.clone()
            m.learn_many(X[rows], y[rows], None if w is None else w[rows])
        return self

    def _apply(self, keys, X, call):
        out = None
        for key, rows in key_groups(keys):
            m = self.models_.get(key)
            r = call(m if m is not None else self.model.clone(), X[rows])
            if out is None:
                out = np.empty((keys.shape[0], *r.shape[1:]), r.dtype)
            out[rows] = r
        return out

    def predict(self, keys, X) -> np.ndarray:
        """Each row's prediction by its key's model (an unseen key: by a fresh model)."""
        return self._apply(keys, X, lambda m, Xk: m.predict(Xk))

    def predict_interval(self, keys, X, alpha) -> np.ndarray:
        """Each row's interval by its key's model (an unseen key: by a fresh model)."""
        return self._apply(keys, X, lambda m, Xk: m.predict_interval(Xk, alpha))

    def stats(self) -> dict:
        models = self.models_
        return {
            "n_models": len(models),
            "memory_bytes": int(sum(getattr(m, "memory_bytes", 0) for m in models.values())),
        }


class KeyedWorker:
    """Ray actor: a :class:`KeyedShard` (from a template's or a checkpoint's bytes or path)."""

    def __init__(self, state):
        obj = read_model(state)
        self.shard = obj if isinstance(obj, KeyedShard) else KeyedShard(obj)
        self.busy = self.busy_cpu = 0.0  # seconds learning: wall, CPU (the benchmark's model)

    def learn(self, batch) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        keys, X, y, w = batch
        self.shard.learn_many(keys, writable(X), writable(y), writable(w))
        self.busy += time.perf_counter() - t0
        self.busy_cpu += time.thread_time() - c0

    def predict(self, keys, X):
        return self.shard.predict(keys, writable(X))

    def predict_interval(self, keys, X, alpha):
        return self.shard.predict_interval(keys, writable(X), alpha)

    def stats(self) -> dict:
        return {**self.shard.stats(), "busy_seconds": self.busy, "busy_cpu_seconds": self.busy_cpu}

    def ping(self) -> bool:
        return True

    def model_bytes(self, key):
        m = self.shard.models_.get(key)
        return None if m is None else model_bytes(m)

    def checkpoint(self, target):
        return True, model_bytes(self.shard)

    def checkpoint_to(self, target) -> bool:
        write_model(self.shard, target)
        return True


# ------------------------------------------------------------------------------------------------
# tree shards

SHARDED_NEEDS = (TREE_SHARDS, TREE_MEMBERS)  # the capabilities of a forest split over workers


def model_kind(model) -> str:
    """``"forest"``, ``"qrf"`` or ``"cp"``: how a sharded forest combines the model's trees.  A
    forest is sharded when it has the capabilities :data:`SHARDED_NEEDS` (its members can be
    split over processes); an interval method when it offers its chunk stages
    (``shard_stages``) and its forest has them."""
    if isinstance(model, IntervalRegressor):
        kind = model.shard_stages  # (groups: calibrated by the driver, see sharded.py)
        if kind is None:
            reason = f" ({model.not_sharded})" if model.not_sharded else ""
            raise TypeError(
                f"ShardedForest shards a forest whose trees can be split over processes, or an "
                f"interval method that offers its chunk stages (OnlineQRF, CPApproximate), got "
                f"{type(model).__name__}{reason}; use KeyedModels or a local model for others"
            )
        if model.forest is not None:
            require(model.forest, SHARDED_NEEDS, f"ShardedForest({type(model).__name__})")
        return kind
    if isinstance(model, RegressionForest):
        require(model, SHARDED_NEEDS, "ShardedForest")
        return "forest"
    raise TypeError(
        f"ShardedForest shards a forest or an interval method over one, got "
        f"{type(model).__name__}; use KeyedModels or a local model for others"
    )


def forest_of(model) -> RegressionForest:
    """The forest whose trees run (the model itself, or an interval method's), with its engine
    made (no tree exists before the first batch)."""
    f = model.forest_ if isinstance(model, IntervalRegressor) else model
    f.feature_space()
    return f


def sketch_records(model, Xa: np.ndarray):
    """An OnlineQRF shard's leaf-sketch records of rows ``Xa`` (nothing learnt): ``(items,
    goff, glv)``, ``items[t]`` tree t's copies of the leaf sketches the rows reach (trimmed to
    what they hold), ``goff (T, n)`` each row's offset in it, ``glv (T, n, LV_WIDTH)`` their
    level rows, as the mixture query (``streamforest._core.quantile.mixture_query``) takes them."""
    return trimmed_records(model.sketch_records(Xa), Xa.shape[0], model.forest_.engine_.n_trees)


def trimmed_records(rec, n: int, T: int):
    """The records ``rec`` of ``n`` rows by ``T`` trees as :func:`sketch_records` returns them
    (copies, trimmed to what they hold)."""
    bufs, goff, glv = rec
    goff = np.ascontiguousarray(goff[:T])
    glv = np.ascontiguousarray(glv[:T, :n])
    items = []
    for t in range(T):
        H = glv[t, :, 0]
        ends = glv[t, np.arange(n), H + 1] - glv[t, :, 1] + goff[t]
        items.append(np.array(bufs[t][: int(ends.max()) if n else 0]))
    return items, goff, glv


class ShardWorker:
    """Ray actor: a copy of a forest model that runs only trees ``trees`` (from the template's
    bytes), or a shard restored from a checkpoint (``trees`` None)."""

    def __init__(self, state):
        if isinstance(state, tuple):  # (template bytes, trees): a fresh shard
            template, trees = state
            self.model = read_model(template)
            self.forest = forest_of(self.model)
            self.forest.engine_.restrict(np.asarray(trees, np.int64))
        else:
            self.model = read_model(state)
            self.forest = forest_of(self.model)
        self.busy = self.busy_cpu = 0.0  # seconds learning: wall, CPU (the benchmark's model)

    def learn(self, batch, want):
        """Learn a batch; return, made before learning each row, what the driver asks for
        (``want``): ``"predictions"`` (or True) the trees' predictions ``(T_shard, n)`` (the
        driver's conformal calibration), ``"records"`` the leaf-sketch records as
        :func:`sketch_records` (an OnlineQRF's intervals per group), else nothing."""
        t0, c0 = time.perf_counter(), time.thread_time()
        X, y, w = (writable(a) for a in batch)
        f = self.forest
        Xa, ya, wa = f.prepare_batch(X, y, w)
        n = Xa.shape[0]
        if not n:
            return None
        f.check_fittable()
        e = f.engine_
        P = None
        if want == "records":  # the same weights (drawn there) and learning, with the records
            rec = self.model.learn_records(Xa, ya, wa)
            P = trimmed_records(rec, n, e.n_trees)
        elif want:
            P = e.predict_learn(Xa, ya, e.bagging_weights(wa), wa)
        else:
            e.learn(Xa, ya, e.bagging_weights(wa), wa)
        if self.model is not f:
            self.model.add_seen(n)
        self.busy += time.perf_counter() - t0
        self.busy_cpu += time.thread_time() - c0
        return P

    def predict_trees(self, X) -> np.ndarray:
        """``(T_shard, n)`` the shard's tree predictions."""
        f = self.forest
        Xa = f.encode_predict(writable(X))
        return f.engine_.predict_trees(Xa)

    def sketch_records(self, X):
        """See :func:`sketch_records`."""
        return sketch_records(self.model, self.model.encode_predict(writable(X)))

    def stats(self) -> dict:
        f = self.forest
        e = f.engine_
        return {
            "trees": e.shard[1].tolist() if "shard" in e.__dict__ else list(range(e.n_trees)),
            "memory_bytes": int(self.model.memory_bytes),
            "busy_seconds": self.busy,
            "busy_cpu_seconds": self.busy_cpu,
            "n_leaves": int(sum(e.int_of(t, tree_state.I_NLEAVES) for t in range(e.n_trees)))
            if e.fitted
            else 0,
        }

    def checkpoint(self, target):
        return True, model_bytes(self.model)

    def checkpoint_to(self, target) -> bool:
        write_model(self.model, target)
        return True

    def model_bytes(self) -> bytes:
        return model_bytes(self.model)

    def ping(self) -> bool:
        return True
