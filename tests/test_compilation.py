"""The first-compile message: logged once per process when a streamforest kernel compiles, never
when kernels load from numba's on-disk cache; and the compile watch used by the CLI."""

import logging
import os
import subprocess
import sys
import textwrap

from numba.core import event

import streamforest
from streamforest import compilation

_FUNCS = """
from numba import njit

@njit
def add_one(x):
    return x + 1

@njit
def twice(x):
    return 2 * add_one(x) - 2
"""


def _module(name):
    """Throw-away jitted functions whose ``__module__`` is ``name`` (compiled on each call with
    new types: no cache)."""
    ns = {"__name__": name}
    exec(compile(_FUNCS, f"<{name}>", "exec"), ns)
    return ns


def test_listener_logs_once_for_streamforest_kernels_only(caplog):
    log = logging.getLogger("streamforest.test-listener")
    listener = compilation.CompileListener(log)
    caplog.set_level(logging.DEBUG, logger="streamforest")
    with event.install_listener("numba:compile", listener):
        other = _module("someone_else.kernels")
        other["twice"](1)
        assert listener.compiled == 0 and not listener.announced
        ours = _module("streamforest._throwaway")
        with listener.watch() as w:
            ours["add_one"](1.5)  # compiles add_one(float64)
            ours["twice"](1)  # compiles twice(int64), and add_one(int64) inside it
            ours["twice"](2)  # already compiled: no event
        ours["add_one"](1j)
    records = [r for r in caplog.records if r.name == log.name]
    first = [r for r in records if r.levelno == logging.INFO]
    assert len(first) == 1 and "streamforest.warmup()" in first[0].getMessage()
    assert "warmup()" in first[0].getMessage() and "cached on disk" in first[0].getMessage()
    assert listener.compiled == 4 and w.compiled == 3 and w.seconds > 0
    assert listener.seconds >= w.seconds
    # one DEBUG line per outermost kernel compiled (add_one inside twice is not one)
    assert sum(r.levelno == logging.DEBUG for r in records) == 3


def test_watch_calls_back_around_each_outermost_compilation():
    calls = []
    ours = _module("streamforest._throwaway2")
    with compilation.watch(lambda: calls.append("start"), lambda: calls.append("end")) as w:
        ours["twice"](3.5)
    assert calls == ["start", "end"] and w.compiled == 2
    with compilation.watch(lambda: calls.append("again")) as w:
        ours["twice"](4.5)  # already compiled
    assert calls == ["start", "end"] and w.compiled == 0


def test_one_listener_per_process():
    compilation.install()
    compilation.install()
    ours = [
        x for x in event._registered["numba:compile"] if isinstance(x, compilation.CompileListener)
    ]
    assert ours == [compilation.install()]
    assert streamforest.warmup is compilation.warmup


_SCRIPT = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s|%(message)s")
    import numpy as np
    from streamforest import stats
    stats.welford_update(0.0, 0.0, 0.0, 0.0, 1.0, 1.0)  # two small kernels of the package
    stats.chan_merge(1.0, 1.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0)
    print("done")
    """
)


def test_message_on_compile_and_none_on_cache_load(tmp_path):
    """Two processes with the same fresh cache: the first compiles (one message, and the total
    at exit), the second loads from the cache (no message)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=300
        )
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.splitlines() for r in runs)
    announce = [x for x in first if x.startswith("streamforest|compiling streamforest's")]
    assert len(announce) == 1 and str(tmp_path / "cache") in announce[0]
    assert first.index(announce[0]) < first.index("done")
    assert any("compiled 2 kernel signatures" in x for x in first[first.index("done") :])
    assert second == ["done"]
    assert any(f.endswith(".nbi") for _, _, fs in os.walk(tmp_path / "cache") for f in fs)


_CLASSIFIER_WORKLOAD = """
import numpy as np
import pandas as pd
import streamforest as sf
from streamforest import compilation

if {warm}:
    compilation.warmup(["conformal-actser-seeds", "ht-classifier", "adaptive-conformal-actser"])
before = compilation._signatures()
rng = np.random.default_rng(5)
X = rng.random((3000, 6))
y = (X[:, 0] * 3).astype(int)  # int labels (the warm-up uses strings), other widths and sizes
models = [
    sf.ConformalClassifier(sf.ACTSEREnsembleClassifier(mode="rforest", n_members=3, seed=2)),
    sf.HoeffdingTreeClassifier(grace_period=30),
    sf.AdaptiveConformalClassifier(sf.ConformalClassifier(sf.ACTSERClassifier(seed=1))),
]
for m in models:
    for i in range(200):
        x = {{f"f{{j}}": X[i, j] for j in range(6)}}
        x["col"] = "r" if i % 3 else "s"
        m.predict_one(x)
        m.predict_proba_one(x)
        if hasattr(m, "predict_set_one"):
            m.predict_set_one(x, alpha=0.2)
        m.learn_one(x, int(y[i]))
    frame = pd.DataFrame(X[200:], columns=[f"f{{j}}" for j in range(6)])
    frame["col"] = np.where(np.arange(2800) % 3, "r", "s")
    m.learn_many(frame.iloc[:1500], y[200:1700])
    m.predict_proba(frame.iloc[1500:])
    if hasattr(m, "predict_sets"):
        m.predict_sets(frame.iloc[1500:], alpha=[0.2, 0.1])
print(compilation._signatures() - before)
"""


def test_warmup_compiles_what_the_classifiers_run():
    """After ``warmup`` of the classifier entries, other classifiers (other sizes, widths, label
    types) compile and load nothing more; without it the same workload loads kernels (so the
    check can fail).  In fresh processes: this one has loaded kernels already."""
    pytest = __import__("pytest")
    pytest.importorskip("pandas")
    added = []
    for warm in (True, False):
        r = subprocess.run([sys.executable, "-c", _CLASSIFIER_WORKLOAD.format(warm=warm)],
                           capture_output=True, text=True, timeout=1200)  # fmt: skip
        assert r.returncode == 0, r.stderr
        added.append(int(r.stdout.split()[-1]))
    assert added[0] == 0 and added[1] > 0


def test_read_only_and_strided_inputs_compile_nothing_more():
    """A read-only matrix (memory map, pandas' copy-on-write) and a column slice ``Y[:, 0]`` as
    targets or weights reach the kernels as the usual C-contiguous writeable arrays: no second
    signature (which, for the tree kernels, is a minute of compiling)."""
    import numpy as np

    rng = np.random.default_rng(4)
    X = rng.random((900, 5))
    Y = np.column_stack([X @ np.arange(5.0), X[:, 0]])
    W = np.ones((900, 2))
    ro = X.copy()
    ro.flags.writeable = False
    alphas = np.array([0.1, 0.2])
    ro_alphas = alphas.copy()
    ro_alphas.flags.writeable = False

    def models():
        return [
            streamforest.OnlineForestRegressor(n_trees=2, seed=0),
            streamforest.CPApproximate(streamforest.OnlineForestRegressor(n_trees=2, seed=0)),
        ]

    def run(ms, X, y, w, alphas):
        for m in ms:
            for a in range(0, 900, 300):
                m.learn_many(X[a : a + 300], y[a : a + 300], w[a : a + 300])
                m.predict(X[:10])
                if hasattr(m, "predict_interval"):
                    m.predict_interval(X[:10], alpha=alphas)

    run(models(), X, Y[:, 0].copy(), W[:, 1].copy(), alphas)  # every kernel compiled (or loaded)
    before = compilation._signatures()
    run(models(), ro, Y[:, 0], W[:, 1], ro_alphas)  # the same data, read-only and strided
    assert compilation._signatures() == before


def test_warmup_in_two_processes_covers_every_model_asked():
    """``warmup(processes=2)`` shares the models out to two fresh processes: each model (and
    the sketch) is reported once, and the kernels they ran load here from the shared cache
    (in fresh processes, nothing compiles the second time)."""
    asked = ["tree", "ht-classifier", "kll-sketch"]
    r = compilation.warmup(asked, processes=2)
    assert sorted(r.models) == sorted(asked)
    assert all(loaded + compiled > 0 for _, compiled, loaded in r.models.values())
    again = compilation.warmup(asked, processes=2)
    assert again.compiled == 0 and again.loaded > 0


def _literal_signatures() -> list[str]:
    """Kernel signatures with a literal argument type: those of this process, and those in the
    on-disk cache's indexes (the kernels that loaded from the cache did not type their callees
    here; the index keeps what compiled them, for the current source)."""
    from numba.core import types

    found = set()
    for d in compilation._dispatchers():
        sigs = list(d.signatures)
        try:
            sigs += [key[0] for key in d._cache._cache_file._load_index()]
        except Exception:  # no cache for this kernel (or numba's internals moved)
            pass
        for sig in sigs:
            if any(isinstance(a, types.Literal) for a in sig):
                found.add(f"{d.py_func.__module__}.{d.py_func.__qualname__}{sig}")
    return sorted(found)


def test_no_kernel_is_compiled_for_a_literal_constant():
    """A kernel that calls another with an integer constant (or a variable first set to one)
    would have numba compile the callee a second time, for ``Literal[int]`` (seconds of every
    cold start per splitting kernel).  A workload that splits, starts and adopts alternate
    trees, deactivates leaves under a bin budget and uses the extra-trees rule, then: no kernel
    signature of the package holds a literal type (earlier tests' kernels count too)."""
    import numpy as np

    rng = np.random.default_rng(3)
    X = rng.random((4000, 6))
    y = 10 * X[:, 0] + 5 * (X[:, 1] > 0.5) + rng.standard_normal(4000)
    y[2000:] = -3 * y[2000:]  # an abrupt change: detectors fire, alternates start
    models = [
        streamforest.OnlineForestRegressor(
            n_trees=2, tree=streamforest.HoeffdingTreeRegressor(grace_period=50), seed=1
        ),
        streamforest.HoeffdingTreeRegressor(
            grace_period=50, max_observer_bins=64, drift_detection=True, ph_threshold=5.0
        ),
        streamforest.ATSERRegressor(seed=2),
    ]
    labels = (y > np.median(y)).astype(int)
    models += [streamforest.ACTSERClassifier(seed=3), streamforest.HoeffdingTreeClassifier()]
    for k, m in enumerate(models):
        target = labels if k >= 3 else y
        for a in range(0, 4000, 500):
            m.learn_many(X[a : a + 500], target[a : a + 500])
        m.predict(X[:5])
    assert _literal_signatures() == []


def test_entries_the_warm_up_skips_compile_nothing_the_others_do_not():
    """An entry left out of the full warm-up (``warmed=False``: a method over a forest without
    a tree template) has its method and its forest each warmed by an entry of its own, with the
    same layers below the method (so the same kernels): the method over the default forest,
    the forest alone, and any wrapper over a warmed entry of the method."""
    from streamforest import registry

    skipped = [registry.get(n) for n in registry.names() if not registry.get(n).warmed]
    warmed = [registry.get(n) for n in registry.names() if registry.get(n).warmed]
    assert skipped, "the registry has no skipped entry: this test checks nothing"
    for spec in skipped:
        assert spec.layers[-1] == "forest" and "tree" not in spec.layers
        method = spec.method_cls or spec.cls
        forest_alone = [w for w in warmed if w.layers == ("tree",) and w.cls is spec.forest_cls]
        assert forest_alone, f"{spec.name}: its forest {spec.forest_cls.__name__} is not warmed"
        wrapped = spec.layers[0] == "adaptive"
        same_method = [
            w
            for w in warmed
            if (w.method_cls or w.cls) is method and (w.layers[0] == "adaptive") == wrapped
        ]
        assert same_method, f"{spec.name}: no warmed entry runs {method.__name__} that way"


_TYPED_LIST_WORKLOAD = """
import numpy as np
from numba.core import event
import streamforest as sf

compiled = []


class Listener(event.Listener):
    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        compiled.append(f"{{func.__module__}}.{{func.__qualname__}}")

    def on_end(self, ev):
        pass


event.register("numba:compile", Listener())
rng = np.random.default_rng(2)
X = rng.random((700, 4))
y = 10 * X[:, 0] + X[:, 1] + rng.standard_normal(700)
model = {model}
model.learn_many(X[:300], y[:300])
model.predict_learn_many(X[300:600], y[300:600], alpha=[0.1, 0.2])
model.predict_interval(X[600:], alpha=0.1)
print([name for name in compiled if name.startswith("numba.typed.")])
"""


def test_interval_methods_compile_no_numba_typed_list():
    """numba compiles the methods of its typed lists (``numba.typed``) again in every process,
    never caching them (~0.8 s of each process's first use): CPExact's refresh events and
    OnlineQRF's leaf-sketch records are kept in plain arrays instead, so a process running them
    compiles none of numba's typed-list functions (in a fresh process: this one may have built
    typed lists already).  (A cold cache also compiles numba's own array helpers, inside
    streamforest's kernels: those are cached with them.)"""
    forest = "sf.OnlineForestRegressor(n_trees=2, seed=0)"
    for model in (f"sf.CPExact({forest}, calibration_size=100)", f"sf.OnlineQRF({forest}, k=32)"):
        r = subprocess.run([sys.executable, "-c", _TYPED_LIST_WORKLOAD.format(model=model)],
                           capture_output=True, text=True, timeout=1200)  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert r.stdout.split("\n")[-2] == "[]", f"{model} compiled {r.stdout}"


def test_warmup_in_processes_from_an_unguarded_script_fails_instead_of_hanging(tmp_path):
    """Spawned workers import the main script again: one that calls ``warmup(processes=2)``
    without an ``if __name__ == "__main__":`` guard kills them at start.  multiprocessing's Pool
    replaced them for ever (the call never returned); now the call raises and says why."""
    script = tmp_path / "unguarded.py"
    script.write_text('import streamforest\nstreamforest.warmup(models=["tree"], processes=2)\n')
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=300, check=False)  # fmt: skip
    assert out.returncode != 0
    assert 'if __name__ == "__main__":' in out.stderr and "RuntimeError" in out.stderr
