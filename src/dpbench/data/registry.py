"""Dataset names, their option schemas and loaders: :func:`load_dataset` is the single entry point.

A dataset's module (its option schema and loader, with numpy, scipy, pandas or scikit-learn) is
imported when the dataset is first loaded, so that the names cost nothing to import."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpbench.data.options import Option, resolve
from dpbench.data.scaling import SCALINGS
from dpbench.errors import DataError
from dpbench.recent_answers import RecentAnswers

if TYPE_CHECKING:
    from dpbench.data.dataset import Dataset

Loader = Callable[[dict, Path, bool], "Dataset"]

#: name → (its module in dpbench.data, the module's option schema, the module's loader)
_REGISTRY: dict[str, tuple[str, str, str]] = {
    "adult": ("census", "ADULT_OPTIONS", "load_adult"),
    "bank": ("census", "BANK_OPTIONS", "load_bank"),
    "ipums_br": ("census", "IPUMS_OPTIONS", "load_ipums_br"),
    "ipums_us": ("census", "IPUMS_OPTIONS", "load_ipums_us"),
    "synthetic_logreg": ("synthetic", "SYNTHETIC_OPTIONS", "load_synthetic_logreg"),
    "synthetic_svm": ("synthetic_svm", "SYNTHETIC_SVM_OPTIONS", "load_synthetic_svm"),
    "rcv1": ("libsvm_sets", "RCV1_OPTIONS", "load_rcv1"),
    "epsilon": ("libsvm_sets", "EPSILON_OPTIONS", "load_epsilon"),
    "covtype": ("covtype", "COVTYPE_OPTIONS", "load_covtype"),
    "file": ("user_file", "FILE_OPTIONS", "load_file"),
}
DATASET_NAMES: tuple[str, ...] = tuple(_REGISTRY)
#: Datasets whose loader may scale numeric attributes, and so takes ``data.scaling`` (:mod:`dpbench.data.scaling`).
SCALED_DATASETS = frozenset({"adult", "bank", "ipums_br", "ipums_us", "covtype"})
#: Datasets whose loader builds the features in the requested ``data.dtype`` (no float64 copy first).
TYPED_DATASETS = frozenset({"synthetic_svm"})


def scales_features(name: str, options: Mapping[str, Any]) -> bool:
    """Whether dataset ``name`` with ``options`` has numeric attributes to scale (Adult's a9a encoding
    is all 0/1 and has none), i.e. whether ``data.scaling`` changes its data."""
    return name in SCALED_DATASETS and not (name == "adult" and options.get("encoding", "a9a") == "a9a")


def _entry(name: str) -> tuple[Mapping[str, Option], Loader]:
    """Dataset ``name``'s option schema and loader."""
    module_name, schema, loader = _REGISTRY[name]
    module = importlib.import_module(f"dpbench.data.{module_name}")
    return getattr(module, schema), getattr(module, loader)


def __getattr__(name: str) -> Any:
    """``SCHEMAS``: each dataset's options (the keys of conf/dataset/<name>.yaml besides ``name``) with
    their defaults, made on first use (it imports every dataset's module)."""
    if name == "SCHEMAS":
        return {dataset: _entry(dataset)[0] for dataset in DATASET_NAMES}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_dataset(
    name: str,
    options: Mapping[str, Any],
    *,
    data_dir: Path,
    allow_download: bool,
    scaling: str = "public",
    dtype: str = "float64",
) -> Dataset:
    """Load dataset ``name`` with ``options`` (its YAML config minus ``name``) from ``data_dir``.

    Files are looked up under ``data_dir`` and verified; missing ones are downloaded from upstream
    only when ``allow_download``. A dataset read from files is parsed once and prepared for later loads
    (:mod:`dpbench.data.prepared`). ``scaling`` (``data.scaling``) reaches the loaders of
    :data:`SCALED_DATASETS`; the others have nothing to scale. The features come in ``dtype``
    (``data.dtype``: float64 or float32; :func:`~dpbench.data.dataset.in_dtype`). Raises
    :class:`~dpbench.errors.DataError` (one line) for an unknown dataset or option, a missing or
    unreadable file, and :class:`~dpbench.errors.ChecksumError` for a file whose checksum does not match.
    """
    if name not in _REGISTRY:
        raise DataError(f"unknown dataset {name!r}; valid names: {', '.join(DATASET_NAMES)}")
    if scaling not in SCALINGS:
        raise DataError(f"data.scaling must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    from dpbench.data.dataset import DATA_DTYPES, in_dtype, read_only

    if dtype not in DATA_DTYPES:
        raise DataError(f"data.dtype must be one of {', '.join(DATA_DTYPES)}, got {dtype!r}")
    from dpbench.data.prepared import load_prepared

    schema, loader = _entry(name)
    extra = {"scaling": scaling} if name in SCALED_DATASETS else {}
    if name in TYPED_DATASETS:
        extra["dtype"] = dtype
    resolved = resolve(name, _plain(options), schema)
    fields = {"dataset": name, "options": resolved, "data_dir": str(Path(data_dir).resolve()), **extra}
    key = json.dumps({**fields, "dtype": dtype}, sort_keys=True, default=str)
    if key in _GENERATED:
        return _fresh_info(_GENERATED[key])
    dataset = in_dtype(load_prepared(fields, lambda: loader(resolved, Path(data_dir), allow_download, **extra)), dtype)
    if not dataset.info.get("files"):
        _GENERATED.remember(key, read_only(dataset))
        return _fresh_info(dataset)
    return dataset


_GENERATED = RecentAnswers(1)
"""The generated dataset (no source files) this process made last, by everything that makes it: a sweep worker
running job after job on one synthetic dataset makes it once. Its arrays are read-only, so no job can change
another's data. A dataset read from files is never kept here: every job loads it from its prepared entry, which
proves itself against its files (:mod:`dpbench.data.prepared`)."""


def _fresh_info(dataset: Dataset) -> Dataset:
    """``dataset`` with its own copy of ``info`` (the arrays are shared and read-only)."""
    return dataclasses.replace(dataset, info=copy.deepcopy(dataset.info))


def _plain(options: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict of the options (an OmegaConf ``DictConfig`` is a Mapping too)."""
    return {str(k): options[k] for k in options}
