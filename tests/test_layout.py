"""The package's layout rules, read from the sources' imports (nothing is imported or run).

- One door per package: a module never imports a private name (``_name``: a module or an
  attribute) that lives in another package of streamforest, nor reads one through a module it
  imported from there (``state._x``).  The root package's private modules (``streamforest._x``)
  are its shared internals, used anywhere.
- Imports only go down: every module's package sits in :data:`LAYERS` and imports only packages
  of its own layer or below.
- No source file over :data:`MAX_LINES` lines.
- The forest interface: the packages built on forests (:data:`INTERFACE_USERS`) read no private
  member of another package's object (``x._name``), only the engine's and the forest's public
  ones; :data:`ALLOWED_PRIVATE_READS` lists the exceptions, each with its reason.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "streamforest"

# from the ground up; a package (or a root module) imports only its own layer or lower ones
LAYERS = [
    ["_core"],
    ["_version", "_extras", "concurrency", "features", "classification_metrics",
     "datasets_folder"],
    ["base", "_labels", "plotting", "streams"],
    ["datasets", "rng", "stats", "metrics"],
    ["drift", "sketches"],
    ["tree_kinds"],
    ["engine"],
    ["trees"],
    ["forests", "persistence", "river"],
    ["intervals", "boosting", "mondrian"],
    ["prediction_sets", "batch", "evaluate", "results"],
    ["registry"],
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


# the compiled core's extension module (built from src/core at install): the lowest layer, a
# root private module every package may use
COMPILED = {("_core",)}


def _is_module(parts: list[str]) -> bool:
    p = SRC.joinpath(*parts)
    return (tuple(parts) in COMPILED or p.with_suffix(".py").exists()
            or (p / "__init__.py").exists())  # fmt: skip


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


# The forest interface (issue #29): the packages built on forests use the public members of the
# engine and the forest (see streamforest.engine.core and streamforest.engine.model), never a
# private one.  A private name read on another object (``x._name``, ``x`` not ``self``/``cls``/
# ``super()``) is allowed only when the module's own package defines that name and no other
# package does (so the object is one of the package's own); the exceptions, one reason each:
INTERFACE_USERS = ["intervals", "prediction_sets", "distributed", "batch", "boosting", "mondrian"]
NAMEDTUPLE_API = {"_fields", "_replace", "_asdict", "_make", "_field_defaults"}
ALLOWED_PRIVATE_READS = {
    # a batch model borrows the Estimator conventions without being one (see its docstring)
    ("batch/hdi_forest.py", "Estimator._param_names"): "borrows base.Estimator's conventions",
    ("batch/hdi_forest.py", "Estimator._check_param_names"): "borrows base.Estimator's conventions",
    ("batch/hdi_forest.py", "Estimator._holds_state"): "borrows base.Estimator's conventions",
    ("batch/hdi_forest.py", "Estimator._SKLEARN_ATTRS"): "borrows base.Estimator's conventions",
    # a ConformalClassifier of this package; ``_pass`` is also a name in intervals
    ("prediction_sets/adaptive.py", "conf._pass"): "this package's ConformalClassifier",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NAMEDTUPLE_API


def _defined_private_names(tree) -> set[str]:
    """The private names a module defines: functions, classes, module and class attributes,
    and attributes it assigns on ``self`` or ``cls``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for x in ast.walk(t):
                if isinstance(x, ast.Name):
                    out.add(x.id)
                elif (
                    isinstance(x, ast.Attribute)
                    and isinstance(x.value, ast.Name)
                    and x.value.id in ("self", "cls")
                ):
                    out.add(x.attr)
    return {n for n in out if _private(n)}


def _own_object(value) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def test_forest_users_read_no_private_member_of_another_package():
    trees, owners = {}, {}
    for path, rel, _ in _modules():
        tree = trees[path] = ast.parse(path.read_text())  # (a root module: its own name)
        for name in _defined_private_names(tree):
            owners.setdefault(name, set()).add(rel[0])
    found, used = [], set()
    for path, rel, _ in _modules():
        package = rel[0]
        if package not in INTERFACE_USERS:
            continue
        where = path.relative_to(SRC).as_posix()
        for node in ast.walk(trees[path]):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            if _own_object(node.value) or owners.get(node.attr) == {package}:
                continue
            key = (where, f"{ast.unparse(node.value)}.{node.attr}")
            if key in ALLOWED_PRIVATE_READS:
                used.add(key)
                continue
            found.append(f"{where}:{node.lineno} reads {key[1]}")
    assert found == [], "\n".join(sorted(found))
    stale = sorted(set(ALLOWED_PRIVATE_READS) - used)
    assert stale == [], f"allowed reads no longer made (remove them): {stale}"


# The forest interface takes forests by capability (streamforest.engine.forest_interface): the
# packages built on forests never test a forest's concrete class of another package (no
# ``isinstance``/``issubclass`` against it, no ``type(x) is`` it, no table keyed by classes);
# they check ``RegressionForest`` and its ``forest_capabilities`` instead.
FOREST_PACKAGES = ["forests", "mondrian", "boosting"]


def _forest_classes() -> dict[str, str]:
    """``{class name: package}`` of the classes the forest packages define."""
    out = {}
    for path, rel, _ in _modules():
        if rel[0] in FOREST_PACKAGES:
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    out[node.name] = rel[0]
    return out


def _class_names(node) -> list[str]:
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    return [i.id if isinstance(i, ast.Name) else i.attr for i in items
            if isinstance(i, (ast.Name, ast.Attribute))]  # fmt: skip


def test_forest_users_check_capabilities_not_forest_classes():
    classes = _forest_classes()
    assert {"OnlineForestRegressor", "AMFRegressor", "SGBTRegressor"} <= set(classes)
    found = []
    for path, rel, _ in _modules():
        package = rel[0]
        if package not in INTERFACE_USERS:
            continue
        where = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            tested = []
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2
            ):
                tested = _class_names(node.args[1])
            elif (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name)
                and node.left.func.id == "type"
            ):
                tested = [n for c in node.comparators for n in _class_names(c)]
            elif isinstance(node, ast.Dict):
                tested = [n for k in node.keys if k is not None for n in _class_names(k)]
            for name in tested:
                if classes.get(name, package) != package:
                    found.append(f"{where}:{node.lineno} tests the class {name}")
    assert found == [], "\n".join(found)
