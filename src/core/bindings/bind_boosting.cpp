// Bindings of streaming gradient-boosted trees' passes (same names and argument orders as
// the Python side calls them).  Every shape and count a pass indexes with is
// checked before it runs: the steps are regression trees this core runs and rows hold their
// features; ``acc`` has ACC_SIZE items, ``drifted`` one per step, ``guard`` the label guard's
// GUARD_SIZE, the rows' arrays one per row.
#include <string>

#include "bindings/arena.hpp"
#include "bindings/arrays.hpp"
#include "bindings/checks.hpp"
#include "boosting/sgbt.hpp"
#include "common/label_guard.hpp"

namespace sf::bind {

namespace {

namespace bo = sf::boosting;

/// Every step of ``A`` a regression tree this core runs, on rows of ``row_width`` columns.
void need_steps(const tree::Arena& A, i64 row_width) {
  for (i64 t = 0; t < A.n_trees(); ++t) {
    tree::TreeRef st = runnable_tree(A, t, row_width);
    if (st.kind.classification)
      throw nb::value_error(("tree " + std::to_string(t) + ": a classification tree").c_str());
  }
}

/// The state of a per-row pass: ``acc`` (ACC_SIZE items), ``drifted`` (one per step), the
/// label guard's state, ``t0``.
void need_row_state(const tree::Arena& A, Vec<double> acc, Vec<i8> drifted, Vec<double> guard,
                    i64 t0) {
  need(acc.size() >= bo::ACC_SIZE, "acc: fewer than 4 items");
  need(guard.size() >= guard::GUARD_SIZE, "guard: fewer items than the label guard's state");
  need(drifted.size() >= A.n_trees(), "drifted: fewer items than steps");
  need(t0 >= bo::FRESH, "t0: FRESH or a step index");
}

}  // namespace

void bind_boosting(nb::module_& m) {
  m.attr("FRESH") = bo::FRESH;
  m.attr("DONE") = bo::DONE;
  m.attr("DRIFTED") = bo::DRIFTED;
  m.attr("ACC_SIZE") = bo::ACC_SIZE;
  m.def("boost_one", [](nb::handle A_, Array<const double> x, double y, double w, double lr,
                        i64 t0, Array<double> acc, Array<i8> drifted, Array<double> guard) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    auto a = vec(acc, "acc");
    auto d = vec(drifted, "drifted");
    auto g = vec(guard, "guard");
    need_steps(A, xv.size());
    need_row_state(A, a, d, g, t0);
    nb::gil_scoped_release release;
    return bo::boost_one(A, xv, y, w, lr, t0, a, d, g);
  }, nb::arg("A"), nb::arg("x"), nb::arg("y"), nb::arg("w"), nb::arg("lr"), nb::arg("t0"),
     nb::arg("acc").noconvert(), nb::arg("drifted").noconvert(), nb::arg("guard").noconvert(),
     "Every step learns row ``(x, y, w)`` (from step ``t0``): DONE, DRIFTED or the step that "
     "lacks room.");
  m.def("boost_rows", [](nb::handle A_, Array<const double> X, Array<const double> y,
                         Array<const double> w, double lr, i64 start, i64 t0, Array<double> acc,
                         Array<i8> drifted, Array<double> guard, Array<double> out) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto yv = vec(y, "y");
    auto wv = vec(w, "w");
    auto a = vec(acc, "acc");
    auto d = vec(drifted, "drifted");
    auto g = vec(guard, "guard");
    auto o = vec(out, "out");
    need_steps(A, x.cols());
    need_row_state(A, a, d, g, t0);
    const i64 n = x.rows();
    need(yv.size() >= n && wv.size() >= n && o.size() >= n, "y, w, out: fewer items than rows");
    need(start >= 0, "start: negative");
    std::pair<i64, i64> r;
    {
      nb::gil_scoped_release release;
      r = bo::boost_rows(A, x, yv, wv, lr, start, t0, a, d, g, o);
    }
    return nb::make_tuple(r.first, r.second);
  }, nb::arg("A"), nb::arg("X"), nb::arg("y"), nb::arg("w"), nb::arg("lr"), nb::arg("start"),
     nb::arg("t0"), nb::arg("acc").noconvert(), nb::arg("drifted").noconvert(),
     nb::arg("guard").noconvert(), nb::arg("out").noconvert(),
     "Rows ``start..`` of ``X`` through every step (``out[i]``: the prediction before learning "
     "row i); ``(row, status)``.");
  m.def("boost_predict_one", [](nb::handle A_, Array<const double> x, double lr) {
    tree::Arena A = arena_of(A_);
    auto xv = vec(x, "x");
    need_steps(A, xv.size());
    nb::gil_scoped_release release;
    return bo::boost_predict_one(A, xv, lr);
  }, nb::arg("A"), nb::arg("x"), nb::arg("lr"), "``lr * sum_t f_t(x)``, in step order.");
  m.def("boost_predict_rows", [](nb::handle A_, Array<const double> X, double lr,
                                 Array<double> out) {
    tree::Arena A = arena_of(A_);
    auto x = mat(X, "X");
    auto o = vec(out, "out");
    need_steps(A, x.cols());
    need(o.size() >= x.rows(), "out: fewer items than rows");
    nb::gil_scoped_release release;
    bo::boost_predict_rows(A, x, lr, o);
  }, nb::arg("A"), nb::arg("X"), nb::arg("lr"), nb::arg("out").noconvert(),
     "``out[i]``: ``lr * sum_t f_t(X[i])``, in step order.");
}

}  // namespace sf::bind
