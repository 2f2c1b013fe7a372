"""Accountants price every event as its closed form; the Ledger never lets ε exceed the budget."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbench.privacy.accountants import (
    PureDPAccountant,
    RDPAccountant,
    UnsupportedEvent,
    ZCDPAccountant,
    make_accountant,
)
from dpbench.privacy.events import (
    GaussianAboveThresholdEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PureDPEvent,
    SampledWithoutReplacementEvent,
    ZCDPEvent,
)
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.pure import amplify_pure
from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    eps_from_rdp,
    rdp_gaussian,
    rdp_gaussian_above_threshold,
    rdp_laplace,
    rdp_laplace_above_threshold,
    rdp_poisson_subsampled,
    rdp_poisson_subsampled_gaussian,
    rdp_pure,
    rdp_zcdp,
)
from dpbench.privacy.zcdp import zcdp_epsilon

ORDERS = DEFAULT_ORDERS


# --- RDP accountant ------------------------------------------------------------------------------

RDP_CASES = [
    (GaussianEvent(1.5), rdp_gaussian(1.5, ORDERS)),
    (LaplaceEvent(2.0), rdp_laplace(2.0, ORDERS)),
    (PureDPEvent(0.3), rdp_pure(0.3, ORDERS)),
    (ZCDPEvent(0.02), rdp_zcdp(0.02, ORDERS)),
    (LaplaceAboveThresholdEvent(0.2, 0.1), rdp_laplace_above_threshold(0.2, 0.1, ORDERS)),
    (GaussianAboveThresholdEvent(2.0, 3.0), rdp_gaussian_above_threshold(2.0, 3.0, ORDERS)),
    (PoissonSampledEvent(0.05, GaussianEvent(1.2)), rdp_poisson_subsampled_gaussian(0.05, 1.2, ORDERS)),
    (PoissonSampledEvent(0.05, PureDPEvent(0.3)), rdp_poisson_subsampled(0.05, lambda a: rdp_pure(0.3, a), ORDERS)),
    (
        PoissonSampledEvent(0.1, LaplaceAboveThresholdEvent(0.2, 0.1)),
        rdp_poisson_subsampled(0.1, lambda a: rdp_laplace_above_threshold(0.2, 0.1, a), ORDERS),
    ),
    (PoissonSampledEvent(1.0, LaplaceEvent(2.0)), rdp_laplace(2.0, ORDERS)),
    (NonPrivateEvent(), np.full(ORDERS.shape, np.inf)),
]


@pytest.mark.parametrize(("event", "curve"), RDP_CASES, ids=[repr(e) for e, _ in RDP_CASES])
def test_rdp_accountant_prices_closed_forms(event, curve):
    accountant = RDPAccountant()
    cost = accountant.cost(event)
    np.testing.assert_array_equal(cost, curve)
    assert accountant.cost(event) is cost  # cached
    assert not cost.flags.writeable  # shared cached curve cannot be corrupted by a caller


def test_rdp_accountant_subsampled_gaussian_is_exact_not_lemma4():
    cost = RDPAccountant().cost(PoissonSampledEvent(0.05, GaussianEvent(1.2)))
    lemma4 = rdp_poisson_subsampled(0.05, lambda a: rdp_gaussian(1.2, a), ORDERS)
    assert np.all(cost <= lemma4) and np.any(cost < lemma4)


@pytest.mark.parametrize("conversion", ["tight", "prop1"])
def test_rdp_accountant_epsilon_uses_its_conversion(conversion):
    accountant = RDPAccountant(orders=np.arange(2, 65), conversion=conversion)
    assert accountant.conversion == conversion and accountant.orders[-1] == 64
    total = 10 * accountant.cost(GaussianEvent(3.0))
    expected = eps_from_rdp(np.arange(2, 65), total, 1e-6, method=conversion)[0]
    assert accountant.epsilon(total, 1e-6) == expected
    empty = 0.0 if conversion == "tight" else pytest.approx(math.log(1e6) / 63)
    assert accountant.epsilon(accountant.zero(), 1e-6) == empty


def test_rdp_accountant_rejects_bad_options():
    with pytest.raises(ValueError, match="conversion"):
        RDPAccountant(conversion="cks")
    with pytest.raises(ValueError, match="orders"):
        RDPAccountant(orders=[1.0, 2.0])
    with pytest.raises(ValueError, match="integer"):
        RDPAccountant(orders=[1.5, 2.0]).cost(PoissonSampledEvent(0.1, GaussianEvent(1.0)))


# --- zCDP and pure accountants -------------------------------------------------------------------

ZCDP_CASES = [
    (GaussianEvent(2.0), 1 / 8),
    (ZCDPEvent(0.07), 0.07),
    (PureDPEvent(0.4), 0.08),
    (LaplaceEvent(4.0), 0.25**2 / 2),
    (GaussianAboveThresholdEvent(2.0, 3.0), (4 * 4 + 9) / (2 * 4 * 9)),
    (LaplaceAboveThresholdEvent(0.2, 0.1), 0.4**2 / 2),
    (PoissonSampledEvent(1.0, GaussianEvent(2.0)), 1 / 8),
    (NonPrivateEvent(), math.inf),
]


@pytest.mark.parametrize(("event", "rho"), ZCDP_CASES, ids=[repr(e) for e, _ in ZCDP_CASES])
def test_zcdp_accountant_prices_closed_forms(event, rho):
    accountant = ZCDPAccountant()
    assert accountant.cost(event) == pytest.approx(rho, rel=1e-15)
    assert accountant.epsilon(3 * rho, 1e-5) == zcdp_epsilon(3 * rho, 1e-5)


PURE_CASES = [
    (PureDPEvent(0.4), 0.4),
    (LaplaceEvent(4.0), 0.25),
    (LaplaceAboveThresholdEvent(0.2, 0.1), 0.4),
    (PoissonSampledEvent(0.1, LaplaceEvent(2.0)), amplify_pure(0.5, 0.1)),
    (PoissonSampledEvent(0.1, LaplaceAboveThresholdEvent(0.2, 0.1)), amplify_pure(0.4, 0.1)),
    (PoissonSampledEvent(1.0, PureDPEvent(0.7)), 0.7),
    (SampledWithoutReplacementEvent(1_000, 100_000, LaplaceEvent(0.5)), amplify_pure(2.0, 0.01)),
    (SampledWithoutReplacementEvent(50, 50, PureDPEvent(0.7)), 0.7),
    (NonPrivateEvent(), math.inf),
    (PoissonSampledEvent(0.1, NonPrivateEvent()), math.inf),
]


@pytest.mark.parametrize(("event", "eps"), PURE_CASES, ids=[repr(e) for e, _ in PURE_CASES])
def test_pure_accountant_prices_closed_forms(event, eps):
    accountant = PureDPAccountant()
    assert accountant.cost(event) == eps
    assert accountant.epsilon(2 * eps, 0.5) == 2 * eps


@pytest.mark.parametrize(
    ("accountant", "event", "hint"),
    [
        (ZCDPAccountant(), PoissonSampledEvent(0.5, GaussianEvent(1.0)), "accountant=rdp"),
        (PureDPAccountant(), GaussianEvent(1.0), "accountant=rdp"),
        (PureDPAccountant(), ZCDPEvent(0.1), "accountant=rdp"),
        (PureDPAccountant(), GaussianAboveThresholdEvent(1.0, 2.0), "accountant=rdp"),
        (PureDPAccountant(), PoissonSampledEvent(0.5, GaussianEvent(1.0)), "accountant=rdp"),
        (RDPAccountant(), "not an event", "rdp accountant"),
    ],
)
def test_unsupported_events(accountant, event, hint):
    with pytest.raises(UnsupportedEvent, match=hint) as info:
        accountant.cost(event)
    assert accountant.name in str(info.value)
    assert isinstance(info.value, ValueError)


def test_invalid_event_parameters_raise():
    for accountant in (RDPAccountant(), ZCDPAccountant(), PureDPAccountant()):
        with pytest.raises(ValueError, match="sampling_rate"):
            accountant.cost(PoissonSampledEvent(0.0, LaplaceEvent(1.0)))
        with pytest.raises(ValueError, match="noise_multiplier"):
            accountant.cost(LaplaceEvent(-1.0))


def test_make_accountant():
    assert isinstance(make_accountant("rdp", conversion="prop1"), RDPAccountant)
    assert make_accountant("zcdp").name == "zcdp" and make_accountant("pure").name == "pure"
    assert make_accountant("approx").name == "approx"
    with pytest.raises(ValueError, match=r"\['approx', 'pure', 'rdp', 'zcdp'\]"):
        make_accountant("moments")


def test_approx_accountant_composes_epsilon_and_delta_basically():
    from dpbench.privacy.events import ApproxDPEvent, PureDPEvent

    ledger = Ledger(1.0, 1e-6, make_accountant("approx"))
    ledger.charge(ApproxDPEvent(0.4, 4e-7))
    ledger.charge(PureDPEvent(0.3))
    assert ledger.eps_spent == pytest.approx(0.7)
    assert not ledger.can_afford(ApproxDPEvent(0.1, 7e-7))  # δ would exceed 1e-6
    assert ledger.can_afford(ApproxDPEvent(0.3, 6e-7)) and not ledger.can_afford(ApproxDPEvent(0.31, 1e-7))
    with pytest.raises(UnsupportedEvent):
        make_accountant("approx").cost(GaussianEvent(1.0))


# --- Ledger --------------------------------------------------------------------------------------


def test_ledger_charges_and_records():
    ledger = Ledger(2.0, 1e-5, RDPAccountant())
    assert ledger.eps_spent == 0.0 and ledger.entries == []
    event = PoissonSampledEvent(0.01, GaussianEvent(1.1))
    eps = ledger.charge(event, count=100, label="sgd")
    assert eps == ledger.eps_spent == RDPAccountant().epsilon(100 * RDPAccountant().cost(event), 1e-5)
    ledger.charge(LaplaceEvent(10.0), label="score")
    assert [(e.label, e.count) for e in ledger.entries] == [("sgd", 100), ("score", 1)]
    assert ledger.entries[-1].eps_after == ledger.eps_spent
    summary = ledger.summary()
    assert json.loads(json.dumps(summary)) == summary
    assert summary == {
        "accountant": "rdp",
        "conversion": "tight",
        "gaussian_amplification": "exact",
        "orders": None,
        "neighbouring": "add_remove",
        "epsilon": 2.0,
        "delta": 1e-5,
        "eps_spent": ledger.eps_spent,
        "n_charges": 2,
        "counts": {"PoissonSampledEvent[GaussianEvent]": 100, "LaplaceEvent": 1},
        "events": [
            {
                "event": {
                    "type": "PoissonSampledEvent",
                    "sampling_rate": 0.01,
                    "event": {"type": "GaussianEvent", "noise_multiplier": 1.1},
                },
                "count": 100,
            },
            {"event": {"type": "LaplaceEvent", "noise_multiplier": 10.0}, "count": 1},
        ],
    }
    assert Ledger(1.0, 0.1, "pure").summary()["conversion"] is None


def test_ledger_refuses_and_stays_unchanged():
    ledger = Ledger(1.0, 1e-5, PureDPAccountant())
    ledger.charge(PureDPEvent(0.6), label="first")
    with pytest.raises(BudgetExceeded) as info:
        ledger.charge(PureDPEvent(0.5), label="second")
    message = str(info.value)
    for part in ("'second'", "PureDPEvent(epsilon=0.5)", "eps = 1.1", "budget eps = 1"):
        assert part in message
    assert ledger.eps_spent == 0.6 and len(ledger.entries) == 1
    assert ledger.charge(PureDPEvent(0.4)) == 1.0  # spent == budget is allowed (no tolerance either way)


def test_ledger_non_private_event_is_refused():
    ledger = Ledger(5.0, 1e-5, RDPAccountant())
    assert not ledger.can_afford(NonPrivateEvent()) and ledger.max_affordable(NonPrivateEvent()) == 0
    with pytest.raises(BudgetExceeded):
        ledger.charge(NonPrivateEvent())


@pytest.mark.parametrize(
    "event",
    [PoissonSampledEvent(0.01, GaussianEvent(2.0)), LaplaceAboveThresholdEvent(0.01, 0.005), ZCDPEvent(1e-4)],
)
def test_max_affordable_is_exact(event):
    ledger = Ledger(1.0, 1e-6, RDPAccountant())
    ledger.charge(GaussianEvent(20.0))
    k = ledger.max_affordable(event)
    assert 0 < k < 10**7
    assert ledger.can_afford(event, k) and not ledger.can_afford(event, k + 1)
    ledger.charge(event, count=k)
    assert not ledger.can_afford(event)
    assert ledger.max_affordable(event) == 0


def test_max_affordable_then_single_charges_all_succeed():
    """The DP-SGD pattern: ask how many steps fit, then charge them one by one — none may be refused."""
    step = PoissonSampledEvent(0.01, GaussianEvent(2.0))
    ledger = Ledger(1.0, 1e-8, RDPAccountant())
    k = ledger.max_affordable(step)
    assert 50 < k < 10**4
    for _ in range(k):
        ledger.charge(step)
    assert not ledger.can_afford(step)


def test_spend_depends_only_on_counts_not_on_how_charges_are_split():
    a, b = PoissonSampledEvent(0.02, GaussianEvent(1.1)), LaplaceAboveThresholdEvent(0.01, 0.005)
    interleaved, at_once = Ledger(10.0, 1e-6, RDPAccountant()), Ledger(10.0, 1e-6, RDPAccountant())
    for _ in range(37):
        interleaved.charge(a)
        interleaved.charge(b, count=3)
    at_once.charge(a, count=37)
    at_once.charge(b, count=111)
    assert interleaved.eps_spent == at_once.eps_spent  # bit-for-bit
    assert interleaved.summary()["counts"] == at_once.summary()["counts"]


def test_max_affordable_respects_limit():
    ledger = Ledger(1.0, 1e-6, PureDPAccountant())
    assert ledger.max_affordable(PureDPEvent(1e-9), limit=1000) == 1000
    assert ledger.max_affordable(PureDPEvent(0.3)) == 3


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0.0, 1e-5, "rdp"), "epsilon"),
        ((math.inf, 1e-5, "rdp"), "epsilon"),
        ((1.0, 0.0, "rdp"), "delta"),
        ((1.0, 1.0, "rdp"), "delta"),
        ((1.0, 1e-5, "renyi"), "valid names"),
    ],
)
def test_ledger_validates(args, match):
    with pytest.raises(ValueError, match=match):
        Ledger(*args)


def test_ledger_validates_count():
    ledger = Ledger(1.0, 1e-5, "pure")
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="count"):
            ledger.charge(PureDPEvent(0.1), count=bad)
    assert ledger.entries == []


_rates = st.sampled_from([0.01, 0.1, 0.5, 1.0])
_EVENTS = st.one_of(
    st.builds(GaussianEvent, st.floats(0.5, 20.0)),
    st.builds(LaplaceEvent, st.floats(0.5, 200.0)),
    st.builds(PureDPEvent, st.floats(1e-3, 2.0)),
    st.builds(ZCDPEvent, st.floats(1e-5, 0.5)),
    st.builds(LaplaceAboveThresholdEvent, st.floats(1e-3, 1.0), st.floats(1e-3, 1.0)),
    st.builds(GaussianAboveThresholdEvent, st.floats(0.5, 10.0), st.floats(0.5, 10.0)),
    st.builds(PoissonSampledEvent, _rates, st.builds(GaussianEvent, st.floats(0.5, 5.0))),
    st.builds(PoissonSampledEvent, _rates, st.builds(LaplaceEvent, st.floats(0.5, 50.0))),
)
_ACTIONS = st.lists(
    st.tuples(st.sampled_from(["charge", "fill", "probe"]), _EVENTS, st.integers(1, 50)), min_size=1, max_size=12
)


def _snapshot(ledger):
    return ledger.eps_spent, ledger.entries, ledger.summary()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    accountant_name=st.sampled_from(["rdp", "zcdp", "pure"]),
    budget=st.floats(0.05, 8.0),
    delta=st.sampled_from([1e-3, 1e-6, 1e-9]),
    actions=_ACTIONS,
)
def test_ledger_never_exceeds_budget(accountant_name, budget, delta, actions):
    ledger = Ledger(budget, delta, accountant_name)
    for action, event, count in actions:
        try:
            affordable = ledger.can_afford(event, count)
        except UnsupportedEvent:
            continue
        before = _snapshot(ledger)
        if action == "probe":
            ledger.max_affordable(event, limit=1000)
            assert _snapshot(ledger) == before  # queries never change the state
        elif action == "fill":
            k = ledger.max_affordable(event, limit=1000)
            assert k == 0 or ledger.can_afford(event, k)
            assert k == 1000 or not ledger.can_afford(event, k + 1)
            if k:
                ledger.charge(event, count=k, label="fill")
        elif affordable:
            assert ledger.charge(event, count=count) == ledger.eps_spent
        else:
            with pytest.raises(BudgetExceeded):
                ledger.charge(event, count=count, label="over")
            assert _snapshot(ledger) == before
        assert ledger.eps_spent <= budget
        assert len(ledger.entries) == 0 or ledger.entries[-1].eps_after == ledger.eps_spent


def test_lemma4_gaussian_amplification_option_prices_by_lemma4():
    """chen_lee Sec 4.3 amplifies every release, the Gaussian included, by Lemma 4."""
    from dpbench.privacy.accountants import RDPAccountant
    from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
    from dpbench.privacy.rdp import (
        DEFAULT_ORDERS,
        rdp_gaussian,
        rdp_poisson_subsampled,
        rdp_poisson_subsampled_gaussian,
    )

    event = PoissonSampledEvent(0.1, GaussianEvent(2.0))
    lemma4 = RDPAccountant(gaussian_amplification="lemma4").cost(event)
    exact = RDPAccountant().cost(event)
    expected = rdp_poisson_subsampled(0.1, lambda orders: rdp_gaussian(2.0, orders), DEFAULT_ORDERS)
    np.testing.assert_allclose(lemma4, expected, rtol=1e-12)
    np.testing.assert_allclose(exact, rdp_poisson_subsampled_gaussian(0.1, 2.0, DEFAULT_ORDERS), rtol=1e-12)
    assert np.all(exact <= lemma4 + 1e-15) and np.any(exact < lemma4)
    with pytest.raises(ValueError, match="gaussian_amplification"):
        RDPAccountant(gaussian_amplification="nope")


def test_sampling_without_replacement_is_priced_by_pure_dp_and_rdp_not_zcdp():
    from dpbench.privacy.rdp import rdp_laplace, rdp_sampled_without_replacement

    event = SampledWithoutReplacementEvent(10, 100, LaplaceEvent(1.0))
    assert PureDPAccountant().cost(event) == pytest.approx(math.log(1 + 0.1 * (math.e - 1)), rel=1e-15)
    expected = rdp_sampled_without_replacement(0.1, lambda orders: rdp_laplace(1.0, orders), DEFAULT_ORDERS)
    np.testing.assert_allclose(RDPAccountant().cost(event), expected, rtol=1e-15)
    assert np.all(expected <= rdp_laplace(1.0, DEFAULT_ORDERS)) and np.any(expected < rdp_laplace(1.0, DEFAULT_ORDERS))
    with pytest.raises(ValueError, match="SampledWithoutReplacementEvent"):
        ZCDPAccountant().cost(event)


@pytest.mark.parametrize("eps", [1e-8, 0.5, 699.0, 701.0, 1e6])
def test_amplify_pure_is_stable_for_every_epsilon(eps):
    exact = eps + math.log(math.exp(-eps) + 0.01 * (1 - math.exp(-eps)))  # ln(1 + q(e^ε − 1)), factored
    assert amplify_pure(eps, 0.01) == pytest.approx(exact, rel=1e-9)
    assert math.isfinite(amplify_pure(eps, 0.01)) and amplify_pure(eps, 1.0) == pytest.approx(eps, rel=1e-15)


def test_rdp_accountants_with_the_same_orders_share_their_prices():
    """A job's runs each build their own accountant; the subsampled Gaussian's curve is computed once
    per process for each (q, σ), orders and amplification, and is the curve a fresh computation gives."""
    from dpbench.privacy.rdp import rdp_poisson_subsampled_gaussian

    event = PoissonSampledEvent(0.0123, GaussianEvent(1.37))
    first, second = RDPAccountant(), RDPAccountant()
    price = first.cost(event)
    assert second.cost(event) is price and not price.flags.writeable
    assert np.array_equal(price, rdp_poisson_subsampled_gaussian(0.0123, 1.37, first.orders))
    lemma4 = RDPAccountant(gaussian_amplification="lemma4").cost(event)
    assert lemma4 is not price and np.all(lemma4 >= price)
    other_orders = RDPAccountant(orders=np.arange(2.0, 65.0)).cost(event)
    assert other_orders.shape == (63,)
