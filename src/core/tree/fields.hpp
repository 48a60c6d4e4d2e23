// The fields of a tree's state and parameters, in the order of the arena's layout: the C++
// side of streamforest/tree_kinds/state.py's ``TreeState`` and ``TreeParams``.
//
// X(index, name, arena array (F float64 / I int64 / B int8), item type, view, dimensions)
// P(index, name, type): a parameter, stored as a float64 (an integer one converted by
// truncation, as numba's ``np.int64(value)``).
//
// tests/test_core_tree.py checks both lists against the Python named tuples: a field or a
// parameter is only ever appended, on both sides at once.
#pragma once

#define SF_TREE_FIELDS(X) \
  X(0, ints, I, i64, Vec, 1) \
  X(1, rng, I, u64, Vec, 1) \
  X(2, drift_detector, F, double, Vec, 1) \
  X(3, ft_nominal, B, i8, Vec, 1) \
  X(4, nd_feat, I, i64, Vec, 1) \
  X(5, nd_thr, F, double, Vec, 1) \
  X(6, nd_left, I, i64, Vec, 1) \
  X(7, nd_right, I, i64, Vec, 1) \
  X(8, nd_miss_left, B, i8, Vec, 1) \
  X(9, nd_leaf, I, i64, Vec, 1) \
  X(10, nd_cat_off, I, i64, Vec, 1) \
  X(11, nd_cat_len, I, i64, Vec, 1) \
  X(12, nd_cat_right, I, i64, Vec, 1) \
  X(13, nd_depth, I, i64, Vec, 1) \
  X(14, nd_born, I, i64, Vec, 1) \
  X(15, lf_node, I, i64, Vec, 1) \
  X(16, lf_stat, F, double, Mat, 2) \
  X(17, lf_inherited, F, double, Mat, 2) \
  X(18, lf_last, F, double, Vec, 1) \
  X(19, lf_active, B, i8, Vec, 1) \
  X(20, lf_err, F, double, Mat, 2) \
  X(21, lf_coef, F, double, Mat, 2) \
  X(22, lf_rmsprop, F, double, Mat, 2) \
  X(23, lf_x, F, double, Cube, 3) \
  X(24, lf_scale, F, double, Mat, 2) \
  X(25, lf_head, I, i64, Mat, 2) \
  X(26, lf_nbins, I, i64, Mat, 2) \
  X(27, lf_mask, B, i8, Mat, 2) \
  X(28, lf_free, I, i64, Vec, 1) \
  X(29, lf_sketch, F, double, Mat, 2) \
  X(30, lf_sketch_levels, I, i64, Mat, 2) \
  X(31, lf_aux, I, i64, Vec, 1) \
  X(32, sketch_capacity, I, i64, Mat, 2) \
  X(33, bins, F, double, Mat, 2) \
  X(34, bin_hash, I, i64, Vec, 1) \
  X(35, scratch_bins, I, i64, Vec, 1) \
  X(36, scratch_keys, F, double, Vec, 1) \
  X(37, ft_perm, I, i64, Vec, 1) \
  X(38, ft_spread, F, double, Vec, 1) \
  X(39, ft_linear, F, double, Mat, 2) \
  X(40, cats, F, double, Vec, 1) \
  X(41, lf_nexamples, I, i64, Vec, 1) \
  X(42, lf_candidate, F, double, Cube, 3) \
  X(43, lf_buffer, F, double, Cube, 3) \
  X(44, nd_alt, I, i64, Vec, 1) \
  X(45, nd_isalt, B, i8, Vec, 1) \
  X(46, nd_detector, F, double, Mat, 2) \
  X(47, nd_alt_compare, F, double, Mat, 2) \
  X(48, nd_path, I, i64, Vec, 1) \
  X(49, nd_proj, F, double, Mat, 2) \
  X(50, nd_centre, F, double, Mat, 2) \
  X(51, ft_minmax, F, double, Mat, 2) \
  X(52, lf_evidence, F, double, Mat, 2) \
  X(53, evidence, F, double, Vec, 1) \
  X(54, lf_class_weights, F, double, Mat, 2) \
  X(55, lf_class_stats, F, double, Cube, 3) \
  X(56, lf_nominal_class_weights, F, double, Cube, 3) \
  X(57, lf_candidate_classes, F, double, Cube, 3) \
  X(58, lf_range, F, double, Cube, 3) \
  X(59, lf_bayes, F, double, Cube, 3) \
  X(60, ft_bayes, F, double, Mat, 2)

#define SF_TREE_N_FIELDS 61

#define SF_TREE_PARAMS(P) \
  P(0, grace, double) \
  P(1, delta, double) \
  P(2, tau, double) \
  P(3, max_depth, i64) \
  P(4, min_branch, double) \
  P(5, leaf_model, i64) \
  P(6, lr, double) \
  P(7, rms_decay, double) \
  P(8, rms_eps, double) \
  P(9, fading, double) \
  P(10, observer, i64) \
  P(11, tebst_scale, double) \
  P(12, qo_sigma, double) \
  P(13, qo_radius, double) \
  P(14, max_features, i64) \
  P(15, max_leaves, i64) \
  P(16, max_bins, i64) \
  P(17, drift_lambda, double) \
  P(18, drift_delta, double) \
  P(19, drift_min, i64) \
  P(20, sketch_k, i64) \
  P(21, sketch_split, i64) \
  P(22, split_rule, i64) \
  P(23, m_min, i64) \
  P(24, alt_lambda, double) \
  P(25, alt_alpha, double) \
  P(26, alt_fade, double) \
  P(27, alt_period, i64) \
  P(28, oblique, i64) \
  P(29, mc_points, i64) \
  P(30, coef_decay, double) \
  P(31, ev_fade, double) \
  P(32, ev_decay, double) \
  P(33, task, i64) \
  P(34, ph_gamma, i64) \
  P(35, alt_chi2, double) \
  P(36, nig_c, double) \
  P(37, nig_a0, double) \
  P(38, nig_b0, double) \
  P(39, nig_decay, double)

#define SF_TREE_N_PARAMS 40
