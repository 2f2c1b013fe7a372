"""The ``onehot`` encodings built from the raw UCI Adult and Bank files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpbench.data import load_dataset

pytestmark = pytest.mark.data


def _check_blocks(X: np.ndarray, columns: list[str], categorical: list[str]) -> None:
    """Bias first, all values in [0, 1], each categorical block one-hot (exactly one 1 a row)."""
    np.testing.assert_array_equal(X[:, 0], 1.0)
    assert X.min() >= 0.0 and X.max() <= 1.0
    for name in categorical:
        block = [i for i, c in enumerate(columns) if c.startswith(f"{name}=")]
        assert block, name
        np.testing.assert_array_equal(X[:, block].sum(axis=1), 1.0)


def test_adult_onehot(shared_data):
    root = shared_data("adult/adult.data.gz", "adult/adult.test.gz")
    ds = load_dataset("adult", {"encoding": "onehot"}, data_dir=root, allow_download=False)
    assert ds.X.shape == (32_561, 109) and ds.X_test.shape == (16_281, 109)
    assert len(ds.y) + len(ds.y_test) == 48_842
    assert (ds.y == 1).sum() == 7_841 and (ds.y_test == 1).sum() == 3_846  # test labels' trailing '.' stripped
    columns = ds.info["columns"]
    assert columns[0] == "bias" and "workclass=?" in columns
    categorical = [
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "sex",
        "native-country",
    ]
    for X in (ds.X, ds.X_test):
        _check_blocks(X, columns, categorical)
    # numerics are clipped to their declared ranges: age 17..90 (adult.names' AAGE > 16, the CPS top-code)
    age = columns.index("age")
    assert ds.X[:, age].min() == 0.0 and ds.X[:, age].max() == 1.0
    json.dumps(ds.info)


def test_bank_onehot(shared_data):
    root = shared_data("bank_marketing/bank-full.csv.gz")
    ds = load_dataset("bank", {"encoding": "onehot"}, data_dir=root, allow_download=False)
    assert ds.X.shape == (45_211, 52) and ds.X_test is None
    assert (ds.y == 1).sum() == 5_289
    categorical = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]
    _check_blocks(ds.X, ds.info["columns"], categorical)
    json.dumps(ds.info)
