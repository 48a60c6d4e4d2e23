"""Streaming quantile sketches."""

from .sketch import KLLSketch

__all__ = ["KLLSketch"]
