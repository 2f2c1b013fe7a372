"""Which results rows are one configuration, so that no figure pools rows of different
configurations into one curve or point.

A row's configuration is what its columns record about how it ran: the method (``algorithm``), each
hyper-parameter (``p_<name>``, :func:`dpbench.results.param_columns`) and the settings in
:data:`SETTINGS`. Rows of one configuration may differ in ``seed`` (replications, pooled like folds
and reps) and, within one seed, must share one ``config_hash``: two hashes there mean settings the
results do not record (``reps``, ``cv.test_fraction``, …), which are never pooled either.

Generic figures split such rows into curves labelled by what differs (:func:`curve_labels`); the
papers' figures, which draw one curve per method, refuse them (:func:`check_one_configuration`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpbench.errors import DpbenchError
from dpbench.results import PARAM_PREFIX, with_param_columns
from dpbench.schema import PUBLIC, column_class

#: Recorded settings that make rows different configurations (besides algorithm and p_* columns).
SETTINGS = (
    "algorithm",
    "dataset",
    "eps",
    "delta",
    "model",
    "loss",
    "neighbouring",
    "sampler",
    "tuning",
    "scaling",
    "folds",
    "dataset_checksum",
    "experiment",
    "variant",
    "pwa_m",
    "pwa_d",
    "pwa_c",
    "pwa_b_max",
    "target",
    "validation_size",
)


def configuration_columns(df: pd.DataFrame) -> list[str]:
    """The columns of ``df`` that make up a configuration: the :data:`SETTINGS` it has, then its ``p_*``."""
    params = sorted(c for c in df.columns if c.startswith(PARAM_PREFIX))
    return [c for c in SETTINGS if c in df.columns] + params


def curve_labels(df: pd.DataFrame, panel: str = "dataset", x: str = "eps") -> pd.Series:
    """A label per row naming its curve: the algorithm, then ``name=value`` for every configuration
    column that takes several values among the algorithm's rows of one ``panel`` (``x`` aside), so
    that each configuration gets a curve of its own and the legend says what tells them apart."""
    df = with_param_columns(df)
    columns = [c for c in configuration_columns(df) if c not in ("algorithm", panel, x)]
    texts = _texts(df, columns)
    labels = df["algorithm"].astype(str)
    for algorithm, rows in texts.groupby(df["algorithm"]):
        by_panel = rows.groupby(df.loc[rows.index, panel], dropna=False) if panel in df.columns else [(None, rows)]
        varying = {c for _, here in by_panel for c in columns if here[c].nunique() > 1}
        ordered = sorted(varying, key=lambda c: (not c.startswith(PARAM_PREFIX), columns.index(c)))
        if ordered:
            labels.loc[rows.index] = [
                _label(algorithm, ordered, row) for _, row in df.loc[rows.index, ordered].iterrows()
            ]
    return labels


def _label(algorithm: str, columns: Sequence[str], row: pd.Series) -> str:
    """ "dp_sgd, noise_multiplier=8": the algorithm and the row's value of each of ``columns``."""
    return ", ".join([str(algorithm), *(f"{_short(c)}={_display(row[c])}" for c in columns)])


def check_one_configuration(df: pd.DataFrame, keys: Sequence[str], figure: str) -> None:
    """Refuse, with one line naming what differs, rows that ``figure`` would pool although they are
    different configurations: rows with equal ``keys`` (what places them on one curve or point) whose
    configuration columns differ, or that hold several ``config_hash`` values for one seed. Keys the
    rows lack are left out (rows without any key are one group)."""
    df = with_param_columns(df)
    keys = [k for k in keys if k in df.columns]
    if not keys:
        df, keys = df.assign(rows="all"), ["rows"]
    columns = [c for c in configuration_columns(df) if c not in keys]
    groups = _texts(df, columns).groupby([df[k] for k in keys], dropna=False, sort=True)
    counts = groups.nunique()
    mixed = counts[(counts > 1).any(axis=1)]
    if len(mixed):
        rows = df[_members(df, keys, mixed.index[0])]
        raise DpbenchError(
            f"{figure}: {_where(keys, mixed.index[0])} holds {describe_difference(rows)}; "
            "a curve shows one configuration: plot each from its own directory"
        )
    if "config_hash" not in df.columns:
        return
    by_seed = keys + (["seed"] if "seed" in df.columns else [])
    hashes = df.groupby(by_seed, dropna=False, sort=True)["config_hash"].nunique()
    if (hashes > 1).any():
        key = hashes[hashes > 1].index[0]
        rows = df[_members(df, by_seed, key)]
        raise DpbenchError(
            f"{figure}: {_where(by_seed, key)} holds {describe_difference(rows)}; "
            "a curve shows one configuration: plot each from its own directory"
        )


def describe_difference(rows: pd.DataFrame) -> str:
    """ "N configurations differing in <columns (values)>" for rows of several configurations: the
    configuration columns that differ, else the recorded public columns that tell their
    ``config_hash`` values apart, else the hashes themselves (compare those jobs' run.json)."""
    rows = with_param_columns(rows)
    columns = configuration_columns(rows)
    differing = [c for c in columns if _texts(rows, [c])[c].nunique() > 1]
    if differing:
        count = len(_texts(rows, differing).drop_duplicates())
        return f"{count} configurations differing in {_values(rows, differing)}"
    hashes = sorted(rows["config_hash"].astype(str).unique())
    recorded = _recorded_differences(rows)
    if recorded:
        return f"{len(hashes)} configurations differing in {_values(rows, recorded)}"
    return (
        f"{len(hashes)} configurations (config_hash {', '.join(hashes)}) differing in settings the results do "
        "not record (compare those jobs' run.json)"
    )


def _recorded_differences(rows: pd.DataFrame) -> list[str]:
    """Public columns (``seed`` among them; not fold, rep) constant within each config_hash but not across them."""
    candidates = [
        c for c in rows.columns if c not in ("config_hash", "fold", "rep") and column_class("results", c) == PUBLIC
    ]
    texts = _texts(rows, candidates)
    within = texts.groupby(rows["config_hash"]).nunique()
    return [c for c in candidates if (within[c] == 1).all() and texts[c].nunique() > 1]


def _texts(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``df[columns]`` as comparable text: None and NaN alike, 4 and 4.0 alike, distinct floats distinct."""
    return pd.DataFrame({c: df[c].map(_text) for c in columns}, index=df.index)


def _text(value) -> str:
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value))
    return str(value)


def _display(value) -> str:
    """A value for a legend or a message: numbers as short as they stay exact."""
    if isinstance(value, (float, np.floating)) and not np.isnan(value) and float(f"{value:g}") == value:
        return f"{value:g}"
    return "None" if _text(value) == "None" else str(value)


def _short(column: str) -> str:
    return column.removeprefix(PARAM_PREFIX)


def _values(rows: pd.DataFrame, columns: Sequence[str]) -> str:
    """ "p_noise_multiplier (4, 8), model (logreg, svm)": each column with its distinct values."""
    return ", ".join(f"{c} ({', '.join(sorted({_display(v) for v in rows[c]}))})" for c in columns)


def _members(df: pd.DataFrame, keys: Sequence[str], key) -> pd.Series:
    """Rows whose ``keys`` equal ``key`` (a groupby key: a scalar for one key, else a tuple)."""
    values = key if isinstance(key, tuple) else (key,)
    mask = pd.Series(True, index=df.index)
    for column, value in zip(keys, values):
        mask &= df[column].map(_text) == _text(value)
    return mask


def _where(keys: Sequence[str], key) -> str:
    """ "curve 'dp_sgd, p=1', eps = 0.5": the group's key values (quoted when they hold a comma)."""
    values = key if isinstance(key, tuple) else (key,)
    shown = [_display(value) for value in values]
    return ", ".join(f"{column} '{text}'" if "," in text else f"{column} = {text}" for column, text in zip(keys, shown))
