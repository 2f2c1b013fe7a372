"""The :class:`Dataset` every loader returns, and its identifying checksums."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from dpbench.data.files import LocalFile

if TYPE_CHECKING:
    import scipy.sparse as sp

Matrix: TypeAlias = "np.ndarray | sp.csr_matrix"
#: The dtypes features may be held in (``data.dtype``); labels, iterates, noise and accounting stay float64.
DATA_DTYPES = ("float64", "float32")


@dataclass
class Dataset:
    """A binary classification dataset, ready for the problems in ``dpbench.problems``.

    ``X`` is float64, or float32 with ``data.dtype=float32`` (dense or CSR), with the bias column,
    when the encoding has one, first; ``y`` is float64 in {-1, +1}. ``X_test``/``y_test`` are the dataset's own test split, if it has one.
    ``checksum`` identifies the exact data; ``info`` is JSON-serialisable (source files with the
    path used and sha256, encoding, n, dim, subset choices, notes).
    """

    name: str
    X: Matrix
    y: np.ndarray
    X_test: Matrix | None
    y_test: np.ndarray | None
    checksum: str
    info: dict


def in_dtype(dataset: Dataset, dtype: str) -> Dataset:
    """``dataset`` with its features in ``dtype`` (one of :data:`DATA_DTYPES`); ``info["dtype"]`` says which.

    Float32 features are other data: their checksum is the float64 one tagged with the dtype, so
    caches keyed by it (F*) never mix the two. A loader that builds float32 directly (synthetic_svm)
    is not converted again."""
    if dtype not in DATA_DTYPES:
        raise ValueError(f"data.dtype must be one of {', '.join(DATA_DTYPES)}, got {dtype!r}")
    dataset.info["dtype"] = dtype
    if dtype == "float64":
        return dataset
    X, X_test = (None if M is None else M.astype(np.float32, copy=False) for M in (dataset.X, dataset.X_test))
    checksum = hashlib.sha256(f"{dataset.checksum}|{dtype}".encode()).hexdigest()
    return Dataset(dataset.name, X, dataset.y, X_test, dataset.y_test, checksum, dataset.info)


def read_only(dataset: Dataset) -> Dataset:
    """``dataset`` with every array made read-only, in place (:func:`make_read_only`)."""
    make_read_only(dataset.X, dataset.y, dataset.X_test, dataset.y_test)
    return dataset


def make_read_only(*matrices: Matrix | None) -> None:
    """Make each dense array, or a CSR matrix's data, indices and pointers, read-only in place (None is skipped):
    for data that several jobs share, so that a write into it raises instead of changing what the next job sees."""
    for M in matrices:
        for array in (M,) if isinstance(M, np.ndarray) else () if M is None else (M.data, M.indices, M.indptr):
            array.setflags(write=False)


def files_checksum(name: str, file_sha256s: Sequence[str], options: Mapping[str, Any]) -> str:
    """sha256 over the dataset name, its verified source files' sha256s and the data options."""
    payload = {"dataset": name, "files": list(file_sha256s), "options": dict(options)}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def arrays_checksum(*arrays: np.ndarray) -> str:
    """sha256 over the bytes of ``arrays`` (C order), for generated data."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a))  # the array's buffer, not a bytes copy of it (the same digest)
    return h.hexdigest()


def index_sha256(idx: np.ndarray) -> str:
    """sha256 of a row-index array (as little-endian int64), to record which subset was used."""
    return hashlib.sha256(np.asarray(idx).astype("<i8").tobytes()).hexdigest()


def from_files(
    name: str,
    X: Matrix,
    y: np.ndarray,
    X_test: Matrix | None,
    y_test: np.ndarray | None,
    *,
    files: Sequence[LocalFile],
    options: Mapping[str, Any],
    data_options: Mapping[str, Any],
    encoding: str,
    notes: Sequence[str],
    **extra: Any,
) -> Dataset:
    """Assemble a file-backed :class:`Dataset`: checksum over ``files`` + ``data_options``, and its info."""
    info = make_info(encoding, X, X_test, [f.record() for f in files], options, notes, **extra)
    checksum = files_checksum(name, [f.sha256 for f in files], data_options)
    return Dataset(name, X, y, X_test, y_test, checksum, info)


def make_info(
    encoding: str,
    X: Matrix,
    X_test: Matrix | None,
    files: Sequence[dict],
    options: Mapping[str, Any],
    notes: Sequence[str],
    scaling: str = "none",
    guarantee_breaches: Sequence[str] = (),
    **extra: Any,
) -> dict:
    """The JSON-serialisable ``Dataset.info`` record shared by all loaders; ``scaling`` says how numeric
    attributes were scaled (``public``, ``whole_file`` or ``none``, :mod:`dpbench.data.scaling`);
    ``guarantee_breaches`` why the data's preparation is outside the privacy guarantee beyond its
    scaling, one reason each (e.g. declared ranges without a public source), empty when it is not."""
    import scipy.sparse as sp

    return {
        "encoding": encoding,
        "scaling": scaling,
        "guarantee_breaches": list(guarantee_breaches),
        "n": int(X.shape[0]),
        "dim": int(X.shape[1]),
        "n_test": None if X_test is None else int(X_test.shape[0]),
        "sparse": sp.issparse(X),
        "files": list(files),
        "options": dict(options),
        "notes": list(notes),
        **extra,
    }
