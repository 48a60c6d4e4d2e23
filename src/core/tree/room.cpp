// A tree's memory (see room.hpp).
#include "tree/room.hpp"

#include <limits>

#include "rules/observers.hpp"
#include "tree/state.hpp"

namespace sf::tree {

using rules::free_bins;
using rules::free_observers;

void deactivate(const TreeRef& st, i64 leaf) {
  free_observers(st, leaf);
  st.lf_active()[leaf] = 0;
  st.ints()[I_NDEACT] += 1;
}

bool enforce_bin_budget(const TreeRef& st, i64 need) {
  i64 target = py_max(need, floordiv(st.bins().rows(), 8));
  Vec<i64> lf_node = st.lf_node();
  Vec<i8> active = st.lf_active();
  Mat<i64> nbins = st.lf_nbins();
  Mat<double> stat = st.lf_stat();
  while (free_bins(st) < target) {
    i64 worst = -1;
    double worst_m2 = std::numeric_limits<double>::infinity();
    const i64 hw = st.ints()[I_LEAF_HW];
    for (i64 s = 0; s < hw; ++s) {
      if (lf_node[s] >= 0 && active[s] == 1) {
        i64 total = 0;
        for (i64 j = 0; j < nbins.cols(); ++j) total += nbins(s, j);
        if (total > 0 && stat(s, S_M2) < worst_m2) {
          worst_m2 = stat(s, S_M2);
          worst = s;
        }
      }
    }
    if (worst < 0) return free_bins(st) >= need;
    deactivate(st, worst);
  }
  return true;
}

void reactivate(const TreeRef& st, ParamRef prm) {
  Vec<i64> ints = st.ints();
  if (ints[I_NDEACT] == 0 || ints[I_FROZEN] == 1 || st.bins().rows() < prm.max_bins()) return;
  if (free_bins(st) < floordiv(st.bins().rows(), 4)) return;
  i64 best = -1;
  double best_m2 = 0.0;
  Vec<i64> lf_node = st.lf_node();
  Vec<i8> active = st.lf_active();
  Vec<i64> depth = st.nd_depth();
  Mat<double> stat = st.lf_stat();
  const i64 max_depth = prm.max_depth();
  const i64 hw = ints[I_LEAF_HW];
  for (i64 s = 0; s < hw; ++s) {
    i64 node = lf_node[s];
    if (node >= 0 && active[s] == 0 && depth[node] < max_depth) {
      if (stat(s, S_M2) > best_m2) {
        best_m2 = stat(s, S_M2);
        best = s;
      }
    }
  }
  if (best < 0) return;
  active[best] = 1;
  st.lf_last()[best] = stat(best, S_W);
  Mat<double> inherited = st.lf_inherited();
  for (i64 c = 0; c < 4; ++c) inherited(best, c) = stat(best, c);
}

void freeze(const TreeRef& st) {
  Vec<i64> ints = st.ints();
  ints[I_FROZEN] = 1;
  Vec<i64> lf_node = st.lf_node();
  Vec<i8> active = st.lf_active();
  const i64 hw = ints[I_LEAF_HW];
  for (i64 s = 0; s < hw; ++s) {
    if (lf_node[s] >= 0 && active[s] == 1) {
      free_observers(st, s);
      active[s] = 0;
    }
  }
}

bool observer_bin_room(const TreeRef& st, ParamRef prm, i64 nfeat) {
  if (free_bins(st) < nfeat) {
    if (st.bins().rows() < prm.max_bins()) return false;
    enforce_bin_budget(st, nfeat);
  }
  return true;
}

bool no_bins_needed(const TreeRef&, ParamRef, i64) { return true; }

bool room_growing(const TreeRef& st, ParamRef prm) {
  Vec<i64> ints = st.ints();
  i64 nfeat = ints[I_NFEAT];
  // an example may split its leaf, start an alternate and split a leaf of each alternate
  i64 k = prm.alt_lambda() > 0.0 ? ints[I_NALTS] + 2 : 1;
  if (ints[I_NNODES] + 2 * k > st.nd_feat().size()) return false;
  if (ints[I_LEAF_NFREE] + st.lf_node().size() - ints[I_LEAF_HW] < k) return false;
  if (ints[I_CAT_USED] + ints[I_MAXCAT] > st.cats().size()) return false;
  return st.kind.rule->bin_room(st, prm, nfeat);
}

}  // namespace sf::tree
