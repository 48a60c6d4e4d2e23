"""The numba cache fallback: an installed package that cannot write next to its sources, used
by an account without a writable home, still imports (its kernels cache in a temp folder)."""

import os
import tempfile

import pytest
from numba.core import config

from streamforest import _numba_cache as numba_cache
from streamforest.compiled import entry, kernel


def test_falls_back_to_a_temp_folder_only_when_no_default_place_is_writable(monkeypatch):
    seen = []

    def writable(path):  # only the fallback folder (the sources may themselves be in /tmp)
        seen.append(path)
        return os.path.basename(path).startswith("streamforest-numba-")

    monkeypatch.setattr(numba_cache, "_writable", writable)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    got = numba_cache.ensure_cache_dir()
    assert got == config.CACHE_DIR and got.startswith(tempfile.gettempdir())
    assert any(p.endswith("__pycache__") for p in seen)  # the source folder was tried first

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(numba_cache, "_writable", lambda path: True)
    assert (
        numba_cache.ensure_cache_dir() is None and config.CACHE_DIR == ""
    )  # numba's choice stands

    monkeypatch.setattr(config, "CACHE_DIR", os.path.join(tempfile.gettempdir(), "mine"))
    assert numba_cache.ensure_cache_dir() is None  # NUMBA_CACHE_DIR set by the user: left alone


_CALLEE = """
from ..compiled import kernel


@kernel
def offset():
    return {value}
"""
_CALLER = """
from ..compiled import entry
from .callee import offset


@entry
def shifted(x):
    return x + offset()
"""
_RUN = """
import sys
import streamforest
from streamforest.compilation import stats
from streamforest.probe.caller import shifted
print(shifted(1.0), stats()["compiled"])
"""


def _package_with_probe(root, modules: dict):
    """A copy of the package under ``root`` with a subpackage ``probe`` of ``modules`` (file
    name -> source); returns the copy's folder."""
    import shutil

    import streamforest

    pkg = root / "streamforest"
    shutil.copytree(os.path.dirname(streamforest.__file__), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))  # fmt: skip
    (pkg / "probe").mkdir()
    (pkg / "probe" / "__init__.py").write_text("")
    for name, source in modules.items():
        (pkg / "probe" / name).write_text(source)
    return pkg


def _run_in_copy(root, cache, script: str, *args) -> list[str]:
    """The words ``script`` prints, run in a fresh process importing the package copy under
    ``root`` with numba's cache in ``cache``."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", script, *args], env=env, capture_output=True,
                         text=True, check=True)  # fmt: skip
    return out.stdout.split()


def _probe_run(root, cache):
    value, compiled = _run_in_copy(root, cache, _RUN)
    return float(value), int(compiled)


def test_an_edit_of_a_called_module_recompiles_its_callers(tmp_path):
    """numba checks a cached function against its own file only: a kernel that calls a kernel
    of another module would load stale code after an edit of that module.  The package stamp
    (:mod:`streamforest._numba_cache`) makes every kernel of the package compile again after
    any change of its sources: a copy of the package with a probe caller in one module and its
    callee in another, the callee's constant edited between two runs on one cache."""
    root = tmp_path / "src"
    pkg = _package_with_probe(root, {"callee.py": _CALLEE.format(value="1.0"),
                                     "caller.py": _CALLER})  # fmt: skip
    cache = tmp_path / "cache"
    assert _probe_run(root, cache) == (2.0, 2)  # compiled: the entry and its callee
    assert _probe_run(root, cache) == (2.0, 0)  # loaded from the cache
    (pkg / "probe" / "callee.py").write_text(_CALLEE.format(value="5.0"))  # the caller unchanged
    value, compiled = _probe_run(root, cache)
    assert value == 6.0 and compiled > 0  # numba alone would load the caller's stale 2.0


def test_the_package_locator_answers_what_numba_asks_its_locators():
    """numba reads ``_py_file`` of a function's locator when it warns that the function cannot
    be cached (under NUMBA_OPT=0 that ended in AttributeError inside the first call of a
    model); the package's locator answers with its base locator's attributes."""
    from numba.core import caching

    from streamforest.tree_kinds import kernels

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    fn = kernels.learn_batch.py_func
    source = fn.__code__.co_filename
    locator = next(
        loc for cls in impl._locator_classes if (loc := cls.from_function(fn, source)) is not None
    )
    assert type(locator).__name__ == "PackageStampLocator"
    assert locator._py_file == source
    assert locator.get_source_stamp() != locator._base.get_source_stamp()


_KERNELS = """
from ..compiled import kernel


@kernel
def offset(x):
    return 0.5 * x + 1.0


@kernel
def twice_offset(x):
    return offset(x) + offset(2.0 * x)
"""
_ENTRIES = """
from ..compiled import entry
from .kernels import twice_offset


@entry
def first(x):
    return twice_offset(x)


@entry
def second(x):
    return 3.0 * twice_offset(x)
"""
_RUN_ENTRY = """
import sys
import streamforest
from streamforest.compilation import stats
from streamforest.probe import entries, kernels
value = getattr(entries, sys.argv[1])(2.0)
libraries = {type(c.library).__name__ for k in (kernels.offset, kernels.twice_offset)
             for c in k.overloads.values()}
print(value, stats()["compiled"], ",".join(sorted(libraries)) or "-")
"""


def test_kernels_compile_to_ir_that_a_new_entry_links_from_the_cache(tmp_path):
    """A kernel stops at LLVM IR (:mod:`streamforest._link_only`): no machine code of its own,
    cached as bitcode.  A new entry point compiled in a later process loads the kernels from the
    cache (compiling only itself) and links them: its result is the one computed by hand, and
    the kernels it loaded are link-only libraries too (no machine code made on load)."""
    root = tmp_path / "src"
    _package_with_probe(root, {"kernels.py": _KERNELS, "entries.py": _ENTRIES})

    def run(name):
        value, compiled, libraries = _run_in_copy(root, tmp_path / "cache", _RUN_ENTRY, name)
        return float(value), int(compiled), libraries

    expected = (0.5 * 2.0 + 1.0) + (0.5 * 4.0 + 1.0)
    assert run("first") == (expected, 3, "LinkOnlyLibrary")  # the entry and its two kernels
    assert run("second") == (3.0 * expected, 1, "LinkOnlyLibrary")  # kernels from the cache
    assert run("first") == (expected, 0, "-")  # the entry from the cache: no kernel loaded


@kernel
def _checked(x):
    if x < 0.0:
        raise ValueError("negative input")
    return x


@entry
def _checked_plus_one(x):
    return _checked(x) + 1.0


def test_an_error_raised_in_a_kernel_reaches_python_through_its_entry():
    """A kernel has no machine code of its own (:mod:`streamforest._link_only`): its code runs
    linked into the entry, exceptions included."""
    assert _checked_plus_one(1.0) == 2.0
    with pytest.raises(ValueError, match="negative input"):
        _checked_plus_one(-1.0)
