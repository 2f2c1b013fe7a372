"""dataset=file: a researcher's own csv, parquet or libsvm file becomes a dataset with declared ranges
and categories only (a value beyond a declared bound is clipped, never widens it), ±1 labels, a bias
column, and its sha256 recorded; bad files and declarations are refused in one line naming the problem."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from dpbench.data.registry import load_dataset
from dpbench.errors import ChecksumError, DataError

ROWS = pd.DataFrame(
    {
        "age": [20, 45, 70, 130],  # 130 lies beyond the declared [17, 90]
        "job": ["clerk", "farmer", None, "clerk"],
        "income": [">50K", "<=50K", ">50K", "<=50K"],
    }
)
DECLARED = {
    "label": "income",
    "positive": ">50K",
    "numeric": {"age": [17, 90, "UCI Adult description: age 17-90"]},
    "categorical": {"job": ["clerk", "farmer", "?"]},
}


def load(path, **options):
    return load_dataset("file", {"path": str(path), **options}, data_dir=path.parent, allow_download=False)


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "people.csv"
    ROWS.to_csv(path, index=False)
    return path


def test_a_csv_becomes_declared_features_with_a_bias_and_pm1_labels(csv_file):
    data = load(csv_file, **DECLARED)
    # bias, age scaled by the declared range (130 clipped to 90), then job one-hot in sorted category order
    expected = np.array(
        [
            [1, 3 / 73, 0, 1, 0],
            [1, 28 / 73, 0, 0, 1],
            [1, 53 / 73, 1, 0, 0],
            [1, 1.0, 0, 1, 0],
        ]
    )
    np.testing.assert_allclose(data.X, expected)
    np.testing.assert_array_equal(data.y, [1, -1, 1, -1])
    assert data.info["columns"] == ["bias", "age", "job=?", "job=clerk", "job=farmer"]
    assert data.info["row_norm_bound"] == math.sqrt(3)
    assert np.linalg.norm(data.X, axis=1).max() <= data.info["row_norm_bound"]
    (record,) = data.info["files"]
    assert record["sha256"] == hashlib.sha256(csv_file.read_bytes()).hexdigest() and record["check"] == "unpinned"


def test_parquet_gives_the_same_data_and_another_checksum(csv_file, tmp_path):
    parquet = tmp_path / "people.parquet"
    ROWS.to_parquet(parquet)
    from_csv, from_parquet = load(csv_file, **DECLARED), load(parquet, format="parquet", **DECLARED)
    np.testing.assert_array_equal(from_csv.X, from_parquet.X)
    assert from_csv.checksum != from_parquet.checksum  # other bytes: another file


def test_a_libsvm_file_is_clipped_to_its_declared_bound(tmp_path):
    path = tmp_path / "rows.libsvm"
    path.write_text("1 1:0.5 3:4.0\n-1 2:-3.0\n")
    data = load(path, format="libsvm", feature_bound=[2.0, "the instrument's range"])
    np.testing.assert_allclose(data.X.toarray(), [[1, 0.25, 0, 1.0], [1, 0, -1.0, 0]])
    np.testing.assert_array_equal(data.y, [1, -1])


def test_a_pinned_sha256_is_checked(csv_file):
    pin = hashlib.sha256(csv_file.read_bytes()).hexdigest()
    assert load(csv_file, sha256=pin, **DECLARED).info["files"][0]["check"] == "sha256"
    with pytest.raises(ChecksumError, match="not the pinned 0000"):
        load(csv_file, sha256="0" * 64, **DECLARED)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"categorical": {"job": ["clerk", "?"]}}, "column 'job' holds 'farmer', not a declared category"),
        ({"numeric": {"age": [90, 17, "reversed"]}}, "option 'numeric' must be a mapping column: [low, high, source]"),
        ({"numeric": {"age": [17, 90, ""]}}, "option 'numeric' must be a mapping"),
        ({"numeric": {"height": [0, 3, "metres"]}}, "has no column 'height'"),
        ({"label": None}, "needs dataset.label"),
        ({"positive": None}, "holds <=50K, >50K…, not 0/1 or ±1 labels"),
    ],
    ids=["unknown category", "reversed range", "no source", "no column", "no label", "labels not binary"],
)
def test_a_bad_declaration_is_refused_in_one_line(csv_file, change, message):
    with pytest.raises(DataError) as caught:
        load(csv_file, **{**DECLARED, **change})
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_numeric_value_is_refused_naming_its_column(tmp_path):
    path = tmp_path / "gaps.csv"
    ROWS.assign(age=[20, None, 70, 30]).to_csv(path, index=False)
    with pytest.raises(DataError, match="numeric column 'age' has 1 missing or non-numeric values"):
        load(path, **DECLARED)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(DataError, match=r"nowhere\.csv is not a file"):
        load(tmp_path / "nowhere.csv", **DECLARED)


@pytest.mark.slow
def test_a_preset_of_ones_own_in_a_config_dir_runs_a_job_on_the_file(cli, tmp_path):
    rng = np.random.default_rng(0)
    age = rng.integers(17, 91, size=400)
    job = rng.choice(["clerk", "farmer"], size=400)
    income = np.where(age + 20 * (job == "clerk") + rng.normal(0, 10, size=400) > 60, ">50K", "<=50K")
    pd.DataFrame({"age": age, "job": job, "income": income}).to_csv(tmp_path / "people.csv", index=False)
    presets = tmp_path / "my_conf" / "dataset"
    presets.mkdir(parents=True)
    (presets / "people.yaml").write_text(
        "defaults:\n  - file\n  - _self_\n"
        f"path: {tmp_path / 'people.csv'}\nlabel: income\npositive: '>50K'\n"
        "numeric:\n  age: [17, 90, 'UCI Adult description']\ncategorical:\n  job: [clerk, farmer]\n"
    )
    args = ["--config-dir", str(tmp_path / "my_conf"), "dataset=people", "algorithm=dp_sgd", "reps=2", "progress=false"]
    result = cli(args, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = tmp_path.glob("outputs/runs/*/results.parquet")
    rows = pd.read_parquet(results)
    assert set(rows["dataset"]) == {"file:people"} and rows["test_accuracy"].between(0, 1).all()
    run = json.loads((results.parent / "run.json").read_text())
    (record,) = run["dataset"]["files"]
    assert record["sha256"] == hashlib.sha256((tmp_path / "people.csv").read_bytes()).hexdigest()
