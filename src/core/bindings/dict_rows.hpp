// The dict rows of a FeatureSpace (streamforest/features.py) in compiled code: ``DictRows``
// encodes a dict row into the columns of the core's matrix when it needs no decision (every key
// a known feature or, when predicting, an ignored one; every numeric value a plain number;
// every category one with a code), and keeps the memo of the last dict it wrote into a buffer
// (that dict and its very key and value objects), so that the same unchanged dict again
// (``predict_one(x)`` then ``learn_one(x, y)``) is not converted again.  Anything else (a new
// feature or category, a value of another type, an infinite number, an unhashable key) is left
// to the Python path, which defines every result and error.
//
// It works on Python objects, so it lives in the binding layer and holds the GIL.  The feature
// space's ``index``, ``nominal`` and ``categories`` are read live (Python adds to them in
// place).  ``stamp`` changes whenever the memo does (a new dict written, or forgotten): an
// engine's hint that its leaf memo describes the buffer's dict is the stamp of the memo it was
// made with (streamforest/engine/per_example.py).
#pragma once

#include <Python.h>

#include <vector>

#include "bindings/arrays.hpp"

namespace sf::bind {

/// What encoding one dict gave.
enum class Encoded {
  kRow,           // the row, every key a known feature
  kRowIgnoring,   // the row, ignoring keys the model never learnt (predicting): no memo
  kGeneral,       // the Python path decides (the row's contents are unspecified)
};

/// The items of a dict as an encoding met them, in order, references owned (keys and values
/// alternately): what ``DictRows::remember`` keeps as the memo, so that the memo is exactly
/// what was encoded, whatever Python code a key's ``__eq__`` ran meanwhile.  Dropping the
/// references (``release``, or the destructor of items not taken over) may run Python code.
class SeenItems {
 public:
  SeenItems() = default;
  ~SeenItems() { release(); }
  SeenItems(const SeenItems&) = delete;
  SeenItems& operator=(const SeenItems&) = delete;

  void add(PyObject* key, PyObject* value) {
    Py_INCREF(key);
    Py_INCREF(value);
    if (n_ + 2 <= kLocal) {
      local_[n_] = key;
      local_[n_ + 1] = value;
    } else {
      heap_.push_back(key);
      heap_.push_back(value);
    }
    n_ += 2;
  }
  /// The references dropped (none held from now on).
  void release() {
    if (n_ > 0) release_all();
  }
  /// The references moved to the end of ``out`` (none held here from now on).
  void move_to(std::vector<PyObject*>& out);

 private:
  void release_all();

  static constexpr size_t kLocal = 2 * 64;  // objects kept on the stack (64 items)
  PyObject* local_[kLocal];
  std::vector<PyObject*> heap_;  // the objects past kLocal
  size_t n_ = 0;                 // objects held
};

class DictRows {
 public:
  DictRows(nb::handle index, nb::handle nominal, nb::handle categories, nb::handle fast_types);
  ~DictRows();
  DictRows(const DictRows&) = delete;
  DictRows& operator=(const DictRows&) = delete;

  /// Columns of the feature space (``len(index)``), or -1 when its lists disagree or are not
  /// the plain containers the encoder reads (then the Python path decides).
  Py_ssize_t width() const;

  /// The row of dict ``x`` (an exact dict) into ``row`` (``p = width()`` items, NaN where
  /// missing); ``seen`` (if given) gets the items met.  May run Python code (a key's
  /// ``__eq__``): the caller writes into a buffer of its own and reads nothing it had before
  /// from Python until this returns.  A ``str`` or ``int`` key met before at the same place
  /// of a dict (the very same object) is not looked up again: its column is kept (a
  /// feature's column never changes, the index only grows).
  Encoded encode(PyObject* x, bool learn, double* row, Py_ssize_t p, SeenItems* seen = nullptr);

  /// Whether the memo is dict ``x`` (the very same keys and values, in order) written into
  /// ``out``.
  bool holds(PyObject* x, PyObject* out) const;
  /// The memo from now on: dict ``x`` with the items its encoding met (``seen``, taken over),
  /// written into ``out``.  Called with no memo (``forget`` before the encoding).
  void remember(PyObject* x, PyObject* out, SeenItems& seen);
  /// No memo from now on.
  void forget();

  u64 stamp() const { return stamp_; }
  PyObject* memo_x() const { return memo_x_; }
  PyObject* memo_out() const { return memo_out_; }

 private:
  nb::object index_, nominal_, categories_, fast_types_;
  // the memo (null: none), references owned; the keys and values alternately, their vector's
  // room kept from one memo to the next
  PyObject* memo_x_ = nullptr;
  PyObject* memo_out_ = nullptr;
  std::vector<PyObject*> items_;
  u64 stamp_ = 0;
  // the column of the key met at each place of a dict (the first places, up to kKeyPlaces,
  // as long as each is a ``str`` or ``int`` key of a feature; references owned: dropping one
  // runs no Python code)
  static constexpr size_t kKeyPlaces = 256;
  struct KeyColumn {
    PyObject* key;
    Py_ssize_t col;
  };
  std::vector<KeyColumn> keys_;
};

/// ``p`` doubles of scratch for one row: the encoder may run Python code (a key's ``__eq__``)
/// that calls the binding again, so no scratch is shared between calls; on the stack for the
/// usual widths.
class RowScratch {
 public:
  RowScratch() = default;
  explicit RowScratch(Py_ssize_t p) { size(p); }
  RowScratch(const RowScratch&) = delete;
  RowScratch& operator=(const RowScratch&) = delete;
  void size(Py_ssize_t p) {
    if (p > kLocal) heap_.resize(static_cast<size_t>(p));
    data_ = p > kLocal ? heap_.data() : local_;
  }
  double* data() { return data_; }

 private:
  static constexpr Py_ssize_t kLocal = 64;
  double local_[kLocal];
  std::vector<double> heap_;
  double* data_ = local_;
};

}  // namespace sf::bind
