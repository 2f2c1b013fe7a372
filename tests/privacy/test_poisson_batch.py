"""Releases on one Poisson subsample are amplified jointly (a privacy fix over per-release amplification)."""

import numpy as np
import pytest

from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import (
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    PoissonSampledEvent,
)
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    eps_from_rdp,
    rdp_gaussian,
    rdp_laplace_above_threshold,
    rdp_poisson_subsampled,
)

GAUSS = GaussianEvent(1.5)
SVT = LaplaceAboveThresholdEvent(0.5, 0.25)


def _joint_lemma4(q, events_curve):
    return rdp_poisson_subsampled(q, events_curve, DEFAULT_ORDERS)


def test_a_lone_release_costs_what_a_plain_subsampled_charge_costs():
    a, b = Ledger(5.0, 1e-8, RDPAccountant()), Ledger(5.0, 1e-8, RDPAccountant())
    a.poisson_batch(0.1).charge(GAUSS)
    b.charge(PoissonSampledEvent(0.1, GAUSS))
    assert a.eps_spent == b.eps_spent


def test_releases_on_one_batch_are_amplified_together():
    accountant = RDPAccountant(gaussian_amplification="lemma4")
    ledger = Ledger(50.0, 1e-8, accountant)
    batch = ledger.poisson_batch(0.1)
    batch.charge(GAUSS, label="gradient")
    batch.charge(SVT, count=2, label="line search")

    def curve(orders):
        return rdp_gaussian(1.5, orders) + 2 * rdp_laplace_above_threshold(0.5, 0.25, orders)

    joint = _joint_lemma4(0.1, curve)
    assert ledger.eps_spent == pytest.approx(eps_from_rdp(DEFAULT_ORDERS, joint, 1e-8)[0], rel=1e-12)
    separate = accountant.cost(PoissonSampledEvent(0.1, GAUSS)) + 2 * accountant.cost(PoissonSampledEvent(0.1, SVT))
    # per-release amplification would under-count: the joint cost is larger at every order
    assert np.all(joint >= separate - 1e-15) and np.any(joint > separate * 1.01)
    assert [e.batch for e in ledger.entries] == [0, 0]


def test_refused_batch_charge_changes_nothing_and_batches_are_numbered():
    ledger = Ledger(2.0, 1e-8, RDPAccountant())
    ledger.poisson_batch(0.01).charge(GAUSS)
    batch = ledger.poisson_batch(0.5)
    batch.charge(GaussianEvent(20.0))
    before = (ledger.eps_spent, len(ledger.entries), batch.events)
    assert not batch.can_afford(GaussianEvent(0.1))
    with pytest.raises(BudgetExceeded):
        batch.charge(GaussianEvent(0.1))
    assert (ledger.eps_spent, len(ledger.entries), batch.events) == before
    assert [e.batch for e in ledger.entries] == [0, 1]
    batch.charge(GaussianEvent(20.0))  # still usable after a refusal
    assert ledger.eps_spent > before[0]


def test_full_batch_composes_without_amplification():
    a, b = Ledger(10.0, 1e-8, RDPAccountant()), Ledger(10.0, 1e-8, RDPAccountant())
    batch = a.poisson_batch(1.0)
    batch.charge(GAUSS)
    batch.charge(SVT)
    b.charge(GAUSS)
    b.charge(SVT)
    assert a.eps_spent == pytest.approx(b.eps_spent, rel=1e-12)
