"""A new split rule is one unit and one line of the core's rules' table (issue 46's layout
requirement), shown by doing it: a copy of the core's sources gets a small rule
(``src/core/rules/halves.{hpp,cpp}``) and its line in ``src/core/tree/split_rules.cpp``, is
built, and a tree of the rule learns through the library's Python API, unchanged (the Python
side reads the rules from the core).  The library as installed does not have it: removing the
unit and its line is the sources as they are.

It builds the whole core without optimisation (about 40 CPU seconds), so it is one test.
"""

from __future__ import annotations

import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from streamforest import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
CODE = 4  # the new rule's TreeParams.split_rule (the table's rules use 0 to 3)

RULE_HPP = """\
// A split rule for tests/test_core_extension.py: every grace period of weight, a leaf whose
// targets vary splits the feature of its depth (modulo the features) at 0.5.  It keeps no side
// statistics, so its children start from what grow_children gives such a rule.
#pragma once

#include "tree/split_rule.hpp"

namespace sf::rules {

const tree::SplitRule& halves_rule();

}  // namespace sf::rules
"""

RULE_CPP = f"""\
// The halves rule (see halves.hpp).
#include "rules/halves.hpp"

#include "tree/splitting.hpp"
#include "tree/state.hpp"

namespace sf::rules {{

namespace {{

using namespace tree;

void halves_learn(const TreeRef& st, ParamRef prm, i64 leaf, Row, double, double, i64 nfeat) {{
  Mat<double> s = st.lf_stat();
  if (nfeat <= 0 || s(leaf, S_W) - st.lf_last()[leaf] < prm.grace() || !(s(leaf, S_M2) > 0.0))
    return;
  st.lf_last()[leaf] = s(leaf, S_W);
  i64 node = st.lf_node()[leaf];
  i64 f = st.nd_depth()[node] % nfeat;
  if (st.ft_nominal()[f] != 0) return;
  st.nd_thr()[node] = 0.5;
  st.nd_cat_len()[node] = 0;
  grow_children(st, prm, leaf, f, stats::Stat{{}}, stats::Stat{{}});
}}

}}  // namespace

const SplitRule& halves_rule() {{
  static const SplitRule rule = [] {{
    SplitRule r;
    r.code = {CODE};
    r.name = "halves";
    r.learn_at_leaf = halves_learn;
    return r;
  }}();
  return rule;
}}

}}  // namespace sf::rules
"""

TABLE = "src/core/tree/split_rules.cpp"
TABLE_END = "  /* (the table ends) */\n"

CHILD = f"""
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "ScikitBuild" not in type(f).__name__]
import numpy as np
import streamforest as sf
from streamforest import _core
from streamforest.tree_kinds import rules
from streamforest.tree_kinds.kinds import TreeKind

assert _core.__file__.startswith(sys.argv[1]), _core.__file__  # the copy's build
assert rules.RULES["halves"].code == {CODE}
assert _core.tree.supports(**TreeKind(rule="halves").__dict__)


class HalvesTree(sf.HoeffdingTreeRegressor):
    _split_rule = {CODE}


rng = np.random.default_rng(0)
X = rng.random((3000, 2))
y = np.where(X[:, 0] > 0.5, 10.0, 0.0) + 0.1 * rng.standard_normal(3000)
m = HalvesTree(grace_period=200, leaf_model="mean", seed=0)
for i in range(0, 3000, 300):
    m.learn_many(X[i : i + 300], y[i : i + 300])
for x, v in zip(X[:50], y[:50]):
    m.learn_one({{0: float(x[0]), 1: float(x[1])}}, float(v))
st = m.engine_.state(0)
assert st.nd_feat[0] == 0 and st.nd_thr[0] == 0.5, (st.nd_feat[0], st.nd_thr[0])
lo, hi = m.predict(np.array([[0.25, 0.5], [0.75, 0.5]]))
assert hi - lo > 9.0, (lo, hi)
print("ok", int(st.ints[8]))
"""


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def test_a_new_split_rule_is_one_unit_and_one_table_line(tmp_path):
    cmake = _tool("cmake")
    nanobind = pytest.importorskip("nanobind")
    src = tmp_path / "src"
    shutil.copy(ROOT / "CMakeLists.txt", src.parent / "CMakeLists.txt")
    shutil.copytree(ROOT / "src" / "core", src / "core")
    (src / "core" / "rules" / "halves.hpp").write_text(RULE_HPP)
    (src / "core" / "rules" / "halves.cpp").write_text(RULE_CPP)
    table = (tmp_path / TABLE).read_text()
    assert table.count(TABLE_END) == 1
    (tmp_path / TABLE).write_text(
        table.replace(TABLE_END, "  X(halves_rule)         \\\n" + TABLE_END)
    )
    # the whole change to the core's existing files: one added line of the table
    diff = [d for d in difflib.unified_diff(table.splitlines(), (tmp_path / TABLE).read_text()
                                            .splitlines(), lineterm="", n=0)
            if d[:1] in "+-" and d[:3] not in ("+++", "---")]  # fmt: skip
    assert diff == ["+  X(halves_rule)         \\"]
    build = tmp_path / "build"
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    configure = [cmake, "-S", str(tmp_path), "-B", str(build), "-DCMAKE_BUILD_TYPE=None",
                 "-DCMAKE_CXX_FLAGS=-O0", f"-DPython_EXECUTABLE={sys.executable}",
                 f"-Dnanobind_DIR={nanobind.cmake_dir()}"]  # fmt: skip
    for cmd in (configure, [cmake, "--build", str(build)]):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # the library's Python package beside the copy's build of the core
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "src" / "streamforest", pkg / "streamforest",
                    ignore=shutil.ignore_patterns("__pycache__", "_core*"))  # fmt: skip
    (built,) = build.glob("_core*")
    shutil.copy(built, pkg / "streamforest" / built.name)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(pkg)],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(pkg)})  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("ok") and int(r.stdout.split()[1]) >= 3  # it kept splitting
    # removed (the sources as they are): the installed core has no such rule
    assert "halves" not in {r["name"] for r in _core.tree.rules()}
