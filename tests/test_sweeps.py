"""Sweeps that survive faults: a SIGKILLed multirun resumes without recomputing, duplicating or losing
jobs; unreadable results are rerun; failed jobs leave error.json; dpbench-status and manifest.json
report every job; the Slurm and Ray launcher presets."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from itertools import product
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from dpbench.jobs.plan import make_plan
from dpbench.results import ERROR_FILE, read_finished
from dpbench.status import MANIFEST_FILE, expand_sweep, inspect_job, sweep_status
from dpbench.status import main as status_main

SMALL = ["dataset.n=2000", "dataset.seed=1", "progress=false"]
ALGORITHMS, EPSILONS, SEEDS = ("dp_sgd", "nonprivate"), ("0.1", "0.2", "0.4", "0.8"), ("0", "1")


def _sweep_args(sweep: Path, reps: int) -> list[str]:
    return [
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        f"algorithm={','.join(ALGORITHMS)}",
        f"privacy.eps={','.join(EPSILONS)}",
        f"seed={','.join(SEEDS)}",
        f"reps={reps}",
        *SMALL,
        f"hydra.sweep.dir={sweep}",
    ]


def _expected_jobs(reps: int) -> dict[str, tuple[str, ...]]:
    """Job directory name (Hydra's sorted override_dirname) → that job's own overrides."""
    jobs = {}
    for algorithm, eps, seed in product(ALGORITHMS, EPSILONS, SEEDS):
        name = f"algorithm={algorithm},dataset.n=2000,dataset.seed=1,privacy.eps={eps},reps={reps},seed={seed}"
        jobs[name] = (f"algorithm={algorithm}", f"privacy.eps={eps}", f"seed={seed}", f"reps={reps}", *SMALL)
    return jobs


def _finished(sweep: Path) -> dict[str, os.stat_result]:
    """Job directory name → stat of its results.parquet, for every readable one."""
    return {p.parent.name: p.stat() for p in sweep.rglob("results.parquet") if read_finished(p) is not None}


def _live_group_members(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that are still running (zombies waiting for a reaper do not count)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    members = []
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(stat.parent.name))
    return members


def _some_finished_one_running(sweep: Path) -> bool:
    if not sweep.is_dir():
        return False
    results = len(list(sweep.rglob("results.parquet")))
    return results >= 2 and sum(p.is_dir() for p in sweep.iterdir()) > results


def _kill_midway(args: list[str], cwd: Path, sweep: Path, total: int, log_path: Path) -> bool:
    """Start the sweep in its own session, SIGKILL its whole process group once some jobs finished
    while another is running (its directory exists, its results do not), wait until every process
    of the group is gone. False when the sweep finished before the kill."""
    env = {**os.environ, "DPBENCH_CACHE": str(cwd / ".cache")}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpbench", *args],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 180
    try:
        while not _some_finished_one_running(sweep):
            assert time.monotonic() < deadline, f"no results after 180 s:\n{log_path.read_text()[-3000:]}"
            if proc.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while _live_group_members(proc.pid):
        assert time.monotonic() < deadline, f"processes survived SIGKILL: {_live_group_members(proc.pid)}"
        time.sleep(0.05)
    return len(_finished(sweep)) < total


def _status(cli, sweep: Path, cwd: Path, *flags: str):
    return cli([*flags, str(sweep)], cwd, module="dpbench.status")


def _status_of_one(job_dir: Path) -> tuple[str, str | None]:
    job = inspect_job(job_dir.parent, [], job_dir.name)
    return job.status, job.error


@pytest.mark.slow
def test_sigkilled_sweep_resumes_without_recomputing_duplicating_or_losing_jobs(cli, tmp_path, compose_run_config):
    reps = 8
    for attempt in range(3):  # the kill must land mid-sweep; longer jobs if the sweep outran it
        sweep = tmp_path / f"sweep{attempt}"
        if _kill_midway(_sweep_args(sweep, reps), tmp_path, sweep, 16, tmp_path / f"killed{attempt}.log"):
            break
        reps *= 4
    else:
        pytest.fail("the sweep always finished before it could be killed")
    expected = _expected_jobs(reps)

    # partial state: some jobs finished, the rest incomplete or never started; a killed sweep has no manifest
    before = _finished(sweep)
    assert 2 <= len(before) < len(expected) and set(before) <= set(expected)
    assert not (sweep / MANIFEST_FILE).exists()
    status = _status(cli, sweep, tmp_path, "--json")
    assert status.returncode == 1, status.stderr
    report = json.loads(status.stdout)
    assert report["exact"] and report["counts"]["finished"] == len(before)
    assert report["counts"]["incomplete"] + report["counts"]["missing"] == len(expected) - len(before)
    assert {job["job_dir"] for job in report["jobs"]} == set(expected)

    again = cli(_sweep_args(sweep, reps), tmp_path, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]

    files = sorted(sweep.rglob("results.parquet"))
    assert sorted(f.parent.name for f in files) == sorted(expected)  # one file per job: none lost, none extra
    assert {job for _, job in expand_sweep(OmegaConf.load(sweep / "multirun.yaml"))} == set(expected)
    for path in files:
        df = read_finished(path)
        assert df is not None, path
        cfg = compose_run_config(*expected[path.parent.name])
        assert set(df["config_hash"]) == {cfg.config_hash}
        assert json.loads((path.parent / "run.json").read_text())["config_hash"] == cfg.config_hash
        assert len(df) == reps and sorted(df["rep"]) == list(range(reps))  # rows not doubled
        assert set(df["algorithm"]) == {cfg.algorithm} and set(df["seed"]) == {cfg.seed}
        assert not (path.parent / ERROR_FILE).exists()
    after = _finished(sweep)
    for job, stat in before.items():  # finished jobs were skipped, not recomputed
        assert (after[job].st_ino, after[job].st_mtime_ns) == (stat.st_ino, stat.st_mtime_ns), job

    manifest = json.loads((sweep / MANIFEST_FILE).read_text())
    assert manifest["complete"] and manifest["exact"] and manifest["counts"]["finished"] == len(expected)
    for job in manifest["jobs"]:
        df = pd.read_parquet(sweep / job["results"])
        assert job["status"] == "finished" and job["rows"] == len(df) == reps
        assert job["config_hash"] == df["config_hash"].iloc[0]
        assert sorted(map(str.lower, job["overrides"])) == sorted(expected[job["job_dir"]])
    assert _status(cli, sweep, tmp_path).returncode == 0


@pytest.mark.slow
def test_truncated_and_corrupt_results_are_detected_and_rerun_with_a_warning(cli, tmp_path):
    sweep = tmp_path / "sweep"
    args = [
        "-m",
        "algorithm=dp_sgd,nonprivate,majority",
        "privacy.eps=0.5",
        "reps=2",
        *SMALL,
        f"hydra.sweep.dir={sweep}",
    ]
    first = cli(args, tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    files = {p.parent.name.split(",")[0]: p for p in sweep.rglob("results.parquet")}
    assert sorted(files) == ["algorithm=dp_sgd", "algorithm=majority", "algorithm=nonprivate"]
    truncated, corrupt, intact = files["algorithm=dp_sgd"], files["algorithm=nonprivate"], files["algorithm=majority"]
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    corrupt.write_bytes(b"not a parquet file " * 64)
    intact_stat = intact.stat()

    status = _status(cli, sweep, tmp_path)
    assert status.returncode == 1
    unreadable = [line for line in status.stdout.splitlines() if "unreadable" in line]
    assert len(unreadable) == 2 and all(line.startswith("incomplete") for line in unreadable), status.stdout

    again = cli(args, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    for path in (truncated, corrupt):
        df = read_finished(path)
        assert df is not None and len(df) == 2
        log = (path.parent / "dpbench.log").read_text()
        assert f"{path} is unreadable or incomplete; rerunning the job" in log
    assert (intact.stat().st_ino, intact.stat().st_mtime_ns) == (intact_stat.st_ino, intact_stat.st_mtime_ns)
    assert _status(cli, sweep, tmp_path).returncode == 0


@pytest.mark.slow
def test_failed_job_leaves_a_marker_the_sweep_still_fails_and_the_manifest_names_it(cli, tmp_path):
    sweep = tmp_path / "sweep"
    result = cli(["-m", "algorithm=nonprivate", "privacy.eps=0.5,-1", *SMALL, f"hydra.sweep.dir={sweep}"], tmp_path)
    assert result.returncode == 1  # as before: Hydra reports the failed job and the command fails
    assert "privacy.eps must be finite and > 0, got -1.0" in result.stderr
    good = sweep / "algorithm=nonprivate,dataset.n=2000,dataset.seed=1,privacy.eps=0.5"
    bad = sweep / "algorithm=nonprivate,dataset.n=2000,dataset.seed=1,privacy.eps=-1"
    assert read_finished(good / "results.parquet") is not None  # the other job of the batch still ran
    marker = json.loads((bad / ERROR_FILE).read_text())
    assert marker["type"] == "ConfigError" and marker["message"] == "privacy.eps must be finite and > 0, got -1.0"
    assert marker["time"] and "Traceback" in marker["traceback"]

    manifest = json.loads((sweep / MANIFEST_FILE).read_text())
    assert manifest["counts"] == {"finished": 1, "stale": 0, "failed": 1, "incomplete": 0, "missing": 0}
    failed = [job for job in manifest["jobs"] if job["status"] == "failed"]
    assert failed[0]["job_dir"] == bad.name and failed[0]["error"].startswith("ConfigError: privacy.eps must be")
    status = _status(cli, sweep, tmp_path, "--quiet")
    assert status.returncode == 1
    assert f"failed          -  {bad.name}  ConfigError: privacy.eps must be finite" in status.stdout


def test_a_later_successful_attempt_removes_the_failure_marker(tmp_path, compose_run_config, monkeypatch):
    from dpbench import engine
    from dpbench.jobs.glm import GLMJob

    cfg = compose_run_config("algorithm=nonprivate", *SMALL)
    out = tmp_path / "job"

    def broken(_kind, _cfg, _store):
        raise RuntimeError("simulated crash\nsecond line")

    with monkeypatch.context() as patch:
        patch.setattr(GLMJob, "run", broken)
        with pytest.raises(RuntimeError):
            engine.run_job(make_plan(cfg), out)
    marker = json.loads((out / ERROR_FILE).read_text())
    assert (marker["type"], marker["message"]) == ("RuntimeError", "simulated crash")
    assert _status_of_one(out) == ("failed", "RuntimeError: simulated crash")

    engine.run_job(make_plan(cfg), out)
    assert not (out / ERROR_FILE).exists()
    assert _status_of_one(out) == ("finished", None)


def test_status_of_a_bad_directory_is_one_line_and_exit_2(tmp_path, capsys):
    assert status_main([str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == f"dpbench-status: error: {tmp_path / 'nope'} is not a directory"
    (tmp_path / "empty").mkdir()
    assert status_main([str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a sweep directory: no usable multirun.yaml" in err[0]


def test_status_without_multirun_yaml_falls_back_to_the_manifest_and_job_dirs(tmp_path):
    sweep = tmp_path / "sweep"
    (sweep / "a=1" / ".hydra").mkdir(parents=True)
    (sweep / "a=1" / ".hydra" / "overrides.yaml").write_text("- a=1\n")
    (sweep / MANIFEST_FILE).write_text(json.dumps({"jobs": [{"overrides": ["a=2"], "job_dir": "a=2"}]}))
    report = sweep_status(sweep)
    assert not report.exact and "no multirun.yaml" in report.source
    assert {(job.job_dir, job.status) for job in report.jobs} == {("a=2", "missing"), ("a=1", "incomplete")}
    assert not report.complete


def test_status_expands_a_preset_sweep_with_variants_like_hydra(tmp_path):
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(config_dir())):
        cfg = compose(config_name="config", overrides=["experiment=chen_lee_fig1", "reps=1"], return_hydra_config=True)
    jobs = expand_sweep(cfg)
    assert len(jobs) == 2 * 21
    assert jobs[0] == (
        ["privacy.eps=0.05", "variant=default", "experiment=chen_lee_fig1", "reps=1"],
        "privacy.eps=0.05,reps=1,variant=default",
    )
    assert len({subdir for _, subdir in jobs}) == 42 and jobs[-1][1] == "privacy.eps=0.2,reps=1,variant=zeta_0.2"


def test_dpbench_status_is_a_console_script():
    from importlib.metadata import entry_points

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts.get("dpbench-status") == "dpbench.status:main"


def test_slurm_launcher_preset_composes():
    if importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None:
        pytest.skip("hydra-submitit-launcher is not installed (pip install '.[cluster]')")
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(config_dir())):
        cfg = compose(
            config_name="config",
            overrides=["hydra/launcher=slurm", "hydra.launcher.partition=cpu"],
            return_hydra_config=True,
        )
    launcher = cfg.hydra.launcher
    assert launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher.cpus_per_task, launcher.partition) == (1, "cpu")
    assert launcher.timeout_min > 0 and launcher.mem_gb > 0 and launcher.array_parallelism > 0


def _running_ray_jobs() -> list[int]:
    """Ray workers executing a Hydra job now: Ray titles a worker ``ray::<task>`` while it runs the task
    (``_run_job``, hydra-ray-launcher's) and ``ray::IDLE`` otherwise."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::_run_job"):
                    pids.append(int(entry.name))
            except OSError:
                continue  # the process ended meanwhile
    return pids


@pytest.mark.slow
def test_ray_launcher_runs_a_sweep_and_survives_a_killed_worker(cli, tmp_path):
    """A 4-job sweep on a local Ray cluster, end to end. While it runs, the worker
    process of a running job is killed (SIGKILL); Ray retries that task, the job resumes from the runs
    it had finished (``.runs/``), and the sweep ends with every job's results and a complete manifest.
    Running the command again then finds every job finished and recomputes none. (.ci/run installs the
    ray extra; in CI a missing one is a failure.)"""
    for module in ("ray", "hydra_plugins.hydra_ray_launcher"):
        if importlib.util.find_spec(module) is None:
            (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
                "the ray extra is not installed (pip install '.[ray]')"
            )
    sweep = tmp_path / "sweep"
    reps = 60
    args = [
        "-m",
        "hydra/launcher=ray",
        "+hydra.launcher.ray.init.include_dashboard=false",  # a local cluster starts about 3 s sooner without it
        "algorithm=dp_sgd",
        "algorithm.epochs=20",
        "privacy.eps=0.5,1.0",
        "seed=0,1",
        f"reps={reps}",
        *SMALL,
        f"hydra.sweep.dir={sweep}",
    ]
    env = {**os.environ, "DPBENCH_CACHE": str(tmp_path / ".cache")}
    with (tmp_path / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpbench", *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    killed = None
    deadline = time.monotonic() + 600
    try:
        while killed is None and proc.poll() is None and time.monotonic() < deadline:
            running = _running_ray_jobs()
            if running:
                os.kill(running[0], signal.SIGKILL)
                killed = running[0]
            time.sleep(0.2)
        proc.wait(timeout=900)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    stderr = (tmp_path / "stderr.txt").read_text()
    assert killed is not None, "no Ray worker was seen running a job: nothing was killed\n" + stderr[-3000:]
    assert proc.returncode == 0, stderr[-3000:]
    results = sorted(sweep.rglob("results.parquet"))
    assert len(results) == 4
    for path in results:
        rows = pd.read_parquet(path)
        assert len(rows) == reps and not rows.duplicated(["fold", "rep"]).any(), path
    assert json.loads((sweep / MANIFEST_FILE).read_text())["complete"]
    finished = {path: path.stat().st_mtime_ns for path in results}
    again = cli(args, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {path: path.stat().st_mtime_ns for path in results} == finished  # resumed: nothing recomputed


def test_finish_open_sweeps_finishes_every_open_multirun(monkeypatch):
    """Each callback removes itself from the open list as it finishes; none may be skipped."""
    from dpbench import sweep

    finished = []
    callbacks = [sweep.ManifestCallback() for _ in range(3)]
    monkeypatch.setattr(sweep, "_OPEN", list(callbacks))
    monkeypatch.setattr(
        sweep.ManifestCallback, "finish", lambda self, raised=False: (sweep._OPEN.remove(self), finished.append(self))
    )
    sweep.finish_open_sweeps()
    assert finished == callbacks and sweep._OPEN == []
