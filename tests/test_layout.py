"""The package's layout rules, read from the sources' imports (nothing is imported or run).

- One door per package: a module never imports a private name (``_name``: a module or an
  attribute) that lives in another package of streamforest, nor reads one through a module it
  imported from there (``state._x``).  The root package's private modules (``streamforest._x``)
  are its shared internals, used anywhere.
- Imports only go down: every module's package sits in :data:`LAYERS` and imports only packages
  of its own layer or below.
- No source file over :data:`MAX_LINES` lines.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "streamforest"

# from the ground up; a package (or a root module) imports only its own layer or lower ones
LAYERS = [
    ["_version", "_numba_cache", "_extras", "compile_events", "concurrency", "features",
     "classification_metrics", "datasets_folder"],
    ["compiled", "base", "_labels", "plotting", "streams"],
    ["datasets", "rng", "stats", "metrics"],
    ["drift", "sketches"],
    ["tree_kinds"],
    ["engine"],
    ["trees"],
    ["forests", "persistence", "river"],
    ["intervals", "boosting"],
    ["prediction_sets", "batch", "evaluate"],
    ["registry"],
    ["compilation"],
    ["cli", "__init__"],
    ["distributed", "__main__"],
]  # fmt: skip
MAX_LINES = 800


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("").parts
        package = list(rel[:-1]) if rel[-1] != "__init__" else list(rel[:-1])
        yield path, list(rel), package


def _imports(path, package):
    """``(target module parts, imported name or None, line)`` of each streamforest import."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == "streamforest":
                base = []
            else:
                continue
            mod = base + (node.module.split(".") if node.module else [])
            if not node.level:
                mod = mod[1:]
            for alias in node.names:
                yield mod, alias.name, alias.asname or alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "streamforest":
                    yield parts[1:], None, alias.asname or parts[0], node.lineno


def _is_module(parts: list[str]) -> bool:
    p = SRC.joinpath(*parts)
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def _package_of(parts: list[str]) -> list[str]:
    """The folder (package) that holds module ``streamforest.<parts>``."""
    return parts if (SRC.joinpath(*parts) / "__init__.py").exists() else parts[:-1]


def test_no_package_reaches_into_another_package_private_names():
    found = []
    for path, _, package in _modules():
        tree = ast.parse(path.read_text())
        foreign_modules = {}
        for mod, name, bound, line in _imports(path, package):
            names = mod + ([name] if name else [])
            target = names if _is_module(names) else mod
            home = _package_of(target)
            if home == package:
                continue
            inside = names[len(home) :]  # the path below the target's package
            private = [p for p in inside if p.startswith("_") and not p.startswith("__")]
            shared = home == [] and private == inside[:1]  # a root private module's public name
            if private and not shared:
                found.append(f"{path.relative_to(SRC)}:{line} imports {'.'.join(names)}")
            if _is_module(names):
                foreign_modules[bound] = ".".join(names)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in foreign_modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(
                    f"{path.relative_to(SRC)}:{node.lineno} reads "
                    f"{foreign_modules[node.value.id]}.{node.attr}"
                )
    assert found == [], "\n".join(found)


def _layer_of(unit: str) -> int:
    for i, units in enumerate(LAYERS):
        if unit in units:
            return i
    raise AssertionError(f"{unit} is in no layer of tests/test_layout.py's LAYERS")


def test_imports_only_go_down():
    found = []
    for path, rel, package in _modules():
        own = package[0] if package else rel[0]
        for mod, name, _, line in _imports(path, package):
            target = mod + ([name] if name and _is_module(mod + [name]) else [])
            unit = target[0] if target else "__init__"
            if unit == own:
                continue
            if _layer_of(unit) > _layer_of(own):
                found.append(f"{path.relative_to(SRC)}:{line} ({own}) imports {unit}, above it")
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_source_file_over_the_line_limit(path):
    if path.name == "_sortnet.py":  # generated: the sorting networks' code, written by a script
        return
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(SRC)} has {n} lines"
