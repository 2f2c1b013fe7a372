"""A whole-budget trial is trained once per sweep: the fixed job's is the oracle's trial of the same point,
kept on disk (dpbench.trials), with results bit for bit as without the store."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dpbench import trials, tuning
from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan

SMALL = (
    "dataset=synthetic_logreg",
    "dataset.n=1000",
    "dataset.d=5",
    "progress=false",
    "privacy.eps=0.5",
    "privacy.noise_key=seed",
    "cv.folds=2",
    "reps=2",
)
METHODS = ("dp_agd", "dp_sgd", "nonprivate")


@pytest.fixture
def trained(monkeypatch):
    """How many whole-budget trials were trained (not taken from the store)."""
    calls = []
    real = tuning._train
    monkeypatch.setattr(tuning, "_train", lambda *args: calls.append(args[0].name) or real(*args))
    return calls


def _sweep(compose_run_config, root, methods=METHODS, modes=("fixed", "oracle")):
    """Every method under each tuning mode in turn: (results, traces, ledgers) by job."""
    out = {}
    for method in methods:
        for mode in modes:
            job_dir = root / f"{method}-{mode}"
            results = run_job(make_plan(compose_run_config(*SMALL, f"algorithm={method}", f"tuning={mode}")), job_dir)
            trace = pd.read_parquet(job_dir / "trace.parquet")
            out[method, mode] = results, trace, json.loads((job_dir / "run.json").read_text())["ledgers"]
    return out


def test_the_oracle_takes_the_fixed_jobs_trial_and_every_result_is_as_without_the_store(
    compose_run_config, tmp_path, monkeypatch, trained
):
    monkeypatch.setenv("DPBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trials.SWITCH, "0")
    plain = _sweep(compose_run_config, tmp_path / "plain")
    trained_plain = len(trained)
    trained.clear()
    monkeypatch.setenv(trials.SWITCH, "1")
    kept = _sweep(compose_run_config, tmp_path / "kept", modes=("oracle", "fixed"))  # the fixed job takes the oracle's
    runs = 2 * 2  # folds × reps
    # dp_agd's grid has 4 points, dp_sgd's 6, each with the fixed point; nonprivate has no grid (one fit per mode)
    assert trained_plain == runs * ((1 + 4) + (1 + 6) + (1 + 1))
    assert sorted(trained) == sorted(["dp_agd"] * runs * 4 + ["dp_sgd"] * runs * 6 + ["nonprivate"] * runs)
    for job, (results, trace, ledgers) in plain.items():
        kept_results, kept_trace, kept_ledgers = kept[job]
        columns = [c for c in results.columns if c not in ("wall_time_s", "code_identity")]
        pd.testing.assert_frame_equal(results[columns], kept_results[columns], check_exact=True)
        pd.testing.assert_frame_equal(trace, kept_trace, check_exact=True)
        assert ledgers == kept_ledgers


def test_a_damaged_trial_is_trained_again(compose_run_config, tmp_path, monkeypatch, trained, caplog):
    monkeypatch.setenv("DPBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(trials.SWITCH, "1")
    first = _sweep(compose_run_config, tmp_path / "first", methods=("dp_sgd",))
    kept_files = sorted((tmp_path / "cache" / "trials").glob("*.pkl"))
    assert len(kept_files) == 2 * 2 * 6
    damaged = kept_files[0]
    damaged.write_bytes(damaged.read_bytes()[:-7] + b"garbage")
    trained.clear()
    again = _sweep(compose_run_config, tmp_path / "again", methods=("dp_sgd",))
    assert len(trained) == 1 and "does not match its sha256" in caplog.text
    for job in first:
        columns = [c for c in first[job][0].columns if c not in ("wall_time_s", "code_identity")]
        pd.testing.assert_frame_equal(first[job][0][columns], again[job][0][columns], check_exact=True)
