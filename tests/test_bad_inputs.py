"""The bad-input list: every item stops the run with ONE line naming the bad value, exit status 2,
and nothing written — through the command line (a subprocess, as a user sees it) or, for inputs the
shipped loaders cannot produce (NaN features, an empty table), at the engine."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from dpbench import engine
from dpbench.data.dataset import Dataset
from dpbench.errors import DpbenchError

SMALL = ["dataset.n=200", "dataset.d=3", "progress=false"]

CASES = [
    (["privacy.eps=0"], "privacy.eps must be finite and > 0, got 0.0"),
    (["privacy.eps=nan"], "privacy.eps must be a number, got NaN"),
    (["privacy.eps=inf"], "privacy.eps must be finite and > 0, got inf"),
    (["privacy.delta=0"], "privacy.delta must be in (0, 1), got 0.0"),
    (["privacy.delta=1"], "privacy.delta must be in (0, 1), got 1.0"),
    (["algorithm.sampling_rate=0"], "algorithm dp_blsgd: sampling_rate must be in (0, 1], got 0"),
    (["algorithm.sampling_rate=1.5"], "algorithm dp_blsgd: sampling_rate must be in (0, 1], got 1.5"),
    (["algorithm=dp_sgd", "algorithm.noise_multiplier=0"], "algorithm dp_sgd: noise_multiplier must be finite and > 0, got 0"),
    (["algorithm=dp_sgd", "algorithm.clip=-1"], "algorithm dp_sgd: clip must be finite and > 0, got -1"),
    (["algorithm.clip_grad=0"], "algorithm dp_blsgd: clip_grad must be finite and > 0, got 0"),
    (["dataset.n=0"], "dataset 'synthetic_logreg': option 'n' must be an integer >= 1, got 0"),
    (["model=nope"], "unknown model 'nope'; valid choices: bo, chen_lee_svm"),
    (["experiment=nope"], "unknown experiment 'nope'; valid choices: adult_dp_sgd"),
    (["algorithm=dp_sgd", "model=pwa"], "model=pwa does not fit algorithm=dp_sgd"),
    (["algorithm=kusner_alg1"], "model=logreg does not fit algorithm=kusner_alg1"),
    (["model=liu_l1_svm"], "algorithm dp_blsgd does not handle"),
    # issue 18 item 4: a key nothing reads is a typo, not a setting
    (["+privacy.epss=1"], "privacy.epss is not a privacy setting; valid: conversion, delta, eps, neighbouring, sampler"),
    (["+foo=1"], "foo is not a dpbench setting; top-level keys: algorithm, bo, cv"),
    (["+cv.fold=3"], "cv.fold is not a cv setting; valid: folds, test_fraction"),
    (["+data.rownorm=1"], "data.rownorm is not a data setting; valid: allow_download, row_norm, scaling"),
    (["+trace.evry=2"], "trace.evry is not a trace setting; valid: every, nonprivate"),
    (["+bo.foo=1"], "bo.foo is not a bo setting; valid: candidate_seed"),
    # issue 18 item 3: a sweep preset without -m would run the defaults once
    (["experiment=kuru_fig3"], "experiment=kuru_fig3 is a sweep preset; run it with -m: dpbench -m experiment=kuru_fig3"),
    # issue 18 item 5: extremes that ended in a traceback
    (["privacy.eps=1e-300"], "privacy.eps must be ≥ 1e-06 (below it the accountants' arithmetic underflows), got 1e-300"),
    (["seed=18446744073709551616"], "seed must be in [0, 2^63 − 1], got 18446744073709551616"),
    # tuning= (issue 17)
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
    assert not (tmp_path / "outputs").exists()  # issue 18 item 6: not even Hydra's run directory


def test_results_follow_the_umask(cli, tmp_path):
    """Issue 18 item 9: files are written 0666 & ~umask (mkstemp alone would make them 0600)."""
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
        (np.array([[np.nan, 1.0], [1.0, 2.0]]), np.array([1.0, -1.0]), "dataset toy: features contain NaN or infinite values"),
        (np.array([[np.inf, 1.0], [1.0, 2.0]]), np.array([1.0, -1.0]), "dataset toy: features contain NaN or infinite values"),
    ],
    ids=["empty", "nan", "inf"],
)
def test_empty_or_non_finite_data_is_refused_before_anything_runs(compose_run_config, tmp_path, monkeypatch, X, y, message):
    monkeypatch.setattr(engine, "load_dataset", lambda *a, **k: Dataset("toy", X, y, None, None, "x", {}))
    with pytest.raises(DpbenchError) as err:
        engine.run_job(compose_run_config("progress=false"), tmp_path)
    assert str(err.value) == message
    assert not (tmp_path / "results.parquet").exists()
