"""``dpbench-publish``: only what a run's ε covers leaves the machine.

A leaderboard-style sweep (three methods × tuning fixed/private, and the non-private reference) is run
with a known noise key; its publishable view must hold no ``measurement`` column, no row whose
guarantee does not hold, no count that follows private randomness (K, |B|, n), nothing that replays
the noise from the seed, and the originals must still pass ``dpbench-verify`` (with a rerun from the key).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpbench.privacy.noise_key import KEY_FILE
from dpbench.privacy.repeat_select import sample_trials
from dpbench.publish import main as publish_main
from dpbench.results import RESULTS_FILE, read_column_classes
from dpbench.schema import MEASUREMENT, RELEASE, column_class
from dpbench.verify.cli import main as verify_main

pytestmark = pytest.mark.xdist_group("test_publish")  # its module-scoped fixture is made once, on one worker

KEY = bytes(range(100, 132))
SWEEP = [
    "algorithm=dp_sgd,dp_blsgd,dp_gd,nonprivate",
    "tuning=fixed,private",
    "dataset=synthetic_logreg",
    "dataset.n=600",
    "privacy.eps=0.5",
    "cv.folds=2",
    "progress=false",
]
COUNTS_OF_PRIVATE_RANDOMNESS = ("n_trials", "grad_evals", "obj_evals", "n_train", "n_test", "wall_time_s")


def _sweep(work: Path, name: str, *extra: str, key: bytes | None = None) -> Path:
    sweep = work / name
    if key is not None:  # the sweep's secret key, fixed so that the test is deterministic
        sweep.mkdir(parents=True)
        (sweep / KEY_FILE).write_bytes(key)
        os.chmod(sweep / KEY_FILE, 0o600)
    done = subprocess.run(
        [sys.executable, "-m", "dpbench", "-m", *SWEEP, *extra, f"hydra.sweep.dir={sweep}"],
        cwd=work,
        env={**os.environ, "DPBENCH_CACHE": str(work / "cache")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return sweep


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The sweep with a secret key, its publishable view, and the same sweep under privacy.noise_key=seed."""
    work = tmp_path_factory.mktemp("publish")
    secret = _sweep(work, "secret", key=KEY)
    published = work / "published"
    assert publish_main([str(secret), "--out", str(published)]) == 0
    replay = _sweep(work, "replay", "algorithm=dp_sgd,dp_blsgd", "privacy.noise_key=seed")
    return secret, published, replay


def _results(root: Path) -> pd.DataFrame:
    frames = [pd.read_parquet(p).assign(job=p.parent.name) for p in sorted(root.rglob(RESULTS_FILE))]
    return pd.concat(frames, ignore_index=True)


def test_no_published_column_is_a_measurement_and_only_guaranteed_rows_are_published(sweeps):
    secret, published, _ = sweeps
    files = sorted(published.rglob("*.parquet"))
    assert len(files) == 2 * 6  # results and trace of the 6 private jobs; the reference is left out
    for path in files:
        stored = read_column_classes(path)
        assert stored and MEASUREMENT not in stored.values(), path
    rows = _results(published)
    assert len(rows) == 6 * 2 and rows["private"].all() and rows["guarantee_valid"].all()
    assert set(rows["noise_key"]) == {"secret"}
    assert not set(COUNTS_OF_PRIVATE_RANDOMNESS) & set(rows.columns)
    assert not list(published.rglob(KEY_FILE))
    originals = _results(secret)
    assert len(originals) == 8 * 2 and (originals["algorithm"] == "nonprivate").sum() == 4


def test_published_run_json_holds_no_count_of_the_data_and_no_key(sweeps):
    _, published, _ = sweeps
    for path in published.rglob("run.json"):
        meta = json.loads(path.read_text())
        assert "noise" not in meta and "machine" not in meta
        assert not {"n", "n_test"} & set(meta["dataset"])
        for ledger in meta["ledgers"]:
            assert "public_validation_n" not in ledger.get("tuning", {})


def test_k_follows_the_secret_key_not_the_seed(sweeps):
    """Private tuning's trial count K was drawn from SeedSequence([seed, fold, rep, 17]): replaying the
    published seed gave every row's K; with K published the exact ε of a worst-case trial model is 0.99
    at the defaults (0.46 hidden; claim 1.0) and 2.06 at ε = 1.6, E[K] = 10 (0.71 hidden; claim 1.6),
    tests/privacy/test_published_counts.py. Now K (a measurement, never published) is drawn from the
    secret key's stream: the seed's replay misses it."""
    secret, _, _ = sweeps
    rows = _results(secret)
    tuned = rows[(rows["tuning"] == "private") & rows["private"]]
    from_seed = [
        sample_trials(4.0, 1.0, np.random.default_rng(np.random.SeedSequence([0, fold, rep, 17]).spawn(3)[1]))
        for fold, rep in zip(tuned["fold"], tuned["rep"])
    ]
    assert column_class("results", "n_trials") == MEASUREMENT
    assert list(tuned["n_trials"]) != from_seed


def test_no_release_replays_from_the_seed(sweeps):
    """Under a secret key the released values differ from what the public seed alone replays; under
    privacy.noise_key=seed (development) they would be equal, and those rows are not publishable."""
    _, published, replay = sweeps
    ours, theirs = _results(published), _results(replay)
    merged = ours.merge(theirs, on=["algorithm", "tuning", "fold", "rep"], suffixes=("", "_replay"))
    assert len(merged) == 2 * 2 * 2
    tuned = merged[merged["tuning"] == "private"]
    assert not np.any(tuned["tuning_score"].to_numpy() == tuned["tuning_score_replay"].to_numpy())
    adaptive = merged[(merged["algorithm"] == "dp_blsgd") & (merged["tuning"] == "fixed")]
    assert not np.array_equal(adaptive["eps_spent"].to_numpy(), adaptive["eps_spent_replay"].to_numpy())
    assert set(theirs["noise_key"].dropna()) <= {"seed", "none"}
    status = publish_main([str(replay), "--out", str(replay.parent / "nothing")])
    assert status == 1  # every row of the replayable sweep is refused


def test_the_originals_pass_verify_and_a_rerun_from_the_key(sweeps, capsys):
    secret, _, _ = sweeps
    assert verify_main([str(secret)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert verify_main([str(secret), "--rerun", "2"]) == 0, capsys.readouterr().out


def test_counts_that_follow_private_randomness_are_measurements():
    """``grad_evals`` and ``obj_evals`` were classed ``release`` but count Σ|B_t| over DP-SGD's secret
    Poisson batches (and T·n for full batches), which no event pays for: on the audit's DP-SGD pair
    (n = 20, q = 0.25, σ = 1.5, δ = 1e-5) one step's exact ε is 1.355 without |B| and 1.917 with it,
    against the 1.606 charged (tests/privacy/test_published_counts.py computes both)."""
    for table in ("results", "trace"):
        assert column_class(table, "grad_evals") == column_class(table, "obj_evals") == MEASUREMENT
    for column in ("n_trials", "n_train", "n_test", "wall_time_s"):
        assert column_class("results", column) == MEASUREMENT
    assert column_class("results", "tuning_score") == column_class("results", "tuned_params") == RELEASE


def test_bad_targets_are_one_line_and_status_2(tmp_path, capsys):
    assert publish_main([str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert publish_main([str(tmp_path), "--out", str(tmp_path / "inside")]) == 2
    assert "inside" in capsys.readouterr().err


def test_the_report_of_the_publishable_view(sweeps, tmp_path, capsys):
    """``dpbench-report --publishable`` shows the published rows only (the reference is left out), says
    what it leaves out, draws no figure of measurements, and keeps the original sweep's job status."""
    from dpbench.report.cli import main as report_main

    secret, _, _ = sweeps
    page = tmp_path / "publishable.html"
    report_main([str(secret), "--publishable", "--out", str(page)])
    assert "12 result rows" in capsys.readouterr().out
    html = page.read_text()
    assert "Publishable view (dpbench-publish)" in html and "8 jobs: 8 finished" in html
    assert "dp_blsgd" in html and "nonprivate" not in html and "<img" not in html
