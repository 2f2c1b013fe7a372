"""``dataset=file``: a binary classification dataset from a researcher's own csv, parquet or libsvm file.

Every range is declared, never read off the data, so that no record decides how another is scaled
(the ``data.scaling=public`` rule of :mod:`dpbench.data.scaling`):

- ``numeric``: ``{column: [low, high, source]}``: the column is clipped to [low, high] and scaled to
  [0, 1]; ``source`` names the codebook, documentation or domain limit the range comes from.
- ``categorical``: ``{column: [category, ...]}``: one 0/1 column per declared category; a value
  outside the list is refused (declare ``"?"`` and it stands for a missing value).
- a libsvm file's ``feature_bound: [b, source]``: every feature is clipped to [−b, b] and divided by b.

``title`` is the name the rows (column ``dataset``), figures and the leaderboard give the data
(default ``file:<the file's stem>``). ``label`` names the label column (csv, parquet); ``positive`` is the label value that is +1, every
other −1 (null: the labels must already be 0/1 or ±1). A bias column of ones comes first, so every
feature lies in [−1, 1] and ‖x‖ ≤ √(1 + columns). A NaN in a numeric column is refused, naming the
column. The file's sha256 is recorded in ``Dataset.info`` and in its checksum; ``sha256`` pins it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from dpbench.data.dataset import Dataset, from_files
from dpbench.data.files import LocalFile, file_sha256
from dpbench.data.options import Option, choice, data_options, sha256_pin
from dpbench.data.preprocess import add_bias
from dpbench.data.scaling import DeclaredRange
from dpbench.errors import ChecksumError, DataError
from dpbench.plugins import package_dir

FORMATS = ("csv", "parquet", "libsvm")


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _is_range(value: Any) -> bool:
    """``[low, high, source]`` with finite low < high and a non-empty source."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == 3
        and _is_number(value[0])
        and _is_number(value[1])
        and value[0] < value[1]
        and isinstance(value[2], str)
        and bool(value[2].strip())
    )


def _is_categories(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) > 0
        and len(set(map(str, value))) == len(value)
    )


FILE_OPTIONS: dict[str, Option] = {
    "path": Option(
        "???", lambda v: isinstance(v, str) and v != "", "a file path", affects_data=False
    ),  # ???: to be given
    "title": Option(
        None,
        lambda v: v is None or (isinstance(v, str) and v.strip() != ""),
        "null or the name rows and figures give the data",
        affects_data=False,
    ),
    "format": choice("csv", "parquet", "libsvm"),
    "label": Option(None, lambda v: v is None or (isinstance(v, str) and v != ""), "null or a column name"),
    "positive": Option(None, lambda v: v is None or isinstance(v, (str, Real)), "null or the label value that is +1"),
    "numeric": Option(
        {},
        lambda v: isinstance(v, Mapping) and all(_is_range(r) for r in v.values()),
        "a mapping column: [low, high, source] with low < high and a named source",
    ),
    "categorical": Option(
        {},
        lambda v: isinstance(v, Mapping) and all(_is_categories(c) for c in v.values()),
        "a mapping column: [category, ...] of distinct categories",
    ),
    "feature_bound": Option(
        None,
        lambda v: (
            v is None
            or (isinstance(v, Sequence) and len(v) == 2 and _is_number(v[0]) and v[0] > 0 and isinstance(v[1], str))
        ),
        "null or [b, source] with b > 0 (libsvm)",
    ),
    "sha256": sha256_pin(),
}


def _plain(value: Any) -> Any:
    """Plain dicts, lists and scalars (a Hydra config's containers are not JSON)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def load_file(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """The dataset in ``options["path"]``: a relative path from ``data_dir`` first, then the working
    directory; ``pkg://package/relative/path`` a file an installed package (a plugin) ships."""
    options = {key: _plain(value) for key, value in options.items()}
    local = _verified(options, data_dir)
    if options["format"] == "libsvm":
        X, y, notes = _libsvm(local.path, options)
        extra: dict[str, Any] = {"row_norm_bound": math.sqrt(1 + X.shape[1])}
    else:
        X, y, names, notes = _table(local.path, options)
        # numerics in [0, 1], one 1 per categorical, a bias: ‖x‖ ≤ √(1 + declared columns) by the encoding
        width = 1 + len(options["numeric"]) + len(options["categorical"])
        extra = {"columns": ["bias", *names], "row_norm_bound": math.sqrt(width)}
    return from_files(
        "file",
        add_bias(X),
        y,
        None,
        None,
        files=[local],
        options=options,
        data_options=data_options(options, FILE_OPTIONS),
        encoding=options["format"],
        feature_bound=1.0,  # a bias of 1, numerics in [0, 1], indicators, libsvm features in [-1, 1]: declared
        scaling="public",
        notes=notes,
        **extra,
    )


def _verified(options: Mapping[str, Any], data_dir: Path) -> LocalFile:
    if options["path"] == "???":  # OmegaConf's mark of a value conf/dataset/file.yaml leaves to be given
        raise DataError(
            "dataset=file needs dataset.path=FILE, and the file's declared columns (conf/dataset/file.yaml)"
        )
    given = str(options["path"])
    if given.startswith("pkg://"):  # a file an installed package ships: pkg://package/relative/path
        package, _, relative = given.removeprefix("pkg://").partition("/")
        root = package_dir(package)
        candidates = [root / relative] if root is not None and relative else []
    else:
        candidates = [Path(data_dir) / Path(given).expanduser(), Path(given).expanduser()]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise DataError(
            f"dataset file: {options['path']} is not a file (looked in {data_dir} and the working directory)"
        )
    sha256, _ = file_sha256(path)
    pin = options["sha256"]
    if pin is not None and sha256 != pin.lower():
        raise ChecksumError(f"dataset file: {path} has sha256 {sha256}, not the pinned {pin.lower()}")
    return LocalFile(path.name, path.resolve(), sha256, "sha256" if pin is not None else "unpinned")


def _labels(values: np.ndarray, positive: Any, where: str) -> np.ndarray:
    """±1 labels: +1 where ``values == positive``; without ``positive``, labels already 0/1 or ±1."""
    if positive is not None:
        if not (values == positive).any():
            raise DataError(f"dataset file: no row of {where} has the positive label {positive!r}")
        return np.where(values == positive, 1.0, -1.0)
    seen = set(np.unique(values).tolist())
    if not (seen <= {0, 1} or seen <= {-1, 1}):
        shown = ", ".join(map(str, sorted(seen, key=str)[:5]))
        raise DataError(f"dataset file: {where} holds {shown}…, not 0/1 or ±1 labels; set dataset.positive")
    return np.where(values == 1, 1.0, -1.0)


def _table(path: Path, options: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    import pandas as pd

    from dpbench.data.tabular import onehot_encode

    numeric, categorical, label = options["numeric"], options["categorical"], options["label"]
    if label is None:
        raise DataError(f"dataset file: a {options['format']} file needs dataset.label, the label column")
    if not numeric and not categorical:
        raise DataError("dataset file: declare its features: dataset.numeric and/or dataset.categorical")
    try:
        frame = pd.read_csv(path) if options["format"] == "csv" else pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 — pandas and pyarrow raise many types for an unreadable table
        raise DataError(f"dataset file: cannot read {path} as {options['format']}: {exc}") from None
    missing = [c for c in (label, *numeric, *categorical) if c not in frame.columns]
    if missing:
        raise DataError(
            f"dataset file: {path} has no column {missing[0]!r}; its columns: {', '.join(map(str, frame.columns))}"
        )
    for column in numeric:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            raise DataError(
                f"dataset file: numeric column {column!r} has {int(values.isna().sum())} missing or non-numeric values"
            )
        frame[column] = values
    for column, categories in categorical.items():
        unknown = sorted(set(frame[column].fillna("?").astype(str)) - set(map(str, categories)))
        if unknown:
            raise DataError(f"dataset file: column {column!r} holds {unknown[0]!r}, not a declared category")
        frame[column] = frame[column].fillna("?").astype(str)
    ranges = {c: DeclaredRange(float(low), float(high), source) for c, (low, high, source) in numeric.items()}
    cats = {c: sorted(map(str, values)) for c, values in categorical.items()}
    (X,), names = onehot_encode([frame], cats, list(numeric), ranges)
    y = _labels(frame[label].to_numpy(), options["positive"], f"column {label!r}")
    notes = [f"{len(numeric)} numeric columns clipped to declared ranges, {len(categorical)} categorical one-hot"]
    return X, y, names, notes


def _libsvm(path: Path, options: Mapping[str, Any]) -> tuple[Any, np.ndarray, list[str]]:
    from sklearn.datasets import load_svmlight_file

    if options["feature_bound"] is None:
        raise DataError(
            "dataset file: a libsvm file needs dataset.feature_bound: [b, source], its features' public bound"
        )
    bound, _ = options["feature_bound"]
    try:
        X, labels = load_svmlight_file(str(path), dtype=np.float64)
    except (ValueError, OSError) as exc:
        raise DataError(f"dataset file: cannot read {path} as libsvm: {exc}") from None
    X = X.tocsr()
    X.data = np.clip(X.data, -bound, bound) / bound
    y = _labels(labels, options["positive"], "the labels")
    return X, y, [f"features clipped to the declared [-{bound:g}, {bound:g}] and divided by {bound:g}"]
