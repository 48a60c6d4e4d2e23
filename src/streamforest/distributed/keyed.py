"""Many keyed streams on Ray: one model per key (sensor, product, machine), keys hashed to
actors."""

from __future__ import annotations

import hashlib

import numpy as np

from ..base import Estimator
from ..features import check_targets, check_weights, n_rows
from ..intervals.base import check_alphas
from .runtime import DEFAULT_NUM_CPUS, DEFAULT_PLACEMENT_TIMEOUT, GroupFront, WorkerGroup
from .storage import CheckpointStore, model_bytes, read_model
from .workers import KeyedWorker


def key_hash(key) -> int:
    """A stable 64-bit hash of a key (``str``, ``bytes`` or an integer): the same in every
    process and Python version (Python's own ``hash`` of a string is salted per process)."""
    if isinstance(key, str):
        b = b"s" + key.encode("utf-8", "surrogatepass")
    elif isinstance(key, bytes):
        b = b"b" + key
    elif isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        b = b"i" + str(int(key)).encode()
    else:
        raise TypeError(f"keys must be str, bytes or integers, got {type(key).__name__}")
    return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little")


def check_keys(keys, n: int) -> np.ndarray:
    """``keys`` as a 1-d numpy array of ``n`` strings, bytes or integers."""
    if isinstance(keys, (str, bytes)):
        raise TypeError("keys must be a sequence of keys (one per row), got a single str/bytes")
    try:
        k = np.asarray(keys)
    except Exception as e:  # noqa: BLE001 - ragged input and the like
        raise TypeError(f"keys must be a 1-d sequence of str, bytes or integers: {e}") from None
    if k.dtype.kind == "O":
        kinds = {type(v) for v in k.reshape(-1)}
        if kinds <= {str}:
            k = k.astype(str)
        elif kinds <= {bytes}:
            k = k.astype(bytes)
        elif all(issubclass(t, (int, np.integer)) and not issubclass(t, bool) for t in kinds):
            k = k.astype(np.int64)
        else:
            raise TypeError(
                "keys must all be str, all bytes or all integers, got "
                + ", ".join(sorted(t.__name__ for t in kinds))
            )
    if k.dtype.kind not in "iuUS":
        raise TypeError(f"keys must be str, bytes or integers, got dtype {k.dtype}")
    if k.ndim != 1 or k.shape[0] != n:
        raise ValueError(f"keys must be 1-d with one key per row ({n}), got shape {k.shape}")
    return k


def check_matrix(X, width) -> np.ndarray:
    """``X`` as a C-contiguous float64 matrix (NaN: missing; no infinities) of ``width``
    columns (any width when None)."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        A = np.asarray(X)
    except Exception as e:  # noqa: BLE001 - ragged input and the like
        raise TypeError(f"X must be a 2-d numeric array: {e}") from None
    if A.dtype.kind not in "biuf":
        raise TypeError(f"X must be a 2-d numeric array, got dtype {A.dtype}")
    if A.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (n_samples, n_features), got shape {A.shape}")
    if width is not None and A.shape[1] != width:
        raise ValueError(f"X has {A.shape[1]} columns, the rows learnt so far had {width}")
    A = np.ascontiguousarray(A, dtype=np.float64)
    if np.isinf(A).any():
        raise ValueError("X must not hold infinities (NaN marks a missing value)")
    return A


class KeyedModels(GroupFront):
    """One model per key, the keys spread over Ray actors by a stable hash.

    Each key (a sensor, product, machine...) gets its own model: a fresh clone of ``model``
    (:meth:`~streamforest.base.Estimator.clone`) the first time the key has rows to learn.  The
    keys are hashed (:func:`key_hash`, stable across processes) to ``n_workers`` actors; a batch
    is split by actor, one call per actor, and the results put back in the input order.  Each
    key's model learns exactly its rows in order, so it is the model one would train locally
    on that key's rows.

    Learning is asynchronous: :meth:`learn_many` returns once the batch is submitted, with at
    most ``max_in_flight`` batches outstanding; predictions wait for the batches before them.
    Checkpoints, fault recovery and the cluster address: see :mod:`.runtime` and
    ``docs/distributed.md``.

    Parameters
    ----------
    model
        Unfitted streamforest estimator, the template of every key's model.  Give it a seed:
        a template without one gives every key's model fresh random seeds.
    n_workers
        Ray actors (each holds the models of its keys).
    checkpoint_dir
        Directory or fsspec URL for checkpoints (reachable from every node on a cluster);
        None: checkpoints in Ray's object store.
    checkpoint_every
        Rows learnt between checkpoints (also the bound of the replay buffer, plus one batch);
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
                 max_in_flight=4, address=None, num_cpus=DEFAULT_NUM_CPUS,
                 placement_timeout=DEFAULT_PLACEMENT_TIMEOUT):  # fmt: skip
        if not isinstance(model, Estimator):
            raise TypeError(f"model must be a streamforest estimator, got {type(model).__name__}")
        self.model = model.clone()
        self._template = model_bytes(self.model)
        self._width = None
        self._interval = callable(getattr(self.model, "predict_interval", None))
        self._group = _KeyedGroup(self)
        self._group._setup(n_workers, checkpoint_dir, checkpoint_every, max_in_flight, address,
                           num_cpus, placement_timeout)  # fmt: skip
        self._group._spawn_all()

    # --- routing ----------------------------------------------------------------------------------
    @property
    def workers(self) -> list:
        """The actor handles."""
        return self._group.workers

    def worker_of(self, keys) -> np.ndarray:
        """The worker (index into :attr:`workers`) of each key."""
        k = check_keys(keys, n_rows(keys) if not isinstance(keys, (str, bytes)) else 1)
        return self._route(k)

    def _route(self, keys: np.ndarray) -> np.ndarray:
        if keys.shape[0] == 0:
            return np.zeros(0, np.int64)
        uniq, inv = np.unique(keys, return_inverse=True)
        n = self.n_workers
        home = np.array([key_hash(u.item()) % n for u in uniq], np.int64)
        return home[inv.reshape(-1)]

    def _split(self, keys, *arrays):
        """Worker -> (rows, keys of those rows, each array's rows)."""
        home = self._route(keys)
        out = {}
        for j in range(self.n_workers):
            rows = np.flatnonzero(home == j)
            if rows.shape[0]:
                out[j] = (rows, keys[rows], *(None if a is None else a[rows] for a in arrays))
        return out

    # --- API --------------------------------------------------------------------------------------
    def learn_many(self, keys, X, y, w=None):
        """Each row's key's model learns the row (rows of one key in order)."""
        n = n_rows(X)
        k = check_keys(keys, n)
        ya = check_targets(y, n)
        wa = None if w is None else check_weights(w, n)
        Xa = check_matrix(X, self._width)
        if n == 0:
            return self
        self._width = Xa.shape[1]
        # each part goes to one actor: passed by value (Ray inlines small ones in the call)
        payloads = {j: ((kj, Xj, yj, wj),) for j, (_, kj, Xj, yj, wj) in
                    self._split(k, Xa, ya, wa).items()}  # fmt: skip
        self._group._submit(payloads, n)
        return self

    def _gather(self, method, keys, X, *extra):
        n = n_rows(X)
        k = check_keys(keys, n)
        Xa = check_matrix(X, self._width)
        parts = self._split(k, Xa)
        res = self._group._call(method, {j: (p[1], p[2], *extra) for j, p in parts.items()})
        out = None
        for j, r in res.items():
            if out is None:
                out = np.empty((n, *r.shape[1:]), r.dtype)
            out[parts[j][0]] = r
        return out if out is not None else np.zeros(0)

    def predict(self, keys, X) -> np.ndarray:
        """Each row's prediction by its key's model (an unseen key: an untrained model's)."""
        return self._gather("predict", keys, X)

    def predict_interval(self, keys, X, alpha=0.1) -> np.ndarray:
        """Each row's interval by its key's model (the model's ``predict_interval``)."""
        if not self._interval:
            raise TypeError(f"{type(self.model).__name__} has no predict_interval")
        check_alphas(alpha)
        return self._gather("predict_interval", keys, X, alpha)

    def get_model(self, key):
        """A local copy of ``key``'s model (None for a key never learnt)."""
        k = check_keys([key], 1)
        j = int(self._route(k)[0])
        data = self._group._call("model_bytes", {j: (k[0].item(),)})[j]
        return None if data is None else read_model(data)

    def stats(self) -> dict:
        """Models and their memory (``memory_bytes``, the models' compiled state), in total and
        per worker; rows kept for replay; restarts and checkpoints so far."""
        return self._worker_stats(("n_models", "memory_bytes"))

    @classmethod
    def restore(cls, checkpoint_dir, *, checkpoint_every=100_000, max_in_flight=4, address=None,
                num_cpus=DEFAULT_NUM_CPUS,
                placement_timeout=DEFAULT_PLACEMENT_TIMEOUT):  # fmt: skip
        """The keyed models of the last checkpoint in ``checkpoint_dir`` (new actors, same number
        of workers, so keys keep their worker), checkpointing there from then on."""
        store = CheckpointStore(checkpoint_dir)
        m = store.read_manifest()
        if m is None or m.get("kind") != "_KeyedGroup":
            raise ValueError(f"{checkpoint_dir!r} holds no KeyedModels checkpoint")
        self = cls.__new__(cls)
        self.model = read_model(m["template"])
        self._template = model_bytes(self.model)
        self._width = m.get("width")
        self._interval = callable(getattr(self.model, "predict_interval", None))
        g = self._group = _KeyedGroup(self)
        g._setup(int(m["n_workers"]), checkpoint_dir, checkpoint_every, max_in_flight, address,
                 num_cpus, placement_timeout)  # fmt: skip
        g._ckpt_state = list(m["workers"])
        g._spawn_all(g._ckpt_state)
        return self


class _KeyedGroup(WorkerGroup):
    _actor_class = KeyedWorker

    def __init__(self, owner: KeyedModels):
        self._owner = owner

    def _initial_state(self, j: int):
        return self._owner._template

    def _checkpoint_extra(self, seq: int) -> dict:
        o = self._owner
        target = self._store.file(seq, "template.sfm")
        from .storage import write_model

        write_model(o.model, target)
        return {"template": target, "width": o._width}
