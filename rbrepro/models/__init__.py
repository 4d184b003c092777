"""Models: feature map + solver, with the cost figures a result row reports."""

from rbrepro.models.feature_ridge import RandomBinningRidge, RandomFeatureRidge

__all__ = ["RandomBinningRidge", "RandomFeatureRidge"]
