"""A sweep's shared work never changes a result: a small leaderboard cell run as one joblib sweep, sharing
prepared data, F* and whole-budget trials through one cache, writes every results column (but the wall
time and the code identity), trace and ledger of the same jobs run one by one, each with an empty cache and
no trial store."""

from __future__ import annotations

import json

import pandas as pd
import pytest

JOBS = ("dp_blgd,tuning=fixed", "dp_blgd,tuning=oracle", "dp_agd,tuning=oracle", "dp_agd,tuning=fixed")
COMMON = (
    "experiment=leaderboard",
    "dataset=adult",
    "privacy.eps=0.4",
    "cv.folds=2",
    "algorithm.max_iterations=4",
    "privacy.noise_key=seed",
    "progress=false",
)


def _outputs(job_dir):
    run = json.loads((job_dir / "run.json").read_text())
    results = pd.read_parquet(job_dir / "results.parquet")
    return (
        results[[c for c in results.columns if c not in ("wall_time_s", "code_identity")]],
        pd.read_parquet(job_dir / "trace.parquet"),
        run["ledgers"],
    )


@pytest.mark.data
@pytest.mark.slow
def test_a_sweep_with_its_caches_writes_what_jobs_without_them_write(cli, shared_data, tmp_path):
    data_dir = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    common = [*COMMON, f"data_dir={data_dir}"]
    methods = sorted({job.split(",")[0] for job in JOBS})
    (tmp_path / "sweep").mkdir()
    (tmp_path / "alone").mkdir()
    sweep = cli(
        ["-m", *common, f"algorithm={','.join(methods)}", "tuning=fixed,oracle", "hydra/launcher=joblib"],
        tmp_path / "sweep",
    )
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    swept = {p.parent.name: p.parent for p in (tmp_path / "sweep/outputs/sweeps/leaderboard").glob("*/run.json")}
    assert len(swept) == len(JOBS)
    for shared in ("prepared", "fstar", "trials"):  # parsed Adult, its optimum per fold, the fixed points' trials
        assert list((tmp_path / "sweep/.cache" / shared).iterdir()), shared
    for job in JOBS:
        method, tuning = job.split(",")
        alone = tmp_path / "alone" / job.replace(",tuning=", "-")
        result = cli(
            ["-m", *common, f"algorithm={method}", tuning, f"hydra.sweep.dir={alone}"],
            tmp_path / "alone",
            env={"DPBENCH_CACHE": str(alone / ".cache"), "DPBENCH_TRIAL_CACHE": "0"},
        )
        assert result.returncode == 0, result.stderr[-3000:]
        (job_dir,) = [p.parent for p in alone.glob("*/run.json")]
        (name,) = [n for n in swept if f"algorithm={method}," in n and tuning in n]
        shared_results, shared_trace, shared_ledgers = _outputs(swept[name])
        results, trace, ledgers = _outputs(job_dir)
        pd.testing.assert_frame_equal(results, shared_results, check_exact=True)
        pd.testing.assert_frame_equal(trace, shared_trace, check_exact=True)
        assert ledgers == shared_ledgers
