"""Aggregated Mondrian forests (AMF): :class:`AMFRegressor` and :class:`AMFClassifier`, their
trees in compiled arrays of their own behind the forest interface
(:class:`~streamforest.mondrian.engine.MondrianEngine`)."""

from .amf import AMFClassifier, AMFRegressor

__all__ = ["AMFClassifier", "AMFRegressor"]
