"""OnlineQRF: quantile regression forest with KLL sketches in the leaves (JMLR 2019, §3.2), with
equal-tailed or highest-density (HDI-Forest) intervals."""

from __future__ import annotations

import numbers

import numpy as np

import streamforest._core as _core

from ..engine.forest_interface import LEAF_PAYLOADS, TREE_MEMBERS, TREE_SETTINGS
from ..engine.handle import build as build_handle
from ..features import check_target, weight_of
from ..sketches import kll
from ..tree_kinds.state import TreeState
from ._label_guard import flagged_count, guard_label, guard_peek, guarded
from .base import IntervalRegressor, check_alphas, check_quantiles, doubled

_INF = float("inf")

_WEIGHTINGS = ("meinshausen", "paper")
_MEIN = "meinshausen"
_LF_SK = TreeState._fields.index("lf_sketch")


_QUANTILE = _core.quantile  # OnlineQRF's passes (src/core/intervals/quantile.hpp)


class OnlineQRF(IntervalRegressor):
    """Online quantile regression forest.

    Every leaf keeps a KLL sketch (accuracy ``k``) of the targets it learnt, updated with the
    bagging weight as an integer weighted insert (one insertion per set bit, see
    :mod:`streamforest.sketches.kll`).  A prediction takes the leaf sketch of each tree for ``x``
    and merges them into a fresh weighted sample (never touching the leaves' sketches) from which
    quantiles are read; it keeps every retained item, i.e. a KLL merge without its final
    compaction.

    Parameters
    ----------
    forest
        The forest (unfitted); default ``OnlineForestRegressor(n_trees=10)``.
    k
        KLL accuracy parameter of the leaf sketches (200: about 1.65% rank error).  A leaf's sketch
        keeps a row of ``0.8 k`` items (160 at ``k = 200``, 1.25 kB; see
        :func:`streamforest.sketches.kll.leaf_capacity_table`): exact up to its row, then a KLL
        sketch whose capacities shrink to fit the row as its levels grow (about ``0.26 k`` once a
        leaf saw tens of thousands of weight; a few times the worst rank error of a sketch with room
        for every level: ``benchmarks/kll_vs_datasketches.py``).  The point prediction is the trees'
        leaf models', not a sketch's, and the memory the short rows save goes to leaves: under a
        budget there is room for about 2.9 times as many leaves as with room for every level, which
        is what keeps the default forest's MAE within 2% of an unbounded one on a long stream
        (benchmarks page, "Memory soak").  The intervals merge ten trees' sketches: on that stream
        their coverage was the same as with rows of ``1.28 k`` and they were narrower (more, smaller
        leaves).
    weighting
        ``"meinshausen"``: every tree has weight ``1/T`` spread over its leaf's sample (QRF,
        Meinshausen 2006); ``"paper"``: all retained items merged with their KLL weights, so
        leaves that saw more data weigh more (the JMLR paper's merge).
    interval
        ``"equal_tailed"``: ``[Q(alpha/2), Q(1 - alpha/2)]``; ``"hdi"``: the shortest interval
        holding ``1 - alpha`` of the merged distribution (HDI-Forest, Zhu et al. 2019).
    split_sketch
        What the children of a split start with: ``"empty"`` (they only count their own data;
        trees whose leaf is still empty are left out of the merge) or ``"parent"`` (a copy of
        the parent's sketch).
    seed
        Overrides the forest's seed when given.
    groups
        Intervals calibrated per group (online Mondrian conformal): a column name or index, a
        function of the row, a list of them (several families), or
        :class:`~streamforest.Multivalid` (overlapping families); the array calls also take a
        ``groups=`` array.  See docs/intervals.md, "Coverage per group".

    Before any tree has data for ``x``, intervals are ``(-inf, inf)`` and quantiles NaN.

    Notes
    -----
    A label far outside the range of the labels learnt so far (more than ten times the range's
    width beyond it, after the first 32: a sensor spike, a unit slip) is set aside by a label
    guard: the row is predicted as any other, but the trees learn it with weight 0, so neither
    a leaf's mean nor its sketch holds it (one label of 1e12 otherwise stayed in a leaf for
    good).  ``n_flagged_labels`` counts them; see docs/intervals.md, "Label glitches".
    """

    _chunk_rows = 8192
    # bytes of leaf-sketch copies per chunk (scratch; two sets, see _tree_records): large
    # enough for chunks of a few hundred rows at least, small beside the trees' budget
    _record_budget = 8 * 2**20

    def __init__(
        self,
        forest=None,
        k: int = 200,
        weighting: str = "meinshausen",
        interval: str = "equal_tailed",
        split_sketch: str = "empty",
        seed: int | None = None,
        groups=None,
    ):
        self.forest = forest
        self.k = k
        self.weighting = weighting
        self.interval = interval
        self.split_sketch = split_sketch
        self.seed = seed
        self.groups = groups

    shard_stages = "qrf"  # sketch_records, query_records

    def forest_needs(self) -> tuple[str, ...]:
        """Leaf sketches in the trees' leaves (set through the tree settings), per member."""
        return (LEAF_PAYLOADS, TREE_SETTINGS, TREE_MEMBERS)

    def _check_params(self) -> None:
        self._check_common()
        if not isinstance(self.k, numbers.Integral) or isinstance(self.k, bool):
            raise ValueError(f"k must be an integer in [8, 65535], got {self.k!r}")
        kll.capacity_table(self.k)  # validates the range
        if self.weighting not in _WEIGHTINGS:
            raise ValueError(f"weighting must be one of {_WEIGHTINGS}, got {self.weighting!r}")
        if self.interval not in ("equal_tailed", "hdi"):
            raise ValueError(f"interval must be 'equal_tailed' or 'hdi', got {self.interval!r}")
        if self.split_sketch not in ("empty", "parent"):
            raise ValueError(f"split_sketch must be 'empty' or 'parent', got {self.split_sketch!r}")

    def _configure(self, forest) -> None:
        forest.configure_trees(leaf_quantile_k=int(self.k), leaf_quantile_split=self.split_sketch)

    def _own_bytes(self) -> int:
        """Bytes of the scratch buffers kept between calls (copies of leaf sketches and their
        levels, per-example query scratch): at most about ``2 * _record_budget`` plus the
        level tables of two chunks."""
        d = self.__dict__
        n = sum(bufs.nbytes for bufs in d.get("_bufs", {}).values())
        n += sum(a.nbytes for a in d.get("_glv", {}).values())
        q = d.get("_qone")
        if q is not None:
            n += sum(a.nbytes for a in q[0])
        return int(n)

    # ---------------------------------------------------------------------------------------------
    _scratch_keys = (*IntervalRegressor._scratch_keys, "_bufs", "_glv", "_items_per_row", "_qone",
                     "_double")  # fmt: skip

    def _rows_per_chunk(self) -> int:
        """Rows per chunk: large chunks let trees run longer per call (and on threads), but
        every row holds a copy of its leaf sketch per tree, so the chunk is sized from the
        last chunk's mean sketch size to keep those copies within ``_record_budget``."""
        per_row = self.__dict__.get("_items_per_row", 0.0) * 8 + self.forest_.n_trees * 300
        rows = int(self._record_budget / max(per_row, 1.0))
        return max(256, min(self._chunk_rows, rows))

    def _chunk_count(self, n: int, per: int) -> int:
        """One chunk up to twice :meth:`_rows_per_chunk`: its record fills one set of scratch
        buffers instead of two of half the size, and the trees make one pass over the rows
        instead of two (calls of 1000 rows were two chunks of ~500 at the default budget:
        ~7% more time).  The scratch stays within about ``2 * _record_budget``: the other set
        is released, and a set sized for such a chunk is released before two sets are used."""
        d = self.__dict__
        if n <= 2 * per:
            drop = (1,)
            if n > per:
                d["_double"] = True
        else:
            drop = (0, 1) if d.pop("_double", False) else ()
        for key in ("_bufs", "_glv"):
            for parity in drop:
                d.get(key, {}).pop(parity, None)
        return 1 if n <= 2 * per else super()._chunk_count(n, per)

    @property
    def n_flagged_labels(self) -> int:
        """Labels the label guard has set aside (not learnt)."""
        return flagged_count(self.__dict__.get("label_guard_"))

    def _sketch_width(self) -> int:
        """Items of the widest leaf-sketch row of the trees: ``kll.leaf_row_capacity(k)``, or
        ``kll.row_capacity(k)`` for trees of a model saved before leaf rows were cut to it."""
        lay = self.forest_.engine_.arena.lay
        return max(1, int(lay[:, _LF_SK, 2].max(initial=0)))

    def _tree_records(self, Xa, ya, wa, learn, parity: int = 0, guard: bool = True):
        """Per-tree predictions ``P (T, n)``, copies of the leaf sketches each row reaches (a
        record ``(bufs, goff, glv)``), and the bagging weights.  ``bufs (T, capacity)``: row t
        holds tree t's copies of the sketches' retained items, row i's at ``goff[t, i]``, its
        level row in ``glv[t, i]`` (one array whatever the number of trees).  The record lives
        in reused scratch buffers, two sets (``parity``) so one chunk's record can be queried
        while the next is written.  Learning, the labels go through the label guard first
        (unless not ``guard``: a distributed shard learns as its plain learning does)."""
        if learn and guard:
            ya, wa, _ = guarded(self._label_guard(), ya, wa)
        f = self.forest_
        e = f.engine_
        T, n = f.n_trees, Xa.shape[0]
        cap = self._sketch_width()
        P = np.zeros((T, n))
        scratch = self.__dict__.setdefault("_bufs", {})  # reused scratch, not model state
        share = max(64 * cap, self._record_budget // (8 * T))  # items per tree and chunk
        bufs = scratch.get(parity)
        if bufs is None or bufs.shape[0] != T:
            bufs = scratch[parity] = np.empty((T, 64 * cap))
        elif bufs.shape[1] > 2 * share:  # grown past twice its share (a chunk sized on an
            bufs = scratch[parity] = np.empty((T, share))  # earlier, smaller mean sketch)
        gpos = np.zeros(T, np.int64)
        goff = np.empty((T, n), np.int64)
        levels = self.__dict__.setdefault("_glv", {})  # every entry read is written first
        lvs = levels.get(parity)
        if lvs is None or lvs.shape[0] != T or lvs.shape[1] < n:  # sized to the chunks seen
            lvs = levels[parity] = np.empty((T, -(-n // 256) * 256, kll.LV_WIDTH), np.int64)
        glv = lvs  # whole (C-contiguous, one compiled signature); rows >= n are not read
        W = e.bagging_weights(wa) if learn else np.zeros((T, n))
        # tree t's buffer in this pass: its row of bufs, or a grown copy of it (each thread
        # replaces only its own tree's entry; bufs is grown after the run)
        local = list(bufs)

        def step(A, t, i):
            return _QUANTILE.sketch_tree_pass(
                A, t, Xa, ya, W[t], i, learn, P[t], local[t], gpos[t : t + 1], goff[t], glv[t]
            )

        def room(t, stop):
            if stop < n and local[t].shape[0] - gpos[t] < cap:
                local[t] = doubled(local[t], gpos[t])

        e.run(step, n, before=room, rows=(Xa, ya, wa) if learn else None)
        width = max(b.shape[0] for b in local)
        if width > bufs.shape[1]:  # a tree's buffer grew: every row to the widest
            bufs = scratch[parity] = np.empty((T, width))
            for t in range(T):
                bufs[t, : gpos[t]] = local[t][: gpos[t]]
        self._items_per_row = float(gpos.sum()) / max(n, 1)
        return P, (bufs, goff, glv), W

    def _mixture(self, rec, mask, qs, masses, out_q, out_lo, out_hi, threads=True) -> None:
        """Run the mixture query on the forest's threads (rows split in blocks, four per
        thread: a thread that is slowed down, e.g. by another process, takes fewer)."""
        n = rec[1].shape[1]
        mein = self.weighting == "meinshausen"
        e = self.forest_.engine_
        jobs = 4 * e.n_jobs if n >= e.parallel_rows and threads and e.n_jobs > 1 else 1
        bounds = np.linspace(0, n, jobs + 1).astype(int)
        query = _QUANTILE.mixture_query

        def run(j):
            query(*rec, mask, mein, qs, masses, out_q, out_lo, out_hi, bounds[j], bounds[j + 1])

        if jobs > 1:
            list(e.executor().map(run, range(jobs)))
        else:
            run(0)

    def sketch_records(self, Xa) -> tuple:
        """The trees' leaf-sketch records ``(bufs, goff, glv)`` of encoded rows ``Xa`` (nothing
        learnt): what :meth:`query_records` reads, the distributed layer's shards' part."""
        n = Xa.shape[0]
        return self._tree_records(Xa, np.zeros(n), np.ones(n), False)[1]

    def learn_records(self, Xa, ya, wa) -> tuple:
        """Learn encoded rows ``Xa`` (targets ``ya``, weights ``wa``; no label guard) and return
        the records :meth:`sketch_records` gives, taken before each row was learnt: a shard's
        part of a grouped method's pass (its reference intervals)."""
        return self._tree_records(Xa, ya, wa, True, guard=False)[1]

    def query_records(self, rec, alphas) -> tuple:
        """``(lo, hi)`` of shape ``(n, A)`` from the sketch mixture of every tree's records
        ``rec`` (see :meth:`sketch_records`; the shards' records concatenated, their items
        either one ``(T, capacity)`` array or a sequence of T one-dimensional arrays, tree t's
        items, laid here as the rows of one array)."""
        bufs, goff, glv = rec
        if not (isinstance(bufs, np.ndarray) and bufs.ndim == 2):
            width = max([b.shape[0] for b in bufs], default=0)
            rows = np.zeros((len(bufs), width))
            for t, b in enumerate(bufs):
                rows[t, : b.shape[0]] = b
            bufs = rows
        return self._query((bufs, goff, glv), np.ones(goff.shape, np.int8), alphas)

    def _query(self, rec, mask, alphas, threads=True):
        """``(lo, hi)`` of shape ``(n, A)`` from the sketch mixture of the trees in ``mask``."""
        n, A = rec[1].shape[1], alphas.shape[0]
        lo = np.full((n, A), np.nan)
        hi = np.full((n, A), np.nan)
        if self.interval == "hdi":
            self._mixture(rec, mask, np.zeros(0), 1.0 - alphas, np.empty((n, 0)), lo, hi, threads)
        else:
            qs = np.ascontiguousarray(np.stack([alphas / 2, 1 - alphas / 2], axis=1).ravel())
            out = np.empty((n, 2 * A))
            self._mixture(rec, mask, qs, np.zeros(0), out, lo, hi, threads)
            lo, hi = out[:, 0::2], out[:, 1::2]
        return lo, hi

    def _learn_levels(self) -> np.ndarray:
        return np.zeros(0)  # learning alone needs no interval: the forest learns directly

    def _chunk(self, Xa, ya, wa, alphas, learn):
        """Learning alone (no levels), or prediction; learning with levels runs in stages."""
        if learn:
            e = self.forest_.engine_  # same weights and learning, no records
            ya, wa, _ = guarded(self._label_guard(), ya, wa)
            e.learn(Xa, ya, e.bagging_weights(wa), wa)
            n = Xa.shape[0]
            return np.zeros(n), np.zeros((n, 0)), np.zeros((n, 0))
        P, rec, _ = self._tree_records(Xa, ya, wa, False)
        lo, hi = self._query(rec, np.ones(P.shape, np.int8), alphas)
        return self.forest_.engine_.aggregate(P), lo, hi

    def _staged(self, alphas) -> bool:
        return alphas.shape[0] > 0

    def _tree_stage(self, Xa, ya, wa, parity: int):
        P, rec, _ = self._tree_records(Xa, ya, wa, True, parity)
        return P, rec

    def _score_stage(self, stage, ya, alphas, alone: bool):
        """The mixture query of a learnt chunk: on the forest's threads when ``alone``, else on
        one thread (the other cores run the trees of the next chunk meanwhile)."""
        P, rec = stage
        lo, hi = self._query(rec, np.ones(P.shape, np.int8), alphas, threads=alone)
        return self.forest_.engine_.aggregate(P), lo, hi

    # --- one example, one compiled call ----------------------------------------------------------
    def learn_one(self, x, y: float, w: float = 1.0) -> None:
        """Learn one example (``x`` a dict of feature values): the forest learns it directly
        (the leaves' sketches are updated as it learns)."""
        px = self._px
        g = self.__dict__.get("label_guard_")
        if (
            px
            and g is not None
            and type(y) is float
            and type(w) is float
            and guard_peek(g, y, w) == y
        ):
            # the hot path: one compiled call, for a label the guard lets through (then
            # counted, once the call succeeded: a refused row leaves the guard as it was)
            f = self._forest
            r = px.learn(f, x, y, w)
            if r is not False:
                if r is not None:  # a tree out of room, a drift signal, background trees
                    f.engine_.learn_on(r, y, w)
                guard_label(g, y, w)
                self._n_seen += 1
                return
        # the common cases of check_target and weight_of inline
        yf = y if type(y) is float and y - y == 0.0 else check_target(y)
        wf = w if type(w) is float and 0.0 <= w < _INF else weight_of(w)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(OnlineQRF.learn_one, x, yf, wf)
        self._learn_row(f.encode_learn_row(x), yf, wf)  # (encoded into the engine's row buffer)
        if self._quantile_one:
            self._attach_px()

    def _learn_row(self, row, yf: float, wf: float) -> None:
        """The per-example learning of ``row``, the engine's row buffer (see the base)."""
        yl = guard_label(self._label_guard(), yf, wf)
        self.forest_.engine_.learn_row(yl, wf if yl == yf else 0.0)
        self._n_seen += 1

    _quantile_one = True  # the per-example interval is the mixture's (see ConformalQRF)

    def predict_interval_one(self, x, alpha=0.1):
        """``(lower, upper)`` for one example, or a list of them for a list of ``alpha``."""
        px = self._px
        if px and type(alpha) is float:  # one compiled call
            s = self._qone
            p = None if s is None else s[1].get(alpha)  # this level's arrays, packed
            if p is not None and p[2] is self.interval:
                out = px.qrf_interval(self._forest, x, s[2], p[0], self.weighting == _MEIN)
                if out is not None:
                    return out
        f = self.__dict__.get("_forest")
        if type(alpha) is float and 0.0 < alpha < 1.0 and f is not None and self._quantile_one:
            e = f.__dict__.get("engine_")  # one level, its arrays packed once
            if e is not None and e.fitted:
                row = e.features.encode_dict_into(x, False, e.row_buffer)  # e.encode_one(x, False)
                if row is not e.row_buffer:
                    row = e.row_buffer = row.reshape(-1)
                s = self._qone
                if s is None:
                    s = self._qone_scratch()
                p = s[1].get(alpha)  # this level's arrays, packed
                if p is None or p[2] is not self.interval:
                    p = self._level_pack(s[1], alpha)
                out = _QUANTILE.interval_one_hp(e.handle(), s[2], p[0],
                                                self.weighting == _MEIN)  # fmt: skip
                self._attach_px()
                return out
        return super().predict_interval_one(x, alpha)

    _qone = None  # the per-example query's scratch (made on first use, see _qone_scratch)

    def _qone_scratch(self):
        """Scratch of ``query_one``, sized for the engine's trees and the ``k`` of their
        leaf sketches (a row of ``kll.row_capacity(k)`` items per tree: the widest a leaf
        sketch's row is, in models saved before the rows were cut too; no per-call look at the
        trees, which allocates).  Both are the trees' own, not the parameters (``n_trees``,
        ``k``), which ``set_params`` may have changed since the trees were made."""
        s = self._qone
        if s is None:
            e = self.forest_.engine_
            T = int(e.n_trees)
            k = max((int(sp.leaf_quantile_k or 0) for sp in e.specs), default=0)
            cap = kll.row_capacity(k or int(self.k))
            R = T * (kll.LV_WIDTH - 3)
            i64 = np.int64
            s = self._qone = (
                (np.empty(T, i64), np.empty(R, i64), np.empty(R, i64), np.empty(R),
                 np.empty(R, i64), np.empty(R), np.empty(R, i64), np.empty(T * cap),
                 np.empty(T * cap)),
                {},
            )  # fmt: skip
            handle = build_handle(s[0])  # the scratch packed (s keeps the arrays)
            handle.flags.writeable = False  # (the compiled per-example object keeps its views)
            s = self._qone = (*s, handle)
        return s

    def _level_pack(self, cache, alpha: float):
        """``(handle, arrays, interval)``: the arrays of one level's per-example interval (its
        quantile levels or mass, their output, the two bounds) and their handle, kept in
        ``cache`` (the query scratch's, see :meth:`_levels_for`) under the level ``alpha``, a
        float in (0, 1), for the ``interval`` kind they answer."""
        qs, masses, out_q = self._levels_for(cache, check_alphas(alpha)[0])
        arrays = (qs, masses, out_q, np.empty(1), np.empty(1))
        handle = build_handle(arrays)
        handle.flags.writeable = False  # (the compiled per-example object keeps its views)
        p = cache[alpha] = (handle, arrays, self.interval)  # (handle -> arrays)
        return p

    def _query_one(self, row, qs, masses, out_q, out_lo, out_hi) -> None:
        e = self.forest_.engine_
        s = self._qone_scratch()
        mein = self.weighting == "meinshausen"
        if row is e.row_buffer:  # the per-example path: the engine's row buffer, handles
            _QUANTILE.query_one_h(e.handle(), s[2], mein, qs, masses, out_q, out_lo, out_hi)
            return
        _QUANTILE.query_one(e.arena, row, mein, qs, masses, out_q, out_lo, out_hi, *s[0])

    def _one_kernel(self, row, alphas, lo, hi) -> None:
        A = alphas.shape[0]
        qs, masses, out_q = self._levels_for(self._qone_scratch()[1], alphas)
        self._query_one(row, qs, masses, out_q, lo, hi)
        equal_tailed = qs.shape[0] > 0
        for a in range(A):
            if equal_tailed:
                lo[a] = out_q[2 * a]
                hi[a] = out_q[2 * a + 1]
            if lo[a] != lo[a]:
                lo[a] = -np.inf
            if hi[a] != hi[a]:
                hi[a] = np.inf

    def _levels_for(self, cache, alphas):
        """Quantile levels or masses (and their output scratch) that answer ``alphas`` with
        the current ``interval`` kind."""
        A = alphas.shape[0]
        key = (alphas.tobytes(), self.interval)
        levels = cache.get(key)
        if levels is None:
            if len(cache) > 64:
                cache.clear()
            if self.interval == "hdi":
                levels = cache[key] = (np.zeros(0), 1.0 - alphas, np.empty(0))
            else:
                qs = np.ascontiguousarray(np.stack([alphas / 2, 1 - alphas / 2], axis=1).ravel())
                levels = cache[key] = (qs, np.zeros(0), np.empty(2 * A))
        return levels

    def predict_quantiles_one(self, x, q):
        """Quantiles ``q`` (a number or a list) of the conditional distribution of y at one
        example: a float or a list.  NaN before any data."""
        qa, scalar = check_quantiles(q)
        f = self.__dict__.get("_forest")
        if f is None:
            return self._first_call(OnlineQRF.predict_quantiles_one, x, q, keep=False)
        out = np.full(qa.shape[0], np.nan)
        if f.is_fitted:
            row = f.engine_.encode_one(x, False)
            self._query_one(row, np.ascontiguousarray(qa), np.zeros(0), out, out, out)
        else:
            f.feature_space().encode_dict(x, learn=False)  # validates
        return float(out[0]) if scalar else [float(v) for v in out]

    def predict_quantiles(self, X, q) -> np.ndarray:
        """Quantiles ``q`` (a number or a list) of the conditional distribution of y for the rows
        of ``X``: ``(n,)`` or ``(n, len(q))``.  NaN before any data."""
        qa, scalar = check_quantiles(q)
        if "_forest" not in self.__dict__:
            return self._first_call(OnlineQRF.predict_quantiles, X, q, keep=False)
        Xa = self._encode(X)
        n = Xa.shape[0]
        out = np.full((n, qa.shape[0]), np.nan)
        if self.forest_.is_fitted and n:
            a = 0
            while a < n:
                b = min(n, a + self._rows_per_chunk())
                P, rec, _ = self._tree_records(Xa[a:b], np.zeros(b - a), np.ones(b - a), False)
                mask = np.ones(P.shape, np.int8)
                o = np.empty((b - a, qa.shape[0]))
                self._mixture(rec, mask, np.ascontiguousarray(qa), np.zeros(0), o, o, o)
                out[a:b] = o
                a = b
        return out[:, 0] if scalar else out


__all__ = ["OnlineQRF", "check_alphas"]
