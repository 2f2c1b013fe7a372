"""load_dataset's dispatch and option validation, and the shipped conf/dataset/*.yaml files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dpbench.data import DATASET_NAMES, load_dataset
from dpbench.data.registry import SCHEMAS
from dpbench.errors import DataError

CONF = Path(__file__).resolve().parents[2] / "conf" / "dataset"


def test_names():
    assert DATASET_NAMES == (
        "adult",
        "bank",
        "ipums_br",
        "ipums_us",
        "synthetic_logreg",
        "synthetic_svm",
        "rcv1",
        "epsilon",
        "covtype",
        "file",
    )
    assert set(SCHEMAS) == set(DATASET_NAMES)


def test_unknown_dataset_lists_valid_names(tmp_path):
    with pytest.raises(DataError) as err:
        load_dataset("adlt", {}, data_dir=tmp_path, allow_download=False)
    assert "'adlt'" in str(err.value) and all(name in str(err.value) for name in DATASET_NAMES)


def test_unknown_option_lists_valid_options(tmp_path):
    with pytest.raises(DataError, match="dataset 'adult' has no option 'encodng'; valid options: encoding"):
        load_dataset("adult", {"encodng": "a9a"}, data_dir=tmp_path, allow_download=False)


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("adult", {"encoding": "raw"}, "option 'encoding' must be a9a | onehot, got 'raw'"),
        ("bank", {"encoding": None}, "option 'encoding' must be dpagd | onehot"),
        ("synthetic_logreg", {"n": 0}, "option 'n' must be an integer >= 1, got 0"),
        ("synthetic_logreg", {"seed": 1.5}, "option 'seed' must be an integer >= 0"),
        ("synthetic_logreg", {"d": True}, "option 'd' must be an integer >= 1"),
        ("synthetic_logreg", {"l1_radius": -2}, "option 'l1_radius' must be a positive number"),
        ("covtype", {"positive_class": 8}, "option 'positive_class' must be an integer in 1..7"),
        ("rcv1", {"sha256_train": "abc"}, "option 'sha256_train' must be null or a 64-digit sha256 hex string"),
        ("epsilon", {"n_max": -1}, "option 'n_max' must be an integer >= 1 or null"),
    ],
)
def test_invalid_option_values(tmp_path, name, options, message):
    with pytest.raises(DataError, match=message.replace("|", r"\|").replace(".", r"\.")) as err:
        load_dataset(name, options, data_dir=tmp_path, allow_download=False)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_conf_matches_schema_defaults(name):
    config = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    assert config.pop("name") == name
    schema = SCHEMAS[name]
    assert set(config) == set(schema)
    for key, value in config.items():
        assert value == schema[key].default, key
        assert schema[key].accepts(value), key


def test_dictconfig_options_are_accepted():
    omegaconf = pytest.importorskip("omegaconf")
    options = omegaconf.OmegaConf.create({"n": 50, "d": 3, "seed": 1})
    ds = load_dataset("synthetic_logreg", options, data_dir=Path("."), allow_download=False)
    assert ds.X.shape == (50, 3) and ds.info["options"] == {"n": 50, "d": 3, "l1_radius": 20.0, "seed": 1}


@pytest.mark.parametrize("options", [{"n": 3000, "d": 700}, {"n": 3000, "d": 700, "density": 0.05}])
def test_float32_data_are_the_float64_data_rounded_with_the_same_labels(tmp_path, options):
    """data.dtype=float32: synthetic_svm draws its rows in float64 blocks and stores them in float32
    (3000 × 700 dense is three blocks), other datasets are converted; labels do not move."""
    import numpy as np
    import scipy.sparse as sp

    wide = load_dataset("synthetic_svm", options, data_dir=tmp_path, allow_download=False)
    narrow = load_dataset("synthetic_svm", options, data_dir=tmp_path, allow_download=False, dtype="float32")
    assert narrow.X.dtype == narrow.X_test.dtype == np.float32 and wide.X.dtype == np.float64
    for narrow_X, wide_X in ((narrow.X, wide.X), (narrow.X_test, wide.X_test)):
        a, b = (narrow_X.toarray(), wide_X.toarray()) if sp.issparse(narrow_X) else (narrow_X, wide_X)
        assert np.array_equal(a, b.astype(np.float32))
    assert np.array_equal(narrow.y, wide.y) and np.array_equal(narrow.y_test, wide.y_test)
    assert narrow.checksum != wide.checksum
    assert (narrow.info["dtype"], wide.info["dtype"]) == ("float32", "float64")
    logreg = load_dataset("synthetic_logreg", {"n": 500}, data_dir=tmp_path, allow_download=False, dtype="float32")
    assert logreg.X.dtype == np.float32


def test_an_unknown_dtype_is_refused(tmp_path):
    with pytest.raises(DataError, match=re.escape("data.dtype must be one of float64, float32, got 'float16'")):
        load_dataset("synthetic_svm", {}, data_dir=tmp_path, allow_download=False, dtype="float16")
