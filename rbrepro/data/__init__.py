"""Datasets: registry (what), fetch (verified download), libsvm (parse + cache), load (splits, scaling)."""

from rbrepro.data.fetch import FetchError, fetch_dataset
from rbrepro.data.folders import data_dir
from rbrepro.data.load import Dataset, load_dataset
from rbrepro.data.registry import REGISTRY, DatasetSpec, get_spec

__all__ = ["REGISTRY", "Dataset", "DatasetSpec", "FetchError", "data_dir", "fetch_dataset", "get_spec",
           "load_dataset"]
