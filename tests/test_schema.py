"""Every results/trace column is classified as public, release or measurement; the class
travels in the parquet files and docs/schema.md lists them all. (tests/test_eps_recomputation.py checks the
files every registered algorithm writes.)"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan
from dpbench.results import read_column_classes, write_parquet
from dpbench.schema import (
    CLASSES,
    MEASUREMENT,
    RELEASE,
    TABLES,
    UnclassifiedColumn,
    column_classes,
    markdown,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "schema.md"


def test_docs_schema_page_is_the_generated_one():
    assert DOCS.read_text() == markdown(), "regenerate it: python -m dpbench.schema > docs/schema.md"


def test_every_registered_column_has_a_known_class_and_a_meaning():
    for registry in TABLES.values():
        for name, (cls, meaning) in registry.items():
            assert cls in CLASSES and meaning, name


def test_what_the_review_named_is_a_measurement_never_a_release():
    for column in (
        "train_objective",
        "test_accuracy",
        "fstar",
        "value_best_observed",
        "gain_best_observed",
        "suboptimality",
        "wall_time_s",
    ):
        assert TABLES["results"][column][0] == MEASUREMENT
    for column in ("train_objective", "value", "best_so_far", "candidate"):
        assert TABLES["trace"][column][0] == MEASUREMENT
    assert TABLES["results"]["value_released"][0] == RELEASE and TABLES["results"]["eps_spent"][0] == RELEASE


def test_an_unclassified_column_is_refused_and_nothing_is_written(tmp_path):
    frame = pd.DataFrame({"eps": [1.0], "secret_statistic": [3.0]})
    with pytest.raises(UnclassifiedColumn, match="secret_statistic"):
        write_parquet(frame, tmp_path / "results.parquet", table="results")
    assert not (tmp_path / "results.parquet").exists()


def test_written_files_carry_the_classes(compose_run_config, tmp_path):
    run_job(make_plan(compose_run_config("dataset.n=400", "progress=false", "algorithm=dp_sgd")), tmp_path)
    for table in ("results", "trace"):
        path = tmp_path / f"{table}.parquet"
        classes = read_column_classes(path)
        assert classes == column_classes(table, pd.read_parquet(path).columns)
        assert {"public", "release", "measurement"} >= set(classes.values())
    assert read_column_classes(tmp_path / "results.parquet")["test_accuracy"] == MEASUREMENT
