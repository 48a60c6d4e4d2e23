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


def _free_names(code: str) -> set[str]:
    """Names a block reads that it neither defines nor imports (nor are builtins): what it would
    silently take from an earlier block."""
    import ast
    import builtins

    tree = ast.parse(code)
    bound = set(dir(builtins))
    first_store: dict[str, int] = {}  # line of a name's first assignment
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            first_store[node.id] = min(node.lineno, first_store.get(node.id, node.lineno))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                a = node.args
                bound.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
                bound.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
        elif isinstance(node, ast.Lambda):
            bound.update(x.arg for x in node.args.args)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    free = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound:
            if n.lineno < first_store.get(n.id, n.lineno + 1):  # read before it is assigned
                free.add(n.id)
    return free


def readme_blocks():
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    for i, code in enumerate(BLOCK.findall(text)):
        line = text[: text.index(code)].count("\n") + 1
        yield pytest.param(code, id=f"README.md[{i}]@{line}")


@pytest.mark.parametrize("code", list(readme_blocks()) + list(examples()))
def test_every_example_block_stands_alone(code):
    """No README or docs block relies on names from another (a reader copies one block)."""
    assert not _free_names(code), f"names not defined in the block: {sorted(_free_names(code))}"


def test_free_names_finds_a_borrowed_variable():
    assert _free_names("import numpy as np\nm = f(X, y)\n") == {"f", "X", "y"}
    assert _free_names("import numpy as np\nX = np.ones(3)\nprint([x for x in X])\n") == set()
    assert _free_names("import pickle\nprint(m)\nm = pickle.loads(b)\n") == {"m", "b"}
