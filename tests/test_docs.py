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


README = os.path.join(ROOT, "README.md")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def doc_pages():
    """Every Markdown page of the site, relative to ``docs/`` (subfolders included)."""
    for folder, _, files in sorted(os.walk(DOCS)):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.relpath(os.path.join(folder, name), DOCS)


def examples():
    for name in doc_pages():
        with open(os.path.join(DOCS, name)) as fh:
            for i, code in enumerate(BLOCK.findall(fh.read())):
                yield pytest.param(code, id=f"{name}[{i}]")


def readme_blocks():
    with open(README) as fh:
        text = fh.read()
    for i, code in enumerate(BLOCK.findall(text)):
        line = text[: text.index(code)].count("\n") + 1
        yield pytest.param(code, id=f"README.md[{i}]@{line}")


@pytest.mark.parametrize("code", list(readme_blocks()) + list(examples()))
def test_docs_examples_run(code, tmp_path, monkeypatch):
    """Each block of the README and the docs runs on its own (no block relies on another) and
    prints no False."""
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


@pytest.mark.parametrize("code", list(readme_blocks()) + list(examples()))
def test_every_example_block_stands_alone(code):
    """No README or docs block relies on names from another (a reader copies one block)."""
    assert not _free_names(code), f"names not defined in the block: {sorted(_free_names(code))}"


def test_free_names_finds_a_borrowed_variable():
    assert _free_names("import numpy as np\nm = f(X, y)\n") == {"f", "X", "y"}
    assert _free_names("import numpy as np\nX = np.ones(3)\nprint([x for x in X])\n") == set()
    assert _free_names("import pickle\nprint(m)\nm = pickle.loads(b)\n") == {"m", "b"}


# --- the README: short, its links alive, its commands the CI's ------------------------------------
def readme_links(text: str) -> list[str]:
    """The targets of the Markdown links and images of ``text`` that point into the repository
    (not to a web address or an anchor of the same page), without their anchors."""
    targets = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#")[0])
    return targets


def test_readme_links_find_every_link_and_skip_web_addresses():
    text = "[a](docs/a.md#x) ![p](docs/p.png) [w](https://x.org/y.md) [s](#set-up) [b](b.md)"
    assert readme_links(text) == ["docs/a.md", "docs/p.png", "b.md"]


def test_readme_is_short_and_every_page_it_links_exists_on_the_site():
    """Issue 32: the README fits in 12,000 bytes and sends the reader to the docs; each file it
    links exists, and each docs page it links is in the site's navigation (so it is built)."""
    assert os.path.getsize(README) <= 12_000
    with open(README) as fh:
        links = readme_links(fh.read())
    assert len(links) >= 10  # the docs are linked, not only mentioned
    missing = [t for t in links if not os.path.exists(os.path.join(ROOT, t))]
    assert not missing, f"README links to files that do not exist: {missing}"
    with open(os.path.join(ROOT, "mkdocs.yml")) as fh:
        nav = set(re.findall(r":\s+(\S+\.md)\s*$", fh.read(), re.M))
    pages = {t.removeprefix("docs/") for t in links if t.startswith("docs/") and t.endswith(".md")}
    assert pages and not pages - nav, (
        f"README links to pages not in mkdocs.yml's nav: {pages - nav}"
    )
    assert set(doc_pages()) - {"index.md"} <= nav | {"index.md"}  # no page built but unreachable


def test_readme_set_up_commands_are_the_ones_ci_runs():
    """The README's two set-up commands are exactly these, and ``.ci/run`` runs the test one."""
    with open(README) as fh:
        readme = fh.read()
    run = "python -m pip install -e '.[cli]' && streamforest run"
    test = "python -m pip install -e '.[dev]' && python -m pytest -q -n 2 --dist loadfile"
    assert f"```bash\n{run}\n```" in readme and f"```bash\n{test}\n```" in readme
    with open(os.path.join(ROOT, ".ci", "run")) as fh:
        assert test in fh.read().splitlines()
