"""Scale out on Ray: rows/s of keyed learning (``KeyedModels``) with 1 and 2 actors beside a
local dict of per-key models, and of a sharded forest (``ShardedForest``) with 1 and 2 actors
beside the local forest; the per-batch overhead; and an estimate for 8 and 64 workers.

    python benchmarks/ray_scale.py [--rows 1000000] [--keys 10000] [--trees 100]
                                   [--forest-rows 100000] [--batch 10000] [--address ADDR]

Estimate (an Amdahl bound): ``rows/s(W) = 1 / (c_driver + c_worker / W)``, with ``c_worker``
the actors' measured busy CPU seconds per row at one actor (CPU time of their learning calls:
on a shared machine wall times depend on the load, CPU times much less) and
``c_driver(W)`` the driver's serial seconds per row with W workers: its own per-batch work
(splitting by key for W actors, or encoding and ``ray.put`` of the broadcast batch; timed alone,
without actors) plus a round trip to W actors per batch (measured with 1 and 2 actors, linear
in W; conservative, as learning batches in flight overlap it), divided by the batch size.  It
assumes a core per worker and no network limit.  All figures come from one run in which the
local model and the actors are measured one after the other; wall rows/s on a shared machine
are noisy, so the script prints the CPU seconds per row of each beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from streamforest import HoeffdingTreeRegressor, OnlineForestRegressor
from streamforest.distributed import KeyedModels, ShardedForest
from streamforest.distributed.workers import KeyedShard, forest_of


def friedman(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5))
    y = (
        10 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
        + rng.standard_normal(n)
    )
    return X, y


def spans(n: int, batch: int):
    return [(a, min(n, a + batch)) for a in range(0, n, batch)]


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def round_trip(ping, repeats: int = 15) -> float:
    """Median seconds of a call to every actor that does nothing (learning flushed)."""
    return statistics.median(ping() for _ in range(repeats))


def estimate(c_driver: float, c_worker: float, workers: int) -> float:
    return 1.0 / (c_driver + c_worker / workers)


def keyed(args, ray) -> None:
    X, y = friedman(args.rows, 1)
    rng = np.random.default_rng(2)
    keys = rng.integers(0, args.keys, args.rows)
    template = HoeffdingTreeRegressor(seed=1)
    batches = spans(args.rows, args.batch)
    print(f"\n== keyed: {args.rows} rows, {args.keys} keys, HoeffdingTreeRegressor per key, "
          f"batches of {args.batch}")  # fmt: skip
    local = KeyedShard(template)
    c0, t0 = cpu(), time.perf_counter()
    for a, b in batches:
        local.learn_many(keys[a:b], X[a:b], y[a:b])
    t_local, c_local = time.perf_counter() - t0, cpu() - c0
    del local  # its memory, before the actors'
    print(f"local (one process)      {args.rows / t_local:>10.0f} rows/s   "
          f"{1e6 * c_local / args.rows:6.1f} CPU us/row")  # fmt: skip
    busy1 = None
    for W in (1, 2):
        km = KeyedModels(template, n_workers=W, checkpoint_every=None, num_cpus=1)  # a core each
        s0 = sum(p["busy_cpu_seconds"] for p in km.stats()["per_worker"])
        c0, t0 = cpu(), time.perf_counter()
        for a, b in batches:
            km.learn_many(keys[a:b], X[a:b], y[a:b])
        km.flush()
        t, c = time.perf_counter() - t0, cpu() - c0
        st = km.stats()
        busy = sum(p["busy_cpu_seconds"] for p in st["per_worker"]) - s0
        rt = round_trip(km._group.ping)
        if W == 1:
            busy1, rt1 = busy, rt
        else:
            rt2 = rt
        print(f"{W} actor(s)               {args.rows / t:>10.0f} rows/s   driver "
              f"{1e6 * c / args.rows:5.1f} CPU us/row, actors busy {1e6 * busy / args.rows:5.1f} "
              f"CPU us/row, round trip {1e3 * rt:.1f} ms, {st['n_models']} models "
              f"{st['memory_bytes'] / 2**20:.1f} MB")  # fmt: skip
        if W == 2:
            t0 = time.perf_counter()
            km.checkpoint()
            print(
                f"  one checkpoint of all models (object store): {time.perf_counter() - t0:.2f} s"
            )
        km.close()
    c_worker = busy1 / args.rows
    per_actor = max(rt2 - rt1, 0.0)
    print(
        f"cost model: c_worker {1e6 * c_worker:.1f} CPU us/row (1 actor's learning); c_driver(W) = "
        f"(split by key for W actors, timed alone, + a round trip to W actors per batch, "
        f"{1e3 * rt1:.2f} ms + {1e3 * per_actor:.2f} ms per actor beyond the first) / rows"
    )
    for W in (8, 64):
        km_route = KeyedModels.__new__(KeyedModels)
        km_route._group = type("G", (), {"n_workers": W})()
        t0 = time.thread_time()
        for a, b in batches:
            km_route._split(keys[a:b], X[a:b], y[a:b])
        t_split = time.thread_time() - t0
        c_driver = (t_split + (rt1 + (W - 1) * per_actor) * len(batches)) / args.rows
        print(f"estimate {W:>2} workers        {estimate(c_driver, c_worker, W):>10.0f} rows/s   "
              f"(c_driver {1e6 * c_driver:.2f} us/row)")  # fmt: skip


def sharded(args, ray) -> None:
    n = args.forest_rows
    X, y = friedman(n, 3)
    batches = spans(n, args.batch)
    model = OnlineForestRegressor(n_trees=args.trees, seed=1)
    print(f"\n== sharded: {n} rows, OnlineForestRegressor(n_trees={args.trees}), batches of "
          f"{args.batch}")  # fmt: skip
    Xw, yw = friedman(1000, 4)  # warm-up rows, learnt by every model: kernels loaded
    for _ in range(2):  # the second pass is timed (the first loads every kernel a tree needs)
        local = model.clone().learn_many(Xw, yw)
        c0, t0 = cpu(), time.perf_counter()
        for a, b in batches:
            local.learn_many(X[a:b], y[a:b])
        t_local, c_local = time.perf_counter() - t0, cpu() - c0
    print(f"local (one thread)       {n / t_local:>10.0f} rows/s   "
          f"{1e6 * c_local / n:6.1f} CPU us/row")  # fmt: skip
    expect = local.predict(X[:500])
    for W in (1, 2):
        sf = ShardedForest(model, n_workers=W, checkpoint_every=None, num_cpus=1)
        sf.learn_many(Xw, yw).flush()
        b0 = [p["busy_cpu_seconds"] for p in sf.stats()["per_worker"]]
        c0, t0 = cpu(), time.perf_counter()
        for a, b in batches:
            sf.learn_many(X[a:b], y[a:b])
        sf.flush()
        t, c = time.perf_counter() - t0, cpu() - c0
        st = sf.stats()
        busy = max(p["busy_cpu_seconds"] - b for p, b in zip(st["per_worker"], b0, strict=True))
        same = np.array_equal(sf.predict(X[:500]), expect)
        rt = round_trip(sf._group.ping)
        if W == 1:
            busy1, rt1 = busy, rt
        else:
            rt2 = rt
        print(f"{W} actor(s)               {n / t:>10.0f} rows/s   driver {1e6 * c / n:5.1f} CPU "
              f"us/row, slowest actor busy {1e6 * busy / n:6.1f} CPU us/row, round trip "
              f"{1e3 * rt:.1f} ms, predictions equal the local forest's: {same}")  # fmt: skip
        sf.close()
    # the driver's serial work per batch, alone: validation and encoding, ray.put
    f = forest_of(model.clone())
    t0 = time.thread_time()
    for a, b in batches:
        Xa = f.pad(f.feature_space().encode_array(X[a:b], learn=True))
        ray.put((Xa, y[a:b], np.ones(b - a)))
    t_drv = time.thread_time() - t0
    c_worker = busy1 / n
    per_actor = max(rt2 - rt1, 0.0)
    print(
        f"cost model: c_worker {1e6 * c_worker:.1f} CPU us/row (1 actor's learning); c_driver(W) = "
        f"(encode + ray.put, {1e6 * t_drv / n:.2f} us/row, + a round trip to W actors per "
        f"batch, {1e3 * rt1:.2f} ms + {1e3 * per_actor:.2f} ms per actor beyond the first)"
    )
    for W in (8, 64):
        w = min(W, args.trees)
        c_driver = (t_drv + (rt1 + (w - 1) * per_actor) * len(batches)) / n
        print(f"estimate {W:>2} workers        {estimate(c_driver, c_worker, w):>10.0f} rows/s   "
              f"(c_driver {1e6 * c_driver:.2f} us/row)"
              + ("" if w == W else f" (only {w} trees to split)"))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000, help="keyed rows")
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--forest-rows", type=int, default=100_000, help="sharded forest rows")
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--address", default=None, help="Ray address (default: a local Ray)")
    ap.add_argument("--cpus", type=int, default=None, help="CPUs of a local Ray")
    ap.add_argument("--only", choices=["keyed", "sharded"], default=None)
    args = ap.parse_args()
    import ray

    if not ray.is_initialized():
        if args.address:
            ray.init(address=args.address)
        else:
            ray.init(num_cpus=args.cpus, include_dashboard=False)
    print(f"Ray {ray.__version__}, cluster CPUs {ray.cluster_resources().get('CPU')}, "
          f"this machine's cores {os.cpu_count()}")  # fmt: skip
    if args.only in (None, "keyed"):
        keyed(args, ray)
    if args.only in (None, "sharded"):
        sharded(args, ray)


if __name__ == "__main__":
    main()
