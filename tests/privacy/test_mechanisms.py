"""Mechanisms: shapes, the event each one charges, nothing released on BudgetExceeded, noise laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpbench.privacy.accountants import PureDPAccountant, RDPAccountant
from dpbench.privacy.counts import split_budget
from dpbench.privacy.events import (
    GaussianAboveThresholdEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PureDPEvent,
)
from dpbench.privacy.ledger import BudgetExceeded, Ledger
from dpbench.privacy.mechanisms import (
    above_threshold,
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    laplace_calibration,
    laplace_mechanism,
    report_noisy_max,
    sample_above_threshold,
    sample_vector_laplace,
    subsampled_laplace_mechanism,
    vector_laplace_mechanism,
)
from dpbench.settings import DEFAULT_COUNT_SHARE

ALPHA = 1e-3  # significance level of the goodness-of-fit tests below (fixed seeds, so deterministic)


def fresh_ledger(epsilon=100.0):
    return Ledger(epsilon, 1e-5, RDPAccountant())


def only_entry(ledger):
    (entry,) = ledger.entries
    return entry


# --- charging and shapes -------------------------------------------------------------------------

MECHANISM_CALLS = {
    "laplace": (lambda v, r, l: laplace_mechanism(v, sensitivity=2.0, epsilon=0.5, rng=r, ledger=l), LaplaceEvent(2.0)),
    "laplace_sub": (
        lambda v, r, l: laplace_mechanism(
            v, sensitivity=2.0, epsilon=0.5, rng=r, ledger=l, sampling_rate=0.1, label="x"
        ),
        PoissonSampledEvent(0.1, LaplaceEvent(2.0)),
    ),
    "gaussian": (
        lambda v, r, l: gaussian_mechanism(v, sensitivity=3.0, noise_multiplier=1.5, rng=r, ledger=l),
        GaussianEvent(1.5),
    ),
    "gaussian_sub": (
        lambda v, r, l: gaussian_mechanism(
            v, sensitivity=3.0, noise_multiplier=1.5, rng=r, ledger=l, sampling_rate=0.2
        ),
        PoissonSampledEvent(0.2, GaussianEvent(1.5)),
    ),
    "vector_laplace": (
        lambda v, r, l: vector_laplace_mechanism(v, sensitivity=1.0, epsilon=0.7, rng=r, ledger=l),
        PureDPEvent(0.7),
    ),
}


@pytest.mark.parametrize("name", list(MECHANISM_CALLS))
@pytest.mark.parametrize("value", [1.5, np.arange(6.0).reshape(2, 3)], ids=["scalar", "array"])
def test_additive_mechanisms_shape_and_event(name, value):
    call, event = MECHANISM_CALLS[name]
    ledger = fresh_ledger()
    out = call(value, np.random.default_rng(0), ledger)
    if np.ndim(value) == 0:
        assert type(out) is float
    else:
        assert isinstance(out, np.ndarray) and out.shape == value.shape
    assert np.all(out != value)
    entry = only_entry(ledger)
    assert entry.event == event and entry.count == 1
    assert entry.label == {"laplace_sub": "x", "gaussian_sub": "gaussian"}.get(name, name)


def test_noise_scales():
    rng, n = np.random.default_rng(1), 200_000
    lap = laplace_mechanism(np.zeros(n), sensitivity=2.0, epsilon=0.5, rng=rng, ledger=fresh_ledger())
    assert stats.kstest(lap, stats.laplace(scale=4.0).cdf).pvalue > ALPHA
    gau = gaussian_mechanism(np.zeros(n), sensitivity=3.0, noise_multiplier=1.5, rng=rng, ledger=fresh_ledger())
    assert stats.kstest(gau, stats.norm(scale=4.5).cdf).pvalue > ALPHA


SELECTION_CALLS = {
    "exponential": (
        lambda r, l: exponential_mechanism([1.0, 2.0, 3.0], sensitivity=1.0, epsilon=0.3, rng=r, ledger=l),
        PureDPEvent(0.3),
    ),
    "report_noisy_max": (
        lambda r, l: report_noisy_max([1.0, 2.0, 3.0], sensitivity=1.0, epsilon=0.3, rng=r, ledger=l, monotonic=True),
        PureDPEvent(0.3),
    ),
    "above_threshold_laplace": (
        lambda r, l: above_threshold([0.0, 5.0], 1.0, max_queries=2, sensitivity=1.0, rng=r, ledger=l, epsilon=0.8),
        LaplaceAboveThresholdEvent(0.4, 0.2),
    ),
    "above_threshold_gaussian": (
        lambda r, l: above_threshold(
            lambda i: [0.0, 5.0][i],
            1.0,
            max_queries=2,
            sensitivity=1.0,
            rng=r,
            ledger=l,
            noise="gaussian",
            rho=0.5,
            sampling_rate=0.3,
        ),
        PoissonSampledEvent(0.3, GaussianAboveThresholdEvent(math.sqrt(3.0), math.sqrt(6.0))),
    ),
}


@pytest.mark.parametrize("name", list(SELECTION_CALLS))
def test_selection_mechanisms_return_index_and_charge_event(name):
    call, event = SELECTION_CALLS[name]
    ledger = fresh_ledger()
    out = call(np.random.default_rng(3), ledger)
    assert out is None or type(out) is int
    assert only_entry(ledger).event == event


def _on_zeros(call):
    """An additive mechanism's ``call(v, rng, ledger)`` as ``(rng, ledger)``, releasing a zero vector."""
    return lambda r, l: call(np.zeros(3), r, l)


ALL_CALLS = {
    **{k: _on_zeros(c) for k, (c, _) in MECHANISM_CALLS.items()},
    **{k: c for k, (c, _) in SELECTION_CALLS.items()},
}


@pytest.mark.parametrize("name", list(ALL_CALLS))
def test_budget_exceeded_releases_nothing(name):
    ledger = Ledger(0.01, 1e-5, RDPAccountant())
    rng = np.random.default_rng(7)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceeded):
        ALL_CALLS[name](rng, ledger)
    assert rng.bit_generator.state == state  # no noise was even drawn
    assert ledger.entries == [] and ledger.eps_spent == 0.0


def test_invalid_inputs_are_refused_before_charging():
    ledger, rng = fresh_ledger(), np.random.default_rng(0)
    common = dict(rng=rng, ledger=ledger)
    svt = dict(sensitivity=1.0, **common)
    bad_calls = [
        lambda: laplace_mechanism(1.0, sensitivity=0.0, epsilon=1.0, **common),
        lambda: laplace_mechanism(np.nan, sensitivity=1.0, epsilon=1.0, **common),
        lambda: laplace_mechanism(1.0, sensitivity=1.0, epsilon=1.0, sampling_rate=0.0, **common),
        lambda: gaussian_mechanism(1.0, sensitivity=1.0, noise_multiplier=-1.0, **common),
        lambda: vector_laplace_mechanism([], sensitivity=1.0, epsilon=1.0, **common),
        lambda: exponential_mechanism([1.0, np.inf], sensitivity=1.0, epsilon=1.0, **common),
        lambda: report_noisy_max([], sensitivity=1.0, epsilon=1.0, **common),
        lambda: above_threshold([1.0], 0.0, max_queries=1, **svt),
        lambda: above_threshold([1.0], 0.0, max_queries=1, epsilon=1.0, rho=1.0, **svt),
        lambda: above_threshold([1.0], 0.0, max_queries=0, epsilon=1.0, **svt),
        lambda: above_threshold([1.0], 0.0, max_queries=1, noise="cauchy", epsilon=1.0, **svt),
    ]
    for call in bad_calls:
        with pytest.raises(ValueError):
            call()
    with pytest.raises(TypeError, match="Generator"):
        laplace_mechanism(1.0, sensitivity=1.0, epsilon=1.0, rng=np.random.RandomState(0), ledger=ledger)
    assert ledger.entries == []


# --- vector Laplace ------------------------------------------------------------------------------


def test_sample_vector_laplace_shapes():
    rng = np.random.default_rng(0)
    assert sample_vector_laplace(4, 1.0, rng).shape == (4,)
    assert sample_vector_laplace(4, 1.0, rng, size=10).shape == (10, 4)


@pytest.mark.parametrize(("dim", "scale"), [(1, 2.0), (5, 0.3), (50, 1.0)])
def test_vector_laplace_norm_is_gamma_and_direction_uniform(dim, scale):
    noise = sample_vector_laplace(dim, scale, np.random.default_rng(11), size=50_000)
    norms = np.linalg.norm(noise, axis=1)
    assert stats.kstest(norms, stats.gamma(a=dim, scale=scale).cdf).pvalue > ALPHA
    # Uniform direction: the first coordinate of w/‖w‖ has mean 0 and variance 1/d.
    first = noise[:, 0] / norms
    assert abs(first.mean()) < 4 * math.sqrt(1 / dim / first.size)
    assert first.var() == pytest.approx(1 / dim, rel=0.05)


def test_vector_laplace_mechanism_uses_l2_sensitivity_over_epsilon():
    rng = np.random.default_rng(5)
    draws = np.array(
        [
            vector_laplace_mechanism(np.ones(3), sensitivity=2.0, epsilon=0.5, rng=rng, ledger=fresh_ledger(1e9))
            for _ in range(3000)
        ]
    )
    norms = np.linalg.norm(draws - 1.0, axis=1)
    assert stats.kstest(norms, stats.gamma(a=3, scale=4.0).cdf).pvalue > ALPHA


# --- exponential mechanism and report-noisy-max --------------------------------------------------


def test_exponential_probabilities_closed_form():
    u = np.array([0.0, 1.0, 3.0])
    p = exponential_mechanism_probabilities(u, sensitivity=2.0, epsilon=1.0)
    np.testing.assert_allclose(p, np.exp(u / 4) / np.exp(u / 4).sum(), rtol=1e-14)
    pm = exponential_mechanism_probabilities(u, sensitivity=2.0, epsilon=1.0, monotonic=True)
    np.testing.assert_allclose(pm, np.exp(u / 2) / np.exp(u / 2).sum(), rtol=1e-14)


@pytest.mark.parametrize("monotonic", [False, True])
def test_exponential_mechanism_frequencies_match_softmax(monotonic):
    u = np.array([0.0, 0.5, 1.0, 2.0, 2.2])
    p = exponential_mechanism_probabilities(u, sensitivity=1.0, epsilon=2.0, monotonic=monotonic)
    rng, ledger, n = np.random.default_rng(2024), Ledger(1e9, 1e-5, PureDPAccountant()), 20_000
    kwargs = dict(sensitivity=1.0, epsilon=2.0, rng=rng, ledger=ledger, monotonic=monotonic)
    counts = np.bincount([exponential_mechanism(u, **kwargs) for _ in range(n)], minlength=u.size)
    assert stats.chisquare(counts, n * p).pvalue > ALPHA
    assert ledger.summary()["counts"] == {"PureDPEvent": n}


def test_exponential_mechanism_is_stable_with_huge_utilities():
    u = np.array([1.5e308, -1.5e308, 1.5e308 - 1e298, 5e307])  # u − max u overflows to −inf for index 1
    p = exponential_mechanism_probabilities(u, sensitivity=1.0, epsilon=1.0)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0) and p[0] == 1.0
    kwargs = dict(sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0), ledger=fresh_ledger())
    assert all(exponential_mechanism(u, **kwargs) == 0 for _ in range(20))
    # Large but close utilities: exp(εu/2Δ) alone would overflow, the shifted form keeps the right odds.
    close = exponential_mechanism_probabilities([1e6, 1e6 + 2.0], sensitivity=1.0, epsilon=1.0)
    np.testing.assert_allclose(close, [1 / (1 + math.e), math.e / (1 + math.e)])


def test_report_noisy_max_noise_scale():
    # Values (1, 0): index 1 wins iff L₁ − L₀ > 1; for i.i.d. Lap(b), P[L₁ − L₀ > g] = (2 + g/b) e^{−g/b} / 4.
    rng, ledger, n = np.random.default_rng(9), Ledger(1e9, 1e-5, PureDPAccountant()), 20_000
    for monotonic, b in ((False, 2.0), (True, 1.0)):
        kwargs = dict(sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger, monotonic=monotonic)
        wins = sum(report_noisy_max([1.0, 0.0], **kwargs) for _ in range(n))
        assert stats.binomtest(wins, n, (2 + 1.0 / b) * math.exp(-1.0 / b) / 4).pvalue > ALPHA


# --- AboveThreshold ------------------------------------------------------------------------------


def svt_run(query, max_queries, ledger, seed=0, **kwargs):
    return above_threshold(
        query,
        0.0,
        max_queries=max_queries,
        sensitivity=1.0,
        rng=np.random.default_rng(seed),
        ledger=ledger,
        **kwargs,
    )


def test_above_threshold_lazy_and_none():
    calls = []

    def query(i):
        calls.append(i)
        return 1e6 if i == 3 else -1e6

    ledger = fresh_ledger()
    assert svt_run(query, 10, ledger, epsilon=1.0) == 3
    assert calls == [0, 1, 2, 3]  # stops at the first ⊤
    assert svt_run([-1e6] * 5, 5, ledger, epsilon=1.0) is None
    assert svt_run([-1e6, 1e6], 1, ledger, epsilon=1.0) is None  # only max_queries values are asked
    assert ledger.summary()["n_charges"] == 3  # one charge per run, whatever the number of queries
    assert [e.count for e in ledger.entries] == [3]  # repeats of one event form one entry


def test_above_threshold_rejects_non_finite_query():
    with pytest.raises(ValueError, match="query"):
        svt_run(lambda i: math.nan, 3, fresh_ledger(), epsilon=1.0)


@pytest.mark.parametrize(("noise", "kwargs"), [("laplace", {"epsilon": 0.8}), ("gaussian", {"rho": 0.3})])
def test_above_threshold_matches_vectorised_sampler(noise, kwargs):
    """The ledger-charging mechanism and the sampler the statistical tests audit have the same output law
    (χ² test of homogeneity of the two output histograms)."""
    q, n = np.array([-1.0, 0.0, 0.5, -2.0]), 4000
    rng, ledger = np.random.default_rng(31), Ledger(1e9, 1e-5, RDPAccountant())
    runs = [
        above_threshold(q, 0.2, max_queries=4, sensitivity=1.0, rng=rng, ledger=ledger, noise=noise, **kwargs)
        for _ in range(n)
    ]
    single = np.bincount([4 if r is None else r for r in runs], minlength=5)
    rng = np.random.default_rng(32)
    batch = sample_above_threshold(q, 0.2, sensitivity=1.0, rng=rng, size=n, noise=noise, **kwargs)
    assert stats.chi2_contingency([single, np.bincount(batch, minlength=5)]).pvalue > ALPHA


def test_sample_above_threshold_chunks_and_none_code():
    kwargs = dict(sensitivity=1.0, rng=np.random.default_rng(0))
    out = sample_above_threshold([-1e9, -1e9], 0.0, size=70_000, epsilon=1.0, **kwargs)  # > one 65 536-row chunk
    assert out.shape == (70_000,) and np.all(out == 2)
    out = sample_above_threshold([-1e9, 1e9], 0.0, size=10, noise="gaussian", rho=1.0, **kwargs)
    assert np.all(out == 1)


def test_subsampled_laplace_charges_the_amplified_epsilon_before_sampling():
    ledger, rng = Ledger(1.0, 1e-6, PureDPAccountant()), np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="sample_size"):
        subsampled_laplace_mechanism(
            np.zeros(2), sensitivity=1.0, epsilon=1.0, sample_size=11, population=10, rng=rng, ledger=ledger
        )
    with pytest.raises(BudgetExceeded):
        subsampled_laplace_mechanism(
            np.zeros(2), sensitivity=1.0, epsilon=5.0, sample_size=10, population=10, rng=rng, ledger=ledger
        )
    assert rng.bit_generator.state == state and ledger.eps_spent == 0.0
    out = subsampled_laplace_mechanism(
        np.zeros(2), sensitivity=1.0, epsilon=5.0, sample_size=10, population=1000, rng=rng, ledger=ledger
    )
    assert out.shape == (2,) and ledger.eps_spent == pytest.approx(math.log1p(0.01 * math.expm1(5.0)), rel=1e-15)


def test_a_sensitivity_that_holds_with_probability_one_minus_delta_is_charged_as_eps_delta():
    """kusner_bo's Δ bounds hold only w.p. 1 − δ: the Laplace and exponential mechanisms then charge
    ApproxDPEvent(ε, δ) instead of their pure event, and refuse a δ outside [0, 1)."""
    from dpbench.privacy.events import ApproxDPEvent, LaplaceEvent, PureDPEvent
    from dpbench.privacy.mechanisms import exponential_mechanism, laplace_mechanism

    ledger = Ledger(10.0, 1e-3, "approx")
    rng = np.random.default_rng(0)
    laplace_mechanism(0.5, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger, failure_probability=1e-4)
    exponential_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=2.0, rng=rng, ledger=ledger, failure_probability=2e-4)
    laplace_mechanism(0.5, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger)
    exponential_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=2.0, rng=rng, ledger=ledger)
    assert [e.event for e in ledger.entries] == [
        ApproxDPEvent(1.0, 1e-4),
        ApproxDPEvent(2.0, 2e-4),
        LaplaceEvent(1.0),
        PureDPEvent(2.0),
    ]
    assert ledger.eps_spent == pytest.approx(6.0)
    with pytest.raises(ValueError, match="failure_probability must be in"):
        laplace_mechanism(0.5, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger, failure_probability=1.0)
    assert len(ledger.entries) == 4  # nothing charged for the refused call


# The count's share of ε = 0.01, 0.02, …, 5 (dpbench.privacy.counts): some reciprocals round back above
# it (1/(1/ε) > ε: 0.045 of ε = 0.9), most round-trip; a strict pure ledger of exactly ε accepts each release.
ROUND_TRIP_EPSILONS = [split_budget(k / 100, DEFAULT_COUNT_SHARE).count_eps for k in range(1, 501)]


def test_a_laplace_release_fits_a_ledger_of_exactly_its_epsilon():
    rounded_above = [eps for eps in ROUND_TRIP_EPSILONS if 1.0 / (1.0 / eps) > eps]
    assert (
        split_budget(0.9, DEFAULT_COUNT_SHARE).count_eps in rounded_above and len(rounded_above) > 10
    )  # the case exists: the test is not vacuous
    for eps in ROUND_TRIP_EPSILONS:
        for mechanism in (laplace_mechanism, subsampled_laplace_mechanism):
            ledger = Ledger(eps, 1e-6, PureDPAccountant())
            extra = {"sample_size": 10, "population": 10} if mechanism is subsampled_laplace_mechanism else {}
            mechanism(1.0, sensitivity=1.0, epsilon=eps, rng=np.random.default_rng(0), ledger=ledger, **extra)
            assert ledger.eps_spent <= eps


def test_laplace_calibration_keeps_the_noise_where_the_reciprocal_round_trips_and_widens_it_elsewhere():
    for eps in ROUND_TRIP_EPSILONS:
        noise_multiplier, drawn_at = laplace_calibration(eps)
        assert 1.0 / noise_multiplier <= eps and drawn_at <= eps
        if 1.0 / (1.0 / eps) <= eps:
            assert (noise_multiplier, drawn_at) == (1.0 / eps, eps)  # the releases of before, bit for bit
        else:
            assert noise_multiplier == math.nextafter(1.0 / eps, math.inf) and drawn_at < eps


def test_budget_exceeded_survives_pickling():
    """A job's exception crosses a process boundary in a joblib or Ray sweep."""
    import pickle

    ledger = Ledger(0.1, 1e-6, PureDPAccountant())
    with pytest.raises(BudgetExceeded) as raised:
        laplace_mechanism(1.0, sensitivity=1.0, epsilon=0.2, rng=np.random.default_rng(0), ledger=ledger)
    copy = pickle.loads(pickle.dumps(raised.value))
    assert type(copy) is BudgetExceeded and str(copy) == str(raised.value) and copy.budget == 0.1
