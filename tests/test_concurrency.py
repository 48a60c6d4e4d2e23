"""The thread-safety contract (issue #17): a model shared by threads is wrapped in
``streamforest.ThreadSafe``; 4 threads predicting while 1 learns see only whole states, and the
learner leaves the model a single thread would."""

import copy
import pickle
import threading
import time

import numpy as np
import pytest

import streamforest as sf

SECONDS = 1.0  # per model: learning stops after this long (and at least MIN_STEPS steps)
MIN_STEPS = 100
WARM = 300  # examples learnt before the predicting threads start


def _sequence(n, rng):
    X = rng.random((n, 4))
    y = 10 * X[:, 0] + 5 * np.sin(6 * X[:, 1]) + rng.standard_normal(n)
    return X, y


def _models():
    forest = sf.OnlineForestRegressor(n_trees=4, seed=0)
    return [
        sf.CPApproximate(forest=forest, calibration_size=200, seed=1),
        sf.OnlineQRF(forest=forest, k=32, seed=1),
    ]


def _warm(model, X, y):
    """The first WARM examples, learnt and predicted by every call the threads make (so no
    kernel compiles while they run)."""
    model.learn_many(X[: WARM - 1], y[: WARM - 1])
    x = {j: float(v) for j, v in enumerate(X[WARM - 1])}
    model.learn_one(x, float(y[WARM - 1]))
    model.predict_one(x), model.predict(X[:4])
    model.predict_interval_one(x, alpha=0.2), model.predict_interval_one(x, alpha=[0.1, 0.3])
    model.predict_interval(X[:8], alpha=0.2)


def _learn(model, X, y, stop_at=None):
    """The learning sequence: per-example steps, every 50th example as a batch of 50.  Returns
    how many examples were learnt (stopping early once ``stop_at(i)`` is true)."""
    i, n = 0, len(y)
    while i < n:
        if i % 500 == 250:
            model.learn_many(X[i : i + 50], y[i : i + 50])
            i += 50
        else:
            model.learn_one({j: float(v) for j, v in enumerate(X[i])}, float(y[i]))
            i += 1
        if stop_at is not None and stop_at(i):
            break
    return i


def _hammer(model, check, learn):
    """4 threads run ``check(model, rng)`` in a loop while this one runs ``learn(stop_at)``
    for about SECONDS (at least MIN_STEPS examples); returns what ``learn`` returns, after
    re-raising any predictor's failure and checking every thread ran while it learnt."""
    errors, counts = [], [0] * 4
    done = threading.Event()

    def predictor(k):
        local = np.random.default_rng(k)
        try:
            while not done.is_set():
                check(model, local)
                counts[k] += 1
        except BaseException as e:  # reported by the main thread
            errors.append(e)
            done.set()

    threads = [threading.Thread(target=predictor, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    end = time.monotonic() + SECONDS
    try:
        learnt = learn(lambda i: i >= MIN_STEPS and time.monotonic() > end)
    finally:
        done.set()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    assert min(counts) > 0  # all ran while it learnt
    return learnt


@pytest.mark.parametrize("make", range(len(_models())), ids=lambda i: type(_models()[i]).__name__)
def test_four_predicting_threads_and_one_learner(make, rng):
    X, y = _sequence(200_000, rng)
    model = sf.ThreadSafe(_models()[make])
    _warm(model, X, y)
    probes = X[-64:]

    def check(model, local):
        r = probes[local.integers(len(probes))]
        x = {j: float(v) for j, v in enumerate(r)}
        checks = [
            np.array([model.predict_interval_one(x, alpha=0.2)]),
            model.predict_interval(probes[:8], alpha=0.2),
            np.array(model.predict_interval_one(x, alpha=[0.1, 0.3])),
        ]
        points = [model.predict_one(x), *model.predict(probes[:4])]
        assert np.isfinite(points).all(), points
        for iv in checks:
            assert np.isfinite(iv).all(), iv
            assert np.all(iv[..., 0] <= iv[..., 1]), iv

    learnt = WARM + _hammer(model, check, lambda stop: _learn(model, X[WARM:], y[WARM:], stop))
    assert learnt >= WARM + MIN_STEPS

    alone = _models()[make]
    _warm(alone, X, y)
    assert _learn(alone, X[WARM:learnt], y[WARM:learnt]) == learnt - WARM
    probe = X[-1000:]
    np.testing.assert_array_equal(model.predict(probe), alone.predict(probe))
    np.testing.assert_array_equal(
        model.predict_interval(probe, alpha=[0.1, 0.3]), alone.predict_interval(probe, [0.1, 0.3])
    )
    with model.lock:
        assert pickle.dumps(model.model) == pickle.dumps(alone)


def test_wrapper_forwards_everything_and_copies():
    model = sf.ThreadSafe(sf.HoeffdingTreeRegressor(grace_period=20, seed=0))
    X = np.random.default_rng(0).random((100, 2))
    assert model.learn_many(X, X[:, 0]) is model  # chained calls stay locked
    assert model.fit(X, X[:, 1]) is model and model.n_features_in_ == 2
    assert model.apply(X[:3]).shape == (3,)  # any method, through the lock
    model.grace_period = 30  # attributes are the model's
    assert model.model.grace_period == 30 and model.get_params()["grace_period"] == 30
    for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert isinstance(twin, sf.ThreadSafe) and twin.lock is not model.lock
        np.testing.assert_array_equal(twin.predict(X), model.predict(X))
    assert sf.ThreadSafe(model).model is model.model
    with model.lock:  # re-entrant: the holder may still call through the wrapper
        assert model.predict(X[:1]).shape == (1,)
    with pytest.raises(AttributeError):
        model.nope  # noqa: B018


def test_a_classifier_with_sets_under_four_predicting_threads_and_one_learner(rng):
    """The same contract for a classifier with prediction sets: every probability row sums to
    1, every set holds known labels, and the learner leaves what a single thread would."""
    X, yr = _sequence(200_000, rng)
    y = np.where(yr > 8, "hi", np.where(yr > 4, "mid", "lo")).astype(object)

    def make():
        m = sf.ACTSEREnsembleClassifier(mode="rforest", n_members=4, grace_period=25, seed=0)
        return sf.ConformalClassifier(m, calibration_size=200, seed=1)

    def warm(m):
        m.learn_many(X[: WARM - 1], y[: WARM - 1])
        x = {j: float(v) for j, v in enumerate(X[WARM - 1])}
        m.learn_one(x, y[WARM - 1])
        m.predict_one(x), m.predict_proba_one(x), m.predict(X[:4]), m.predict_proba(X[:4])
        m.predict_set_one(x, alpha=0.2), m.predict_sets(X[:8], alpha=[0.1, 0.3])

    def learn(m, stop_at=None):
        i, n = WARM, len(y)
        while i < n:
            if i % 500 == 250:
                m.learn_many(X[i : i + 50], y[i : i + 50])
                i += 50
            else:
                m.learn_one({j: float(v) for j, v in enumerate(X[i])}, y[i])
                i += 1
            if stop_at is not None and stop_at(i):
                break
        return i

    model = sf.ThreadSafe(make())
    warm(model)
    probes = X[-64:]

    def check(model, local):
        x = {j: float(v) for j, v in enumerate(probes[local.integers(len(probes))])}
        known = set(model.classes_)
        p = model.predict_proba_one(x)
        assert set(p) <= known and abs(sum(p.values()) - 1.0) < 1e-9, p
        assert set(model.predict_set_one(x, alpha=0.2)) <= set(model.classes_)
        P = model.predict_proba(probes[:8])
        assert np.allclose(P.sum(axis=1), 1.0), P
        S = model.predict_sets(probes[:8], alpha=[0.1, 0.3])
        assert np.all(S[:, 0] >= S[:, 1])  # nested
        assert model.predict_one(x) in set(model.classes_)

    learnt = _hammer(model, check, lambda stop: learn(model, lambda i: stop(i - WARM)))
    assert learnt >= WARM + MIN_STEPS

    alone = make()
    warm(alone)
    assert learn(alone, lambda i: i >= learnt) == learnt
    probe = X[-1000:]
    np.testing.assert_array_equal(model.predict(probe), alone.predict(probe))
    np.testing.assert_array_equal(model.predict_sets(probe, [0.1, 0.3]),
                                  alone.predict_sets(probe, [0.1, 0.3]))  # fmt: skip
    with model.lock:
        assert pickle.dumps(model.model) == pickle.dumps(alone)


# --- models without a wrapper (issue #33) ---------------------------------------------------------
@pytest.mark.parametrize("name", ["qrf", "cp-approx", "cp-exact", "normalized-cp", "tree"])
def test_an_unwrapped_model_with_one_learner_and_three_predictors(name):
    """Every model holds its own lock per public call: 1 thread learning (per example and in
    batches) while 3 predict (per example and in batches) never crashes the process (each run
    is a child process, its exit code checked), every prediction is well formed and the model
    ends as the same pickle as one that learnt alone (tests/thread_hammer.py)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    code = (
        f"import sys, json; sys.path.insert(0, {str(root / 'tests')!r}); import thread_hammer; "
        f"print(json.dumps(thread_hammer.drive([{name!r}], runs=1, rows=1500)))"
    )
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {name: {"ok": 1}}


def test_the_lock_is_no_state_and_thread_safe_wraps_the_models_own_lock():
    from streamforest.concurrency import lock_of

    model = sf.HoeffdingTreeRegressor(grace_period=20, seed=0)
    X = np.random.default_rng(0).random((100, 2))
    model.learn_many(X, X[:, 0])
    before = pickle.dumps(model)
    lock = lock_of(model)
    assert "_call_lock" not in model.__dict__ and lock_of(model) is lock
    assert pickle.dumps(model) == before  # not pickled (nor saved, nor copied)
    assert lock_of(copy.deepcopy(model)) is not lock
    assert sf.ThreadSafe(model).lock is lock
    held = threading.Event()
    release = threading.Event()

    def holder():
        with lock:
            held.set()
            release.wait()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    result = []
    caller = threading.Thread(target=lambda: result.append(model.predict(X[:2])))
    caller.start()
    caller.join(timeout=0.5)
    assert caller.is_alive() and not result  # a call waits while another thread holds the lock
    release.set()
    thread.join()
    caller.join()
    assert result[0].shape == (2,)
