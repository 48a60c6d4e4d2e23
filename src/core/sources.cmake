# The compiled core's translation units, one line each (a new unit: its line here).
set(STREAMFOREST_CORE_SOURCES
  src/core/bindings/module.cpp
  src/core/bindings/bind_common.cpp
  src/core/bindings/bind_tree.cpp
  src/core/bindings/bind_engine.cpp
  src/core/bindings/bind_features.cpp
  src/core/bindings/bind_mondrian.cpp
  src/core/mondrian/amf.cpp
  src/core/bindings/bind_sketch.cpp
  src/core/bindings/bind_batch.cpp
  src/core/sketch/sketch_kernels.cpp
)
