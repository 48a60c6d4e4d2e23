// A forest's arena from Python (streamforest/tree_kinds/arena.py's ``Arena``, a named tuple
// of five arrays) as the core's ``tree::Arena``, every array's type and shape checked.
#pragma once

#include <string>

#include "bindings/arrays.hpp"
#include "tree/state.hpp"
#include "tree/tree_ref.hpp"

namespace sf::bind {

namespace detail {

template <class T>
struct BufferFormat;
template <>
struct BufferFormat<double> {
  static bool is(const char* f) { return f[0] == 'd' && f[1] == 0; }
};
template <>
struct BufferFormat<i64> {
  static bool is(const char* f) { return (f[0] == 'l' || f[0] == 'q') && f[1] == 0; }
};
template <>
struct BufferFormat<i8> {
  static bool is(const char* f) { return f[0] == 'b' && f[1] == 0; }
};

/// Data and shape of an array argument of item type ``T`` and ``nd`` dimensions, C-contiguous
/// (and writeable when ``writable``), read through the buffer protocol: a few times cheaper
/// than a general ndarray conversion, which the per-example calls pay per array.  The buffer is
/// released at once: as with an ndarray argument, the caller keeps the array alive for the call.
template <class T>
inline T* buffer_of(nb::handle obj, int nd, bool writable, i64* shape, const char* name) {
  Py_buffer view;
  int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) {
    PyErr_Clear();
    throw nb::type_error((std::string(name) + ": expected a C-contiguous" +
                          (writable ? " writeable" : "") + " array").c_str());
  }
  bool ok = view.itemsize == static_cast<Py_ssize_t>(sizeof(T)) && view.format != nullptr &&
            BufferFormat<T>::is(view.format) && view.ndim == nd;
  T* data = static_cast<T*>(view.buf);
  for (int d = 0; ok && d < nd; ++d) shape[d] = static_cast<i64>(view.shape[d]);
  PyBuffer_Release(&view);
  if (!ok)
    throw nb::type_error((std::string(name) + ": expected a " + std::to_string(nd) +
                          "-d array of the arena's item type").c_str());
  return data;
}

template <class T>
inline Mat<T> buffer_mat(nb::handle obj, bool writable, const char* name) {
  i64 sh[2];
  T* p = buffer_of<T>(obj, 2, writable, sh, name);
  return Mat<T>(p, sh[0], sh[1]);
}

}  // namespace detail

/// The arena ``A`` (a tuple ``(fa, ia, ba, lay, pa)``); raises TypeError / ValueError unless
/// its arrays are the arena's types, C-contiguous (``fa``, ``ia``, ``ba`` writeable), with one
/// row per tree and the layout of this core's fields and parameters.
inline tree::Arena arena_of(nb::handle A) {
  if (!PyTuple_Check(A.ptr()) || PyTuple_GET_SIZE(A.ptr()) != 5)
    throw nb::type_error("expected a tree arena (fa, ia, ba, lay, pa)");
  auto item = [&](Py_ssize_t k) { return nb::handle(PyTuple_GET_ITEM(A.ptr(), k)); };
  i64 sh[3];
  i64* lay = detail::buffer_of<i64>(item(3), 3, false, sh, "arena lay");
  tree::Arena out{detail::buffer_mat<double>(item(0), true, "arena fa"),
                  detail::buffer_mat<i64>(item(1), true, "arena ia"),
                  detail::buffer_mat<i8>(item(2), true, "arena ba"),
                  Cube<i64>(lay, sh[0], sh[1], sh[2]),
                  detail::buffer_mat<double>(item(4), false, "arena pa")};
  i64 T = out.lay.n0;
  if (out.fa.n0 != T || out.ia.n0 != T || out.ba.n0 != T || out.pa.n0 != T)
    throw nb::value_error("malformed tree arena (a row per tree in every array)");
  if (out.lay.n1 != SF_TREE_N_FIELDS || out.lay.n2 != 4 || out.pa.n1 != SF_TREE_N_PARAMS)
    throw nb::value_error("tree arena of another layout than this core's fields and parameters");
  return out;
}

/// Check that ``t`` names a tree of ``A``.
inline void need_tree(const tree::Arena& A, i64 t) {
  if (t < 0 || t >= A.n_trees()) throw nb::index_error("tree index outside the arena");
}

/// Tree ``t`` of ``A`` as the passes take it: it exists (its ``ints`` hold N_INTS items), its
/// kind is one this core runs (tree::runs), and rows of ``row_width`` columns hold its
/// features (``row_width < 0``: no rows).  Raises ValueError otherwise.
inline tree::TreeRef runnable_tree(const tree::Arena& A, i64 t, i64 row_width) {
  need_tree(A, t);
  const i64* lay = A.lay.data + t * A.lay.n1 * A.lay.n2;
  if (lay[1] < tree::N_INTS || lay[0] < 0 || lay[0] + lay[1] > A.ia.n1)
    throw nb::value_error(("tree " + std::to_string(t) + " of the arena does not exist").c_str());
  tree::TreeRef st = tree::state_at(A, t);
  if (!tree::runs(st.kind))
    throw nb::value_error(("tree " + std::to_string(t) +
                           ": a tree kind the compiled core does not run (yet)").c_str());
  if (row_width >= 0 && row_width < st.ints()[tree::I_NFEAT])
    throw nb::value_error(("rows of " + std::to_string(row_width) + " columns for tree " +
                           std::to_string(t) + " of " + std::to_string(st.ints()[tree::I_NFEAT]) +
                           " features").c_str());
  return st;
}

/// ``runnable_tree`` for every tree of ``A``.
inline void runnable_trees(const tree::Arena& A, i64 row_width) {
  for (i64 t = 0; t < A.n_trees(); ++t) runnable_tree(A, t, row_width);
}

}  // namespace sf::bind
