"""A job directory is claimed while its job runs (a second identical
command waits, then skips), and an interrupted job resumes from the fold × rep runs it finished."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd

from dpbench.jobs.plan import make_plan
from dpbench.resume import RUNS_DIR

JOB = ["algorithm=dp_sgd", "dataset.n=3000", "dataset.d=10", "cv.folds=2", "reps=6", "progress=false"]


def _start(args, cwd, preexec_fn=None):
    env = {**os.environ, "DPBENCH_CACHE": str(cwd / ".cache")}
    return subprocess.Popen(
        [sys.executable, "-m", "dpbench", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,  # noqa: PLW1509 — sigint_default: subprocess's only way to undo an inherited SIG_IGN (conftest.py)
    )


def _job_dir(cwd):
    (job,) = (cwd / "outputs" / "runs").iterdir()
    return job


def _same_results(a: pd.DataFrame, b: pd.DataFrame) -> None:
    columns = [c for c in a.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(a[columns], b[columns], check_exact=True)


def test_an_interrupted_job_resumes_from_its_finished_runs_and_equals_an_uninterrupted_one(
    cli, tmp_path, sigint_default
):
    interrupted, clean = tmp_path / "interrupted", tmp_path / "clean"
    interrupted.mkdir()
    clean.mkdir()
    proc = _start(JOB, interrupted, sigint_default)
    deadline = time.monotonic() + 300
    while len(list(interrupted.glob(f"outputs/runs/*/{RUNS_DIR}/*.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    job = _job_dir(interrupted)
    kept = len(list((job / RUNS_DIR).glob("*.json")))
    assert 3 <= kept < 12 and not (job / "results.parquet").exists()

    again = cli(JOB, interrupted)
    assert again.returncode == 0, again.stderr
    assert f"resumed: {kept} of 12 runs were already finished" in (job / "dpbench.log").read_text()
    assert not (job / RUNS_DIR).exists()  # the stored runs are dropped once results.parquet is written

    key = clean / job.relative_to(interrupted) / "noise.key"  # the uninterrupted run draws the same secret noise
    key.parent.mkdir(parents=True)
    shutil.copy2(job / "noise.key", key)
    assert cli(JOB, clean).returncode == 0
    for name in ("results.parquet", "trace.parquet"):
        _same_results(pd.read_parquet(job / name), pd.read_parquet(_job_dir(clean) / name))


def test_stored_runs_of_another_configuration_are_not_reused(compose_run_config, tmp_path):
    from dpbench.engine import run_job

    out = tmp_path / "job"
    first = run_job(make_plan(compose_run_config(*JOB[:-2], "reps=2", "progress=false")), out)
    (out / "results.parquet").unlink()  # as if interrupted after every run was stored: put them back
    from dpbench.resume import RunStore

    other = compose_run_config(*JOB[:-2], "reps=2", "privacy.eps=0.5", "progress=false")
    code = first["code_identity"].iloc[0]
    store = RunStore(out, first["config_hash"].iloc[0], code)
    assert store.load(0, 0) is None  # cleared once the results were written
    trace = pd.DataFrame({"fold": [0]})
    store.save(0, 0, {"test_accuracy": 2.0}, trace, {})
    assert RunStore(out, other.config_hash, code).load(0, 0) is None
    rerun = run_job(make_plan(other), out)
    assert (rerun["test_accuracy"] <= 1.0).all()


def test_two_identical_commands_at_once_compute_the_job_once(tmp_path):
    # long enough that the second starts before the first ends: ≈ 10 s of runs after the first one (a job's
    # later runs reuse the RDP prices its first run computed, so each takes ≈ 50 ms)
    job = ["algorithm=dp_sgd", "dataset.n=20000", "dataset.d=10", "reps=200", "progress=false"]
    first = _start(job, tmp_path)
    deadline = time.monotonic() + 300
    while not list(tmp_path.glob(f"outputs/runs/*/{RUNS_DIR}/*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = _start(job, tmp_path)  # while the first is still computing
    (first_out, _), (second_out, _) = (proc.communicate(timeout=600) for proc in (first, second))
    assert (first.returncode, second.returncode) == (0, 0)
    assert "another dpbench process is running the job" not in first_out
    assert "another dpbench process is running the job" in second_out
    assert "skipping dp_sgd: finished results already in" in second_out
    assert first_out.splitlines()[-1].split(";")[0] == second_out.splitlines()[-1].split(";")[0]  # the same headline
