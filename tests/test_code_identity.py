"""Results record the code that computed them; a rerun recomputes a job computed by
other code (``resume=strict``, the default) or keeps it and shows it stale (``resume=keep``)."""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil

import pandas as pd
import pytest

from dpbench import code_identity, code_meaning
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.resume import RunStore
from dpbench.status import inspect_job

JOB = ("algorithm=dp_sgd", "dataset.n=2000", "dataset.d=5", "reps=3", "progress=false")


@pytest.fixture
def code_change(monkeypatch):
    """``code_change(name)``: from now on this process runs as if its source were other code, ``name``."""

    def change(name: str) -> str:
        other = dataclasses.replace(code_identity.current(), identity=f"0.1.0+src.{name}")
        monkeypatch.setattr(code_identity, "current", lambda: other)
        return other.identity

    return change


def _identities(results: pd.DataFrame) -> set[str]:
    return set(results["code_identity"])


def test_the_source_hash_follows_the_code_that_computes_results_and_only_that(tmp_path):
    package = tmp_path / "dpbench"
    shutil.copytree(code_identity.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    original = code_identity.source_sha256(package)
    assert original == code_identity.source_sha256(code_identity.PACKAGE_DIR)
    assert original.startswith(code_identity.current().identity.split("+src.")[1])

    (package / "plot" / "figures_extra.py").write_text("def figure():\n    return 1\n")  # reads results only
    (package / "status.py").write_text((package / "status.py").read_text() + "\nEDITED = True\n")
    assert code_identity.source_sha256(package) == original

    engine = package / "algorithms" / "dp_sgd.py"
    source = engine.read_text()
    engine.write_text(source.replace('"""', '"""Reworded. ', 1).replace("\n", "\n\n# a comment\n", 1))
    assert code_identity.source_sha256(package) == original  # a docstring, a comment, a blank line
    engine.write_text(f"{source}\nEDITED = True\n")  # one new statement
    changed = code_identity.source_sha256(package)
    assert changed != original
    (package / "algorithms" / "new_method.py").write_text("def fit():\n    return 0\n")
    assert code_identity.source_sha256(package) not in (original, changed)


def _digest(root, files: dict[str, str]) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return code_meaning.meaning_digest(root, sorted(root.rglob("*.py")))


STEP = 'def step(x):\n    """One step."""\n    return x + 1\n'
CALLER = "def run():\n    return step(2)\n"


def test_moving_a_definition_or_a_module_keeps_the_meaning(tmp_path):
    """The refactors a new layout needs (a function to another module, a module to another package,
    relative imports, a re-export) keep the digest: the code a result runs is the same."""
    before = _digest(
        tmp_path / "a" / "dpbench",
        {"__init__.py": "", "maths.py": STEP, "job.py": f"from dpbench.maths import step\n{CALLER}"},
    )
    moved = _digest(
        tmp_path / "b" / "dpbench",
        {
            "__init__.py": "",
            "kinds/__init__.py": "from .glm.steps import step\n",
            "kinds/glm/__init__.py": "",
            "kinds/glm/steps.py": STEP.replace('"""One step."""', "# reworded"),
            "kinds/glm/job.py": f"from dpbench.kinds import step  # via the re-export\n\n\n{CALLER}",
        },
    )
    assert moved == before


def test_what_a_statement_says_changes_the_meaning(tmp_path):
    """A changed constant, and an import that now reaches another definition of the same name, each stale."""
    base = {
        "__init__.py": "",
        "maths.py": STEP,
        "other.py": STEP.replace("x + 1", "x - 1"),
        "job.py": f"from dpbench.maths import step\n{CALLER}",
    }
    before = _digest(tmp_path / "a" / "dpbench", base)
    assert _digest(tmp_path / "b" / "dpbench", {**base, "maths.py": STEP.replace("x + 1", "x + 2")}) != before
    assert (
        _digest(tmp_path / "c" / "dpbench", {**base, "job.py": f"from dpbench.other import step\n{CALLER}"}) != before
    )
    assert _digest(tmp_path / "d" / "dpbench", {**base, "job.py": f"from numpy import step\n{CALLER}"}) != before


def test_results_and_run_json_record_the_code_identity(compose_run_config, tmp_path):
    results = run_job(make_plan(compose_run_config(*JOB)), tmp_path)
    now = code_identity.current()
    assert _identities(results) == {now.identity} and now.identity.startswith("0.1.0+src.")
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["code"]["identity"] == now.identity and run["code"]["source_sha256"] == now.source_sha256


def test_the_code_identity_and_the_resume_mode_are_not_part_of_the_config_hash(compose_run_config, code_change):
    before = compose_run_config(*JOB)
    code_change("b0b0b0b0b0b0")
    assert compose_run_config(*JOB, "resume=keep").config_hash == before.config_hash
    assert "resume" not in before.semantic_dict()


def test_resume_strict_recomputes_a_job_computed_by_other_code(compose_run_config, tmp_path, code_change, caplog):
    cfg = compose_run_config(*JOB)
    first = run_job(make_plan(cfg), tmp_path)
    assert run_job(make_plan(cfg), tmp_path)["wall_time_s"].equals(first["wall_time_s"])  # same code: skipped

    new = code_change("5e5e5e5e5e5e")
    with caplog.at_level(logging.INFO, logger="dpbench"):
        again = run_job(make_plan(cfg), tmp_path)
    assert "recomputing dp_sgd" in caplog.text and first["code_identity"].iloc[0] in caplog.text
    assert "unreadable" not in caplog.text  # the results were read: only their code differs
    assert _identities(again) == {new} == _identities(pd.read_parquet(tmp_path / "results.parquet"))
    assert json.loads((tmp_path / "run.json").read_text())["code"]["identity"] == new
    assert not again["wall_time_s"].equals(first["wall_time_s"])  # computed again, not relabelled
    columns = [c for c in first.columns if c not in ("wall_time_s", "code_identity")]
    pd.testing.assert_frame_equal(
        again[columns], first[columns], check_exact=True
    )  # the same seeds, the same code path
    assert inspect_job(tmp_path.parent, [], tmp_path.name).status == "finished"


def test_resume_keep_keeps_a_job_computed_by_other_code_and_shows_it_stale(
    compose_run_config, tmp_path, code_change, caplog
):
    first = run_job(make_plan(compose_run_config(*JOB)), tmp_path)
    old = first["code_identity"].iloc[0]
    new = code_change("4b4b4b4b4b4b")
    with caplog.at_level(logging.WARNING, logger="dpbench"):
        kept = run_job(make_plan(compose_run_config(*JOB, "resume=keep")), tmp_path)
    assert "they are stale" in caplog.text
    pd.testing.assert_frame_equal(kept, first, check_exact=True)
    job = inspect_job(tmp_path.parent, [], tmp_path.name)
    assert job.status == "stale" and job.code_identity == old
    assert old in job.note and new in job.note


def test_results_from_before_code_identities_are_stale(compose_run_config, tmp_path):
    run_job(make_plan(compose_run_config(*JOB)), tmp_path)
    path = tmp_path / "results.parquet"
    pd.read_parquet(path).drop(columns="code_identity").to_parquet(path)
    job = inspect_job(tmp_path.parent, [], tmp_path.name)
    assert job.status == "stale" and "computed before dpbench recorded code identities" in job.note
    assert _identities(run_job(make_plan(compose_run_config(*JOB)), tmp_path)) == {code_identity.current().identity}


def test_stored_runs_of_other_code_are_reused_only_under_resume_keep(tmp_path):
    trace = pd.DataFrame({"fold": [0]})
    RunStore(tmp_path, "cfg", "0.1.0+src.old").save(
        0, 0, {"test_accuracy": 0.5, "code_identity": "0.1.0+src.old"}, trace, {}
    )
    assert RunStore(tmp_path, "cfg", "0.1.0+src.new").load(0, 0) is None
    row, _, _ = RunStore(tmp_path, "cfg", "0.1.0+src.new", keep_other_code=True).load(0, 0)
    assert row == {"test_accuracy": 0.5, "code_identity": "0.1.0+src.old"}  # the run keeps who computed it
    assert RunStore(tmp_path, "other cfg", "0.1.0+src.old", keep_other_code=True).load(0, 0) is None


def test_an_unknown_resume_mode_is_refused_by_name(compose_run_config):
    with pytest.raises(ConfigError, match="resume must be one of strict, keep, got 'sometimes'"):
        compose_run_config(*JOB, "resume=sometimes")


@pytest.mark.slow
def test_a_sweep_rerun_recomputes_only_the_jobs_of_other_code_and_dpbench_status_shows_them(cli, tmp_path):
    """End to end through the CLI: one job of a two-job sweep was computed by other code (its rows say so);
    ``resume=keep`` leaves it and dpbench-status lists it stale; the default rerun recomputes it alone."""
    from dpbench.results import write_parquet

    sweep = tmp_path / "sweep"
    args = [
        "-m",
        "algorithm=dp_sgd,majority",
        "dataset.n=2000",
        "dataset.d=5",
        "progress=false",
        f"hydra.sweep.dir={sweep}",
    ]
    assert cli(args, tmp_path).returncode == 0
    old, current = sorted(sweep.glob("*/results.parquet"))
    write_parquet(pd.read_parquet(old).assign(code_identity="0.0.9+src.000000000000"), old, table="results")
    stamps = {path: path.stat().st_mtime_ns for path in (old, current)}

    assert cli([*args, "resume=keep"], tmp_path).returncode == 0
    assert {path: path.stat().st_mtime_ns for path in (old, current)} == stamps
    status = cli([str(sweep)], tmp_path, module="dpbench.status")
    assert status.returncode == 0 and "2 jobs: 1 finished, 1 stale" in status.stdout
    (line,) = [row for row in status.stdout.splitlines() if row.startswith("stale")]
    assert old.parent.name in line and "computed by 0.0.9+src.000000000000" in line

    assert cli(args, tmp_path).returncode == 0
    assert old.stat().st_mtime_ns != stamps[old] and current.stat().st_mtime_ns == stamps[current]
    assert set(pd.read_parquet(old)["code_identity"]) == {code_identity.current().identity}
    assert "2 jobs: 2 finished, 0 stale" in cli([str(sweep)], tmp_path, module="dpbench.status").stdout


def test_a_child_process_takes_the_meaning_handed_down_only_for_the_same_bytes(tmp_path, monkeypatch):
    """The meaning digest reaches child processes through the environment, keyed by the exact source bytes:
    a child running other bytes parses its own source."""
    package = tmp_path / "dpbench"
    shutil.copytree(code_identity.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    files = code_identity.source_files(package)
    exact = code_identity.bytes_sha256(package, files)
    monkeypatch.setenv(code_identity.HANDED_DOWN, f"{exact}:handed-down")
    assert code_identity.source_sha256(package) == "handed-down"
    engine = package / "algorithms" / "dp_sgd.py"
    engine.write_text(f"{engine.read_text()}\nEDITED = True\n")
    assert code_identity.source_sha256(package) == code_meaning.meaning_digest(
        package, code_identity.source_files(package)
    )


def test_a_later_process_takes_the_meaning_remembered_for_the_same_bytes_and_derives_a_garbled_one(
    tmp_path, monkeypatch
):
    """The meaning digest is kept on disk by the exact source bytes (its own algorithm among them), so the next
    process skips parsing; a kept value that is not a sha256 is derived again, and other bytes are never
    given another source's meaning."""
    monkeypatch.setenv("DPBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(code_identity.HANDED_DOWN, raising=False)
    package = tmp_path / "dpbench"
    shutil.copytree(code_identity.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    files = code_identity.source_files(package)
    exact = code_identity.bytes_sha256(package, files)
    derived = code_meaning.meaning_digest(package, files)
    assert code_identity.source_sha256(package) == derived
    kept = tmp_path / "cache" / "code-meaning" / exact
    assert kept.read_text() == derived
    kept.write_text("f" * 64)  # what a later process finds is what it uses: nothing is parsed
    assert code_identity.source_sha256(package) == "f" * 64
    kept.write_text("garbled")
    assert code_identity.source_sha256(package) == derived
    engine = package / "algorithms" / "dp_sgd.py"
    engine.write_text(f"{engine.read_text()}\nEDITED = True\n")
    assert code_identity.source_sha256(package) == code_meaning.meaning_digest(
        package, code_identity.source_files(package)
    )
