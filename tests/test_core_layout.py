"""The compiled core's layout rules, read from its sources (src/core; nothing is compiled).

- Includes only go down: each folder (a concept) sits in :data:`LAYERS` and includes only
  headers of its own layer or below; the binding layer is on top and nothing includes it.
- No include cycle between files.
- Every header starts with a comment saying what it is, then ``#pragma once``.
- No source file over :data:`MAX_LINES` lines.
"""

from __future__ import annotations

import pathlib
import re

import pytest

CORE = pathlib.Path(__file__).resolve().parents[1] / "src" / "core"
LAYERS = [
    ["common"],
    ["drift", "sketch"],
    ["tree", "rules", "leaves"],  # the tree core: a rule's unit and the rules' table meet here
    ["engine"],
    ["intervals", "sets", "mondrian", "boosting", "batch", "metrics"],
    ["bindings"],
]
MAX_LINES = 800
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = sorted(p for p in CORE.rglob("*") if p.suffix in (".hpp", ".cpp"))


def _folder(path: pathlib.Path) -> str:
    return path.relative_to(CORE).parts[0]


def _layer(folder: str) -> int:
    for i, folders in enumerate(LAYERS):
        if folder in folders:
            return i
    raise AssertionError(f"src/core/{folder} is in no layer of tests/test_core_layout.py")


def _includes(path: pathlib.Path) -> list[pathlib.Path]:
    out = []
    for name in INCLUDE.findall(path.read_text()):
        target = (CORE / name) if (CORE / name).exists() else (path.parent / name)
        assert target.exists(), f"{path.relative_to(CORE)} includes {name}, which is not there"
        out.append(target.resolve())
    return out


def test_includes_only_go_down():
    found = []
    for path in SOURCES:
        own = _layer(_folder(path))
        for target in _includes(path):
            folder = _folder(target)
            if _layer(folder) > own or (folder == "bindings" and _folder(path) != "bindings"):
                found.append(f"{path.relative_to(CORE)} includes {target.relative_to(CORE)}")
    assert found == [], "\n".join(found)


def test_no_include_cycle():
    graph = {p.resolve(): _includes(p) for p in SOURCES}
    state: dict = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt) :] + [nxt]
                raise AssertionError(" -> ".join(str(c.relative_to(CORE)) for c in cycle))
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(CORE)))
def test_source_file(path):
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_LINES
    if path.suffix == ".hpp":
        head = text.lstrip()
        assert head.startswith("//"), "a header starts with a comment saying what it is"
        assert "#pragma once" in text
