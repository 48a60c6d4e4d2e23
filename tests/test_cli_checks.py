"""The command line checks every argument and its outputs before the run (issue #48): each error
one line naming the flag (and the file and row for data), before any row is read."""

from __future__ import annotations

import numpy as np
import pytest

from streamforest.cli import main


def _error(capsys, args) -> str:
    code = main(["run", "--n", "300", "--no-plot", "--quiet", *args])
    out = capsys.readouterr()
    assert code == 2, out
    assert "MER" not in out.out and "results:" not in out.out, out.out  # the run never started
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("streamforest: error: "), out.err
    return lines[0]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--window", str(10**30)], ["--window", str(10**30)]),
        (["--n", str(10**25)], ["--n"]),
        (["--seed", "-1"], ["--seed", "-1"]),
        (["--jobs", str(10**20)], ["--jobs"]),
        (["--step", "7", "--window", "10"], ["--window", "--step"]),
        (
            ["--model", "normalized-cp", "--param", "n_trees=-1"],
            ["--param n_trees=-1", "n_trees must be"],
        ),
        (["--model", "cp-exact", "--param", "calibration_size=-1"], ["--param calibration_size"]),
        (["--stream-param", "noise=1e400"], ["--stream-param noise=1e400"]),
        (["--alphas", "0.1,2"], ["--alphas"]),
    ],
)
def test_each_bad_argument_names_its_flag_before_the_run(capsys, tmp_path, args, words):
    line = _error(capsys, [*args, "--out", str(tmp_path / "out")])
    for w in words:
        assert w in line, line
    assert "Traceback" not in line and "incompatible function arguments" not in line


def test_an_unwritable_out_folder_fails_before_the_run(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = _error(capsys, ["--out", str(blocker / "sub")])
    assert "--out" in line and str(blocker / "sub") in line, line


def test_an_unwritable_json_fails_before_the_run(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    target = blocker / "r.json"
    line = _error(capsys, ["--out", str(tmp_path / "out"), "--json", str(target)])
    assert "--json" in line and str(target) in line, line
    line = _error(capsys, ["--out", str(tmp_path / "out"), "--json", str(tmp_path)])
    assert "--json" in line and "a folder" in line, line


def test_an_infinite_cell_names_the_file_column_and_row(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((400, 2))
    rows = ["a,b,y"] + [f"{x[0]},{x[1]},{x.sum()}" for x in X]
    rows[1 + 250] = f"{X[250, 0]},1e400,{X[250].sum()}"
    path = tmp_path / "data.csv"
    path.write_text("\n".join(rows) + "\n")
    code = main(["run", "--file", str(path), "--target", "y", "--no-plot", "--quiet",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert str(path) in err and "'b'" in err and "row 250" in err, err
