"""Packaging: licence and metadata, dependencies and extras, version, and what importing needs.

The import tests run in fresh interpreters where some modules are made unimportable
(``sys.modules[name] = None``), as on a machine without them.
"""

import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap

import pytest

import streamforest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")


def pyproject() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return tomllib.load(fh)


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def test_licence_file_and_spdx_metadata():
    text = open(os.path.join(ROOT, "LICENSE")).read()
    assert text.startswith("BSD 3-Clause License") and "streamforest developers" in text
    assert "Neither the name of the copyright holder" in text  # the third clause
    project = pyproject()["project"]
    assert project["license"] == "BSD-3-Clause"  # an SPDX expression (PEP 639)
    assert project["license-files"] == ["LICENSE"]
    # PEP 639: no licence classifier beside an expression (build backends refuse the pair)
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]
    build = pyproject()["build-system"]
    # the compiled core is built by scikit-build-core (PEP 639 metadata from 0.10) and nanobind
    assert build["build-backend"] == "scikit_build_core.build"
    assert sorted(map(_name, build["requires"])) == ["nanobind", "scikit-build-core"]


def test_core_dependencies_and_extras():
    project = pyproject()["project"]
    assert sorted(map(_name, project["dependencies"])) == ["numpy"]  # the compiled core: built
    extras = project["optional-dependencies"]
    assert {"plot", "files", "cli", "river", "docs", "dev"} <= set(extras)
    third_party = [_name(r) for reqs in extras.values() for r in reqs if _name(r) != "streamforest"]
    dupes = sorted({n for n in third_party if third_party.count(n) > 1})
    assert not dupes, f"listed more than once: {dupes}"  # extras build on each other instead
    assert "matplotlib" in map(_name, extras["plot"]) and "river" in map(_name, extras["river"])
    assert "pandas" in map(_name, extras["files"])
    # what `streamforest run` needs comes with [cli]: rich, and the plot and files extras
    assert "rich" in map(_name, extras["cli"]) and "streamforest[plot,files]" in extras["cli"]
    dev = " ".join(extras["dev"])
    for extra in ("cli", "river", "docs"):
        assert re.search(rf"streamforest\[[^\]]*\b{extra}\b", dev), extra


def test_version_is_single_sourced():
    project = pyproject()
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    metadata = project["tool"]["scikit-build"]["metadata"]["version"]
    assert metadata["input"] == "src/streamforest/_version.py"
    from streamforest import _version

    assert streamforest.__version__ == _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*", streamforest.__version__)
    pattern = re.compile(r"""__version__\s*=\s*["']""")
    writers = [
        os.path.relpath(os.path.join(d, f), SRC)
        for d, _, files in os.walk(SRC)
        for f in files
        if f.endswith(".py") and pattern.search(open(os.path.join(d, f)).read())
    ]
    assert writers == [os.path.join("streamforest", "_version.py")]
    try:
        installed = importlib.metadata.version("streamforest")
    except importlib.metadata.PackageNotFoundError:
        return
    assert installed == streamforest.__version__


def test_typed_marker_and_package_data():
    pkg = os.path.dirname(streamforest.__file__)
    assert os.path.isfile(os.path.join(pkg, "py.typed"))
    # the wheel holds the whole package folder (scikit-build-core's wheel.packages): the
    # bundled datasets are there
    assert pyproject()["tool"]["scikit-build"]["wheel"]["packages"] == ["src/streamforest"]
    assert any(f.endswith(".csv.gz") for f in os.listdir(os.path.join(pkg, "datasets", "data")))


def _fresh(code: str, block=(), timeout=600):
    """Run ``code`` in a new interpreter (this checkout's sources first on the path) where the
    modules in ``block`` cannot be imported."""
    prelude = f"import sys\nsys.path.insert(0, {SRC!r})\n"
    prelude += "".join(f"sys.modules[{m!r}] = None\n" for m in block)
    r = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


WALK = """
import importlib, pkgutil
import streamforest
skipped = set(SKIP)
for m in pkgutil.walk_packages(streamforest.__path__, "streamforest."):
    if m.name not in skipped and m.name != "streamforest.__main__":
        importlib.import_module(m.name)
"""

POSIX_ONLY = ("resource", "fcntl", "termios", "pwd", "grp", "pty", "tty", "syslog", "posix")


def test_nothing_posix_only_at_import():
    # as on Windows: every module imports, and an evaluation runs (peak memory then unknown)
    out = _fresh(
        "SKIP = ()\n"
        + WALK
        + """
import numpy as np
from streamforest import HoeffdingTreeRegressor
from streamforest.evaluate import prequential
X = np.random.default_rng(0).random((300, 3))
r = prequential(HoeffdingTreeRegressor(), (X, X.sum(1)), window=100)
print(r.n, r.totals["peak_rss_mb"])
""",
        block=[m for m in POSIX_ONLY if m != "posix"],
    )
    n, rss = out.split()
    assert n == "300" and rss == "nan"


OPTIONAL = ("pandas", "matplotlib", "rich", "river", "sklearn", "pyarrow", "scipy")


def test_library_works_without_optional_packages(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n1,2\n")
    out = _fresh(
        "SKIP = ('streamforest.river',)\n"
        + WALK
        + f"""
import numpy as np
from streamforest import CPApproximate, HoeffdingTreeRegressor, datasets, streams
from streamforest._extras import MissingExtraError
from streamforest.evaluate import prequential
X, y = datasets.load("concrete")
tree = HoeffdingTreeRegressor(grace_period=50).learn_many(X, y)
assert tree.predict(X[:5]).shape == (5,)
r = prequential(CPApproximate(seed=0), streams.Friedman(n=500, seed=0), window=100)
messages = []
for call in (lambda: r.plot(), lambda: streams.from_file({str(csv)!r}).n,
             lambda: __import__("streamforest.river")):
    try:
        call()
    except MissingExtraError as e:
        messages.append(str(e))
print("\\n".join(messages))
for m in {OPTIONAL!r}:
    assert sys.modules.get(m) is None, m  # nothing tried to import them behind our back
""",
        block=OPTIONAL,
    )
    assert out.splitlines() == [
        "plotting needs matplotlib: pip install 'streamforest[plot]'",
        "reading data files needs pandas: pip install 'streamforest[files]'",
        "the River adapter (streamforest.river) needs river: pip install 'streamforest[river]'",
    ]


def test_need_names_the_extra_but_not_for_a_broken_installed_package(monkeypatch, tmp_path):
    from streamforest._extras import MissingExtraError, need

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"^plotting needs matplotlib: pip install "):
        need("matplotlib.figure", "plotting")
    # an installed package whose own dependency is missing: that error, not a missing extra
    (tmp_path / "sf_broken_pkg").mkdir()
    (tmp_path / "sf_broken_pkg" / "__init__.py").write_text("import sf_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError) as e:
        need("sf_broken_pkg", "something")
    assert not isinstance(e.value, MissingExtraError)
    assert e.value.name == "sf_no_such_dependency"
