"""Validation of loaded trees: every index, count and size in a tree's arrays checked against the
arrays it indexes, so that no compiled kernel (which reads them unchecked) can be sent outside an
array or into an endless loop by a damaged or hand-edited model file.

A tree is read by the field names of :class:`streamforest.tree_kinds.state.TreeState` and the
constants of :mod:`streamforest.tree_kinds.state` (what the kernels read), from an arena
(:mod:`streamforest.tree_kinds.arena`).  What is checked, per tree:

- shapes: the node fields (``nd_*``) one row per node, the leaf fields (``lf_*``) one per leaf
  slot, the per-feature fields as wide as the feature pool (or zero-sized / slim where a tree
  kind has none), bins ``bins`` with their scratch ``sc_*``, a power-of-two hash table ``bin_hash``
  with room to spare, the KLL fields as the tree's ``sketch_k`` makes them;
- counts (``ints``): nodes, leaf slots, free leaf slots, bins, categories used, features known
  within their pools' capacities; the free lists (leaf slots, nodes, bins) inside them and
  without cycles;
- the tree: from the root (and from every alternate subtree's root, ``nd_alt``), each node is
  reached once (no cycle, no shared child), every child and alternate is a node in use; a split
  node's feature is a known feature; a nominal split's categories (``nd_cat_off``,
  ``nd_cat_len``, ``nd_cat_right``) lie inside the used part of ``cats``; a pre-grown node's kind is
  one of its three; a leaf node's slot (``nd_leaf``) is a slot in use whose ``lf_node`` points
  back at it, and every slot in use points at such a leaf node;
- bins: each observer's chain (``lf_head``, then ``bn[:, B_NEXT]``) holds ``lf_nbins`` bins of that
  leaf and feature, without cycles, inside the bins in use; every hash table entry is a bin in use;
- KLL sketches (``lf_sketch``, ``lf_sketch_levels``): level count within ``MAX_LEVELS``, level
  boundaries increasing inside the row and the top level ending at its end, the total weight that of
  the items;
- parameters: the leaf model, observer, split rule and task are ones the kernels know.

Values that are not indices (statistics, thresholds) are not checked: a NaN there gives NaN
predictions, never a crash.
"""

from __future__ import annotations

import numpy as np

from ..drift import PH_N, PH_T
from ..sketches import kll
from ..tree_kinds import arena, state
from ..tree_kinds import rules as split_rules

__all__ = ["check_arena", "check_tree"]


class _Bad(ValueError):
    pass


def _need(ok, what: str) -> None:
    if not ok:
        raise _Bad(what)


def _in_range(a: np.ndarray, lo: int, hi: int, what: str) -> None:
    """Every entry of ``a`` in ``[lo, hi)``."""
    if a.size and (int(a.min()) < lo or int(a.max()) >= hi):
        bad = a[(a < lo) | (a >= hi)]
        raise _Bad(f"{what}: {int(bad.flat[0])} outside [{lo}, {hi})")


def _float_indices(a: np.ndarray, lo: int, hi: int, what: str) -> np.ndarray:
    """Float columns holding indices (bins' owner and chain link): whole numbers in range."""
    if a.size:
        _need(np.all(np.isfinite(a)) and np.all(a == np.floor(a)), f"{what}: not whole numbers")
        _need(a.min() >= lo and a.max() < hi, f"{what}: outside [{lo}, {hi})")
    return a.astype(np.int64)


def _follow_list(head: int, nxt, n: int, limit: int, what: str) -> np.ndarray:
    """The entries of a linked list from ``head`` through ``nxt`` (-1 ends it), each in
    ``[0, limit)``, exactly ``n`` of them (``n < 0``: any number), no entry twice."""
    seen = []
    seen_set = set()
    while head != -1:
        _need(0 <= head < limit, f"{what}: entry {head} outside [0, {limit})")
        _need(head not in seen_set, f"{what}: a cycle at entry {head}")
        _need(len(seen) < limit, f"{what}: longer than its pool")
        seen.append(head)
        seen_set.add(head)
        head = int(nxt(head))
    _need(n < 0 or len(seen) == n, f"{what}: {len(seen)} entries, counted {n}")
    return np.array(seen, np.int64)


def check_arena(A, created, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` and the tree unless every tree ``t`` with
    ``created[t]`` in arena ``A`` is a valid tree."""
    arena.check(A, created)
    T = A.lay.shape[0]
    for t in range(T):
        if created is not None and not created[t]:
            continue
        try:
            check_tree(arena.load(A, t), arena.params_at(A, t))
        except _Bad as e:
            raise ValueError(f"{what}, tree {t}: {e}") from None


def check_tree(st: state.TreeState, prm: state.TreeParams) -> None:
    """Raise ``ValueError`` unless ``st`` (with parameters ``prm``) is a valid tree (see the
    module docstring)."""
    shapes = _check_shapes(st, prm)
    _check_counts(st, shapes)
    _check_nodes(st, shapes)
    _check_bins(st, shapes)
    _check_sketches(st, prm, shapes)


# ------------------------------------------------------------------------------------------------
def _check_shapes(st: state.TreeState, prm: state.TreeParams) -> dict:
    N = st.nd_feat.shape[0]
    L = st.lf_node.shape[0]
    P = st.ft_nominal.shape[0]
    B = st.bins.shape[0]
    K = st.lf_class_weights.shape[1]
    _need(
        st.ints.shape == (state.N_INTS,), f"ints has shape {st.ints.shape}, not ({state.N_INTS},)"
    )
    _need(st.drift_detector.shape == (state.N_DD,), f"dd has shape {st.drift_detector.shape}")
    counts = st.drift_detector[[PH_N, PH_T]]  # the drift detector's counts, which it divides by
    _need(np.isfinite(counts).all() and (counts >= 0).all(), "drift detector counts")
    _need(st.evidence.shape == (state.N_EV,), f"ev has shape {st.evidence.shape}")
    _need(st.rng.shape[0] >= 1, "rng is empty")
    _need(N >= 1 and L >= 1 and P >= 1, f"empty pools (nodes {N}, leaves {L}, features {P})")
    for name in state.TreeState._fields:
        a = getattr(st, name)
        if name.startswith("nd_"):
            _need(a.shape[0] == N, f"{name} has {a.shape[0]} rows for {N} nodes")
        elif name.startswith("lf_"):
            _need(a.shape[0] == L, f"{name} has {a.shape[0]} rows for {L} leaf slots")
    for name in ("ft_perm", "ft_spread", "ft_linear", "ft_minmax"):
        _need(getattr(st, name).shape[0] == P, f"{name} has {getattr(st, name).shape[0]} rows")
    _need(st.ft_linear.shape[1:] == (2,), "ft_linear is not (features, 2)")
    _need(st.ft_minmax.shape[1:] == (state.N_MM,), "ft_minmax is not (features, 3)")
    _need(st.lf_mask.shape[1] == P, "lf_mask is not (leaves, features)")
    for name in ("lf_stat", "lf_inherited"):
        _need(getattr(st, name).shape[1] == 4, f"{name} is not (leaves, 4)")
    _need(st.lf_err.shape[1] == 2, "lf_err is not (leaves, 2)")
    # per-feature leaf fields: the feature pool wide, or slim (classification trees)
    width = st.lf_scale.shape[1]
    _need(width in (0, P) if K else width == P, f"lf_scale has {width} columns for {P} features")
    _need(
        st.lf_head.shape[1] == width and st.lf_nbins.shape[1] == width,
        "lf_head / lf_nbins do not match lf_scale",
    )
    _need(st.lf_x.shape[1:] in ((width, 4), (0, 4)), f"lf_x has shape {st.lf_x.shape}")
    for name in ("lf_coef", "lf_rmsprop"):
        cols = getattr(st, name).shape[1]
        _need(cols == P + 1 or (K and cols == 1), f"{name} has {cols} columns")
    _need(
        st.scratch_bins.shape == (B,) and st.scratch_keys.shape == (B,),
        "scratch_bins / scratch_keys are not (bins,)",
    )
    _need(st.bins.shape[1:] == (state.N_BIN_COLS,), f"bn has shape {st.bins.shape}")
    H = st.bin_hash.shape[0]
    _need(H >= 2 and H & (H - 1) == 0, f"hash table of {H} entries (not a power of two)")
    _need(H >= 2 * B, f"hash table of {H} entries for {B} bins")
    _need(st.lf_free.shape == (L,) and st.lf_aux.shape == (L,), "lf_free / lf_aux not (leaves,)")
    # change adaptation, extremely randomised splits, pre-grown trees
    _need(
        st.nd_detector.shape[1] in (0, state.N_NODE_PH, state.N_NODE_PH_CLS),
        f"nd_detector {st.nd_detector.shape}",
    )
    _need(
        st.nd_alt_compare.shape[1] in (0, state.N_NODE_Q),
        f"nd_alt_compare has shape {st.nd_alt_compare.shape}",
    )
    _need(st.nd_path.shape == (N,), "nd_path is not (nodes,)")
    _need(
        st.nd_proj.shape[1] in (0, P) and st.nd_centre.shape[1] == st.nd_proj.shape[1],
        "nd_proj / nd_centre are not (nodes, features) or empty",
    )
    _need(
        st.lf_candidate.shape[1] == P and st.lf_candidate.shape[2] in (0, 1, state.N_XC),
        "lf_candidate's shape",
    )
    _need(st.lf_buffer.shape[1] == P + 2, f"lf_buffer has shape {st.lf_buffer.shape}")
    m_min = int(prm.m_min)
    _need(
        st.lf_buffer.shape[2] in (0, m_min) and (m_min <= 0 or st.lf_buffer.shape[2] == m_min),
        f"lf_buffer holds {st.lf_buffer.shape[2]} examples for m_min {m_min}",
    )
    _need(st.lf_evidence.shape[1] in (0, state.N_LEV), "lf_evidence's shape")
    # classification fields
    _need(
        st.lf_class_stats.shape[1:] == (P, 3 * K),
        f"lf_class_stats has shape {st.lf_class_stats.shape}",
    )
    ncc = st.lf_nominal_class_weights.shape
    _need(
        ncc[2] % K == 0 if K else ncc[2] == 0,
        f"lf_nominal_class_weights has shape {ncc} for {K} classes",
    )
    _need(ncc[1] <= P, f"lf_nominal_class_weights has {ncc[1]} rows for {P} features")
    _need(
        st.lf_candidate_classes.shape[1:] in ((P, 2 * K), (P, 0)),
        f"lf_candidate_classes has shape {st.lf_candidate_classes.shape}",
    )
    _need(st.lf_range.shape[1:] in ((P, 2), (P, 0)), f"lf_range has shape {st.lf_range.shape}")
    # Bayesian leaves
    nig = st.lf_bayes.shape[1:]
    _need(nig in ((0, 0), (P + 2, P + 2)), f"lf_bayes has shape {st.lf_bayes.shape}")
    _need(st.ft_bayes.shape == ((P + 2, P + 4) if nig[0] else (0, 0)), "ft_bayes's shape")
    # parameters the kernels branch on
    kinds = (
        state.LEAF_MEAN,
        state.LEAF_LINEAR,
        state.LEAF_ADAPTIVE,
        state.LEAF_MC,
        state.LEAF_NB,
        state.LEAF_NBA,
        state.LEAF_BAYES,
    )
    _need(prm.leaf_model in kinds, f"unknown leaf model {prm.leaf_model}")
    _need(prm.leaf_model != state.LEAF_BAYES or nig[0], "Bayesian leaves without lf_bayes")
    _need(prm.observer in state.OBSERVERS.values(), f"unknown observer {prm.observer}")
    _need(split_rules.known(prm.split_rule), f"unknown split rule {prm.split_rule}")
    _need(
        prm.task in (state.TASK_REGRESSION, state.TASK_CLASSIFICATION), f"unknown task {prm.task}"
    )
    _need(
        (prm.task == state.TASK_CLASSIFICATION) == (K > 0) or K == 0,
        "class fields in a regression tree",
    )
    _need(
        not split_rules.of(prm).grown_before_data or st.nd_proj.shape[1] == P,
        "a pre-grown tree without node directions",
    )
    _need(
        not split_rules.of(prm).buffers_examples or (m_min > 0 and st.lf_candidate.shape[2] > 0),
        "an extremely randomised tree without candidates",
    )
    _need(prm.max_bins >= 0 and prm.max_leaves >= 0, "negative caps")
    return {"N": N, "L": L, "P": P, "B": B, "K": K}


def _check_counts(st: state.TreeState, sh: dict) -> None:
    ints = st.ints
    N, L, P, B = sh["N"], sh["L"], sh["P"], sh["B"]
    n_nodes, hw = int(ints[state.I_NNODES]), int(ints[state.I_LEAF_HW])
    _need(1 <= n_nodes <= N, f"{n_nodes} nodes in use for a pool of {N}")
    _need(1 <= hw <= L, f"{hw} leaf slots in use for a pool of {L}")
    _need(0 <= ints[state.I_NLEAVES] <= hw, f"{int(ints[state.I_NLEAVES])} leaves for {hw} slots")
    nfree = int(ints[state.I_LEAF_NFREE])
    _need(0 <= nfree <= hw, f"{nfree} free leaf slots for {hw} in use")
    free = st.lf_free[:nfree]
    _in_range(free, 0, hw, "free leaf slots")
    _need(np.unique(free).shape[0] == nfree, "a leaf slot twice on the free stack")
    _need(np.all(st.lf_node[free] == -1), "a free leaf slot still owned by a node")
    bin_hw, live = int(ints[state.I_BIN_HW]), int(ints[state.I_BINS_LIVE])
    _need(0 <= bin_hw <= B, f"{bin_hw} bins used for a pool of {B}")
    _need(0 <= live <= bin_hw, f"{live} live bins of {bin_hw}")
    _need(0 <= ints[state.I_CAT_USED] <= st.cats.shape[0], "category pool overfull")
    _need(0 <= ints[state.I_MAXCAT] <= 2**40, "category count out of range")
    _need(
        0 <= ints[state.I_NFEAT] <= P,
        f"{int(ints[state.I_NFEAT])} features known for a pool of {P}",
    )
    _need(-1 <= ints[state.I_LAST_SPLIT_LEAF] < n_nodes, "last split leaf outside the nodes")
    _need(ints[state.I_FROZEN] in (0, 1), "frozen flag not 0 or 1")
    # free nodes: linked through nd_left from I_NODE_FREE
    free_nodes = _follow_list(
        int(ints[state.I_NODE_FREE]),
        lambda i: st.nd_left[i],
        int(ints[state.I_NODE_NFREE]),
        n_nodes,
        "free node list",
    )
    sh["free_nodes"] = free_nodes
    # free bins: linked through bn[:, B_NEXT] from I_BIN_FREE
    nxt = st.bins[:bin_hw, state.B_NEXT]
    _float_indices(nxt, -1, bin_hw, "bin links")
    sh["free_bins"] = _follow_list(
        int(ints[state.I_BIN_FREE]), lambda i: int(nxt[i]), -1, bin_hw, "free bin list"
    )
    _need(sh["free_bins"].shape[0] + live <= bin_hw, "more free and live bins than bins used")


def _check_nodes(st: state.TreeState, sh: dict) -> None:
    n_nodes, hw, P = int(st.ints[state.I_NNODES]), int(st.ints[state.I_LEAF_HW]), sh["P"]
    pregrown = st.nd_proj.shape[1] > 0
    reached = np.zeros(n_nodes, bool)
    reached[sh["free_nodes"]] = True  # a free node is nobody's child
    _need(not reached[0], "the root is on the free node list")
    frontier = np.zeros(1, np.int64)
    reached[0] = True
    splits, leaves = [], []
    while frontier.shape[0]:
        split = st.nd_feat[frontier] >= 0
        splits.append(frontier[split])
        leaves.append(frontier[~split])
        alt = st.nd_alt[frontier]
        alt = alt[alt != -1]
        children = np.concatenate([st.nd_left[frontier[split]], st.nd_right[frontier[split]], alt])
        _in_range(children, 0, n_nodes, "child or alternate node")
        _need(
            np.unique(children).shape[0] == children.shape[0] and not reached[children].any(),
            "a node reached twice from the root (a cycle, or a shared or free child)",
        )
        reached[children] = True
        frontier = children
    splits = np.concatenate(splits)
    leaves = np.concatenate(leaves)
    # split nodes: a known feature, and a nominal split's categories inside the used pool
    feat = st.nd_feat[splits]
    _in_range(feat, 0, P, "split feature")
    kind = st.nd_cat_len[splits]
    if pregrown:
        _need(
            np.isin(kind, (state.NODE_AXIS, state.NODE_SALT, state.NODE_PROJ)).all(),
            "pre-grown node kind",
        )
    else:
        nominal = (st.ft_nominal[feat] != 0) & (kind >= 0)
        off, nl, nr = (
            st.nd_cat_off[splits][nominal],
            kind[nominal],
            st.nd_cat_right[splits][nominal],
        )
        used = int(st.ints[state.I_CAT_USED])
        _need((off >= 0).all() and (nr >= 0).all(), "negative category offset or count")
        # each part first: their sum in int64 wraps (an offset of 2**63 - 1 passed, then the
        # first prediction read past the pool and crashed)
        _need(
            (off <= used).all() and (nl <= used).all() and (nr <= used).all(),
            f"a nominal split's category offset or count past the {used} used",
        )
        _need((off + nl + nr <= used).all(), f"a nominal split's categories past the {used} used")
        _need((kind >= -1).all(), "bad nominal split kind")
    # leaf nodes and leaf slots point at each other
    slot = st.nd_leaf[leaves]
    _in_range(slot, 0, hw, "leaf slot of a leaf node")
    _need(np.unique(slot).shape[0] == slot.shape[0], "two leaf nodes share a leaf slot")
    _need((st.lf_node[slot] == leaves).all(), "a leaf slot does not point back at its node")
    owner = st.lf_node[:hw]
    live = np.flatnonzero(owner != -1)
    _in_range(owner[live], 0, n_nodes, "node of a leaf slot")
    _need((st.nd_leaf[owner[live]] == live).all(), "a leaf slot's node is not its leaf")
    _need((st.nd_feat[owner[live]] < 0).all(), "a leaf slot's node is a split node")
    if (st.lf_aux[:hw] < -1).any():
        raise _Bad("lf_aux below -1")
    sh["live_slots"] = live
    m_min = st.lf_buffer.shape[2]  # examples a leaf buffers (SPLIT_EXTRA), an index into lf_buffer
    nex = st.lf_nexamples[live]
    _need(nex.size == 0 or (nex.min() >= 0 and (m_min == 0 or nex.max() <= m_min)),
          f"a leaf's example count outside [0, {m_min}]")  # fmt: skip
    # weights the kernels divide by: finite and not negative (statistics, the feature
    # normalisers' and the class weights)
    for name, a in (
        ("lf_stat", st.lf_stat[live, state.S_W]),
        ("lf_inherited", st.lf_inherited[live, state.S_W]),
        ("lf_x", st.lf_x[live, :, state.S_W]),
        ("lf_class_weights", st.lf_class_weights[live]),
    ):
        _need(a.size == 0 or (np.isfinite(a).all() and a.min() >= 0.0),
              f"{name}: a weight negative or not finite")  # fmt: skip


def _check_bins(st: state.TreeState, sh: dict) -> None:
    """The observers' chains, vectorised (a tree may hold a million bins): each bin in use
    (``B_LEAF >= 0``) belongs to a live leaf slot's observer whose chain holds it once, the
    chains end (no cycle), hold ``lf_nbins`` bins each and ``I_BINS_LIVE`` in all, and the hash
    table holds exactly the bins in use."""
    bin_hw = int(st.ints[state.I_BIN_HW])
    width = st.lf_head.shape[1]
    live_slots = sh["live_slots"]
    bn = st.bins[:bin_hw]
    leaf_of = _float_indices(bn[:, state.B_LEAF], -1, st.lf_node.shape[0], "bins' leaf slots")
    used = np.flatnonzero(leaf_of >= 0)
    free = sh["free_bins"]
    _need(not (leaf_of[free] >= 0).any(), "a free bin owned by a leaf")
    n_live = int(st.ints[state.I_BINS_LIVE])
    _need(used.shape[0] == n_live, f"{used.shape[0]} bins owned, counted {n_live}")
    is_live = np.zeros(st.lf_node.shape[0], bool)
    is_live[live_slots] = True
    owner = leaf_of[used]
    _need(is_live[owner].all(), "a bin owned by a free leaf slot")
    w = bn[used, state.B_W]
    _need(np.isfinite(w).all() and (w >= 0.0).all(), "a bin's weight negative or not finite")
    feat = _float_indices(bn[used, state.B_FEAT], 0, max(width, 1), "bins' features")
    nxt = st.bins[:bin_hw, state.B_NEXT].astype(np.int64)  # (whole numbers in range: _check_counts)
    link = nxt[used]
    if width == 0:
        _need(used.shape[0] == 0, "bins in a tree without observers")
    heads = st.lf_head[live_slots]
    _in_range(heads, -1, bin_hw, "first bin of an observer")
    counts = st.lf_nbins[live_slots]
    _need((counts >= 0).all(), "negative bin counts")
    _need(((heads == -1) == (counts == 0)).all(), "an observer's first bin and count disagree")
    # each bin in use is pointed at once: by its observer's head or by a bin of its chain
    h_slot, h_feat = np.nonzero(heads != -1)
    targets = np.concatenate([heads[h_slot, h_feat], link[link != -1]])
    _need(np.isin(targets, used).all(), "a chain reaches a bin not in use")
    indegree = np.bincount(targets, minlength=bin_hw)
    _need(
        (indegree[used] == 1).all() and targets.shape[0] == used.shape[0],
        "a bin in two chains, or in none",
    )
    first = heads[h_slot, h_feat]
    _need(
        (leaf_of[first] == live_slots[h_slot]).all() and (bn[first, state.B_FEAT] == h_feat).all(),
        "an observer's first bin is another's",
    )
    nb = link != -1  # a link stays in its observer
    _need(
        (leaf_of[link[nb]] == owner[nb]).all() and (bn[link[nb], state.B_FEAT] == feat[nb]).all(),
        "a chain runs into another observer's bins",
    )
    per = np.zeros((st.lf_node.shape[0], max(width, 1)), np.int64)
    np.add.at(per, (owner, feat), 1)
    _need(np.array_equal(per[live_slots][:, :width], counts), "an observer's bin count")
    # no cycle: with every in-degree 1, a cycle would hold no head; pointer doubling from every
    # bin reaches the end (-1, the sentinel bin_hw) in log2(bins) rounds unless on a cycle
    jump = np.full(bin_hw + 1, bin_hw, np.int64)
    jump[used] = np.where(link == -1, bin_hw, link)
    for _ in range(max(1, int(bin_hw).bit_length())):
        jump = jump[jump]
    _need((jump[used] == bin_hw).all(), "a cycle of bins")
    ht = st.bin_hash
    _in_range(ht, -1, bin_hw, "hash table entry")
    entries = ht[ht != -1]
    _need(
        entries.shape[0] == used.shape[0] and np.array_equal(np.sort(entries), used),
        "the hash table does not hold exactly the bins in use",
    )
    _need(entries.shape[0] < ht.shape[0], "a full hash table")


def _check_sketches(st: state.TreeState, prm: state.TreeParams, sh: dict) -> None:
    cap = st.lf_sketch.shape[1]
    k = int(prm.sketch_k)
    if cap == 0:  # no sketch items (files of formats 1-2 kept lf_sketch_levels's columns even then)
        _need(k == 0, f"sketch_k {k} without sketches")
        return
    _need(kll.MIN_WIDTH <= k <= 65535, f"sketch_k {k} out of range")
    _need(
        st.lf_sketch_levels.shape[1] == kll.LV_WIDTH,
        f"lf_sketch_levels has {st.lf_sketch_levels.shape[1]} columns",
    )
    leaf = (cap, st.sketch_capacity.shape) == (
        kll.leaf_row_capacity(k),
        (kll.MAX_LEVELS + 2, kll.MAX_LEVELS + 1),
    )
    full = (cap, st.sketch_capacity.shape) == (kll.row_capacity(k), (2, kll.MAX_LEVELS + 1))
    _need(
        leaf or full, f"sketch rows of {cap} items / table {st.sketch_capacity.shape} for k = {k}"
    )
    table = kll.leaf_capacity_table(k) if leaf else kll.capacity_table(k)
    _need(
        np.array_equal(st.sketch_capacity, table), "sketch capacity table is not the one of its k"
    )
    lv = st.lf_sketch_levels[sh["live_slots"]]
    if not lv.shape[0]:
        return
    H = lv[:, kll.LV_H]
    _need((H >= 1).all() and (H <= kll.MAX_LEVELS).all(), "sketch level count out of range")
    bounds = lv[:, 1 : kll.MAX_LEVELS + 2]
    cols = np.arange(bounds.shape[1])
    inside = cols[None, :] <= H[:, None]  # boundaries start_0 .. start_H
    b = np.where(inside, bounds, cap)
    _need((b >= 0).all() and (b <= cap).all(), "sketch level boundary outside its row")
    _need((np.diff(b, axis=1) >= 0).all(), "sketch level boundaries decrease")
    _need((b[np.arange(b.shape[0]), H] == cap).all(), "a sketch's top level does not end its row")
    pop = np.diff(b, axis=1)  # level h's items (0 past the top)
    weight = (pop * (np.int64(1) << cols[:-1].astype(np.int64))[None, :]).sum(axis=1)
    _need((weight == lv[:, kll.LV_N]).all(), "a sketch's total weight is not its items'")
