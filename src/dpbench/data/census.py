"""The census datasets of chen_lee (Sec 5.2, Table 1): Adult, Bank, IPUMS-BR and IPUMS-US.

Table 1 lists size / dimension (with bias) / majority-class rate: Adult 48,842 / 124 / 0.761,
Bank 45,211 / 33 / 0.883, IPUMS-BR 38,000 / 53 / 0.507, IPUMS-US 40,000 / 58 / 0.513. Those
dimensions are the LIBSVM a9a encoding of Adult and DP-AGD's preprocessed ``.dat`` matrices
(Lee & Kifer, KDD 2018), each plus a bias column; the ``onehot`` encodings build the same recipe
("categorical attributes one-hot, numeric ones scaled to [0, 1]") from the raw UCI files.
Only Adult has its own test split; chen_lee use 10-fold cross-validation on the others.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from dpbench.data import sources
from dpbench.data.dataset import Dataset, from_files
from dpbench.data.files import RemoteFile, fetch
from dpbench.data.libsvm import read_libsvm
from dpbench.data.options import choice, data_options
from dpbench.data.preprocess import add_bias, minmax_scale, to_pm1
from dpbench.data.tabular import onehot_encode, read_dat

ADULT_OPTIONS = {"encoding": choice("a9a", "onehot")}
BANK_OPTIONS = {"encoding": choice("dpagd", "onehot")}
IPUMS_OPTIONS: dict = {}

_ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
_ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
_ADULT_CATEGORICAL = [c for c in _ADULT_COLUMNS[:-1] if c not in _ADULT_NUMERIC]
_BANK_NUMERIC = ["age", "balance", "day", "duration", "campaign", "pdays", "previous"]
_BANK_CATEGORICAL = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]


def load_adult(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """UCI Adult (Becker & Kohavi 1996), train = adult.data (32,561), test = adult.test (16,281).

    ``a9a``: LIBSVM's binarised Adult (Platt 1998), 123 binary features + bias = 124 columns as in
    chen_lee Table 1; kept sparse CSR (~15 non-zeros of 124 a row: a full-batch gradient is ~7x
    faster than dense and a minibatch no slower). ``onehot``: raw UCI files, 6 numerics min–max +
    8 categoricals one-hot with ``?`` (missing) as its own category, so no row is dropped and n
    stays 48,842 as in Table 1: 108 + bias = 109 dense columns. Label ``>50K`` is +1.
    """
    if options["encoding"] == "a9a":
        train, test = fetch(sources.A9A, data_dir, allow_download), fetch(sources.A9A_T, data_dir, allow_download)
        X, y, _ = read_libsvm(train.path, 123)
        X_test, y_test, _ = read_libsvm(test.path, 123)
        notes = ["LIBSVM a9a: 123 binary features + bias"]
        # one-hot of 14 attributes (at most one 1 each) + bias: ‖x‖ ≤ √15 by the encoding, whatever the rows
        extra = {"row_norm_bound": math.sqrt(15.0)}
    else:
        train = fetch(sources.ADULT_DATA, data_dir, allow_download)
        test = fetch(sources.ADULT_TEST, data_dir, allow_download)
        read = dict(header=None, names=_ADULT_COLUMNS, skipinitialspace=True, na_values="?")
        frames = [pd.read_csv(train.path, **read), pd.read_csv(test.path, skiprows=1, **read)]
        (X, X_test), names = onehot_encode(frames, _ADULT_CATEGORICAL, _ADULT_NUMERIC)
        y, y_test = (to_pm1(f["income"].str.rstrip("."), ">50K") for f in frames)
        notes = [
            "missing values ('?') kept as their own category; numerics scaled with adult.data's min/max",
            "adult.test: junk first line skipped, trailing '.' of labels stripped",
        ]
        extra = {"columns": ["bias", *names]}
    return from_files(
        "adult",
        add_bias(X),
        y,
        add_bias(X_test),
        y_test,
        files=[train, test],
        options=options,
        data_options=data_options(options, ADULT_OPTIONS),
        encoding=options["encoding"],
        notes=notes,
        **extra,
    )


def load_bank(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """UCI Bank Marketing, bank-full.csv (Moro, Cortez & Rita 2014): 45,211 rows, label ``y`` = yes is +1.

    ``dpagd``: DP-AGD's BANK.dat (32 features, rows aligned with bank-full.csv) min–max + bias = 33
    columns as in chen_lee Table 1. ``onehot``: 7 numerics min–max + 9 categoricals one-hot
    (``unknown`` is a category of the raw data) + bias = 52 columns. Both keep ``duration``, which
    is only known after the call (it leaks the label), as the papers do. No test split.
    """
    if options["encoding"] == "dpagd":
        return _load_dpagd("bank", sources.BANK_DAT, 33, options, BANK_OPTIONS, data_dir, allow_download)
    source = fetch(sources.BANK_FULL, data_dir, allow_download)
    frame = pd.read_csv(source.path, sep=";")
    (X,), names = onehot_encode([frame], _BANK_CATEGORICAL, _BANK_NUMERIC)
    return from_files(
        "bank",
        add_bias(X),
        to_pm1(frame["y"], "yes"),
        None,
        None,
        files=[source],
        options=options,
        data_options=data_options(options, BANK_OPTIONS),
        encoding="onehot",
        notes=["pdays = -1 ('not contacted') is min-max scaled like any other value"],
        columns=["bias", *names],
    )


def load_ipums_br(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """IPUMS-BR (Brazil census extract as encoded by DP-AGD): 38,000 x 52 + bias = 53, no test split."""
    return _load_dpagd("ipums_br", sources.IPUMS_BR_DAT, 53, options, IPUMS_OPTIONS, data_dir, allow_download)


def load_ipums_us(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """IPUMS-US (US census extract as encoded by DP-AGD): 40,000 x 57 + bias = 58, no test split.

    Only DP-AGD's repository has it and only its git blob id is known; it is verified by that.
    """
    return _load_dpagd("ipums_us", sources.IPUMS_US_DAT, 58, options, IPUMS_OPTIONS, data_dir, allow_download)


def _load_dpagd(
    name: str, spec: RemoteFile, n_columns: int, options: dict, schema: dict, data_dir: Path, allow_download: bool
) -> Dataset:
    """DP-AGD's recipe ``load_dat(path, minmax=(0, 1), bias_term=True)``: min–max every feature, prepend 1s."""
    source = fetch(spec, data_dir, allow_download)
    features, labels = read_dat(source.path, n_columns)
    return from_files(
        name,
        add_bias(minmax_scale(features)),
        to_pm1(labels, 1.0),
        None,
        None,
        files=[source],
        options=options,
        data_options=data_options(options, schema),
        encoding="dpagd",
        notes=[f"DP-AGD {spec.name}: {n_columns - 1} features min-max scaled to [0, 1] + bias; label 1 -> +1"],
    )
