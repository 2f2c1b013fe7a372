"""The README as a newcomer meets it: set-up 1 verbatim on a copy of this checkout (a
fresh venv, `pip install .`, no extras), then every command of its "Examples" block verbatim in that
install, with the shared data (DPBENCH_DATA); each must exit 0. The commands of "Reproducing the
papers" run for minutes to hours on two cores (their measured times are in the README): each sweep is
started verbatim, interrupted two seconds after its first job started (sooner if a job finishes), and
must stop with the one-line Ctrl-C message and no failed job; each figure it names must be one dpbench-plot knows (the
figures themselves are drawn from shrunk sweeps in tests/plot)."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SET_UP_1 = "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/dpbench"

pytestmark = pytest.mark.slow


def section_commands(title: str) -> list[str]:
    """The command lines of the first ```bash block under the README heading ``title`` (comments,
    blank lines and trailing ``# …`` notes dropped)."""
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    block = re.search(r"```bash\n(.*?)```", text[start:], re.DOTALL)
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_set_up_1_is_in_the_readme_verbatim():
    assert f"```bash\n{SET_UP_1}\n```" in README.read_text()


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory, worker_id):
    """README set-up 1, verbatim, in a copy of the checkout, made once per test session (the first
    pytest-xdist worker to need it makes it under a lock, the others wait and reuse it); returns the
    environment with its venv first on PATH."""
    shared_data = os.environ.get("DPBENCH_DATA")
    if not shared_data:  # in CI a missing data directory is a failure, as for every real-data test
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)("DPBENCH_DATA is not set")
    base = tmp_path_factory.getbasetemp()
    root = (base if worker_id == "master" else base.parent) / "readme-install"  # one per session
    root.mkdir(exist_ok=True)
    checkout = root / "dpbench"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    # absolute: the README's test command gives DPBENCH_DATA relative to the checkout, the commands run elsewhere
    env.update(DPBENCH_CACHE=str(root / "cache"), DPBENCH_DATA=str(Path(shared_data).resolve()))
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "installed").exists():
            shutil.rmtree(checkout, ignore_errors=True)  # a worker's failed attempt
            shutil.copytree(
                REPO, checkout, ignore=shutil.ignore_patterns(".git", ".venv", "outputs", "__pycache__", "*.egg-info")
            )
            result = subprocess.run(
                SET_UP_1, shell=True, cwd=checkout, env=env, capture_output=True, text=True, timeout=1200, check=False
            )
            assert result.returncode == 0, result.stderr[-3000:]
            assert "results in" in result.stdout.strip().splitlines()[-1], result.stdout[-2000:]
            (root / "installed").touch()
    env["PATH"] = f"{checkout / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"
    return env


def test_every_example_runs_verbatim_after_set_up_1(fresh_install, tmp_path):
    env, work = fresh_install, tmp_path
    commands = section_commands("Examples")
    assert len(commands) >= 8
    for command in commands:
        result = subprocess.run(
            command, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=1200, check=False
        )
        assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"
        assert "Traceback" not in result.stderr, command


REPRODUCTIONS = section_commands("Reproducing the papers")
FIGURES = [c for c in REPRODUCTIONS if c.startswith("dpbench-plot")]
RUNS = [c for c in REPRODUCTIONS if c not in FIGURES]


def test_the_reproductions_start_every_papers_sweep_and_name_figures_dpbench_plot_draws(fresh_install, tmp_path):
    assert len([c for c in RUNS if c.startswith("dpbench -m experiment=")]) >= 6
    listed = subprocess.run(
        ["dpbench-plot", "--list"], cwd=tmp_path, env=fresh_install, capture_output=True, text=True, check=False
    ).stdout
    for command in FIGURES:
        figure = shlex.split(command)[1]
        assert re.search(rf"^\s*{re.escape(figure)}\b", listed, re.MULTILINE), command


@pytest.mark.parametrize("command", RUNS)
def test_each_reproduction_starts_verbatim_and_stops_cleanly(fresh_install, sigint_default, tmp_path, command):
    env, work = fresh_install, tmp_path
    sweep_name = re.search(r"^dpbench -m experiment=(\w+)", command)
    sweep = work / "outputs" / "sweeps" / (sweep_name.group(1) if sweep_name else "none")
    stderr = work / "stderr.txt"
    with stderr.open("w") as err_file:  # not a pipe: unread, a sweep's log lines would fill it and block
        proc = subprocess.Popen(  # no shell between: it would die of the SIGINT itself
            shlex.split(command),
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            start_new_session=True,
            preexec_fn=sigint_default,  # noqa: PLW1509 — subprocess's only way to undo an inherited SIG_IGN (conftest.py)
        )
    deadline = time.monotonic() + (120 if sweep_name else 3)
    while time.monotonic() < deadline and proc.poll() is None and not list(sweep.glob("*/.hydra")):
        time.sleep(0.2)  # until the launcher has started a job
    started = time.monotonic()
    while time.monotonic() < started + 2 and proc.poll() is None and not list(sweep.glob("*/results.parquet")):
        time.sleep(0.2)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group, as in a terminal
    proc.wait(timeout=300)
    err = stderr.read_text()
    failures = {path.parent.name: path.read_text() for path in sweep.glob("*/error.json")}
    assert not failures, f"{command}: a job failed: {failures}"
    assert proc.returncode in (0, 130), f"{command}\n{err[-3000:]}"
    if proc.returncode == 130:
        last = err.strip().splitlines()[-1]  # progress bars end in \r, so splitlines() ends at the message
        assert re.search(r"(dpbench: error|dpbench-audit): interrupted", last), err[-2000:]
        assert "Traceback" not in err, f"{command}\n{err[-3000:]}"
