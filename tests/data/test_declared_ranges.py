"""Where ``data.scaling=public``'s declared ranges come from: every one names its source (a dataset's
documentation or encoding, or a domain or units limit), none is read off the data, and IPUMS-BR, whose
ranges were read off its file, is outside the privacy guarantee. Covtype's ranges are only checked for a
source: its file is not among the shared data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpbench.data import census, covtype, load_dataset
from dpbench.data.preprocess import minmax_scale
from dpbench.data.scaling import DeclaredRange
from dpbench.data.tabular import read_dat
from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan

DECLARED = {
    "adult": census._ADULT_RANGES,
    "bank": census._BANK_RANGES,
    "bank_dpagd": census._BANK_DAT_RANGES,
    "ipums_br": census._IPUMS_BR_RANGES,
    "covtype": covtype._RANGES,
}
ADULT = ("adult/adult.data.gz", "adult/adult.test.gz")
BANK = "bank_marketing/bank-full.csv.gz"
BANK_DAT = "bank_marketing/dpagd/BANK.dat.gz"
IPUMS_BR = "ipums_br/IPUMS-BR.dat.gz"
DATASETS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"

# The declared bounds the shipped files reach, each because its source names that value as one the
# data take: an extraction rule, a census top-code, the end of a documented code set, the encoding's
# code for "not contacted", or the zero of a non-negative amount or count. Any other bound equal to a
# column's extreme would look read off the data, and fails the test below.
REACHED = {
    ("adult", "age", "low"): "adult.names: AAGE > 16 (595 records are 17)",
    ("adult", "age", "high"): "the CPS top-code 90 (55 records)",
    ("adult", "education-num", "low"): "adult.names' first of 16 levels, Preschool (83 records)",
    ("adult", "education-num", "high"): "adult.names' 16th level, Doctorate (594 records)",
    ("adult", "capital-gain", "low"): "no gain (44,807 records)",
    ("adult", "capital-gain", "high"): "the CPS top-code 99,999 (244 records)",
    ("adult", "capital-loss", "low"): "no loss (46,560 records)",
    ("adult", "hours-per-week", "low"): "adult.names: HRSWK > 0 (27 records are 1)",
    ("adult", "hours-per-week", "high"): "the CPS top-code 99 (137 records)",
    ("bank", "day", "low"): "day of month 1 (322 records)",
    ("bank", "day", "high"): "day of month 31 (643 records)",
    ("bank", "duration", "low"): "a call of 0 seconds (3 records)",
    ("bank", "pdays", "low"): "bank-names.txt: -1 = not previously contacted (36,954 records)",
    ("bank", "previous", "low"): "no earlier contact (36,954 records)",
    ("bank_dpagd", 23, "high"): "31 December, the code set's end (1 record)",
    ("bank_dpagd", 24, "low"): "a call of 0 seconds (3 records)",
    ("bank_dpagd", 27, "low"): "BANK.dat's code for not previously contacted (36,954 records)",
    ("bank_dpagd", 28, "low"): "no earlier contact (36,954 records)",
}


def _adult(root) -> pd.DataFrame:
    """adult.data and adult.test (its junk first line skipped), the rows the onehot encoding scales."""
    read = {"header": None, "names": census._ADULT_COLUMNS, "skipinitialspace": True, "na_values": "?"}
    train, test = (root / path for path in ADULT)
    return pd.concat([pd.read_csv(train, **read), pd.read_csv(test, skiprows=1, **read)], ignore_index=True)


def _columns(shared_data) -> dict[str, dict]:
    """Each table's scaled columns as the shipped files hold them, keyed as its declared ranges are."""
    root = shared_data(*ADULT, BANK, BANK_DAT)
    adult, bank = _adult(root), pd.read_csv(root / BANK, sep=";")
    bank_dat, _ = read_dat(root / BANK_DAT, 33)
    return {
        "adult": {c: adult[c].to_numpy(np.float64) for c in census._ADULT_RANGES},
        "bank": {c: bank[c].to_numpy(np.float64) for c in census._BANK_RANGES},
        "bank_dpagd": {j: bank_dat[:, j] for j in census._BANK_DAT_RANGES},
    }


def test_every_declared_range_names_its_source():
    """37 declared ranges in five tables, each a :class:`DeclaredRange` with a non-empty source; only
    IPUMS-BR's say they were read off the file."""
    assert sum(len(ranges) for ranges in DECLARED.values()) == 6 + 7 + 7 + 13 + 10
    for name, ranges in DECLARED.items():
        for key, declared in ranges.items():
            assert isinstance(declared, DeclaredRange), (name, key)
            assert declared.source.strip(), (name, key)
            assert ("read off the file" in declared.source) == (name == "ipums_br"), (name, key, declared.source)
    with pytest.raises(ValueError, match="names no source"):
        DeclaredRange(0.0, 1.0, " ")
    with pytest.raises(ValueError, match="low < high"):
        DeclaredRange(1.0, 1.0, "a source")


def test_the_datasets_page_lists_every_declared_range_with_its_source():
    """docs/datasets.md has one table row per declared range, as in the code: its key, bounds and
    source; IPUMS-BR's ranges are listed on one line with the note its rows carry."""
    page = DATASETS_PAGE.read_text()

    def number(value: float) -> str:
        return f"{int(value):,}"

    for name, ranges in DECLARED.items():
        for key, declared in ranges.items():
            if name == "ipums_br":
                assert f"{key} ({number(declared.low)}–{number(declared.high)})" in page, (name, key)
            else:
                row = f"| {key} | {number(declared.low)} | {number(declared.high)} | {declared.source} |"
                assert row in page, (name, key)
    assert census.IPUMS_BR_UNSOURCED in page


@pytest.mark.data
def test_no_declared_bound_is_a_files_extreme_unless_its_source_names_that_value(shared_data):
    """Adult (48,842 rows of adult.data and adult.test), Bank (bank-full.csv, 45,211 rows) and BANK.dat:
    a declared bound equal to a column's minimum or maximum in the file must be one of :data:`REACHED`,
    whose source names that value; every other bound lies strictly beyond or inside the file's values.

    Measured on the files: Adult's fnlwgt runs 12,285–1,490,400 (each held by one record) and its bound
    is now 0–300,000,000 (a weight counts people: at most the US population, 261.7 million at the end of
    1994), not the 1,500,000 that sat just above the maximum; capital-loss reaches 4,356 (3 records,
    next 3,900) and its bound is now the CPS five-digit field's 99,999, not 5,000. Bank's age runs
    18–95 (12 and 2 records) and its bound is now the domain limit 0–120: the old lower bound 18 was
    the file's own minimum, with no source."""
    reached = set()
    for table, columns in _columns(shared_data).items():
        for key, values in columns.items():
            declared = DECLARED[table][key]
            if declared.low == values.min():
                reached.add((table, key, "low"))
            if declared.high == values.max():
                reached.add((table, key, "high"))
    assert not reached - set(REACHED), (
        f"bounds equal to the file's extreme with no source naming them: {reached - set(REACHED)}"
    )
    assert not set(REACHED) - reached, f"REACHED lists bounds the files no longer reach: {set(REACHED) - reached}"


@pytest.mark.data
def test_adults_review_bounds_are_replaced_by_documented_limits(shared_data):
    """The review found Adult's fnlwgt bound (1,500,000) just above the file's unique maximum
    1,490,400 and capital-loss's (5,000) just above its maximum 4,356: chosen after looking at the
    data. The bounds are now 300,000,000 (the US population, rounded up) and 99,999 (the CPS amount
    field's top value), so those maxima scale to 0.005 and 0.044 and no longer sit next to 1."""
    adult = _adult(shared_data(*ADULT))
    fnlwgt, loss = census._ADULT_RANGES["fnlwgt"], census._ADULT_RANGES["capital-loss"]
    assert adult["fnlwgt"].max() == 1_490_400 and (adult["fnlwgt"] == 1_490_400).sum() == 1
    assert adult["capital-loss"].max() == 4_356 and (adult["capital-loss"] == 4_356).sum() == 3
    assert fnlwgt.bounds == (0.0, 300_000_000.0) and "US population" in fnlwgt.source
    assert loss.bounds == (0.0, 99_999.0) and "five-digit field" in loss.source
    assert 1_490_400 / fnlwgt.high == pytest.approx(0.005, abs=5e-4) and 4_356 / loss.high == pytest.approx(
        0.044, abs=5e-4
    )


@pytest.mark.data
def test_bank_dat_codes_the_contact_date_as_30_month_plus_day(shared_data):
    """The source of BANK.dat column 23's range 31–391: the column is 30·month + day of bank-full.csv,
    row by row, and bank-names.txt documents day 1–31 and month jan–dec (1 January = 31, 31 December
    = 391)."""
    root = shared_data(BANK, BANK_DAT)
    bank, (bank_dat, _) = pd.read_csv(root / BANK, sep=";"), read_dat(root / BANK_DAT, 33)
    month = bank["month"].map({m: i + 1 for i, m in enumerate(census._BANK_CATEGORIES["month"])})
    np.testing.assert_array_equal(bank_dat[:, 23], 30 * month.to_numpy() + bank["day"].to_numpy())
    assert census._BANK_DAT_RANGES[23].bounds == (30 * 1 + 1, 30 * 12 + 31)


@pytest.mark.data
def test_ipums_br_ranges_are_the_files_own_extremes_and_mark_it_outside_the_guarantee(shared_data):
    """The review: IPUMS-BR's 13 declared ranges are exactly its file's column minima and maxima, so
    public scaling is bit-identical to whole-file min–max. Column 49's maximum 140 (next 129) and
    column 9's maximum 27 (next 24) are each held by one record; were the ranges re-read without the
    holder of column 49's, 37,983 entries of other records would change (36,073 for column 9's). No
    public document gives them, so under public scaling the loader records
    :data:`~dpbench.data.census.IPUMS_BR_UNSOURCED` and its rows are outside the guarantee; under
    whole-file scaling the whole-file reason covers them; Bank records nothing."""
    root = shared_data(IPUMS_BR, BANK_DAT)
    features, _ = read_dat(root / IPUMS_BR, 53)
    for column, declared in census._IPUMS_BR_RANGES.items():
        assert declared.bounds == (features[:, column].min(), features[:, column].max()), column
    for column, top, changed in ((49, 140, 37_983), (9, 27, 36_073)):
        holder = np.flatnonzero(features[:, column] == top)
        assert holder.size == 1
        keep = np.arange(features.shape[0]) != holder[0]
        assert (minmax_scale(features)[keep] != minmax_scale(features[keep])).sum() == changed
    public = load_dataset("ipums_br", {}, data_dir=root, allow_download=False)
    whole = load_dataset("ipums_br", {}, data_dir=root, allow_download=False, scaling="whole_file")
    bank = load_dataset("bank", {}, data_dir=root, allow_download=False)
    assert public.info["guarantee_breaches"] == [census.IPUMS_BR_UNSOURCED]
    assert whole.info["guarantee_breaches"] == [] and bank.info["guarantee_breaches"] == []


@pytest.mark.data
def test_ipums_br_rows_are_outside_the_guarantee_under_every_scaling(compose_run_config, tmp_path, shared_data):
    """Every IPUMS-BR row is ``guarantee_valid = false``: under public scaling its note is
    "ipums_br: feature ranges not from a public source (read off the file)", under whole-file scaling
    the whole-file reason."""
    data_dir = shared_data(IPUMS_BR)
    common = ("dataset=ipums_br", "algorithm=nonprivate", "progress=false", f"data_dir={data_dir}", "cv.folds=1")
    public = run_job(make_plan(compose_run_config(*common)), tmp_path / "public")
    whole = run_job(make_plan(compose_run_config(*common, "data.scaling=whole_file")), tmp_path / "whole")
    assert set(public["scaling"]) == {"public"} and not public["guarantee_valid"].any()
    assert set(public["guarantee_note"]) == {"ipums_br: feature ranges not from a public source (read off the file)"}
    assert set(whole["scaling"]) == {"whole_file"} and not whole["guarantee_valid"].any()
    assert all(note.startswith("data.scaling=whole_file") for note in whole["guarantee_note"])
