"""liu_dda accounting with the RDP accountant: the gossip drawn in advance, release counts, σ calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpbench.dda.accounting import release_event, releases_per_sample, sigma_for_budget
from dpbench.dda.gossip import activation_counts, activation_probability, edge_schedule
from dpbench.dda.simulator import DDASimulator, split_rows
from dpbench.privacy.events import GaussianEvent, SampledWithoutReplacementEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    eps_from_rdp,
    rdp_gaussian,
    rdp_sampled_without_replacement,
)

LEVEL = 1e-3  # χ² tests reject a correct sampler with probability 0.1%


@pytest.mark.parametrize("n_edges", [1, 2, 3])
def test_edge_schedule_draws_distinct_uniform_edges(n_edges):
    n, steps = 6, 60_000
    schedule = edge_schedule(n, n_edges, steps, np.random.default_rng(n_edges))
    assert schedule.shape == (steps, n_edges, 2) and np.all(schedule[..., 0] < schedule[..., 1])
    index = schedule[..., 0] * n + schedule[..., 1]
    assert np.all(np.sort(index, axis=1)[:, 1:] != np.sort(index, axis=1)[:, :-1])  # distinct within an iteration
    counts = np.unique(index, return_counts=True)[1]
    assert counts.size == n * (n - 1) // 2
    assert chisquare(counts).pvalue > LEVEL  # every edge equally likely
    active = activation_counts(n, schedule)
    # expected active share ι per node: within 4 binomial standard deviations (failure prob. < 1e-4 per node)
    iota = activation_probability(n, n_edges)
    assert np.all(np.abs(active / steps - iota) < 4 * math.sqrt(iota * (1 - iota) / steps))


def test_activation_counts_count_a_shared_node_once():
    schedule = np.array([[[0, 1], [1, 2]], [[2, 3], [0, 3]]])
    np.testing.assert_array_equal(activation_counts(4, schedule), [2, 1, 2, 1])
    assert releases_per_sample(4, schedule, 2) == 2 and releases_per_sample(4, None, 7) == 7
    with pytest.raises(ValueError, match=r"endpoints must be in \[0, 4\)"):
        activation_counts(4, schedule + 1)
    with pytest.raises(ValueError, match="the schedule has 2 iterations, expected 3"):
        releases_per_sample(4, schedule, 3)


def test_simulator_follows_a_given_schedule():
    rng = np.random.default_rng(0)
    features, labels = rng.normal(size=(60, 4)), np.where(rng.random(60) < 0.5, -1.0, 1.0)
    rows = split_rows(60, 5, np.random.default_rng(1))
    schedule = edge_schedule(5, 2, 30, np.random.default_rng(2))
    sim = DDASimulator(
        features,
        labels,
        rows,
        regulariser="l2",
        strength=0.01,
        sigma=0.5,
        iterations=30,
        rng=np.random.default_rng(3),
        n_edges=2,
        schedule_edges=schedule,
    )
    for t in range(30):
        np.testing.assert_array_equal(sim.step(), np.unique(schedule[t]))
    with pytest.raises(ValueError, match=r"schedule_edges must have shape \(iterations, n_edges, 2\) = \(30, 1, 2\)"):
        DDASimulator(
            features,
            labels,
            rows,
            regulariser="l2",
            strength=0.01,
            sigma=0.5,
            iterations=30,
            rng=np.random.default_rng(3),
            n_edges=1,
            schedule_edges=schedule,
        )
    repeated = schedule.copy()
    repeated[7, 1] = repeated[7, 0]
    with pytest.raises(ValueError, match="distinct edges within an iteration"):
        DDASimulator(
            features,
            labels,
            rows,
            regulariser="l2",
            strength=0.01,
            sigma=0.5,
            iterations=30,
            rng=np.random.default_rng(3),
            n_edges=2,
            schedule_edges=repeated,
        )
    looped = schedule.copy()
    looped[3, 0] = [2, 2]
    with pytest.raises(ValueError, match="self-loop"):
        DDASimulator(
            features,
            labels,
            rows,
            regulariser="l2",
            strength=0.01,
            sigma=0.5,
            iterations=30,
            rng=np.random.default_rng(3),
            n_edges=2,
            schedule_edges=looped,
        )
    with pytest.raises(ValueError, match="no edge schedule"):
        DDASimulator(
            features,
            labels,
            rows,
            regulariser="l2",
            strength=0.01,
            sigma=0.5,
            iterations=30,
            rng=np.random.default_rng(3),
            all_nodes=True,
            schedule_edges=schedule,
        )


def test_release_event_is_a_gaussian_of_sensitivity_2L_on_one_of_q_samples():
    assert release_event(3.0, lipschitz=1.5, q=100) == SampledWithoutReplacementEvent(1, 100, GaussianEvent(1.0))


@pytest.mark.parametrize(
    ("epsilon", "delta", "releases", "q"), [(0.8, 1e-5, 4_884, 1_628), (0.2, 1e-6, 500, 50), (1.0, 1e-5, 10, 1)]
)
def test_sigma_for_budget_is_the_smallest_sigma_the_ledger_accepts(epsilon, delta, releases, q):
    lipschitz = 1.3
    sigma = sigma_for_budget(epsilon, delta, releases=releases, lipschitz=lipschitz, q=q)
    ledger = Ledger(epsilon, delta, "rdp")
    ledger.charge(release_event(sigma, lipschitz=lipschitz, q=q), releases)
    assert epsilon * (1 - 1e-4) <= ledger.eps_spent <= epsilon
    assert not Ledger(epsilon, delta, "rdp").can_afford(
        release_event(sigma * (1 - 1e-5), lipschitz=lipschitz, q=q), releases
    )
    # the spend is the closed chain: releases × WBK19 Thm 9 curve, converted at δ
    curve = releases * rdp_sampled_without_replacement(
        1 / q, lambda ls: rdp_gaussian(sigma / (2 * lipschitz), ls), DEFAULT_ORDERS
    )
    assert ledger.eps_spent == pytest.approx(eps_from_rdp(DEFAULT_ORDERS, curve, delta)[0], rel=1e-12)


def test_sigma_shrinks_with_more_samples_per_node_and_grows_with_releases():
    base = sigma_for_budget(0.5, 1e-5, releases=1_000, lipschitz=1.0, q=100)
    assert sigma_for_budget(0.5, 1e-5, releases=1_000, lipschitz=1.0, q=1_000) < base
    assert sigma_for_budget(0.5, 1e-5, releases=10_000, lipschitz=1.0, q=100) > base
    assert sigma_for_budget(0.5, 1e-5, releases=1_000, lipschitz=2.0, q=100) == pytest.approx(2 * base, rel=1e-5)
