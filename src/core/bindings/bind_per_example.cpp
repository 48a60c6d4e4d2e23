// The per-example path of a forest engine in one call (streamforest/engine/per_example.py):
// ``_core.per_example.OneExample``, an engine's object that takes a dict row, encodes it into
// the engine's row buffer (its feature space's DictRows, bindings/dict_rows.hpp) and runs the
// per-example kernel, for a regression forest's ``predict_one`` / ``learn_one`` and the
// per-example intervals of CPApproximate and OnlineQRF.
//
// Whenever anything needs a decision, a call changes nothing the model's state depends on
// and says so (None or False): the Python path then does the whole call.  That is a row that
// is not a plain dict of known features and plain values (a new feature or category: the
// Python path records it), a target or weight other than a float, trees out of step with the
// feature space, and every kernel status but DONE without background trees (a tree out of
// room, a drift signal: the call returns the status and the Python path goes on from there).
// The memo of the dict in the row buffer and the engine's hint that its leaf memo describes it
// (``_hint``: the memo's stamp) follow the rules of the Python path exactly.
//
// The engine is held weakly (it holds this object); its arrays are read from its ``__dict__``
// and their views kept while they are the same objects: an arena is never changed in its
// layout or parameters without a new arena tuple (streamforest/tree_kinds/arena.py's
// ``store``), so the checks of its trees run when the arena or the row buffer is replaced, not
// per call; what a kernel itself changes (a calibration ring) is checked per call.  The views'
// arrays are held through each call and the GIL is released for a forest's kernel (ReleaseGil).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "bindings/arena.hpp"
#include "bindings/dict_rows.hpp"
#include "engine/handle.hpp"
#include "engine/passes.hpp"
#include "intervals/conformal.hpp"
#include "intervals/quantile.hpp"
#include "sketch/kll.hpp"
#include "tree/state.hpp"

namespace sf::bind {

namespace detail {
template <>
struct BufferFormat<u64> {  // (the generator's state)
  static bool is(const char* f) { return (f[0] == 'L' || f[0] == 'Q') && f[1] == 0; }
};
}  // namespace detail

namespace {

namespace iv = sf::intervals;

/// Interned attribute names (made once, kept).
struct Names {
  PyObject *arena, *row_buffer, *hint, *bg_live, *synced_version, *version, *fitted, *shard,
      *rng, *wt, *P, *drifted, *M, *M0, *bagging, *aggregation, *engine, *own;
};

PyObject* interned(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);
  if (o == nullptr) throw nb::python_error();
  return o;
}

const Names& names() {
  static const Names n{interned("arena"),          interned("row_buffer"),
                       interned("_hint"),          interned("_bg_live"),
                       interned("synced_version"), interned("version"),
                       interned("fitted"),         interned("shard"),
                       interned("rng"),            interned("_wt"),
                       interned("last_predictions"), interned("_drifted"),
                       interned("leaf_memo"),      interned("_no_memo"),
                       interned("bagging"),        interned("aggregation"),
                       interned("engine_"),        interned("_h")};
  return n;
}

/// ``d[key]`` (borrowed; null when absent, no error set).
PyObject* item(PyObject* d, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(d, key);
  if (v == nullptr) PyErr_Clear();
  return v;
}

template <class T>
Vec<T> buffer_vec(PyObject* a, bool writable, const char* name) {
  i64 n;
  T* p = detail::buffer_of<T>(nb::handle(a), 1, writable, &n, name);
  return Vec<T>(p, n);
}

template <class T>
Mat<T> buffer_mat2(PyObject* a, bool writable, const char* name) {
  i64 sh[2];
  T* p = detail::buffer_of<T>(nb::handle(a), 2, writable, sh, name);
  return Mat<T>(p, sh[0], sh[1]);
}

/// The object ``weak`` refers to (a new reference), or null when it is gone.
PyObject* referent(PyObject* weak) {
#if PY_VERSION_HEX >= 0x030D0000
  PyObject* o = nullptr;
  if (PyWeakref_GetRef(weak, &o) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  return o;
#else
  PyObject* o = PyWeakref_GetObject(weak);  // borrowed
  if (o == nullptr) PyErr_Clear();
  if (o == nullptr || o == Py_None) return nullptr;
  Py_INCREF(o);
  return o;
#endif
}

/// A float target (finite) and weight (``0 <= w < inf``), the common case of the Python
/// checks; anything else goes the Python way.
bool plain_example(PyObject* y, PyObject* w, double& yf, double& wf) {
  if (!PyFloat_CheckExact(y) || !PyFloat_CheckExact(w)) return false;
  yf = PyFloat_AS_DOUBLE(y);
  wf = PyFloat_AS_DOUBLE(w);
  return std::isfinite(yf) && wf >= 0.0 && wf < std::numeric_limits<double>::infinity();
}

/// The GIL released for a kernel over a forest's trees (``n_trees > 1``), not for a single
/// tree's: one tree's per-example step takes a few hundred nanoseconds, about what releasing
/// the GIL and taking it back costs (other threads gain nothing from it).
class ReleaseGil {
 public:
  explicit ReleaseGil(i64 n_trees) : state_(n_trees > 1 ? PyEval_SaveThread() : nullptr) {}
  ~ReleaseGil() {
    if (state_ != nullptr) PyEval_RestoreThread(state_);
  }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

/// The engine's arrays a per-example kernel takes.
struct Views {
  tree::Arena A;
  Vec<double> x;
  Vec<u64> rng;
  Vec<double> wt, P;
  Vec<i8> drifted;
  Mat<double> M, M0;
};

/// The arrays of OnlineQRF's level (its quantile levels or mass, their outputs).
struct Levels {
  Vec<double> qs, masses, out_q, out_lo, out_hi;
};

class OneExample {
 public:
  OneExample(nb::handle engine, nb::handle features, nb::handle encoder) {
    PyObject* w = PyWeakref_NewRef(engine.ptr(), nullptr);
    if (w == nullptr) throw nb::python_error();
    weak_ = nb::steal(w);
    PyObject* fd = PyObject_GenericGetDict(features.ptr(), nullptr);
    if (fd == nullptr) throw nb::python_error();
    fs_dict_ = nb::steal(fd);
    enc_ = nb::inst_ptr<DictRows>(encoder);
    if (!nb::isinstance<DictRows>(encoder)) throw nb::type_error("encoder: a DictRows");
    enc_obj_ = nb::borrow(encoder);
  }

  /// ``predict_one``: the forest's prediction, or None (the Python path).
  nb::object predict(nb::handle owner, nb::handle x) {
    Call c;
    if (!begin(c, owner.ptr()) || !prepare(c, x.ptr(), false)) return nb::none();
    Held h(*this);
    const Views v = v_;
    double y;
    {
      ReleaseGil release(v.A.n_trees());
      y = engine::predict_one(v.A, cx(v), agg_, v.P, v.M);
    }
    set_hint(c, c.keeps);
    return nb::float_(y);
  }

  /// ``learn_one``: None when learnt; False: the Python path (nothing learnt); else
  /// ``(status, memo)`` for the Python path to go on from (``_learn_loop``).
  nb::object learn(nb::handle owner, nb::handle x, nb::handle y, nb::handle w) {
    double yf, wf;
    Call c;
    if (!plain_example(y.ptr(), w.ptr(), yf, wf) || !begin(c, owner.ptr()) || !synced(c) ||
        !prepare(c, x.ptr(), true))
      return nb::bool_(false);
    bool memo = take_hint(c);
    bool bg = item(c.d, names().bg_live) == Py_True;
    Held h(*this);
    const Views v = v_;
    const double lam = lam_;
    i64 status;
    {
      ReleaseGil release(v.A.n_trees());
      status = engine::learn_one(v.A, v.rng[0], lam, cx(v), yf, wf, v.wt, v.P, v.drifted,
                                 engine::FRESH, memo ? v.M : v.M0);
    }
    if (status == engine::DONE && !bg) return nb::none();
    return nb::make_tuple(status, memo);
  }

  /// CPApproximate's ``predict_interval_one`` at one level: ``(lower, upper)`` or None.
  nb::object cp_interval(nb::handle owner, nb::handle x, double alpha, nb::handle C, i64 size) {
    Call c;
    if (!(alpha > 0.0 && alpha < 1.0) || !begin(c, owner.ptr()) || !prepare(c, x.ptr(), false) ||
        !calibration(C, false) || size < 0 || size > C_.ss.size())
      return nb::none();
    Held h(*this);
    const Views v = v_;
    const Vec<const double> ss(C_.ss.data, C_.ss.n);
    const i64 agg = agg_;
    iv::Interval r;
    {
      ReleaseGil release(v.A.n_trees());
      r = iv::cp_interval_one(v.A, cx(v), agg, v.P, v.M, ss, size, alpha);
    }
    set_hint(c, c.keeps);
    return nb::make_tuple(r.lo, r.hi);
  }

  /// CPApproximate's ``learn_one``: the calibration set's new size when learnt; False: the
  /// Python path; else ``(status, memo, size)`` to go on from.
  nb::object cp_learn(nb::handle owner, nb::handle x, nb::handle y, nb::handle w, nb::handle C,
                      i64 size) {
    double yf, wf;
    Call c;
    if (!plain_example(y.ptr(), w.ptr(), yf, wf) || !begin(c, owner.ptr()) || !synced(c) ||
        !prepare(c, x.ptr(), true) || !calibration(C, true) || !calibration_now(size))
      return nb::bool_(false);
    bool memo = take_hint(c);
    bool bg = item(c.d, names().bg_live) == Py_True;
    Held h(*this);
    const Views v = v_;
    const iv::Calibration cal = C_;
    const double lam = lam_;
    iv::LearnResult r;
    {
      ReleaseGil release(v.A.n_trees());
      r = iv::cp_learn_one(v.A, v.rng[0], lam, cx(v), yf, wf, v.wt, v.P, v.drifted,
                           engine::FRESH, memo ? v.M : v.M0, cal, size);
    }
    if (r.status == engine::DONE && !bg) return nb::int_(r.size);
    return nb::make_tuple(r.status, memo, r.size);
  }

  /// OnlineQRF's ``predict_interval_one`` at one level: ``(lower, upper)`` or None; ``Q`` the
  /// handle of the query's scratch arrays, ``L`` of the level's arrays.
  nb::object qrf_interval(nb::handle owner, nb::handle x, nb::handle Q, nb::handle L,
                          bool meinshausen) {
    Call c;
    if (!begin(c, owner.ptr()) || !prepare(c, x.ptr(), false) || !sketches_ || !query(Q, L))
      return nb::none();
    Held h(*this);
    const Views v = v_;
    const iv::QueryScratch q = Q_;
    const Levels l = L_;
    std::pair<double, double> r;
    {
      ReleaseGil release(v.A.n_trees());
      r = iv::interval_one(v.A, cx(v), meinshausen, Vec<const double>(l.qs.data, l.qs.n),
                           Vec<const double>(l.masses.data, l.masses.n), l.out_q, l.out_lo,
                           l.out_hi, q);
    }
    return nb::make_tuple(r.first, r.second);
  }

  /// The Python path's use of this object's own hint (the engine's ``_hint`` is this object).
  bool take_own_hint() {
    bool memo = hint_live_ && hint_stamp_ == enc_->stamp();
    hint_live_ = false;
    return memo;
  }

  /// Whether the engine's arrays are ones this object takes, for ``owner``'s engine (tests).
  bool ready_now(nb::handle owner) {
    Call c;
    return begin(c, owner.ptr()) && ready(c.d);
  }

  static PyTypeObject* type_;  // (set when the class is bound)

 private:
  /// One call: the engine (held) and its ``__dict__``; ``keeps``: the dict written stays
  /// the memo (its hint may be set).
  struct Call {
    nb::object engine, dict;
    PyObject* d = nullptr;
    PyObject* self = nullptr;  // this object (borrowed from the engine's ``_h``)
    bool keeps = false;
  };

  /// The views' arrays, held through a call (another thread may replace them meanwhile).
  struct Held {
    nb::object a, r, p, m, m0, wt, dr, rng;
    explicit Held(const OneExample& o)
        : a(o.arena_), r(o.row_), p(o.P_), m(o.M_), m0(o.M0_), wt(o.wt_), dr(o.drifted_),
          rng(o.rng_) {}
  };

  static Vec<const double> cx(const Views& v) { return Vec<const double>(v.x.data, v.x.n); }

  /// The engine, alive, ``owner``'s (its ``engine_``) and with this object as its own (its
  /// ``_h``: a model keeps the object of its engine; an engine's scratch arrays, which the
  /// views name, are only replaced with its object).
  bool begin(Call& c, PyObject* owner) {
    PyObject* e = referent(weak_.ptr());
    if (e == nullptr) return false;
    c.engine = nb::steal(e);
    PyObject* od = PyObject_GenericGetDict(owner, nullptr);
    if (od == nullptr) {
      PyErr_Clear();
      return false;
    }
    bool owned = item(od, names().engine) == e;
    Py_DECREF(od);
    PyObject* d = PyObject_GenericGetDict(e, nullptr);
    if (d == nullptr) {
      PyErr_Clear();
      return false;
    }
    c.dict = nb::steal(d);
    c.d = d;
    PyObject* own = item(d, names().own);
    c.self = own;
    return owned && own != nullptr && Py_TYPE(own) == type_ &&
           nb::inst_ptr<OneExample>(own) == this;
  }

  /// The trees match the feature space (else the Python path syncs them).
  bool synced(Call& c) {
    PyObject* a = item(fs_dict_.ptr(), names().version);
    PyObject* b = item(c.d, names().synced_version);
    if (a == nullptr || b == nullptr || !PyLong_CheckExact(a) || !PyLong_CheckExact(b))
      return false;
    if (a == b) return true;
    int same = PyObject_RichCompareBool(a, b, Py_EQ);
    if (same < 0) PyErr_Clear();
    return same == 1;
  }

  /// Dict ``x``'s row in the row buffer (encoded, or the memo's), the views ready for it.
  bool prepare(Call& c, PyObject* x, bool learn) {
    if (!PyDict_CheckExact(x)) return false;
    PyObject* row = item(c.d, names().row_buffer);
    bool hit = row != nullptr && enc_->holds(x, row);
    Encoded r = Encoded::kRow;
    Py_ssize_t p = 0;
    RowScratch scratch;
    SeenItems seen;
    if (!hit) {
      enc_->forget();  // (as the Python path: the buffer is about to be written)
      p = enc_->width();
      if (p < 0) return false;
      scratch.size(p);
      r = enc_->encode(x, learn, scratch.data(), p, &seen);
      if (r == Encoded::kGeneral) return false;
      if (r != Encoded::kRow) seen.release();  // (no memo; before the engine is looked at)
    }
    if (!ready(c.d) || !regression_ || shard_) return false;  // (after any Python code)
    if (!hit) {
      if (p != v_.x.size() || enc_->width() != p) return false;
      std::copy(scratch.data(), scratch.data() + p, v_.x.data);
      if (r == Encoded::kRow) enc_->remember(x, row_.ptr(), seen);
    }
    c.keeps = r == Encoded::kRow;
    return true;
  }

  /// The hint after a prediction: the trees' leaves of the row are in the memo (``keeps``:
  /// the row stays the encoder's memo), else none.  This object's own hint is this object in
  /// ``_hint`` and the stamp kept here (no write while it stays there); the Python path's is
  /// the stamp itself (``remember``).
  void set_hint(Call& c, bool keeps) {
    hint_live_ = keeps;
    hint_stamp_ = enc_->stamp();
    PyObject* want = keeps ? c.self : Py_None;
    if (item(c.d, names().hint) != want && PyDict_SetItem(c.d, names().hint, want) != 0)
      throw nb::python_error();
  }

  /// Whether the hint says the memo holds the trees' leaves of the row buffer's dict; it is
  /// used up (the hint stays this object, no longer live; a stamp of the Python path's is
  /// dropped).  Anything in between that changes the trees drops ``_hint`` (None); anything
  /// that changes the buffer changes the stamp.
  bool take_hint(Call& c) {
    PyObject* h = item(c.d, names().hint);
    if (h == c.self) {
      bool memo = hint_live_ && hint_stamp_ == enc_->stamp();
      hint_live_ = false;
      return memo;
    }
    if (h == nullptr || h == Py_None) return false;
    bool memo = false;
    if (PyLong_CheckExact(h)) {
      unsigned long long s = PyLong_AsUnsignedLongLong(h);
      if (s == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
      } else {
        memo = s == enc_->stamp();
      }
    }
    if (PyDict_SetItem(c.d, names().hint, Py_None) != 0) throw nb::python_error();
    return memo;
  }

  /// The views of the engine's arrays, made again when the arena or the row buffer is not the
  /// one they were made from; false when the engine is not one this path runs.
  bool ready(PyObject* d) {
    PyObject* a = item(d, names().arena);
    PyObject* r = item(d, names().row_buffer);
    if (a == nullptr || r == nullptr) return false;
    if (a == arena_.ptr() && r == row_.ptr()) return ok_;
    ok_ = false;
    ++gen_;
    arena_ = nb::borrow(a);
    row_ = nb::borrow(r);
    try {
      ok_ = make_views(d);
    } catch (const nb::python_error&) {
      PyErr_Clear();
    } catch (const std::exception&) {  // (a check's error: the Python path raises it)
    }
    if (!ok_) arena_ = row_ = nb::object();  // (made again next time)
    return ok_;
  }

  bool make_views(PyObject* d) {
    const Names& n = names();
    if (item(d, n.fitted) != Py_True) return false;
    PyObject* shard = item(d, n.shard);
    shard_ = shard != nullptr && shard != Py_None;
    PyObject* arrays[] = {item(d, n.rng), item(d, n.wt),  item(d, n.P), item(d, n.drifted),
                          item(d, n.M),   item(d, n.M0), item(d, n.bagging),
                          item(d, n.aggregation)};
    for (PyObject* o : arrays)
      if (o == nullptr) return false;
    if (!PyFloat_CheckExact(arrays[6]) || !PyLong_CheckExact(arrays[7])) return false;
    lam_ = PyFloat_AS_DOUBLE(arrays[6]);
    agg_ = PyLong_AsLongLong(arrays[7]);
    if (agg_ == -1 && PyErr_Occurred()) return false;
    v_.A = arena_of(arena_);
    v_.x = buffer_vec<double>(row_.ptr(), true, "row_buffer");
    v_.rng = buffer_vec<u64>(arrays[0], true, "rng");
    v_.wt = buffer_vec<double>(arrays[1], true, "_wt");
    v_.P = buffer_vec<double>(arrays[2], true, "last_predictions");
    v_.drifted = buffer_vec<i8>(arrays[3], true, "_drifted");
    v_.M = buffer_mat2<double>(arrays[4], true, "leaf_memo");
    v_.M0 = buffer_mat2<double>(arrays[5], true, "_no_memo");
    rng_ = nb::borrow(arrays[0]);
    wt_ = nb::borrow(arrays[1]);
    P_ = nb::borrow(arrays[2]);
    drifted_ = nb::borrow(arrays[3]);
    M_ = nb::borrow(arrays[4]);
    M0_ = nb::borrow(arrays[5]);
    const i64 T = v_.A.n_trees();
    if (T == 0 || v_.rng.size() < 1 || v_.wt.size() < T || v_.P.size() < T ||
        v_.drifted.size() < T || v_.M.rows() < 4 || v_.M.cols() < T ||
        (v_.M0.cols() > 0 && v_.M0.rows() < 4))
      return false;
    regression_ = true;
    sketches_ = true;
    items_ = 0;
    for (i64 t = 0; t < T; ++t) {
      tree::TreeRef st = runnable_tree(v_.A, t, v_.x.size());
      if (st.kind.classification) regression_ = false;
      Mat<i64> lv = st.lf_sketch_levels();
      if (st.kind.classification || !st.kind.has.sketch || lv.cols() != sketch::LV_WIDTH ||
          lv.rows() != st.lf_sketch().rows() || lv.rows() < st.lf_node().size())
        sketches_ = false;
      else
        items_ += st.lf_sketch().cols();
    }
    return true;
  }

  /// CPApproximate's calibration handle ``C`` (its views kept while it is the same object and
  /// the views of the engine the same): shaped for the ring's capacity, the trees and (to
  /// learn) the row's width.
  bool calibration(nb::handle C, bool learn) {
    if (C.ptr() != C_obj_.ptr() || C_gen_ != gen_) {
      C_obj_ = nb::object();
      try {
        i64 n;
        const i64* p = detail::buffer_of<i64>(C, 1, false, &n, "C");
        if (n != iv::C_SIZE) return false;
        C_ = iv::calibration_views(Vec<const i64>(p, n));
      } catch (const std::exception&) {
        return false;
      }
      C_obj_ = nb::borrow(C);
      C_gen_ = gen_;
      C_cap_ = -1;
    }
    if (!learn) return true;
    if (C_.ring.size() < 2) return false;
    const i64 c = C_.ring[1];
    if (c != C_cap_) {  // the shapes, for this capacity
      const i64 T = v_.A.n_trees();
      C_cap_ = -1;
      if (c < 1 || C_.cy.size() < c || C_.coob.rows() < c || C_.coob.cols() < T ||
          C_.cpred.rows() < c || C_.cpred.cols() < T || C_.csum.size() < c ||
          C_.ccnt.size() < c || C_.score.size() < c || C_.order.size() < c ||
          C_.pos.size() < c || C_.ss.size() < c || C_.cx.rows() < c)
        return false;
      C_cap_ = c;
    }
    return C_.cx.cols() >= v_.x.size();
  }

  /// What the learning kernel reads of the calibration set's current state: its size, the
  /// ring's head and the rank of the slot a row enters next (need_calibration's checks).
  bool calibration_now(i64 size) const {
    const i64 c = C_cap_;
    if (size < 0 || size > c) return false;
    const i64 head = C_.ring[0];
    if (head < 0 || head >= c) return false;
    const i64 p = C_.pos[head];
    return p >= -1 && p < size && (p >= 0 || size < c);
  }

  /// OnlineQRF's query scratch ``Q`` and level arrays ``L`` (kept while the same objects and
  /// views), sized for the trees' leaf sketches.
  bool query(nb::handle Q, nb::handle L) {
    if (Q.ptr() == Q_obj_.ptr() && L.ptr() == L_obj_.ptr() && QL_gen_ == gen_) return true;
    Q_obj_ = L_obj_ = nb::object();
    try {
      i64 nq, nl;
      const i64* q = detail::buffer_of<i64>(Q, 1, false, &nq, "Q");
      const i64* l = detail::buffer_of<i64>(L, 1, false, &nl, "L");
      if (nq != 18 || nl != 10) return false;
      Vec<const i64> qv(q, nq), lvv(l, nl);
      Q_ = {engine::h1<i64>(qv, 0),    engine::h1<i64>(qv, 2),    engine::h1<i64>(qv, 4),
            engine::h1<double>(qv, 6), engine::h1<i64>(qv, 8),    engine::h1<double>(qv, 10),
            engine::h1<i64>(qv, 12),   engine::h1<double>(qv, 14), engine::h1<double>(qv, 16)};
      L_ = {engine::h1<double>(lvv, 0), engine::h1<double>(lvv, 2), engine::h1<double>(lvv, 4),
            engine::h1<double>(lvv, 6), engine::h1<double>(lvv, 8)};
    } catch (const std::exception&) {
      return false;
    }
    const i64 T = v_.A.n_trees(), R = T * (sketch::LV_WIDTH - 3);
    const bool sorted = L_.masses.size() > 0;
    if (Q_.leaves.size() < T || Q_.rs.size() < R || Q_.re.size() < R || Q_.rw.size() < R ||
        Q_.heap.size() < R || Q_.hv.size() < R || Q_.cur.size() < R ||
        (sorted && (Q_.sv.size() < items_ || Q_.sw.size() < items_)))
      return false;
    // interval_one's outputs: two quantiles (equal-tailed) or one mass (highest-density)
    if (L_.out_q.size() < L_.qs.size() || L_.out_lo.size() < L_.masses.size() ||
        L_.out_hi.size() < L_.masses.size())
      return false;
    if (L_.qs.size() ? L_.out_q.size() < 2 : (L_.out_lo.size() < 1 || L_.out_hi.size() < 1))
      return false;
    Q_obj_ = nb::borrow(Q);
    L_obj_ = nb::borrow(L);
    QL_gen_ = gen_;
    return true;
  }


  nb::object weak_, fs_dict_, enc_obj_;
  DictRows* enc_ = nullptr;
  // the engine's arrays the views were made from
  nb::object arena_, row_, rng_, wt_, P_, drifted_, M_, M0_;
  Views v_;
  double lam_ = 0.0;
  i64 agg_ = 0;
  bool hint_live_ = false;  // this object's hint (see set_hint)
  u64 hint_stamp_ = 0;
  bool ok_ = false, regression_ = false, shard_ = false, sketches_ = false;
  i64 items_ = 0;
  u64 gen_ = 0;  // the views' generation: a method's arrays are checked again after a change
  nb::object C_obj_;
  iv::Calibration C_{};
  u64 C_gen_ = 0;
  i64 C_cap_ = -1;
  nb::object Q_obj_, L_obj_;
  iv::QueryScratch Q_{};
  Levels L_{};
  u64 QL_gen_ = 0;
};

PyTypeObject* OneExample::type_ = nullptr;

}  // namespace

void bind_per_example(nb::module_& m) {
  // (x, y and w as the caller passed them, None included: anything but the plain case is the
  // Python path's)
  auto cls = nb::class_<OneExample>(m, "OneExample",
                         "An engine's per-example path in one call (see "
                         "streamforest.engine.per_example).")
      .def(nb::init<nb::handle, nb::handle, nb::handle>(), nb::arg("engine"),
           nb::arg("features"), nb::arg("encoder"))
      .def("predict", &OneExample::predict, nb::arg("owner"), nb::arg("x").none(),
           "``predict_one``: the forest's prediction, or None (the Python path).")
      .def("learn", &OneExample::learn, nb::arg("owner"), nb::arg("x").none(),
           nb::arg("y").none(), nb::arg("w").none(),
           "``learn_one``: None when learnt; False: the Python path (nothing learnt); else "
           "``(status, memo)`` to go on from.")
      .def("cp_interval", &OneExample::cp_interval, nb::arg("owner"), nb::arg("x").none(),
           nb::arg("alpha"), nb::arg("C"), nb::arg("size"),
           "CPApproximate's ``(lower, upper)`` at one level, or None.")
      .def("cp_learn", &OneExample::cp_learn, nb::arg("owner"), nb::arg("x").none(),
           nb::arg("y").none(), nb::arg("w").none(), nb::arg("C"), nb::arg("size"),
           "CPApproximate's ``learn_one``: the new size; False: the Python path; else "
           "``(status, memo, size)`` to go on from.")
      .def("qrf_interval", &OneExample::qrf_interval, nb::arg("owner"), nb::arg("x").none(),
           nb::arg("Q"), nb::arg("L"), nb::arg("meinshausen"),
           "OnlineQRF's ``(lower, upper)`` at one level, or None.")
      .def("ready", &OneExample::ready_now, nb::arg("owner"))
      .def("take_hint", &OneExample::take_own_hint,
           "Whether this object's hint (the engine's ``_hint`` is this object) says the leaf "
           "memo describes the row buffer's dict; used up.");
  OneExample::type_ = reinterpret_cast<PyTypeObject*>(cls.ptr());
}

}  // namespace sf::bind
