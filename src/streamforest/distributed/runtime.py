"""Ray plumbing shared by :class:`~.KeyedModels` and :class:`~.ShardedForest`.

:class:`WorkerGroup` owns ``n_workers`` Ray actors and the driver's side of their life cycle:

- **connect**: an already initialised Ray is used as it is; otherwise ``ray.init(address)``
  (``None``: a local Ray on this machine; ``"auto"`` or ``"ray://host:10001"``: a cluster, see
  ``docs/distributed.md``);
- **learning in flight**: a learning batch is submitted to the actors and the call returns; at
  most ``max_in_flight`` batches are outstanding (the oldest is waited for before another is
  submitted: back-pressure, no unbounded queue).  Ray runs one caller's calls to an actor in
  order, so a prediction sees every batch submitted before it;
- **checkpoints**: every ``checkpoint_every`` rows, all actors write their state (through
  :func:`streamforest.save`) to ``checkpoint_dir`` or, without one, into Ray's object store
  (which survives a worker process, not its node);
- **placement**: the actors' resources (``num_cpus`` each, a fraction of a CPU by default so
  that several groups share a small machine) are reserved together in a Ray placement group
  before any actor starts; when Ray cannot reserve them within ``placement_timeout`` seconds
  (other actors hold the CPUs, or no node is big enough) the constructor raises
  :class:`WorkerPlacementError` saying what is missing and what to do, instead of waiting for
  ever on the first call;
- **faults**: a call that finds its actor dead (:class:`ray.exceptions.RayActorError`, e.g. after
  ``ray.kill``) starts a new actor from that worker's last checkpoint, relearns the batches
  since then from the :class:`~.storage.ReplayBuffer` and calls again: the result is that of an
  uninterrupted run.

Only numpy arrays, plain Python values and model bytes (:func:`streamforest.save`) cross the
wire; the actor classes are this package's own (``streamforest`` must be installed, at the same
version, on every node).
"""

from __future__ import annotations

from collections import deque

from .storage import CheckpointStore, ReplayBuffer

MAX_RESTARTS = 3  # restarts of one worker in one call before giving up
DEFAULT_NUM_CPUS = 0.25  # per worker: four groups of one worker per CPU share a machine
DEFAULT_PLACEMENT_TIMEOUT = 60.0  # seconds to reserve the workers' resources


class WorkerPlacementError(RuntimeError):
    """Ray could not reserve the workers' resources within ``placement_timeout`` seconds."""


def ray_module():
    """The ``ray`` module, or an ImportError naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            "streamforest.distributed needs Ray: pip install 'streamforest[ray]'"
        ) from None
    return ray


def connect(address=None):
    """Ray, initialised: an already initialised Ray as it is, else ``ray.init(address)``.  A
    local Ray started here gives its workers this streamforest's location first on their
    ``PYTHONPATH`` (a relative entry, or a checkout not installed, would not be found from
    their working directory)."""
    ray = ray_module()
    if not ray.is_initialized():
        kw = {}
        if address is None:
            import os

            import streamforest

            root = os.path.dirname(os.path.dirname(os.path.abspath(streamforest.__file__)))
            rest = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)]
            path = os.pathsep.join(dict.fromkeys([root, *(p for p in rest if p)]))
            kw["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
        ray.init(address=address, **kw)
    return ray


def check_workers(n_workers) -> int:
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer, got {n_workers!r}")
    return n_workers


def check_num_cpus(num_cpus) -> float:
    if (
        isinstance(num_cpus, bool)
        or not isinstance(num_cpus, (int, float))
        or not 0 < num_cpus < float("inf")
    ):
        raise ValueError(
            f"num_cpus must be a positive number of CPUs per worker (e.g. 0.25), got {num_cpus!r}"
        )
    return float(num_cpus)


def check_placement_timeout(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout:
        raise ValueError(
            f"placement_timeout must be a positive number of seconds or None, got {timeout!r}"
        )
    return float(timeout)


def check_every(checkpoint_every):
    if checkpoint_every is None:
        return None
    if (
        isinstance(checkpoint_every, bool)
        or not isinstance(checkpoint_every, int)
        or checkpoint_every < 1
    ):
        raise ValueError(
            f"checkpoint_every must be a positive number of rows or None, got {checkpoint_every!r}"
        )
    return checkpoint_every


class WorkerGroup:
    """Actors, in-flight learning batches, checkpoints and fault recovery (module docstring).

    A subclass sets ``_actor_class`` (a plain class: it is made a Ray actor here), implements
    :meth:`_initial_state` (what worker ``j`` starts from) and :meth:`_finish` (the driver's
    part of a learnt batch, in order), and may add files to a checkpoint
    (:meth:`_checkpoint_extra`).
    """

    _actor_class: type

    _placement = None  # the placement group reserving the workers' resources

    def _setup(self, n_workers, checkpoint_dir, checkpoint_every, max_in_flight, address,
               num_cpus, placement_timeout=DEFAULT_PLACEMENT_TIMEOUT):  # fmt: skip
        self.n_workers = check_workers(n_workers)
        self.checkpoint_every = check_every(checkpoint_every)
        if (
            isinstance(max_in_flight, bool)
            or not isinstance(max_in_flight, int)
            or max_in_flight < 1
        ):
            raise ValueError(f"max_in_flight must be a positive integer, got {max_in_flight!r}")
        self.max_in_flight = max_in_flight
        self.num_cpus = check_num_cpus(num_cpus)
        self.placement_timeout = check_placement_timeout(placement_timeout)
        self._ray = connect(address)
        self._store = CheckpointStore(checkpoint_dir) if checkpoint_dir is not None else None
        self._buffer = ReplayBuffer()
        self._pending: deque = deque()  # (seq, {worker: ref}, context), oldest first
        self._seq = 0  # learning batches submitted
        self._ckpt_seq = 0  # the batch after which the current checkpoint was taken
        self._ckpt_state = [None] * self.n_workers  # what worker j restarts from (None: initial)
        self.restarts = 0  # workers restored after a fault
        self.checkpoints = 0

    def _reserve(self) -> None:
        """Reserve ``num_cpus`` for each worker in a placement group, or raise
        :class:`WorkerPlacementError` when Ray cannot within ``placement_timeout`` seconds."""
        from ray.util import placement_group, remove_placement_group

        bundles = [{"CPU": self.num_cpus} for _ in range(self.n_workers)]
        group = placement_group(bundles, strategy="SPREAD")
        timeout = self.placement_timeout
        if timeout is None:
            self._ray.get(group.ready())
        elif not group.wait(timeout_seconds=timeout):
            remove_placement_group(group)
            raise WorkerPlacementError(self._placement_message())
        self._placement = group

    def _placement_message(self) -> str:
        """Why the workers could not be placed, and what to do."""
        ray = self._ray
        total = ray.cluster_resources().get("CPU", 0.0)
        free = ray.available_resources().get("CPU", 0.0)
        largest = max(
            (n.get("Resources", {}).get("CPU", 0.0) for n in ray.nodes() if n.get("Alive")),
            default=0.0,
        )
        need = self.n_workers * self.num_cpus
        if self.num_cpus > largest:
            why = f"no node has {self.num_cpus:g} CPUs (the largest has {largest:g})"
        elif need > total:
            why = f"the cluster has {total:g} CPUs in all"
        else:
            why = (
                f"the cluster has {total:g} CPUs and {free:g} free: other actors hold the "
                "rest (e.g. a KeyedModels or ShardedForest that was not closed)"
            )
        return (
            f"Ray could not place {self.n_workers} worker(s) of num_cpus={self.num_cpus:g} "
            f"({need:g} CPUs) within placement_timeout={self.placement_timeout:g} s: {why}. "
            "Close the groups you no longer use (.close(), or a with block), give each worker "
            f"less (num_cpus={DEFAULT_NUM_CPUS:g}, the default, or smaller), use fewer workers "
            "(n_workers), or give Ray more CPUs (ray.init(num_cpus=...), more nodes); on a "
            "cluster that adds nodes on demand, wait longer (placement_timeout=..., None: no "
            "limit)."
        )

    def _make_actor(self, j: int, state):
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        strategy = PlacementGroupSchedulingStrategy(
            placement_group=self._placement, placement_group_bundle_index=j
        )
        cls = self._ray.remote(num_cpus=self.num_cpus, max_restarts=0)(self._actor_class)
        return cls.options(scheduling_strategy=strategy).remote(state)

    def _spawn_all(self, states=None) -> None:
        """Reserve the workers' resources, then start worker ``j`` from ``states[j]`` (None:
        from :meth:`_initial_state`)."""
        self._reserve()
        if states is None:
            states = [self._initial_state(j) for j in range(self.n_workers)]
        self.workers = [self._make_actor(j, s) for j, s in enumerate(states)]

    def _initial_state(self, j: int):
        raise NotImplementedError

    def _finish(self, seq: int, results: dict, context) -> None:
        """The driver's part of learnt batch ``seq`` (``results``: worker -> its return)."""

    def _checkpoint_extra(self, seq: int) -> dict:
        return {}

    # --- calls ------------------------------------------------------------------------------------
    def _get(self, j: int, ref, method: str, args: tuple):
        """``ray.get(ref)`` of a call to worker ``j``; if ``j`` died, restore it and call again."""
        errors = self._ray.exceptions.RayActorError
        for _ in range(MAX_RESTARTS + 1):
            try:
                return self._ray.get(ref)
            except errors:
                self._recover(j)
                ref = getattr(self.workers[j], method).remote(*args)
        raise RuntimeError(f"worker {j} kept dying ({MAX_RESTARTS} restarts in one call)")

    def _call(self, method: str, args_of: dict) -> dict:
        """Call ``method`` on the workers of ``args_of`` (worker -> args) and wait: worker ->
        result.  Learning in flight is finished first (faults found there are repaired)."""
        self._drain()
        refs = {j: getattr(self.workers[j], method).remote(*a) for j, a in args_of.items()}
        return {j: self._get(j, r, method, args_of[j]) for j, r in refs.items()}

    def _submit(self, payloads: dict, rows: int, context=None) -> None:
        """Submit a learning batch (worker -> ``learn`` args); keep it for replay; wait for the
        oldest batch while more than ``max_in_flight`` are outstanding; checkpoint when due."""
        self._seq += 1
        seq = self._seq
        refs = {j: self.workers[j].learn.remote(*a) for j, a in payloads.items()}
        if self.checkpoint_every is not None:
            self._buffer.append(seq, payloads, rows)
        self._pending.append((seq, refs, context))
        while len(self._pending) > self.max_in_flight:
            self._finish_oldest()
        if self.checkpoint_every is not None and self._buffer.rows >= self.checkpoint_every:
            self.checkpoint()

    def _finish_oldest(self) -> None:
        seq, refs, context = self._pending[0]
        results = {}
        for j in list(refs):
            # refs[j] may be replaced by a replay while waiting (a restored worker)
            results[j] = self._get_learn(j, seq)
        self._pending.popleft()
        self._finish(seq, results, context)

    def _get_learn(self, j: int, seq: int):
        errors = self._ray.exceptions.RayActorError
        for _ in range(MAX_RESTARTS + 1):
            ref = self._pending_ref(seq, j)
            try:
                return self._ray.get(ref)
            except errors:
                self._recover(j)
        raise RuntimeError(f"worker {j} kept dying ({MAX_RESTARTS} restarts in one call)")

    def _pending_ref(self, seq: int, j: int):
        for s, refs, _ in self._pending:
            if s == seq:
                return refs[j]
        raise KeyError(seq)

    def _drain(self) -> None:
        """Finish every learning batch in flight."""
        while self._pending:
            self._finish_oldest()

    # --- faults -----------------------------------------------------------------------------------
    def _recover(self, j: int) -> None:
        """Worker ``j`` died: a new actor from its last checkpoint relearns the batches since
        then (their pending results are replaced by the replay's)."""
        replay = self._buffer.after(self._ckpt_seq)
        if self._seq > self._ckpt_seq and self.checkpoint_every is None:
            raise RuntimeError(
                f"worker {j} died and the batches since its last checkpoint were not kept "
                "(checkpoint_every=None): it cannot be restored"
            )
        try:
            self._ray.kill(self.workers[j], no_restart=True)
        except Exception:  # noqa: BLE001 - it is dead already
            pass
        state = self._ckpt_state[j]
        actor = self._make_actor(j, self._initial_state(j) if state is None else state)
        self.workers[j] = actor
        pending = {s: refs for s, refs, _ in self._pending}
        for s, payloads in replay:
            if j not in payloads:
                continue
            ref = actor.learn.remote(*payloads[j])
            if s in pending:
                pending[s][j] = ref
        self.restarts += 1

    # --- checkpoints ------------------------------------------------------------------------------
    def checkpoint(self) -> None:
        """Write every worker's state now (to ``checkpoint_dir``, or to Ray's object store), then
        empty the replay buffer."""
        self._drain()
        seq = self._seq
        states = {}
        for j in range(self.n_workers):
            if self._store is None:
                for _ in range(MAX_RESTARTS + 1):
                    done, data = self.workers[j].checkpoint.options(num_returns=2).remote(None)
                    try:
                        self._ray.get(done)
                        break
                    except self._ray.exceptions.RayActorError:
                        self._recover(j)
                else:
                    raise RuntimeError(f"worker {j} kept dying while checkpointing")
                states[j] = data
            else:
                target = self._store.file(seq, f"worker-{j}.sfm")
                self._call_one(j, "checkpoint_to", (target,))
                states[j] = target
        extra = self._checkpoint_extra(seq) if self._store is not None else {}
        if self._store is not None:
            self._store.write_manifest(
                {"seq": seq, "n_workers": self.n_workers, "workers": [states[j] for j in
                 range(self.n_workers)], "kind": type(self).__name__, **extra}
            )  # fmt: skip
        self._ckpt_state = [states[j] for j in range(self.n_workers)]
        self._ckpt_seq = seq
        self._buffer.clear()
        self.checkpoints += 1

    def _call_one(self, j: int, method: str, args: tuple):
        ref = getattr(self.workers[j], method).remote(*args)
        return self._get(j, ref, method, args)

    def ping(self) -> float:
        """Seconds of one round trip to every worker (a call that does nothing)."""
        import time

        t0 = time.perf_counter()
        self._call("ping", {j: () for j in range(self.n_workers)})
        return time.perf_counter() - t0

    # --- life -------------------------------------------------------------------------------------
    @property
    def buffered_rows(self) -> int:
        """Rows kept for replay (learnt since the last checkpoint)."""
        return self._buffer.rows

    def close(self) -> None:
        """Finish learning in flight, end the actors and free their resources (the object is
        unusable afterwards)."""
        if getattr(self, "workers", None) is None:
            self._release()
            return
        try:
            self._drain()
        finally:
            for w in self.workers:
                try:
                    self._ray.kill(w, no_restart=True)
                except Exception:  # noqa: BLE001 - already gone
                    pass
            self.workers = None
            self._release()

    def _release(self) -> None:
        """Give the reserved resources back to Ray (once)."""
        group, self._placement = self._placement, None
        if group is not None:
            try:
                from ray.util import remove_placement_group

                remove_placement_group(group)
            except Exception:  # noqa: BLE001 - Ray already shut down
                pass

    def __del__(self):
        # a group dropped without close() frees its reservation, as its actors end with their
        # last handle
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class GroupFront:
    """What :class:`~streamforest.distributed.KeyedModels` and
    :class:`~streamforest.distributed.ShardedForest` share: the life cycle of their worker group
    (``self._group``, a :class:`WorkerGroup`)."""

    _group: WorkerGroup

    @property
    def n_workers(self) -> int:
        return self._group.n_workers

    def _worker_stats(self, totals: tuple) -> dict:
        """The workers' ``stats``: the sum of each of ``totals`` over the workers, then
        ``per_worker``, rows kept for replay, restarts and checkpoints so far."""
        g = self._group
        res = g._call("stats", {j: () for j in range(g.n_workers)})
        per = [res[j] for j in range(g.n_workers)]
        return {
            **{k: sum(p[k] for p in per) for k in totals},
            "per_worker": per,
            "buffered_rows": g.buffered_rows,
            "restarts": g.restarts,
            "checkpoints": g.checkpoints,
        }

    def checkpoint(self) -> None:
        """Checkpoint every worker (and the driver's own state, if it keeps any) now."""
        self._group.checkpoint()

    def flush(self):
        """Wait until every submitted batch is learnt."""
        self._group._drain()
        return self

    def close(self) -> None:
        """Finish learning and end the actors."""
        self._group.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
