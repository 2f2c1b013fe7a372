"""dpbench-verify's independent checks (:mod:`dpbench.verify.independent`): dpbench's events mapped to
dp-accounting's DpEvents and priced by its RDP and PLD accountants, with the relations the checks expect;
events without a counterpart are n/a, and a missing dp-accounting is said, never taken for a pass."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from dpbench.privacy.accountants import RDPAccountant, make_accountant
from dpbench.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureDPEvent,
    SampledWithoutReplacementEvent,
)
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import DEFAULT_ORDERS
from dpbench.privacy.recompute import recompute_epsilon
from dpbench.verify.checks import check_independent
from dpbench.verify.independent import (
    independent_epsilon,
    load,
    priced_alike,
    to_dp_event,
)

dpa = load()
DELTA = 1e-6


def summary_of(*charges, conversion="tight", amplification="exact", orders=None):
    accountant = RDPAccountant(orders=orders, conversion=conversion, gaussian_amplification=amplification)
    ledger = Ledger(50.0, DELTA, accountant)
    for event, count in charges:
        ledger.charge(event, count=count)
    return json.loads(json.dumps(ledger.summary())), ledger.eps_spent


@pytest.mark.parametrize(("q", "sigma", "steps"), [(0.01, 1.1, 1000), (0.05, 0.8, 300), (0.2, 3.0, 50)])
def test_a_subsampled_gaussian_composed_t_times_matches_dp_accountings_rdp_and_is_above_its_pld(q, sigma, steps):
    summary, ours = summary_of((PoissonSampledEvent(q, GaussianEvent(sigma)), steps))
    assert recompute_epsilon(summary) == pytest.approx(ours, rel=1e-12)
    verdict = independent_epsilon(dpa, summary, ours)
    assert verdict.rdp_expect == "equal"
    theirs = dpa.rdp.RdpAccountant(orders=list(DEFAULT_ORDERS))  # the same orders, composed by dp-accounting itself
    theirs.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    assert verdict.rdp_eps == pytest.approx(theirs.get_epsilon(DELTA), rel=1e-12)
    assert verdict.rdp_eps == pytest.approx(ours, rel=1e-6)
    assert verdict.pld_eps <= ours and verdict.pld_allowance <= 0.1 * ours  # PLD is tighter: 0.88–0.96 of ours
    assert check_independent(verdict, ours)[::2] == ("=", "<=")
    # an under-reported ε is caught by both
    rdp, rdp_failure, pld, pld_failure = check_independent(verdict, verdict.pld_eps - 1.01 * verdict.pld_allowance)
    assert (rdp, pld) == ("FAIL", "FAIL") and "under-count" in pld_failure and "differs" in rdp_failure
    assert check_independent(verdict, verdict.pld_eps - 0.99 * verdict.pld_allowance)[2] == "~"  # not proven


def test_looser_bounds_are_expected_above_dp_accountings_rdp():
    """Lemma 4 amplification, a batch of two Gaussians (dp-accounting: one effective σ), the prop1 conversion:
    ours is a valid but looser bound, so the check asks ours ≥ theirs, and it holds."""
    cases = [
        summary_of((PoissonSampledEvent(0.02, GaussianEvent(1.0)), 200), amplification="lemma4"),
        summary_of((PoissonSampledEvent(0.02, ComposedEvent((GaussianEvent(2.0), GaussianEvent(3.0)))), 200)),
        summary_of((PoissonSampledEvent(0.02, GaussianEvent(1.0)), 200), conversion="prop1"),
        # dp-accounting's WOR curve takes seconds at 511 orders: 16 orders here (the summary names them)
        summary_of((SampledWithoutReplacementEvent(10, 500, GaussianEvent(1.5)), 100), orders=np.arange(2.0, 18.0)),
    ]
    for summary, ours in cases:
        verdict = independent_epsilon(dpa, summary, ours)
        assert verdict.rdp_expect == "upper" and verdict.rdp_eps <= ours, (summary["events"], verdict)
        assert check_independent(verdict, ours)[0] == ">="
    wor = independent_epsilon(dpa, *cases[3])
    assert wor.pld_eps is None and "without replacement" in wor.pld_note


def test_laplace_under_a_pure_ledger_gets_pld_only():
    ledger = Ledger(1.0, DELTA, make_accountant("pure"))
    ledger.charge(LaplaceEvent(250.0), count=100)
    summary = json.loads(json.dumps(ledger.summary()))
    verdict = independent_epsilon(dpa, summary, ledger.eps_spent)
    assert verdict.rdp_eps is None and "pure ledger" in verdict.rdp_note
    assert verdict.pld_eps < ledger.eps_spent
    assert check_independent(verdict, ledger.eps_spent)[::2] == ("n/a", "<=")


@pytest.mark.parametrize(
    "event",
    [
        PureDPEvent(0.1),
        LaplaceAboveThresholdEvent(0.1, 0.05),
        PoissonSampledEvent(0.1, ComposedEvent((GaussianEvent(2.0), LaplaceAboveThresholdEvent(0.1, 0.05)))),
    ],
)
def test_events_without_a_counterpart_are_not_applicable(event):
    summary, ours = summary_of((event, 3))
    verdict = independent_epsilon(dpa, summary, ours)
    assert verdict.rdp_eps is None and verdict.pld_eps is None
    assert "has no dp-accounting counterpart" in verdict.rdp_note
    assert check_independent(verdict, ours)[::2] == ("n/a", "n/a")


def test_priced_alike_names_the_events_whose_formulas_are_the_same():
    assert priced_alike(PoissonSampledEvent(0.1, GaussianEvent(1.0)), "exact")
    assert not priced_alike(PoissonSampledEvent(0.1, GaussianEvent(1.0)), "lemma4")
    assert priced_alike(ComposedEvent((GaussianEvent(1.0), LaplaceEvent(2.0))), "exact")
    assert not priced_alike(SampledWithoutReplacementEvent(1, 10, GaussianEvent(1.0)), "exact")
    assert type(to_dp_event(dpa, SampledWithoutReplacementEvent(3, 10, GaussianEvent(1.0)))).__name__ == (
        "SampledWithoutReplacementDpEvent"
    )


def test_without_dp_accounting_the_command_says_so(monkeypatch, capsys, tmp_path):
    from dpbench.verify.cli import main

    source = Path(__file__).resolve().parents[2] / "examples" / "sweeps" / "leaderboard"
    root = tmp_path / "leaderboard"
    shutil.copytree(source, root)
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import dp_accounting now raises ImportError
    assert load() is None
    status = main([str(root)])
    out = capsys.readouterr().out
    assert status == 0  # the recomputation checks still ran and passed
    assert "not installed" in out and "pip install 'dpbench[verify]'" in out
    assert not any(" = " in line or " <= " in line for line in out.splitlines())
