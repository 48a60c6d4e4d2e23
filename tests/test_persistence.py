"""Persistence: save/load round trips checked in a fresh process, resumed learning, versioning,
refusal of unsafe files, the generic encoder, and pickle / deepcopy of every estimator.

Only public API is used on the estimators, so these tests hold whatever their internals are.
"""

from __future__ import annotations

import copy
import io
import json
import math
import os
import pickle
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import streamforest as sf
from streamforest import persistence, streams

ALPHAS = [0.1, 0.05]
QS = [0.1, 0.5, 0.9]
N_ONE, N_MANY, N_RESUME = 300, 2200, 700  # learn_one rows, learn_many rows, rows after loading
ROOT = Path(__file__).resolve().parents[1]


# --- data ----------------------------------------------------------------------------------------
def make_frame(n: int, seed: int, cats=("red", "green", "blue"), late: bool = False):
    """Features ``a``, ``b`` (numeric, with NaNs), ``7`` (an int name), ``grp`` (ints declared
    nominal), ``cat`` (strings, with missing values) and optionally ``late`` (a feature that
    only appears after loading); the target changes at mid-stream."""
    rng = np.random.default_rng(seed)
    a, b, c = rng.random(n), rng.random(n), rng.normal(size=n)
    grp = rng.integers(0, 4, n)
    cat = rng.choice(np.array(cats, dtype=object), n)
    y = 5 * a + np.where(cat == "red", 3.0, 0.0) + 2.0 * (grp == 2) + np.sin(6 * b) + c
    y = y + rng.normal(size=n)
    y[n // 2 :] *= -1.5  # a change the drift detectors may react to
    a[rng.random(n) < 0.05] = np.nan
    c[rng.random(n) < 0.05] = np.nan
    cat[rng.random(n) < 0.03] = None
    X = pd.DataFrame({"a": a, "b": b, 7: c, "grp": grp, "cat": cat})
    if late:
        X["late"] = rng.random(n)
    return X, y


def rows(X: pd.DataFrame) -> list[dict]:
    out = []
    for r in X.itertuples(index=False):
        d = {}
        for name, v in zip(X.columns, r, strict=True):
            if name == "grp":
                v = int(v)
            d[name] = v
        out.append(d)
    return out


X_FIT, Y_FIT = make_frame(N_ONE + N_MANY, seed=1)
X_RES, Y_RES = make_frame(N_RESUME, seed=2, cats=("red", "green", "blue", "purple"), late=True)
X_TEST, _ = make_frame(300, seed=3, cats=("red", "green", "blue", "purple", "black"), late=True)


# --- estimators ----------------------------------------------------------------------------------
def tree(**kw):
    kw = {"grace_period": 50, "nominal_features": ("grp",), "seed": 3, **kw}
    return sf.HoeffdingTreeRegressor(**kw)


def forest(**kw):
    return sf.OnlineForestRegressor(**{"n_trees": 3, "tree": tree(), "seed": 5, **kw})


MODELS = {
    "HoeffdingTreeRegressor": lambda: tree(drift_threshold=20.0),
    "OnlineForestRegressor": lambda: forest(aggregation="median", drift_threshold=20.0),
    "CPApproximate": lambda: sf.CPApproximate(forest=forest(), calibration_size=150, seed=7),
    "CPExact": lambda: sf.CPExact(forest=forest(), calibration_size=150, seed=8),
    "ConformalQRF": lambda: sf.ConformalQRF(
        forest=forest(), alphas=(0.05, 0.1), calibration_size=150, aci_gamma=0.01, k=16, seed=9
    ),
    "OnlineQRF": lambda: sf.OnlineQRF(
        forest=forest(), k=16, interval="hdi", split_sketch="parent", seed=10
    ),
    "GaussianInterval": lambda: sf.GaussianInterval(forest=forest(), seed=11),
    "NormalizedConformal": lambda: sf.NormalizedConformal(
        forest=forest(), calibration_size=150, normalize="residuals", seed=16
    ),
    "NormalizedConformal[groups]": lambda: sf.NormalizedConformal(
        forest=forest(), calibration_size=150, seed=16, groups=["grp", "cat"]
    ),
    "CPApproximate[multivalid]": lambda: sf.CPApproximate(
        forest=forest(), seed=7, groups=sf.Multivalid("grp", alphas=(0.1, 0.05))
    ),
    "KLLSketch": lambda: sf.KLLSketch(k=16, seed=12),
    "ATSERRegressor": lambda: sf.ATSERRegressor(
        grace_period=40, nominal_features=("grp",), seed=13
    ),
    "ATSEREnsembleRegressor": lambda: sf.ATSEREnsembleRegressor(
        mode="obag", n_members=3, grace_period=40, nominal_features=("grp",), seed=14
    ),
    "ABORFRegressor": lambda: sf.ABORFRegressor(
        n_trees=3, depth=5, lambda_value=1.0, nominal_features=("grp",), seed=15
    ),
    "ABORFRegressor[bayesian]": lambda: sf.ABORFRegressor(
        n_trees=3, depth=5, leaf_model="bayesian", nominal_features=("grp",), seed=25
    ),
    "SGBTRegressor": lambda: sf.SGBTRegressor(
        n_steps=8, tree=tree(drift_threshold=20.0), drift_threshold=20.0, seed=26
    ),
    "AMFRegressor": lambda: sf.AMFRegressor(n_trees=3, step=0.5, seed=27),
    "AMFClassifier": lambda: sf.AMFClassifier(n_trees=3, dirichlet=0.25, seed=28),
    "HoeffdingTreeClassifier": lambda: sf.HoeffdingTreeClassifier(
        grace_period=40, nominal_features=("grp",), seed=16
    ),
    "ACTSERClassifier": lambda: sf.ACTSERClassifier(
        grace_period=40, alt_period=40, ph_threshold=5.0, nominal_features=("grp",), seed=17
    ),
    "ACTSEREnsembleClassifier": lambda: sf.ACTSEREnsembleClassifier(
        mode="rforest", n_members=3, nominal_features=("grp",), seed=18
    ),
    "AdaptiveConformal": lambda: sf.AdaptiveConformal(
        sf.CPApproximate(forest=forest(), calibration_size=150, seed=19), method="pid"
    ),
    "ConformalClassifier": lambda: sf.ConformalClassifier(
        sf.HoeffdingTreeClassifier(grace_period=40, nominal_features=("grp",), seed=20),
        conformity_score="raps",
        calibration_size=150,
    ),
    "AdaptiveConformalClassifier": lambda: sf.AdaptiveConformalClassifier(
        sf.ConformalClassifier(
            sf.ACTSERClassifier(grace_period=40, nominal_features=("grp",), seed=21),
            calibration_size=150,
        ),
        gamma=0.02,
    ),
    "ThreadSafe": lambda: sf.ThreadSafe(sf.OnlineQRF(forest=forest(), k=16, seed=22)),
    "HDIForestRegressor": lambda: sf.HDIForestRegressor(n_estimators=8, seed=23),
    "QuantileForestRegressor": lambda: sf.QuantileForestRegressor(n_estimators=8, seed=24),
}
CLASSIFIERS = (
    "AMFClassifier",
    "HoeffdingTreeClassifier",
    "ACTSERClassifier",
    "ACTSEREnsembleClassifier",
    "ConformalClassifier",
    "AdaptiveConformalClassifier",
)
BATCH = ("HDIForestRegressor", "QuantileForestRegressor")  # fit on numbers only, no learn_one
# public classes of ``sf.__all__`` that hold no learnt state
NOT_ESTIMATORS = ("Multivalid", "FeatureCapWarning")


def numeric(X: pd.DataFrame) -> np.ndarray:
    """The batch forests' view of a frame: its two numeric columns, NaN as 0."""
    return X[["a", "b"]].fillna(0.0).to_numpy()


def is_classifier(model) -> bool:
    return type(model).__name__ in CLASSIFIERS


def labels(y: np.ndarray) -> np.ndarray:
    """Class labels of the regression targets: three classes, and a fourth ("top") among the
    rows learnt after loading (a class first seen then)."""
    return np.where(y > 9.0, "top", np.where(y > 4.0, "hi", np.where(y > 0.0, "lo", "neg")))


def fit(model) -> None:
    """The learning before saving: dicts through ``learn_one``, then a DataFrame."""
    if isinstance(model, sf.KLLSketch):
        model.update_many(Y_FIT[:N_ONE])
        model.update_many(Y_FIT[N_ONE:], np.arange(N_MANY) % 3 + 1)
        return
    if type(model).__name__ in BATCH:
        model.fit(numeric(X_FIT), Y_FIT)
        return
    Y = labels(np.minimum(Y_FIT, 8.0)) if is_classifier(model) else Y_FIT  # no "top" yet
    for x, y in zip(rows(X_FIT.iloc[:N_ONE]), Y[:N_ONE], strict=True):
        model.learn_one(x, y)
    model.learn_many(X_FIT.iloc[N_ONE:], Y[N_ONE:])


def outputs(model) -> dict[str, np.ndarray]:
    """Everything the model predicts for ``X_TEST``."""
    if isinstance(model, sf.KLLSketch):
        return {
            "quantile": model.quantile(QS),
            "rank": np.array([model.rank(0.3), model.rank(-2.0)]),
            "n": np.array([model.n, model.num_retained]),
            "min_max": np.array([model.min, model.max]),
        }
    if type(model).__name__ in BATCH:
        X = numeric(X_TEST)
        return {
            "predict": model.predict(X),
            "interval": model.predict_interval(X, alpha=ALPHAS),
            "quantiles": model.predict_quantiles(X, QS),
        }
    out = {
        "predict": model.predict(X_TEST),
        "predict_one": np.array([model.predict_one(x) for x in rows(X_TEST.iloc[:20])]),
    }
    if is_classifier(model):
        out["predict"] = out["predict"].astype(str)  # labels: np.load reads no object arrays
        out["proba"] = model.predict_proba(X_TEST)
        out["proba_one"] = np.array(
            [list(model.predict_proba_one(x).values()) for x in rows(X_TEST.iloc[:20])]
        )
        out["classes"] = np.array(model.classes_)
    if hasattr(model, "predict_sets"):
        out["sets"] = model.predict_sets(X_TEST, alpha=0.1)
        out["sets_one"] = np.array(
            ["|".join(sorted(model.predict_set_one(x, alpha=0.2))) for x in rows(X_TEST.iloc[:20])]
        )
    if hasattr(model, "predict_interval"):
        out["interval"] = model.predict_interval(X_TEST, alpha=ALPHAS)
    if hasattr(model, "predict_quantiles"):
        out["quantiles"] = model.predict_quantiles(X_TEST, QS)
    return out


def resume(model) -> dict[str, np.ndarray]:
    """More learning (new category, new feature, weights, prequential pass), then outputs."""
    out = {}
    if isinstance(model, sf.KLLSketch):
        model.update_many(Y_RES)
        other = sf.KLLSketch(k=16, seed=1)
        other.update_many(Y_FIT[:500])
        model.merge(other)
        return {f"after:{k}": v for k, v in outputs(model).items()}
    if type(model).__name__ in BATCH:  # a batch model learns anew: the same seed, the same fit
        model.fit(numeric(X_RES), Y_RES)
        return {f"after:{k}": v for k, v in outputs(model).items()}
    Y = labels(Y_RES) if is_classifier(model) else Y_RES
    for x, y in zip(rows(X_RES.iloc[:50]), Y[:50], strict=True):
        model.learn_one(x, y)
    w = np.arange(150) % 3 * 0.5
    model.learn_many(X_RES.iloc[50:200], Y[50:200], w=w)
    if is_classifier(model):
        model.learn_many(X_RES.iloc[200:], Y[200:])
    elif hasattr(model, "predict_interval"):
        pred, itv = model.predict_learn_many(X_RES.iloc[200:], Y_RES[200:], alpha=ALPHAS)
        out["prequential"], out["prequential_interval"] = pred, itv
    else:
        out["prequential"] = model.predict_learn_many(X_RES.iloc[200:], Y_RES[200:])
    out.update({f"after:{k}": v for k, v in outputs(model).items()})
    return out


def assert_same(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert x.tobytes() == y.tobytes(), f"{k} differs"


# --- fixtures ------------------------------------------------------------------------------------
class Fitted:
    """A model saved after :func:`fit`, its pickle and deepcopy taken then, and what the
    uninterrupted model gives afterwards."""

    def __init__(self, name, folder: Path):
        model = MODELS[name]()
        fit(model)
        self.path = folder / f"{name}.sfm"
        sf.save(model, self.path)
        self.pickled = pickle.dumps(model)
        self.deep = copy.deepcopy(model)
        self.before = outputs(model)
        self.saved_after_predicting = persistence._dumps(model)
        self.after = resume(model)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> dict[str, Fitted]:
    folder = tmp_path_factory.mktemp("models")
    return {name: Fitted(name, folder) for name in MODELS}


CHILD = r"""
import pickle, sys
import numpy as np
import streamforest as sf
from streamforest import persistence
from tests import test_persistence as T

def _refuse(*a, **k):
    raise AssertionError("loading a model used pickle")

folder = sys.argv[1]
for name in sys.argv[2:]:
    saved = pickle.load, pickle.loads, pickle.Unpickler
    pickle.load = pickle.loads = pickle.Unpickler = _refuse
    model = sf.load(f"{folder}/{name}.sfm")
    pickle.load, pickle.loads, pickle.Unpickler = saved
    assert type(model).__name__ == name.split("[")[0], type(model)
    with open(f"{folder}/{name}.resaved", "wb") as f:
        f.write(persistence._dumps(model))
    out = {"before|" + k: v for k, v in T.outputs(model).items()}
    out.update({"after|" + k: v for k, v in T.resume(model).items()})
    np.savez(f"{folder}/{name}.child.npz", **out)
print("ok")
"""


@pytest.fixture(scope="module")
def child(fitted) -> dict[str, tuple[dict, dict, bytes]]:
    """Loads every saved model in one fresh interpreter, which predicts, re-saves and resumes."""
    folder = next(iter(fitted.values())).path.parent
    src = Path(sf.__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(src), str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), *fitted],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-4000:]
    out = {}
    for name in fitted:
        with np.load(folder / f"{name}.child.npz", allow_pickle=False) as z:
            res = {k: z[k] for k in z.files}
        before = {k.split("|", 1)[1]: v for k, v in res.items() if k.startswith("before|")}
        after = {k.split("|", 1)[1]: v for k, v in res.items() if k.startswith("after|")}
        out[name] = (before, after, (folder / f"{name}.resaved").read_bytes())
    return out


NAMES = list(MODELS)


# --- round trips of every estimator --------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_loaded_in_fresh_process_predicts_identically(name, fitted, child):
    assert_same(child[name][0], fitted[name].before)


@pytest.mark.parametrize("name", NAMES)
def test_learning_after_loading_matches_uninterrupted_model(name, fitted, child):
    assert_same(child[name][1], fitted[name].after)


@pytest.mark.parametrize("name", NAMES)
def test_resaving_a_loaded_model_gives_the_same_file(name, fitted, child):
    assert child[name][2] == fitted[name].path.read_bytes()


@pytest.mark.parametrize("name", NAMES)
def test_pickle_round_trip(name, fitted):
    f = fitted[name]
    model = pickle.loads(f.pickled)
    assert_same(outputs(model), f.before)
    assert_same(resume(model), f.after)


@pytest.mark.parametrize("name", NAMES)
def test_deepcopy(name, fitted):
    f = fitted[name]
    assert_same(outputs(f.deep), f.before)
    assert_same(resume(f.deep), f.after)


@pytest.mark.parametrize("name", NAMES)
def test_predicting_does_not_change_the_saved_file(name, fitted):
    """Scratch buffers made by predicting are not saved (the estimators' ``__getstate__``)."""
    assert fitted[name].saved_after_predicting == fitted[name].path.read_bytes()


def test_manifest_contents(fitted):
    m = persistence.read_manifest(fitted["CPExact"].path)
    assert m["format"] == "streamforest-model"
    assert m["format_version"] == persistence.FORMAT_VERSION == 7
    assert m["library_version"] == sf.__version__
    assert m["class"].endswith(":CPExact")
    assert m["params"]["calibration_size"] == 150 and m["params"]["seed"] == 8
    with zipfile.ZipFile(fitted["CPExact"].path) as zf:
        names = zf.namelist()
    assert names[0] == "manifest.json"
    assert all(n.startswith("arrays/") and n.endswith(".npy") for n in names[1:])
    assert persistence.read_manifest(fitted["KLLSketch"].path)["params"] == {"k": 16}


def test_every_public_class_is_covered():
    """The round trips above run over MODELS: a public class added without an entry fails here
    (``Class[variant]``: another configuration of a class)."""
    public = {n for n in sf.__all__ if isinstance(getattr(sf, n), type)}
    assert public - set(NOT_ESTIMATORS) == {n.split("[")[0] for n in MODELS}


def test_unfitted_estimators_round_trip():
    for name, make in MODELS.items():
        model = make()
        loaded = persistence.load(io.BytesIO(persistence._dumps(model)))
        assert type(loaded) is type(model) and repr(loaded) == repr(model), name
    model = MODELS["OnlineForestRegressor"]()
    loaded = persistence.load(io.BytesIO(persistence._dumps(model)))
    fit(model)
    fit(loaded)
    assert_same(outputs(loaded), outputs(model))


# --- files: paths, atomicity, determinism --------------------------------------------------------
def small_model():
    s = sf.KLLSketch(k=8, seed=0)
    s.update_many(np.arange(100.0))
    return s


def test_paths_and_file_objects(tmp_path):
    s = small_model()
    sf.save(s, str(tmp_path / "a.sfm"))
    sf.save(s, tmp_path / "b.sfm")
    buf = io.BytesIO()
    sf.save(s, buf)
    a = (tmp_path / "a.sfm").read_bytes()
    assert a == (tmp_path / "b.sfm").read_bytes() == buf.getvalue()
    buf.seek(0)
    for src in (str(tmp_path / "a.sfm"), tmp_path / "b.sfm", buf):
        assert sf.load(src).quantile(0.5) == s.quantile(0.5)
    assert sorted(os.listdir(tmp_path)) == ["a.sfm", "b.sfm"]  # no temporary files left


def test_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "m.sfm"
    sf.save(small_model(), path)
    old = path.read_bytes()
    bad = small_model()
    bad.callback = lambda: None
    with pytest.raises(TypeError, match=r"KLLSketch\.callback"):
        sf.save(bad, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["m.sfm"]


def test_save_is_deterministic(fitted):
    model = persistence.load(fitted["OnlineQRF"].path)
    assert persistence._dumps(model) == persistence._dumps(model)


# --- versions and foreign files ------------------------------------------------------------------
def rewrite(src: Path, dst: Path, edit=None, replace: dict | None = None) -> Path:
    """Copy of a model file with its manifest edited by ``edit`` and entries replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "manifest.json" and edit is not None:
                m = json.loads(data)
                edit(m)
                data = json.dumps(m).encode()
            if replace and name in replace:
                data = replace[name]
            zout.writestr(name, data)
    return dst


def set_keys(**kw):
    def edit(m):
        m.update(kw)

    return edit


def test_newer_format_version_is_refused(fitted, tmp_path):
    v = persistence.FORMAT_VERSION + 1
    path = rewrite(
        fitted["CPApproximate"].path,
        tmp_path / "new.sfm",
        set_keys(format_version=v, library_version="7.3.1"),
    )
    with pytest.raises(ValueError) as e:
        sf.load(path)
    msg = str(e.value)
    assert "newer" in msg and "7.3.1" in msg and f"version {v}" in msg
    assert f"streamforest {sf.__version__}" in msg


def test_older_format_version_is_refused(fitted, tmp_path):
    path = rewrite(
        fitted["CPApproximate"].path,
        tmp_path / "old.sfm",
        set_keys(format_version=persistence.MIN_FORMAT_VERSION - 1, library_version="0.0.3"),
    )
    with pytest.raises(ValueError) as e:
        sf.load(path)
    msg = str(e.value)
    v = persistence.MIN_FORMAT_VERSION - 1
    assert "older" in msg and "0.0.3" in msg and f"version {v}" in msg
    assert f"streamforest {sf.__version__}" in msg


@pytest.mark.parametrize(
    "edit",
    [
        set_keys(format="acme-model", library="acme", library_version="2.0"),
        set_keys(format="streamforest-model-legacy", library_version="0.0.9"),
    ],
)
def test_unknown_format_is_refused(fitted, tmp_path, edit):
    path = rewrite(fitted["GaussianInterval"].path, tmp_path / "x.sfm", edit)
    m = persistence.read_manifest(path)
    with pytest.raises(ValueError, match="not a streamforest model file") as e:
        sf.load(path)
    msg = str(e.value)
    assert m["library_version"] in msg and repr(m["format"]) in msg
    assert f"streamforest {sf.__version__}" in msg


def test_bad_or_missing_format_version_is_refused(fitted, tmp_path):
    for fv in (None, "1", 1.0, True):
        path = rewrite(fitted["KLLSketch"].path, tmp_path / "v.sfm", set_keys(format_version=fv))
        with pytest.raises(ValueError, match="format version"):
            sf.load(path)


def test_non_model_files_are_refused(tmp_path):
    (tmp_path / "junk.sfm").write_bytes(b"definitely not a zip archive")
    with pytest.raises(ValueError, match="not a zip archive"):
        sf.load(tmp_path / "junk.sfm")
    np.savez(tmp_path / "plain.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="no manifest.json"):
        sf.load(tmp_path / "plain.npz")


# --- unsafe files --------------------------------------------------------------------------------
def first_node(tree, kind):
    """The first JSON node of type ``kind`` in a manifest's state, depth first."""
    if isinstance(tree, dict):
        if tree.get("$t") == kind:
            return tree
        tree = list(tree.values())
    if isinstance(tree, list):
        for x in tree:
            hit = first_node(x, kind)
            if hit is not None:
                return hit
    return None


FOREIGN = [
    "os:system",
    "builtins:eval",
    "subprocess:Popen",
    "streamforest.cli:os.system",  # inside a streamforest module, but not a streamforest class
    "streamforest.features:np.ndarray",
    "streamforest.persistence:__builtins__",
    "streamforest:load",
]


@pytest.mark.parametrize("cls", FOREIGN)
def test_classes_outside_streamforest_are_refused(fitted, tmp_path, cls):
    path = rewrite(
        fitted["OnlineForestRegressor"].path, tmp_path / "top.sfm", set_keys(**{"class": cls})
    )
    with pytest.raises(ValueError, match="refusing|cannot load"):
        sf.load(path)

    def nested(m):  # the first object below the estimator (a tree, a feature space ...)
        node = first_node(m["state"]["state"], "object")
        node["class"] = cls

    with pytest.raises(ValueError, match="refusing|cannot load"):
        sf.load(rewrite(fitted["OnlineForestRegressor"].path, tmp_path / "in.sfm", nested))


def test_no_foreign_module_is_imported(fitted, tmp_path, capfd):
    assert "this" not in sys.modules  # importing it prints the Zen of Python
    path = rewrite(fitted["KLLSketch"].path, tmp_path / "t.sfm", set_keys(**{"class": "this:s"}))
    with pytest.raises(ValueError, match="only classes defined in streamforest modules"):
        sf.load(path)
    assert "this" not in sys.modules and "Zen" not in capfd.readouterr().out


def test_pickled_array_entries_are_refused(fitted, tmp_path):
    sentinel = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return open, (str(sentinel), "w")

    buf = io.BytesIO()
    np.save(buf, np.array([Payload()], dtype=object), allow_pickle=True)
    src = fitted["HoeffdingTreeRegressor"].path
    with zipfile.ZipFile(src) as zf:
        entry = next(n for n in zf.namelist() if n.startswith("arrays/"))
    path = rewrite(src, tmp_path / "p.sfm", replace={entry: buf.getvalue()})
    with pytest.raises(ValueError, match="cannot be read safely"):
        sf.load(path)
    assert not sentinel.exists()


def test_state_layout_mismatch_is_reported(fitted, tmp_path):
    src = fitted["HoeffdingTreeRegressor"].path
    if first_node(persistence.read_manifest(src)["state"], "namedtuple") is None:
        pytest.skip("no NamedTuple in the state")

    def edit(m):
        first_node(m["state"], "namedtuple")["fields"][0] = "renamed"

    with pytest.raises(ValueError, match="fields"):
        sf.load(rewrite(src, tmp_path / "f.sfm", edit))


# --- the generic encoder -------------------------------------------------------------------------
def same_value(a, b) -> bool:
    """Equal types and values, bit for bit (NaNs included), recursively."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and a.flags.writeable == b.flags.writeable
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
        )
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or a != a and b != b)
    if isinstance(a, dict):
        ka, kb = list(a), list(b)
        return len(ka) == len(kb) and all(
            same_value(x, y) and same_value(a[x], b[y]) for x, y in zip(ka, kb, strict=True)
        )
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (set, frozenset)):
        return a == b
    return a == b


def round_trip(extra):
    s = sf.KLLSketch(k=8, seed=0)
    s.extra = extra
    return persistence.load(io.BytesIO(persistence._dumps(s))).extra


def test_supported_values_round_trip():
    nested = np.zeros(4, dtype=[("a", "<f8"), ("b", "<i4", (2,)), ("c", [("d", "u1")])])
    value = {
        "none": None,
        "bools": [True, False],
        "ints": [0, -1, 2**70],
        "floats": [1.5, -0.0, math.nan, math.inf, -math.inf, 5e-324],
        "str": "héllo",
        "bytes": b"\x00\xff",
        "tuple": (1, (2, "x")),
        "set": {3, 1, 2},
        "frozenset": frozenset({"a", "b"}),
        "keys": {
            1: "int",
            2.5: "float",
            "s": "str",
            (1, "t"): "tuple",
            False: "bool",
            None: "none",
            np.int64(7): "np.int64",
            np.str_("ns"): "np.str_",
            frozenset({1}): "frozenset",
        },
        "scalars": [
            np.float32(np.nan),
            np.float64(-0.0),
            np.int8(-3),
            np.uint64(2**64 - 1),
            np.bool_(True),
            np.complex128(1 - 2j),
            np.datetime64("2024-01-02"),
            np.str_("abc"),
            np.longdouble(1) / 3,
        ],
        "dtypes": [np.dtype("<f4"), np.dtype(">i8"), nested.dtype],
        "arrays": [
            np.arange(12.0).reshape(3, 4),
            np.asfortranarray(np.arange(12).reshape(3, 4)),
            np.arange(20)[::3],
            np.array(3.5),
            np.zeros((0, 5), np.int8),
            np.array([b"ab", b"c"]),
            np.array(["x", "yz"]),
            np.array([1 + 1j]),
            np.array([True, False]),
            np.array(["2020-01-01"], dtype="datetime64[ns]"),
            np.full(3, np.nan, np.float16),
            nested,
        ],
    }
    assert same_value(round_trip(value), value)


def test_shared_references_and_cycles_are_kept():
    shared = [1, 2]
    arr = np.arange(5.0)
    fs_like = {"names": ["a"]}
    extra = {"x": shared, "y": shared, "a": arr, "b": [arr], "d1": fs_like, "d2": [fs_like]}
    extra["self"] = extra
    loop = []
    loop.append(loop)
    extra["loop"] = loop
    back = round_trip(extra)
    assert back["x"] is back["y"] and back["a"] is back["b"][0] and back["d1"] is back["d2"][0]
    assert back["self"] is back and back["loop"][0] is back["loop"]
    s = sf.KLLSketch(k=8)
    s.me = s
    s.others = [s, s]
    t = persistence.load(io.BytesIO(persistence._dumps(s)))
    assert t.me is t and t.others[0] is t and t.others[1] is t


def test_array_views_keep_sharing_memory():
    buf = np.zeros(12)
    extra = {
        "buf": buf,
        "head": buf[:4],
        "cols": buf.reshape(3, 4)[:, 1],
        "bytes": buf.view(np.uint8)[8:16],
        "rev": buf[::-1],
    }
    ro = buf[4:8]
    ro.flags.writeable = False
    extra["ro"] = ro
    back = round_trip(extra)
    assert same_value(back, extra)
    back["buf"][1] = 7.0
    assert back["head"][1] == 7.0 and back["cols"][0] == 7.0 and back["rev"][-2] == 7.0
    assert back["bytes"].view(np.float64)[0] == 7.0
    assert not back["ro"].flags.writeable and back["buf"].flags.writeable
    # views whose buffer is not referenced itself (arena-style) still share one buffer
    arena = np.zeros(10, np.int64)
    back = round_trip([arena[:5], arena[5:], arena[3:7]])
    assert owner(back[0]) is owner(back[1]) is owner(back[2])
    back[0][4] = 1
    assert back[2][1] == 1


def owner(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_a_lone_view_is_stored_without_its_buffer():
    big = np.zeros(1_000_000)
    s = sf.KLLSketch(k=8)
    s.extra = big[10:13]
    assert len(persistence._dumps(s)) < 20_000


class NotStreamforest:
    pass


@pytest.mark.parametrize(
    "value, where",
    [
        (lambda: 1, "KLLSketch.extra"),
        ({"f": print}, "KLLSketch.extra['f']"),
        ([1, threading.Lock()], "KLLSketch.extra[1]"),
        ({"deep": {"x": (1, NotStreamforest())}}, "KLLSketch.extra['deep']['x'][1]"),
        (np.array([object()]), "KLLSketch.extra"),
        (pd.DataFrame({"a": [1]}), "KLLSketch.extra"),
        (np.ma.masked_array([1.0]), "KLLSketch.extra"),
        (bytearray(b"x"), "KLLSketch.extra"),
        (range(3), "KLLSketch.extra"),
    ],
)
def test_unsupported_values_raise_type_error_naming_the_path(value, where):
    s = sf.KLLSketch(k=8)
    s.extra = value
    with pytest.raises(TypeError) as e:
        persistence._dumps(s)
    assert where in str(e.value)


def test_only_streamforest_objects_can_be_saved():
    with pytest.raises(TypeError, match="streamforest estimator"):
        persistence._dumps({"a": 1})
    with pytest.raises(TypeError, match="streamforest estimator"):
        persistence._dumps(NotStreamforest())


def test_featureless_tree_round_trips():
    """A tree that has only seen examples without features (a statistic with slots)."""
    model = sf.HoeffdingTreeRegressor()
    for y in (1.0, 2.5, 4.0):
        model.learn_one({}, y)
    loaded = persistence.load(io.BytesIO(persistence._dumps(model)))
    assert loaded.predict_one({}) == model.predict_one({}) == 2.5
    for m in (model, loaded):
        m.learn_one({}, 10.0)
        m.learn_one({"a": 1.0}, 3.0)
    assert loaded.predict_one({"a": 1.0}) == model.predict_one({"a": 1.0})


@pytest.mark.parametrize("name", ["aborf_format3_pre_bayes", "actser_format3_pre_bayes"])
def test_format3_files_load_predict_as_saved_and_learn_on(name):
    """Files written by format 3 (before the Bayesian leaf fields; tests/data, saved at a7297f6)
    load through the upgrade, predict as they did and learn as a model built now."""
    data = Path(__file__).parent / "data"
    assert persistence.read_manifest(data / f"{name}.sfm")["format_version"] == 3
    model = sf.load(data / f"{name}.sfm")
    rng = np.random.default_rng(0)
    X = rng.random((700, 4))
    y = 10 * X[:, 0] + 5 * np.sin(6 * X[:, 1]) + rng.standard_normal(700)
    expected = np.load(data / f"{name}.npy", allow_pickle=False)
    if name.startswith("aborf"):  # (the weighted mean now sums p_t - p_0: the last bits moved)
        np.testing.assert_allclose(model.predict(X[500:]), expected, rtol=1e-13, atol=1e-13)
        params = {**sf.ABORFRegressor.THESIS, "n_trees": 3, "depth": 4, "seed": 0}  # as saved
        fresh = sf.ABORFRegressor(**params).learn_many(X[:500], y[:500])
        target = y
    else:
        np.testing.assert_array_equal(model.predict_proba(X[500:]), expected)
        target = np.where(X[:, 0] > 0.5, "hi", "lo").astype(object)
        fresh = sf.ACTSEREnsembleClassifier(n_members=3, seed=0).learn_many(X[:500], target[:500])
    for m in (model, fresh):
        m.learn_many(X[500:650], target[500:650])
    if name.startswith("aborf"):  # (format 3 counted the rows reaching an empty leaf in the
        # evidence weights, so the weights differ from a model's trained now: the trees do not)
        P, P_fresh = model.tree_predictions(X[650:]), fresh.tree_predictions(X[650:])
        np.testing.assert_array_equal(P, P_fresh)
        return
    np.testing.assert_array_equal(model.predict(X[650:]), fresh.predict(X[650:]))


def test_format5_bayesian_aborf_loads_centred_predicts_as_saved_and_learns_on():
    """A Bayesian ABORF written by format 5 (raw-unit scatter, intercepts about 0; tests/data,
    saved at db049fc: 3 trees of depth 3, seed 7, the first 500 rows of Friedman #1 (n=700,
    seed=0) + 100 with NaN in feature 2 every 17th row; the .npy: its predictions of the rest)
    loads with each leaf's scatter about its means: it predicts as saved (to rounding), its
    scatter is the centred one of a leaf that learnt the same rows now, and its trees learn on as
    those of a model trained now do (the weights not: format 5 counted the rows that reached an
    empty leaf in the evidence)."""
    from streamforest.tree_kinds import arena as AR
    from streamforest.tree_kinds import state as S

    data = Path(__file__).parent / "data"
    path = data / "aborf_bayes_format5.sfm"
    assert persistence.read_manifest(path)["format_version"] == 5
    model = sf.load(path)
    X, y = streams.Friedman(function=1, n=700, seed=0).arrays()
    X = X.copy()
    X[::17, 2] = np.nan
    y = 100.0 + y
    expected = np.load(data / "aborf_bayes_format5.npy", allow_pickle=False)
    np.testing.assert_allclose(model.predict(X[500:]), expected, rtol=1e-12, atol=0)
    fresh = sf.ABORFRegressor(n_trees=3, depth=3, leaf_model="bayesian", seed=7)
    fresh.learn_many(X[:500], y[:500])
    for t in range(3):
        old, new = AR.load(model.engine_.arena, t), AR.load(fresh.engine_.arena, t)
        np.testing.assert_array_equal(old.lf_stat, new.lf_stat)  # the same rows at each leaf
        M, M_new = old.lf_bayes, new.lf_bayes
        np.testing.assert_allclose(M, M_new, rtol=1e-7, atol=1e-9 * np.abs(M_new).max())
        assert np.all(np.isfinite(old.lf_coef)) and old.lf_err.shape == new.lf_err.shape
    for m in (model, fresh):
        m.learn_many(X[500:650], y[500:650])
    np.testing.assert_allclose(
        model.tree_predictions(X[650:]), fresh.tree_predictions(X[650:]), rtol=1e-9
    )
    assert S.LEAF_BAYES == int(AR.params_at(model.engine_.arena, 0).leaf_model)


def test_classifier_saved_with_category_weights_per_feature_loads_per_nominal_feature():
    """Formats 3 and 4 kept a classifier's category weights (``lf_nominal_class_weights``) in one
    row per feature; loading keeps the nominal features' rows (the only ones that held weights), and
    the model predicts and learns on as the one saved."""
    from streamforest.tree_kinds import arena as AR
    from streamforest.tree_kinds import state as S

    rng = np.random.default_rng(3)
    n = 3000
    X = np.empty((n, 4), dtype=object)
    X[:, 0], X[:, 2] = rng.random(n), rng.random(n)
    X[:, 1] = rng.choice(["a", "b", "c"], n)
    X[:, 3] = rng.choice(["u", "v", "w", "z"], n)
    y = np.where((X[:, 1] == "a") ^ (X[:, 3] == "z"), "yes", "no").astype(object)
    model = sf.ACTSEREnsembleClassifier(n_members=3, grace_period=50, seed=1)
    model.learn_many(X[:2000], y[:2000])
    e = model.engine_
    old = copy.deepcopy(model)
    for t in range(e.n_trees):  # the layout of formats 3 and 4
        st = old.engine_.state(t)
        assert (
            st.lf_nominal_class_weights.shape[1] == 2 == S.n_nominal(st)
        )  # one row per nominal feature
        wide = np.zeros(
            (
                st.lf_nominal_class_weights.shape[0],
                st.ft_nominal.shape[0],
                st.lf_nominal_class_weights.shape[2],
            )
        )
        wide[:, [1, 3]] = st.lf_nominal_class_weights
        assert wide[:, [1, 3]].any()
        old.engine_.arena = AR.store(
            old.engine_.arena, t, st._replace(lf_nominal_class_weights=wide)
        )
    loaded = persistence.load(io.BytesIO(persistence._dumps(old)))
    for t in range(e.n_trees):
        np.testing.assert_array_equal(
            loaded.engine_.state(t).lf_nominal_class_weights, e.state(t).lf_nominal_class_weights
        )
    np.testing.assert_array_equal(loaded.predict_proba(X[2000:]), model.predict_proba(X[2000:]))
    for m in (model, loaded):
        m.learn_many(X[2000:2500], y[2000:2500])
    np.testing.assert_array_equal(loaded.predict_proba(X[2500:]), model.predict_proba(X[2500:]))
