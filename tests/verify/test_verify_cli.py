"""``dpbench-verify DIR`` (issue 21): passes on untouched results, and names the job and row of every edit
that changes what a results file or run.json says — an ε, a ledger's events, a budget, a measurement only a
rerun can catch — with exit status 1; a bad directory is one line and status 2. Nothing is written into DIR."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpbench.results import read_column_classes
from dpbench.verify.checks import check_budget, reporting
from dpbench.verify.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
SWEEP = ["algorithm=dp_sgd,dp_gd,nonprivate", "dataset=synthetic_logreg", "dataset.n=600", "privacy.eps=0.5", "cv.folds=2",
         "reps=2", "progress=false"]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def verify(capsys, *args) -> tuple[int, list[str], str]:
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err


def failures(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("FAIL ")]


def rewrite_results(path: Path, edit) -> None:
    """Apply ``edit(frame)`` to a results file and write it back with its schema and column metadata."""
    table = pq.read_table(path)
    frame = table.to_pandas()
    edit(frame)
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False), path)


def job(root: Path, algorithm: str) -> Path:
    (found,) = [p for p in root.iterdir() if p.is_dir() and f"algorithm={algorithm}," in p.name + ","]
    return found


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A small sweep run now: dp_sgd (Poisson-subsampled Gaussian, RDP), dp_gd (Laplace, pure ε) and the
    non-private reference, 2 folds × 2 reps each."""
    work = tmp_path_factory.mktemp("fresh")
    sweep = work / "sweep"
    done = subprocess.run(
        [sys.executable, "-m", "dpbench", "-m", *SWEEP, f"hydra.sweep.dir={sweep}"], cwd=work,
        env={**os.environ, "DPBENCH_CACHE": str(work / "cache")}, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list(sweep.rglob("results.parquet"))) == 3
    return sweep


def copy(source: Path, tmp_path: Path) -> Path:
    """A copy of a sweep directory in tmp_path (each test edits its own)."""
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


@pytest.mark.parametrize("name", ["leaderboard", "han_fig2"])
def test_passes_on_the_committed_example_sweeps_and_writes_nothing(capsys, tmp_path, name):
    root = copy(EXAMPLES / name, tmp_path)
    before = snapshot(root)
    status, lines, err = verify(capsys, root)
    assert status == 0, "\n".join(lines)
    assert lines[0].startswith("RESULT") and lines[-1].endswith("all checks passed") and not failures(lines)
    jobs = [line for line in lines[1:] if line.startswith("ok ")]
    assert len(jobs) == len(list(root.rglob("results.parquet")))
    if name == "leaderboard":  # dp_sgd: RDP equal to dp-accounting's, PLD below; dp_gd (pure Laplace): PLD below
        assert all(" = " in line and " <= " in line for line in jobs if "dp_sgd" in line)
        assert all(" n/a " in line and " <= " in line for line in jobs if "dp_gd" in line)
    else:  # han_pwa's pure-DP and (ε, δ) events have no dp-accounting counterpart: said, not passed
        assert any(line.startswith("note (") and "n/a: PureDPEvent" in line for line in lines)
    assert err == ""  # small directories: no progress lines
    assert snapshot(root) == before


def test_passes_on_a_fresh_sweep_with_every_check_applied(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    status, lines, _ = verify(capsys, root)
    assert status == 0, "\n".join(lines)
    rows = {line.split()[-1].split(",")[0]: line.split() for line in lines if line.startswith("ok ")}
    assert set(rows) == {"algorithm=dp_sgd", "algorithm=dp_gd", "algorithm=nonprivate"}
    # dp_sgd, per row: budget, eps, the ledger's own eps, RDP, PLD; plus the job's config hash and runs: 4·5 + 2
    assert rows["algorithm=dp_sgd"][1:4] == ["4", "22", "0"]
    assert rows["algorithm=dp_sgd"][5] == "=" and rows["algorithm=dp_sgd"][7] == "<="
    assert rows["algorithm=nonprivate"][1:4] == ["4", "10", "0"]


def test_json_report(capsys, fresh, tmp_path):
    status, lines, _ = verify(capsys, copy(fresh, tmp_path), "--json")
    report = json.loads("\n".join(lines))
    assert status == 0 and report["ok"] and report["dp_accounting"] == "installed"
    assert {j["failed"] for j in report["jobs"]} == {0} and len(report["jobs"]) == 3


def test_an_edited_eps_spent_fails_naming_the_row(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    path = job(root, "dp_sgd") / "results.parquet"
    classes = read_column_classes(path)
    original = {}

    def edit(frame):
        original["eps"] = float(frame.loc[1, "eps_spent"])
        frame.loc[1, "eps_spent"] *= 0.999  # still within the budget and above dp-accounting's PLD
        original["where"] = f"fold {frame.loc[1, 'fold']} rep {frame.loc[1, 'rep']}"

    rewrite_results(path, edit)
    assert read_column_classes(path) == classes  # the schema and its metadata survive the edit
    status, lines, _ = verify(capsys, root)
    assert status == 1
    (line,) = [f for f in failures(lines) if "recomputed from run.json" in f]
    assert line.startswith(f"FAIL {job(root, 'dp_sgd').name} {original['where']}: eps_spent ")
    assert repr(original["eps"]) in line and "in results.parquet" in line
    assert lines[-1].endswith("1 job FAILED")


def test_an_edited_ledger_event_fails(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    run = job(root, "dp_gd") / "run.json"
    meta = json.loads(run.read_text())
    ledger = meta["ledgers"][2]
    ledger["events"][0]["count"] -= 1  # one Laplace release fewer than the run paid for
    run.write_text(json.dumps(meta))
    status, lines, _ = verify(capsys, root)
    assert status == 1
    where = f"{job(root, 'dp_gd').name} fold {ledger['fold']} rep {ledger['rep']}:"
    named = [f for f in failures(lines) if where in f]
    assert any("recomputed from run.json" in f for f in named), lines
    assert all(where in f for f in failures(lines))  # the other runs are untouched


def test_a_spend_over_the_budget_fails_even_when_it_recomputes(capsys, fresh, tmp_path):
    """The row and its ledger both say the budget was 0.3 (config_hash unchanged: only a rerun would see
    that): ε recomputes, and the budget check fails in every row."""
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    rewrite_results(directory / "results.parquet", lambda frame: frame.__setitem__("eps", 0.3))
    meta = json.loads((directory / "run.json").read_text())
    for ledger in meta["ledgers"]:
        ledger["epsilon"] = 0.3
    (directory / "run.json").write_text(json.dumps(meta))
    status, lines, _ = verify(capsys, root)
    assert status == 1
    found = failures(lines)
    assert len(found) == 4 and all("exceeds the budget eps 0.3" in f for f in found), found


def test_check_functions():
    assert check_budget(0.5, 0.5) is None and "exceeds the budget" in check_budget(0.5000001, 0.5)
    assert check_budget(math.nan, 0.5) is not None
    native, back = reporting({"epsilon": 1.0, "delta": 1e-6}, 1.0, 1e-6)
    assert native(0.4) == back(0.4) == 0.4
    half = {"epsilon": 0.5, "delta": 1e-6 * math.exp(-0.5) / (1 + math.exp(-0.5))}  # (ε/2, δ/(1 + e^{ε/2}))
    doubled, halved = reporting(half, 1.0, 1e-6)
    assert doubled(0.4) == 0.8 and halved(0.8) == 0.4
    assert reporting({"epsilon": 0.7, "delta": 1e-6}, 1.0, 1e-6) is None


def test_a_group_privacy_run_is_checked_at_its_ledger_budget(capsys, compose_run_config, tmp_path):
    """dp_sgd under replace-one by group privacy: its ledger holds (ε/2, δ′) and the row reports 2ε′."""
    from dpbench.engine import run_job

    cfg = compose_run_config("algorithm=dp_sgd", "privacy.eps=0.5", "privacy.neighbouring=replace_one",
                             "dataset=synthetic_logreg", "dataset.n=600", "progress=false")
    run_job(cfg, tmp_path / "job")
    status, lines, _ = verify(capsys, tmp_path / "job")
    assert status == 0, "\n".join(lines)
    assert lines[1].split()[-1] == "." and " = " in lines[1] and " <= " in lines[1]


def test_rerun_reproduces_an_untouched_job_and_catches_an_edited_measurement(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    status, lines, err = verify(capsys, directory, "--rerun", "1")
    assert status == 0, "\n".join(lines)
    assert lines[0].split()[-2:] == ["RERUN", "JOB"] and lines[1].split()[-2:] == ["same", "."]
    assert "rerunning ." in err

    def edit(frame):
        frame.loc[2, "test_accuracy"] = frame.loc[2, "test_accuracy"] + 0.01

    rewrite_results(directory / "results.parquet", edit)
    status, lines, _ = verify(capsys, directory)
    assert status == 0  # no check but the rerun can see it
    status, lines, _ = verify(capsys, directory, "--rerun", "1", "--seed", "3")
    assert status == 1
    (line,) = failures(lines)
    assert line.startswith("FAIL .: rerun: fold 1 rep 0: test_accuracy ") and "in the rerun" in line


def test_bad_directories_are_one_line_and_status_2(capsys, tmp_path):
    for target, message in ((tmp_path / "missing", "no such directory"), (tmp_path, "no results.parquet found")):
        status, lines, err = verify(capsys, target)
        assert status == 2 and lines == []
        assert err.count("\n") == 1 and err.startswith("dpbench-verify: error: ") and message in err


def test_the_command_runs_as_a_module(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dpbench.verify", str(tmp_path / "nope")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_importing_the_command_is_cheap(tmp_path):
    """``import dpbench.verify.cli`` loads no pandas, pyarrow, numpy, scipy, Hydra or dp-accounting."""
    code = ("import sys, dpbench.verify.cli\n"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy', 'scipy', 'hydra', 'omegaconf', 'dp_accounting')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
