"""rbrepro: reproduce 'Revisiting Random Binning Features' (Wu, Yen, Chen, Yan; KDD 2016)."""

__version__ = "0.1.0"
