"""Models: feature map + solver, with the cost figures a result row reports."""

from rbrepro.models.rb_ridge import RandomBinningRidge

__all__ = ["RandomBinningRidge"]
