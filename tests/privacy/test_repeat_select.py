"""Papernot & Steinke's repeat-and-select RDP, against dp-accounting's RepeatAndSelectDpEvent."""

from __future__ import annotations

import math
import re

import dp_accounting
import dp_accounting.dp_event
import dp_accounting.rdp
import numpy as np
import pytest

from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    rdp_gaussian,
    rdp_poisson_subsampled_gaussian,
)
from dpbench.privacy.repeat_select import (
    delta_from_rdp,
    rdp_repeat_and_select,
    sample_trials,
    tnb_gamma,
    tnb_mean,
)

ORDERS = np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256], dtype=float)


def _theirs(event, orders=ORDERS):
    accountant = dp_accounting.rdp.RdpAccountant(orders=list(orders))
    accountant.compose(event)
    return np.asarray(accountant._rdp)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0, math.inf])
@pytest.mark.parametrize("mean", [1.0, 3.0, 10.0, 40.0])
@pytest.mark.parametrize("sigma", [1.0, 3.0])
def test_matches_dp_accounting(shape, mean, sigma):
    ours = rdp_repeat_and_select(ORDERS, rdp_gaussian(sigma, ORDERS), mean, shape)
    theirs = _theirs(dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(sigma), mean, shape))
    finite = np.isfinite(theirs)
    assert np.array_equal(np.isfinite(ours), finite)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-6)


def test_matches_dp_accounting_for_a_composed_subsampled_trial():
    curve = 200 * rdp_poisson_subsampled_gaussian(0.01, 1.1, DEFAULT_ORDERS)
    ours = rdp_repeat_and_select(DEFAULT_ORDERS, curve, 8.0, 1.0)
    trial = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 200
    )
    theirs = _theirs(dp_accounting.dp_event.RepeatAndSelectDpEvent(trial, 8.0, 1.0), DEFAULT_ORDERS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_geometric_closed_form_and_the_cost_of_selection():
    """η = 1, γ = 1/μ: ε′(λ) = ε(λ) + 2·min_λ̂[(1 − 1/λ̂)ε(λ̂) + log μ/λ̂] + log μ/(λ − 1) (Thm 2);
    one trial (μ = 1) costs exactly its own curve, more trials cost more."""
    curve = rdp_gaussian(2.0, ORDERS)
    mu = 5.0
    constant = 2 * np.min((1 - 1 / ORDERS) * curve + math.log(mu) / ORDERS)
    expected = np.minimum.accumulate((curve + constant + math.log(mu) / (ORDERS - 1))[::-1])[::-1]
    np.testing.assert_allclose(rdp_repeat_and_select(ORDERS, curve, mu, 1.0), expected, rtol=1e-12)
    one = rdp_repeat_and_select(ORDERS, curve, 1.0, 1.0)
    assert np.all(one >= curve - 1e-12)
    assert np.all(rdp_repeat_and_select(ORDERS, curve, 10.0, 1.0) > one)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("mean", [1.5, 10.0, 100.0])
def test_gamma_inverts_the_mean_on_the_conservative_side(shape, mean):
    gamma = tnb_gamma(mean, shape)
    assert tnb_mean(gamma, shape) == pytest.approx(mean, rel=1e-9) and tnb_mean(gamma, shape) >= mean * (1 - 1e-15)


@pytest.mark.parametrize("shape", [0.0, 1.0, 2.0, math.inf])
def test_sampled_trial_counts_have_the_declared_mean(shape):
    """20 000 draws; the sample mean is within 5 standard errors (P(fail) < 1e-6 for a light tail)."""
    rng = np.random.default_rng(0)
    draws = np.array([sample_trials(6.0, shape, rng) for _ in range(20_000)])
    assert (draws >= (0 if shape == math.inf else 1)).all()
    assert abs(draws.mean() - 6.0) < 5 * draws.std() / math.sqrt(draws.size)


def test_delta_from_rdp_inverts_the_tight_conversion():
    from dpbench.privacy.rdp import eps_from_rdp

    curve = 50 * rdp_poisson_subsampled_gaussian(0.02, 1.0, DEFAULT_ORDERS)
    eps, _ = eps_from_rdp(DEFAULT_ORDERS, curve, 1e-6)
    assert delta_from_rdp(DEFAULT_ORDERS, curve, eps) == pytest.approx(1e-6, rel=1e-6)
    theirs, _ = dp_accounting.rdp.rdp_privacy_accountant.compute_delta(DEFAULT_ORDERS, curve, eps)
    assert delta_from_rdp(DEFAULT_ORDERS, curve, eps) == pytest.approx(theirs, rel=1e-9)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match=re.escape("mean number of trials must be finite and ≥ 1, got 0.5")):
        rdp_repeat_and_select(ORDERS, rdp_gaussian(1.0, ORDERS), 0.5, 1.0)
    with pytest.raises(ValueError, match="shape of the trial-count law must be ≥ 0"):
        sample_trials(3.0, -1.0, np.random.default_rng(0))


def test_the_rdp_ledger_prices_a_repeated_trial_as_dp_accounting_and_round_trips_it():
    from dpbench.privacy.accountants import (
        RDPAccountant,
        UnsupportedEvent,
        make_accountant,
    )
    from dpbench.privacy.events import (
        GaussianEvent,
        LaplaceEvent,
        PoissonSampledEvent,
        RepeatAndSelectEvent,
    )
    from dpbench.privacy.ledger import Ledger
    from dpbench.privacy.serialize import event_from_json, event_to_json

    trial = ((PoissonSampledEvent(0.01, GaussianEvent(1.1)), 300), (LaplaceEvent(20.0), 1))  # training + a noisy score
    event = RepeatAndSelectEvent(trial, 10.0, 1.0)
    ledger = Ledger(20.0, 1e-6, RDPAccountant())
    ledger.charge(event)
    theirs = dp_accounting.rdp.RdpAccountant(orders=list(DEFAULT_ORDERS))
    theirs.compose(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(
            dp_accounting.ComposedDpEvent(
                [
                    dp_accounting.SelfComposedDpEvent(
                        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 300
                    ),
                    dp_accounting.LaplaceDpEvent(20.0),
                ]
            ),
            10.0,
            1.0,
        )
    )
    assert ledger.eps_spent == pytest.approx(theirs.get_epsilon(1e-6), rel=1e-6)
    assert event_from_json(event_to_json(event)) == event
    with pytest.raises(UnsupportedEvent):
        make_accountant("pure").cost(event)
