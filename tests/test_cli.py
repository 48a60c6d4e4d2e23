"""The command line end to end: exit codes, the files it writes, and one-line errors."""

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import streamforest as sf
from streamforest import registry
from streamforest.cli import build_model, main, parser


def test_run_writes_table_json_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--n", "4000", "--window", "500", "--out", str(out), "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "MER" in text and "NormalizedConformal" in text
    (js,) = out.glob("*.json")
    (png,) = out.glob("*.png")
    d = json.loads(js.read_text())
    assert d["n"] == 4000 and d["alphas"] == [0.1]
    for key in ("mae", "rmse", "seconds", "examples_per_second"):
        assert isinstance(d[key], float) and d[key] > 0
    for key in ("mer", "ris", "utility"):
        assert 0 <= d["intervals"]["0.1"][key] <= 1
    assert d["change_points"] == [2000, 3000] and len(d["windows"]["end"]) == 8
    from matplotlib.image import imread

    img = imread(png)
    assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 600
    assert np.ptp(img) > 0  # not blank


def test_run_options_file_and_json_path(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    X = rng.random((1500, 3))
    rows = ["a,kind,b,y"] + [
        f"{x[0]},{'u' if x[1] > 0.5 else 'v'},{x[2]},{3 * x[0] + (x[1] > 0.5)}" for x in X
    ]
    csv.write_text("\n".join(rows) + "\n")
    js = tmp_path / "sub" / "r.json"
    args = ["run", "--file", str(csv), "--target", "y", "--model", "cp-approx"]
    args += ["--alphas", "0.2,0.1", "--param", "n_trees=3", "--param", "grace_period=50"]
    args += ["--json", str(js), "--no-plot", "--quiet", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    d = json.loads(js.read_text())
    assert d["n"] == 1500 and set(d["intervals"]) == {"0.2", "0.1"}
    assert "n_trees=3" in d["model"] and "grace_period=50" in d["model"]
    assert not list((tmp_path / "o").glob("*.png"))
    # --n takes the first rows of a file
    assert main(args + ["--n", "1000"]) == 0
    assert json.loads(js.read_text())["n"] == 1000
    capsys.readouterr()


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--model", "nope"], "invalid choice"),
        (["run", "--file", "/no/such.csv"], "no such file"),
        (["run", "--param", "nonsense=1"], "has no parameter 'nonsense'"),
        (["run", "--param", "n_trees"], "KEY=VALUE"),
        (["run", "--alphas", "0.1,x"], "--alphas takes numbers"),
        (["run", "--n", "0"], "--n must be positive"),
        (["run", "--window", "300", "--step", "200", "--n", "1000"], "multiple of step"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_errors_are_one_line(args, message, capsys, tmp_path):
    try:
        code = main(args + (["--out", str(tmp_path)] if args[0] == "run" else []))
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("streamforest: error:") and message in err[0]


def test_bad_file_data_is_one_line(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n1,2\n2,oops\n")
    assert main(["run", "--file", str(csv), "--out", str(tmp_path), "--quiet"]) == 2
    assert main(["run", "--file", str(csv), "--target", "z", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert "non-numeric value 'oops' at data row 1" in err[0] and "no column named 'z'" in err[1]


def test_a_typo_in_a_numeric_column_is_one_line_or_missing_on_request(tmp_path, capsys):
    csv = tmp_path / "d.csv"
    rows = [f"{i / 10},{i}" for i in range(300)]
    rows[5] = "oops,5"  # early: it used to make the column nominal silently
    csv.write_text("a,y\n" + "\n".join(rows) + "\n")
    base = ["run", "--file", str(csv), "--out", str(tmp_path), "--quiet", "--no-plot"]
    assert main(base) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and "numeric column 'a' has a non-numeric value 'oops' at data row 5" in err[0]
    )
    assert main(base + ["--bad-numbers", "missing"]) == 0
    assert main(["run", "--bad-numbers", "missing", "--n", "100", "--out", str(tmp_path)]) == 2
    assert "--bad-numbers goes with --file" in capsys.readouterr().err


def test_parameters_reach_method_forest_and_tree():
    m = build_model("cp-exact", {"calibration_size": 50, "n_trees": 4, "leaf_model": "mean"}, 3)
    assert m.calibration_size == 50 and m.forest.n_trees == 4 and m.forest.tree.leaf_model == "mean"
    assert build_model("tree", {"grace_period": 20}, seed=1).grace_period == 20
    with pytest.raises(ValueError, match="no parameter 'c'"):
        build_model("tree", {"c": 5}, seed=1)


@pytest.mark.parametrize("name", registry.names(aliases=True))
def test_every_registry_model_runs(name, tmp_path, capsys):
    spec = registry.get(name)
    if not spec.available:  # a classifier another branch provides
        pytest.skip(f"{name}: its class is not in this build")
    js = tmp_path / "r.json"
    args = ["run", "--model", name, "--n", "600", "--alphas", "0.1,0.3", "--json", str(js)]
    if spec.task == "classification":
        args += ["--stream", "agrawal"]
    assert main(args + ["--no-plot", "--quiet", "--out", str(tmp_path)]) == 0
    d = json.loads(js.read_text())
    cls = spec.layer_cls(spec.layers[0])
    assert d["n"] == 600 and d["model"].startswith(cls.__name__ + "(")
    intervals = hasattr(cls, "predict_interval") or hasattr(cls, "predict_sets")
    assert d["alphas"] == ([0.1, 0.3] if intervals else [])
    if name in ("conformal-qrf", "cqr"):  # its calibrated levels come from --alphas
        assert "alphas=(0.1, 0.3)" in d["model"]
    capsys.readouterr()


def test_list_shows_every_model_and_its_parameters(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for spec in registry.MODELS.values():
        assert re.search(rf"^  {re.escape(spec.name)} +{re.escape(spec.description)}", out, re.M)
    assert "(also: cqr)" in out
    assert "calibration_size=1000" in out and "interval='hdi'" in out and "k=200" in out
    assert "n_trees=10" in out and "grace_period=200" in out and "leaf_model='adaptive'" in out


def test_warmup_command_is_kept_and_does_nothing(capsys):
    """Scripts and image builds that ran ``streamforest warmup`` (numba's compile ahead of time)
    keep working: the core is compiled at install, the command says so and succeeds."""
    assert main(["warmup"]) == 0
    assert "nothing to warm up" in capsys.readouterr().out
    assert main(["warmup", "--model", "tree", "--processes", "2", "--quiet"]) == 0  # old options
    assert "compile" not in parser().format_help()  # not offered any more


def test_console_script_installed(tmp_path):
    exe = shutil.which("streamforest")
    cmd = [exe] if exe else [sys.executable, "-m", "streamforest.cli"]
    r = subprocess.run(cmd + ["list"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "friedman1-gra" in r.stdout and "utility" in r.stdout
    r = subprocess.run(cmd + ["run", "--bogus"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_a_closed_pipe_ends_quietly():
    """`streamforest list | head`: the reader is gone before the output is written."""
    p = subprocess.Popen(
        [sys.executable, "-m", "streamforest", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # closed before the child writes anything: its first write fails
    err = p.stderr.read().decode()
    p.stderr.close()
    assert p.wait(timeout=300) == 141
    assert err == "", err


# ------------------------------------------------------------------------------------------------
# version, help, result names, defaults, datasets, errors


def test_version(capsys):
    import streamforest

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"streamforest {streamforest.__version__}"


def test_help_has_examples(capsys):
    for argv in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert "examples:" in out and "--dataset concrete" in out
    assert "--stream-param" in out and "n/50" in out  # the run page documents the defaults
    default = registry.get(registry.DEFAULT).layer_cls("method").__name__
    assert f"Defaults: {default} ({registry.DEFAULT})" in " ".join(out.split())


def test_list_shows_the_parameters_of_every_model_kind(capsys):
    """The thesis' trees and ensembles and the classifiers show their parameters with their
    defaults; a parameter group names the models it serves (the shorter way round)."""
    import inspect

    assert main(["list"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    kinds = (sf.ATSERRegressor, sf.ATSEREnsembleRegressor, sf.ABORFRegressor)
    kinds += (sf.ACTSERClassifier, sf.ACTSEREnsembleClassifier, sf.HoeffdingTreeClassifier)
    for cls in kinds:
        assert f"({cls.__name__}; models " in out, cls.__name__
        for name, p in inspect.signature(cls).parameters.items():
            if name not in ("seed", "n_jobs") and p.default is not inspect.Parameter.empty:
                assert f"{name}={p.default!r}" in out, (cls.__name__, name)


def _run_json(out, *args):
    base = ["run", "--model", "cp-approx", "--param", "n_trees=2", "--n", "600"]
    code = main(base + list(args) + ["--no-plot", "--quiet", "--out", str(out)])
    assert code == 0
    return {p.name for p in out.glob("*.json")}


def test_result_names_come_from_the_configuration(tmp_path, capsys):
    out = tmp_path / "runs"
    seen = set()
    configs = [
        [],
        ["--alphas", "0.1,0.05"],
        ["--seed", "7"],
        ["--param", "grace_period=50"],
        ["--stream", "friedman2"],
        ["--stream-param", "noise=0.5"],
        ["--window", "100"],
    ]
    for extra in configs:
        names = _run_json(out, *extra)
        new = names - seen
        assert len(new) == 1, (extra, new)  # a new file: no run overwrote another
        seen = names
    first = sorted(seen)[0]
    assert "cp-approx_friedman1-gra_n600_seed42_a0.1" in " ".join(seen)
    assert any("_a0.1-0.05" in n for n in seen) and any("_seed7_" in n for n in seen)
    capsys.readouterr()
    # the same configuration again replaces its file, and says so
    assert _run_json(out) == seen
    assert "replaced the file of an earlier run" in capsys.readouterr().out
    # a --param equal to its default changes nothing
    assert _run_json(out, "--param", "lambda_value=1.0") == seen
    assert first in seen


def test_default_window_and_files(tmp_path, capsys):
    from streamforest.cli import default_window

    assert default_window(100_000) == 2000 and default_window(30_000) == 600
    assert default_window(3000) == 300  # short data: ten windows
    js = tmp_path / "r.json"
    assert main(["run", "--model", "tree", "--n", "3000", "--json", str(js), "--no-plot",
                 "--quiet", "--out", str(tmp_path)]) == 0  # fmt: skip
    d = json.loads(js.read_text())
    assert d["window"] == 300 and len(d["windows"]["end"]) == 10
    capsys.readouterr()


def test_plot_title_is_whole_and_drift_legend_only_with_drift():
    from streamforest import OnlineQRF
    from streamforest.evaluate import prequential
    from streamforest.plotting import TITLE_WIDTH
    from streamforest.streams import ArrayStream, Friedman

    model = OnlineQRF(seed=0)
    X, y = Friedman(n=1200, seed=0).arrays()
    flat = prequential(model.clone(), ArrayStream(X, y), window=300)
    drift = prequential(model.clone(), Friedman(drift="gra", n=1200, seed=0), window=300)
    for result, has_drift in ((flat, False), (drift, True)):
        fig = result.plot()
        assert ("drift points" in fig.axes[-1].get_xlabel()) == has_drift
        title = fig._suptitle.get_text()
        assert title.replace("\n", " ") == f"{result.model} on {result.stream}"  # nothing cut
        assert all(len(line) <= TITLE_WIDTH for line in title.splitlines())
        fig.canvas.draw()
        box, page = fig._suptitle.get_window_extent(), fig.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and box.y1 <= page.y1  # not clipped
    from streamforest.plotting import figure_title

    long = result.model + ", " + ", ".join(f"p{i}={i}" for i in range(40))
    wrapped = figure_title(long, "s")
    assert wrapped.replace("\n", " ") == f"{long} on s" and len(wrapped.splitlines()) >= 3


def test_dataset_bundled_cached_or_path_from_any_directory(tmp_path, monkeypatch, capsys):
    import gzip

    cache = tmp_path / "cache"
    cache.mkdir()
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.setenv("STREAMFOREST_DATA", str(cache))
    monkeypatch.chdir(work)
    rng = np.random.default_rng(1)
    X = rng.random((700, 2))
    rows = ["u,v,target"] + [f"{a},{b},{2 * a - b}" for a, b in X]
    with gzip.open(cache / "mine.csv.gz", "wt") as fh:
        fh.write("\n".join(rows) + "\n")
    (tmp_path / "plain.csv").write_text("\n".join(r.replace("target", "y") for r in rows) + "\n")
    js = work / "r.json"
    common = ["--model", "tree", "--json", str(js), "--no-plot", "--quiet"]
    for spec, n, stream in (
        ("concrete", 1030, "dataset('concrete'"),  # bundled
        ("mine", 700, "dataset('mine'"),  # cached (in STREAMFOREST_DATA)
        (str(tmp_path / "plain.csv"), 700, "FileStream("),  # a path
        ("../plain.csv", 700, "FileStream("),  # a relative path
    ):
        extra = ["--target", "y"] if "plain" in spec else []
        assert main(["run", "--dataset", spec, *common, *extra]) == 0, spec
        d = json.loads(js.read_text())
        assert d["n"] == n and d["stream"].startswith(stream), (spec, d["stream"])
    capsys.readouterr()
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  concrete +bundled: 1030 rows", out, re.M)
    assert re.search(r"^  mine +cached: ", out, re.M)
    assert re.search(r"^  california_housing +downloaded on first use", out, re.M)


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--alphas", "1.5"], "each alpha must be in (0, 1)"),
        (["run", "--alphas", ","], "each alpha must be in (0, 1)"),
        (["run", "--dataset", "nope"], "unknown dataset 'nope'"),
        (["run", "--dataset", "./nope.csv"], "no such file"),
        (["run", "--stream", "nope"], "unknown stream 'nope'"),
        (["run", "--stream-param", "speed=2"], "has no parameter 'speed' (it takes noise)"),
        (["run", "--dataset", "concrete", "--target", "y"], "--target goes with --file"),
        (["run", "--file", "a.csv", "--dataset", "concrete"], "give one of"),
    ],
)
def test_more_errors_are_one_line(args, message, capsys, tmp_path):
    code = main(args + ["--out", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("streamforest: error:") and message in err[0]


def test_bad_files_and_out_are_one_line(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("a,b,y\n")
    (tmp_path / "text.csv").write_text("a,y\n1,2\n2,3\n3,high\n")
    (tmp_path / "afile").write_text("x")
    cases = [
        (["--file", str(tmp_path / "empty.csv")], "cannot read a CSV header"),
        (["--file", str(tmp_path / "header.csv")], "header has no rows"),
        (["--file", str(tmp_path / "text.csv")], "non-numeric value 'high' at data row 2"),
        (["--out", str(tmp_path / "afile")], "is a file, not a folder"),
    ]
    for extra, message in cases:
        args = ["run", "--quiet", "--no-plot", "--model", "tree", "--n", "100"]
        args += [] if "--out" in extra else ["--out", str(tmp_path / "o")]
        assert main(args + extra) == 2, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], (extra, err)


def test_missing_extras_are_named(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = ["run", "--model", "tree", "--n", "100", "--quiet", "--out", str(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "streamforest: error: plotting needs matplotlib: pip install 'streamforest[plot]' "
        "(or run with --no-plot)"
    )
    assert not list(tmp_path.glob("*"))  # failed before running
    monkeypatch.setitem(sys.modules, "rich", None)
    assert main(args + ["--no-plot"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "streamforest: error: the streamforest command needs rich: pip install " \
        "'streamforest[cli]'"  # fmt: skip


# --- classification ------------------------------------------------------------------------------
class RiverTree:
    """River's Hoeffding tree classifier with the array API (a registry test classifier)."""

    def __init__(self, grace_period: int = 50, seed=None):
        from river import tree

        from .test_prediction_sets import RiverClassifier

        self.grace_period, self.seed = grace_period, seed
        self._m = RiverClassifier(tree.HoeffdingTreeClassifier(grace_period=grace_period))

    def clone(self):
        return RiverTree(self.grace_period, self.seed)

    def __repr__(self):
        return f"RiverTree(grace_period={self.grace_period})"

    def __getattr__(self, name):
        if name.startswith("__") or name == "_m":
            raise AttributeError(name)
        return getattr(self._m, name)


@pytest.fixture
def river_entries(monkeypatch):
    """Registry entries over a classifier named by ``module:Name`` (as ACTSER's are)."""
    ref = "tests.test_cli:RiverTree"
    models = dict(registry.MODELS)
    for m in (
        registry.ModelSpec("rtree", ref, "River tree", task="classification",
                           layers=("classifier",)),
        registry.ModelSpec("conformal-rtree", registry.ConformalClassifier, "sets over rtree",
                           task="classification", layers=registry.SET_LAYERS[1:],
                           classifier_cls=ref, inner_fixed={"grace_period": 40}),
        registry.ModelSpec("adaptive-conformal-rtree", registry.AdaptiveConformalClassifier,
                           "ACI over rtree", task="classification", layers=registry.SET_LAYERS,
                           sets_cls=registry.ConformalClassifier, classifier_cls=ref),
    ):  # fmt: skip
        models[m.name] = m
    monkeypatch.setattr(registry, "MODELS", models)


def test_registry_classification_entries_route_and_build(river_entries):
    spec = registry.get("conformal-rtree")
    assert spec.available and list(spec.parameters()) == ["sets", "classifier"]
    assert spec.parameters()["classifier"]["grace_period"] == 40  # the entry's inner value
    m = spec.build({"calibration_size": 77, "conformity_score": "lac"}, seed=5)
    assert m.calibration_size == 77 and m.conformity_score == "lac" and m.seed == 5
    assert type(m.model).__name__ == "RiverTree" and m.model.grace_period == 40
    m = registry.build("adaptive-conformal-rtree", {"gamma": 0.02, "grace_period": 30}, seed=1)
    assert m.gamma == 0.02 and m.model.seed == 1 and m.model.model.grace_period == 30
    lazy = registry.ModelSpec("x", "streamforest:NoSuchClassifier", "x", task="classification",
                              layers=("classifier",))  # fmt: skip
    assert not lazy.available
    with pytest.raises(TypeError, match="NoSuchClassifier is not in this build"):
        lazy.build()
    assert "classification" in registry.tasks()


def test_run_a_classifier_with_prediction_sets(river_entries, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "--model", "conformal-rtree", "--stream", "agrawal", "--n", "3000",
            "--alphas", "0.1,0.05", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "accuracy" in text and "coverage" in text
    (js,) = out.glob("*.json")
    d = json.loads(js.read_text())
    assert d["task"] == "classification" and d["n"] == 3000 and d["alphas"] == [0.1, 0.05]
    assert d["accuracy"] > 0.6 and d["sets"]["0.1"]["coverage"] > 0.75  # 1st chunk: no class
    assert "agrawal" in js.name
    pytest.importorskip("matplotlib")
    (png,) = out.glob("*.png")
    assert png.stat().st_size > 1000
    # the default stream of a classifier, and a regression stream refused
    assert main(["run", "--model", "rtree", "--n", "500", "--no-plot", "--quiet",
                 "--out", str(out)]) == 0  # fmt: skip
    assert "Agrawal" in capsys.readouterr().out
    assert main(["run", "--model", "rtree", "--stream", "friedman1", "--out", str(out)]) == 2
    assert "unknown classification stream 'friedman1'" in capsys.readouterr().err
    assert main(["run", "--model", "qrf", "--stream", "sea", "--out", str(out)]) == 2
    assert "classification stream" in capsys.readouterr().err


def test_run_a_classifier_on_a_labelled_file(river_entries, tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 800
    a = rng.random(n)
    colour = rng.choice(["red", "blue"], n)
    label = np.where((a > 0.5) ^ (colour == "red"), "yes", "no")
    lines = ["a,colour,target"] + [
        f"{'?' if i % 50 == 7 else f'{a[i]:.4f}'},{colour[i]},{label[i]}" for i in range(n)
    ]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    js = tmp_path / "r.json"
    args = ["run", "--model", "rtree", "--file", str(path), "--json", str(js), "--no-plot",
            "--quiet", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    d = json.loads(js.read_text())
    assert d["n"] == n and d["n_classes"] == 2 and sorted(d["classes"]) == ["'no'", "'yes'"]


def test_unavailable_classifier_is_a_one_line_error(tmp_path, capsys):
    spec = registry.get("actser")
    if spec.available:
        pytest.skip("ACTSERClassifier is in this build")
    assert main(["run", "--model", "actser", "--n", "100", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ACTSERClassifier is not in this build" in err[0]


def test_list_shows_classification_streams_and_models(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "classification streams" in out and "randomrbf-drift" in out
    assert re.search(r"^  conformal-actser-rforest +ConformalClassifier over", out, re.M)
