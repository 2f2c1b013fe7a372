"""Under add/remove the training size is private: a run pays for a noisy ñ and its method reads only ñ
(dpbench.privacy.counts).

Before the count existed, the methods read the realised fold size as their "public" n̄ and every row
published it (as DP-SGD's sampling rate q = L/n̄ in the ledger, and as n_train): that holds for zero-out
neighbours, not add/remove. Published beside ñ, the realised n tells D (100 records) from D′ (101) with
certainty: the audit's ``control_publish_realised_n`` measures ε̂ = 5.96 against a claim of 0.05, where
ñ alone (``training_count``) measures 0.040 ≤ 0.05 (N = 10⁶ per side, seed 0, docs/accounting.md).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan
from dpbench.privacy.counts import noisy_count, split_budget
from dpbench.privacy.events import PoissonSampledEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.serialize import events_from_summary

TINY = (
    "dataset=synthetic_logreg",
    "dataset.n=1000",
    "dataset.d=5",
    "progress=false",
    "privacy.eps=1.0",
    "privacy.delta=1e-6",
    "privacy.noise_key=seed",
    "reps=3",
)


def _job(compose_run_config, tmp_path, *overrides):
    cfg = compose_run_config(*TINY, *overrides)
    results = run_job(make_plan(cfg), tmp_path)
    return cfg, results, json.loads((tmp_path / "run.json").read_text())["ledgers"]


@pytest.mark.parametrize("eps", [1e-6, 0.05, 0.1, 0.3, 0.7, 1.0, 1.6, 3.0, 10.0 / 3.0, 9999.999])
@pytest.mark.parametrize("share", [0.0, 0.05, 0.1, 1.0 / 3.0, 0.9])
def test_the_split_never_spends_more_than_the_budget(eps, share):
    budget = split_budget(eps, share)
    assert budget.count_eps + budget.method_eps <= eps
    assert budget.count_eps == share * eps and budget.paid == (share > 0)
    assert math.isclose(budget.method_eps, eps - share * eps, rel_tol=1e-15)


def test_the_noisy_count_is_a_laplace_count_of_the_records():
    """2·10⁵ releases of n = 10,000 at ε = 0.05: median n, mean |ñ − n| = 1/ε = 20 to 2 % (its standard
    error is 0.22 %: the bound holds at > 99.99 % confidence), never below 1."""
    rng = np.random.default_rng(0)
    released = noisy_count(np.full(200_000, 10_000), 0.05, rng, Ledger(1e6, 1e-5, "pure"))
    assert released.dtype == np.int64 and np.median(released) == 10_000
    assert np.mean(np.abs(released - 10_000)) == pytest.approx(20.0, rel=0.02)
    assert noisy_count(np.full(1000, 1), 0.05, rng, Ledger(1e6, 1e-5, "pure")).min() == 1


def test_an_add_remove_run_pays_for_n_and_its_method_reads_only_the_noisy_count(compose_run_config, tmp_path):
    """DP-SGD on 800 training rows at ε = 1: every run releases ñ at ε_n = 0.05, the Poisson rate its ledger
    prices is L/ñ with L = ⌊√ñ⌋ + 10 — not L/n — and its ε spent is the method's plus ε_n."""
    _, results, ledgers = _job(compose_run_config, tmp_path, "algorithm=dp_sgd")
    assert (results["neighbouring"] == "add_remove").all() and results["guarantee_valid"].all()
    assert (results["eps_count"] == 0.05).all() and (results["n_train"] == 800).all()
    assert (results["n_public"] != results["n_train"]).any()  # ñ = 800 + Lap(20), rounded
    for (_, row), summary in zip(results.iterrows(), ledgers):
        ((count_event, _),) = events_from_summary(summary["count"])
        assert type(count_event).__name__ == "LaplaceEvent" and count_event.noise_multiplier == pytest.approx(20.0)
        rates = {e.sampling_rate for e, _ in events_from_summary(summary) if isinstance(e, PoissonSampledEvent)}
        n_public = int(row["n_public"])
        assert rates == {(int(math.sqrt(n_public)) + 10) / n_public}
        assert row["eps_spent"] == summary["eps_spent"] + summary["count"]["eps_spent"] <= 1.0
        assert summary["epsilon"] == 0.95


def test_a_count_share_whose_reciprocal_rounds_up_is_released(compose_run_config, tmp_path):
    """ε = 0.9 gives ε_n = 0.045, and 1/(1/0.045) > 0.045 in floating point: the count's Laplace event is
    priced at most ε_n (one ulp more noise), where it used to end the job with BudgetExceeded."""
    _, results, ledgers = _job(compose_run_config, tmp_path, "privacy.eps=0.9")
    assert results["eps_count"].between(0.045 * (1 - 1e-15), split_budget(0.9, 0.05).count_eps).all()
    for summary in ledgers:
        assert summary["count"]["eps_spent"] <= summary["count"]["epsilon"]


def test_replace_one_pays_nothing_and_reads_the_fold_size(compose_run_config, tmp_path):
    _, results, ledgers = _job(compose_run_config, tmp_path, "algorithm=objpert", "privacy.neighbouring=replace_one")
    assert (results["eps_count"] == 0.0).all() and (results["n_public"] == results["n_train"]).all()
    assert all("count" not in summary and summary["epsilon"] == 1.0 for summary in ledgers)


def test_count_share_zero_reads_the_realised_size_and_says_it_is_outside_the_guarantee(compose_run_config, tmp_path):
    _, results, ledgers = _job(compose_run_config, tmp_path, "algorithm=dp_sgd", "privacy.count_share=0")
    assert (results["n_public"] == results["n_train"]).all() and (results["eps_count"] == 0.0).all()
    assert not results["guarantee_valid"].any() and (results["guarantee_kind"] == "not_covered").all()
    assert results["guarantee_note"].str.contains("privacy.count_share=0").all()
    assert all("count" not in summary for summary in ledgers)


def test_non_private_references_pay_nothing(compose_run_config, tmp_path):
    _, results, _ = _job(compose_run_config, tmp_path, "algorithm=nonprivate")
    assert (results["eps_count"] == 0.0).all() and (results["guarantee_kind"] == "none").all()
