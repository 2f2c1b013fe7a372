"""Results analyse across jobs. One flat column per hyper-parameter (``p_<name>``),
trace rows that say which job they belong to, and ``dpbench.results.load`` reading a job, a sweep or a
tree into one tidy frame (never reading ``key=value`` directory names as hive partitions)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

from dpbench.engine import run_job
from dpbench.errors import DpbenchError
from dpbench.jobs.plan import make_plan
from dpbench.results import load, param_columns, write_parquet

pytestmark = pytest.mark.xdist_group("test_results_load")  # its module-scoped fixture is made once, on one worker

SMALL = ["algorithm=dp_sgd", "privacy.eps=0.5,2.0", "dataset.n=2000", "dataset.seed=1", "progress=false"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Two ad-hoc sweeps into one directory, as a user runs them: σ = 4 (the default), then σ = 8."""
    root = tmp_path_factory.mktemp("load")
    sweep = root / "sweeps" / "adhoc"
    env = {**os.environ, "DPBENCH_CACHE": str(root / ".cache")}
    for extra in ([], ["algorithm.noise_multiplier=8"]):
        result = subprocess.run(
            [sys.executable, "-m", "dpbench", "-m", *SMALL, *extra, f"hydra.sweep.dir={sweep}"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
    return sweep


def test_a_sweep_loads_as_one_frame_with_a_column_per_hyper_parameter(sweep):
    files = sorted(sweep.rglob("results.parquet"))
    assert len(files) == 4 and all("=" in f.parent.name for f in files)  # key=value names: hive look-alikes
    df = load(sweep)
    assert len(df) == 4
    assert sorted(df["job_dir"]) == sorted(f.parent.name for f in files)
    by_sigma = df.groupby("p_noise_multiplier")["eps"].apply(sorted).to_dict()
    assert by_sigma == {4.0: [0.5, 2.0], 8.0: [0.5, 2.0]}  # σ = 4 and σ = 8 tell apart by column
    assert (df["p_noise"] == "calibrated").all() and df["p_batch_size"].isna().all()
    for _, row in df.iterrows():  # every p_ column is the value in params, and nothing else is
        params = json.loads(row["params"])
        assert {c: row[c] for c in df.columns if c.startswith("p_")} == pytest.approx(
            param_columns(params), nan_ok=True
        )
    assert set(load(sweep.parent)["job_dir"]) == {f"adhoc/{f.parent.name}" for f in files}  # a tree
    assert list(load(files[0].parent)["job_dir"]) == ["."]  # one job


def test_concatenated_traces_of_a_sweep_have_no_duplicate_rows(sweep):
    files = sorted(sweep.rglob("trace.parquet"))
    raw = pd.concat([pq.ParquetFile(f).read().to_pandas() for f in files], ignore_index=True)
    assert {"seed", "config_hash", "algorithm", "dataset", "eps"} <= set(raw.columns)
    assert len(raw) > 0 and not raw.duplicated().any()  # σ = 4 and σ = 8 traces are equal but for their identity
    assert not raw.duplicated(["config_hash", "fold", "rep", "iteration"]).any()
    traces = load(sweep, table="trace")
    assert len(traces) == len(raw) and set(traces["config_hash"]) == set(load(sweep)["config_hash"])


def test_results_written_before_the_p_columns_get_them_from_params(tmp_path):
    params = {"noise": "fixed", "noise_multiplier": 4.0, "batch_size": None, "grid": [1, 2], "opts": {"b": 1, "a": 2}}
    job = tmp_path / "algorithm=dp_sgd,privacy.eps=1.0"
    job.mkdir()
    pd.DataFrame({"algorithm": ["dp_sgd"] * 2, "eps": 1.0, "rep": [0, 1], "params": json.dumps(params)}).to_parquet(
        job / "results.parquet"
    )
    df = load(tmp_path)
    assert df["p_noise"].tolist() == ["fixed"] * 2 and df["p_noise_multiplier"].tolist() == [4.0, 4.0]
    assert df["p_batch_size"].isna().all()
    assert df["p_grid"].tolist() == ["[1, 2]"] * 2 and df["p_opts"].tolist() == ['{"a": 2, "b": 1}'] * 2
    assert df["job_dir"].tolist() == [job.name] * 2


def test_param_columns_flatten_lists_and_dicts_to_json_and_keep_scalars():
    assert param_columns({"a": 1, "b": 0.5, "c": "x", "d": None, "e": True, "f": [0.1, 0.2], "g": {"y": 1}}) == {
        "p_a": 1,
        "p_b": 0.5,
        "p_c": "x",
        "p_d": None,
        "p_e": True,
        "p_f": "[0.1, 0.2]",
        "p_g": '{"y": 1}',
    }


def test_written_p_columns_pass_the_schema(tmp_path):
    frame = pd.DataFrame({"eps": [1.0], **{k: [v] for k, v in param_columns({"k1_values": [0.1], "n": 3}).items()}})
    write_parquet(frame, tmp_path / "results.parquet", table="results")
    assert list(load(tmp_path)["p_k1_values"]) == ["[0.1]"]


def test_a_corrupt_file_an_empty_directory_and_a_missing_path_are_one_line_errors(tmp_path):
    with pytest.raises(DpbenchError, match=re.escape("no results.parquet found under")):
        load(tmp_path)
    with pytest.raises(DpbenchError, match="no such file or directory"):
        load(tmp_path / "nope")
    bad = tmp_path / "job" / "results.parquet"
    bad.parent.mkdir()
    bad.write_bytes(b"PAR1 truncated")
    with pytest.raises(DpbenchError, match="is not a readable parquet file") as info:
        load(tmp_path)
    assert str(bad) in str(info.value) and "\n" not in str(info.value)


def test_the_three_job_kinds_write_p_columns_and_trace_identity(compose_run_config, tmp_path):
    bo = (
        "model=bo",
        "dataset=synthetic_logreg",
        "dataset.n=1500",
        "dataset.d=5",
        "bo.n_candidates=12",
        "bo.train_size=300",
        "bo.test_size=300",
        "bo.pool_size=800",
        "bo.validation_size=200",
        "progress=false",
        "algorithm=kusner_alg1",
        "reps=2",
        "algorithm.iterations=4",
        "trace.nonprivate=true",
    )
    pwa = (
        "dataset=synthetic_pwa",
        "model=pwa",
        "progress=false",
        "dataset.m=8",
        "dataset.d=3",
        "privacy.neighbouring=replace_one",
        "algorithm=pwa_subgradient",
        "algorithm.iterations=20",
        "reps=3",
    )
    glm = ("dataset.n=400", "progress=false", "algorithm=dp_sgd")
    for name, overrides in (("bo", bo), ("pwa", pwa), ("glm", glm)):
        cfg = compose_run_config(*overrides)
        results = run_job(make_plan(cfg), tmp_path / name)
        expected = param_columns(cfg.algorithm_params)
        assert expected and {c: results[c].iloc[0] for c in expected} == expected, name
        trace = pd.read_parquet(tmp_path / name / "trace.parquet")
        assert {"seed", "config_hash"} <= set(trace.columns), name
        assert (trace["config_hash"] == cfg.config_hash).all() and (trace["seed"] == cfg.seed).all(), name
