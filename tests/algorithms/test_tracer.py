"""The trace's automatic cadence: about ``max_points`` records, and with ``max_share`` = s no record
closer than n̄/s rows of the algorithm's announced work to the previous one (tracing ≤ 10 % of a fit). The
work is counted from public values (q·n̄ per Poisson step, n̄ per full batch), never from the rows a run
actually touched: which iterations a trace records is published with it."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.chen_lee import DPBLSGD
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.kuru import DPNAG
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem


def _problem(n=4000, d=5, seed=0, reg=0.02):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=reg, public_feature_bound=1.0)  # U[0,1] features


def _iterations(tracer: Tracer) -> list[int]:
    return [row["iteration"] for row in tracer.rows]


def test_planned_rows_space_records_by_work_and_keep_first_and_last():
    problem = _problem()
    ledger = Ledger(1e3, 1e-8, RDPAccountant())
    tracer = Tracer(problem, ledger, max_share=0.1)
    result = DPSGD(noise="fixed", noise_multiplier=1.0, batch_size=40, max_iterations=2000).fit(
        problem, ledger, np.random.default_rng(0), tracer
    )
    # q·n = 40 rows per step, n/s = 40,000 rows between records: every 1000th step
    assert tracer.every == 1000
    assert _iterations(tracer) == [0, 1000, 2000] and result.n_iterations == 2000


def test_without_a_share_the_cadence_is_about_max_points():
    problem = _problem()
    ledger = Ledger(1e3, 1e-8, RDPAccountant())
    tracer = Tracer(problem, ledger)
    DPSGD(noise="fixed", noise_multiplier=1.0, batch_size=40, max_iterations=2000).fit(
        problem, ledger, np.random.default_rng(0), tracer
    )
    assert tracer.every == 10 and len(tracer.rows) == 201


def test_full_batch_iterations_are_recorded_every_tenth_at_a_share_of_one_tenth():
    problem = _problem()
    ledger = Ledger(1.0, 1e-8, "pure")
    tracer = Tracer(problem, ledger, max_share=0.1)
    DPNAG(iterations=100, smoothness=5.1033).fit(problem, ledger, np.random.default_rng(0), tracer)
    assert _iterations(tracer) == list(range(0, 101, 10))


def test_runs_of_unknown_length_are_spaced_by_their_public_rows_not_their_secret_batches():
    """DP-BLSGD (Poisson batches at q = 0.05 of n̄ = 4000, adaptive stopping) announces q·n̄ = 200 rows per step:
    with s = 0.1 a record every ⌈40,000/200⌉ = 200 steps, whatever the batches drawn. Before, the spacing
    followed the counted evaluations Σ|B_t|, so two runs differing only in their secret batch draws recorded
    different iterations."""
    recorded = []
    for seed in (0, 1):
        problem = _problem()
        ledger = Ledger(2.0, 1e-8, RDPAccountant(**DPBLSGD().accountant_options()))
        tracer = Tracer(problem, ledger, max_share=0.1)
        result = DPBLSGD(sampling_rate=0.05).fit(problem, ledger, np.random.default_rng(seed), tracer)
        iterations = _iterations(tracer)
        assert tracer.every == 200 and iterations[-1] == result.n_iterations
        assert all(t % 200 == 0 for t in iterations[:-1]) and 2 < len(iterations) < result.n_iterations
        recorded.append(iterations[:-1])
    shorter = min(len(r) for r in recorded)
    assert recorded[0][:shorter] == recorded[1][:shorter]


def test_an_explicit_every_ignores_the_share():
    problem = _problem()
    ledger = Ledger(1.0, 1e-8, "pure")
    tracer = Tracer(problem, ledger, every=1, max_share=0.1)
    DPNAG(iterations=30, smoothness=5.1033).fit(problem, ledger, np.random.default_rng(0), tracer)
    assert _iterations(tracer) == list(range(31))


@pytest.mark.parametrize("share", [0.0, -0.1, float("nan")])
def test_a_share_must_be_positive(share):
    with pytest.raises(ValueError, match="max_share"):
        Tracer(_problem(), None, max_share=share)
