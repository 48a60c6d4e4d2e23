"""Input handling shared by every model: feature names, nominal encoding and validation.

A :class:`FeatureSpace` maps feature names (dict keys, DataFrame columns, or column positions of
a plain array) to the columns of the float matrix the compiled core reads.  Rules:

- **Missing values**: an absent key, ``None``, NaN or pandas' ``pd.NA`` (nullable dtypes) is
  *missing* (NaN in the core); each model documents how it routes missing values.
- **Numeric features**: int, float, bool and numpy numbers.  ``inf`` is an error.
- **Nominal features**: a feature whose first seen value is a ``str`` (or one listed in the
  model's ``nominal_features``) is nominal.  Its categories are coded 0, 1, 2, ... in order of first
  appearance while learning; at prediction a category never learnt is coded -1 ("unseen").
- **Category cap**: a model under a memory budget may cap the codes of a nominal feature
  (:attr:`FeatureSpace.max_codes`, set by a classifier's engine from its budget, see
  :mod:`streamforest.engine.classifier_engine`).  A feature that has that many codes when a new
  category arrives stops coding new ones: from then on (its :attr:`FeatureSpace.code_limits`
  entry ``B``, the cap at that moment) every category without a code, learnt or predicted, is
  coded :func:`category_bucket` ``(v, B)``, a hash bucket among the feature's ``B`` first codes,
  the same in every process (not Python's salted ``hash``).  Its categories dict stays at the
  codes it had.  Without a cap (``max_codes`` None, every regressor) nothing changes.
- **Emerging features**: a new name met while learning gets the next column; met while
  predicting it is ignored (the model knows nothing of it).  New names met in the same dict
  get their columns sorted by (type name, ``str(name)``), so a model does not depend on the
  order of a dict's keys (random feature subspaces pick columns).
- **Feature cap**: a model under a memory budget caps its features
  (:attr:`FeatureSpace.max_features`, set by its engine from the budget and what its trees hold,
  see :meth:`streamforest.engine.tree_lifecycle.TreeLifecycle.feature_room`): once it holds that
  many, a new name met while learning is ignored as one met while predicting, counted in
  :attr:`FeatureSpace.n_ignored_names` and said once (a :class:`FeatureCapWarning`); a plain
  array wider than the cap is refused (``ValueError``) when its columns would become the
  features.  Without a budget (``max_features`` None) nothing changes.
- **Plain arrays** (no column names) keep meaning what they meant: the first array learnt fixes
  which features its columns are (``array_names``): on a model that knew no feature, columns
  ``0, 1, ...`` by position (the names a dict must use for the same features); on a model that
  learnt dicts or DataFrames first, the features known then, in column order.  Every later array
  must have that many columns, and features that emerge afterwards (a new dict key or
  DataFrame column) are missing in array rows.  Until an array is learnt, an array's columns
  are the features known so far, in column order.
- Errors are raised *before* anything is recorded, so a rejected call changes nothing:
  ``TypeError`` for a value of the wrong kind (a string for a numeric feature, a non-numeric
  array, a bool weight), ``ValueError`` for a wrong array width or shape, duplicate DataFrame
  columns, ``inf`` (or an int beyond the float range) in x, a NaN or infinite target, or a
  negative/NaN/infinite weight.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import sys
from collections.abc import Hashable, Iterable, Mapping

import numpy as np

import streamforest._core as _core

_MISSING = float("nan")
_INF = math.inf
_empty = np.empty
_F64 = np.dtype(np.float64)

# Exact types whose values the fast path of :meth:`FeatureSpace.encode_dict` takes as numbers:
# for each, the ``PyFloat_AsDouble`` it uses equals the general path's ``float(v)``.  Anything
# else (subclasses, strings, None, arrays, Decimal, np.longdouble, np.timedelta64, ...) goes
# the general way, which decides.
_FAST_NUMERIC = frozenset(
    {float, int, bool, np.bool_, np.float16, np.float32, np.float64}
    | {np.int8, np.int16, np.int32, np.int64, np.longlong, np.intc}
    | {np.uint8, np.uint16, np.uint32, np.uint64, np.ulonglong, np.uintc}
)
_EXACT_INT = 2**53  # ints up to this are exact as floats
_DictRows = _core.features.DictRows


def _category_bytes(v) -> bytes:
    """A canonical byte string of category ``v``, equal for categories a dict takes as one key
    (``1``, ``1.0``, ``True`` and ``np.int64(1)``), the same in every process."""
    if isinstance(v, str):
        return b"s" + v.encode("utf-8", "surrogatepass")
    if isinstance(v, bytes):
        return b"b" + v
    if isinstance(v, (bool, np.bool_, numbers.Integral)):
        return b"i" + str(int(v)).encode()
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isfinite(f) and f == int(f):
            return b"i" + str(int(f)).encode()
        return b"f" + f.hex().encode()
    if isinstance(v, tuple):
        parts = [_category_bytes(e) for e in v]
    elif isinstance(v, frozenset):
        parts = sorted(_category_bytes(e) for e in v)
    else:  # any other hashable value: by type and repr (stable when its repr is)
        t = type(v)
        return b"r" + f"{t.__module__}.{t.__qualname__}:{v!r}".encode("utf-8", "surrogatepass")
    tag = b"t" if isinstance(v, tuple) else b"z"
    return tag + b"".join(b"%d:" % len(p) + p for p in parts)


def category_bucket(v, n: int) -> int:
    """The hash bucket, in ``[0, n)``, of category ``v``: a nominal feature past its cap codes a
    category it has no code for as its bucket (see the module docstring).  A 64-bit BLAKE2b
    hash of a canonical encoding of ``v`` (strings by their UTF-8 bytes, numbers by value,
    tuples and frozensets element by element, anything else by its type and ``repr``), so the
    same in every process and Python version."""
    h = hashlib.blake2b(_category_bytes(v), digest_size=8).digest()
    return int.from_bytes(h, "little") % int(n)


class FeatureCapWarning(UserWarning):
    """A model reached the most features its memory budget holds: new feature names are ignored
    from now on (said once per model; see the module docstring)."""


def _check_name(name) -> None:
    """A new feature's name: not NaN (no NaN equals another, so a NaN key would be a new feature
    on every row)."""
    if isinstance(name, (float, np.floating)) and math.isnan(name):
        raise ValueError("a feature name is NaN: no NaN equals another, so none names a feature")


def _is_missing(v) -> bool:
    """None, NaN, or pandas' ``pd.NA`` (the missing value of its nullable dtypes)."""
    return v is None or (isinstance(v, float) and math.isnan(v)) or type(v).__name__ == "NAType"


class FeatureSpace:
    """Names, kinds and category codes of a model's features (see module docstring)."""

    def __init__(self, nominal: Iterable[Hashable] | None = None):
        self.names: list[Hashable] = []
        self.index: dict[Hashable, int] = {}
        self.nominal: list[bool] = []
        self.categories: list[dict[Hashable, int]] = []
        self.forced_nominal = frozenset(nominal or ())
        self.version = 0  # bumped whenever a feature or a category is added
        # the category cap (None: none) and each feature's bucket count once it reached the cap
        # (None: it still codes new categories); see the module docstring
        self.max_codes: int | None = None
        self.code_limits: list[int | None] = []
        # the feature cap (None: none) and the new names ignored because of it (see the module
        # docstring)
        self.max_features: int | None = None
        self.n_ignored_names = 0
        # a weak reference to the engine's refresh of the cap once its trees grew (see
        # _feature_room; not saved; weak: the engine holds this space)
        self.room_refresh = None
        self.array_names: list[Hashable] | None = None  # the features of an array's columns
        self._new_encoder()

    # ``_enc``, the compiled encoder of dict rows (``_core.features.DictRows``), reads the
    # containers above in place and keeps the memo of the last dict its fast path wrote into a
    # caller's buffer (see encode_dict_into): a cache derived from the state above, never
    # pickled, dropped when a feature is added (the row widens).
    def _new_encoder(self) -> None:
        self._enc = _DictRows(self.index, self.nominal, self.categories, _FAST_NUMERIC)

    @property
    def dict_rows(self):
        """The compiled encoder of dict rows (``_core.features.DictRows``): an engine's
        per-example path encodes with it, and its ``stamp`` (which changes whenever the memo of
        the dict last written into a buffer does) tells whether a buffer still holds the dict a
        prediction was made for (see :mod:`streamforest.engine.per_example`)."""
        return self._enc

    @property
    def _memo(self) -> tuple:
        """``(dict, buffer)`` of the memo (``(None, None)``: none), for the tests."""
        return self._enc.memo

    def forget_written(self) -> None:
        """The caller is about to write into the buffer it passes to :meth:`encode_dict_into`
        itself: the dict last written there is no longer what it holds."""
        self._enc.forget()

    def __getstate__(self):
        refresh = self.room_refresh() if self.room_refresh is not None else None
        if refresh is not None:  # the cap as the trees are now (saved the same whatever call
            refresh()  # last asked for it: a refused one included)
        d = dict(self.__dict__)
        d.pop("_enc", None)
        d.pop("_max_cats", None)
        d.pop("_nbytes", None)
        d.pop("room_refresh", None)
        return d

    def __setstate__(self, d) -> None:
        self.__dict__.update(d)
        # states saved before it existed: arrays take every feature, as they did then
        self.__dict__.setdefault("array_names", None)
        # saved before category caps (format 6 and older): no cap, every feature codes anew
        self.__dict__.setdefault("max_codes", None)
        # saved before feature caps: none (the engine sets it again at its next sync)
        self.__dict__.setdefault("max_features", None)
        self.__dict__.setdefault("n_ignored_names", 0)
        self.room_refresh = None
        if "code_limits" not in self.__dict__:
            self.code_limits = [None] * len(self.__dict__.get("names", ()))
        self.__dict__.pop("_memo", None)  # (saved by versions that kept it in the state)
        self._new_encoder()

    def __len__(self) -> int:
        return len(self.names)

    @property
    def nbytes(self) -> int:
        """Bytes this space holds: its containers, the feature names and the category keys
        (Python objects, by ``sys.getsizeof``; a name held by both ``names`` and ``index`` is
        counted once).  Bounded by the feature cap and the category cap; a model's
        ``memory_bytes`` counts it (a 16,384-name space is ~3 MiB).  Kept per :attr:`version`."""
        memo = self.__dict__.get("_nbytes")
        if memo is not None and memo[0] == self.version:
            return memo[1]
        size = sys.getsizeof
        n = sum(size(c) for c in (self.names, self.index, self.nominal, self.categories,
                                  self.code_limits))  # fmt: skip
        n += sum(size(name) for name in self.names)
        n += sum(size(c) + sum(size(k) for k in c) for c in self.categories)
        self._nbytes = (self.version, n)
        return n

    @property
    def max_categories(self) -> int:
        """The most category codes of a feature (kept per :attr:`version`: an engine's sync
        reads it once per tree)."""
        memo = self.__dict__.get("_max_cats")
        if memo is not None and memo[0] == self.version:
            return memo[1]
        n = max((len(c) for c in self.categories), default=0)
        self._max_cats = (self.version, n)
        return n

    def set_max_codes(self, n: int | None) -> None:
        """Cap the codes of each nominal feature at ``n`` (at least 1; None: no cap) from the
        next category on; features already at their bucket count keep it."""
        self.max_codes = None if n is None else max(1, int(n))

    def forget_features(self, n: int) -> None:
        """Forget every feature past the first ``n`` (an engine that could not widen its trees to
        them: the call that brought them is refused, see ``Engine.sync``).  Categories that call
        gave features already known keep their codes (codes the trees never learnt)."""
        if n >= len(self.names):
            return
        for name in self.names[n:]:
            del self.index[name]
        for lst in (self.names, self.nominal, self.categories, self.code_limits):
            del lst[n:]
        if self.array_names is not None and any(a not in self.index for a in self.array_names):
            self.array_names = None if n == 0 else [a for a in self.array_names if a in self.index]
        self._enc.forget()
        self.version += 1

    def set_max_features(self, n: int | None) -> None:
        """Cap the features at ``n`` (None: no cap); never below the features known."""
        self.max_features = None if n is None else max(len(self.names), int(n))

    def _feature_room(self, wanted: int) -> int:
        """How many of ``wanted`` new names may become features now (the rest are ignored:
        counted, and said once)."""
        refresh = self.room_refresh() if self.room_refresh is not None else None
        if refresh is not None:  # the trees may have grown since the cap was set
            refresh()
        cap = self.max_features
        if cap is None:
            return wanted
        return max(0, min(wanted, cap - len(self.names)))

    def _ignored(self, names: list) -> None:
        """Record new names left out by the feature cap (after the call succeeded)."""
        if not names:
            return
        if not self.n_ignored_names:
            import warnings

            warnings.warn(
                f"this model holds {len(self.names)} features, the most its memory budget "
                f"(max_memory_mb) allows; new feature names are ignored from now on (the first: "
                f"{names[0]!r}); raise max_memory_mb or select features to learn more",
                FeatureCapWarning,
                stacklevel=4,
            )
        self.n_ignored_names += len(names)

    def _limit_for_new(self, j: int, n_codes: int) -> int | None:
        """The bucket count of feature ``j`` (holding ``n_codes`` codes) if a new category
        comes now: its limit, or the cap when it has reached it; None: the category gets the
        next code."""
        lim = self.code_limits[j]
        if lim is not None:
            return lim
        cap = self.max_codes
        if cap is not None and n_codes >= cap:
            return cap
        return None

    def _unlearnt_code(self, j: int, v) -> float:
        """The code of a category of feature ``j`` that has none when predicting: its bucket
        once the feature is past its cap, else -1 (unseen)."""
        lim = self.code_limits[j]
        return -1.0 if lim is None else float(category_bucket(v, lim))

    # ---------------------------------------------------------------------------------------------
    def _plan_feature(self, name, value, new: dict) -> bool:
        """Kind of a feature not seen yet (recorded in ``new``); returns is-nominal."""
        if name in new:
            return new[name]
        nominal = name in self.forced_nominal or isinstance(value, str)
        new[name] = nominal
        return nominal

    def _commit(self, new: dict, new_cats: list, limits=()) -> None:
        if new:
            self._enc.forget()  # the row gets wider
        for name, nominal in new.items():
            self.index[name] = len(self.names)
            self.names.append(name)
            self.nominal.append(nominal)
            self.categories.append({})
            self.code_limits.append(None)
        for j, v in new_cats:
            cats = self.categories[j]
            if v not in cats:
                cats[v] = len(cats)
        for j, lim in limits:  # features that reached the cap: buckets from now on
            self.code_limits[j] = lim
        if new or new_cats:
            self.version += 1

    @staticmethod
    def _numeric(name, v) -> float:
        if isinstance(v, (bool, np.bool_)):
            return float(v)
        if isinstance(v, numbers.Real):
            try:
                f = float(v)
            except OverflowError:  # an int beyond the float range
                raise ValueError(f"feature {name!r} is too large for a float: {v!r}") from None
            if math.isinf(f):
                raise ValueError(
                    f"feature {name!r} is infinite ({v!r}); use NaN or None for missing"
                )
            return f
        raise TypeError(f"feature {name!r} is numeric but got {type(v).__name__} {v!r}")

    # ---------------------------------------------------------------------------------------------
    # one dict: a compiled fast path, else the general path
    #
    # The fast path (``_core.features.DictRows``) takes a plain ``dict`` whose keys are all
    # known features (or, when predicting, features the model never learnt: ignored), every
    # numeric feature's value of a type in _FAST_NUMERIC and not infinite (NaN and None are
    # missing), and every nominal feature's value a category with a code already (looked up in
    # the feature's category dict, as the general path does).  Then the general path would
    # raise nothing and record nothing, and its row holds float(v) of each numeric value and
    # the code of each category in its column and NaN elsewhere: exactly what the fast path
    # writes.  Anything else goes to the general path, which defines results and errors.
    def encode_dict(self, x: Mapping, learn: bool) -> np.ndarray:
        """One row of the core's matrix for dict ``x``; with ``learn``, new names are added.

        Returns a new 1-d array the caller owns.
        """
        return self.encode_dict_into(x, learn)[0]

    def encode_dict_into(self, x: Mapping, learn: bool, out: np.ndarray | None = None):
        """:meth:`encode_dict` as a one-row matrix ``(1, p)``, written into ``out`` when it can be.

        For callers that pass the row straight to a compiled kernel and then drop it: keep the
        result and pass it back as ``out`` next time (``self._row = X = fs.encode_dict_into(x,
        learn, self._row)``), which saves allocating a row.  ``out`` is filled and returned
        (keeping its shape) on the fast path when it is a float64 C-contiguous writeable
        ndarray of exactly ``p = len(self)`` elements, ``p`` counted after the call; otherwise,
        or whenever it is simpler, a new ``(1, p)`` array is returned: always use the returned
        array.  The caller owns ``out`` and the result, so it must not share ``out`` between
        threads nor still be using a previous result when it passes it as ``out``.  After an
        error the contents of ``out`` are unspecified.  Values and errors are those of
        :meth:`encode_dict`.

        The FeatureSpace remembers the last dict the fast path wrote into ``out`` (its key and
        value objects, dropped on the next miss): when the same dict comes back with the same
        buffer and every key and value is still the very same object (``predict_one(x)`` then
        ``learn_one(x, y)``), ``out`` is returned as it is, without converting again.  So the
        caller must not write into ``out`` itself (or says so: :meth:`forget_written`).
        """
        enc = self._enc
        if type(x) is not dict:
            enc.forget()
            return self._encode_dict_general(x, learn).reshape(1, -1)
        if out is not None:
            r = enc.encode_into(x, learn, out)
            if r is None:
                return self._encode_dict_general(x, learn).reshape(1, -1)
            if r is not False:
                return r  # (out)
        row = _empty((1, len(self.names)))  # no buffer given, or not one it can use
        if enc.encode_row(x, learn, row):
            return row
        return self._encode_dict_general(x, learn).reshape(1, -1)

    def _encode_dict_general(self, x: Mapping, learn: bool) -> np.ndarray:
        """:meth:`encode_dict` for any mapping, value by value: the reference behaviour."""
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature values, got {type(x).__name__}")
        new: dict = {}
        new_cats: list = []
        limits: list = []
        known = len(self.names)
        vals: list[tuple[int, float]] = []
        extra: list[float] = []
        pending = []  # new features, added in a canonical order (dict order must not matter)
        for name, v in x.items():
            j = self.index.get(name)
            if j is None:
                if learn and not _is_missing(v):  # a new feature only arrives with a value
                    _check_name(name)
                    pending.append((name, v))
                continue
            if _is_missing(v):
                continue
            if self.nominal[j]:
                if not isinstance(v, Hashable):
                    raise TypeError(f"category of feature {name!r} is not hashable: {v!r}")
                code = self.categories[j].get(v)
                if code is None:
                    if not learn:
                        code = self._unlearnt_code(j, v)
                    else:
                        lim = self._limit_for_new(j, len(self.categories[j]))
                        if lim is None:
                            new_cats.append((j, v))
                            code = len(self.categories[j])
                        else:  # past the cap: the category's bucket
                            if self.code_limits[j] is None:
                                limits.append((j, lim))
                            code = category_bucket(v, lim)
                vals.append((j, float(code)))
            else:
                vals.append((j, self._numeric(name, v)))
        pending.sort(key=lambda nv: (type(nv[0]).__name__, str(nv[0])))
        ignored = []
        if pending:
            room = self._feature_room(len(pending))
            if room < len(pending):  # past the feature cap: the rest are ignored
                ignored = [name for name, _ in pending[room:]]
                pending = pending[:room]
        for name, v in pending:
            if self._plan_feature(name, v, new):
                if not isinstance(v, Hashable):
                    raise TypeError(f"category of feature {name!r} is not hashable: {v!r}")
                new_cats.append((known + len(new) - 1, v))
                extra.append(0.0)  # the first category of a new feature has code 0
            else:
                extra.append(self._numeric(name, v))
        row = np.full(known + len(new), _MISSING)
        for j, f in vals:
            row[j] = f
        row[known:] = extra
        if learn:
            self._commit(new, new_cats, limits)
            self._ignored(ignored)
        return row

    def encode_array(self, X, learn: bool) -> np.ndarray:
        """The core's matrix for a 2-d array or a pandas DataFrame.

        An array's columns are the features of :attr:`array_names` (see the module docstring);
        the matrix may have fewer columns than there are features (the model pads the others
        with NaN: missing)."""
        if hasattr(X, "columns") and hasattr(X, "iloc"):  # pandas DataFrame
            return self._encode_frame(X, learn)
        try:
            A = np.asarray(X)
        except Exception as e:  # ragged input and the like
            raise TypeError(f"X must be a 2-d numeric array: {e}") from None
        if A.ndim != 2:
            raise ValueError(
                f"X must be 2-dimensional (n_samples, n_features), got shape {A.shape}"
            )
        names = self.array_names
        if names is None:
            if not self.names:
                if not learn:
                    return np.full((A.shape[0], 0), _MISSING)
                if self._feature_room(A.shape[1]) < A.shape[1]:
                    raise ValueError(
                        f"X has {A.shape[1]} columns, more than the {self.max_features} features "
                        f"this model's memory budget holds; raise max_memory_mb or pass fewer "
                        f"columns (dicts and DataFrames: names past the cap are ignored)"
                    )
                names = list(range(A.shape[1]))
            else:
                names = self.names
                if A.shape[1] != len(names):
                    raise ValueError(
                        f"X has {A.shape[1]} columns but the model was trained with "
                        f"{len(names)} features; pass a DataFrame or dicts to use named features"
                    )
        elif A.shape[1] != len(names):
            raise ValueError(
                f"X has {A.shape[1]} columns but the arrays this model learnt have {len(names)} "
                f"(features learnt later by name are missing in array rows); pass a DataFrame "
                f"or dicts to use named features"
            )
        fresh = not self.names
        identity = self.names[: len(names)] == names and not any(self.nominal[: len(names)])
        if A.dtype.kind in "biuf" and (
            (fresh and not (learn and self.forced_nominal)) or (not fresh and identity)
        ):
            # fast path: a numeric matrix whose columns are the first features, all numeric,
            # validated in one pass
            out = kernel_array(A)
            if np.isinf(out).any():
                j = int(np.flatnonzero(np.isinf(out).any(axis=0))[0])
                raise ValueError(f"feature {names[j]!r} has infinite values; use NaN for missing")
            if learn and fresh:
                self._commit({name: False for name in names}, [])
        else:
            cols = [A[:, j] for j in range(A.shape[1])]
            if not learn:  # columns of features never learnt (all missing so far) are ignored
                keep = [j for j, name in enumerate(names) if name in self.index]
                names, cols = [names[j] for j in keep], [cols[j] for j in keep]
            out = self._encode_columns(names, cols, A.shape[0], learn)
        if learn and self.array_names is None and names:
            self.array_names = list(names)
        return out

    def _encode_frame(self, df, learn: bool) -> np.ndarray:
        names = list(df.columns)
        if not df.columns.is_unique:
            dup = list(dict.fromkeys(df.columns[df.columns.duplicated()]))
            raise ValueError(f"X has duplicate column names {dup}: a feature is one column")
        cols = [df[c].to_numpy() for c in names]
        if not learn:
            keep = [(n, c) for n, c in zip(names, cols, strict=True) if n in self.index]
            names = [n for n, _ in keep]
            cols = [c for _, c in keep]
        return self._encode_columns(names, cols, len(df), learn)

    def _encode_columns(self, names, cols, n, learn: bool) -> np.ndarray:
        new: dict = {}
        new_cats: list = []
        limits: list = []
        known = len(self.names)
        order = []
        ignored = []
        room = self._feature_room(len(names)) if learn else 0  # (predicting: no new name)
        for name, col in zip(names, cols, strict=True):
            j = self.index.get(name)
            if j is None:
                sample = next((v for v in col if not _is_missing(v)), None)
                if sample is None:
                    continue
                _check_name(name)
                if len(new) >= room:  # past the feature cap: ignored
                    ignored.append(name)
                    continue
                self._plan_feature(name, sample, new)
                j = known + len(new) - 1
            order.append((name, j, col))
        out = np.full((n, known + len(new)), _MISSING)
        for name, j, col in order:
            nominal = self.nominal[j] if j < known else new[name]
            if nominal:
                cats = dict(self.categories[j]) if j < known else {}
                lim = self.code_limits[j] if j < known else None  # buckets past the cap
                codes = np.empty(n)
                for i, v in enumerate(col):
                    if _is_missing(v):
                        codes[i] = _MISSING
                        continue
                    if not isinstance(v, Hashable):
                        raise TypeError(f"category of feature {name!r} is not hashable: {v!r}")
                    c = cats.get(v)
                    if c is None:
                        if not learn:
                            c = -1 if lim is None else category_bucket(v, lim)
                        else:
                            if lim is None and self.max_codes is not None:
                                if len(cats) >= self.max_codes:
                                    lim = self.max_codes
                                    limits.append((j, lim))
                            if lim is None:
                                c = cats[v] = len(cats)
                                new_cats.append((j, v))
                            else:
                                c = category_bucket(v, lim)
                    codes[i] = c
                out[:, j] = codes
            else:
                out[:, j] = self._numeric_column(name, col)
        if learn:
            self._commit(new, new_cats, limits)
            self._ignored(ignored)
        return out

    @staticmethod
    def _numeric_column(name, col) -> np.ndarray:
        col = np.asarray(col)
        if col.dtype.kind in "biuf":
            a = col.astype(np.float64)
        elif col.dtype.kind == "O":
            a = np.empty(col.shape[0])
            for i, v in enumerate(col):
                a[i] = _MISSING if _is_missing(v) else FeatureSpace._numeric(name, v)
        else:
            raise TypeError(f"feature {name!r} is numeric but the column has dtype {col.dtype}")
        if np.isinf(a).any():
            raise ValueError(f"feature {name!r} has infinite values; use NaN for missing")
        return a


def kernel_array(a) -> np.ndarray:
    """``a`` as the compiled kernels take it: float64, C-contiguous and writeable (copied only
    when it is not: a read-only array from a memory map, pandas' copy-on-write or Ray's object
    store, or a strided one, a column slice ``Y[:, 0]``; the compiled passes read rows in C
    order and write some of the arrays they take)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a if a.flags.writeable else a.copy()


def n_rows(X) -> int:
    """The number of rows of a batch ``X`` (2-d array, DataFrame or list of rows)."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    if X is None or isinstance(X, (str, bytes, Mapping)) or not hasattr(X, "__len__"):
        raise TypeError(
            f"X must be a 2-d array (n_samples, n_features) or a DataFrame, got {type(X).__name__}"
        )
    return len(X)


def _not_text(v, name: str) -> None:
    """A clear error for None, text or bytes where numbers are expected (numpy would parse
    '2' as 2.0)."""
    if v is None:
        raise TypeError(f"{name} is required, got None")
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{name} must be numeric, got {type(v).__name__} {v!r}")
    kind = getattr(v, "dtype", None)
    if kind is not None and kind.kind in "USV":
        raise TypeError(f"{name} must be numeric, got an array of dtype {kind}")


def check_targets(y, n: int) -> np.ndarray:
    _not_text(y, "y")
    if isinstance(y, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in y):
        raise TypeError("y must be numeric, got text in a list")
    try:
        a = np.asarray(y, dtype=np.float64)
    except OverflowError:
        raise ValueError("y must be finite; it holds an int too large for a float") from None
    except (TypeError, ValueError):
        raise TypeError("y must be numeric") from None
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"y must have shape ({n},), got {a.shape}")
    if not np.isfinite(a).all():
        bad = int(np.flatnonzero(~np.isfinite(a))[0])
        raise ValueError(f"y must be finite; y[{bad}] = {a[bad]}")
    return kernel_array(a)


def check_weights(w, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    if isinstance(w, (bool, np.bool_)):
        raise TypeError(f"sample weight w must be a number, got bool {w!r}")
    _not_text(w, "sample weight w")
    if isinstance(w, (list, tuple)) and any(isinstance(v, (str, bytes)) for v in w):
        raise TypeError("sample weights w must be numeric, got text in a list")
    try:
        a = np.asarray(w, dtype=np.float64)
    except OverflowError:
        raise ValueError("sample weights w must be finite and >= 0 (an int is too large)") from None
    except (TypeError, ValueError):
        raise TypeError("sample weights w must be numeric") from None
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"w must have shape ({n},), got {a.shape}")
    if not (np.isfinite(a).all() and (a >= 0).all()):
        raise ValueError("sample weights w must be finite and >= 0")
    return kernel_array(a)


def check_weight(w) -> np.ndarray:
    """The sample weight of one example, as the 1-element array the learning loops take."""
    if (type(w) is float and 0.0 <= w < _INF) or (type(w) is int and 0 <= w <= _EXACT_INT):
        a = _empty(1)  # the common case without numbers.Real nor a temporary array
        a[0] = w
        return a
    return check_weights(w, 1)


def weight_of(w) -> float:
    """The sample weight of one example as a float (the per-example API), validated as
    :func:`check_weight` does."""
    if type(w) is float and 0.0 <= w < _INF:
        return w
    if type(w) is int and 0 <= w <= _EXACT_INT:
        return float(w)
    return float(check_weight(w)[0])


def check_target(y) -> float:
    if type(y) is float and y - y == 0.0:  # a finite float: the common case, as it is
        return y
    if isinstance(y, (bool, np.bool_)) or not isinstance(y, numbers.Real):
        raise TypeError(f"y must be a real number, got {type(y).__name__} {y!r}")
    try:
        f = float(y)
    except OverflowError:
        f = _INF
    if not math.isfinite(f):
        raise ValueError(f"y must be finite, got {y!r}")
    return f
