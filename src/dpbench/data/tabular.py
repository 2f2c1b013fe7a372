"""Parsers for the census tables: DP-AGD's whitespace ``.dat`` matrices and raw UCI csv one-hot encoding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data.preprocess import minmax_scale
from dpbench.data.scaling import DeclaredRange, scale_to_ranges
from dpbench.errors import DataError


def read_dat(path: Path, n_columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Read a DP-AGD ``.dat`` file: ``n_columns`` whitespace-separated numbers a row, 0/1 label last.

    Returns the float64 feature matrix and the 0/1 labels (Lee & Kifer, KDD 2018; repo
    ppmlguy/DP-AGD, ``common/dat.py::load_dat``).
    """
    try:
        table = pd.read_csv(path, sep=r"\s+", header=None, dtype=np.float64).to_numpy()
    except (ValueError, OSError, EOFError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot parse {path} as a whitespace-separated numeric table: {exc}") from exc
    if table.shape[1] != n_columns:
        raise DataError(f"{path} has {table.shape[1]} columns, expected {n_columns} (features + label)")
    labels = table[:, -1]
    if not np.isin(labels, (0.0, 1.0)).all():
        raise DataError(f"{path}: the last column must be a 0/1 label")
    return table[:, :-1], labels


def onehot_encode(
    frames: Sequence[pd.DataFrame],
    categorical: Mapping[str, Sequence[str]],
    numeric: Sequence[str],
    ranges: Mapping[str, DeclaredRange] | None = None,
) -> tuple[list[np.ndarray], list[str]]:
    """Encode ``frames`` (train first, then e.g. test) alike: numerics scaled to [0, 1], categoricals one-hot.

    Numeric column c is clipped to the declared ``ranges[c]`` and scaled to [0, 1]
    (:func:`~dpbench.data.scaling.scale_to_ranges`); with ``ranges=None`` it is min–max scaled by the
    first frame's min and max instead (later frames clipped to [0, 1], see
    :func:`~dpbench.data.preprocess.minmax_scale`), a statistic of every row. Categorical column c gets
    one 0/1 column per category of its declared list ``categorical[c]`` (the dataset documentation's,
    in sorted order), never of the values present, so no record decides another's columns; a missing
    value (NaN) is the category ``"?"``, which the list must then contain. A value outside the list
    is a DataError. Returns one dense float64 matrix per frame, columns = numerics then one-hot blocks,
    and the column names.
    """
    sizes = [len(f) for f in frames]
    both = pd.concat(frames, ignore_index=True)
    numbers = both[list(numeric)].to_numpy(np.float64)
    if ranges is None:
        scaled = minmax_scale(numbers, reference=numbers[: sizes[0]])
    else:
        scaled = scale_to_ranges(numbers, [ranges[c].bounds for c in numeric])
    parts, names = [scaled], list(numeric)
    for column, declared in categorical.items():
        values = both[column].fillna("?").astype(str)
        codes = pd.Categorical(values, categories=sorted(declared))
        if (codes.codes < 0).any():
            raise DataError(
                f"column {column!r} holds {values[codes.codes < 0].iloc[0]!r}, not one of its declared categories"
            )
        parts.append(np.eye(len(codes.categories))[codes.codes])
        names += [f"{column}={c}" for c in codes.categories]
    encoded = np.hstack(parts)
    return np.split(encoded, np.cumsum(sizes)[:-1]), names
