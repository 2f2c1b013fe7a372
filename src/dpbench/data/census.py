"""The census datasets of chen_lee (Sec 5.2, Table 1): Adult, Bank, IPUMS-BR and IPUMS-US.

Table 1 lists size / dimension (with bias) / majority-class rate: Adult 48,842 / 124 / 0.761,
Bank 45,211 / 33 / 0.883, IPUMS-BR 38,000 / 53 / 0.507, IPUMS-US 40,000 / 58 / 0.513. Those
dimensions are the LIBSVM a9a encoding of Adult and DP-AGD's preprocessed ``.dat`` matrices
(Lee & Kifer, KDD 2018), each plus a bias column; the ``onehot`` encodings build the same recipe
("categorical attributes one-hot, numeric ones scaled to [0, 1]") from the raw UCI files.
Only Adult has its own test split; chen_lee use 10-fold cross-validation on the others.

Numeric attributes are scaled by ranges declared below (``data.scaling=public``, the default; see
:mod:`dpbench.data.scaling`), each naming its source, or by the whole file's min–max as the authors
did (``data.scaling=whole_file``, not covered by any privacy guarantee). IPUMS-BR's ranges have no
public source, so its rows are outside the guarantee under either scaling.
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
from dpbench.data.scaling import DeclaredRange, column_ranges, scale_to_ranges
from dpbench.data.tabular import onehot_encode, read_dat
from dpbench.errors import DataError

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
_BANK_NUMERIC = ["age", "balance", "day", "duration", "campaign", "pdays", "previous"]

# The categories each categorical attribute may take, as the documentation lists them (adult.names;
# bank-names.txt), so the one-hot columns never depend on which values the rows happen to hold. Adult's
# missing value "?" is a category of workclass, occupation and native-country (the only three that have it).
_ADULT_CATEGORIES = {
    "workclass": [
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
        "?",
    ],
    "education": [
        "Bachelors",
        "Some-college",
        "11th",
        "HS-grad",
        "Prof-school",
        "Assoc-acdm",
        "Assoc-voc",
        "9th",
        "7th-8th",
        "12th",
        "Masters",
        "1st-4th",
        "10th",
        "Doctorate",
        "5th-6th",
        "Preschool",
    ],
    "marital-status": [
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ],
    "occupation": [
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
        "?",
    ],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": [
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
        "?",
    ],
}
_BANK_CATEGORIES = {
    "job": [
        "admin.",
        "unknown",
        "unemployed",
        "management",
        "housemaid",
        "entrepreneur",
        "student",
        "blue-collar",
        "self-employed",
        "retired",
        "technician",
        "services",
    ],
    "marital": ["married", "divorced", "single"],
    "education": ["unknown", "secondary", "primary", "tertiary"],
    "default": ["yes", "no"],
    "housing": ["yes", "no"],
    "loan": ["yes", "no"],
    "contact": ["unknown", "telephone", "cellular"],
    "month": ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    "poutcome": ["unknown", "other", "failure", "success"],
}

# Declared ranges (data.scaling=public), each naming its source (dpbench.data.scaling.DeclaredRange).
# Adult is an extract of the March 1994 CPS (adult.names), whose public files top-code some amounts.
_CPS_AMOUNT = "a CPS tax-model amount in dollars, a five-digit field"
_ADULT_RANGES = {
    "age": DeclaredRange(
        17.0,
        90.0,
        "adult.names: the extract keeps AAGE > 16; the CPS top-codes age at 90 "
        "(IPUMS-CPS, unharmonised age: 'top coded at 90 for July 1985-December 2002')",
    ),
    "fnlwgt": DeclaredRange(
        0.0,
        300_000_000.0,
        "units: a CPS weight counts the people a record stands for, controlled "
        "to the US civilian noninstitutional population (adult.names); the US population was "
        "261.7 million at the end of 1994 (Census Bureau estimate), rounded up to 300 million",
    ),
    "education-num": DeclaredRange(1.0, 16.0, "adult.names: numbers the 16 education levels it lists"),
    "capital-gain": DeclaredRange(
        0.0,
        99_999.0,
        f"{_CPS_AMOUNT} whose top value 99,999 is the top-code (IPUMS-CPS "
        "CAPGAIN: a 5-digit variable with a top code); a gain is at least 0",
    ),
    "capital-loss": DeclaredRange(
        0.0,
        99_999.0,
        f"{_CPS_AMOUNT}, at most 99,999 (IPUMS-CPS CAPLOSS: a 5-digit "
        "variable; no lower top-code for losses is documented); a loss is at least 0",
    ),
    "hours-per-week": DeclaredRange(
        1.0,
        99.0,
        "adult.names: the extract keeps HRSWK > 0; the CPS top-codes hours "
        "worked last week at 99 (IPUMS-CPS UH_HOURS_A4, ASEC from 1994: '99 = 99+')",
    ),
}
# Bank: bank-names.txt gives each attribute's meaning and unit but no ranges except where the meaning
# fixes one; elsewhere a domain limit or a round bound in the documented unit, each said as such.
# Values beyond are clipped.
_BANK_ROUND = "a round bound chosen in code (none is documented); values beyond it are clipped"
_BANK_RANGES = {
    "age": DeclaredRange(0.0, 120.0, "domain limit: an age in years is 0–120 (bank-names.txt gives no range)"),
    "balance": DeclaredRange(
        -10_000.0, 100_000.0, f"bank-names.txt: average yearly balance in euros, signed; {_BANK_ROUND}"
    ),
    "day": DeclaredRange(1.0, 31.0, "bank-names.txt: last contact day of the month, 1–31"),
    "duration": DeclaredRange(
        0.0, 3_600.0, f"bank-names.txt: call duration in seconds, at least 0; one hour is {_BANK_ROUND}"
    ),
    "campaign": DeclaredRange(0.0, 50.0, f"bank-names.txt: a count of contacts, at least 0; 50 is {_BANK_ROUND}"),
    "pdays": DeclaredRange(
        -1.0,
        1_000.0,
        "bank-names.txt: -1 means not previously contacted, else days since the "
        f"last contact; 1,000 days is {_BANK_ROUND}",
    ),
    "previous": DeclaredRange(0.0, 50.0, f"bank-names.txt: a count of contacts, at least 0; 50 is {_BANK_ROUND}"),
}
# DP-AGD's BANK.dat holds the same attributes, 0/1 indicators elsewhere (rows align with bank-full.csv):
# 0 age, 18 balance, 23 a (month, day) code, 24 duration, 25 campaign, 27 pdays (0 when not contacted;
# 26 is that indicator), 28 previous.
_BANK_DAT_RANGES = {
    0: _BANK_RANGES["age"],
    18: _BANK_RANGES["balance"],
    23: DeclaredRange(
        31.0,
        391.0,
        "bank-names.txt's day 1–31 and month jan–dec, which BANK.dat codes as "
        "30·month + day (it matches bank-full.csv row by row): 1 January = 31 ... 31 December = 391",
    ),
    24: _BANK_RANGES["duration"],
    25: _BANK_RANGES["campaign"],
    27: DeclaredRange(
        0.0,
        1_000.0,
        f"bank-names.txt's pdays, with 'not contacted' (-1) coded 0 in BANK.dat; 1,000 days is {_BANK_ROUND}",
    ),
    28: _BANK_RANGES["previous"],
}
# IPUMS-BR (DP-AGD's encoding, undocumented): 0/1 indicators except these integer-coded columns. No public
# document gives their ranges: these are the file's own minima and maxima, read off IPUMS-BR.dat, so the
# dataset's rows are outside the privacy guarantee (IPUMS_BR_UNSOURCED) until a public source is found.
_IPUMS_BR_SOURCE = (
    "none public: the column's minimum and maximum in IPUMS-BR.dat, read off the file (the encoding is undocumented)"
)
IPUMS_BR_UNSOURCED = "ipums_br: feature ranges not from a public source (read off the file)"
_IPUMS_BR_RANGES = {
    column: DeclaredRange(low, high, _IPUMS_BR_SOURCE)
    for column, (low, high) in {
        5: (1.0, 2.0),
        6: (0.0, 6.0),
        7: (1.0, 2.0),
        8: (1.0, 30.0),
        9: (1.0, 27.0),
        10: (0.0, 9.0),
        11: (0.0, 4.0),
        12: (10.0, 100.0),
        13: (1.0, 2.0),
        18: (1.0, 2.0),
        49: (1.0, 140.0),
        50: (1.0, 2.0),
        51: (0.0, 88.0),
    }.items()
}


def load_adult(options: dict, data_dir: Path, allow_download: bool, scaling: str) -> Dataset:
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
        notes = ["LIBSVM a9a: 123 binary features + bias (nothing to scale)"]
        # one-hot of 14 attributes (at most one 1 each) + bias: ‖x‖ ≤ √15 and ‖x‖₁ ≤ 15 by the encoding, whatever the rows
        extra = {"row_norm_bound": math.sqrt(15.0), "row_l1_bound": 15.0}
    else:
        train = fetch(sources.ADULT_DATA, data_dir, allow_download)
        test = fetch(sources.ADULT_TEST, data_dir, allow_download)
        read = dict(header=None, names=_ADULT_COLUMNS, skipinitialspace=True, na_values="?")
        frames = [pd.read_csv(train.path, **read), pd.read_csv(test.path, skiprows=1, **read)]
        ranges = None if scaling == "whole_file" else _ADULT_RANGES
        (X, X_test), names = onehot_encode(frames, _ADULT_CATEGORIES, _ADULT_NUMERIC, ranges)
        y, y_test = (to_pm1(f["income"].str.rstrip("."), ">50K") for f in frames)
        notes = [
            "missing values ('?') kept as their own category; numerics "
            + (
                "scaled with adult.data's min/max" if ranges is None else "clipped to declared ranges, scaled to [0, 1]"
            ),
            "adult.test: junk first line skipped, trailing '.' of labels stripped",
        ]
        # 6 numerics in [0, 1], 8 categoricals with at most one 1 each, a bias: ‖x‖ ≤ √15, ‖x‖₁ ≤ 15 by the encoding
        extra = {"columns": ["bias", *names], "row_norm_bound": math.sqrt(15.0), "row_l1_bound": 15.0}
    return from_files(
        "adult",
        add_bias(X),
        y,
        add_bias(X_test),
        y_test,
        files=[train, test],
        options=options,
        data_options=_with_scaling(
            data_options(options, ADULT_OPTIONS), scaling if options["encoding"] == "onehot" else None
        ),
        encoding=options["encoding"],
        feature_bound=1.0,  # 0/1 indicators, attributes scaled to [0, 1], a bias of 1: by the encoding
        scaling=scaling if options["encoding"] == "onehot" else "none",
        notes=notes,
        **extra,
    )


def load_bank(options: dict, data_dir: Path, allow_download: bool, scaling: str) -> Dataset:
    """UCI Bank Marketing, bank-full.csv (Moro, Cortez & Rita 2014): 45,211 rows, label ``y`` = yes is +1.

    ``dpagd``: DP-AGD's BANK.dat (32 features, rows aligned with bank-full.csv) min–max + bias = 33
    columns as in chen_lee Table 1. ``onehot``: 7 numerics min–max + 9 categoricals one-hot
    (``unknown`` is a category of the raw data) + bias = 52 columns. Both keep ``duration``, which
    is only known after the call (it leaks the label), as the papers do. No test split.
    """
    if options["encoding"] == "dpagd":
        return _load_dpagd(
            "bank", sources.BANK_DAT, 33, _BANK_DAT_RANGES, options, BANK_OPTIONS, data_dir, allow_download, scaling
        )
    source = fetch(sources.BANK_FULL, data_dir, allow_download)
    frame = pd.read_csv(source.path, sep=";")
    (X,), names = onehot_encode(
        [frame], _BANK_CATEGORIES, _BANK_NUMERIC, None if scaling == "whole_file" else _BANK_RANGES
    )
    return from_files(
        "bank",
        add_bias(X),
        to_pm1(frame["y"], "yes"),
        None,
        None,
        files=[source],
        options=options,
        data_options=_with_scaling(data_options(options, BANK_OPTIONS), scaling),
        encoding="onehot",
        feature_bound=1.0,
        scaling=scaling,
        notes=["pdays = -1 ('not contacted') is scaled like any other value"],
        columns=["bias", *names],
    )


def load_ipums_br(options: dict, data_dir: Path, allow_download: bool, scaling: str) -> Dataset:
    """IPUMS-BR (Brazil census extract as encoded by DP-AGD): 38,000 x 52 + bias = 53, no test split.

    Its declared ranges have no public source (the encoding is undocumented; they are the file's own
    extremes), so under ``data.scaling=public`` ``info["guarantee_breaches"]`` holds
    :data:`IPUMS_BR_UNSOURCED` and every row is ``guarantee_valid = false``, as under ``whole_file``.
    """
    return _load_dpagd(
        "ipums_br",
        sources.IPUMS_BR_DAT,
        53,
        _IPUMS_BR_RANGES,
        options,
        IPUMS_OPTIONS,
        data_dir,
        allow_download,
        scaling,
        unsourced=IPUMS_BR_UNSOURCED,
    )


def load_ipums_us(options: dict, data_dir: Path, allow_download: bool, scaling: str) -> Dataset:
    """IPUMS-US (US census extract as encoded by DP-AGD): 40,000 x 57 + bias = 58, no test split.

    Only DP-AGD's repository has it and only its git blob id is known; it is verified by that. Its
    encoding is undocumented and dpbench has never seen the file, so no ranges are declared: only
    ``data.scaling=whole_file`` (non-private) loads it.
    """
    if scaling == "public":
        raise DataError(
            "dataset 'ipums_us': no public feature ranges are declared (its encoding is undocumented), so it "
            "cannot be scaled privately; data.scaling=whole_file loads it with the authors' non-private min-max"
        )
    return _load_dpagd(
        "ipums_us", sources.IPUMS_US_DAT, 58, {}, options, IPUMS_OPTIONS, data_dir, allow_download, scaling
    )


def _load_dpagd(
    name: str,
    spec: RemoteFile,
    n_columns: int,
    ranges: dict[int, DeclaredRange],
    options: dict,
    schema: dict,
    data_dir: Path,
    allow_download: bool,
    scaling: str,
    unsourced: str | None = None,
) -> Dataset:
    """DP-AGD's ``.dat`` matrices plus a bias column: features clipped to the declared ``ranges`` (0/1
    for columns not listed) and scaled to [0, 1], or — ``whole_file`` — DP-AGD's own recipe
    ``load_dat(path, minmax=(0, 1), bias_term=True)``, min–max over every row of the file.
    ``unsourced``: why the declared ranges are outside the guarantee (recorded in
    ``info["guarantee_breaches"]`` when they are used), ``None`` when every range has a public source."""
    source = fetch(spec, data_dir, allow_download)
    features, labels = read_dat(source.path, n_columns)
    if scaling == "whole_file":
        scaled, how, breaches = minmax_scale(features), "min-max scaled over the whole file (non-private)", []
    else:
        scaled, how = (
            scale_to_ranges(features, column_ranges(n_columns - 1, ranges)),
            "clipped to declared ranges, scaled to [0, 1]",
        )
        breaches = [unsourced] if unsourced else []
    return from_files(
        name,
        add_bias(scaled),
        to_pm1(labels, 1.0),
        None,
        None,
        files=[source],
        options=options,
        data_options=_with_scaling(data_options(options, schema), scaling),
        encoding="dpagd",
        feature_bound=1.0,
        scaling=scaling,
        notes=[f"DP-AGD {spec.name}: {n_columns - 1} features {how} + bias; label 1 -> +1"],
        guarantee_breaches=breaches,
    )


def _with_scaling(options: dict, scaling: str | None) -> dict:
    """The data options the checksum covers, plus the scaling when the encoding scales anything
    (``None``: nothing to scale, as a9a; its checksum stays as it was)."""
    return options if scaling is None else {**options, "scaling": scaling}
