"""Per-trial budgets of private tuning (dpbench.privacy.trial_budget), against dp-accounting's
RepeatAndSelectDpEvent and against the ledgers they build."""

from __future__ import annotations

import math

import dp_accounting
import dp_accounting.dp_event
import dp_accounting.rdp
import numpy as np
import pytest

from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import (
    GaussianEvent,
    PureDPEvent,
    RenyiBoundEvent,
    ZCDPEvent,
)
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.trial_budget import (
    plan_trials,
    total_epsilon,
    training_ledger,
    training_rdp,
    training_strength,
)


def dp_accounting_total(order: float, rdp: float, mean: float, shape: float, delta: float) -> float:
    """dp-accounting's ε for repeat-and-select over trials that are (order, rdp)-RDP: at the one order α
    a Gaussian of σ = √(α/(2ρ)) has exactly that RDP, so it stands for the trial there."""
    accountant = dp_accounting.rdp.RdpAccountant(orders=[order])
    trial = dp_accounting.GaussianDpEvent(math.sqrt(order / (2.0 * rdp)))
    accountant.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(trial, mean, shape))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0, math.inf])
@pytest.mark.parametrize("mean", [2.0, 4.0, 10.0])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_the_plan_spends_the_budget_exactly_as_dp_accounting_prices_it(eps, mean, shape):
    delta = 1e-6
    budget = plan_trials(eps, delta, mean, shape, 0.2)
    ours = total_epsilon(budget.order, budget.rdp, mean, shape, delta)
    assert ours <= eps and ours >= eps * (1 - 1e-6)  # within the budget, and not wasting it
    assert ours == pytest.approx(dp_accounting_total(budget.order, budget.rdp, mean, shape, delta), rel=1e-6)
    ledger = Ledger(eps, delta, budget.accountant())
    assert ledger.charge(budget.event()) == ours
    assert budget.score_rdp == pytest.approx(0.2 * budget.rdp) and budget.train_rdp == pytest.approx(0.8 * budget.rdp)
    assert budget.order / (2 * budget.score_noise_multiplier**2) == pytest.approx(budget.score_rdp)


def test_more_trials_leave_each_trial_less():
    """What a Gaussian trial can buy, ρ/α (the order moves with the number of trials), falls with E[K]."""
    budgets = [plan_trials(1.0, 1e-6, mean, 1.0, 0.2) for mean in (1.0, 2.0, 8.0, 32.0)]
    strengths = [training_strength(b.train_rdp, b.order, "rdp") for b in budgets]
    assert strengths == sorted(strengths, reverse=True) and strengths[-1] < 0.6 * strengths[0]


def test_a_budget_that_cannot_pay_the_selection_is_refused():
    with pytest.raises(ValueError, match="cannot pay repeat-and-select"):
        plan_trials(1e-4, 1e-10, 1000.0, 1.0, 0.2)


def test_a_renyi_bound_holds_at_and_below_its_order_only():
    accountant = RDPAccountant(orders=np.array([2.0, 4.0, 8.0]))
    np.testing.assert_array_equal(accountant.cost(RenyiBoundEvent(4.0, 0.1)), [0.1, 0.1, np.inf])


@pytest.mark.parametrize(
    "accountant, event, rdp_of_one",
    [
        ("rdp", GaussianEvent(30.0), lambda a: a / (2 * 30.0**2)),
        ("zcdp", ZCDPEvent(1e-4), lambda a: a * 1e-4),
        ("pure", PureDPEvent(0.004), None),
    ],
)
def test_a_training_ledger_keeps_the_trial_within_its_share_at_the_order(accountant, event, rdp_of_one):
    budget = plan_trials(1.0, 1e-6, 4.0, 1.0, 0.2, accountant)
    ledger = training_ledger(budget, accountant, {}, "add_remove")
    charged = 0
    with pytest.raises(BudgetExceeded):
        while True:
            ledger.charge(event)
            charged += 1
    spent = training_rdp(ledger, budget.order)
    assert charged > 1 and spent <= budget.train_rdp
    one_more = charged + 1
    if rdp_of_one is not None:
        assert one_more * rdp_of_one(budget.order) > budget.train_rdp * (
            1 - 1e-9
        )  # the filter was not needlessly strict
    else:  # pure: ε-DP is (α, min(ε, αε²/2))-RDP
        eps = one_more * 0.004
        assert min(eps, budget.order * eps**2 / 2) > budget.train_rdp * (1 - 1e-9)


def test_an_approximate_dp_method_has_no_trial_ledger():
    budget = plan_trials(1.0, 1e-6, 4.0, 1.0, 0.2)
    with pytest.raises(ValueError, match="no Rényi curve"):
        training_ledger(budget, "approx", {}, "add_remove")
