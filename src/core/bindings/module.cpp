// streamforest._core: the compiled core's Python module.  Each concept binds its entry points
// in a submodule of its own (bind_<concept>.cpp); this file only makes them.
#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace sf::bind {
void bind_common(nb::module_& m);
void bind_tree(nb::module_& m);
void bind_tree_checks(nb::module_& m);
void bind_engine(nb::module_& m);
void bind_features(nb::module_& m);
void bind_per_example(nb::module_& m);
void bind_mondrian(nb::module_& m);
void bind_drift(nb::module_& m);
void bind_sketch(nb::module_& m);
void bind_batch(nb::module_& m);
void bind_intervals(nb::module_& m);
void bind_sets(nb::module_& m);
void bind_metrics(nb::module_& m);
void bind_quantile(nb::module_& m);
void bind_boosting(nb::module_& m);
void bind_groups(nb::module_& m);
}  // namespace sf::bind

NB_MODULE(_core, m) {
  m.doc() = "streamforest's ahead-of-time compiled core (C++17, nanobind)";
  nb::module_ common = m.def_submodule("common", "random numbers, statistics, sorting");
  sf::bind::bind_common(common);
  nb::module_ tree = m.def_submodule("tree", "the trees' layout and passes");
  sf::bind::bind_tree(tree);
  nb::module_ checks = tree.def_submodule("checks", "single steps of the trees, for tests");
  sf::bind::bind_tree_checks(checks);
  nb::module_ engine = m.def_submodule("engine", "the forest engine's passes");
  sf::bind::bind_engine(engine);
  nb::module_ features = m.def_submodule("features", "dict rows to the core's columns");
  sf::bind::bind_features(features);
  nb::module_ per_example = m.def_submodule("per_example", "an engine's per-example path");
  sf::bind::bind_per_example(per_example);
  nb::module_ mondrian = m.def_submodule("mondrian", "aggregated Mondrian forests' passes");
  sf::bind::bind_mondrian(mondrian);
  nb::module_ drift = m.def_submodule("drift", "drift detectors");
  sf::bind::bind_drift(drift);
  nb::module_ sketch = m.def_submodule("sketch", "the KLL quantile sketches");
  sf::bind::bind_sketch(sketch);
  nb::module_ batch = m.def_submodule("batch", "the batch leaf-weight forests' passes");
  sf::bind::bind_batch(batch);
  nb::module_ intervals = m.def_submodule("intervals", "interval methods' scores and controllers");
  sf::bind::bind_intervals(intervals);
  nb::module_ sets = m.def_submodule("sets", "conformal prediction sets of classes");
  sf::bind::bind_sets(sets);
  nb::module_ metrics = m.def_submodule("metrics", "the prequential evaluator's block metrics");
  sf::bind::bind_metrics(metrics);
  nb::module_ quantile = m.def_submodule("quantile", "OnlineQRF's leaf-sketch mixtures");
  sf::bind::bind_quantile(quantile);
  nb::module_ boosting = m.def_submodule("boosting", "streaming gradient-boosted trees");
  sf::bind::bind_boosting(boosting);
  nb::module_ groups = m.def_submodule("groups", "group-conditional (Mondrian) calibration");
  sf::bind::bind_groups(groups);
}
