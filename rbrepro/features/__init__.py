"""Feature maps of the paper's methods, one module per method."""

from rbrepro.features.binned_matrix import BinnedMatrix
from rbrepro.features.random_binning import RandomBinningFeatures

__all__ = ["BinnedMatrix", "RandomBinningFeatures"]
