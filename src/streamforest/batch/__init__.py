"""Batch (fit once) estimators: quantile regression forests and HDI-Forest over scikit-learn's
random forests, sharing their interval kernels with the online :class:`~streamforest.OnlineQRF`."""

from .hdi_forest import HDIForestRegressor, QuantileForestRegressor

__all__ = ["HDIForestRegressor", "QuantileForestRegressor"]
