// The constants of a tree's state (the C++ side of streamforest/tree_kinds/state.py): the
// indices into ``ints``, the columns of the statistics, bins, detectors and candidates, and the
// codes of the leaf models, observers, split rules and tasks.  The fields themselves are
// fields.hpp; the Python allocation and growth stay in Python.
//
// Invariant: every constant has its Python value (tests/test_core_tree_passes.py checks them
// against the Python module).
#pragma once

#include "common/views.hpp"

namespace sf::tree {

// --- indices into TreeState.ints ----------------------------------------------------------
inline constexpr i64 I_NNODES = 0;            // nodes in use
inline constexpr i64 I_NLEAVES = 1;           // live leaves
inline constexpr i64 I_LEAF_HW = 2;           // leaf slots ever used (high-water mark)
inline constexpr i64 I_LEAF_NFREE = 3;        // entries on the free leaf-slot stack
inline constexpr i64 I_BINS_LIVE = 4;         // bins in use
inline constexpr i64 I_BIN_HW = 5;            // bins ever used (high-water mark)
inline constexpr i64 I_BIN_FREE = 6;          // head of the free-bin list (-1: empty)
inline constexpr i64 I_CAT_USED = 7;          // entries used in the category pool
inline constexpr i64 I_NSPLITS = 8;           // splits made
inline constexpr i64 I_NDEACT = 9;            // leaves deactivated for the memory budget
inline constexpr i64 I_NFEAT = 10;            // number of features known
inline constexpr i64 I_MAXCAT = 11;           // 1 + largest category code seen
inline constexpr i64 I_FROZEN = 12;           // 1 when max_leaves was reached
inline constexpr i64 I_NATTEMPTS = 13;        // split attempts
inline constexpr i64 I_LAST_SPLIT_LEAF = 14;  // node id of the last leaf that split (-1: none)
inline constexpr i64 I_NSEEN = 15;            // rows passed to learning (weight-0 included)
inline constexpr i64 I_DRIFT = 16;            // the tree detector's last signal
inline constexpr i64 I_NODE_FREE = 17;        // head of the free-node list (via nd_left)
inline constexpr i64 I_NODE_NFREE = 18;       // nodes on that list
inline constexpr i64 I_NALTS = 19;            // live alternate subtrees
inline constexpr i64 I_ALT_STARTED = 20;
inline constexpr i64 I_ALT_SWAPPED = 21;
inline constexpr i64 I_ALT_DISCARDED = 22;
inline constexpr i64 N_INTS = 23;

// change detection at split nodes (nd_detector): Page-Hinkley (thesis Alg. 4.4)
inline constexpr i64 PH_N = 0, PH_EBAR = 1, PH_SUM = 2, PH_MIN = 3, PH_SD0 = 4;
inline constexpr i64 N_NODE_PH = 5;
// classification trees' node detectors (thesis Algorithm 5.2)
inline constexpr i64 CPH_N = 0, CPH_Q = 1, CPH_SD = 2, CPH_DBAR = 3, CPH_SUM = 4, CPH_MIN = 5;
inline constexpr i64 N_NODE_PH_CLS = 6;
// McNemar's comparison with an alternate (classification, Algorithm 5.3)
inline constexpr i64 MC_B = 0, MC_C = 1, MC_SEEN = 2;
// alternate subtree statistics (nd_alt_compare)
inline constexpr i64 Q_ORG = 0, Q_ALT = 1, Q_SEEN = 2, Q_MEAN = 3, Q_COUNT = 4;
inline constexpr i64 N_NODE_Q = 5;

// leaf models
inline constexpr i64 LEAF_MEAN = 0;
inline constexpr i64 LEAF_LINEAR = 1;
inline constexpr i64 LEAF_ADAPTIVE = 2;
inline constexpr i64 LEAF_MC = 3;
inline constexpr i64 LEAF_NB = 4;
inline constexpr i64 LEAF_NBA = 5;
inline constexpr i64 LEAF_BAYES = 6;

// the task of a tree (TreeParams.task)
inline constexpr i64 TASK_REGRESSION = 0;
inline constexpr i64 TASK_CLASSIFICATION = 1;

// numeric attribute observers
inline constexpr i64 OBS_EBST = 0;
inline constexpr i64 OBS_TEBST = 1;
inline constexpr i64 OBS_QO = 2;

// split rules (TreeParams.split_rule)
inline constexpr i64 SPLIT_OBSERVERS = 0;
inline constexpr i64 SPLIT_EXTRA = 1;
inline constexpr i64 SPLIT_PREGROWN = 2;
inline constexpr i64 SPLIT_GAUSS = 3;

// candidate columns of the extremely randomised split (lf_candidate)
inline constexpr i64 XC_THR = 0, XC_LW = 1, XC_LHI = 2, XC_LLO = 3, XC_LM2 = 4, XC_RW = 5,
                     XC_RHI = 6, XC_RLO = 7, XC_RM2 = 8;
inline constexpr i64 N_XC = 9;
inline constexpr i64 XB_Y = 0, XB_W = 1;  // lf_buffer rows (features from row 2)

// SPLIT_PREGROWN: the kind of a split node, in nd_cat_len
inline constexpr i64 NODE_AXIS = 0;
inline constexpr i64 NODE_SALT = -1;
inline constexpr i64 NODE_PROJ = -2;
inline constexpr i64 MM_MIN = 0, MM_MAX = 1, MM_INV = 2;
inline constexpr i64 N_MM = 3;
inline constexpr i64 LEV_N = 0, LEV_SSE = 1, LEV_TERM = 2;
inline constexpr i64 N_LEV = 3;
inline constexpr i64 EV_ERR = 0, EV_LOGB = 1, EV_LOGW = 2;
inline constexpr i64 N_EV = 3;

// statistic columns (see common/stats.hpp)
inline constexpr i64 S_W = 0, S_HI = 1, S_LO = 2, S_M2 = 3;

// bin columns: key, target statistic, x sum / min / max, owner and chain link
inline constexpr i64 B_KEY = 0, B_W = 1, B_HI = 2, B_LO = 3, B_M2 = 4, B_XSUM = 5, B_XMIN = 6,
                     B_XMAX = 7, B_LEAF = 8, B_FEAT = 9, B_NEXT = 10;
inline constexpr i64 N_BIN_COLS = 11;

}  // namespace sf::tree
