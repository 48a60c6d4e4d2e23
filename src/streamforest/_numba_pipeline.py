"""The numba compiler pipeline that every streamforest function compiles with: numba's own,
minus two costs of numba's Python that grow with the size of the code it types.

A cold start is mostly numba's Python (typing, inlining, lowering).  Profiling a Hoeffding tree's
first use showed two costs that do no work for our code:

- **Comparing flags.**  Each typing of a call to one of numba's overloaded functions
  (``np.empty``, ``min``, ``len`` ...) looks its implementation up in a cache keyed by the
  compilation's flags.  numba's hash of flags depends on the options' names only, so a lookup
  compares flags, and numba compares two flags (and hashes one) by building the dicts of all
  ~50 options: about a tenth of a cold start.  :class:`MemoisedFlags` compares the options set
  first (the same options set: the same values) and keeps its values and hash while they stay
  the same; the results are numba's (equal flags compare and hash equal, unequal ones compare
  unequal).
- **Copies of an inlined function's scope.**  Inlining a function (``inline="always"``)
  deep-copies its IR block by block, and every block's copy carries a copy of the function's
  whole scope (all its variables): work quadratic in the function's size.
  :class:`InlineInlinablesOneScope` is numba's inlining pass during which the blocks of one copied
  IR share one copy of their scope, as the blocks of the original IR share its scope.

Both apply only to compilations of streamforest's functions (:class:`Compiler` is their pipeline
class; the copy is shared only while this pass runs, under numba's compiler lock), so other numba
code in the process compiles as numba compiles it.  The compiled code does not change
(``benchmarks/result_hashes.py``).  Should a numba release change these internals,
:data:`ENABLED` is ``False`` and numba's own pipeline is used.
"""

from __future__ import annotations

try:
    import copy as _copy_module

    from numba.core import compiler, inline_closurecall, ir, untyped_passes
    from numba.core.compiler_machinery import register_pass
    from numba.core.targetconfig import TargetConfig

    ENABLED = (
        getattr(inline_closurecall, "copy", None) is _copy_module
        and hasattr(untyped_passes, "InlineInlinables")
        and hasattr(compiler.Flags, "_values")
        and "flags" in compiler.CompilerBase.__init__.__code__.co_varnames
    )
except ImportError:  # pragma: no cover - a numba without these names
    ENABLED = False

__all__ = ["ENABLED", "Compiler", "replace_passes"]


def replace_passes(pipelines, replacements: dict):
    """numba's ``pipelines`` (of a compiler's ``define_pipelines``) with each pass class that is
    a key of ``replacements`` replaced by its value; returns them."""
    for pipeline in pipelines:
        pipeline.passes = [
            (replacements.get(p, p), description) for p, description in pipeline.passes
        ]
    return pipelines


if ENABLED:

    class MemoisedFlags(compiler.Flags):
        """numba's compilation flags, whose values (and hash) are computed once while the
        options set stay the same."""

        __slots__ = ("_memo",)

        def _memoised(self):
            """``(options set, hash, all values)``, computed again after a change."""
            memo = getattr(self, "_memo", None)
            if memo is None or memo[0] != self._values:
                memo = self._memo = (dict(self._values), super().__hash__(), self.values())
            return memo

        def __hash__(self):
            return self._memoised()[1]

        def __eq__(self, other):
            if self is other:
                return True
            if isinstance(other, TargetConfig) and self._values == other._values:
                return True  # (the same options set: the same values)
            if isinstance(other, MemoisedFlags):
                return self._memoised()[2] == other._memoised()[2]
            return super().__eq__(other)

    class _OneScopeCopier:
        """The ``copy`` module as numba's inliner sees it while :class:`InlineInlinablesOneScope`
        runs: a deep copy of an IR block whose scope is the scope of the block copied just
        before it reuses that block's copy of the scope, unless the block itself was copied
        already (a second copy of the same IR gets a scope of its own)."""

        def __init__(self):
            self._scope = None  # the scope copied last, its copy
            self._copied = {}  # id -> block copied with that copy (kept: ids stay unique)

        def __getattr__(self, name):
            return getattr(_copy_module, name)

        def deepcopy(self, x, memo=None):
            if memo is not None or not isinstance(x, ir.Block):
                return _copy_module.deepcopy(x, memo)
            memo = {}
            last = self._scope
            if last is not None and last[0] is x.scope and id(x) not in self._copied:
                memo[id(x.scope)] = last[1]
            else:
                self._copied = {}
            out = _copy_module.deepcopy(x, memo)
            copied = memo.get(id(x.scope))
            self._scope = None if copied is None else (x.scope, copied)
            self._copied[id(x)] = x
            return out

    @register_pass(mutates_CFG=True, analysis_only=False)
    class InlineInlinablesOneScope(untyped_passes.InlineInlinables):
        """numba's inlining of ``inline="always"`` functions, one scope copy per copied IR."""

        _name = "streamforest_inline_inlinables"

        def run_pass(self, state):
            saved = inline_closurecall.copy
            inline_closurecall.copy = _OneScopeCopier()
            try:
                return super().run_pass(state)
            finally:
                inline_closurecall.copy = saved

    class Compiler(compiler.Compiler):
        """numba's compiler with :class:`MemoisedFlags` and :class:`InlineInlinablesOneScope`."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.state.flags = MemoisedFlags(self.state.flags)

        def define_pipelines(self):
            return replace_passes(
                super().define_pipelines(),
                {untyped_passes.InlineInlinables: InlineInlinablesOneScope},
            )

else:  # pragma: no cover
    Compiler = None
