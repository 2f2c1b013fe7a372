"""The fidelity modes of chen_lee's DP-SGD and PrivGene baselines: ``fidelity=authors_code`` follows the public
DP-AGD code (ppmlguy/DP-AGD: algo/sgd.py ``dpsgd_ma`` with common/gaussian_moments.py; algo/privgene.py
with run_privgene_logistic.py) where it differs, and ``correct`` is left as it was."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import comb

from dpbench.algorithms import dp_sgd as dp_sgd_module
from dpbench.algorithms.base import Tracer
from dpbench.algorithms.registry import make_algorithm
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.plot.leaderboard import cell_statistics
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent, PureDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.published import (
    gaussian_fixed_batch_priced_as_poisson,
    moments_accountant_epsilon,
    moments_accountant_steps,
)
from dpbench.problems import make_problem

pytestmark = pytest.mark.xdist_group(
    "algorithms.test_sgd_privgene_fidelity"
)  # its module-scoped fixture is made once, on one worker

DELTA = 1e-8
BANK_TRAIN_N = 36169  # 4/5 of the 45,211 rows of DP-AGD's BANK.dat


def _problem(n: int = 400, d: int = 5, reg: float = 1e-3, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    X[:, 0] = 1.0
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0.0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=reg)


def _fit(name: str, params: dict, problem, ledger, seed: int = 1):
    return make_algorithm(name, params).fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, ledger))


def _log_moment(q: float, sigma: float, lam: int) -> float:
    """α(λ) = ln E_{z~μ0}[(μ(z)/μ0(z))^{λ+1}], μ0 = N(0, σ²), μ = (1 − q)μ0 + q·N(1, σ²), by the binomial
    expansion E_{μ0}[e^{k(2z−1)/(2σ²)}] = e^{(k²−k)/(2σ²)} (Abadi et al. 2016, Sec. 3.2), independent of dpbench."""
    k = np.arange(lam + 2)
    return float(
        np.log(np.sum(comb(lam + 1, k) * (1 - q) ** (lam + 1 - k) * q**k * np.exp((k * k - k) / (2 * sigma**2))))
    )


# ----------------------------------------------------------------------------------- modes
def test_authors_code_dp_sgd_needs_the_fixed_sigma():
    with pytest.raises(ConfigError, match="noise must be fixed, got 'calibrated' \\(use algorithm=dp_sgd_sigma4\\)"):
        make_algorithm("dp_sgd", {"fidelity": "authors_code"})
    for name in ("dp_sgd", "privgene"):
        with pytest.raises(ConfigError, match=f"algorithm {name}: fidelity must be one of correct, authors_code"):
            make_algorithm(name, {"fidelity": "paper"})
    assert make_algorithm("dp_sgd", {"noise": "fixed", "fidelity": "authors_code"}).fidelity_mode.breaks_guarantee
    assert make_algorithm("privgene", {"fidelity": "authors_code"}).fidelity_mode.breaks_guarantee == ""


def test_privgene_composes_in_zcdp_only_under_authors_code():
    assert make_algorithm("privgene", {}).accountant == "pure"
    assert make_algorithm("privgene", {"fidelity": "authors_code"}).accountant == "zcdp"


# ----------------------------------------------------------------------------------- DP-SGD's accounting
def test_the_moments_accountant_reads_lambda_32_alone():
    """ε = (T·α(32) + ln 1/δ)/32 with α from an independent binomial expansion; at BANK's fold size
    (b = 200) the code's T at ε = 0.8 is 6817 (its own functions give the same), none fits at ε = 0.4,
    and the minimum over λ = 1..32 the code meant to take would allow 33,498 steps at ε = 1.6, not 31,126."""
    q = 200 / BANK_TRAIN_N
    assert int(math.sqrt(BANK_TRAIN_N) + 10) == 200
    for steps in (1, 100, 6817, 20000):
        hand = (steps * _log_moment(q, 4.0, 32) + math.log(1 / DELTA)) / 32
        assert moments_accountant_epsilon(q, 4.0, steps, DELTA) == pytest.approx(hand, rel=1e-9)
    assert moments_accountant_steps(q, 4.0, 0.8, DELTA) == 6817
    assert moments_accountant_steps(q, 4.0, 0.4, DELTA) == 0
    assert moments_accountant_steps(q, 4.0, 1.6, DELTA) == 31126
    grid = max(math.floor((lam * 1.6 - math.log(1 / DELTA)) / _log_moment(q, 4.0, lam)) for lam in range(1, 33))
    assert grid == 33498


def test_the_ledger_affords_more_steps_than_the_code_takes():
    """The code's single order overstates ε: dpbench's ledger (orders 2..512, tight conversion) accepts
    2953 steps at ε = 0.4 where the code takes none, and at every ε more than the code takes."""
    q = 200 / BANK_TRAIN_N
    event = PoissonSampledEvent(q, GaussianEvent(4.0))
    assert Ledger(0.4, DELTA, "rdp").max_affordable(event, 10**6) == 2953
    for eps in (0.8, 1.6):
        assert Ledger(eps, DELTA, "rdp").max_affordable(event, 10**6) > moments_accountant_steps(q, 4.0, eps, DELTA)


def test_authors_code_dp_sgd_charges_its_steps_as_poisson_and_takes_the_code_steps():
    problem = _problem(n=400)
    batch = int(math.sqrt(400) + 10)  # 30
    ledger = Ledger(4.0, 1e-5, "rdp")
    fitted = _fit("dp_sgd", {"noise": "fixed", "fidelity": "authors_code"}, problem, ledger)
    steps = moments_accountant_steps(batch / 400, 4.0, 4.0, 1e-5)
    assert steps > 0 and fitted.n_iterations == steps and fitted.info["batch_size"] == batch
    (entry,) = ledger.entries
    assert entry.event == PoissonSampledEvent(batch / 400, GaussianEvent(4.0)) and entry.count == steps
    assert ledger.eps_spent <= fitted.info["moments_accountant_eps"] <= 4.0

    correct = Ledger(4.0, 1e-5, "rdp")
    assert _fit("dp_sgd", {"noise": "fixed"}, problem, correct).n_iterations > steps


def test_authors_code_dp_sgd_steps_on_b_distinct_rows_without_the_regulariser(monkeypatch):
    """With the noise removed, one step is exactly w₁ = −η·Σ_B clip(∇ℓ_i(0))/b over b distinct rows
    (no μw term, which at w₀ = 0 is zero anyway: the second step checks it)."""
    problem = _problem(n=400, reg=0.5)
    batches = []
    record = problem.clipped_gradient_sum

    def spy(w, rows, clip):
        batches.append(np.array(rows))
        return record(w, rows, clip)

    monkeypatch.setattr(problem, "clipped_gradient_sum", spy)
    monkeypatch.setattr(dp_sgd_module, "gaussian_fixed_batch_priced_as_poisson", lambda value, **_: value)
    fitted = _fit(
        "dp_sgd", {"noise": "fixed", "fidelity": "authors_code", "max_iterations": 2}, problem, Ledger(4.0, 1e-5, "rdp")
    )
    assert [len(b) for b in batches] == [30, 30] and all(len(np.unique(b)) == 30 for b in batches)
    w = np.zeros(problem.dim)
    for rows in batches:
        w = w - 0.05 * record(w, rows, 4.0) / 30
    np.testing.assert_allclose(fitted.w, w, rtol=1e-12)


def test_the_fixed_batch_mechanism_charges_the_poisson_event():
    ledger = Ledger(1.0, 1e-5, "rdp")
    out = gaussian_fixed_batch_priced_as_poisson(
        np.zeros(3),
        sensitivity=2.0,
        noise_multiplier=4.0,
        batch_size=5,
        population=50,
        rng=np.random.default_rng(0),
        ledger=ledger,
    )
    assert ledger.entries[0].event == PoissonSampledEvent(0.1, GaussianEvent(4.0))
    np.testing.assert_array_equal(out, np.random.default_rng(0).normal(0.0, 8.0, size=3))
    with pytest.raises(ValueError, match="batch_size \\(51\\) exceeds population \\(50\\)"):
        gaussian_fixed_batch_priced_as_poisson(
            np.zeros(3),
            sensitivity=1.0,
            noise_multiplier=4.0,
            batch_size=51,
            population=50,
            rng=np.random.default_rng(0),
            ledger=ledger,
        )


# ----------------------------------------------------------------------------------- PrivGene's budget split
def test_authors_code_privgene_splits_the_budget_by_zcdp():
    """ε_sel = √(2ρ/r), ρ = (ε/(√(L + ε) + √L))², L = ln 1/δ: run_privgene_logistic.py at BANK's fold
    size and ε = 1.6 (r = 72) prints 0.0304192470792; correct spends ε/r = 0.0222 by basic composition."""
    problem = _problem(n=BANK_TRAIN_N, d=3)
    L = math.log(1 / DELTA)
    rho = (1.6 / (math.sqrt(L + 1.6) + math.sqrt(L))) ** 2
    method = make_algorithm("privgene", {"fidelity": "authors_code"})
    r = method.n_rounds(BANK_TRAIN_N, 1.6)
    assert r == 72 and math.sqrt(2 * rho / r) == pytest.approx(0.0304192470792, rel=1e-10)
    ledger = Ledger(1.6, DELTA, method.accountant)
    fitted = method.fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    assert fitted.info["eps_per_selection"] == pytest.approx(math.sqrt(2 * rho / r), rel=1e-9)
    assert ledger.entries[0].event == PureDPEvent(fitted.info["eps_per_selection"]) and ledger.eps_spent <= 1.6
    correct = Ledger(1.6, DELTA, "pure")
    assert _fit("privgene", {}, problem, correct).info["eps_per_selection"] == pytest.approx(1.6 / 72, rel=1e-12)


def test_authors_code_privgene_scores_without_the_regulariser():
    """The code's fitness is the loss sum alone, so Δ'_t = 2δ_t exactly; correct's regularised fitness
    adds (μ/2)(max‖w‖² − min‖w‖²) once the parent has left the origin."""
    problem = _problem(n=4000, reg=0.1)
    final = {}
    for fidelity in ("correct", "authors_code"):
        method = make_algorithm("privgene", {"fidelity": fidelity})
        ledger = Ledger(0.8, DELTA, method.accountant)
        final[fidelity] = method.fit(problem, ledger, np.random.default_rng(2), Tracer(problem, ledger)).info
    assert final["authors_code"]["final_sensitivity"] == pytest.approx(
        2 * final["authors_code"]["final_mutation_scale"]
    )
    assert final["correct"]["final_sensitivity"] > 2 * final["correct"]["final_mutation_scale"]


# ----------------------------------------------------------------------------------- rows and rankings
JOB = ("dataset.n=1500", "dataset.seed=1", "reps=1", "cv.folds=2", "progress=false", "privacy.eps=2.0")


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolve import run_config
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    out = {}
    for key, overrides in {
        ("dp_sgd", "correct"): ("algorithm=dp_sgd_sigma4",),
        ("dp_sgd", "authors_code"): ("algorithm=dp_sgd_sigma4", "algorithm.fidelity=authors_code"),
        ("privgene", "authors_code"): ("algorithm=privgene", "algorithm.fidelity=authors_code"),
    }.items():
        with initialize_config_dir(version_base="1.3", config_dir=str(config_dir())):
            cfg = run_config(compose(config_name="config", overrides=[*JOB, *overrides]))
        out[key] = run_job(make_plan(cfg), tmp_path_factory.mktemp("_".join(key)))
    return out


def test_engine_rows_are_labelled_where_the_guarantee_breaks(rows):
    sgd = rows["dp_sgd", "authors_code"]
    assert set(sgd["fidelity"]) == {"authors_code"} and not sgd["guarantee_valid"].any()
    assert sgd["guarantee_note"].str.startswith("fidelity=authors_code: batches of fixed size drawn without").all()
    assert (sgd["eps_spent"] <= sgd["eps"]).all()
    assert (sgd["n_iterations"] < rows["dp_sgd", "correct"]["n_iterations"]).all()

    gene = rows["privgene", "authors_code"]
    assert set(gene["fidelity"]) == {"authors_code"} and gene["guarantee_valid"].all()
    assert set(gene["accountant"]) == {"zcdp"} and set(gene["guarantee_note"]) == {""}
    assert (gene["eps_spent"] <= gene["eps"]).all()


def test_the_leaderboard_ranks_neither_authors_code_run(rows):
    table = pd.concat([rows["dp_sgd", "authors_code"], rows["privgene", "authors_code"]], ignore_index=True)
    ranks = cell_statistics(table).set_index("algorithm")["rank"]
    assert ranks.isna().all()
    ranks = cell_statistics(pd.concat([rows["dp_sgd", "correct"], rows["privgene", "authors_code"]])).set_index(
        "algorithm"
    )["rank"]
    assert ranks["dp_sgd"] == 1.0 and math.isnan(ranks["privgene"])
