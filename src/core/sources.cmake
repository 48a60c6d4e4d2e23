# The compiled core's translation units, one line each (a new unit: its line here).
set(STREAMFOREST_CORE_SOURCES
  src/core/bindings/module.cpp
  src/core/bindings/bind_common.cpp
  src/core/bindings/bind_tree.cpp
  src/core/bindings/bind_engine.cpp
  src/core/bindings/bind_intervals.cpp
  src/core/intervals/controllers.cpp
  src/core/intervals/online.cpp
  src/core/intervals/normalized.cpp
  src/core/intervals/cqr.cpp
  src/core/bindings/bind_sets.cpp
  src/core/sets/conformal.cpp
  src/core/bindings/bind_metrics.cpp
  src/core/metrics/blocks.cpp
)
