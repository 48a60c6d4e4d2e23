"""Kernels compiled to LLVM IR that their callers link: machine code only for entry points.

numba compiles every function to machine code when it is first typed, callees included: it
links the LLVM modules of all the callees into the function's module, optimises the whole
linked module and generates machine code for all of it.  A kernel that only compiled code calls
(:func:`streamforest.compiled.kernel`) never runs that machine code (it has no Python wrapper):
its code runs as the copy linked into an entry point.  So for a chain of kernels the same
callee code was optimised and turned into machine code again at every level of the chain, which
was about a third of a cold start's LLVM time and a fifth of its wall time.

Here a kernel's compilation stops at LLVM IR: its own functions get numba's function-level
optimisation (as before), its callees' modules are linked into its module (so that it is
self-contained for its callers and for the cache), and nothing more.  The entry point that
links it optimises the whole linked module once and generates its machine code, as it did
before.  On disk a kernel is cached as its LLVM bitcode; loading it (when a new caller is
compiled) parses the bitcode and generates no code either.

What runs is the entry point's machine code, optimised by the same module pipeline over the
same functions, so results are unchanged (``benchmarks/result_hashes.py``).

This extends numba through its documented extension points (a compiler pipeline with its own
lowering pass, a code library, a function cache); the code library subclasses numba's JIT one
and overrides its finalisation.  Should a numba release change those internals, :data:`ENABLED`
is ``False`` and kernels compile as numba's own functions do.
"""

from __future__ import annotations

try:
    from llvmlite import binding as llvm
    from numba.core import compiler, typed_passes
    from numba.core.caching import CompileResultCacheImpl, FunctionCache
    from numba.core.codegen import JITCodeLibrary
    from numba.core.compiler_machinery import register_pass

    from . import _numba_pipeline

    ENABLED = all(
        hasattr(JITCodeLibrary, name)
        for name in (
            "_finalize_dynamic_globals",
            "_verify_declare_only_symbols",
            "_optimize_final_module",
            "serialize_using_bitcode",
        )  # fmt: skip
    )
except ImportError:  # pragma: no cover - a numba without these names
    ENABLED = False

__all__ = ["ENABLED", "KernelCompiler", "KernelFunctionCache"]


if ENABLED:

    class LinkOnlyLibrary(JITCodeLibrary):
        """A kernel's code library: its module links its callees and stops at LLVM IR (no
        module optimisation, no machine code, never added to the execution engine)."""

        def _optimize_final_module(self):
            pass  # the entry point that links this module optimises it

        def _finalize_final_module(self):
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._finalized = True

        def get_pointer_to_function(self, name):
            self._ensure_finalized()
            return 0  # no machine code (a kernel has no Python wrapper to point at anyway)

        def serialize_using_object_code(self):
            return self.serialize_using_bitcode()  # what the cache stores

        @classmethod
        def from_bitcode(cls, codegen, state):
            """The library of a kernel read back from the cache."""
            name, _, data = state
            library = cls(codegen, name)
            library._final_module = llvm.parse_bitcode(data)
            library._finalize_final_module()
            return library

        @property
        def codegen(self):
            return _WithoutEnvironment(self._codegen)

    class _WithoutEnvironment:
        """The codegen seen through a kernel's library: its environment (the global that an
        object-mode fallback would read) has no address in the engine, so it is not set."""

        def __init__(self, codegen):
            self._codegen = codegen

        def set_env(self, env_name, env):
            pass

        def __getattr__(self, name):
            return getattr(self._codegen, name)

    @register_pass(mutates_CFG=True, analysis_only=False)
    class LinkOnlyLowering(typed_passes.NativeLowering):
        """numba's lowering into a :class:`LinkOnlyLibrary`."""

        _name = "streamforest_link_only_lowering"

        def run_pass(self, state):
            if state.library is None:
                state.library = LinkOnlyLibrary(state.targetctx.codegen(),
                                                state.func_id.func_qualname)  # fmt: skip
            return super().run_pass(state)

    _BaseCompiler = _numba_pipeline.Compiler if _numba_pipeline.ENABLED else compiler.Compiler

    class KernelCompiler(_BaseCompiler):
        """streamforest's pipelines (:mod:`._numba_pipeline`) with :class:`LinkOnlyLowering`
        for their lowering pass."""

        def define_pipelines(self):
            return _numba_pipeline.replace_passes(
                super().define_pipelines(), {typed_passes.NativeLowering: LinkOnlyLowering}
            )

    class _KernelCacheImpl(CompileResultCacheImpl):
        def rebuild(self, target_context, payload):
            libdata = payload[0]
            if libdata[1] != "bitcode" or len(payload) != 9:  # (not a kernel's: numba's way)
                return super().rebuild(target_context, payload)
            # (the layout of numba's CompileResult._reduce)
            _, fndesc, env, signature, objectmode, lifted, typeann, reload_init, envs = payload
            for init in reload_init:
                init()
            library = LinkOnlyLibrary.from_bitcode(target_context.codegen(), libdata)
            return compiler.CompileResult(
                typing_context=target_context.typing_context,
                target_context=target_context,
                entry_point=target_context.get_executable(library, fndesc, env),
                typing_error=None,
                type_annotation=typeann,
                signature=signature,
                objectmode=objectmode,
                lifted=lifted,
                fndesc=fndesc,
                library=library,
                call_helper=None,
                environment=env,
                metadata=None,
                reload_init=reload_init,
                referenced_envs=envs,
            )

    class KernelFunctionCache(FunctionCache):
        """numba's function cache, reading a kernel's bitcode back as a kernel's library."""

        _impl_class = _KernelCacheImpl

else:  # pragma: no cover
    KernelCompiler = None
    KernelFunctionCache = None
