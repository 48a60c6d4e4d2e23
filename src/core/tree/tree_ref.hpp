// A tree of an arena as one small value: ``TreeRef`` (its state) and ``ParamRef`` (its
// parameters), ported from the numba-era streamforest/tree_kinds/tree_ref.py.
//
// A forest keeps all its trees in one arena (streamforest/tree_kinds/arena.py): ``fa``
// (float64), ``ia`` (int64) and ``ba`` (int8), each ``(n_trees, capacity)``, one row per tree
// holding every field of its state; ``lay`` ``(n_trees, n_fields, 4)``: each field's offset in
// its row and its shape (unused dimensions 1); ``pa`` ``(n_trees, n_params)``: the parameters.
//
// ``st.nd_thr()`` is the field as a view of the row (its offset and shape read from the
// layout where it is used: the compiler hoists them out of loops); ``prm.grace()`` one
// parameter.  Kernels read and write fields in place; they never change a field's shape: the
// Python side grows a tree (streamforest/tree_kinds/state.py ``grow``) when a pass reports
// that it needs room.
//
// Invariant (checked by ``arena.check`` before compiled code sees an arena from a file): every
// field of a created tree lies inside its row.
#pragma once

#include <type_traits>

#include "common/numeric.hpp"
#include "common/views.hpp"
#include "tree/fields.hpp"
#include "tree/kind.hpp"

namespace sf::tree {

/// The arrays of a forest's arena (views of the five numpy arrays).
struct Arena {
  Mat<double> fa;
  Mat<i64> ia;
  Mat<i8> ba;
  Cube<i64> lay;
  Mat<double> pa;

  i64 n_trees() const { return lay.n0; }
};

namespace detail {
template <class T>
struct Row;
template <>
struct Row<double> {
  static double* of(double* f, i64*, i8*) { return f; }
};
template <>
struct Row<i64> {
  static i64* of(double*, i64* i, i8*) { return i; }
};
template <>
struct Row<u64> {  // the generator's state lives in the int64 array (same size, may alias)
  static u64* of(double*, i64* i, i8*) { return reinterpret_cast<u64*>(i); }
};
template <>
struct Row<i8> {
  static i8* of(double*, i64*, i8* b) { return b; }
};

template <class T>
inline Vec<T> view1(T* base, const i64* lay, int k) {
  return Vec<T>(base + lay[4 * k], lay[4 * k + 1]);
}
template <class T>
inline Mat<T> view2(T* base, const i64* lay, int k) {
  return Mat<T>(base + lay[4 * k], lay[4 * k + 1], lay[4 * k + 2]);
}
template <class T>
inline Cube<T> view3(T* base, const i64* lay, int k) {
  return Cube<T>(base + lay[4 * k], lay[4 * k + 1], lay[4 * k + 2], lay[4 * k + 3]);
}
}  // namespace detail

#define SF_VIEW_1(T, base, k) detail::view1<T>(base, lay, k)
#define SF_VIEW_2(T, base, k) detail::view2<T>(base, lay, k)
#define SF_VIEW_3(T, base, k) detail::view3<T>(base, lay, k)

/// Tree ``t``'s state: its row of the arena (four pointers) and its kind.
struct TreeRef {
  double* fa = nullptr;
  i64* ia = nullptr;
  i8* ba = nullptr;
  const i64* lay = nullptr;  // (n_fields, 4): offset, shape
  Kind kind;

#define SF_FIELD_ACCESSOR(k, name, which, T, V, nd)                                   \
  V<T> name() const {                                                                 \
    return SF_VIEW_##nd(T, detail::Row<T>::of(fa, ia, ba), k);                        \
  }
  SF_TREE_FIELDS(SF_FIELD_ACCESSOR)
#undef SF_FIELD_ACCESSOR
};

#undef SF_VIEW_1
#undef SF_VIEW_2
#undef SF_VIEW_3

/// Tree ``t``'s parameters.
struct ParamRef {
  const double* pa = nullptr;

#define SF_PARAM_ACCESSOR(i, name, T) \
  T name() const { return param<T>(i); }
  SF_TREE_PARAMS(SF_PARAM_ACCESSOR)
#undef SF_PARAM_ACCESSOR

 private:
  template <class T>
  T param(int i) const {
    if constexpr (std::is_same_v<T, i64>) {
      return to_i64(pa[i]);
    } else {
      return pa[i];
    }
  }
};

inline ParamRef params_at(const Arena& A, i64 t) { return ParamRef{A.pa.data + t * A.pa.n1}; }

/// ``(state, params)`` of tree ``t`` (its kind read from its parameters, see kind.hpp).
inline TreeRef state_at(const Arena& A, i64 t) {
  TreeRef st;
  st.fa = A.fa.data + t * A.fa.n1;
  st.ia = A.ia.data + t * A.ia.n1;
  st.ba = A.ba.data + t * A.ba.n1;
  st.lay = A.lay.data + t * A.lay.n1 * A.lay.n2;
  st.kind = kind_of(params_at(A, t).pa);
  return st;
}

}  // namespace sf::tree
