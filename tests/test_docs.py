"""The documentation site: it builds with warnings as errors, and its Python examples run."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def examples():
    for name in sorted(os.listdir(DOCS)):
        if name.endswith(".md"):
            with open(os.path.join(DOCS, name)) as fh:
                for i, code in enumerate(BLOCK.findall(fh.read())):
                    yield pytest.param(code, id=f"{name}[{i}]")


@pytest.mark.parametrize("code", list(examples()))
def test_docs_examples_run(code, tmp_path, monkeypatch):
    """Each block runs on its own (no block relies on another) and prints no False."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STREAMFOREST_DATA", str(tmp_path / "data"))  # no download needed
    for module in re.findall(r"^(?:from|import) (\w+)", code, re.M):
        if module not in ("streamforest", "numpy", "os", "tempfile"):
            pytest.importorskip(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<docs example>", "exec"), {"__name__": "__docs__"})
    assert "False" not in out.getvalue(), out.getvalue()


def test_docs_build_strict(tmp_path):
    mkdocs = shutil.which("mkdocs")
    try:
        import mkdocs as _  # noqa: F401

        cmd = [sys.executable, "-m", "mkdocs"]
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is not installed (pip install -e '.[docs]')")
        if mkdocs is None:
            pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
        cmd = [mkdocs]
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [*cmd, "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for page in ("index.html", "quickstart/index.html", "api/estimators/index.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "estimators" / "index.html").read_text()
    assert "predict_interval" in api and "calibration_size" in api  # from the docstrings
    # every public module has its reference: each public class, from its docstring
    import streamforest
    from streamforest import distributed, prediction_sets

    everything = "".join(p.read_text() for p in (site / "api").glob("*/index.html"))
    public = [f"streamforest.{n}" for n in streamforest.__all__ if n[0].isupper()]
    public += [f"streamforest.distributed.{n}" for n in distributed.__all__ if n[0].isupper()]
    public += [
        f"streamforest.{n}" for n in prediction_sets.__all__ if n[0].isupper() and n != "SCORES"
    ]
    public += ["streamforest.classification_metrics", "streamforest.river.RiverClassifier"]
    missing = [name for name in public if f'id="{name}"' not in everything]
    assert not missing, f"not in the API reference: {missing}"
