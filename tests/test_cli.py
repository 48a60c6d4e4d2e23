"""The command line end to end: exit codes, the files it writes, and one-line errors."""

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from streamforest import registry
from streamforest.cli import build_model, main


def test_run_writes_table_json_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", "--n", "4000", "--window", "500", "--out", str(out), "--quiet"])
    assert code == 0
    text = capsys.readouterr().out
    assert "MER" in text and "OnlineQRF" in text
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


def test_parameters_reach_method_forest_and_tree():
    m = build_model("cp-exact", {"calibration_size": 50, "n_trees": 4, "leaf_model": "mean"}, 3)
    assert m.calibration_size == 50 and m.forest.n_trees == 4 and m.forest.tree.leaf_model == "mean"
    assert build_model("tree", {"grace_period": 20}, seed=1).grace_period == 20
    with pytest.raises(ValueError, match="no parameter 'c'"):
        build_model("tree", {"c": 5}, seed=1)


@pytest.mark.parametrize("name", registry.names(aliases=True))
def test_every_registry_model_runs(name, tmp_path, capsys):
    js = tmp_path / "r.json"
    args = ["run", "--model", name, "--n", "600", "--alphas", "0.1,0.3", "--json", str(js)]
    assert main(args + ["--no-plot", "--quiet", "--out", str(tmp_path)]) == 0
    d = json.loads(js.read_text())
    spec = registry.get(name)
    assert d["n"] == 600 and d["model"].startswith(spec.cls.__name__ + "(")
    intervals = hasattr(spec.cls, "predict_interval")
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


def test_warmup_command(capsys):
    assert main(["warmup", "--model", "tree", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("warmup: 1 models in ") and "kernel signatures compiled" in out
    try:
        code = main(["warmup", "--model", "nope"])
    except SystemExit as e:
        code = e.code
    assert code == 2 and "invalid choice" in capsys.readouterr().err


def test_console_script_installed(tmp_path):
    exe = shutil.which("streamforest")
    cmd = [exe] if exe else [sys.executable, "-m", "streamforest.cli"]
    r = subprocess.run(cmd + ["list"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "friedman1-gra" in r.stdout and "utility" in r.stdout
    r = subprocess.run(cmd + ["run", "--bogus"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr
