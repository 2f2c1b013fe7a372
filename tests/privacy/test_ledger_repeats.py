"""Repeated charges paid from the ledger's reserve decide and spend exactly as the full path does.

The reference below prices a sequence of charges from scratch, by the definition in the Ledger
docstring: Σ_e n_e·cost(e) over the distinct events in first-charge order, converted once; a charge
is accepted iff that ε ≤ budget. Sequences draw from a few events and labels so that long runs of
repeats, interruptions by other events and refusals at the end of the budget all occur.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.events import (
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureDPEvent,
    ZCDPEvent,
)
from dpbench.privacy.ledger import BudgetExceeded, Ledger

EVENTS = {
    "rdp": [
        PoissonSampledEvent(0.01, GaussianEvent(1.0)),
        GaussianEvent(30.0),
        PoissonSampledEvent(0.1, LaplaceEvent(20.0)),
    ],
    "zcdp": [ZCDPEvent(1e-3), GaussianEvent(40.0)],
    "pure": [PureDPEvent(0.01), LaplaceEvent(300.0)],
}


def _reference_eps(accountant, accepted: list[tuple[object, int]], delta: float) -> float:
    order: dict[object, int] = {}
    for event, count in accepted:
        order[event] = order.get(event, 0) + count
    total = accountant.zero()
    for event, count in order.items():
        total = total + count * accountant.cost(event)
    return accountant.epsilon(total, delta)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    name=st.sampled_from(sorted(EVENTS)),
    budget=st.floats(0.05, 3.0),
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(["a", "b"]), st.integers(1, 3), st.booleans()),
        min_size=1,
        max_size=120,
    ),
    run_length=st.integers(1, 400),
)
def test_repeats_accept_refuse_and_spend_as_the_definition(name, budget, steps, run_length):
    delta = 1e-6
    reference = make_accountant(name)
    ledger = Ledger(budget, delta, name)
    events = EVENTS[name]
    accepted: list[tuple[object, int]] = []
    n_calls = 0
    # a long run of one event first (the DP-SGD pattern), then a mixed sequence
    for which, label, count, read in [(0, "a", 1, False)] * run_length + steps:
        event = events[which % len(events)]
        fits = _reference_eps(reference, accepted + [(event, count)], delta) <= budget
        if fits:
            ledger.pay(event, count, label)
            accepted.append((event, count))
            n_calls += 1
        else:
            with pytest.raises(BudgetExceeded):
                ledger.pay(event, count, label)
        if read:
            assert ledger.eps_spent == _reference_eps(reference, accepted, delta)
    assert ledger.eps_spent == _reference_eps(reference, accepted, delta) <= budget
    summary = ledger.summary()
    assert summary["n_charges"] == n_calls
    assert sum(entry.count for entry in ledger.entries) == sum(count for _, count in accepted)
    assert ledger.entries == [] or ledger.entries[-1].eps_after == ledger.eps_spent


def test_a_run_of_repeats_is_one_entry_and_stops_exactly_where_the_budget_does():
    event = PoissonSampledEvent(0.01, GaussianEvent(2.0))
    fresh = Ledger(1.0, 1e-6, "rdp")
    affordable = fresh.max_affordable(event)
    assert affordable > 1000
    ledger = Ledger(1.0, 1e-6, "rdp")
    for _ in range(affordable):
        ledger.pay(event, label="step")
    with pytest.raises(BudgetExceeded):
        ledger.pay(event, label="step")
    [entry] = ledger.entries
    assert (entry.label, entry.count, entry.eps_after) == ("step", affordable, ledger.eps_spent)
    assert ledger.eps_spent == fresh.eps_if(event, affordable) <= 1.0 < fresh.eps_if(event, affordable + 1)
    assert ledger.summary()["n_charges"] == affordable


def test_another_label_or_a_batch_starts_a_new_entry():
    ledger = Ledger(10.0, 1e-6, "rdp")
    event = GaussianEvent(50.0)
    for label in ("a", "a", "b", "b", "a"):
        ledger.pay(event, label=label)
    batch = ledger.poisson_batch(0.1)
    batch.charge(event, label="a")
    ledger.pay(event, label="a")
    assert [(e.label, e.count, e.batch) for e in ledger.entries] == [
        ("a", 2, None),
        ("b", 2, None),
        ("a", 1, None),
        ("a", 1, 0),
        ("a", 1, None),
    ]
    assert all(not math.isnan(e.eps_after) for e in ledger.entries)
