// The dict path of streamforest/features.py in compiled code (bindings/dict_rows.hpp):
// ``_core.features.DictRows``, a FeatureSpace's encoder of dict rows and the memo of the last
// dict it wrote into a buffer.  The rows it takes are those that need no decision; anything
// else is left to the Python path, which defines every result and error (a call then says so
// and has changed nothing but the memo, forgotten).
#include "bindings/dict_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace sf::bind {

namespace {

/// ``v`` is missing: None, or a float NaN (pandas' NA goes the Python way: ``kOther``).
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
    if (out == Py_None) return;
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

}  // namespace

void SeenItems::move_to(std::vector<PyObject*>& out) {
  size_t local = std::min(n_, kLocal);
  out.insert(out.end(), local_, local_ + local);
  out.insert(out.end(), heap_.begin(), heap_.end());
  heap_.clear();
  n_ = 0;
}

void SeenItems::release_all() {
  // (dropping a reference may run Python code that uses this again: emptied first)
  size_t n = std::min(n_, kLocal);
  std::vector<PyObject*> heap;
  heap.swap(heap_);
  n_ = 0;
  for (size_t i = 0; i < n; ++i) Py_DECREF(local_[i]);
  for (PyObject* o : heap) Py_DECREF(o);
}

DictRows::DictRows(nb::handle index, nb::handle nominal, nb::handle categories,
                   nb::handle fast_types)
    : index_(nb::borrow(index)),
      nominal_(nb::borrow(nominal)),
      categories_(nb::borrow(categories)),
      fast_types_(nb::borrow(fast_types)) {}

Py_ssize_t DictRows::width() const {
  PyObject* index = index_.ptr();
  if (!PyDict_CheckExact(index) || !PyList_CheckExact(nominal_.ptr()) ||
      !PyList_CheckExact(categories_.ptr()) || !PyAnySet_Check(fast_types_.ptr()))
    return -1;
  Py_ssize_t p = PyDict_Size(index);
  if (PyList_GET_SIZE(nominal_.ptr()) != p || PyList_GET_SIZE(categories_.ptr()) != p) return -1;
  return p;
}

Encoded DictRows::encode(PyObject* x, bool learn, double* row, Py_ssize_t p,
                         SeenItems* seen) {
  // (the containers are held here: a key's __eq__ may run Python code that changes them)
  nb::object index = index_, nominal = nominal_, categories = categories_;
  std::fill(row, row + p, std::numeric_limits<double>::quiet_NaN());
  bool ignored = false;
  size_t place = 0;  // the item's place in the dict
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  for (; PyDict_Next(x, &pos, &key, &value); ++place) {
    Py_ssize_t j;
    if (place < keys_.size() && keys_[place].key == key) {
      j = keys_[place].col;  // the very same str as last time here: the same column
    } else {
      PyObject* col = PyDict_GetItemWithError(index.ptr(), key);  // borrowed
      if (col == nullptr) {
        if (PyErr_Occurred()) {  // an unhashable key: the Python path says so
          PyErr_Clear();
          return Encoded::kGeneral;
        }
        if (learn) return Encoded::kGeneral;  // a new feature (or a missing value of one)
        ignored = true;                       // predicting: a feature the model never learnt
        continue;
      }
      j = PyLong_AsSsize_t(col);
      if (j < 0) {
        PyErr_Clear();
        return Encoded::kGeneral;
      }
      if ((PyUnicode_CheckExact(key) || PyLong_CheckExact(key)) && place <= keys_.size() &&
          place < kKeyPlaces) {
        Py_INCREF(key);
        if (place == keys_.size()) {
          keys_.push_back({key, j});
        } else {
          PyObject* old = keys_[place].key;
          keys_[place] = {key, j};
          Py_DECREF(old);  // (a str or an int: no Python code runs)
        }
      }
    }
    if (j >= p || PyList_GET_SIZE(nominal.ptr()) != p || PyList_GET_SIZE(categories.ptr()) != p)
      return Encoded::kGeneral;
    if (seen != nullptr) seen->add(key, value);
    PyObject* is_nominal = PyList_GET_ITEM(nominal.ptr(), j);
    if (is_nominal == Py_True) {
      if (value == Py_None) continue;
      if (PyFloat_Check(value) && std::isnan(PyFloat_AS_DOUBLE(value))) continue;
      PyObject* cats = PyList_GET_ITEM(categories.ptr(), j);
      if (!PyDict_CheckExact(cats)) return Encoded::kGeneral;
      PyObject* code = PyDict_GetItemWithError(cats, value);  // borrowed
      if (code == nullptr || !PyLong_CheckExact(code)) {
        PyErr_Clear();  // a new category, an unhashable value: the Python path
        return Encoded::kGeneral;
      }
      row[j] = PyLong_AsDouble(code);
      if (row[j] == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return Encoded::kGeneral;
      }
    } else if (is_nominal == Py_False) {
      double f = 0.0;
      Value kind = number_of(value, fast_types_.ptr(), f);
      if (kind == Value::kOther) return Encoded::kGeneral;
      if (kind == Value::kNumber) row[j] = f;
    } else {
      return Encoded::kGeneral;
    }
  }
  return ignored ? Encoded::kRowIgnoring : Encoded::kRow;
}

DictRows::~DictRows() {
  forget();
  for (KeyColumn& k : keys_) Py_DECREF(k.key);
}

bool DictRows::holds(PyObject* x, PyObject* out) const {
  if (memo_x_ != x || memo_out_ != out || x == nullptr) return false;
  if (!PyDict_CheckExact(x) || 2 * PyDict_Size(x) != static_cast<Py_ssize_t>(items_.size()))
    return false;
  Py_ssize_t pos = 0;
  size_t i = 0;
  PyObject *key, *value;
  while (PyDict_Next(x, &pos, &key, &value)) {
    if (items_[i] != key || items_[i + 1] != value) return false;
    i += 2;
  }
  return true;
}

void DictRows::remember(PyObject* x, PyObject* out, SeenItems& seen) {
  while (memo_x_ != nullptr || !items_.empty()) forget();  // (none, but for re-entrant calls)
  seen.move_to(items_);
  Py_INCREF(x);
  Py_INCREF(out);
  memo_x_ = x;
  memo_out_ = out;
}

void DictRows::forget() {
  ++stamp_;
  if (memo_x_ == nullptr && items_.empty()) return;
  // the references are dropped once the memo is empty (dropping one may run Python code that
  // calls this again): moved to scratch of their own first, on the stack for the usual widths
  constexpr size_t kLocal = 64;
  PyObject* local[kLocal + 2];
  std::vector<PyObject*> heap;
  size_t n = items_.size();
  PyObject** held = local;
  if (n > kLocal) {
    heap.resize(n + 2);
    held = heap.data();
  }
  std::copy(items_.begin(), items_.end(), held);
  held[n] = memo_x_;
  held[n + 1] = memo_out_;
  items_.clear();  // (raw pointers: keeps its room)
  memo_x_ = memo_out_ = nullptr;
  for (size_t i = 0; i < n + 2; ++i) Py_XDECREF(held[i]);
}

void bind_features(nb::module_& m) {
  nb::class_<DictRows>(m, "DictRows",
                       "A FeatureSpace's compiled dict rows (see streamforest.features).")
      .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle>(), nb::arg("index"),
           nb::arg("nominal"), nb::arg("categories"), nb::arg("fast_types"))
      .def(
          "encode_into",
          [](DictRows& d, nb::handle x, bool learn, nb::handle out) -> nb::object {
            PyObject* xp = x.ptr();
            if (PyDict_CheckExact(xp) && d.holds(xp, out.ptr())) return nb::borrow(out);
            d.forget();
            Py_ssize_t p = d.width();
            if (!PyDict_CheckExact(xp) || p < 0) return nb::none();
            RowScratch row(p);
            SeenItems seen;
            Encoded r = d.encode(xp, learn, row.data(), p, &seen);
            if (r == Encoded::kGeneral) return nb::none();
            if (r != Encoded::kRow) seen.release();  // (before the buffer is looked at)
            Buffer buf(out.ptr(), d.width() == p ? p : -1);  // (the encoding may run Python)
            if (!buf.ok) return nb::bool_(false);
            std::copy(row.data(), row.data() + p, static_cast<double*>(buf.view.buf));
            if (r == Encoded::kRow) d.remember(xp, out.ptr(), seen);
            return nb::borrow(out);
          },
          nb::arg("x"), nb::arg("learn"), nb::arg("out").none(),
          "Dict ``x``'s row written into ``out`` (returned; the memo of that from now on, "
          "unless a key was ignored), or ``out`` as it is when it holds the memo's dict "
          "unchanged; None (``out`` untouched) when the row needs the Python path; False "
          "(``out`` untouched) when ``out`` is not a writeable C-contiguous float64 buffer of "
          "``width`` items (``encode_row`` into another).")
      .def(
          "encode_row",
          [](DictRows& d, nb::handle x, bool learn, nb::handle out) {
            d.forget();
            Py_ssize_t p = d.width();
            if (!PyDict_CheckExact(x.ptr()) || p < 0) return false;
            RowScratch row(p);
            if (d.encode(x.ptr(), learn, row.data(), p) == Encoded::kGeneral) return false;
            Buffer buf(out.ptr(), d.width() == p ? p : -1);
            if (!buf.ok) return false;
            std::copy(row.data(), row.data() + p, static_cast<double*>(buf.view.buf));
            return true;
          },
          nb::arg("x"), nb::arg("learn"), nb::arg("out"),
          "``encode_into`` without a memo (forgotten): whether the row was written.")
      .def("forget", &DictRows::forget, "No memo from now on (the buffer is written elsewhere).")
      .def_prop_ro("stamp", &DictRows::stamp, "Changes whenever the memo does.")
      .def_prop_ro("width", &DictRows::width)
      .def(
          "hint_for",
          [](const DictRows& d, nb::handle row) -> nb::object {
            if (d.memo_out() == nullptr || d.memo_out() != row.ptr()) return nb::none();
            return nb::int_(d.stamp());
          },
          nb::arg("row"),
          "The memo's stamp when its dict is the one written into ``row``, else None.")
      .def_prop_ro(
          "memo",
          [](const DictRows& d) {
            PyObject* x = d.memo_x();
            PyObject* out = d.memo_out();
            return nb::make_tuple(x ? nb::borrow(x) : nb::none(),
                                  out ? nb::borrow(out) : nb::none());
          },
          "``(dict, buffer)`` of the memo, ``(None, None)`` without one.");
}

}  // namespace sf::bind
