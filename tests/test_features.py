"""FeatureSpace's fast dict path against its general path, and the one-example checks.

The fast path of ``encode_dict`` / ``encode_dict_into`` (compiled: ``_core.features``) must give
exactly what the general path gives: the same row (NaN-aware), the same exception (type and
message), and the same FeatureSpace state afterwards, also after errors.  A second FeatureSpace
that only ever takes the general path is fed the same calls and serves as the reference.
"""

from __future__ import annotations

import copy
import math
import numbers
import pickle
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streamforest.features import FeatureSpace, check_target, check_weight, check_weights

NAN = float("nan")
INF = float("inf")


class Counting(FeatureSpace):
    """A FeatureSpace that counts the calls of its general dict path."""

    general_calls = 0

    def _encode_dict_general(self, x, learn):
        self.general_calls += 1
        return super()._encode_dict_general(x, learn)


def general(fs: FeatureSpace, x, learn: bool) -> np.ndarray:
    return fs._encode_dict_general(x, learn)


def state(fs: FeatureSpace):
    return (
        list(fs.names),
        dict(fs.index),
        list(fs.nominal),
        [dict(c) for c in fs.categories],
        fs.forced_nominal,
    )


def outcome(f, *args):
    """('ok', row) or ('err', type, message) of a call."""
    try:
        row = f(*args)
    except Exception as e:  # noqa: BLE001 - compared, not swallowed
        return ("err", type(e), str(e))
    return ("ok", row)


def assert_same(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "err":
        assert a[1:] == b[1:]
    else:
        ra, rb = a[1], b[1]
        assert type(ra) is np.ndarray and type(rb) is np.ndarray
        assert ra.dtype == np.float64 and rb.dtype == np.float64
        assert ra.shape == rb.shape, (ra, rb)
        assert np.array_equal(ra, rb, equal_nan=True), (ra, rb)


def huge(v) -> bool:
    try:
        return abs(float(v)) > 1e300
    except OverflowError:
        return True


def check_fast(fs: FeatureSpace):
    """A dict of every known feature (numbers, and each nominal feature's last category) takes
    the fast path, in either key order, and gives the general path's row."""
    probe, ref = copy.deepcopy(fs), copy.deepcopy(fs)
    x = {}
    for j, k in enumerate(fs.names):
        if not fs.nominal[j]:
            x[k] = float(j + 1)
        elif fs.categories[j]:
            c = list(fs.categories[j])[-1]
            # (a category equal to its copies only: one hashed by identity, e.g. WithFloat(),
            # is no category of the copies)
            if c in probe.categories[j]:
                x[k] = c
    for order in (list(x), list(x)[::-1]):
        d = {k: x[k] for k in order}
        n = getattr(probe, "general_calls", 0)
        got = probe.encode_dict(d, False)
        assert getattr(probe, "general_calls", 0) == n, d
        assert np.array_equal(got, general(ref, d, False), equal_nan=True), (d, got)


# --------------------------------------------------------------------------------------------------
# values of every kind: numeric, missing, infinite, wrong


class WithFloat:
    """Not a number, though float() accepts it."""

    def __float__(self):
        return 1.5

    def __repr__(self):
        return "WithFloat()"


class MyFloat(float):
    """A float subclass: a real number for the general path, not an exact type for the fast."""


numeric = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(np.float32),
    st.floats(allow_nan=False, allow_infinity=False, width=16).map(np.float16),
    st.floats(allow_nan=False, allow_infinity=False).map(np.float64),
    st.integers(-(2**70), 2**70),
    st.integers(-(2**63), 2**63 - 1).map(np.int64),
    st.integers(0, 2**64 - 1).map(np.uint64),
    st.integers(-128, 127).map(np.int8),
    st.booleans(),
    st.booleans().map(np.bool_),
    st.sampled_from([0.0, -0.0, 1.0, 1e308, -1e308, 5e-324, 2.0**53 + 1]),
    st.sampled_from([10**308, 2**1023 * 3]),  # ints near or past float's range
)
missing = st.sampled_from([None, NAN, -NAN, np.float64(NAN), np.float32(NAN), np.float16(NAN)])
infinite = st.sampled_from(
    [INF, -INF, np.float64(INF), np.float32(-INF), np.float16(INF), 10**400, -(10**400)]
)
odd = st.sampled_from(
    [
        "1.5",
        "red",
        "blue",
        "",
        b"1",
        b"x",
        Decimal("1.5"),
        Fraction(1, 3),
        WithFloat(),
        MyFloat(2.5),
        MyFloat(INF),
        np.array(1.5),
        np.array([1.0]),
        [1.0],
        (1, 2),
        1 + 2j,
        np.complex128(1),
        np.longdouble(1.5),
        np.datetime64("2020-01-01"),
        np.str_("7"),
        {"a": 1},
    ]
)
values = st.one_of(numeric, numeric, numeric, missing, infinite, odd)
plain_values = st.one_of(numeric, missing)  # values the fast path takes (or NaN)

KEYS = ["a", "b", "c", "d", "x10", "x2", 0, 1, 2, True, ("t", 1), 2.5]


@st.composite
def calls(draw):
    """A FeatureSpace's nominal list and a sequence of calls: mostly dicts with a few recurring
    key layouts (so remembered layouts are hit), some learning and some predicting."""
    nominal = draw(st.sampled_from([[], ["c"], ["c", 2]]))
    layouts = draw(
        st.lists(
            st.lists(st.sampled_from(KEYS), unique_by=hash, max_size=8),  # 1 == True: one key
            min_size=1,
            max_size=4,
        )
    )
    ops = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["dict"] * 12 + ["into"] * 4 + ["array", "frame"]))
        learn = draw(st.booleans())
        if kind in ("dict", "into"):
            keys = draw(st.sampled_from(layouts))
            if draw(st.integers(0, 9)) == 0:  # now and then another order or a missing key
                keys = draw(st.permutations(keys))[: draw(st.integers(0, len(keys)))]
            vals = draw(st.sampled_from([plain_values, plain_values, values]))
            x = {k: draw(vals) for k in keys}
            ops.append((kind, x, learn))
        else:
            ops.append((kind, draw(st.integers(0, 3)), learn))
    return nominal, ops


def run_array(fs, kind, width, learn, rng):
    if kind == "array":
        X = rng.random((2, len(fs) or width))
        return fs.encode_array(X, learn)
    cols = [f"col{width}", "a"]
    return fs.encode_array(pd.DataFrame({c: rng.random(2) for c in cols}), learn)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_fast_path_equals_general_path(case):
    nominal, ops = case
    fast = Counting(nominal)
    ref = FeatureSpace(nominal)
    out = None
    for kind, x, learn in ops:
        if kind in ("array", "frame"):
            a = outcome(run_array, fast, kind, x, learn, np.random.default_rng(x))
            b = outcome(run_array, ref, kind, x, learn, np.random.default_rng(x))
            assert_same(a, b)
        else:
            n = fast.general_calls
            expect = outcome(general, ref, x, learn)
            if kind == "dict":
                got = outcome(fast.encode_dict, x, learn)
                assert_same(got, expect)
                if got[0] == "ok":
                    assert got[1].ndim == 1
            else:
                got = outcome(fast.encode_dict_into, x, learn, out)
                if expect[0] == "ok":
                    expect = ("ok", expect[1].reshape(1, -1))
                if got[0] == "ok" and out is not None and got[1] is out:
                    assert out.shape == (1, len(fast))
                assert_same(got, expect)
                if got[0] == "ok":
                    out = got[1]
            event(f"{kind} {got[0]} {'general' if fast.general_calls > n else 'fast'}")
        assert state(fast) == state(ref)
        check_fast(fast)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(KEYS[:6]), unique=True, min_size=1, max_size=6),
    st.lists(st.tuples(st.randoms(use_true_random=False), st.booleans()), min_size=1, max_size=12),
    st.data(),
)
def test_steady_state_takes_the_fast_path_and_agrees(keys, rounds, data):
    """Once a key set is known, plain numeric values, NaN and None never take the general
    path, in any key order; wrong values agree with the general path."""
    fast = Counting()
    ref = FeatureSpace()
    first = {k: 1.0 for k in keys}
    assert_same(outcome(fast.encode_dict, first, True), outcome(general, ref, first, True))
    for rnd, learn in rounds:
        order = list(keys)
        rnd.shuffle(order)
        order = order[: rnd.randint(0, len(order))] if rnd.random() < 0.3 else order
        n = fast.general_calls
        x = {k: data.draw(plain_values) for k in order}
        if any(isinstance(v, int) and huge(v) for v in x.values()):
            continue  # an int beyond the float range: the general path raises
        assert_same(outcome(fast.encode_dict, x, learn), outcome(general, ref, x, learn))
        assert_same(
            outcome(fast.encode_dict_into, x, learn, None),
            outcome(lambda *a: general(*a).reshape(1, -1), ref, x, learn),
        )
        assert fast.general_calls == n, x
        bad = dict(x)
        if bad:
            k = data.draw(st.sampled_from(order))
            bad[k] = data.draw(st.one_of(infinite, odd))
            assert_same(outcome(fast.encode_dict, bad, learn), outcome(general, ref, bad, learn))
        assert state(fast) == state(ref)
        check_fast(fast)


# --------------------------------------------------------------------------------------------------
# specific cases


def learnt(keys=("a", "b", "c"), nominal=(), cls=Counting):
    fs = cls(nominal)
    fs.encode_dict({k: 1.0 for k in keys}, True)
    return fs


@pytest.mark.parametrize(
    "v",
    [
        1.5,
        3,
        True,
        np.float32(2.5),
        np.float16(0.5),
        np.int64(-4),
        np.uint64(2**64 - 1),
        np.bool_(False),
        NAN,
        np.float64(NAN),
        np.float32(NAN),
        1e308,
        2**70,
    ],
)
def test_plain_values_take_the_fast_path(v):
    fs = learnt()
    n = fs.general_calls
    row = fs.encode_dict({"a": v, "b": 2.0, "c": 3.0}, True)
    assert fs.general_calls == n
    expect = np.array(
        [NAN if (isinstance(v, float | np.floating) and math.isnan(v)) else float(v), 2.0, 3.0]
    )
    assert np.array_equal(row, expect, equal_nan=True)


@pytest.mark.parametrize(
    "v, error, text",
    [
        (INF, ValueError, "'b' is infinite"),
        (-INF, ValueError, "'b' is infinite"),
        (np.float32(INF), ValueError, "'b' is infinite"),
        (np.float16(-INF), ValueError, "'b' is infinite"),
        (MyFloat(INF), ValueError, "'b' is infinite"),
        ("1.5", TypeError, "feature 'b' is numeric but got str '1.5'"),
        (np.str_("1.5"), TypeError, "feature 'b' is numeric"),
        (b"1", TypeError, "feature 'b' is numeric but got bytes"),
        (Decimal("1.5"), TypeError, "feature 'b' is numeric but got Decimal"),
        (WithFloat(), TypeError, "feature 'b' is numeric but got WithFloat"),
        (np.array(1.5), TypeError, "feature 'b' is numeric but got ndarray"),
        ([1.0], TypeError, "feature 'b' is numeric but got list"),
        (1 + 2j, TypeError, "feature 'b' is numeric but got complex"),
        (10**400, ValueError, "too large for a float"),
    ],
)
def test_wrong_values_raise_like_the_general_path_and_change_nothing(v, error, text):
    fs = learnt()
    ref = copy.deepcopy(fs)
    before = state(fs)
    for learn in (True, False):
        for call in (fs.encode_dict, lambda x, learn: fs.encode_dict_into(x, learn, None)):
            with pytest.raises(error, match=text.replace("(", r"\(")) as e:
                call({"a": 1.0, "b": v, "c": 3.0}, learn)
            with pytest.raises(error) as e_ref:
                general(ref, {"a": 1.0, "b": v, "c": 3.0}, learn)
            assert str(e.value) == str(e_ref.value)
            assert state(fs) == before
    # and the space still works, on the fast path
    n = fs.general_calls
    assert np.array_equal(fs.encode_dict({"a": 1.0, "b": 2.0, "c": 3.0}, True), [1.0, 2.0, 3.0])
    assert fs.general_calls == n


def test_accepted_odd_values_go_the_general_way():
    fs = learnt()
    for v, f in [(MyFloat(2.5), 2.5), (Fraction(1, 4), 0.25), (np.longdouble(0.5), 0.5)]:
        n = fs.general_calls
        assert np.array_equal(fs.encode_dict({"a": 1.0, "b": v, "c": 3.0}, True), [1.0, f, 3.0])
        assert fs.general_calls == n + 1


def test_any_key_order_and_subset_takes_the_fast_path():
    fs = learnt(("x2", "x10", "a"))  # new names get sorted columns: a, x10, x2
    assert fs.names == ["a", "x10", "x2"]
    n = fs.general_calls
    assert np.array_equal(fs.encode_dict({"x2": 2.0, "x10": 10.0, "a": 0.5}, True), [0.5, 10, 2])
    assert np.array_equal(fs.encode_dict({"a": 0.5, "x2": 2.0, "x10": 1.0}, True), [0.5, 1, 2])
    row = fs.encode_dict({"x10": 1.0}, False)
    assert np.array_equal(row, [NAN, 1.0, NAN], equal_nan=True)
    assert np.array_equal(fs.encode_dict({"x10": 3.0}, True), [NAN, 3.0, NAN], equal_nan=True)
    assert np.array_equal(fs.encode_dict({}, True), [NAN] * 3, equal_nan=True)
    assert fs.general_calls == n
    # a new feature: general path, the row widens
    assert np.array_equal(
        fs.encode_dict({"x10": 3.0, "new": 4.0}, True), [NAN, 3, NAN, 4], equal_nan=True
    )
    assert fs.general_calls == n + 1
    row = fs.encode_dict({"x10": 3.0}, True)
    assert fs.general_calls == n + 1 and row.shape == (4,)
    # the same through the array API
    fs.encode_array(pd.DataFrame({"z": [1.0]}), True)
    assert np.array_equal(
        fs.encode_dict({"x10": 3.0}, True), [NAN, 3, NAN, NAN, NAN], equal_nan=True
    )
    check_fast(fs)


def test_unknown_keys():
    """Learning, a key the model does not know is a new feature (general path) when it has a
    value and ignored when it is missing; predicting, it is ignored (fast path)."""
    fs = learnt(("a",))
    n = fs.general_calls
    fs.encode_dict({"a": 1.0, "other": None}, True)  # "other" arrives without a value
    assert fs.names == ["a"] and fs.general_calls == n + 1
    row = fs.encode_dict({"a": 1.0, "other": 2.0}, False)  # predicting: "other" is ignored
    assert np.array_equal(row, [1.0]) and fs.general_calls == n + 1
    assert np.array_equal(fs.encode_dict({"a": 1.0, "other": 2.0}, True), [1.0, 2.0])
    assert fs.names == ["a", "other"]


def test_nominal_values_take_the_fast_path_once_their_category_has_a_code():
    """A dict with nominal values: known categories are coded on the fast path; a new
    category (learning), an unseen one (predicting), a missing or unhashable value and a bad
    numeric value go the general path, with its results and errors, and an error records
    nothing."""
    fs = Counting(["n"])
    fs.encode_dict({"a": 1.0, "c": "x", "n": 3}, True)
    fs.encode_dict({"a": 2.0, "c": "y", "n": 4}, True)  # new categories: general
    assert fs.nominal == [False, True, True]
    n = fs.general_calls
    for learn in (False, True):
        got = fs.encode_dict({"n": 4, "c": "x", "a": 5.0}, learn)
        assert np.array_equal(got, [5.0, 0.0, 1.0])
    buf = np.empty(3)
    assert fs.encode_dict_into({"a": 6.0, "c": "y", "n": 3}, False, buf) is buf
    assert np.array_equal(buf, [6.0, 1.0, 0.0]) and fs.general_calls == n
    assert np.array_equal(fs.encode_dict({"a": 1.0, "c": "z", "n": 3}, False), [1.0, -1.0, 0.0])
    assert fs.categories[1] == {"x": 0, "y": 1} and fs.general_calls == n + 1
    assert np.array_equal(fs.encode_dict({"a": 1.0, "c": None, "n": 3}, True),
                          [1.0, NAN, 0.0], equal_nan=True)  # fmt: skip
    assert fs.general_calls == n + 1  # a missing category: the fast path
    assert np.array_equal(fs.encode_dict({"a": 1.0, "c": "z", "n": 3}, True), [1.0, 2.0, 0.0])
    assert fs.categories[1] == {"x": 0, "y": 1, "z": 2} and fs.general_calls == n + 2
    before = state(fs)
    with pytest.raises(TypeError, match="not hashable"):
        fs.encode_dict({"a": 1.0, "c": ["x"], "n": 3}, True)
    with pytest.raises(TypeError, match="numeric"):
        fs.encode_dict({"a": "1", "c": "w", "n": 3}, True)
    with pytest.raises(ValueError, match="infinite"):
        fs.encode_dict({"a": np.inf, "c": "w", "n": 3}, True)
    assert state(fs) == before and fs.categories[1] == {"x": 0, "y": 1, "z": 2}
    assert np.array_equal(fs.encode_dict({"a": 1.0, "c": "z", "n": 4}, True), [1.0, 2.0, 1.0])
    assert fs.general_calls == n + 5
    check_fast(fs)


def test_keys_equal_to_known_ones_use_their_columns():
    fs = learnt((1, "b"))
    n = fs.general_calls
    for k in (1, 1.0, True, np.int64(1)):
        assert np.array_equal(fs.encode_dict({k: 5.0, "b": 6.0}, True), [5.0, 6.0])
    assert fs.general_calls == n and fs.names == [1, "b"]


def test_wide_sparse_rows_scatter():
    fs = Counting()
    fs.encode_dict({f"f{i:03d}": 1.0 for i in range(200)}, True)
    x = {"f150": 1.5, "f003": 2.5, "f077": np.float32(3.5)}
    a = fs.encode_dict(x, False)
    n = fs.general_calls
    b = fs.encode_dict(x, True)
    c = fs.encode_dict_into(x, True, np.empty((1, 200)))
    assert fs.general_calls == n
    expect = np.full(200, NAN)
    expect[[150, 3, 77]] = [1.5, 2.5, 3.5]
    for r in (a, b, c.ravel()):
        assert np.array_equal(r, expect, equal_nan=True)
    with pytest.raises(ValueError, match="'f077' is infinite"):
        fs.encode_dict({"f150": 1.5, "f003": 2.5, "f077": -INF}, True)


def test_encode_dict_into_reuses_a_suitable_buffer_only():
    fs = learnt()
    x = {"a": 1.0, "b": 2.0, "c": 3.0}
    row = fs.encode_dict_into(x, True)
    assert row.shape == (1, 3) and row.flags.c_contiguous and row.dtype == np.float64
    assert fs.encode_dict_into(x, True, row) is row
    flat = np.zeros(3)
    assert fs.encode_dict_into(x, False, flat) is flat and np.array_equal(flat, [1, 2, 3])
    ro = np.zeros((1, 3))
    ro.flags.writeable = False
    for bad in [
        np.zeros((1, 4)),
        np.zeros((1, 3), np.float32),
        np.zeros((1, 6))[:, ::2],
        ro,
        np.zeros((1, 3), ">f8"),
        [0.0, 0.0, 0.0],
    ]:
        got = fs.encode_dict_into(x, True, bad)
        assert got is not bad and np.array_equal(got, [[1.0, 2.0, 3.0]])
    assert not ro.any()
    # the general path (a new feature) returns a new, wider row and leaves out alone
    out = np.zeros((1, 3))
    got = fs.encode_dict_into({"a": 1.0, "d": 4.0}, True, out)
    assert got is not out and not out.any()
    assert np.array_equal(got, [[1.0, NAN, NAN, 4.0]], equal_nan=True)
    assert fs.encode_dict_into({"a": 1.0, "d": 4.0}, True, got) is got
    # a Mapping that is not a dict, and not a mapping at all
    assert np.array_equal(
        fs.encode_dict_into(pd.Series({"a": 1.0}).to_dict(), False),
        [[1.0, NAN, NAN, NAN]],
        equal_nan=True,
    )
    with pytest.raises(TypeError, match="x must be a dict"):
        fs.encode_dict_into([1.0], True, out)


def test_the_same_dict_again_is_not_converted_again_unless_it_changed():
    """``predict_one(x)`` then ``learn_one(x, y)``: the second encoding of the very same dict
    into the same buffer reuses the row, but any change to the dict (a value replaced, even by
    an equal one of another type, a key removed or added) is seen: the result and the errors are
    those of a fresh encoding."""
    fs = learnt()
    out = np.zeros((1, 3))
    x = {"a": 1.0, "b": 2.0, "c": 3.0}
    assert fs.encode_dict_into(x, False, out) is out
    assert fs._memo[0] is x
    out_before = out.copy()
    assert fs.encode_dict_into(x, True, out) is out and np.array_equal(out, out_before)
    x["b"] = 5.0
    assert fs.encode_dict_into(x, True, out) is out and np.array_equal(out, [[1, 5, 3]])
    for bad, error in [(math.inf, ValueError), ("2", TypeError), (Decimal("5"), TypeError),
                       (np.array([5.0]), TypeError)]:  # fmt: skip
        x["b"] = bad
        with pytest.raises(error, match="'b'"):
            fs.encode_dict_into(x, True, out)
        x["b"] = 5.0
        assert fs.encode_dict_into(x, True, out) is out and np.array_equal(out, [[1, 5, 3]])
    del x["c"]
    got = fs.encode_dict_into(x, True, out)
    assert np.array_equal(got, [[1, 5, NAN]], equal_nan=True)
    x["c"] = 3.0
    x["d"] = 4.0  # a new feature while learning: a wider row, not the old buffer
    got = fs.encode_dict_into(x, True, out)
    assert got is not out and np.array_equal(got, [[1, 5, 3, 4]])
    # another buffer, or the buffer written by someone else in between: converted again
    other = np.zeros((1, 4))
    assert fs.encode_dict_into(x, True, got) is got
    assert fs.encode_dict_into(x, True, other) is other and np.array_equal(other, got)
    y = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0}
    fs.encode_dict_into(y, True, got)
    assert fs.encode_dict_into(x, True, got) is got and np.array_equal(got, [[1, 5, 3, 4]])
    assert "_memo" not in pickle.loads(pickle.dumps(fs)).__getstate__()


def test_a_dict_predicted_with_unknown_keys_is_encoded_anew_to_learn():
    """Predicting ignores keys the model never learnt; learning the very same dict next
    (same buffer) must add them, not reuse the prediction's row."""
    fs = learnt(("a",))
    out = np.zeros(1)
    x = {"a": 1.0, "z": 2.0}
    assert fs.encode_dict_into(x, False, out) is out and np.array_equal(out, [1.0])
    got = fs.encode_dict_into(x, True, out)
    assert fs.names == ["a", "z"] and np.array_equal(got, [[1.0, 2.0]])


def test_a_model_sees_a_dict_changed_between_predict_and_learn():
    from streamforest import HoeffdingTreeRegressor

    rng = np.random.default_rng(0)
    a, b = (HoeffdingTreeRegressor(grace_period=50, seed=1) for _ in range(2))
    for i in range(600):
        x = {"u": float(rng.random()), "v": float(rng.random())}
        y = 3.0 * x["u"] + float(rng.normal())
        assert a.predict_one(x) == b.predict_one(dict(x))
        if i % 3 == 0:  # changed in place after the prediction
            x["u"] = float(rng.random())
        if i % 7 == 0:
            x["v"] = math.inf
            with pytest.raises(ValueError, match="infinite"):
                a.learn_one(x, y)
            x["v"] = 0.5
        a.learn_one(x, y)
        b.learn_one(dict(x), y)
    assert pickle.dumps(a) == pickle.dumps(b)


def test_memo_is_not_pickled_nor_copied():
    fs = learnt(cls=FeatureSpace)
    data = pickle.dumps(fs)
    out = np.empty(3)
    fs.encode_dict_into({"c": 1.0, "a": 2.0}, False, out)  # the memo of a prediction
    assert fs._memo[1] is out
    assert pickle.dumps(fs) == data  # prediction does not change the pickled model
    for other in (pickle.loads(data), copy.deepcopy(fs), copy.copy(fs)):
        assert other._memo[0] is None
        assert state(other) == state(fs)
        assert np.array_equal(
            other.encode_dict({"c": 1.0, "a": 2.0}, True), [2.0, NAN, 1.0], equal_nan=True
        )
    old = FeatureSpace.__new__(FeatureSpace)  # a FeatureSpace pickled before the memo existed
    old.__dict__.update({k: v for k, v in fs.__dict__.items() if not k.startswith("_")})
    other = pickle.loads(pickle.dumps(old))
    assert np.array_equal(other.encode_dict({"a": 1.0, "b": 2.0, "c": 3.0}, True), [1, 2, 3])


# --------------------------------------------------------------------------------------------------
# check_target / check_weight: their fast paths give the results and errors of the general
# rules (the reference copies below): a weight is checked as a batch of one (so a bool or an
# int beyond the float range is refused as in learn_many), a target beyond the float range is
# not finite


def check_weight_ref(w):
    return check_weights(w, 1)


def check_target_ref(y):
    if isinstance(y, (bool, np.bool_)) or not isinstance(y, numbers.Real):
        raise TypeError(f"y must be a real number, got {type(y).__name__} {y!r}")
    try:
        f = float(y)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f):
        raise ValueError(f"y must be finite, got {y!r}")
    return f


scalars = st.one_of(
    st.floats(),
    st.integers(-(2**60), 2**60),
    st.sampled_from(
        [
            2**53,
            2**53 + 1,
            -1,
            0,
            -0.0,
            10**400,
            True,
            False,
            None,
            "2",
            "x",
            np.float32(2),
            np.float64(-1),
            np.int64(3),
            np.bool_(True),
            [2.0],
            [],
            np.array(2.0),
            np.array([3.0]),
            Decimal(1),
            Fraction(1, 2),
            MyFloat(2),
            MyFloat(INF),
            1j,
        ]
    ),
)


SPECIAL = [INF, -INF, NAN, -1.0, -0.0, 0.0, 1.0, 1e308, 5e-324, -1, 0, 1, 2**53 + 1, True, None]


@pytest.mark.parametrize("v", SPECIAL)
def test_check_weight_and_target_special_values(v):
    check_weight_and_target_unchanged(v)


@settings(max_examples=200, deadline=None)
@given(scalars)
def test_check_weight_and_target_unchanged(v):
    check_weight_and_target_unchanged(v)


def check_weight_and_target_unchanged(v):
    a, b = outcome(check_weight, v), outcome(check_weight_ref, v)
    assert_same(a, b)
    a, b = outcome(check_target, v), outcome(check_target_ref, v)
    assert a[0] == b[0]
    if a[0] == "err":
        assert a[1:] == b[1:]
    else:
        assert type(a[1]) is float and repr(a[1]) == repr(b[1])
