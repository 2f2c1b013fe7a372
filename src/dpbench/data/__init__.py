"""Datasets: cached, checksum-verified loaders and their preprocessing (see shared/data/README.md).

Importing the package loads no loader (:mod:`dpbench.data.registry`); ``clip_rows`` loads scipy on first use."""

from dpbench.data.dataset import Dataset
from dpbench.data.registry import DATASET_NAMES, load_dataset

__all__ = ["DATASET_NAMES", "Dataset", "clip_rows", "load_dataset"]


def __getattr__(name: str):
    if name == "clip_rows":
        from dpbench.data.preprocess import clip_rows

        return clip_rows
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
