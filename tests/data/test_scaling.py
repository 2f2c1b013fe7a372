"""Public feature scaling: under the default ``data.scaling=public`` removing any record —
in particular the one that holds a column's extreme — changes no other record's features; the authors'
whole-file min–max (``data.scaling=whole_file``) does, and is labelled as outside the guarantee."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dpbench.data import census, load_dataset
from dpbench.data.preprocess import minmax_scale
from dpbench.data.scaling import BINARY, DeclaredRange, column_ranges, scale_to_ranges
from dpbench.data.tabular import onehot_encode, read_dat
from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan

DAT = {  # dataset -> (file under DPBENCH_DATA, columns with label, declared ranges)
    "bank": ("bank_marketing/dpagd/BANK.dat.gz", 33, census._BANK_DAT_RANGES),
    "ipums_br": ("ipums_br/IPUMS-BR.dat.gz", 53, census._IPUMS_BR_RANGES),
}


def others_after_removal(scale, features: np.ndarray, row: int) -> tuple[np.ndarray, np.ndarray]:
    """(every row but ``row`` scaled with ``row`` in the data, the same rows scaled without it)."""
    keep = np.arange(features.shape[0]) != row
    return scale(features)[keep], scale(features[keep])


@pytest.mark.data
@pytest.mark.parametrize("name", sorted(DAT))
def test_removing_a_columns_extreme_record_changes_no_other_record(name, shared_data):
    path, n_columns, ranges = DAT[name]
    features, _ = read_dat(shared_data(path) / path, n_columns)
    declared = column_ranges(n_columns - 1, ranges)

    def public(f):
        return scale_to_ranges(f, declared)

    changed_by_whole_file = []
    for j in range(features.shape[1]):
        for row in {int(np.argmax(features[:, j])), int(np.argmin(features[:, j]))}:
            before, after = others_after_removal(public, features, row)
            assert np.array_equal(before, after), f"{name} column {j}: removing row {row} moved other records"
            before, after = others_after_removal(minmax_scale, features, row)
            if not np.array_equal(before, after):
                changed_by_whole_file.append(j)
    assert changed_by_whole_file  # the hole the default closes: whole-file min–max moves everyone


@pytest.mark.data
def test_banks_unique_maximum_rescaled_everyone_under_whole_file_scaling(shared_data):
    """The review's example: BANK.dat column 28 (``previous``) has a unique maximum 275 (next 58).
    Whole-file min–max rescales the column by 275/58 = 4.74 for every other record when that person
    is removed; the declared range (0–50) clips that person alone."""
    path, n_columns, ranges = DAT["bank"]
    features, _ = read_dat(shared_data(path) / path, n_columns)
    column = features[:, 28]
    top = int(np.argmax(column))
    assert column[top] == 275 and np.sort(column)[-2] == 58
    before, after = others_after_removal(minmax_scale, features, top)
    moved = after[:, 28][before[:, 28] > 0] / before[:, 28][before[:, 28] > 0]
    assert np.allclose(moved, 275 / 58)
    public = scale_to_ranges(features, column_ranges(n_columns - 1, ranges))
    assert public[top, 28] == 1.0 and ranges[28].bounds == (0.0, 50.0)


@pytest.mark.data
@pytest.mark.parametrize("name", ["bank", "ipums_br"])
def test_loaders_scale_by_the_declared_ranges_unless_whole_file_is_asked_for(name, shared_data):
    path, n_columns, ranges = DAT[name]
    data_dir = shared_data(path)
    features, _ = read_dat(data_dir / path, n_columns)
    public = load_dataset(name, {}, data_dir=data_dir, allow_download=False)
    whole = load_dataset(name, {}, data_dir=data_dir, allow_download=False, scaling="whole_file")
    assert public.info["scaling"] == "public" and whole.info["scaling"] == "whole_file"
    assert np.array_equal(public.X[:, 1:], scale_to_ranges(features, column_ranges(n_columns - 1, ranges)))
    assert np.array_equal(whole.X[:, 1:], minmax_scale(features))
    assert public.checksum != whole.checksum and public.X.min() >= 0 and public.X.max() <= 1


@pytest.mark.data
@pytest.mark.parametrize("name", ["adult", "bank"])
def test_onehot_columns_come_from_the_documentation_not_the_rows(name, shared_data):
    """A category held by one person (Adult's native-country=Holand-Netherlands) keeps its column when
    that person is removed, and nobody else's features change; numerics use the declared ranges."""
    if name == "adult":
        path = "adult/adult.data.gz"
        frame = pd.read_csv(
            shared_data(path) / path, header=None, names=census._ADULT_COLUMNS, skipinitialspace=True, na_values="?"
        )
        categories, numeric, ranges = census._ADULT_CATEGORIES, census._ADULT_NUMERIC, census._ADULT_RANGES
        row = int(np.flatnonzero(frame["native-country"] == "Holand-Netherlands")[0])
    else:
        path = "bank_marketing/bank-full.csv.gz"
        frame = pd.read_csv(shared_data(path) / path, sep=";")
        categories, numeric, ranges = census._BANK_CATEGORIES, census._BANK_NUMERIC, census._BANK_RANGES
        row = int(frame["previous"].idxmax())
    (full,), names = onehot_encode([frame], categories, numeric, ranges)
    (without,), names_without = onehot_encode(
        [frame.drop(index=row).reset_index(drop=True)], categories, numeric, ranges
    )
    assert names == names_without
    assert np.array_equal(np.delete(full, row, axis=0), without)


def test_scale_to_ranges_clips_and_maps_to_unit_interval():
    X = np.array([[-5.0, 0.0], [5.0, 1.0], [20.0, 1.0]])
    assert np.array_equal(scale_to_ranges(X, [(0.0, 10.0), BINARY]), [[0.0, 0.0], [0.5, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="column 1"):
        scale_to_ranges(X, [(0.0, 1.0), (2.0, 2.0)])
    with pytest.raises(ValueError, match=re.escape("one (lo, hi) range per column")):
        scale_to_ranges(X, [(0.0, 1.0)])
    with pytest.raises(ValueError, match="beyond the 2 columns"):
        column_ranges(2, {5: DeclaredRange(0.0, 1.0, "a test")})


@pytest.mark.data
def test_rows_record_the_scaling_and_whole_file_is_outside_the_guarantee(compose_run_config, tmp_path, shared_data):
    """Bank's declared ranges come from its documentation and from domain or units limits, not from the
    file, so its public rows are inside the guarantee and its whole-file rows are not. (IPUMS-BR's public
    rows are outside it too, its ranges having no public source: tests/data/test_declared_ranges.py.)"""
    data_dir = shared_data("bank_marketing/dpagd/BANK.dat.gz")
    common = ("dataset=bank", "algorithm=nonprivate", "progress=false", f"data_dir={data_dir}", "cv.folds=1")
    public = run_job(make_plan(compose_run_config(*common)), tmp_path / "public")
    whole = run_job(make_plan(compose_run_config(*common, "data.scaling=whole_file")), tmp_path / "whole")
    assert set(public["scaling"]) == {"public"} and public["guarantee_valid"].all()
    assert set(whole["scaling"]) == {"whole_file"} and not whole["guarantee_valid"].any()
    synthetic = run_job(make_plan(compose_run_config("algorithm=nonprivate", "progress=false")), tmp_path / "synthetic")
    assert set(synthetic["scaling"]) == {"none"} and synthetic["guarantee_valid"].all()
