"""streamforest's numba pipeline (:mod:`streamforest._numba_pipeline`): its flags hash and compare
as numba's do, its inliner's copies share one scope per copied IR, and code compiled through it
computes what numba's own pipeline computes."""

import copy

import numpy as np
import pytest
from numba import njit
from numba.core import compiler, inline_closurecall
from numba.core.compiler import run_frontend

from streamforest import _numba_pipeline
from streamforest.compiled import entry, kernel

pytestmark = pytest.mark.skipif(
    not _numba_pipeline.ENABLED, reason="this numba's internals differ: numba's pipeline is used"
)


def _flags(**options):
    f = compiler.Flags()
    for name, value in options.items():
        setattr(f, name, value)
    return f


def test_memoised_flags_hash_and_compare_as_numbas_flags():
    Memo = _numba_pipeline.MemoisedFlags
    cases = [{}, {"nrt": True}, {"nrt": True, "boundscheck": True}, {"error_model": "numpy"}]
    for a in cases:
        base, memo = _flags(**a), Memo(_flags(**a))
        assert hash(memo) == hash(base)
        assert memo == base and base == memo and memo == Memo(base)
        for b in cases:
            assert (memo == _flags(**b)) == (base == _flags(**b))
    # an option set to its default equals the option unset (numba compares values)
    assert Memo(_flags(boundscheck=False)) == _flags()
    assert hash(Memo(_flags(boundscheck=False))) == hash(_flags())
    # a change after hashing changes the comparison, and the hash as numba's would
    memo = Memo(_flags())
    hash(memo)
    memo.nrt = not memo.nrt
    assert hash(memo) == hash(_flags(nrt=memo.nrt))
    assert memo != _flags() and memo.copy() == memo and type(memo.copy()) is Memo
    assert memo != Memo(_flags()) and Memo(_flags(nrt=memo.nrt)) == memo
    # two flags of different options set but the same values (one sets a default)
    assert Memo(_flags(boundscheck=False, nrt=True)) == Memo(_flags(nrt=True))
    # as a cache key: found under numba's flags of the same values, not under others
    cache = {(1, memo): "x"}
    assert cache.get((1, _flags(nrt=memo.nrt))) == "x"
    assert cache.get((1, _flags())) is None


def _branchy(a, n):
    s = 0.0
    for i in range(n):
        if a[i] > 0.5:
            s += a[i]
        elif a[i] > 0.25:
            s -= a[i]
        else:
            t = a[i] * 2.0
            s += t * t
    return s


def test_block_copies_share_one_copy_of_the_scope():
    func_ir = run_frontend(_branchy)
    blocks = list(func_ir.blocks.values())
    assert len(blocks) > 3 and all(b.scope is blocks[0].scope for b in blocks)
    copier = _numba_pipeline._OneScopeCopier()
    copies = [copier.deepcopy(b) for b in blocks]
    scope = copies[0].scope
    assert scope is not blocks[0].scope and all(c.scope is scope for c in copies)
    # the shared copy has the original's variables, and each block copy its statements
    assert set(scope.localvars._con) == set(blocks[0].scope.localvars._con)
    for b, c in zip(blocks, copies, strict=True):
        assert [str(s) for s in c.body] == [str(s) for s in b.body]
        assert all(s is not t for s, t in zip(b.body, c.body, strict=True))
    # a second copy of the same IR gets a scope of its own
    second = [copier.deepcopy(b) for b in blocks]
    assert second[0].scope is not scope and all(c.scope is second[0].scope for c in second)
    # the next IR's blocks (another scope) get a copy of their own scope
    again = run_frontend(_branchy)
    first = next(iter(again.blocks.values()))
    other = copier.deepcopy(first)
    assert other.scope is not scope and other.scope is not first.scope
    # anything else is copied as copy.deepcopy copies it
    assert copier.deepcopy([1, [2]]) == [1, [2]] and copier.copy is copy.copy


@kernel(inline="always")
def _inlined_helper(a, i):
    if a[i] > 0.5:
        return a[i] * 3.0
    elif a[i] > 0.25:
        return -a[i]
    t = 0.0
    for j in range(i):
        t += a[j] * 0.5
    return t


@entry
def _with_inlined_helpers(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += _inlined_helper(a, i) - 0.5 * _inlined_helper(a, a.shape[0] - 1 - i)
    return s


def test_code_compiled_through_the_pipeline_computes_what_numbas_does():
    a = np.random.default_rng(3).random(64)
    plain = njit(_with_inlined_helpers.py_func)  # numba's pipeline (its helper inlined as well)
    helper = _inlined_helper.py_func
    n = a.shape[0]
    python = sum(helper(a, i) - 0.5 * helper(a, n - 1 - i) for i in range(n))
    assert _with_inlined_helpers(a) == plain(a)
    assert _with_inlined_helpers(a) == pytest.approx(python, rel=1e-12)
    assert _with_inlined_helpers._compiler.pipeline_class is _numba_pipeline.Compiler
    assert inline_closurecall.copy is copy  # the copier is in place only while the pass runs


@kernel(inline="always")
def _not_inlinable(a):
    yield a  # numba's inliner refuses generators


@entry
def _calls_not_inlinable(a):
    return _not_inlinable(a)


def test_the_copier_is_removed_when_inlining_fails():
    with pytest.raises(Exception, match="yield"):
        _calls_not_inlinable(np.zeros(3))
    assert inline_closurecall.copy is copy
