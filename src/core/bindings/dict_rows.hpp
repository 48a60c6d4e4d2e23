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
  /// missing).  May run Python code (a key's ``__eq__``): the caller writes into a buffer of
  /// its own and reads nothing it had before from Python until this returns.
  Encoded encode(PyObject* x, bool learn, double* row, Py_ssize_t p) const;

  /// Whether the memo is dict ``x`` (the very same keys and values, in order) written into
  /// ``out``.
  bool holds(PyObject* x, PyObject* out) const;
  /// The memo from now on: dict ``x``, written into ``out`` (its items as they are now).
  void remember(PyObject* x, PyObject* out);
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
};

}  // namespace sf::bind
