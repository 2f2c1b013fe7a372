"""``dpbench-verify DIR`` passes on untouched results, and names the job and row of every edit
that changes what a results file or run.json says — an ε, a ledger's events, a budget, a measurement only a
rerun can catch, and what a row means: its relation, guarantee, stopping order, paid releases and noise —
with exit status 1; a bad directory is one line and status 2. Nothing is written into DIR."""

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

from dpbench.jobs.plan import make_plan
from dpbench.results import read_column_classes
from dpbench.verify.checks import (
    SEED_NOTE,
    check_budget,
    check_guarantee,
    check_relation,
    check_releases,
    event_types,
    filled,
    names_order,
    reporting,
)
from dpbench.verify.cli import main

pytestmark = pytest.mark.xdist_group("verify.test_verify_cli")  # its module-scoped fixture is made once, on one worker

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
SWEEP = [
    "algorithm=dp_sgd,dp_gd,nonprivate",
    "dataset=synthetic_logreg",
    "dataset.n=600",
    "privacy.eps=0.5",
    "cv.folds=2",
    "reps=2",
    "progress=false",
]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()
    }


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


def edit_run(directory: Path, edit) -> None:
    """Apply ``edit(meta)`` to a job's run.json."""
    meta = json.loads((directory / "run.json").read_text())
    edit(meta)
    (directory / "run.json").write_text(json.dumps(meta))


def job(root: Path, algorithm: str, *more: str) -> Path:
    (found,) = [
        p
        for p in root.iterdir()
        if p.is_dir() and all(f"{k}," in p.name + "," for k in (f"algorithm={algorithm}", *more))
    ]
    return found


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A small sweep run now: dp_sgd (Poisson-subsampled Gaussian, RDP), dp_gd (Laplace, pure ε) and the
    non-private reference, 2 folds × 2 reps each."""
    return run_sweep(tmp_path_factory.mktemp("fresh"), SWEEP, jobs=3)


def run_sweep(work: Path, args: list[str], jobs: int) -> Path:
    """``dpbench -m args`` in ``work`` (its own cache); the sweep directory, once its ``jobs`` jobs finished."""
    sweep = work / "sweep"
    done = subprocess.run(
        [sys.executable, "-m", "dpbench", "-m", *args, f"hydra.sweep.dir={sweep}"],
        cwd=work,
        env={**os.environ, "DPBENCH_CACHE": str(work / "cache")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list(sweep.rglob("results.parquet"))) == jobs
    return sweep


@pytest.fixture(scope="module")
def adaptive(tmp_path_factory) -> Path:
    """A small sweep of dp_blgd, whose stopping rule names an order: a Rényi filter at α* (tuning=fixed) and
    repeat-and-select at α (tuning=private, which also fills tuning_score and tuned_params), 2 folds each."""
    args = ["algorithm=dp_blgd", "tuning=fixed,private", *SWEEP[1:5], "reps=1", "progress=false"]
    return run_sweep(tmp_path_factory.mktemp("adaptive"), args, jobs=2)


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
    assert any(line.startswith("note (") and SEED_NOTE in line for line in lines)  # written before noise_key existed
    assert err == ""  # small directories: no progress lines
    assert snapshot(root) == before


def test_passes_on_a_fresh_sweep_with_every_check_applied(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    status, lines, _ = verify(capsys, root)
    assert status == 0, "\n".join(lines)
    rows = {line.split()[-1].split(",")[0]: line.split() for line in lines if line.startswith("ok ")}
    assert set(rows) == {"algorithm=dp_sgd", "algorithm=dp_gd", "algorithm=nonprivate"}
    # dp_sgd, per row: budget, eps, the ledger's own eps, RDP, PLD, and what it means: guarantee, noise, relation,
    # its kind, count, releases; plus the job's config hash, its configuration and runs: 4·11 + 3
    assert rows["algorithm=dp_sgd"][1:4] == ["4", "47", "0"]
    assert rows["algorithm=dp_sgd"][5] == "=" and rows["algorithm=dp_sgd"][7] == "<="
    # non-private, per row: eps = inf, no private ledger, guarantee, its kind; plus config hash, configuration, runs: 4·4 + 3
    assert rows["algorithm=nonprivate"][1:4] == ["4", "19", "0"]
    assert not any(line.startswith("note (") and SEED_NOTE in line for line in lines)  # secret noise


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
    """The row and its ledgers (the method's, and the noisy count's) both say the budget was 0.3 (config_hash
    unchanged: only a rerun would see that): ε recomputes, and the budget check fails in every row."""
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    rewrite_results(directory / "results.parquet", lambda frame: frame.__setitem__("eps", 0.3))
    meta = json.loads((directory / "run.json").read_text())
    for ledger in meta["ledgers"]:
        ledger["epsilon"] = 0.3 - ledger["count"]["epsilon"]
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

    cfg = compose_run_config(
        "algorithm=dp_sgd",
        "privacy.eps=0.5",
        "privacy.neighbouring=replace_one",
        "dataset=synthetic_logreg",
        "dataset.n=600",
        "progress=false",
    )
    run_job(make_plan(cfg), tmp_path / "job")
    status, lines, _ = verify(capsys, tmp_path / "job")
    assert status == 0, "\n".join(lines)
    assert lines[1].split()[-1] == "." and " = " in lines[1] and " <= " in lines[1]
    # run_job without the resolved configuration records its semantic settings, which cannot be built again
    assert any(
        line.startswith("note (1 job): what its rows mean is not checked: the configuration in run.json is refused")
        for line in lines
    )


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
    done = subprocess.run(
        [sys.executable, "-m", "dpbench.verify", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_importing_the_command_is_cheap(tmp_path):
    """``import dpbench.verify.cli`` loads no pandas, pyarrow, numpy, scipy, Hydra or dp-accounting."""
    code = (
        "import sys, dpbench.verify.cli\n"
        "print(sorted(m for m in ('pandas', 'pyarrow', 'numpy', 'scipy', 'hydra', 'omegaconf', 'dp_accounting')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


# -------------------------------------------------------------------------------- what a row means
def test_a_relation_flipped_in_the_results_or_a_ledger_fails_naming_the_row(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    rewrite_results(
        directory / "results.parquet",
        lambda frame: frame.__setitem__("neighbouring", ["add_remove", "replace_one", "add_remove", "add_remove"]),
    )
    edit_run(directory, lambda meta: meta["ledgers"][2].__setitem__("neighbouring", "replace_one"))
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 1
    found = failures(lines)
    assert len(found) == 2, found
    assert found[0].startswith(
        f"FAIL {directory.name} fold 0 rep 1: neighbouring 'replace_one' in results.parquet, 'add_remove' "
        "for dp_sgd under privacy.neighbouring=add_remove"
    )
    ledger = json.loads((directory / "run.json").read_text())["ledgers"][2]
    assert found[1].startswith(
        f"FAIL {directory.name} fold {ledger['fold']} rep {ledger['rep']}: the ledger's neighbouring 'replace_one'"
    )


@pytest.mark.data
def test_guarantee_valid_flipped_to_true_on_a_whole_file_row_fails(capsys, cli, shared_data, tmp_path):
    data_dir = shared_data("bank_marketing/dpagd/BANK.dat.gz")
    done = cli(
        [
            "algorithm=dp_gd",
            "dataset=bank",
            "data.scaling=whole_file",
            "cv.folds=2",
            f"data_dir={data_dir}",
            "progress=false",
            f"hydra.run.dir={tmp_path / 'job'}",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    status, lines, _ = verify(capsys, tmp_path / "job", "--no-independent")
    assert status == 0, "\n".join(lines)

    def claim(frame):
        assert not frame["guarantee_valid"].any() and (frame["scaling"] == "whole_file").all()
        frame.loc[1, ["guarantee_valid", "guarantee_note", "scaling"]] = [True, "", "public"]

    rewrite_results(tmp_path / "job" / "results.parquet", claim)
    status, lines, _ = verify(capsys, tmp_path / "job", "--no-independent")
    assert status == 1
    (line,) = failures(lines)
    assert line.startswith(
        "FAIL . fold 1 rep 0: guarantee_valid true in results.parquet, but its configuration in run.json "
        "breaks it: data.scaling=whole_file"
    )


def test_a_sweep_whose_stopping_rules_name_an_order_passes(capsys, adaptive, tmp_path):
    root = copy(adaptive, tmp_path)
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 0, "\n".join(lines)
    for tuning, rule in (("fixed", "renyi_filter(alpha="), ("private", "repeat_and_select(alpha=")):
        frame = pq.read_table(job(root, "dp_blgd", f"tuning={tuning}") / "results.parquet").to_pandas()
        assert all(r.startswith(rule) for r in frame["stopping_rule"])
    # per row: budget, eps, the ledger's own eps, guarantee, its kind, noise, relation, stopping order, count, releases;
    # config, configuration, runs
    assert {line.split()[2] for line in lines if line.startswith("ok ")} == {str(2 * 10 + 3)}


def test_an_edited_stopping_order_fails_naming_both(capsys, adaptive, tmp_path):
    root = copy(adaptive, tmp_path)
    directory = job(root, "dp_blgd", "tuning=fixed")
    rules = {}

    def edit(frame):
        rules["fixed"] = frame.loc[0, "stopping_rule"]
        alpha = float(rules["fixed"].removeprefix("renyi_filter(alpha=").removesuffix(")"))
        frame.loc[0, "stopping_rule"] = rules["edited"] = f"renyi_filter(alpha={alpha + 1:g})"
        rules["where"] = f"fold {frame.loc[0, 'fold']} rep {frame.loc[0, 'rep']}"

    rewrite_results(directory / "results.parquet", edit)
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 1
    (line,) = failures(lines)
    assert line.startswith(
        f"FAIL {directory.name} {rules['where']}: stopping_rule {rules['edited']!r} in results.parquet, but "
        f"dpbench fixes {rules['fixed']!r} from the public values"
    )


def test_a_release_filled_on_a_fixed_tuning_row_fails(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")

    def edit(frame):
        assert (frame["tuning"] == "fixed").all() and frame["tuning_score"].isna().all()
        frame.loc[3, "tuning_score"] = 0.9
        frame.loc[0, "tuned_params"] = '{"clip": 1.0}'

    rewrite_results(directory / "results.parquet", edit)
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 1
    found = failures(lines)
    assert len(found) == 2, found
    assert found[0] == (
        f"FAIL {directory.name} fold 0 rep 0: it releases tuned_params (needs a RepeatAndSelectEvent), which its "
        "ledger in run.json does not pay for"
    )
    assert found[1].startswith(
        f"FAIL {directory.name} fold 1 rep 1: it releases tuning_score (needs a RepeatAndSelectEvent)"
    )


def test_a_removed_noise_record_fails_and_seed_noise_is_a_note(capsys, fresh, tmp_path):
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    edit_run(directory, lambda meta: meta.pop("noise"))
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 1
    found = failures(lines)
    assert len(found) == 4 and all(f.startswith(f"FAIL {directory.name} fold ") for f in found), found
    assert all("noise_key secret in results.parquet, but run.json records no secret key file" in f for f in found)

    other = job(root, "dp_gd")  # rows that say their noise came from the seed: publishable never, failing never
    rewrite_results(other / "results.parquet", lambda frame: frame.__setitem__("noise_key", "seed"))
    edit_run(other, lambda meta: meta.__setitem__("noise", {"key": "seed"}))
    status, lines, _ = verify(capsys, other, "--no-independent")
    assert status == 0, "\n".join(lines)
    assert f"note (1 job): {SEED_NOTE}" in lines


def test_meaning_check_functions():
    oracle = "tuning=oracle: hyper-parameters chosen on the test fold"
    assert check_guarantee(True, "", []) is None and check_guarantee(False, oracle, [oracle]) is None
    assert "breaks it: tuning=oracle" in check_guarantee(True, "", [oracle])
    assert "with a guarantee_note" in check_guarantee(True, oracle, [])
    assert "without a guarantee_note" in check_guarantee(False, "", [])
    assert "does not say tuning=oracle" in check_guarantee(False, "data.scaling=whole_file: …", [oracle])
    assert check_guarantee(False, None, [oracle]) is None  # a file without the column: validity only
    assert names_order("renyi_filter(alpha=57)") and names_order("repeat_and_select(alpha=73)")
    assert not names_order("renyi_filter_union(19 orders)") and not names_order("fixed_composition")
    assert [filled(v) for v in (None, math.nan, "", "{}", "[]", 0.0, False, '{"a": 1}')] == [False] * 5 + [True] * 3
    nested = [
        {
            "count": 2,
            "event": {"type": "PoissonSampledEvent", "event": {"type": "GaussianEvent", "noise_multiplier": 1.0}},
        }
    ]
    assert event_types(nested) == {"PoissonSampledEvent", "GaussianEvent"}
    assert check_releases(["eps_spent", "tuning_score"], {"RepeatAndSelectEvent"}, True) is None
    assert (
        check_releases(["tuned_params"], {"GaussianEvent"}, False) is None
    )  # tuning=oracle: its rows say it is not paid
    assert "holds no events" in check_releases(["eps_spent"], set(), True)
    # dp_sgd meets replace-one by group privacy: the row says replace_one, its ledger add_remove
    assert check_relation("dp_sgd", "{}", "replace_one", "group_privacy", "add_remove", "replace_one") is None
    assert "the ledger's neighbouring 'replace_one'" in check_relation(
        "dp_sgd", "{}", "replace_one", "group_privacy", "replace_one", "replace_one"
    )
    assert "cannot meet privacy.neighbouring=add_remove" in check_relation(
        "outpert_rsgd", "{}", "add_remove", "native", "add_remove", "add_remove"
    )


def test_a_configuration_edited_in_run_json_fails(capsys, fresh, tmp_path):
    """The checks of meaning compare rows with run.json's config only when it is the job's (its config_hash)."""
    root = copy(fresh, tmp_path)
    directory = job(root, "dp_sgd")
    edit_run(directory, lambda meta: meta["config"]["privacy"].__setitem__("neighbouring", "replace_one"))
    status, lines, _ = verify(capsys, root, "--no-independent")
    assert status == 1
    (line,) = failures(lines)
    assert (
        line.startswith(f"FAIL {directory.name}: the configuration in run.json hashes to ")
        and "what its rows mean is not checked" in line
    )
