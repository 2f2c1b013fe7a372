"""The engine in-process: seeds, folds, skipping, budgets."""

import re

import numpy as np
import pandas as pd
import pytest

from dpbench.engine import run_job
from dpbench.errors import ConfigError, PrivacyViolation
from dpbench.jobs.plan import make_plan
from dpbench.jobs.splits import make_splits

SMALL = ("dataset.n=2000", "dataset.seed=1", "progress=false")


def test_results_have_schema_and_stay_within_budget(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL, "reps=2", "cv.folds=3", "privacy.eps=0.5")
    df = run_job(make_plan(cfg), tmp_path)
    assert len(df) == 6
    assert sorted(zip(df["fold"], df["rep"])) == [(f, r) for f in range(3) for r in range(2)]
    assert (df["eps_spent"] <= 0.5).all() and (df["eps_spent"] > 0.4).all()
    assert (df["suboptimality"] >= -1e-9).all()
    trace = pd.read_parquet(tmp_path / "trace.parquet")
    assert {"fold", "rep", "iteration", "train_objective", "step_size", "eps_spent"} <= set(trace.columns)
    assert (trace["eps_spent"] <= 0.5).all()
    assert trace.groupby(["fold", "rep"])["iteration"].max().eq(df.set_index(["fold", "rep"])["n_iterations"]).all()


def test_same_seed_and_key_same_numbers_other_seed_or_key_other_numbers(compose_run_config, tmp_path):
    """The noise follows the sweep's secret key (one per key directory) and the seed; under
    privacy.noise_key=seed it follows the seed alone, in any directory."""
    a = run_job(make_plan(compose_run_config(*SMALL)), tmp_path / "a", key_dir=tmp_path)
    b = run_job(make_plan(compose_run_config(*SMALL)), tmp_path / "b", key_dir=tmp_path)
    c = run_job(make_plan(compose_run_config(*SMALL, "seed=1")), tmp_path / "c", key_dir=tmp_path)
    d = run_job(make_plan(compose_run_config(*SMALL)), tmp_path / "d")  # its own key
    cols = ["test_accuracy", "train_objective", "eps_spent", "n_iterations", "grad_evals"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    for other in (c, d):
        assert not np.isclose(a["train_objective"].iloc[0], other["train_objective"].iloc[0], rtol=0, atol=1e-12)
    e, f = (
        run_job(make_plan(compose_run_config(*SMALL, "privacy.noise_key=seed")), tmp_path / name) for name in ("e", "f")
    )
    pd.testing.assert_frame_equal(e[cols], f[cols])
    assert (tmp_path / "noise.key").is_file() and (tmp_path / "d" / "noise.key").is_file()
    assert not (tmp_path / "e" / "noise.key").exists()


def test_every_algorithm_sees_the_same_folds(compose_run_config, monkeypatch):
    from dpbench.data import load_dataset
    from dpbench.jobs import splits
    from dpbench.recent_answers import RecentAnswers

    cfg_a = compose_run_config(*SMALL, "cv.folds=4", "algorithm=dp_sgd")
    cfg_b = compose_run_config(*SMALL, "cv.folds=4", "algorithm=majority")
    data = load_dataset(cfg_a.dataset, cfg_a.dataset_options, data_dir=cfg_a.data_dir, allow_download=False)
    folds_a = make_splits(data, cfg_a)
    monkeypatch.setattr(splits, "_RECENT_FOLDS", RecentAnswers(1))  # made again, not remembered
    for sa, sb in zip(folds_a, make_splits(data, cfg_b), strict=True):
        np.testing.assert_array_equal(sa.y_test, sb.y_test)
        np.testing.assert_array_equal(sa.X_test, sb.X_test)


def test_folds_are_made_once_per_data_and_settings_and_nobody_can_change_them(compose_run_config, monkeypatch):
    """A process remembers the last folds made: the same data and settings give them again (other Split objects
    on the same read-only arrays); another seed, fold count or dataset makes new ones."""
    from dpbench.data import load_dataset
    from dpbench.jobs import splits
    from dpbench.recent_answers import RecentAnswers

    made, make = [], splits._make_splits
    monkeypatch.setattr(splits, "_make_splits", lambda *args: made.append(args) or make(*args))
    monkeypatch.setattr(splits, "_RECENT_FOLDS", RecentAnswers(1))
    cfg = compose_run_config(*SMALL, "cv.folds=3")
    data = load_dataset(cfg.dataset, cfg.dataset_options, data_dir=cfg.data_dir, allow_download=False)
    first, again = make_splits(data, cfg), make_splits(data, cfg)
    assert len(made) == 1 and first[0] is not again[0] and first[0].X_train is again[0].X_train
    with pytest.raises(ValueError, match="read-only"):
        first[0].X_train[0, 0] = 1.0
    again[0].released_n = 5  # a job's own Split: the remembered one keeps released_n None
    assert make_splits(data, cfg)[0].released_n is None and len(made) == 1
    for other in (compose_run_config(*SMALL, "cv.folds=3", "seed=1"), compose_run_config(*SMALL, "cv.folds=4")):
        make_splits(data, other)
    other_data = load_dataset(
        cfg.dataset, {**cfg.dataset_options, "seed": 2}, data_dir=cfg.data_dir, allow_download=False
    )
    make_splits(other_data, cfg)
    assert len(made) == 4


def test_finished_job_is_skipped_and_foreign_results_are_refused(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL)
    run_job(make_plan(cfg), tmp_path)
    stamp = (tmp_path / "results.parquet").stat().st_mtime_ns
    run_job(make_plan(cfg), tmp_path)
    assert (tmp_path / "results.parquet").stat().st_mtime_ns == stamp
    with pytest.raises(ConfigError, match="holds results of another configuration"):
        run_job(make_plan(compose_run_config(*SMALL, "privacy.eps=0.3")), tmp_path)


def test_corrupt_results_file_is_rerun(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL)
    expected = run_job(make_plan(cfg), tmp_path)
    (tmp_path / "results.parquet").write_bytes(b"PAR1 truncated")
    again = run_job(make_plan(cfg), tmp_path)
    pd.testing.assert_frame_equal(expected.drop(columns="wall_time_s"), again.drop(columns="wall_time_s"))


def test_a_status_reads_what_a_rerun_would_keep(compose_run_config, tmp_path):
    """read_finished_columns (dpbench-status) and read_finished (the engine's skip) agree on every file."""
    from dpbench.results import read_finished, read_finished_columns

    expected = run_job(make_plan(compose_run_config(*SMALL, "cv.folds=2")), tmp_path)
    path = tmp_path / "results.parquet"
    rows, columns = read_finished_columns(path, ("config_hash", "algorithm", "no_such_column"))
    assert rows == len(expected) == 2 and columns["algorithm"] == list(expected["algorithm"])
    assert columns["config_hash"] == list(expected["config_hash"]) and columns["no_such_column"] is None
    expected.drop(columns="algorithm").to_parquet(tmp_path / "partial.parquet")
    path.with_name("truncated.parquet").write_bytes(path.read_bytes()[:-100])
    for name in ("partial.parquet", "truncated.parquet", "absent.parquet"):
        assert read_finished(tmp_path / name) is None and read_finished_columns(tmp_path / name, ()) is None


def test_reference_baselines_record_infinite_epsilon(compose_run_config, tmp_path):
    for name in ("nonprivate", "majority"):
        df = run_job(make_plan(compose_run_config(*SMALL, f"algorithm={name}")), tmp_path / name)
        assert np.isinf(df["eps_spent"]).all() and not df["private"].any()
    nonprivate = pd.read_parquet(tmp_path / "nonprivate" / "results.parquet")
    assert nonprivate["suboptimality"].abs().max() < 1e-8


def test_overspending_algorithm_is_caught(compose_run_config, tmp_path, monkeypatch):
    """A (deliberately broken) ledger that under-reports would let a run overspend: the engine must stop it."""
    from dpbench.privacy.ledger import Ledger

    monkeypatch.setattr(Ledger, "eps_spent", property(lambda self: self.epsilon * 1.01))
    with pytest.raises(PrivacyViolation, match="spent"):
        run_job(make_plan(compose_run_config(*SMALL)), tmp_path)
    assert not (tmp_path / "results.parquet").exists()


def test_row_norm_clips_rows(compose_run_config):
    from dpbench.data import load_dataset

    cfg = compose_run_config(*SMALL, "data.row_norm=0.5")
    data = load_dataset(cfg.dataset, cfg.dataset_options, data_dir=cfg.data_dir, allow_download=False)
    split = make_splits(data, cfg)[0]
    assert np.linalg.norm(split.X_train, axis=1).max() <= 0.5 + 1e-12


def test_single_class_training_data_is_refused(compose_run_config, tmp_path):
    with pytest.raises(ConfigError, match="single class"):
        run_job(make_plan(compose_run_config("dataset.n=2000", "dataset.seed=0", "progress=false")), tmp_path)


def test_too_small_a_class_for_the_split_is_refused(compose_run_config, tmp_path):
    with pytest.raises(ConfigError, match="smallest class has 1 example"):
        run_job(make_plan(compose_run_config("dataset.n=3000", "dataset.seed=1", "progress=false")), tmp_path)


def test_test_fraction_zero_trains_on_every_row_and_reports_no_test_metrics(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL, "cv.test_fraction=0", "algorithm=dp_nag_opt", "model=kuru_logreg", "reps=2")
    df = run_job(make_plan(cfg), tmp_path)
    assert (df["n_train"] == 2000).all() and (df["n_test"] == 0).all()
    assert df["test_accuracy"].isna().all() and df["test_objective"].isna().all()
    assert ((df["eps_spent"] <= 1.0) & (df["eps_spent"] >= 1.0 - 1e-9)).all()
    with pytest.raises(ConfigError, match=re.escape("cv.test_fraction=0")):
        compose_run_config(*SMALL, "cv.test_fraction=0", "cv.folds=3")


def test_kuru_presets_compose(compose_run_config):
    for preset in ("kuru_fig3", "kuru_fig4"):
        cfg = compose_run_config(f"experiment={preset}", "algorithm=dp_masg_opt")
        assert (cfg.model.name, cfg.model.reg, cfg.reps, cfg.test_fraction) == ("kuru_logreg", 0.02, 20, 0.0)
