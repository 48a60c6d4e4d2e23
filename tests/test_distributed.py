"""streamforest.distributed on a local Ray with 2 CPUs: keyed models equal the local per-key
models, a sharded forest equals the local forest with the same seed, a killed worker is
restored with nothing lost, and a checkpoint loads in a fresh process."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from streamforest import CPApproximate, Multivalid, OnlineForestRegressor, OnlineQRF
from streamforest.persistence import _dumps

try:
    import ray
except ImportError:
    ray = None

needs_ray = pytest.mark.skipif(
    ray is None, reason="Ray is not installed (pip install 'streamforest[ray]')"
)
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
ALPHAS = [0.1, 0.3]
# the actors import this checkout (absolute paths: they run in another directory)
WORKER_ENV = {"PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
if "NUMBA_CACHE_DIR" in os.environ:
    WORKER_ENV["NUMBA_CACHE_DIR"] = os.path.abspath(os.environ["NUMBA_CACHE_DIR"])


@pytest.fixture(scope="module")
def local_ray():
    if ray is None:
        pytest.skip("Ray is not installed (pip install 'streamforest[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": WORKER_ENV})
    yield ray
    if started:
        ray.shutdown()


def data(n=2400, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    y = X @ np.arange(1.0, p + 1) + np.sin(6 * X[:, 0]) + 0.2 * rng.standard_normal(n)
    return X, y


def forest():
    return OnlineForestRegressor(n_trees=6, seed=7)


MODELS = {
    "forest": lambda: forest(),
    "qrf": lambda: OnlineQRF(forest=forest(), k=32),
    "cp": lambda: CPApproximate(forest=forest(), calibration_size=300),
}


def batches(n, size=500):
    return [(a, min(n, a + size)) for a in range(0, n, size)]


def local_run(model, X, y):
    for a, b in batches(X.shape[0]):
        model.learn_many(X[a:b], y[a:b])
    return model


# --- the engine's shard hook (no Ray needed) ----------------------------------------------------
def test_restricted_engines_grow_the_whole_forests_trees():
    X, y = data(1500)
    whole = forest().learn_many(X, y)
    P = whole.engine_.predict_trees(np.ascontiguousarray(X[:100]))
    for trees in ([0, 2, 5], [1], [3, 4]):
        part = forest()
        part.feature_space()
        part.engine_.restrict(trees)
        for a, b in batches(1500, 400):  # other batch boundaries: the same trees
            part.learn_many(X[a:b], y[a:b])
        assert part.engine_.n_trees == len(trees)
        np.testing.assert_array_equal(part.engine_.predict_trees(np.ascontiguousarray(X[:100])),
                                      P[trees])  # fmt: skip


def test_restricted_engines_follow_the_whole_forests_drift_replacements():
    rng = np.random.default_rng(0)
    X = rng.random((6000, 4))
    y = X @ np.array([5.0, 10, 15, 20])
    y[3000:] = 20 - y[3000:]  # an abrupt change: trees warn, grow background trees, swap
    whole = forest().learn_many(X, y)
    assert whole.drift_stats_["replacements"] > 0
    P = whole.engine_.predict_trees(np.ascontiguousarray(X[:200]))
    for trees in ([0, 1, 2], [3, 4, 5]):
        part = forest()
        part.feature_space()
        part.engine_.restrict(trees)
        for a, b in batches(6000, 1000):
            part.learn_many(X[a:b], y[a:b])
        per = whole.drift_stats_["per_tree"]
        assert part.drift_stats_["per_tree"]["replacements"] == [
            per["replacements"][t] for t in trees
        ]
        np.testing.assert_array_equal(
            part.engine_.predict_trees(np.ascontiguousarray(X[:200])), P[trees]
        )


def test_restrict_refuses_bad_trees_and_grown_forests():
    f = forest()
    f.feature_space()
    for bad in ([], [0, 0], [6], [-1]):
        with pytest.raises(ValueError, match="trees"):
            f.engine_.restrict(bad)
    X, y = data(50)
    f.learn_many(X, y)
    with pytest.raises(RuntimeError, match="before any tree"):
        f.engine_.restrict([0])


def test_key_hash_is_stable_across_processes():
    from streamforest.distributed import key_hash

    keys = ["sensor-1", "ß", b"raw", 12, -3]
    here = [key_hash(k) for k in keys]
    code = (
        f"import sys; sys.path.insert(0, {SRC!r})\n"
        "from streamforest.distributed import key_hash\n"
        f"print([key_hash(k) for k in {keys!r}])"
    )
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, check=True)  # fmt: skip
        assert out.stdout.strip() == str(here)
    assert len(set(here)) == len(here)
    assert key_hash(np.int64(12)) == key_hash(12)
    with pytest.raises(TypeError, match="keys"):
        key_hash(1.5)


def refuse_bad_keyed_input(km, keys, X, y):
    """Every malformed ``learn_many`` of keyed models raises a clear error."""
    bad_y = y.copy()
    bad_y[5] = np.nan
    with pytest.raises(ValueError, match="y"):
        km.learn_many(keys, X, bad_y)
    with pytest.raises(TypeError, match="keys"):
        km.learn_many(np.arange(len(y)) + 0.5, X, y)
    with pytest.raises(ValueError, match="keys"):
        km.learn_many(keys[:-1], X, y)
    with pytest.raises(ValueError, match="columns"):
        km.learn_many(keys, X[:, :3], y)
    X_inf = X.copy()
    X_inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinit"):
        km.learn_many(keys, X_inf, y)


# --- keyed models -------------------------------------------------------------------------------
@needs_ray
def test_keyed_models_equal_local_per_key_models(local_ray):
    from streamforest.distributed import KeyedModels

    X, y = data(1800, seed=1)
    rng = np.random.default_rng(2)
    keys = np.array([f"m{k}" for k in rng.integers(0, 12, X.shape[0])])
    template = OnlineQRF(forest=OnlineForestRegressor(n_trees=3, seed=5), k=16)
    Xq = X[:300]
    kq = np.concatenate([keys[:290], ["never-seen"] * 10])
    local = {k: template.clone().learn_many(X[keys == k], y[keys == k]) for k in np.unique(keys)}
    expected = {k: (m.predict(Xq[kq == k]), m.predict_interval(Xq[kq == k], ALPHAS))
                for k, m in local.items()}  # fmt: skip
    with KeyedModels(template, n_workers=2, checkpoint_every=10_000) as km:
        for a, b in batches(X.shape[0], 600):
            km.learn_many(keys[a:b], X[a:b], y[a:b])
            if a == 0:  # bad input is refused whole and changes nothing (the states below)
                refuse_bad_keyed_input(km, keys[:200], X[:200], y[:200])
        pred = km.predict(kq, Xq)
        iv = km.predict_interval(kq, Xq, ALPHAS)
        stats = km.stats()
        homes = km.worker_of(np.unique(keys))
        remote = {k: km.get_model(k) for k in np.unique(keys)}
    assert set(homes.tolist()) == {0, 1}  # both actors hold keys
    assert stats["n_models"] == 12
    assert [p["n_models"] for p in stats["per_worker"]] == np.bincount(homes).tolist()
    # the live models also count their scratch buffers (OnlineQRF's sketch records, bounded by
    # 2 * _record_budget each), which pickling drops: the copies hold the model state only
    state = sum(m.memory_bytes for m in remote.values())
    assert 0 < state <= stats["memory_bytes"] <= state + 12 * 2 * OnlineQRF._record_budget
    fresh = template.clone()
    for i in range(Xq.shape[0]):
        k = kq[i]
        if k == "never-seen":
            assert pred[i] == fresh.predict(Xq[i : i + 1])[0]
            assert np.all(np.isinf(iv[i]))
    for k in np.unique(keys):  # each local model learnt all its rows at once
        assert _dumps(remote[k]) == _dumps(local[k])  # bit-identical state
        q = kq == k
        np.testing.assert_array_equal(pred[q], expected[k][0])
        np.testing.assert_array_equal(iv[q], expected[k][1])


@needs_ray
def test_keyed_worker_killed_mid_stream_loses_nothing(local_ray):
    from streamforest.distributed import KeyedModels

    X, y = data(2000, seed=3)
    keys = (np.arange(2000) * 7) % 10
    ref = {}
    for k in range(10):
        ref[k] = forest().learn_many(X[keys == k], y[keys == k])
    with KeyedModels(forest(), n_workers=2, checkpoint_every=700, max_in_flight=2) as km:
        for i, (a, b) in enumerate(batches(2000, 250)):
            km.learn_many(keys[a:b], X[a:b], y[a:b])
            assert km._group.buffered_rows <= 700 + 250  # bounded replay buffer
            assert len(km._group._pending) <= 2  # bounded batches in flight
            if i == 5:
                ray.kill(km.workers[0])
        pred = km.predict(keys[:400], X[:400])
        stats = km.stats()
    assert stats["restarts"] == 1 and stats["checkpoints"] >= 2
    expect = np.array([ref[k].predict(X[i : i + 1])[0] for i, k in enumerate(keys[:400])])
    np.testing.assert_array_equal(pred, expect)


# --- placement: no silent waits -----------------------------------------------------------------
@needs_ray
def test_a_keyed_group_is_placed_beside_an_open_sharded_forest(local_ray):
    """Issue 32: on a 2-CPU Ray, a ShardedForest of 2 workers left open and then KeyedModels of
    2 workers waited for ever in learn_many (each actor held a whole CPU).  With the default
    num_cpus both groups are placed, and the keyed models still equal the local ones."""
    from streamforest.distributed import KeyedModels, ShardedForest

    assert ray.cluster_resources().get("CPU") == 2
    X, y = data(1200, seed=4)
    keys = np.arange(1200) % 5
    sharded = ShardedForest(forest(), n_workers=2)
    try:
        sharded.learn_many(X, y)
        with KeyedModels(forest(), n_workers=2) as km:
            km.learn_many(keys, X, y)
            pred = km.predict(keys[:200], X[:200])
        np.testing.assert_array_equal(
            sharded.predict(X[:50]), forest().learn_many(X, y).predict(X[:50])
        )
    finally:
        sharded.close()
    for k in range(5):
        local = forest().learn_many(X[keys == k], y[keys == k])
        rows = keys[:200] == k
        np.testing.assert_array_equal(pred[rows], local.predict(X[:200][rows]))


def _live_placement_groups():
    return sum(g["state"] != "REMOVED" for g in ray.util.placement_group_table().values())


@needs_ray
@pytest.mark.parametrize("kind", ["keyed", "sharded"])
def test_workers_that_cannot_be_placed_raise_a_clear_error(local_ray, kind):
    """More CPUs than the 2-CPU Ray has: the constructor raises within placement_timeout,
    naming what is missing and what to do, and keeps no reservation behind."""
    from streamforest.distributed import KeyedModels, ShardedForest, WorkerPlacementError

    make = KeyedModels if kind == "keyed" else ShardedForest
    before = _live_placement_groups()
    with pytest.raises(WorkerPlacementError, match=r"could not place 2 worker.*2 CPUs in all"):
        make(forest(), n_workers=2, num_cpus=1.5, placement_timeout=0.5)
    with pytest.raises(WorkerPlacementError, match=r"no node has 3 CPUs.*num_cpus=0.25"):
        make(forest(), n_workers=1, num_cpus=3, placement_timeout=0.5)
    assert _live_placement_groups() == before
    for bad in ({"num_cpus": 0}, {"num_cpus": "1"}, {"placement_timeout": -1.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            make(forest(), n_workers=1, **bad)


# --- sharded forest -----------------------------------------------------------------------------
@needs_ray
@pytest.mark.parametrize("kind", ["qrf", "cp"])
def test_sharded_forest_equals_local_forest(local_ray, kind):
    """(A bare forest, sharded, equals the local one in
    test_a_keyed_group_is_placed_beside_an_open_sharded_forest.)"""
    from streamforest.distributed import ShardedForest

    X, y = data()
    local = local_run(MODELS[kind](), X, y)
    Xq = data(300, seed=9)[0]
    with ShardedForest(MODELS[kind](), n_workers=2) as sf:
        assert len(sf.workers) == 2 and sf.tree_blocks == [[0, 1, 2], [3, 4, 5]]
        for a, b in batches(X.shape[0]):
            sf.learn_many(X[a:b], y[a:b])
            if a == 0:  # bad input is refused whole and changes nothing (the equality below)
                with pytest.raises(ValueError, match="y"):
                    sf.learn_many(X[:300], np.full(300, np.inf))
                with pytest.raises(ValueError, match="columns"):
                    sf.learn_many(X[:300, :2], y[:300])
        pred = sf.predict(Xq)
        np.testing.assert_array_equal(pred, local.predict(Xq))
        for alpha in (0.2, ALPHAS):
            np.testing.assert_array_equal(
                sf.predict_interval(Xq, alpha), local.predict_interval(Xq, alpha)
            )
        stats = sf.stats()
    assert [p["trees"] for p in stats["per_worker"]] == [[0, 1, 2], [3, 4, 5]]
    assert stats["memory_bytes"] > 0


@needs_ray
@pytest.mark.parametrize("kind", ["forest", "qrf", "cp"])
def test_sharded_forest_sets_a_glitch_label_aside_as_the_local_one(local_ray, kind):
    """A label of 1e12 among normal ones: the local model's label guard learns it with weight
    0; the sharded one's driver guards the batch before its workers learn it, so the two stay
    equal (before, the workers learnt the glitch: every prediction differed, up to 0.29)."""
    from streamforest.distributed import ShardedForest

    X, y = data()
    y = y.copy()
    y[700] = 1e12
    local = local_run(MODELS[kind](), X, y)
    assert local.n_flagged_labels == 1
    Xq = data(300, seed=9)[0]
    with ShardedForest(MODELS[kind](), n_workers=2) as sf:
        for a, b in batches(X.shape[0]):
            sf.learn_many(X[a:b], y[a:b])
        pred = sf.predict(Xq)
        np.testing.assert_array_equal(pred, local.predict(Xq))
        assert np.abs(pred).max() < 100
        if kind != "forest":
            np.testing.assert_array_equal(
                sf.predict_interval(Xq, ALPHAS), local.predict_interval(Xq, ALPHAS)
            )


def grouped_data(n, seed):
    """``data`` with two overlapping group columns (4: three groups, 5: two, noisier)."""
    X, y = data(n, seed=seed)
    rng = np.random.default_rng(seed + 100)
    g1 = rng.integers(0, 3, n)
    g2 = (X[:, 1] > 0.5).astype(int)
    y = y + (0.5 * g1 + 1.5 * g2) * rng.standard_normal(n)
    return np.column_stack([X, g1, g2]), y


GROUPED = {
    "qrf": lambda: OnlineQRF(forest=forest(), k=32, groups=4),
    "cp": lambda: CPApproximate(
        forest=forest(), calibration_size=300, groups=Multivalid([4, 5], alphas=ALPHAS)
    ),
}


@needs_ray
@pytest.mark.parametrize("kind", ["qrf", "cp"])
def test_sharded_grouped_method_equals_local(local_ray, kind, tmp_path):
    """A grouped method sharded (Mondrian windows over OnlineQRF, Multivalid over two families
    over CPApproximate; a worker killed mid-stream; restored from its checkpoint) gives the
    local grouped model's intervals and group state, bit for bit; bad group input is refused and
    changes nothing."""
    from streamforest.distributed import ShardedForest

    X, y = grouped_data(3000, 3)
    Xq = grouped_data(300, 9)[0]
    local = local_run(GROUPED[kind](), X, y)
    ckpt = str(tmp_path / "ckpt")
    with ShardedForest(GROUPED[kind](), n_workers=2, checkpoint_dir=ckpt,
                       checkpoint_every=1200) as sf:  # fmt: skip
        for i, (a, b) in enumerate(batches(3000)):
            sf.learn_many(X[a:b], y[a:b])
            if i == 0:
                with pytest.raises(ValueError, match="groups"):
                    sf.learn_many(X[:10], y[:10], groups=np.zeros((10, 3)))
                with pytest.raises(ValueError, match="groups"):
                    sf.learn_many(X[:10], y[:10], groups=np.zeros(9))
            if i == 3:  # after a checkpoint (at 1500 rows) and one batch more
                ray.kill(sf.workers[1])
        if kind == "cp":
            with pytest.raises(ValueError, match="calibrated at"):
                sf.predict_interval(Xq, 0.2)
        for alpha in (0.1, ALPHAS):
            np.testing.assert_array_equal(
                sf.predict_interval(Xq, alpha), local.predict_interval(Xq, alpha)
            )
        np.testing.assert_array_equal(sf.predict(Xq), local.predict(Xq))
        assert sf.stats()["restarts"] == 1
        driver = sf._driver.group_state_
        sf.checkpoint()
    with ShardedForest.restore(ckpt) as again:  # the group state is in the driver's file
        given = (None, Xq[:, 4]) if kind == "qrf" else (None, Xq[:, 4:6])  # (groups=: as X's)
        for groups in given:
            np.testing.assert_array_equal(
                again.predict_interval(Xq, ALPHAS, groups=groups),
                local.predict_interval(Xq, ALPHAS, groups=groups),
            )
    state = local.group_state_
    assert driver.n_groups == state.n_groups == (3 if kind == "qrf" else 5)
    for key in ("ss", "meta", "mvp_v", "mvp_n"):
        if key in state.__dict__:
            np.testing.assert_array_equal(driver.__dict__[key], state.__dict__[key])
    # the groups do change the intervals (the test can fail)
    bare = local_run(MODELS[kind](), X, y)
    assert not np.array_equal(bare.predict_interval(Xq, 0.1), local.predict_interval(Xq, 0.1))


@needs_ray
def test_sharded_worker_killed_mid_stream_loses_nothing(local_ray):
    from streamforest.distributed import ShardedForest

    X, y = data(3000, seed=4)
    Xq = data(200, seed=8)[0]
    local = local_run(MODELS["cp"](), X, y)
    with ShardedForest(MODELS["cp"](), n_workers=2, checkpoint_every=1200) as sf:
        for i, (a, b) in enumerate(batches(3000)):
            sf.learn_many(X[a:b], y[a:b])
            if i == 3:  # after a checkpoint (at 1500 rows) and one batch more
                ray.kill(sf.workers[1])
        iv = sf.predict_interval(Xq, ALPHAS)
        pred = sf.predict(Xq)
        assert sf.stats()["restarts"] == 1
    np.testing.assert_array_equal(pred, local.predict(Xq))
    np.testing.assert_array_equal(iv, local.predict_interval(Xq, ALPHAS))


@needs_ray
def test_sharded_forest_refuses_what_it_cannot_shard():
    """Refused before any actor starts (bad input to a running one: the equality test)."""
    from streamforest import CPExact
    from streamforest.distributed import ShardedForest

    with pytest.raises(TypeError, match="CPExact"):
        ShardedForest(CPExact(forest=forest()))
    with pytest.raises(ValueError, match="n_workers"):
        ShardedForest(forest(), n_workers=7)


FRESH = """
import sys
sys.path.insert(0, {src!r})
import numpy as np, ray
ray.init(address={address!r}, runtime_env={{"env_vars": {env!r}}})
from streamforest.distributed import KeyedModels, ShardedForest
X = np.load({xq!r})
with ShardedForest.restore({sdir!r}) as sf:
    a = sf.predict_interval(X, 0.2)
with KeyedModels.restore({kdir!r}) as km:
    b = km.predict(np.arange(X.shape[0]) % 4, X)
np.save({out_a!r}, a)
np.save({out_b!r}, b)
"""


@needs_ray
def test_checkpoints_load_in_a_fresh_process(local_ray, tmp_path):
    from streamforest.distributed import KeyedModels, ShardedForest

    X, y = data(1200, seed=5)
    Xq = data(100, seed=6)[0]
    sdir, kdir = str(tmp_path / "sharded"), str(tmp_path / "keyed")
    with ShardedForest(MODELS["qrf"](), n_workers=2, checkpoint_dir=sdir) as sf:
        sf.learn_many(X, y)
        sf.checkpoint()
        a = sf.predict_interval(Xq, 0.2)
    with KeyedModels(forest(), n_workers=2, checkpoint_dir=kdir, checkpoint_every=500) as km:
        for a0, b0 in batches(1200, 400):
            km.learn_many(np.arange(a0, b0) % 4, X[a0:b0], y[a0:b0])
        km.checkpoint()
        b = km.predict(np.arange(100) % 4, Xq)
    for d in (sdir, kdir):  # the current checkpoint only: older ones were removed
        assert "checkpoint.json" in os.listdir(d)
        assert len([f for f in os.listdir(d) if f.startswith("ckpt-")]) == 1
    np.save(tmp_path / "xq.npy", Xq)
    address = ray.get_runtime_context().gcs_address  # a new driver (and actors) on the same Ray
    code = FRESH.format(src=SRC, env=WORKER_ENV, address=address, xq=str(tmp_path / "xq.npy"),
                        sdir=sdir, kdir=kdir, out_a=str(tmp_path / "a.npy"),
                        out_b=str(tmp_path / "b.npy"))  # fmt: skip
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=900)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), b)


def test_checkpoint_store_on_an_fsspec_url():
    pytest.importorskip("fsspec", reason="fsspec is not installed")
    from streamforest.distributed.storage import CheckpointStore, read_model, write_model

    X, y = data(300)
    model = forest().learn_many(X, y)
    store = CheckpointStore("memory://sf-test/run")
    for seq in (1, 2):
        write_model(model, store.file(seq, "worker-0.sfm"))
        store.write_manifest({"seq": seq, "workers": [store.file(seq, "worker-0.sfm")]})
    m = store.read_manifest()
    assert m["seq"] == 2
    back = read_model(m["workers"][0])
    np.testing.assert_array_equal(back.predict(X[:50]), model.predict(X[:50]))
    import fsspec

    fs = fsspec.filesystem("memory")
    assert not fs.exists("/sf-test/run/ckpt-0000000001")  # the previous checkpoint is gone
    assert fs.exists("/sf-test/run/ckpt-0000000002/worker-0.sfm")
