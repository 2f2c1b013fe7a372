"""The neighbouring relation as a type: one relation per ledger, the group-privacy conversion, and the
relations each accountant event is priced for, cross-checked against dp-accounting's NeighboringRelation."""

from __future__ import annotations

import math
import re

import dp_accounting
import dp_accounting.pld
import dp_accounting.rdp
import numpy as np
import pytest

from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.events import (
    GaussianEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
)
from dpbench.privacy.ledger import Ledger, RelationMismatch
from dpbench.privacy.mechanisms import gaussian_mechanism
from dpbench.privacy.neighbouring import (
    DP_ACCOUNTING_NAMES,
    RELATIONS,
    check_relation,
    group_privacy_budget,
    group_privacy_epsilon,
)

NeighborRel = dp_accounting.NeighboringRelation


def test_relations_are_dp_accountings():
    assert set(RELATIONS) == {"add_remove", "replace_one"}
    assert {r: NeighborRel[DP_ACCOUNTING_NAMES[r]] for r in RELATIONS} == {
        "add_remove": NeighborRel.ADD_OR_REMOVE_ONE,
        "replace_one": NeighborRel.REPLACE_ONE,
    }
    with pytest.raises(
        ValueError, match=re.escape("privacy.neighbouring must be one of add_remove, replace_one, got 'zero_out'")
    ):
        check_relation("zero_out")


def test_a_ledger_refuses_to_compose_events_of_two_relations():
    ledger = Ledger(1.0, 1e-6, RDPAccountant(), neighbouring="add_remove")
    ledger.charge(GaussianEvent(5.0), neighbouring="add_remove")
    spent = ledger.eps_spent
    with pytest.raises(RelationMismatch, match="cannot compose a replace_one event into this add_remove ledger"):
        ledger.charge(GaussianEvent(5.0), neighbouring="replace_one")
    with pytest.raises(RelationMismatch):
        ledger.poisson_batch(0.1).charge(GaussianEvent(5.0), neighbouring="replace_one")
    with pytest.raises(RelationMismatch):  # through a mechanism, before any noise is drawn
        gaussian_mechanism(
            0.0,
            sensitivity=2.0,
            noise_multiplier=5.0,
            rng=np.random.default_rng(0),
            ledger=ledger,
            neighbouring="replace_one",
        )
    assert ledger.eps_spent == spent and len(ledger.entries) == 1  # nothing was charged
    assert ledger.summary()["neighbouring"] == "add_remove"
    replace = Ledger(1.0, 1e-6, RDPAccountant(), neighbouring="replace_one")
    replace.charge(GaussianEvent(5.0), neighbouring="replace_one")
    with pytest.raises(RelationMismatch, match="add_remove event into this replace_one ledger"):
        replace.charge(GaussianEvent(5.0), neighbouring="add_remove")


def test_group_privacy_budget_is_the_chained_inequality():
    eps, delta = 0.8, 1e-6
    eps_ar, delta_ar = group_privacy_budget(eps, delta)
    assert eps_ar == eps / 2 and delta_ar * (1 + math.exp(eps_ar)) == pytest.approx(delta, rel=1e-15)
    assert group_privacy_epsilon(eps_ar) == eps


@pytest.mark.parametrize("eps", [0.05, 0.4, 1.6])
@pytest.mark.parametrize("delta", [1e-8, 1e-5])
def test_group_privacy_is_never_tighter_than_the_exact_replace_one_guarantee(eps, delta):
    """A Gaussian release of a clipped sum (clip C, noise σC) calibrated to the add/remove budget of
    group_privacy_budget(ε, δ) has replace-one sensitivity 2C. dp-accounting's privacy-loss-distribution
    accountant (near exact, unlike an RDP bound) under REPLACE_ONE — whose GaussianDpEvent(σ) is that
    sensitivity-2 Gaussian — prices it at ≤ ε at δ: the conversion is sound (measured 0.45–0.94 ε)."""
    eps_ar, delta_ar = group_privacy_budget(eps, delta)
    sigma = gaussian_noise_for_budget(eps_ar, delta_ar)
    exact = dp_accounting.pld.PLDAccountant(
        neighboring_relation=NeighborRel.REPLACE_ONE, value_discretization_interval=1e-4
    )
    exact.compose(dp_accounting.GaussianDpEvent(sigma))
    assert 0.4 * eps <= exact.get_epsilon(delta) <= eps  # sound, and not vacuously so


def test_subsampling_events_are_priced_for_dp_accountings_relations():
    """Poisson subsampling is an add/remove (or zero-out) bound and sampling without replacement a
    replace-one bound, in dp-accounting as here: the methods that Poisson-sample meet replace-one by
    group privacy, the ones that sample without replacement (kuru with m < n, liu_dda) refuse add/remove."""
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    poisson = dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(2.0))
    wor = dp_accounting.SampledWithoutReplacementDpEvent(100, 10, dp_accounting.GaussianDpEvent(2.0))
    for event, refused in ((poisson, NeighborRel.REPLACE_ONE), (wor, NeighborRel.ADD_OR_REMOVE_ONE)):
        assert not dp_accounting.rdp.RdpAccountant(orders, neighboring_relation=refused).supports(event)
    ours = RDPAccountant(orders=np.array(orders))
    eps = {}
    for name, event, theirs_relation, mine in (
        ("poisson", poisson, NeighborRel.ADD_OR_REMOVE_ONE, PoissonSampledEvent(0.1, GaussianEvent(2.0))),
        ("wor", wor, NeighborRel.REPLACE_ONE, SampledWithoutReplacementEvent(10, 100, GaussianEvent(2.0))),
    ):
        theirs = dp_accounting.rdp.RdpAccountant(orders, neighboring_relation=theirs_relation)
        theirs.compose(event)
        eps[name] = theirs.get_epsilon(1e-6), ours.epsilon(ours.cost(mine), 1e-6)
    assert eps["poisson"][1] == pytest.approx(eps["poisson"][0], rel=1e-6)
    # WBK19 Thm 9, never below dp-accounting's tighter WOR curve (tests/privacy/test_rdp.py)
    assert eps["wor"][0] <= eps["wor"][1] <= 1.1 * eps["wor"][0]


def test_config_refuses_what_a_method_cannot_meet_in_one_line(compose_run_config):
    with pytest.raises(
        ConfigError,
        match=r"^algorithm outpert_rsgd does not support privacy.neighbouring=add_remove: "
        r".*; use privacy.neighbouring=replace_one or privacy.neighbouring=native$",
    ):
        compose_run_config("algorithm=outpert_rsgd", "model=huber_svm")
    with pytest.raises(
        ConfigError, match=re.escape("privacy.neighbouring must be one of add_remove, replace_one, native")
    ):
        compose_run_config("privacy.neighbouring=zero_out")
    assert compose_run_config("algorithm=outpert_rsgd", "model=huber_svm", "privacy.neighbouring=replace_one")


def test_native_keeps_the_config_hash_of_jobs_from_before_the_key(compose_run_config):
    native = compose_run_config("algorithm=outpert_gd", "model=huber_svm", "privacy.neighbouring=native")
    assert "neighbouring" not in native.semantic_dict()["privacy"]
    default = compose_run_config("algorithm=outpert_gd", "model=huber_svm")
    assert default.semantic_dict()["privacy"]["neighbouring"] == "add_remove"
    assert default.config_hash != native.config_hash


def test_a_group_privacy_run_pays_half_the_budget_under_add_remove_and_reports_twice_its_spend(
    compose_run_config, tmp_path
):
    import json

    from dpbench.engine import run_job
    from dpbench.privacy.accountants import make_accountant
    from dpbench.privacy.serialize import events_from_summary

    cfg = compose_run_config(
        "algorithm=dp_sgd", "privacy.eps=0.5", "privacy.neighbouring=replace_one", "dataset.n=3000", "progress=false"
    )
    rows = run_job(make_plan(cfg), tmp_path)
    assert rows[
        ["neighbouring", "relation_conversion", "privacy_unit", "dp_notion"]
    ].drop_duplicates().values.tolist() == [["replace_one", "group_privacy", "record", "rdp"]]
    ledger = json.loads((tmp_path / "run.json").read_text())["ledgers"][0]
    eps_ar, delta_ar = group_privacy_budget(0.5, cfg.privacy.delta)
    assert (ledger["neighbouring"], ledger["epsilon"], ledger["delta"]) == ("add_remove", eps_ar, delta_ar)
    accountant = make_accountant("rdp", conversion=ledger["conversion"])
    total = sum(count * accountant.cost(event) for event, count in events_from_summary(ledger))
    recomputed = accountant.epsilon(total, ledger["delta"])
    assert rows["eps_spent"].iloc[0] == pytest.approx(2 * recomputed, rel=1e-12) and rows["eps_spent"].iloc[0] <= 0.5
