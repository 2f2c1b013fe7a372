"""Rényi filters that price adaptive runs.

DP-BLSGD, DP-BLSGD-AC and DP-BLGD choose their next release from noisy outputs and stop when the
budget cannot pay for it. A post-hoc minimum over Rényi orders is proven for a composition fixed in
advance only. dpbench prices such runs with a filter on one order α* fixed before the run from the
method's planned step (Feldman & Zrnic 2021), or — for a method with no plan — with the union
filter over a fixed grid (ε = min_α rdp(α) + log(|Λ|/δ)/(α−1), proof in
:func:`dpbench.privacy.rdp.conversion_offsets`).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpbench.algorithms.registry import ALGORITHMS
from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    PoissonSampledEvent,
)
from dpbench.privacy.filter import filter_accountant, fixed_filter_order
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    FILTER_ORDERS,
    eps_from_rdp,
    rdp_gaussian,
    rdp_laplace_above_threshold,
)

EPS, DELTA = 0.4, 1e-8


def filter_epsilon(total: np.ndarray, delta: float = DELTA) -> float:
    """The proven ε of a filtered run whose costs summed to ``total`` on FILTER_ORDERS (written out here,
    independently of dpbench's conversion code)."""
    return float(np.min(total + math.log(len(FILTER_ORDERS) / delta) / (FILTER_ORDERS - 1.0)))


def test_filter_conversion_is_the_union_bound_over_its_orders():
    accountant = RDPAccountant(conversion="filter")
    assert np.array_equal(accountant.orders, FILTER_ORDERS)
    total = rdp_gaussian(3.0, FILTER_ORDERS) * 7
    assert accountant.epsilon(total, DELTA) == pytest.approx(filter_epsilon(total), rel=1e-12)
    # the same orders with log(1/δ) (no union bound) give prop1, which is strictly smaller
    assert accountant.epsilon(total, DELTA) > eps_from_rdp(FILTER_ORDERS, total, DELTA, method="prop1")[0]


def adaptive_policy(ledger) -> list[str]:
    """A line-search-like adaptive run: a Gaussian gradient, then AboveThreshold searches whose budget
    grows after a "failure", the outcome of each search decided by a seeded coin (standing in for the
    noisy answer); stop when nothing more can be paid. Returns the kinds of the releases made."""
    coin = np.random.default_rng(7)
    made, sigma, eps_bt = [], 25.0, 0.004
    while ledger.can_afford(GaussianEvent(sigma)):
        ledger.charge(GaussianEvent(sigma), label="gradient")
        made.append("gradient")
        while True:
            search = LaplaceAboveThresholdEvent(eps_bt / 2, eps_bt / 4)
            if not ledger.can_afford(search):
                return made
            ledger.charge(search, label="search")
            made.append("search")
            if coin.random() < 0.6:  # the search found a step
                break
            eps_bt *= 1.3  # a failure raises the next search's budget: the costs depend on the outputs
    return made


def test_post_hoc_minimum_over_orders_overspends_an_adaptive_run_the_filter_does_not():
    """The acceptance test: the same adaptive policy, run on a ledger with the post-hoc tight minimum
    (the old rule), makes releases whose composition the proven filter bound prices above ε; on the
    filter ledger it stops earlier and its proven ε stays within the budget."""
    old = Ledger(EPS, DELTA, RDPAccountant(orders=FILTER_ORDERS, conversion="tight"))
    new = Ledger(EPS, DELTA, RDPAccountant(conversion="filter"))
    old_run, new_run = adaptive_policy(old), adaptive_policy(new)
    assert len(old_run) > len(new_run) and old_run[: len(new_run)] == new_run  # same path, the old one goes on

    def proven(ledger) -> float:
        total = np.zeros_like(FILTER_ORDERS)
        for entry in ledger.entries:
            total = total + entry.count * RDPAccountant(conversion="filter").cost(entry.event)
        return filter_epsilon(total)

    assert old.eps_spent <= EPS and proven(old) > EPS * 1.03  # the old rule believed ≤ ε; the proof says more
    assert new.eps_spent <= EPS and proven(new) == pytest.approx(new.eps_spent, rel=1e-12)


def test_a_filter_ledger_refuses_the_charge_that_no_order_can_pay():
    ledger = Ledger(1.0, DELTA, RDPAccountant(conversion="filter"))
    event = PoissonSampledEvent(0.1, GaussianEvent(5.0))
    k = ledger.max_affordable(event)
    assert k > 10
    ledger.charge(event, count=k)
    with pytest.raises(BudgetExceeded):
        ledger.charge(event)
    total = k * RDPAccountant(conversion="filter").cost(event)
    assert filter_epsilon(total) <= 1.0 < filter_epsilon(total + RDPAccountant(conversion="filter").cost(event))


def test_filter_costs_more_than_tight_but_at_most_the_union_bound_term():
    """How much the valid rule costs: for chen_lee's line-search budget at ε = 0.4 the filter's ε for
    one composition is above the tight post-hoc minimum, by less than log|Λ|/(α* − 1) at its order."""
    curve_orders = FILTER_ORDERS
    total = 40 * rdp_gaussian(50.0, curve_orders) + 60 * rdp_laplace_above_threshold(0.002, 0.001, curve_orders)
    tight = eps_from_rdp(curve_orders, total, DELTA, method="tight")[0]
    prop1, order = eps_from_rdp(curve_orders, total, DELTA, method="prop1")
    assert tight < prop1 < filter_epsilon(total) <= prop1 + math.log(len(FILTER_ORDERS)) / (order - 1.0) + 1e-12
    assert set(FILTER_ORDERS) <= set(DEFAULT_ORDERS)  # every filter order is priced by the same curves


def test_exactly_the_adaptive_methods_use_the_filter():
    adaptive = sorted(name for name, cls in ALGORITHMS.items() if cls.adaptive_stopping)
    assert adaptive == ["dp_agd", "dp_blgd", "dp_blsgd", "dp_blsgd_ac"]
    # the RDP ones need a Rényi filter; DP-AGD's zCDP budget is one additive number, a valid filter as it is
    assert {name: ALGORITHMS[name].accountant for name in adaptive} == {
        "dp_agd": "zcdp",
        "dp_blgd": "rdp",
        "dp_blsgd": "rdp",
        "dp_blsgd_ac": "rdp",
    }


def test_fixed_filter_order_is_the_best_order_for_the_planned_composition():
    """α* = the order whose tight conversion of k planned steps (k the most the budget affords) is least —
    checked by brute force over every default order."""
    plan = ComposedEvent((GaussianEvent(25.0), LaplaceAboveThresholdEvent(0.002, 0.001)))
    order = fixed_filter_order(plan, EPS, DELTA)
    accountant = RDPAccountant(orders=DEFAULT_ORDERS, conversion="tight")
    one = accountant.cost(plan)
    k = max(j for j in range(1, 10_000) if eps_from_rdp(DEFAULT_ORDERS, j * one, DELTA)[0] <= EPS)
    eps_by_order = [eps_from_rdp(np.array([a]), np.array([k * c]), DELTA)[0] for a, c in zip(DEFAULT_ORDERS, one)]
    assert order == DEFAULT_ORDERS[int(np.argmin(eps_by_order))]
    with pytest.raises(ValueError, match="cannot pay for even one planned step"):
        fixed_filter_order(GaussianEvent(0.01), EPS, DELTA)


def test_a_one_order_filter_spends_within_budget_on_any_path():
    """The one-order filter's ledger prices every charge at α* alone: whatever the path, the run's RDP at
    α*, converted tightly there (valid for the whole run by Feldman & Zrnic Thm 3.1), is ≤ ε."""
    plan = ComposedEvent((GaussianEvent(25.0), LaplaceAboveThresholdEvent(0.002, 0.001)))
    ledger = Ledger(EPS, DELTA, filter_accountant(plan, EPS, DELTA))
    adaptive_policy(ledger)
    (order,) = ledger.accountant.orders
    total = sum(e.count * rdp_at(e.event, order) for e in ledger.entries)
    assert eps_from_rdp(np.array([order]), np.array([total]), DELTA)[0] == pytest.approx(ledger.eps_spent, rel=1e-12)
    assert ledger.eps_spent <= EPS
    assert filter_accountant(None, EPS, DELTA).conversion == "filter"  # no plan: the union over FILTER_ORDERS


def rdp_at(event, order: float) -> float:
    return float(RDPAccountant(orders=np.array([order])).cost(event)[0])


def test_adaptive_runs_record_their_filter_and_fixed_ones_their_composition(compose_run_config, tmp_path):
    """Through the engine: DP-BLSGD's rows say ``renyi_filter(alpha=α*)`` and its run.json ledgers name the
    one order; α* depends on public values only (the same for two datasets of different size and content);
    DP-SGD's composition is fixed in advance (post-hoc minimum valid)."""
    rules, orders = [], []
    for i, data in enumerate((("dataset.n=600", "dataset.seed=1"), ("dataset.n=900", "dataset.seed=2"))):
        cfg = compose_run_config("algorithm=dp_blsgd", "progress=false", "privacy.eps=0.4", *data)
        rows = run_job(make_plan(cfg), tmp_path / str(i))
        assert (rows["eps_spent"] <= 0.4).all()
        rules.append(set(rows["stopping_rule"]))
        summary = json.loads((tmp_path / str(i) / "run.json").read_text())["ledgers"][0]
        orders.append(summary["orders"])
    assert (
        rules[0] == rules[1] == {f"renyi_filter(alpha={orders[0][0]:g})"}
        and orders[0] == orders[1]
        and len(orders[0]) == 1
    )
    sgd = run_job(
        make_plan(compose_run_config("algorithm=dp_sgd", "progress=false", "dataset.n=600")), tmp_path / "sgd"
    )
    assert set(sgd["stopping_rule"]) == {"fixed_composition"} and set(sgd["conversion"]) == {"tight"}
    agd = run_job(
        make_plan(compose_run_config("algorithm=dp_agd", "progress=false", "dataset.n=600")), tmp_path / "agd"
    )
    assert set(agd["stopping_rule"]) == {"budget_filter"} and (agd["eps_spent"] <= agd["eps"]).all()
