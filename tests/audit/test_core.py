"""The auditor itself: validity (false alarms at most at the nominal rate), power on an exactly-known
mechanism, event choice, determinism and the probe of per-call mechanisms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench.audit.core import Target, audit, bonferroni_confidence
from dpbench.audit.events import choose_event, clopper_pearson_bounds
from dpbench.audit.probe import probe_argmax_mechanism
from dpbench.audit.suite import TARGETS, confidence
from dpbench.audit.targets import ample_ledger, laplace_target, report_noisy_max_target
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.mechanisms import report_noisy_max

pytestmark = pytest.mark.statistical


def test_laplace_bound_is_valid_and_non_vacuous_at_the_default_n():
    """Laplace, ε = 1, f(D) = 0 vs f(D′) = 1: the best event's ratio is exactly e^ε, so at N = 10⁶ and the
    suite's Bonferroni confidence the lower bound must be ≤ ε and ≥ 0.9ε."""
    result = audit(laplace_target(1.0), 1_000_000, seed=0, confidence=confidence())
    assert 0.9 <= result.eps_lower_bound <= 1.0, result
    assert result.verdict == "ok" and result.n == 1_000_000 and result.n_calibration == 500_000


def test_false_alarms_stay_below_the_nominal_rate():
    """400 independent audits of two exactly-ε mechanisms at confidence 0.8: choosing the event on the
    calibration draws must not leak into the bound, so at most 20% (here ~4%) may exceed ε."""
    for target in (laplace_target(1.0), report_noisy_max_target(1.0)):
        violations = sum(audit(target, 2000, seed, confidence=0.8).violation for seed in range(400))
        assert violations <= 80, (target.name, violations)


def test_the_bound_is_epsilon_lower_bound_of_the_reported_hits():
    result = audit(laplace_target(1.0), 20_000, seed=3, confidence=0.99)
    k1, k0 = result.hits
    assert result.eps_lower_bound == epsilon_lower_bound(k1, 20_000, k0, 20_000, confidence=0.99)


def test_vectorised_bounds_match_epsilon_lower_bound():
    k1, k0 = np.array([0, 5, 400, 999]), np.array([0, 1, 100, 1000])
    got = clopper_pearson_bounds(k1, 1000, k0, 1000, delta=1e-3, confidence=0.99)
    want = [epsilon_lower_bound(int(a), 1000, int(b), 1000, delta=1e-3, confidence=0.99) for a, b in zip(k1, k0)]
    assert np.allclose(got, want, rtol=1e-12) and math.isinf(got[0])


def test_same_seed_same_result_and_another_seed_other_draws():
    target = laplace_target(1.0)
    a, b, c = (audit(target, 10_000, seed) for seed in (5, 5, 6))
    assert (a.eps_lower_bound, a.event, a.hits) == (b.eps_lower_bound, b.event, b.hits)
    assert a.hits != c.hits


def test_bonferroni_level_covers_the_registry():
    assert confidence() == pytest.approx(1.0 - 0.01 / len(TARGETS))
    assert bonferroni_confidence(1) == pytest.approx(0.99)
    with pytest.raises(ValueError):
        bonferroni_confidence(0)


def test_event_choice_for_discrete_scalar_and_vector_outputs():
    rng = np.random.default_rng(0)
    discrete = choose_event(
        rng.choice(4, 5000, p=[0.1, 0.3, 0.3, 0.3]),
        rng.choice(4, 5000, p=[0.4, 0.2, 0.2, 0.2]),
        delta=0.0,
        confidence=0.99,
    )
    assert discrete.swap and discrete.contains(np.array([0, 1])).tolist() == [True, False]
    scalar = choose_event(rng.normal(0, 1, 20_000), rng.normal(1, 1, 20_000), delta=0.0, confidence=0.99)
    tail = np.array([3.0]) if scalar.swap else np.array([-3.0])  # the Gaussian pair is symmetric: either tail
    assert scalar.score > 1.5 and scalar.contains(tail)[0] and not scalar.contains(-tail)[0]
    shifted = rng.normal(0, 1, (20_000, 2)) + [2.0, 0.0]
    vector = choose_event(rng.normal(0, 1, (20_000, 2)), shifted, delta=0.0, confidence=0.99)
    point = np.array([[5.0, 0.0]]) if vector.swap else np.array([[-5.0, 0.0]])  # projected on u ≈ (1, 0)
    assert "x·u" in vector.description and vector.contains(point)[0] and not vector.contains(-point)[0]


def test_max_n_caps_the_draws_and_bad_samplers_are_refused():
    base = laplace_target(1.0)
    capped = Target("capped", 1.0, 0.0, base.sample, pair="", proof="", max_n=3000)
    assert audit(capped, 100_000, 0).n == 3000
    bad = Target("bad", 1.0, 0.0, lambda side, n, rng: np.zeros(n + 1), pair="", proof="")
    with pytest.raises(ValueError, match="returned shape"):
        audit(bad, 1000, 0)
    with pytest.raises(ValueError, match="n must be"):
        audit(base, 10, 0)


def test_probe_catches_a_stale_noise_scale():
    values = np.zeros(3)
    ledger = ample_ledger()

    def release(rng):
        return report_noisy_max(values, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger)

    probe_argmax_mechanism(release, values, "laplace", (0.0, 2.0))  # the general form: Lap(2Δ/ε)
    with pytest.raises(AssertionError, match="expected laplace"):
        probe_argmax_mechanism(release, values, "laplace", (0.0, 1.0))
