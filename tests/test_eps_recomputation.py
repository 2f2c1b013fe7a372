"""Every algorithm's reported ε equals an independent recomputation from the releases its ledger recorded.

For each algorithm of the registry, one tiny job runs through :func:`dpbench.engine.run_job`. run.json
keeps one ledger summary per run; its ``events`` list the distinct events the run was charged, with
their counts (:func:`~dpbench.privacy.serialize.events_from_summary` reads them back). From them alone a
fresh accountant of the recorded kind prices each event, :mod:`dpbench.privacy.recompute` composes the
costs itself (no Ledger code) and converts at the recorded δ: that ε must equal the row's ``eps_spent``
to 1e-9 relative (the same recomputation ``dpbench-verify`` applies to results on disk). A
Ledger that mis-added costs, a conversion applied with the wrong δ or method, or a job that reported
something other than its ledger's spend would fail here. Non-private algorithms must report ε = ∞.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from dpbench.algorithms.registry import ALGORITHMS, make_algorithm
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs import KINDS
from dpbench.jobs.ledgers import count_budget
from dpbench.jobs.plan import make_plan
from dpbench.privacy import events as events_module
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianAboveThresholdEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDPEvent,
    RenyiBoundEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    ZCDPEvent,
)
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.recompute import recompute_delta, recompute_epsilon
from dpbench.privacy.serialize import (
    event_from_json,
    event_to_json,
    events_from_summary,
)
from dpbench.results import read_column_classes
from dpbench.schema import column_classes

RTOL = 1e-9
EPS, DELTA = 0.8, 1e-7

GLM, PWA, BO = (KINDS[kind].tiny for kind in ("glm", "pwa", "bo"))  # each kind's tiny job
HINGE = ("dataset=synthetic_svm", "dataset.n=400", "dataset.n_test=100", "dataset.d=5", "model=liu_l2_svm")
COMMON = ("progress=false", "reps=2", f"privacy.eps={EPS}", f"privacy.delta={DELTA}", "privacy.neighbouring=native")

# Settings that switch a method to another accountant or conversion than its default, so that every
# accountant kind, both RDP conversions and both Gaussian amplifications are recomputed at least once.
VARIANTS = {
    "dp_sgd-prop1": ("dp_sgd", ("privacy.conversion=prop1",)),
    "dp_blsgd-exact-gaussian": ("dp_blsgd", ("algorithm.amplification=exact", "algorithm.noise=gaussian")),
    "dp_blgd-gaussian-prop1": ("dp_blgd", ("algorithm.noise=gaussian", "privacy.conversion=prop1")),
    "dp_dda-theorem1": ("dp_dda", ("algorithm.noise=theorem1", "privacy.eps=0.1", "privacy.delta=0.3")),
    # private tuning: one RepeatAndSelectEvent on a one-order RDP ledger, whatever the method composes in
    "dp_sgd-tuned": ("dp_sgd", ("tuning=private",)),
    "dp_agd-tuned": ("dp_agd", ("tuning=private",)),
    "dp_gd-tuned": ("dp_gd", ("tuning=private",)),
}

PRIVATE = sorted(name for name, cls in ALGORITHMS.items() if cls.private)
NON_PRIVATE = sorted(name for name, cls in ALGORITHMS.items() if not cls.private)


def tiny_overrides(name: str) -> tuple[str, ...]:
    """A small job for ``name``: its problem kind's data and a model whose loss it supports.

    Fails (never skips) for a problem kind or a loss set it does not know, so that an algorithm added to
    the registry cannot silently escape this check."""
    cls = ALGORITHMS[name]
    if cls.problem_kind == "pwa":
        extra = ("algorithm.n_steps=200",) if name == "pwa_exponential" else ()  # short Metropolis chains
        return (*COMMON, *PWA, *extra)
    if cls.problem_kind == "bo":
        extra = ("algorithm.n_sets=3",) if name == "kusner_mtgp_likelihood" else ("algorithm.iterations=5",)
        return (*COMMON, *BO, *extra)
    assert cls.problem_kind == "glm", f"{name}: unknown problem kind {cls.problem_kind!r}; teach tiny_overrides it"
    if cls.supported_losses is None or "logistic" in cls.supported_losses:
        return (*COMMON, *GLM)
    assert "hinge" in cls.supported_losses, f"{name}: supports {sorted(cls.supported_losses)}; teach tiny_overrides"
    return (*COMMON, *HINGE)


def release_kinds(event: PrivacyEvent, count: int) -> Counter:
    """The releases ``count`` copies of ``event`` stand for, by kind, as ``counts`` names them: a Poisson
    wrapper is dropped (a batch's releases are counted under their own kind), a batch's ComposedEvent
    splits into its releases, any other event is one release of its class."""
    if isinstance(event, PoissonSampledEvent):
        return release_kinds(event.event, count)
    if isinstance(event, ComposedEvent):
        return sum((release_kinds(e, count) for e in event.events), Counter())
    return Counter({type(event).__name__: count})


def _strip_poisson(key: str) -> str:
    while key.startswith("PoissonSampledEvent[") and key.endswith("]"):
        key = key[len("PoissonSampledEvent[") : -1]
    return key


def _summary_of_each_row(results: pd.DataFrame, ledgers: list[dict]) -> list[dict]:
    """The ledger summary each results row was charged on: by (fold, rep) for GLM and kusner_bo jobs,
    by block of ``runs`` consecutive reps for han_pwa jobs (one ledger stands for every run of a block)."""
    if ledgers and "runs" in ledgers[0]:
        by_rep, start = {}, 0
        for summary in ledgers:
            by_rep.update(dict.fromkeys(range(start, start + summary["runs"]), summary))
            start += summary["runs"]
        assert start == len(results)
        return [by_rep[int(rep)] for rep in results["rep"]]
    by_run = {(summary.get("fold", 0), summary["rep"]): summary for summary in ledgers}
    assert len(by_run) == len(ledgers) == len(results), "one ledger summary per run"
    return [by_run[(int(fold), int(rep))] for fold, rep in zip(results["fold"], results["rep"])]


def _run(compose_run_config, tmp_path, name: str, extra: tuple[str, ...] = ()):
    cfg = compose_run_config(*tiny_overrides(name), f"algorithm={name}", *extra)
    results = run_job(make_plan(cfg), tmp_path)
    meta = json.loads((tmp_path / "run.json").read_text())
    for table in ("results", "trace"):  # every column every method writes carries its privacy class
        written = pd.read_parquet(tmp_path / f"{table}.parquet").columns
        assert read_column_classes(tmp_path / f"{table}.parquet") == column_classes(table, written)
    return cfg, results, meta["ledgers"]


def test_the_registry_is_split_into_private_and_non_private():
    """The parametrisations below cover the whole registry: every algorithm is in exactly one of them."""
    assert set(PRIVATE) | set(NON_PRIVATE) == set(ALGORITHMS) and not set(PRIVATE) & set(NON_PRIVATE)
    assert len(PRIVATE) >= 20 and {"nonprivate", "majority"} <= set(NON_PRIVATE)


@pytest.mark.parametrize(
    ("name", "extra"),
    [(name, ()) for name in PRIVATE] + list(VARIANTS.values()),
    ids=PRIVATE + list(VARIANTS),
)
def test_reported_eps_equals_recomputation_from_recorded_releases(compose_run_config, tmp_path, name, extra):
    """Each run's eps_spent (results.parquet) equals ε recomputed from its ledger summary's events to
    1e-9 relative; the summary's own eps_spent is the row's; the events account for exactly the releases
    ``counts`` recorded (number and kind); the spend is positive and within the budget; δ_spent (han_pwa,
    kusner_bo) is Σ count·δ of the recorded (ε, δ) events."""
    cfg, results, ledgers = _run(compose_run_config, tmp_path, name, extra)
    assert len(results) > 0 and results["private"].all()
    declared = make_algorithm(cfg.algorithm, cfg.algorithm_params).accountant  # some choose it by a hyper-parameter
    if cfg.tuning.mode == "private":  # the run's ledger prices the whole repeat-and-select in RDP at one order
        declared = "rdp"
    budget = count_budget(make_algorithm(cfg.algorithm, cfg.algorithm_params), cfg)
    for (_, row), summary in zip(results.iterrows(), _summary_of_each_row(results, ledgers)):
        assert summary["accountant"] == row["accountant"] == declared
        assert (summary["epsilon"], summary["delta"]) == (budget.method_eps, cfg.privacy.delta)
        paid = recompute_epsilon(summary["count"]) if budget.paid else 0.0  # the noisy n̄ under add/remove
        assert paid == row.get("eps_count", 0.0) and (paid > 0) == budget.paid
        assert summary["eps_spent"] + paid == row["eps_spent"]
        assert 0.0 < row["eps_spent"] <= cfg.privacy.eps
        recomputed = recompute_epsilon(summary) + paid
        assert math.isclose(recomputed, row["eps_spent"], rel_tol=RTOL, abs_tol=0.0), (recomputed, row["eps_spent"])
        recorded: Counter = Counter()
        for key, n in summary["counts"].items():
            recorded[_strip_poisson(key)] += n
        implied = sum((release_kinds(e, n) for e, n in events_from_summary(summary)), Counter())
        assert implied == recorded
        assert summary["n_charges"] >= 1
        if "delta_spent" in row:
            assert math.isclose(recompute_delta(summary), row["delta_spent"], rel_tol=RTOL, abs_tol=0.0)


SECURE = sorted(name for name in PRIVATE if ALGORITHMS[name].secure_sampler)


def test_the_secure_sampler_covers_every_method_whose_noise_goes_through_the_mechanisms():
    refused = sorted(set(PRIVATE) - set(SECURE))
    assert refused == [
        "amp",  # AMP's two releases are numpy Gaussians (dpbench.privacy.minima_perturbation)
        "amp_hf",
        "dp_dda",
        "dp_dda_all_nodes",
        "objpert",
        "pwa_exponential",
        "pwa_laplace_data",
        "pwa_laplace_solution",
        "pwa_subgradient",
    ]


@pytest.mark.parametrize("name", SECURE)
def test_secure_sampler_runs_are_recorded_and_recompute(compose_run_config, tmp_path, name):
    """``privacy.sampler=secure`` end to end for every method that supports it: no mechanism refuses it,
    the rows say so, and eps_spent recomputes from the recorded events (RDP ledgers price a Poisson-
    subsampled Gaussian by Lemma 4, proven for the discrete Gaussian)."""
    cfg, results, ledgers = _run(compose_run_config, tmp_path, name, ("privacy.sampler=secure",))
    assert set(results["sampler"]) == {"secure"}
    for (_, row), summary in zip(results.iterrows(), _summary_of_each_row(results, ledgers)):
        assert 0.0 < row["eps_spent"] <= cfg.privacy.eps
        paid = recompute_epsilon(summary["count"]) if "count" in summary else 0.0  # the noisy n̄ (add/remove)
        assert math.isclose(recompute_epsilon(summary) + paid, row["eps_spent"], rel_tol=RTOL, abs_tol=0.0)
        if summary["accountant"] == "rdp":
            assert summary["gaussian_amplification"] == "lemma4"


@pytest.mark.parametrize("name", sorted(set(PRIVATE) - set(SECURE)))
def test_secure_sampler_is_refused_for_methods_with_noise_outside_the_mechanisms(compose_run_config, name):
    with pytest.raises(ConfigError, match=f"privacy.sampler=secure is not available for algorithm {name}"):
        compose_run_config(*tiny_overrides(name), f"algorithm={name}", "privacy.sampler=secure")


@pytest.mark.parametrize("name", NON_PRIVATE)
def test_non_private_algorithms_report_infinite_eps(compose_run_config, tmp_path, name):
    """A non-private reference spends ε = ∞ in every row, and no ledger of it lists a charged event."""
    _, results, ledgers = _run(compose_run_config, tmp_path, name)
    assert len(results) > 0 and not results["private"].any()
    assert np.isinf(results["eps_spent"]).all() and (results["eps_spent"] > 0).all()
    for summary in ledgers:
        assert summary["accountant"] == "none" and "events" not in summary
        assert summary.get("eps_spent", math.inf) == math.inf


# --- the summary's event list round-trips ---------------------------------------------------------


def _one_of_each_event() -> list[PrivacyEvent]:
    leaf = [
        GaussianEvent(1.3),
        LaplaceEvent(0.7),
        PureDPEvent(0.25),
        ZCDPEvent(0.01),
        LaplaceAboveThresholdEvent(0.2, 0.1),
        GaussianAboveThresholdEvent(2.0, 3.0),
        NonPrivateEvent(),
        ApproxDPEvent(0.5, 1e-9),
        RenyiBoundEvent(64.0, 0.03),
    ]
    nested = [
        PoissonSampledEvent(0.01, GaussianEvent(1.1)),
        SampledWithoutReplacementEvent(3, 1000, LaplaceEvent(2.0)),
        ComposedEvent((GaussianEvent(5.0), LaplaceAboveThresholdEvent(0.1, 0.05))),
        PoissonSampledEvent(0.1, ComposedEvent((GaussianEvent(5.0), GaussianAboveThresholdEvent(3.0, 4.0)))),
        PoissonSampledEvent(0.5, SampledWithoutReplacementEvent(1, 7, PoissonSampledEvent(0.3, PureDPEvent(1 / 3)))),
        ComposedEvent((ComposedEvent((ZCDPEvent(1e-300), PureDPEvent(1e300))), ComposedEvent(()))),
        RepeatAndSelectEvent(
            ((PoissonSampledEvent(0.01, GaussianEvent(1.1)), 300), (LaplaceEvent(20.0), 1)), 10.0, 1.0
        ),
        RepeatAndSelectEvent(((GaussianEvent(4.0), 2),), 3.5, math.inf),
        RepeatAndSelectEvent(((RenyiBoundEvent(64.0, 0.03), 1),), 4.0, 1.0),
    ]
    return leaf + nested


def test_every_event_class_is_covered_by_the_round_trip_cases():
    """The cases below use every event class defined in dpbench.privacy.events (a new class must be added)."""
    defined = {
        cls
        for _, cls in inspect.getmembers(events_module, inspect.isclass)
        if issubclass(cls, PrivacyEvent) and cls is not PrivacyEvent and dataclasses.is_dataclass(cls)
    }
    used: set[type] = set()

    def walk(event):
        used.add(type(event))
        for f in dataclasses.fields(event):
            value = getattr(event, f.name)
            for inner in value if isinstance(value, tuple) else (value,):
                if isinstance(inner, PrivacyEvent):
                    walk(inner)

    for event in _one_of_each_event():
        walk(event)
    assert used == defined


@pytest.mark.parametrize("event", _one_of_each_event(), ids=repr)
def test_event_json_round_trip_is_exact(event):
    """event_to_json → JSON text → event_from_json gives an equal event (same type, nesting, floats to the bit)."""
    text = json.dumps(event_to_json(event))
    back = event_from_json(json.loads(text))
    assert back == event and type(back) is type(event) and hash(back) == hash(event)
    assert repr(back) == repr(event)


def test_numpy_scalars_in_events_serialise_as_plain_numbers():
    event = SampledWithoutReplacementEvent(np.int64(4), np.int64(40), GaussianEvent(np.float64(0.1) * 3))
    data = json.loads(json.dumps(event_to_json(event)))
    assert data["sample_size"] == 4 and isinstance(data["sample_size"], int)
    assert event_from_json(data) == event


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"noise_multiplier": 1.0}, "no known 'type'"),
        ({"type": "MomentsEvent"}, "no known 'type'"),
        ({"type": "GaussianEvent"}, "needs the fields"),
        ({"type": "GaussianEvent", "noise_multiplier": 1.0, "q": 1}, "needs the fields"),
    ],
)
def test_event_from_json_refuses_bad_descriptions(data, match):
    with pytest.raises(ValueError, match=match):
        event_from_json(data)


def test_event_to_json_refuses_foreign_events():
    @dataclasses.dataclass(frozen=True)
    class GaussianEvent(PrivacyEvent):  # same name, not the registered class
        noise_multiplier: float

    with pytest.raises(TypeError, match="cannot describe"):
        event_to_json(GaussianEvent(1.0))


def test_summary_lists_the_composition_and_old_summaries_are_refused():
    """A ledger with stand-alone charges and Poisson batches (one release and several): its summary is JSON,
    keeps the earlier keys, and its events (the batches as joint PoissonSampledEvents) recompute eps_spent;
    a summary without ``events`` (older run.json) is refused rather than misread."""
    ledger = Ledger(50.0, 1e-6, RDPAccountant())
    ledger.charge(PoissonSampledEvent(0.02, GaussianEvent(1.2)), count=30)
    for _ in range(3):
        batch = ledger.poisson_batch(0.05)
        batch.charge(GaussianEvent(2.0))
        batch.charge(LaplaceAboveThresholdEvent(0.1, 0.05), count=2)
    ledger.poisson_batch(0.05).charge(GaussianEvent(2.0))
    ledger.charge(LaplaceEvent(3.0))
    summary = json.loads(json.dumps(ledger.summary()))
    assert {
        "accountant",
        "conversion",
        "gaussian_amplification",
        "epsilon",
        "delta",
        "eps_spent",
        "n_charges",
        "counts",
        "events",
    } <= set(summary)
    releases = (GaussianEvent(2.0), LaplaceAboveThresholdEvent(0.1, 0.05), LaplaceAboveThresholdEvent(0.1, 0.05))
    joint = PoissonSampledEvent(0.05, ComposedEvent(releases))
    assert events_from_summary(summary) == [  # first-charge order: each batch's first release came first
        (PoissonSampledEvent(0.02, GaussianEvent(1.2)), 30),
        (PoissonSampledEvent(0.05, GaussianEvent(2.0)), 1),
        (joint, 3),
        (LaplaceEvent(3.0), 1),
    ]
    assert math.isclose(recompute_epsilon(summary), ledger.eps_spent, rel_tol=RTOL, abs_tol=0.0)
    assert summary["counts"] == {
        "PoissonSampledEvent[GaussianEvent]": 30,
        "GaussianEvent": 4,
        "LaplaceAboveThresholdEvent": 6,
        "LaplaceEvent": 1,
    }
    short = json.loads(json.dumps(summary))
    short["events"][2]["count"] -= 1  # one joint batch fewer: the recomputation must notice
    assert not math.isclose(recompute_epsilon(short), ledger.eps_spent, rel_tol=RTOL, abs_tol=0.0)
    old = {k: v for k, v in summary.items() if k != "events"}
    with pytest.raises(ValueError, match="no 'events'"):
        events_from_summary(old)
