"""Array layout of a compiled online regression tree.

A tree is a :class:`TreeState` (a named tuple of numpy arrays, held in a forest's arena: see
:mod:`.arena`) plus a :class:`TreeParams` (a named tuple of scalar hyper-parameters).  Growing an
array happens in Python (:func:`grow`) when a kernel reports that it needs room; kernels never
allocate state, so a whole stream can run inside one compiled call, and nothing on the learning
and prediction paths allocates: split search sorts in the preallocated scratch arrays
(``scratch_*``, ``ft_*``).

Three pools live in the state:

- nodes (``nd_*``): the routing structure; a node is a leaf when ``nd_feat < 0``;
- leaves (``lf_*``), indexed by a leaf *slot* reused after a split: target statistics, the leaf's
  linear model and its normaliser, one attribute observer per feature, and optionally a KLL
  sketch of the targets (for quantile regression forests);
- bins (``bins``, one row per bin): the observers' contents (one bin per distinct key of an
  observer), chained per observer and found through one open-addressing hash table
  per tree (``bin_hash``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..drift import N_PH
from ..sketches import kll

# --- indices into TreeState.ints -----------------------------------------------------------------
I_NNODES = 0  # nodes in use
I_NLEAVES = 1  # live leaves
I_LEAF_HW = 2  # leaf slots ever used (high-water mark)
I_LEAF_NFREE = 3  # entries on the free leaf-slot stack
I_BINS_LIVE = 4  # bins in use
I_BIN_HW = 5  # bins ever used (high-water mark)
I_BIN_FREE = 6  # head of the free-bin list (-1: empty)
I_CAT_USED = 7  # entries used in the category pool
I_NSPLITS = 8  # splits made
I_NDEACT = 9  # leaves deactivated to respect the memory budget
I_NFEAT = 10  # number of features known
I_MAXCAT = 11  # 1 + largest category code seen (bounds a nominal split's category list)
I_FROZEN = 12  # 1 when max_leaves was reached: no more splits, no observers
I_NATTEMPTS = 13  # split attempts
I_LAST_SPLIT_LEAF = 14  # node id of the last leaf that split (-1: none yet)
I_NSEEN = 15  # rows passed to learning so far (weight-0 rows included)
I_DRIFT = 16  # the tree detector's last signal: 1 drift, 2 warning, 3 warning withdrawn
I_NODE_FREE = 17  # head of the free-node list, linked through nd_left (-1: empty)
I_NODE_NFREE = 18  # nodes on that list
I_NALTS = 19  # live alternate subtrees
I_ALT_STARTED = 20  # alternate subtrees started (a node's change detector fired)
I_ALT_SWAPPED = 21  # ... that replaced their node's subtree
I_ALT_DISCARDED = 22  # ... discarded
N_INTS = 23

# change detection at split nodes (TreeState.nd_detector): Page-Hinkley as in the thesis (Alg. 4.4)
PH_N, PH_EBAR, PH_SUM, PH_MIN, PH_SD0 = range(5)
N_NODE_PH = 5
# classification trees' node detectors (TreeState.nd_detector with N_NODE_PH_CLS columns): the
# thesis' Algorithm 5.2 on 0/1 errors: examples n, errors q, the normaliser sigma (frozen after
# gamma examples), the mean of the normalised errors, the cumulative sum m and its minimum M
CPH_N, CPH_Q, CPH_SD, CPH_DBAR, CPH_SUM, CPH_MIN = range(6)
N_NODE_PH_CLS = 6
# ... and their comparison with an alternate (TreeState.nd_alt_compare, McNemar's test, Algorithm
# 5.3): b (only the alternate right), c (only the subtree right), examples the alternate has seen
MC_B, MC_C, MC_SEEN = 0, 1, 2
# alternate subtree statistics (TreeState.nd_alt_compare): faded squared errors of the node's
# subtree and of its alternate, examples the alternate has seen, running mean and count of the log
# ratio Q
Q_ORG, Q_ALT, Q_SEEN, Q_MEAN, Q_COUNT = range(5)
N_NODE_Q = 5

# drift detector state (TreeState.drift_detector): see streamforest.drift (Page-Hinkley)
N_DD = N_PH

# leaf models
LEAF_MEAN = 0
LEAF_LINEAR = 1
LEAF_ADAPTIVE = 2
LEAF_MODELS = {"mean": LEAF_MEAN, "linear": LEAF_LINEAR, "adaptive": LEAF_ADAPTIVE}
# ABORF's Bayesian leaves (thesis §6.2.1-6.2.2): conjugate linear regression with a
# normal-inverse-gamma prior, its statistics in TreeState.lf_bayes (pre-grown trees only, see
# streamforest.tree_kinds.leaf_models; not in LEAF_MODELS: the other tree kinds have no lf_bayes)
LEAF_BAYES = 6
# classification leaf models (TASK_CLASSIFICATION): majority class, naive Bayes, adaptive naive
# Bayes (the one of the two that predicted the leaf's examples better so far)
LEAF_MC = 3
LEAF_NB = 4
LEAF_NBA = 5
CLASS_LEAF_MODELS = {"mc": LEAF_MC, "nb": LEAF_NB, "nba": LEAF_NBA}

# the task of a tree (TreeParams.task)
TASK_REGRESSION = 0
TASK_CLASSIFICATION = 1  # y is a class index 0..K-1; the leaves' class fields (below) are sized

# numeric attribute observers
OBS_EBST = 0
OBS_TEBST = 1
OBS_QO = 2
OBSERVERS = {"ebst": OBS_EBST, "tebst": OBS_TEBST, "qo": OBS_QO}

# split rules (TreeParams.split_rule): the codes of the rules of streamforest.tree_kinds.rules
SPLIT_OBSERVERS = 0  # best cut of per-feature attribute observers (Hoeffding tree, FIMT)
SPLIT_EXTRA = 1  # two-stage extremely randomised split (ATSER, thesis ch. 4)
SPLIT_PREGROWN = 2  # a balanced tree grown before data, random (oblique) splits (ABORF, ch. 6)
SPLIT_GAUSS = 3  # classification: thresholds scored from per-class Gaussians (VFDT, River's
# GaussianSplitter) and nominal one-versus-rest splits, from the naive Bayes statistics

# candidate columns of the extremely randomised split (TreeState.lf_candidate): the candidate's
# threshold (numeric) or side salt (nominal), then the target statistic of each side
XC_THR, XC_LW, XC_LHI, XC_LLO, XC_LM2, XC_RW, XC_RHI, XC_RLO, XC_RM2 = range(9)
N_XC = 9
# rows of the first examples a leaf buffers before drawing its candidates (TreeState.lf_buffer)
XB_Y, XB_W = 0, 1  # then the features from row 2

# SPLIT_PREGROWN (see streamforest.tree_kinds.pregrown): the kind of a split node, in nd_cat_len
NODE_AXIS = 0  # x_f scaled <= threshold (a numeric feature f)
NODE_SALT = -1  # nominal feature f: every category on the random side of a salt (nd_thr)
NODE_PROJ = -2  # sum_j nd_proj[node, j] * x_j scaled <= threshold (a random projection)
# per-feature online min-max scaling (TreeState.ft_minmax): min, max, 1 / (max - min) (0: unknown)
MM_MIN, MM_MAX, MM_INV = range(3)
N_MM = 3
# evidence of a leaf (TreeState.lf_evidence, thesis Algorithm 6.3): faded count n, faded sum of
# squared errors, and the leaf's current term of the tree's log scaling term, (n - D) / 2 log rho
LEV_N, LEV_SSE, LEV_TERM = range(3)
N_LEV = 3
# evidence of the tree (TreeState.evidence): the faded error term e_T, the log scaling term log b_T
# and the tree's log weight (-e_T + log b_T) / |leaves|.  Bayesian leaves (LEAF_BAYES):
# lf_evidence[leaf, LEV_TERM] holds the log predictive density of the leaf's last example, e_T the
# faded sum of minus those (log b_T is 0)
EV_ERR, EV_LOGB, EV_LOGW = range(3)
N_EV = 3

# statistic columns (see streamforest.stats)
S_W, S_HI, S_LO, S_M2 = 0, 1, 2, 3

# bin columns: key, target statistic (w, hi, lo, m2), x sum / min / max, owner and chain link
B_KEY, B_W, B_HI, B_LO, B_M2, B_XSUM, B_XMIN, B_XMAX, B_LEAF, B_FEAT, B_NEXT = range(11)
N_BIN_COLS = 11


class TreeParams(NamedTuple):
    grace: float
    delta: float
    tau: float
    max_depth: int
    min_branch: float
    leaf_model: int
    lr: float
    rms_decay: float
    rms_eps: float
    fading: float
    observer: int
    tebst_scale: float  # 10 ** decimals
    qo_sigma: float  # 0: fixed radius; k > 0: radius = sigma / k
    qo_radius: float  # fixed radius, or the cold-start radius when qo_sigma > 0
    max_features: int  # features observed per leaf (0: all)
    max_leaves: int
    max_bins: int
    drift_lambda: float = 0.0  # Page-Hinkley threshold (0: no drift detection)
    drift_delta: float = 0.005  # Page-Hinkley tolerance (alpha, in target sds)
    drift_min: int = 30  # examples whose targets set the detector's normaliser (warm-up)
    sketch_k: int = 0  # KLL k of the leaf target sketches (0: none)
    sketch_split: int = 0  # children start with: 0 an empty sketch, 1 a copy of the parent's
    split_rule: int = SPLIT_OBSERVERS  # SPLIT_*: how a leaf chooses its split
    m_min: int = 0  # SPLIT_EXTRA: examples a leaf sees before drawing its random candidates
    alt_lambda: float = 0.0  # split nodes' Page-Hinkley threshold (0: no alternate subtrees)
    alt_alpha: float = 0.005  # ... and its tolerance
    alt_fade: float = 0.995  # fading factor of the squared errors compared
    alt_period: int = 150  # examples between two comparisons (N_Q)
    oblique: int = 1  # SPLIT_PREGROWN: random projections (1) or axis-aligned splits (0)
    mc_points: int = 0  # SPLIT_PREGROWN: Monte Carlo points that place the node centres
    coef_decay: float = 1.0  # linear leaves: coefficients scaled by it before each step (ABORF)
    ev_fade: float = 0.0  # tree evidence (ABORF's weights): gamma_T, 0 for none
    ev_decay: float = 0.96  # ... and the fading of each leaf's count and squared errors (gamma)
    task: int = TASK_REGRESSION  # TASK_*: what y is
    ph_gamma: int = 250  # classification: node detectors freeze their sigma after this many
    alt_chi2: float = 3.841  # classification: McNemar's statistic that decides for a subtree
    nig_c: float = 0.1  # LEAF_BAYES: prior precision c of the coefficients (Lambda_0 = c I) ...
    nig_a0: float = 0.001  # ... and the inverse-gamma prior of the noise variance, a_0 ...
    nig_b0: float = 0.001  # ... and b_0
    nig_decay: float = 0.96  # ... and the forgetting gamma of the leaves' statistics (1: none)


class TreeState(NamedTuple):
    ints: np.ndarray
    rng: np.ndarray
    drift_detector: np.ndarray  # (N_DD,) drift detector state
    ft_nominal: np.ndarray  # (Pc,) int8
    # nodes
    nd_feat: np.ndarray
    nd_thr: np.ndarray
    nd_left: np.ndarray
    nd_right: np.ndarray
    nd_miss_left: np.ndarray  # missing / unseen category goes left?
    nd_leaf: np.ndarray  # leaf slot of a leaf node, -1 for a split node
    nd_cat_off: np.ndarray
    nd_cat_len: np.ndarray  # nominal split: number of categories sent left (listed first)
    nd_cat_right: np.ndarray  # ... and right (listed next); any other category is 'unseen'
    nd_depth: np.ndarray
    nd_born: np.ndarray  # rows seen (I_NSEEN) when the node was created
    # leaves
    lf_node: np.ndarray  # node id, -1 for a free slot
    lf_stat: np.ndarray  # (L, 4) target statistic
    lf_inherited: np.ndarray  # (L, 4) the part of lf_stat the leaf started with (from its parent)
    lf_last: np.ndarray  # weight at the last split attempt
    lf_active: np.ndarray  # int8: observers on?
    lf_err: np.ndarray  # (L, 2) faded absolute error of the mean and linear models
    lf_coef: np.ndarray  # (L, Pc + 1) linear model: bias then one weight per feature
    lf_rmsprop: np.ndarray  # (L, Pc + 1) RMSProp running mean of squared gradients
    lf_x: np.ndarray  # (L, Pc, 4) feature statistics (normaliser of the linear model)
    lf_scale: np.ndarray  # (L, Pc) key scale of each observer: 1/radius (QO), 10**d (TE-BST)
    lf_head: np.ndarray  # (L, Pc) first bin of each observer's chain
    lf_nbins: np.ndarray  # (L, Pc) bins in each observer
    lf_mask: np.ndarray  # (L, Pc) int8: feature observed at this leaf
    lf_free: np.ndarray  # stack of free leaf slots
    lf_sketch: np.ndarray  # (L, cap) KLL sketch items of the leaf's targets ((L, 0) when off)
    # (cap: kll.leaf_row_capacity; in models saved before it: kll.row_capacity, with sketch_capacity
    # kll.capacity_table's two rows, which the kernels still take)
    lf_sketch_levels: np.ndarray  # (L, LV_WIDTH) KLL level boundaries and weight (see sketches.kll)
    lf_aux: np.ndarray  # (L,) int64 list head owned by a meta-algorithm (CPExact), -1 empty
    sketch_capacity: np.ndarray  # (MAX_LEVELS + 2, MAX_LEVELS + 1) kll.leaf_capacity_table
    # bins: one row per bin, columns B_* below (one or two cache lines per update)
    bins: np.ndarray  # (B, N_BIN_COLS) float64
    bin_hash: np.ndarray  # hash table of bin ids, -1 empty
    scratch_bins: np.ndarray  # (B,) scratch: bin ids of one observer, sorted at split time
    scratch_keys: np.ndarray  # (B,) scratch: their sort keys
    ft_perm: np.ndarray  # (Pc,) scratch: feature permutation for random subspaces
    ft_spread: np.ndarray  # (Pc,) scratch: feature spreads passed to new leaves
    ft_linear: np.ndarray  # (Pc, 2) scratch: a leaf's linear model folded to raw feature units
    cats: np.ndarray  # category pool of nominal splits (sorted per split)
    # SPLIT_EXTRA (zero-sized otherwise)
    lf_nexamples: np.ndarray  # (L,) int64 examples the leaf has seen, counted up to m_min
    lf_candidate: (
        np.ndarray
    )  # (L, Pc, N_XC) one random candidate per feature and its side statistics
    lf_buffer: np.ndarray  # (L, Pc + 2, m_min) the leaf's first examples: y, w, then the features
    # change adaptation at split nodes (FIMT-DD / ATSER); (nodes, 0) when off
    nd_alt: np.ndarray  # root node of the node's alternate subtree, -1 none
    nd_isalt: np.ndarray  # int8: 1 for the nodes of an alternate subtree not adopted yet
    nd_detector: np.ndarray  # (nodes, N_NODE_PH) the split node's change detector
    nd_alt_compare: np.ndarray  # (nodes, N_NODE_Q) the comparison with its alternate
    nd_path: np.ndarray  # (nodes,) scratch: a stack of node ids
    # SPLIT_PREGROWN: a projection node's direction and every node's centre, in scaled units
    # ((nodes, 0) otherwise), and the online min-max scaling of the features
    nd_proj: np.ndarray  # (nodes, Pc) unit direction (0 for nominal and later features)
    nd_centre: np.ndarray  # (nodes, Pc) centre of the node's Monte Carlo points
    ft_minmax: np.ndarray  # (Pc, N_MM) running min, max, 1 / (max - min) of each feature
    # evidence weights (ABORF, thesis Algorithm 6.3); (L, 0) when off
    lf_evidence: np.ndarray  # (L, N_LEV)
    evidence: np.ndarray  # (N_EV,)
    # classification (TASK_CLASSIFICATION; K classes, C category codes; zero-sized otherwise).
    # lf_stat holds the statistic of the class index (weight, purity: m2 > 0); lf_err the
    # weights the majority class and naive Bayes predicted correctly (adaptive leaves)
    lf_class_weights: np.ndarray  # (L, K) class weights at the leaf
    lf_class_stats: np.ndarray  # (L, Pc, 3 K) per feature and class: weight, mean, m2 of the values
    lf_nominal_class_weights: (
        np.ndarray
    )  # (L, N, C K) per nominal feature (the s-th nominal feature: row s; N the
    # nominal features known, see grow_classes): weight of category c and class k (c K + k)
    lf_candidate_classes: (
        np.ndarray
    )  # (L, Pc, 2 K) SPLIT_EXTRA: the candidate's class weights (2 k + side)
    lf_range: np.ndarray  # (L, Pc, 2) SPLIT_GAUSS: smallest and largest value of each feature
    # LEAF_BAYES (zero-sized otherwise): each leaf's faded, weighted scatter of (y, 1, x) in raw
    # units, M = sum_i gamma^age_i w_i v_i v_i^T with v = (y, 1, x_0, ..., x_{Pc-1}) (row and
    # column 0 the target, 1 the intercept, 2 + j feature j), and the scratch of the leaf solve:
    # the (Pc + 1) x (Pc + 1) precision in standardised units (Cholesky factor in place), then
    # three columns: the right-hand side / coefficients, the standardised row (1, z) and the
    # row v
    lf_bayes: np.ndarray  # (L, Pc + 2, Pc + 2)
    ft_bayes: np.ndarray  # (Pc + 2, Pc + 4)


def hash_capacity(bins: int) -> int:
    h = 16
    while h < 2 * bins:
        h *= 2
    return h


def allocate(
    n_features: int,
    rng: np.ndarray,
    sketch_k: int = 0,
    nodes: int = 64,
    leaves: int = 32,
    bins: int = 1024,
    cats: int = 64,
    m_min: int = 0,
    alternates: bool = False,
    pregrown: bool = False,
    n_classes: int = 0,
    n_cats: int = 0,
    ranges: bool = False,
    nig: bool = False,
) -> TreeState:
    """A fresh state with capacity for ``n_features`` features; node 0 is the (empty) root leaf.
    ``m_min > 0`` allocates the extremely randomised split's candidates and example buffer;
    ``pregrown`` the node directions and centres and the leaves' evidence of a pre-grown tree
    (:mod:`streamforest.tree_kinds.pregrown`; ``nodes`` and ``leaves`` must hold the whole tree).
    ``n_classes > 0`` makes a classification tree's class fields (``n_cats`` category codes,
    ``ranges``: the Gaussian split rule's feature ranges).  A classification tree's leaves have no
    linear model, normaliser or attribute observers: the fields of :data:`CLASS_SLIM` have no
    feature columns (``lf_coef`` and ``lf_rmsprop`` one, the bias), and its candidates
    (``lf_candidate``) only their threshold column (their class weights are in
    ``lf_candidate_classes``).  ``nig``: the Bayesian leaves' statistics (``LEAF_BAYES``)."""
    pc = max(1, n_features)
    pr = 0 if n_classes else pc  # regression leaves' per-feature fields (see CLASS_SLIM)
    ints = np.zeros(N_INTS, dtype=np.int64)
    ints[I_BIN_FREE] = -1
    ints[I_NFEAT] = n_features
    ints[I_LAST_SPLIT_LEAF] = -1
    ints[I_NODE_FREE] = -1
    f = np.float64
    st = TreeState(
        ints=ints,
        rng=rng.copy(),
        drift_detector=np.zeros(N_DD),
        ft_nominal=np.zeros(pc, np.int8),
        nd_feat=np.full(nodes, -1, np.int64),
        nd_thr=np.zeros(nodes, f),
        nd_left=np.full(nodes, -1, np.int64),
        nd_right=np.full(nodes, -1, np.int64),
        nd_miss_left=np.zeros(nodes, np.int8),
        nd_leaf=np.full(nodes, -1, np.int64),
        nd_cat_off=np.zeros(nodes, np.int64),
        nd_cat_len=np.zeros(nodes, np.int64),
        nd_cat_right=np.zeros(nodes, np.int64),
        nd_depth=np.zeros(nodes, np.int64),
        nd_born=np.zeros(nodes, np.int64),
        lf_node=np.full(leaves, -1, np.int64),
        lf_stat=np.zeros((leaves, 4), f),
        lf_inherited=np.zeros((leaves, 4), f),
        lf_last=np.zeros(leaves, f),
        lf_active=np.zeros(leaves, np.int8),
        lf_err=np.zeros((leaves, 2), f),
        lf_coef=np.zeros((leaves, pr + 1), f),
        lf_rmsprop=np.zeros((leaves, pr + 1), f),
        lf_x=np.zeros((leaves, pr, 4), f),
        lf_scale=np.zeros((leaves, pr), f),
        lf_head=np.full((leaves, pr), -1, np.int64),
        lf_nbins=np.zeros((leaves, pr), np.int64),
        lf_mask=np.zeros((leaves, pc), np.int8),
        lf_free=np.zeros(leaves, np.int64),
        lf_sketch=np.zeros((leaves, kll.leaf_row_capacity(sketch_k) if sketch_k else 0), f),
        lf_sketch_levels=np.zeros((leaves, kll.LV_WIDTH if sketch_k else 0), np.int64),
        lf_aux=np.full(leaves, -1, np.int64),
        sketch_capacity=kll.leaf_capacity_table(sketch_k)
        if sketch_k
        else np.zeros((2, kll.MAX_LEVELS + 1), np.int64),
        bins=_empty_bins(bins),
        bin_hash=np.full(hash_capacity(bins), -1, np.int64),
        cats=np.zeros(cats, f),
        scratch_bins=np.zeros(bins, np.int64),
        scratch_keys=np.zeros(bins, f),
        ft_perm=np.zeros(pc, np.int64),
        ft_spread=np.zeros(pc, f),
        ft_linear=np.zeros((pc, 2), f),
        lf_nexamples=np.zeros(leaves, np.int64),
        lf_candidate=np.zeros((leaves, pc, (1 if n_classes else N_XC) if m_min > 0 else 0), f),
        lf_buffer=np.zeros((leaves, pc + 2, m_min), f),
        nd_alt=np.full(nodes, -1, np.int64),
        nd_isalt=np.zeros(nodes, np.int8),
        nd_detector=np.zeros(
            (nodes, (N_NODE_PH_CLS if n_classes else N_NODE_PH) if alternates else 0), f
        ),
        nd_alt_compare=np.zeros((nodes, N_NODE_Q if alternates else 0), f),
        nd_path=np.zeros(nodes, np.int64),
        nd_proj=np.zeros((nodes, pc if pregrown else 0), f),
        nd_centre=np.zeros((nodes, pc if pregrown else 0), f),
        ft_minmax=_empty_mm(pc),
        lf_evidence=np.zeros((leaves, N_LEV if pregrown else 0), f),
        evidence=np.zeros(N_EV, f),
        lf_class_weights=np.zeros((leaves, n_classes), f),
        lf_class_stats=np.zeros((leaves, pc, 3 * n_classes), f),
        lf_nominal_class_weights=np.zeros((leaves, 0, n_cats * n_classes), f),  # rows: grow_classes
        lf_candidate_classes=np.zeros((leaves, pc, 2 * n_classes if m_min > 0 else 0), f),
        lf_range=np.zeros((leaves, pc, 2 if ranges and n_classes else 0), f),
        lf_bayes=np.zeros((leaves, pc + 2, pc + 2) if nig else (leaves, 0, 0), f),
        ft_bayes=np.zeros((pc + 2, pc + 4) if nig else (0, 0), f),
    )
    return st


def _empty_mm(pc: int) -> np.ndarray:
    mm = np.zeros((pc, N_MM), np.float64)
    mm[:, MM_MIN] = np.nan  # nothing seen yet
    mm[:, MM_MAX] = np.nan
    return mm


def _empty_bins(n: int) -> np.ndarray:
    bn = np.zeros((n, N_BIN_COLS), np.float64)
    bn[:, B_LEAF] = -1.0
    bn[:, B_NEXT] = -1.0
    return bn


_NODE_FILL = {"nd_feat": -1, "nd_left": -1, "nd_right": -1, "nd_leaf": -1, "nd_alt": -1}
_LEAF_FILL = {"lf_node": -1, "lf_head": -1, "lf_aux": -1}
_LEAF_NOT_PER_FEATURE = ("lf_stat", "lf_inherited", "lf_err", "lf_sketch", "lf_sketch_levels",
                         "lf_nexamples", "lf_evidence", "lf_class_weights", "lf_bayes")  # fmt: skip
_NODE_PER_FEATURE = ("nd_proj", "nd_centre")
# leaf fields a classification tree never reads per feature (linear leaf model, its normaliser,
# attribute observers): allocated without feature columns, and kept so when the tree grows
# (a classifier saved before had them full width: they stay as they are)
CLASS_SLIM = ("lf_coef", "lf_rmsprop", "lf_x", "lf_scale", "lf_head", "lf_nbins")


def _resized(a: np.ndarray, n0: int, fill=0, p_new: int | None = None) -> np.ndarray:
    """Copy of ``a`` with first dimension ``n0`` (and second ``p_new`` for per-feature arrays)."""
    shape = list(a.shape)
    shape[0] = n0
    if p_new is not None and a.ndim >= 2:
        shape[1] = p_new
    out = np.full(shape, fill, dtype=a.dtype)
    sl = tuple(slice(0, min(s, t)) for s, t in zip(a.shape, shape, strict=True))
    out[sl] = a[sl]
    return out


# the leaves' nominal class counts: a classifier's widest field by far (see Deferred)
NOMINAL_WEIGHTS = "lf_nominal_class_weights"
_CHUNK_ITEMS = 1 << 18  # items a Deferred fill copies at a time (2 MiB of float64)


class Deferred:
    """A field of a tree state that is not built apart but written where it goes: ``shape``
    and ``dtype`` are the new field's, ``fill(dest)`` writes every item of ``dest`` (an array
    of that shape, its place in the arena's row) from ``source``, the old field (a view of the
    row, read only).  Widening a classifier's leaves (a class, a category room, leaf slots)
    built the new nominal class counts apart and then copied them into the row, so the process
    held the old field, the new one and its copy at once (three times the tree it widened,
    the largest transient of a classifier under a budget: issue 33);
    :func:`streamforest.tree_kinds.arena.store` writes a Deferred field directly, holding the
    old field and the new one only.  :meth:`materialised`: the field as an array (a store that
    cannot write it in place, where the source may be overwritten first)."""

    __slots__ = ("shape", "dtype", "source", "fill")

    def __init__(self, shape, dtype, source: np.ndarray, fill) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.source = source
        self.fill = fill

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def materialised(self) -> np.ndarray:
        out = np.empty(self.shape, self.dtype)
        self.fill(out)
        return out


def _leaf_chunks(n_leaves: int, leaf_items: int):
    """Slices of at most :data:`_CHUNK_ITEMS` items' worth of leaves (at least one leaf)."""
    step = max(1, _CHUNK_ITEMS // max(1, leaf_items))
    return [slice(a, min(n_leaves, a + step)) for a in range(0, n_leaves, step)]


def _deferred_leaves(a: np.ndarray, n0: int) -> Deferred:
    """``_resized(a, n0)`` of a leaf field (first dimension ``n0``, zeros past ``a``'s) as a
    :class:`Deferred` field."""
    shape = (n0, *a.shape[1:])
    q = min(n0, a.shape[0])
    leaf = int(np.prod(a.shape[1:], dtype=np.int64))

    def fill(dest):
        for sl in _leaf_chunks(q, leaf):
            dest[sl] = a[sl]
        dest[q:] = 0

    return Deferred(shape, a.dtype, a, fill)


def _deferred_resized(a: np.ndarray, n0: int, fill=0, p_new: int | None = None):
    """:func:`_resized` as a :class:`Deferred` field, written where it goes from ``a`` (the
    same items: ``fill`` everywhere, then ``a``'s overlap), for float64 and int64 fields (their
    arena arrays' own dtypes); any other field built apart as :func:`_resized` does."""
    if a.dtype not in (np.float64, np.int64) or a.size == 0:
        return _resized(a, n0, fill, p_new)
    shape = list(a.shape)
    shape[0] = n0
    if p_new is not None and a.ndim >= 2:
        shape[1] = p_new
    sl = tuple(slice(0, min(s, t)) for s, t in zip(a.shape, shape, strict=True))

    def write(dest):
        dest[...] = fill
        for chunk in _leaf_chunks(sl[0].stop, int(np.prod(shape[1:], dtype=np.int64))):
            dest[(chunk, *sl[1:])] = a[(chunk, *sl[1:])]

    return Deferred(shape, a.dtype, a, write)


def _deferred_bins(a: np.ndarray, n: int) -> Deferred:
    """``_empty_bins(n)`` with ``a``'s bins first, as a :class:`Deferred` field."""

    def write(dest):
        dest[...] = _empty_bins(1)  # (an empty bin, in every row)
        for chunk in _leaf_chunks(a.shape[0], N_BIN_COLS):
            dest[chunk] = a[chunk]

    return Deferred((n, N_BIN_COLS), np.float64, a, write)


def _deferred_fresh(a: np.ndarray, n: int, fill) -> Deferred:
    """A new 1-d field of ``n`` items all ``fill`` (nothing of ``a`` kept: a scratch array or
    a hash table rebuilt afterwards), as a :class:`Deferred` field whose source ``a`` (its old
    place) is given back once it is written."""

    def write(dest):
        dest[...] = fill

    return Deferred((n,), a.dtype, a, write)


def grow(
    st: TreeState,
    *,
    nodes: int = 0,
    leaves: int = 0,
    bins: int = 0,
    cats: int = 0,
    features: int = 0,
    deferred: bool = False,
) -> TreeState:
    """A state with at least the given capacities (0: keep), contents preserved.

    ``features`` is the feature capacity (second dimension of the per-feature leaf arrays).  When
    the bin capacity changes the hash table is resized; the caller must rebuild it
    (:func:`streamforest.tree_kinds.observers.rebuild_hash`).  ``deferred``: the node and leaf
    fields that grow (float64 and int64 ones, and the nominal class counts) are
    :class:`Deferred` fields, written where they go from the old ones (else the same array when
    they keep their shape; for :func:`streamforest.tree_kinds.arena.store` only): built apart,
    the new fields, the old ones and the new row were held at once (2x a single tree at its
    budget, the largest transient of a tree's growth).
    """
    resize = _deferred_resized if deferred else _resized
    d = st._asdict()
    n_nodes = max(nodes, st.nd_feat.shape[0])
    pc_old = st.ft_nominal.shape[0]
    pc = max(features, pc_old)
    if n_nodes != st.nd_feat.shape[0]:
        for k in d:
            if k.startswith("nd_") and k not in _NODE_PER_FEATURE:
                d[k] = resize(d[k], n_nodes, _NODE_FILL.get(k, 0))
    for k in _NODE_PER_FEATURE:  # later features: weight 0 in the projections
        a = d[k]
        if a.shape[0] != n_nodes or (a.shape[1] and a.shape[1] != pc):
            d[k] = resize(a, n_nodes, 0, pc if a.shape[1] else None)
    n_leaves = max(leaves, st.lf_node.shape[0])
    classify = st.lf_class_weights.shape[1] > 0
    if n_leaves != st.lf_node.shape[0] or pc != pc_old:
        for k in d:
            if k.startswith("lf_"):
                extra = {"lf_coef": 1, "lf_rmsprop": 1, "lf_buffer": 2}.get(k, 0)
                p_new = pc + extra if d[k].ndim >= 2 and k not in _LEAF_NOT_PER_FEATURE else None
                if (classify and k in CLASS_SLIM) or k == NOMINAL_WEIGHTS:  # (rows: grow_classes)
                    p_new = None
                if deferred and k == NOMINAL_WEIGHTS:
                    if d[k].shape[0] != n_leaves:
                        d[k] = _deferred_leaves(d[k], n_leaves)
                    continue
                d[k] = resize(d[k], n_leaves, _LEAF_FILL.get(k, 0), p_new)
        d["ft_nominal"] = _resized(st.ft_nominal, pc, 0)
        mm = _empty_mm(pc)
        mm[:pc_old] = st.ft_minmax
        d["ft_minmax"] = mm
        d["ft_perm"] = np.zeros(pc, np.int64)
        d["ft_spread"] = np.zeros(pc, np.float64)
        d["ft_linear"] = np.zeros((pc, 2), np.float64)
        if st.lf_bayes.shape[1]:  # Bayesian leaves: a later feature has no statistics yet
            nig = np.zeros((n_leaves, pc + 2, pc + 2))
            q = min(st.lf_bayes.shape[0], n_leaves)
            k = st.lf_bayes.shape[1]
            nig[:q, :k, :k] = st.lf_bayes[:q]
            d["lf_bayes"] = nig
            d["ft_bayes"] = np.zeros((pc + 2, pc + 4))
    n_bins = max(bins, st.bins.shape[0])
    if n_bins != st.bins.shape[0] and deferred:  # (the same items, written where they go)
        d["bins"] = _deferred_bins(st.bins, n_bins)
        d["bin_hash"] = _deferred_fresh(st.bin_hash, hash_capacity(n_bins), -1)
        d["scratch_bins"] = _deferred_fresh(st.scratch_bins, n_bins, 0)
        d["scratch_keys"] = _deferred_fresh(st.scratch_keys, n_bins, 0.0)
    elif n_bins != st.bins.shape[0]:
        bn = _empty_bins(n_bins)
        bn[: st.bins.shape[0]] = st.bins
        d["bins"] = bn
        d["bin_hash"] = np.full(hash_capacity(n_bins), -1, np.int64)
        d["scratch_bins"] = np.zeros(n_bins, np.int64)
        d["scratch_keys"] = np.zeros(n_bins, np.float64)
    n_cats = max(cats, st.cats.shape[0])
    if n_cats != st.cats.shape[0]:
        d["cats"] = _resized(st.cats, n_cats, 0)
    return TreeState(**d)


def n_classes(st: TreeState) -> int:
    """Classes a classification tree's fields hold (0 for a regression tree)."""
    return int(st.lf_class_weights.shape[1])


def n_nominal(st: TreeState) -> int:
    """Nominal features among the tree's features."""
    return int(np.count_nonzero(st.ft_nominal[: int(st.ints[I_NFEAT])]))


def n_cat_codes(st: TreeState) -> int:
    """Category codes the nominal class counts hold (``lf_nominal_class_weights``), 0 while they
    lack the row of a nominal feature (then :func:`grow_classes` is due: the engine calls it when
    this is below the codes known)."""
    k = n_classes(st)
    if not k or st.lf_nominal_class_weights.shape[1] < n_nominal(st):
        return 0
    return int(st.lf_nominal_class_weights.shape[2]) // k


def per_nominal_ncc(st: TreeState) -> TreeState:
    """A classification tree saved with ``lf_nominal_class_weights`` of one row per feature (formats
    up to 4) with one row per nominal feature, as the kernels read it (the others held nothing); any
    other state as it is."""
    pc = st.ft_nominal.shape[0]
    if not n_classes(st) or st.lf_nominal_class_weights.shape[1] != pc:
        return st
    rows = np.flatnonzero(st.ft_nominal[: int(st.ints[I_NFEAT])])
    if rows.shape[0] == pc:  # every row a nominal feature's: the same layout
        return st
    return st._replace(
        lf_nominal_class_weights=np.ascontiguousarray(st.lf_nominal_class_weights[:, rows, :])
    )


def grow_classes(st: TreeState, classes: int, cats: int) -> TreeState:
    """A classification tree's state with room for ``classes`` classes and ``cats`` category codes
    (at least those it has) and a row of ``lf_nominal_class_weights`` for each nominal feature,
    contents preserved (a new class has weight 0 everywhere, a new row nothing)."""
    K0 = n_classes(st)
    C0 = int(st.lf_nominal_class_weights.shape[2]) // K0 if K0 else 0
    return fit_classes(st, classes, max(C0, cats))


def fit_classes(st: TreeState, classes: int, cats: int, deferred: bool = False) -> TreeState:
    """:func:`grow_classes` with exactly ``cats`` category codes: fewer than the tree holds drops
    the weights of the codes from ``cats`` on (the leaves' naive Bayes then takes those
    categories as unseen ones: a classifier's category room cut to its memory budget).
    ``deferred``: the nominal class counts as a :class:`Deferred` field (for
    :func:`streamforest.tree_kinds.arena.store` only)."""
    K0 = n_classes(st)
    C0 = int(st.lf_nominal_class_weights.shape[2]) // K0 if K0 else 0
    N0, N = (
        st.lf_nominal_class_weights.shape[1],
        max(st.lf_nominal_class_weights.shape[1], n_nominal(st)),
    )
    K, C = max(K0, classes), int(cats)
    if (K, C, N) == (K0, C0, N0):
        return st
    d = st._asdict()
    L, Pc = st.lf_node.shape[0], st.ft_nominal.shape[0]

    def remap(a, shape_old, shape_new):
        out = np.zeros((L, Pc, *shape_new))
        out[(slice(None), slice(None), *(slice(0, s) for s in shape_old))] = a.reshape(
            L, Pc, *shape_old
        )
        return out.reshape(L, Pc, -1)

    cc = np.zeros((L, K))
    cc[:, :K0] = st.lf_class_weights
    d["lf_class_weights"] = cc
    d["lf_class_stats"] = remap(st.lf_class_stats, (K0, 3), (K, 3))
    c = min(C0, C)
    old = st.lf_nominal_class_weights.reshape(L, N0, C0, K0)

    def fill(dest):
        out = dest.reshape(L, N, C, K)
        for sl in _leaf_chunks(L, max(N * C * K, N0 * C0 * K0)):
            out[sl] = 0
            out[sl, :N0, :c, :K0] = old[sl, :, :c, :]

    ncc = Deferred((L, N, C * K), np.float64, st.lf_nominal_class_weights, fill)
    d[NOMINAL_WEIGHTS] = ncc if deferred else ncc.materialised()
    if st.lf_candidate_classes.shape[2]:
        d["lf_candidate_classes"] = remap(st.lf_candidate_classes, (K0, 2), (K, 2))
    return TreeState(**d)


def shrink_leaves(st: TreeState, leaves: int) -> TreeState:
    """A state whose leaf pool holds ``max(leaves, slots ever used)`` slots, when that is fewer
    than it holds (else ``st``): every slot in use, free or referenced by a node or a bin lies
    below the high-water mark ``I_LEAF_HW``, so the slots past it can go.  For a tree whose
    leaves just became dearer (a classifier's new classes, under a memory budget)."""
    n = max(int(leaves), int(st.ints[I_LEAF_HW]), 1)
    if n >= st.lf_node.shape[0]:
        return st
    d = st._asdict()
    for k in d:
        if k.startswith("lf_"):
            d[k] = np.ascontiguousarray(d[k][:n])
    return TreeState(**d)


def nbytes(st: TreeState) -> int:
    """Bytes held by the state's arrays."""
    return int(sum(a.nbytes for a in st))
