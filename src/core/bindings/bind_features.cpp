// The dict path of streamforest/features.py in compiled code: one dict row to the columns of
// the core's matrix, for the rows that need no decision (every key a known feature or, when
// predicting, an ignored one; every numeric value a plain number; every category one with a
// code).  Anything else (a new feature or category, a value of another type, an infinite
// number, an unhashable key) is left to the Python path, which defines every result and error:
// ``encode_dict`` then returns None having changed nothing.
//
// This works on Python objects, so it lives in the binding layer and holds the GIL.
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "bindings/arrays.hpp"

namespace sf::bind {

namespace {

/// ``v`` is missing: None, or a float NaN (pandas' NA goes the Python way: ``kMissingOther``).
enum class Value { kMissing, kNumber, kOther };

/// The float of a numeric value of an exact type in ``fast_types`` (the types whose
/// ``float(v)`` the Python path takes as it is), or kOther.
Value number_of(PyObject* v, PyObject* fast_types, double& out) {
  if (v == Py_None) return Value::kMissing;
  PyTypeObject* tp = Py_TYPE(v);
  if (tp == &PyFloat_Type) {
    out = PyFloat_AS_DOUBLE(v);
  } else if (tp == &PyLong_Type) {
    out = PyLong_AsDouble(v);
    if (out == -1.0 && PyErr_Occurred()) {  // an int beyond the float range
      PyErr_Clear();
      return Value::kOther;
    }
  } else {
    int known = PySet_Contains(fast_types, reinterpret_cast<PyObject*>(tp));
    if (known != 1) {
      if (known < 0) PyErr_Clear();
      return Value::kOther;
    }
    out = PyFloat_AsDouble(v);
    if (out == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return Value::kOther;
    }
  }
  if (std::isnan(out)) return Value::kMissing;
  if (std::isinf(out)) return Value::kOther;  // an error the Python path raises
  return Value::kNumber;
}

/// ``out``'s memory when it is a writeable C-contiguous buffer of ``p`` native float64.
struct Buffer {
  Py_buffer view{};
  bool ok = false;
  Buffer(PyObject* out, Py_ssize_t p) {
    if (PyObject_GetBuffer(out, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      return;
    }
    held = true;
    const char* f = view.format;
    bool native_double = f != nullptr && (f[0] == 'd' || f[0] == '=' || f[0] == '@') &&
                         (f[0] == 'd' ? f[1] == '\0' : (f[1] == 'd' && f[2] == '\0'));
    ok = native_double && view.itemsize == 8 && view.len == p * 8;
  }
  ~Buffer() {
    if (held) PyBuffer_Release(&view);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

 private:
  bool held = false;
};

/// The row of dict ``x`` into ``row`` (``p`` items, NaN already); false: the Python path.
/// ``ignored``: set when a key was ignored (predicting, a feature the model never learnt).
bool encode(PyObject* x, bool learn, PyObject* index, PyObject* nominal, PyObject* categories,
            PyObject* fast_types, Py_ssize_t p, double* row, bool& ignored) {
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (PyDict_Next(x, &pos, &key, &value)) {
    PyObject* col = PyDict_GetItemWithError(index, key);  // borrowed
    if (col == nullptr) {
      if (PyErr_Occurred()) {  // an unhashable key: the Python path says so
        PyErr_Clear();
        return false;
      }
      if (learn) return false;  // a new feature (or a missing value of one)
      ignored = true;           // predicting: a feature the model never learnt
      continue;
    }
    Py_ssize_t j = PyLong_AsSsize_t(col);
    if (j < 0 || j >= p) {
      PyErr_Clear();
      return false;
    }
    PyObject* is_nominal = PyList_GET_ITEM(nominal, j);
    if (is_nominal == Py_True) {
      if (value == Py_None) continue;
      if (PyFloat_Check(value) && std::isnan(PyFloat_AS_DOUBLE(value))) continue;
      PyObject* cats = PyList_GET_ITEM(categories, j);
      if (!PyDict_CheckExact(cats)) return false;
      PyObject* code = PyDict_GetItemWithError(cats, value);  // borrowed
      if (code == nullptr || !PyLong_CheckExact(code)) {
        PyErr_Clear();  // a new category, an unhashable value: the Python path
        return false;
      }
      row[j] = PyLong_AsDouble(code);
    } else if (is_nominal == Py_False) {
      double f = 0.0;
      Value kind = number_of(value, fast_types, f);
      if (kind == Value::kOther) return false;
      if (kind == Value::kNumber) row[j] = f;
    } else {
      return false;
    }
  }
  return true;
}

/// A snapshot of ``x``'s items: a tuple of its keys and a tuple of its values (the very
/// objects, in order; two tuples of ``len(x)`` items come from Python's free lists for the
/// usual widths, where one of twice the length would be a new allocation per row).
PyObject* items_of(PyObject* x) {
  Py_ssize_t n = PyDict_Size(x), pos = 0, i = 0;
  PyObject *key, *value;
  PyObject* keys = PyTuple_New(n);
  PyObject* values = keys == nullptr ? nullptr : PyTuple_New(n);
  if (values == nullptr) {
    Py_XDECREF(keys);
    return nullptr;
  }
  while (PyDict_Next(x, &pos, &key, &value)) {
    Py_INCREF(key);
    PyTuple_SET_ITEM(keys, i, key);
    Py_INCREF(value);
    PyTuple_SET_ITEM(values, i, value);
    ++i;
  }
  PyObject* out = PyTuple_Pack(2, keys, values);
  Py_DECREF(keys);
  Py_DECREF(values);
  return out;
}

}  // namespace

void bind_features(nb::module_& m) {
  m.def(
      "encode_dict",
      [](nb::handle x, bool learn, nb::handle out, nb::handle index, nb::handle nominal,
         nb::handle categories, nb::handle fast_types) -> nb::object {
        PyObject* xp = x.ptr();
        if (!PyDict_CheckExact(xp) || !PyDict_CheckExact(index.ptr()) ||
            !PyList_CheckExact(nominal.ptr()) || !PyList_CheckExact(categories.ptr()) ||
            !PyAnySet_Check(fast_types.ptr()))
          return nb::none();
        Py_ssize_t p = PyDict_Size(index.ptr());
        if (PyList_GET_SIZE(nominal.ptr()) != p || PyList_GET_SIZE(categories.ptr()) != p)
          return nb::none();
        Buffer buf(out.ptr(), p);
        if (!buf.ok) return nb::bool_(false);
        // written apart first: a row left to the Python path leaves ``out`` as it was (a
        // local buffer: a key's __hash__ or __eq__ may run Python code, even this function)
        std::vector<double> scratch(static_cast<size_t>(p),
                                    std::numeric_limits<double>::quiet_NaN());
        bool ignored = false;
        if (!encode(xp, learn, index.ptr(), nominal.ptr(), categories.ptr(), fast_types.ptr(),
                    p, scratch.data(), ignored))
          return nb::none();
        std::copy(scratch.begin(), scratch.end(), static_cast<double*>(buf.view.buf));
        if (ignored) return nb::bool_(true);  // a row no learning call may reuse
        PyObject* snapshot = items_of(xp);
        if (snapshot == nullptr) throw nb::python_error();
        return nb::steal(snapshot);
      },
      nb::arg("x"), nb::arg("learn"), nb::arg("out"), nb::arg("index"), nb::arg("nominal"),
      nb::arg("categories"), nb::arg("fast_types"),
      "Write dict row ``x`` into ``out`` (NaN where missing) and return a snapshot of its "
      "items (True instead when it ignored a key the model never learnt: a learning call "
      "would encode it otherwise); None (``out`` untouched) when the row needs the Python "
      "path; False when ``out`` is not a writeable C-contiguous float64 buffer of "
      "``len(index)`` items.");

  m.def(
      "same_items",
      [](nb::handle x, nb::handle snapshot) {
        PyObject* xp = x.ptr();
        PyObject* t = snapshot.ptr();
        if (!PyDict_CheckExact(xp) || !PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 2)
          return false;
        PyObject* keys = PyTuple_GET_ITEM(t, 0);
        PyObject* values = PyTuple_GET_ITEM(t, 1);
        if (!PyTuple_CheckExact(keys) || !PyTuple_CheckExact(values) ||
            PyDict_Size(xp) != PyTuple_GET_SIZE(keys) ||
            PyTuple_GET_SIZE(values) != PyTuple_GET_SIZE(keys))
          return false;
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *value;
        while (PyDict_Next(xp, &pos, &key, &value)) {
          if (PyTuple_GET_ITEM(keys, i) != key || PyTuple_GET_ITEM(values, i) != value)
            return false;
          ++i;
        }
        return true;
      },
      nb::arg("x"), nb::arg("snapshot"),
      "Whether dict ``x`` holds the very key and value objects of ``snapshot``, in order.");
}

}  // namespace sf::bind
