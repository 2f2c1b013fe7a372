"""Dataset names, their option schemas and loaders: :func:`load_dataset` is the single entry point."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dpbench.data.census import (
    ADULT_OPTIONS,
    BANK_OPTIONS,
    IPUMS_OPTIONS,
    load_adult,
    load_bank,
    load_ipums_br,
    load_ipums_us,
)
from dpbench.data.covtype import COVTYPE_OPTIONS, load_covtype
from dpbench.data.dataset import Dataset
from dpbench.data.libsvm_sets import (
    EPSILON_OPTIONS,
    RCV1_OPTIONS,
    load_epsilon,
    load_rcv1,
)
from dpbench.data.options import Option, resolve
from dpbench.data.scaling import SCALINGS
from dpbench.data.synthetic import SYNTHETIC_OPTIONS, load_synthetic_logreg
from dpbench.data.synthetic_svm import SYNTHETIC_SVM_OPTIONS, load_synthetic_svm
from dpbench.errors import DataError

Loader = Callable[[dict, Path, bool], Dataset]

_REGISTRY: dict[str, tuple[Mapping[str, Option], Loader]] = {
    "adult": (ADULT_OPTIONS, load_adult),
    "bank": (BANK_OPTIONS, load_bank),
    "ipums_br": (IPUMS_OPTIONS, load_ipums_br),
    "ipums_us": (IPUMS_OPTIONS, load_ipums_us),
    "synthetic_logreg": (SYNTHETIC_OPTIONS, load_synthetic_logreg),
    "synthetic_svm": (SYNTHETIC_SVM_OPTIONS, load_synthetic_svm),
    "rcv1": (RCV1_OPTIONS, load_rcv1),
    "epsilon": (EPSILON_OPTIONS, load_epsilon),
    "covtype": (COVTYPE_OPTIONS, load_covtype),
}
#: Datasets whose loader may scale numeric attributes, and so takes ``data.scaling`` (:mod:`dpbench.data.scaling`).
SCALED_DATASETS = frozenset({"adult", "bank", "ipums_br", "ipums_us", "covtype"})


def scales_features(name: str, options: Mapping[str, Any]) -> bool:
    """Whether dataset ``name`` with ``options`` has numeric attributes to scale (Adult's a9a encoding
    is all 0/1 and has none), i.e. whether ``data.scaling`` changes its data."""
    return name in SCALED_DATASETS and not (name == "adult" and options.get("encoding", "a9a") == "a9a")
DATASET_NAMES: tuple[str, ...] = tuple(_REGISTRY)
#: Each dataset's options (the keys of conf/dataset/<name>.yaml besides ``name``), with defaults.
SCHEMAS: Mapping[str, Mapping[str, Option]] = {name: schema for name, (schema, _) in _REGISTRY.items()}


def load_dataset(
    name: str, options: Mapping[str, Any], *, data_dir: Path, allow_download: bool, scaling: str = "public"
) -> Dataset:
    """Load dataset ``name`` with ``options`` (its YAML config minus ``name``) from ``data_dir``.

    Files are looked up under ``data_dir`` and verified; missing ones are downloaded from upstream
    only when ``allow_download``. ``scaling`` (``data.scaling``) reaches the loaders of
    :data:`SCALED_DATASETS`; the others have nothing to scale. Raises
    :class:`~dpbench.errors.DataError` (one line) for an unknown dataset or option, a missing or
    unreadable file, and :class:`~dpbench.errors.ChecksumError` for a file whose checksum does not match.
    """
    if name not in _REGISTRY:
        raise DataError(f"unknown dataset {name!r}; valid names: {', '.join(DATASET_NAMES)}")
    if scaling not in SCALINGS:
        raise DataError(f"data.scaling must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    schema, loader = _REGISTRY[name]
    extra = {"scaling": scaling} if name in SCALED_DATASETS else {}
    return loader(resolve(name, _plain(options), schema), Path(data_dir), allow_download, **extra)



def _plain(options: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict of the options (an OmegaConf ``DictConfig`` is a Mapping too)."""
    return {str(k): options[k] for k in options}
