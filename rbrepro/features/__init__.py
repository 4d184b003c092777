"""Feature maps of the paper's methods, one module per method (scikit-learn transformers)."""

from rbrepro.features.binned_matrix import BinnedMatrix
from rbrepro.features.nystrom import NystromFeatures
from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures

__all__ = ["BinnedMatrix", "NystromFeatures", "RandomBinningFeatures", "RandomFourierFeatures"]
