"""Calibrated prediction sets for online classifiers: :class:`ConformalClassifier` (online split
conformal classification with LAC, APS and RAPS scores) and :class:`AdaptiveConformalClassifier`
(ACI / conformal PID control of its long-run error rate)."""

from .adaptive import AdaptiveConformalClassifier
from .conformal import SCORES, ConformalClassifier

__all__ = ["SCORES", "AdaptiveConformalClassifier", "ConformalClassifier"]
