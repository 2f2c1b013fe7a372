"""The bad-input list: every item stops the command with ONE line naming the bad key,
value or file and a non-zero exit status, with no traceback and nothing written — through the command
line (a subprocess, as a user sees it) or, for inputs the shipped loaders cannot produce (NaN
features, an empty table), at the engine. 87 distinct inputs: the 76 of ``CASES`` (values, types,
extremes, unknown names and keys, an unwritable output path), a missing and an empty data file, a
full output disk, Ctrl-C, a bad value inside a multirun, a closed pipe after ``dpbench-status``, NaN,
infinite and empty data, and ``dpbench-plot`` on a corrupt results file or into an unwritable path."""

from __future__ import annotations

import os
import signal
import stat
import sys

import numpy as np
import pytest

from dpbench import engine
from dpbench.data.dataset import Dataset
from dpbench.errors import DpbenchError
from dpbench.jobs import glm
from dpbench.jobs.plan import make_plan

SMALL = ["dataset.n=200", "dataset.d=3", "progress=false"]

CASES = [
    (["privacy.eps=0"], "privacy.eps must be finite and > 0, got 0.0"),
    (["privacy.eps=nan"], "privacy.eps must be a number, got NaN"),
    (["privacy.eps=inf"], "privacy.eps must be finite and > 0, got inf"),
    (["privacy.delta=0"], "privacy.delta must be in (0, 1), got 0.0"),
    (["privacy.delta=1"], "privacy.delta must be in (0, 1), got 1.0"),
    (["algorithm.sampling_rate=0"], "algorithm dp_blsgd: sampling_rate must be a finite number in (0, 1], got 0"),
    (["algorithm.sampling_rate=1.5"], "algorithm dp_blsgd: sampling_rate must be a finite number in (0, 1], got 1.5"),
    (
        ["algorithm=dp_sgd", "algorithm.noise_multiplier=0"],
        "algorithm dp_sgd: noise_multiplier must be a finite number > 0, got 0",
    ),
    (["algorithm=dp_sgd", "algorithm.clip=-1"], "algorithm dp_sgd: clip must be a finite number > 0, got -1"),
    (["algorithm.clip_grad=0"], "algorithm dp_blsgd: clip_grad must be a finite number > 0, got 0"),
    (["dataset.n=0"], "dataset 'synthetic_logreg': option 'n' must be an integer >= 1, got 0"),
    (["model=nope"], "unknown model 'nope'; valid choices: bo, chen_lee_svm"),
    (["experiment=nope"], "unknown experiment 'nope'; valid choices: adult_dp_sgd"),
    (["algorithm=dp_sgd", "model=pwa"], "model=pwa does not fit algorithm=dp_sgd"),
    (["model=liu_l1_svm"], "algorithm dp_blsgd does not handle"),
    # a key nothing reads is a typo, not a setting
    (
        ["+privacy.epss=1"],
        "privacy.epss is not a privacy setting; valid: conversion, count_share, delta, eps, neighbouring, noise_key, sampler",
    ),
    (["+foo=1"], "foo is not a dpbench setting; top-level keys: algorithm, bo, cv"),
    (["+cv.fold=3"], "cv.fold is not a cv setting; valid: folds, test_fraction"),
    (["+data.rownorm=1"], "data.rownorm is not a data setting; valid: allow_download, dtype, row_norm, scaling"),
    (["+trace.evry=2"], "trace.evry is not a trace setting; valid: every, max_share, nonprivate"),
    (["+bo.foo=1"], "bo.foo is not a bo setting; valid: candidate_seed"),
    # a sweep preset without -m would run the defaults once
    (
        ["experiment=kuru_fig3"],
        "experiment=kuru_fig3 is a sweep preset; run it with -m: dpbench -m experiment=kuru_fig3",
    ),
    # extremes: one line, not a traceback from the arithmetic
    (
        ["privacy.eps=1e-300"],
        "privacy.eps must be in [1e-06, 10000] (outside it the accountants' arithmetic under- or ",
    ),
    (["privacy.eps=1e300"], "privacy.eps must be in [1e-06, 10000]"),
    (["privacy.count_share=1"], "privacy.count_share must be in [0, 1), got 1.0"),
    (
        ["dataset.n=1000", "dataset.d=5", "privacy.eps=1e4", "privacy.count_share=0"],
        "privacy.eps = 10000 (privacy.delta = 1e-08) cannot pay for even one planned step of this method",
    ),
    (
        ["dataset.n=1000", "dataset.d=5", "algorithm=dp_sgd", "privacy.neighbouring=replace_one", "privacy.eps=1400"],
        "privacy.eps = 1400 is too large for privacy.neighbouring=replace_one by group privacy",
    ),
    (["seed=18446744073709551616"], "seed must be in [0, 2^63 − 1], got 18446744073709551616"),
    (["seed=-1"], "seed must be in [0, 2^63 − 1], got -1"),
    (["privacy.delta=1e-400"], "privacy.delta must be in (0, 1), got 0.0"),
    (["cv.folds=100000"], "its smallest class has 200 example(s), too few for cv.folds=100000"),
    # wrong types
    (["privacy.eps=abc"], "privacy.eps must be a number, got 'abc'"),
    (["privacy.eps="], "privacy.eps must be a number, got ''"),
    (["privacy.delta=abc"], "privacy.delta must be a number, got 'abc'"),
    (["privacy.delta=nan"], "privacy.delta must be a number, got NaN"),
    (["seed=abc"], "seed must be a number, got 'abc'"),
    (["seed=1.5"], "seed must be an integer, got 1.5"),
    (["reps=1.5"], "reps must be an integer, got 1.5"),
    (["reps=abc"], "reps must be a number, got 'abc'"),
    (["cv.folds=2.5"], "cv.folds must be an integer, got 2.5"),
    (["model.reg=abc"], "model.reg must be a number, got 'abc'"),
    (["trace.every=abc"], "trace.every must be a number, got 'abc'"),
    (["dataset.n=abc"], "dataset 'synthetic_logreg': option 'n' must be an integer >= 1, got 'abc'"),
    (["force=maybe"], "force must be true or false, got 'maybe'"),
    (["progress=2"], "progress must be true or false, got 2"),
    # values out of range
    (["privacy.eps=-1"], "privacy.eps must be finite and > 0, got -1.0"),
    (["privacy.delta=-0.1"], "privacy.delta must be in (0, 1), got -0.1"),
    (["privacy.conversion=nope"], "privacy.conversion must be one of tight, prop1, got 'nope'"),
    (["privacy.sampler=nope"], "privacy.sampler must be one of numpy, secure, got 'nope'"),
    (["privacy.neighbouring=nope"], "privacy.neighbouring must be one of add_remove, replace_one, native, got 'nope'"),
    (["reps=0"], "reps must be ≥ 1, got 0"),
    (["cv.folds=0"], "cv.folds must be ≥ 1, got 0"),
    (["cv.test_fraction=1.5"], "cv.test_fraction must be in [0, 1), got 1.5"),
    (["cv.test_fraction=-0.1"], "cv.test_fraction must be in [0, 1), got -0.1"),
    (["model.reg=-1"], "model.reg must be finite and ≥ 0, got -1.0"),
    (["model.loss=nope"], "model.loss must be one of hinge, huber_hinge, logistic, got 'nope'"),
    (["data.scaling=nope"], "data.scaling must be one of public, whole_file, got 'nope'"),
    (["data.dtype=float16"], "data.dtype must be one of float64, float32, got 'float16'"),
    (
        ["model=bo", "algorithm=kusner_alg1", "data.dtype=float32"],
        "data.dtype=float32 is for linear-model jobs; model=bo keeps its data in float64 (drop data.dtype)",
    ),
    (["data.row_norm=-1"], "data.row_norm must be null or finite and > 0, got -1.0"),
    (["data.row_norm=0"], "data.row_norm must be null or finite and > 0, got 0.0"),
    (["trace.every=-1"], "trace.every must be ≥ 0 (0 = automatic), got -1"),
    (["trace.max_share=0"], "trace.max_share must be null or finite and > 0, got 0.0"),
    (["trace.max_share=abc"], "trace.max_share must be a number"),
    (["dataset.d=0"], "dataset 'synthetic_logreg': option 'd' must be an integer >= 1, got 0"),
    (["algorithm.expected_iterations=0"], "algorithm dp_blsgd: expected_iterations must be a finite number > 0, got 0"),
    (["algorithm.noise=nope"], "algorithm dp_blsgd: noise must be one of laplace, gaussian, got 'nope'"),
    # unknown names and keys
    (["dataset=nope"], "unknown dataset 'nope'; valid choices: adult, bank"),
    (["algorithm=nope"], "unknown algorithm 'nope'; valid choices: amp, amp_hf, dp_adam, dp_agd"),
    (["privacy=nope"], "unknown privacy 'nope'; valid choices: default"),
    (["variant=nope"], "unknown variant 'nope'; valid choices: (none defined)"),
    (
        ["privacy.epss=1"],
        "privacy.epss is not a key of this configuration: a typo, or a key of a privacy choice not selected",
    ),
    (["algorithm.foo=1"], "algorithm.foo is not a key of this configuration"),
    (["tuning.trials_mean=0"], "tuning.trials_mean is not a key of this configuration"),  # a key of tuning=private only
    (
        ["hydra/launcher=nope"],
        "Could not find 'hydra/launcher/nope' Available options in 'hydra/launcher': basic joblib",
    ),
    (["cv=3"], "cv is a section, not a value: set one of its keys (folds, test_fraction), e.g. cv.folds=…, got cv=3"),
    (["data=1"], "data is a section, not a value"),
    # paths
    (["hydra.run.dir=/dev/null/run"], "/dev/null/run: Not a directory"),
    # tuning=
    (["tuning=nope"], "unknown tuning 'nope'; valid choices: fixed, oracle, private"),
    (["+tuning.trials=3"], "tuning.trials is not a tuning setting"),
    (["tuning=private", "privacy.neighbouring=replace_one"], "use privacy.neighbouring=add_remove or tuning=fixed"),
]


@pytest.mark.parametrize("args, expected", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_stops_with_one_line_and_writes_nothing(cli, tmp_path, args, expected):
    result = cli(SMALL + args, tmp_path)  # the case last, so it overrides SMALL
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dpbench: error: ") and expected in lines[0]
    assert not (tmp_path / "outputs").exists()  # nothing written, not even Hydra's run directory


def _one_error_line(result, status: int = 2) -> str:
    assert result.returncode == status, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpbench: error: "), result.stderr
    return lines[0]


def test_a_missing_data_file_is_named_with_where_to_put_it(cli, tmp_path):
    line = _one_error_line(cli(["dataset=adult", "data_dir=/nonexistent/dpbench-data", "progress=false"], tmp_path))
    assert "/nonexistent/dpbench-data/adult_a9a/a9a" in line and "data.allow_download=true" in line
    assert not (tmp_path / "outputs").exists()


def test_a_full_output_disk_is_one_line(tmp_path):
    """Writing past RLIMIT_FSIZE fails as a full disk does (EFBIG instead of ENOSPC; Python ignores SIGXFSZ)."""
    import resource
    import subprocess
    import sys

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    env = {**os.environ, "DPBENCH_CACHE": str(tmp_path / ".cache")}
    result = subprocess.run(
        [sys.executable, "-m", "dpbench", *SMALL, "dataset.n=1000"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=small_files,
        timeout=300,
        check=False,
    )
    assert "File too large" in _one_error_line(result)


def test_ctrl_c_is_one_line_and_status_130(tmp_path, sigint_default):
    """SIGINT mid-job: one line, exit 130 (128 + SIGINT), no traceback."""
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "DPBENCH_CACHE": str(tmp_path / ".cache")}
    args = [
        sys.executable,
        "-m",
        "dpbench",
        "algorithm=dp_sgd",
        "dataset.n=4000",
        "dataset.d=20",
        "reps=200",
        "progress=false",
    ]
    proc = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,  # noqa: PLW1509 — subprocess's only way to undo an inherited SIG_IGN (conftest.py)
    )
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("outputs/runs/*/.runs/*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)  # until the first run is stored: the job is running
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    result = subprocess.CompletedProcess(args, proc.returncode, "", err)
    assert "interrupted; finished runs are kept and the same command resumes the rest" in _one_error_line(result, 130)


def test_a_bad_value_in_a_multirun_is_one_line_and_the_status_pipe_closes_quietly(cli, tmp_path):
    """The good job runs; the command ends with one line naming the failed job; ``dpbench-status``
    into a reader that closes early (``| head``) ends without a BrokenPipeError."""
    import subprocess
    import sys

    sweep = tmp_path / "sweep"
    args = ["-m", "algorithm=nonprivate", "privacy.eps=0.5,-1", "dataset.n=1000", "dataset.d=5", "progress=false"]
    line = _one_error_line(cli([*args, f"hydra.sweep.dir={sweep}"], tmp_path), status=1)
    assert "1 of 2 jobs failed, e.g. algorithm=nonprivate privacy.eps=-1" in line
    assert "ConfigError: privacy.eps must be finite and > 0, got -1.0" in line and f"dpbench-status {sweep}" in line

    status = subprocess.Popen(
        [sys.executable, "-m", "dpbench.status", str(sweep)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    status.stdout.close()  # the reader is gone before the first line is written
    err = status.stderr.read().decode()
    assert status.wait(timeout=120) == 1 and err == "", err


def test_results_follow_the_umask(cli, tmp_path):
    """Files are written 0666 & ~umask (mkstemp alone would make them 0600)."""
    old = os.umask(0o027)
    try:
        result = cli(["dataset.n=1000", "dataset.d=5", "progress=false"], tmp_path)  # both classes at this size
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    written = [p for name in ("results.parquet", "trace.parquet", "run.json") for p in tmp_path.rglob(name)]
    assert len(written) == 3 and all(stat.S_IMODE(p.stat().st_mode) == 0o640 for p in written)


def test_an_empty_data_file_is_refused_by_its_checksum(cli, tmp_path):
    """An empty file where a9a should be: one line naming the file, nothing run."""
    data = tmp_path / "data" / "adult_a9a"
    data.mkdir(parents=True)
    for name in ("a9a.gz", "a9a.t.gz"):
        (data / name).write_bytes(b"")
    result = cli(["dataset=adult", f"data_dir={tmp_path / 'data'}", "progress=false"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "a9a" in lines[0] and "sha256" in lines[0], result.stderr


@pytest.mark.parametrize(
    "X, y, message",
    [
        (np.zeros((0, 3)), np.zeros(0), "dataset toy: no usable rows (0 feature rows, 0 labels)"),
        (
            np.array([[np.nan, 1.0], [1.0, 2.0]]),
            np.array([1.0, -1.0]),
            "dataset toy: features contain NaN or infinite values",
        ),
        (
            np.array([[np.inf, 1.0], [1.0, 2.0]]),
            np.array([1.0, -1.0]),
            "dataset toy: features contain NaN or infinite values",
        ),
    ],
    ids=["empty", "nan", "inf"],
)
def test_empty_or_non_finite_data_is_refused_before_anything_runs(
    compose_run_config, tmp_path, monkeypatch, X, y, message
):
    monkeypatch.setattr(glm, "load_dataset", lambda *a, **k: Dataset("toy", X, y, None, None, "x", {}))
    with pytest.raises(DpbenchError) as err:
        engine.run_job(make_plan(compose_run_config("progress=false")), tmp_path)
    assert str(err.value) == message
    assert not (tmp_path / "results.parquet").exists()


@pytest.mark.slow
def test_dpbench_plot_names_a_corrupt_results_file_and_an_unwritable_output(cli, tmp_path):
    """Companion commands get one line too: a corrupt results.parquet is named, not a pyarrow traceback."""
    assert cli(["dataset.n=1000", "dataset.d=5", "progress=false"], tmp_path).returncode == 0
    (results,) = tmp_path.glob("outputs/runs/*/results.parquet")
    unwritable = cli(
        ["accuracy-vs-eps", str(tmp_path / "outputs"), "--out", "/dev/null/figs"], tmp_path, module="dpbench.plot"
    )
    assert (
        unwritable.returncode == 2
        and unwritable.stderr.strip() == "dpbench-plot: error: /dev/null/figs: Not a directory"
    )
    results.write_bytes(b"not a parquet file")
    corrupt = cli(
        ["accuracy-vs-eps", str(tmp_path / "outputs"), "--out", str(tmp_path / "figs")], tmp_path, module="dpbench.plot"
    )
    lines = corrupt.stderr.strip().splitlines()
    assert corrupt.returncode == 2 and len(lines) == 1 and f"{results} is not a readable parquet file" in lines[0]
    assert not (tmp_path / "figs").exists()


def _loky_workers(parent: int) -> list[int]:
    """The pids of loky's worker processes among ``parent``'s children (Linux ``/proc``)."""
    from pathlib import Path

    workers = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (
                int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent
                and b"popen_loky" in (proc / "cmdline").read_bytes()
            ):
                workers.append(int(proc.name))
        except (OSError, ValueError, IndexError):  # the process ended while being read
            continue
    return workers


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the workers' signal masks from /proc")
def test_ctrl_c_while_joblib_workers_start_is_one_line(tmp_path, sigint_default):
    """Ctrl-C reaches the whole process group, including loky workers still importing joblib (before
    any dpbench code runs in them): they start with SIGINT blocked, so they print no traceback, and the
    sweep ends with the one-line message. Without the block, a SIGINT 0.05-0.5 s after a worker
    appeared printed a KeyboardInterrupt traceback from its imports every time (measured)."""
    import subprocess
    import time

    args = ["-m", "algorithm=dp_sgd,nonprivate", "dataset.n=1000", "dataset.d=5", "hydra/launcher=joblib"]
    with (tmp_path / "stderr.txt").open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dpbench", *args],
            cwd=tmp_path,
            env={**os.environ, "DPBENCH_CACHE": str(tmp_path / ".cache")},
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            start_new_session=True,
            preexec_fn=sigint_default,  # noqa: PLW1509 — subprocess's only way to undo an inherited SIG_IGN (conftest.py)
        )
    deadline = time.monotonic() + 120
    while not (workers := _loky_workers(proc.pid)) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    blocked = [int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) for line in _status_lines(workers, "SigBlk:")]
    time.sleep(0.1)  # the workers are importing joblib and numpy
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=120)
    err = (tmp_path / "stderr.txt").read_text()
    assert workers and all(blocked), f"loky workers {workers} started without SIGINT blocked"
    assert proc.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert "dpbench: error: interrupted" in err.strip().splitlines()[-1]


def _status_lines(pids: list[int], field: str) -> list[str]:
    from pathlib import Path

    lines = []
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        lines += [line for line in status if line.startswith(field)]
    return lines


def test_a_ctrl_c_a_callback_swallows_in_a_job_is_never_printed(monkeypatch, capfd):
    """In a sweep's worker, a SIGINT landing in a callback that cannot raise (the import system's weakref
    callbacks; here a ``__del__``) reaches sys.unraisablehook with the worker's own SIGINT handler in
    place: during a job it is dropped, with nothing printed (the sweep's process ends the sweep); before,
    the hook raised it again from its own frame and Python printed "Exception ignored in
    sys.unraisablehook … Traceback" (seen once in CI's README reproduction of deviations_chen_lee).
    Outside a job, and for any other exception, Python's own report is kept."""
    from types import SimpleNamespace

    from dpbench import ctrl_c

    class InterruptedFinaliser:
        def __del__(self):
            raise KeyboardInterrupt

    monkeypatch.setattr(ctrl_c, "_JOB_RUNNING", True)
    monkeypatch.setattr(sys, "unraisablehook", ctrl_c._drop_swallowed_interrupt)
    previous = signal.signal(signal.SIGINT, ctrl_c._interrupt_if_a_job_runs)
    try:
        InterruptedFinaliser()  # finalised at once: its KeyboardInterrupt goes to the hook
        for _ in range(1000):  # the job's next instructions
            pass
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capfd.readouterr().err == ""

    reported = []
    monkeypatch.setattr(sys, "__unraisablehook__", reported.append)
    swallowed = SimpleNamespace(
        exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(), exc_traceback=None, err_msg=None, object=None
    )
    other = SimpleNamespace(**{**vars(swallowed), "exc_type": ValueError, "exc_value": ValueError()})
    ctrl_c._drop_swallowed_interrupt(other)
    monkeypatch.setattr(ctrl_c, "_JOB_RUNNING", False)
    ctrl_c._drop_swallowed_interrupt(swallowed)
    assert reported == [other, swallowed]
