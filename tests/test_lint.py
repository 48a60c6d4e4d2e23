"""ruff lint and format checks of the sources, tests and benchmarks (the CI's style gate).

The rules are ``[tool.ruff]`` of ``pyproject.toml``.  To fix: ``ruff check --fix src tests
benchmarks`` and ``ruff format src tests benchmarks``.
"""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ["src", "tests", "benchmarks"]


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401  (the pip package runs as `python -m ruff`)

        return [sys.executable, "-m", "ruff"]
    except ImportError:
        exe = shutil.which("ruff")
        if exe:
            return [exe]
    if os.environ.get("CI"):
        pytest.fail("ruff is not installed (pip install -e '.[dev]')")
    pytest.skip("ruff is not installed")


def _run(*args, cwd=ROOT):
    return subprocess.run([*_ruff(), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_ruff_check():
    r = _run("check", "--no-cache", *PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format():
    r = _run("format", "--check", "--no-cache", *PATHS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_gate_can_fail(tmp_path):
    """The project's configuration is the one applied, and it does flag a bad file."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx = 1 \n")
    config = os.path.join(ROOT, "pyproject.toml")
    r = _run("check", "--no-cache", "--config", config, str(bad), cwd=tmp_path)
    assert r.returncode == 1 and "F401" in r.stdout and "W291" in r.stdout
    r = _run("format", "--check", "--no-cache", "--config", config, str(bad), cwd=tmp_path)
    assert r.returncode == 1
