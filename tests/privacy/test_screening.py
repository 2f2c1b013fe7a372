"""Report-noisy-max and the exponential mechanism screened by approximate values (dpbench.privacy.screening):
the same index and draws as the exact mechanism, whichever path decides."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.privacy.accountants import PureDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_screened,
    report_noisy_max,
    report_noisy_max_screened,
)
from dpbench.privacy.samplers import use_sampler
from dpbench.privacy.screening import ScreenedValues


def _ledger():
    return Ledger(1e6, 1e-6, PureDPAccountant())


def _case(rng, k: int, error_scale: float):
    """Exact values, approximations anywhere within their bounds, and a counter of exact computations."""
    exact = rng.normal(0.0, 3.0, size=k)
    error = error_scale * rng.uniform(0.0, 1.0, size=k)
    approx = exact + error * rng.uniform(-1.0, 1.0, size=k)
    computed = []
    return exact, ScreenedValues(approx, error, lambda: computed.append(1) or exact.copy()), computed


def _assert_both_paths_taken(sampler: str, decided: int, at_least: int) -> None:
    """Of 2,000 cases, the numpy sampler decided some from the bounds and computed others; the secure one, whose
    grid needs the exact values, decided none."""
    if sampler == "numpy":
        assert at_least < decided < 2000
    else:
        assert decided == 0


def _assert_same_pick(screened_mechanism, mechanism, screened: ScreenedValues, exact, seed: int, kwargs) -> None:
    """The screened mechanism picks what the exact one picks from ``exact``, leaving its generator in the same state."""
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    index = screened_mechanism(screened, rng=ours, ledger=_ledger(), **kwargs)
    assert index == mechanism(exact, rng=theirs, ledger=_ledger(), **kwargs)
    assert ours.bit_generator.state == theirs.bit_generator.state


@pytest.mark.parametrize("sampler", ["numpy", "secure"])
def test_the_screened_index_and_draws_are_the_exact_mechanisms(sampler):
    """2,000 cases of 21 values at noise scale 1, with errors from 10⁻⁶ (decided from the approximations)
    to 3 (often undecided): index and generator state as report_noisy_max's, every time."""
    rng = np.random.default_rng(0)
    decided = 0
    with use_sampler(sampler):
        for case in range(2000):
            exact, screened, computed = _case(rng, 21, 10.0 ** rng.uniform(-6, 0.5))
            kwargs = {"sensitivity": 1.0, "epsilon": 1.0, "monotonic": True}
            _assert_same_pick(report_noisy_max_screened, report_noisy_max, screened, exact, case, kwargs)
            decided += not computed
    _assert_both_paths_taken(sampler, decided, at_least=1000)


@pytest.mark.parametrize("sampler", ["numpy", "secure"])
@pytest.mark.parametrize("offset", [0.0, -3.0e4, 7.0e8])
def test_the_screened_exponential_mechanism_picks_the_exact_index_with_the_same_draws(sampler, offset):
    """2,000 cases of 40 utilities around ``offset`` (the log-weights subtract the largest: their rounding grows
    with it), errors from 10⁻⁸ to 3 at log-weight scale 1 to 8, one in four with a finer level: index and
    generator state as exponential_mechanism's, every time."""
    rng = np.random.default_rng(2)
    decided = 0
    with use_sampler(sampler):
        for case in range(2000):
            exact = offset + rng.normal(0.0, 3.0, size=40)
            error = 10.0 ** rng.uniform(-8, 0.5) * rng.uniform(0.0, 1.0, size=40)
            approx = exact + error * rng.uniform(-1.0, 1.0, size=40)
            error += 2.0**-50 * np.abs(exact)  # the rounding of the line above
            computed = []
            count = lambda exact=exact, computed=computed: computed.append(1) or exact.copy()
            finer = None
            if case % 4 == 0:
                finer = lambda _, exact=exact, count=count: ScreenedValues(exact, 2.0**-50 * np.abs(exact), count)
            screened = ScreenedValues(approx, error, count, finer)
            kwargs = {"sensitivity": 0.5, "epsilon": float(rng.uniform(1.0, 8.0)), "monotonic": bool(case % 2)}
            _assert_same_pick(exponential_mechanism_screened, exponential_mechanism, screened, exact, case, kwargs)
            decided += not computed
    _assert_both_paths_taken(sampler, decided, at_least=500)


def test_log_weight_bounds_hold_where_the_utilities_round_most():
    """Utilities of 10⁹ whose approximations lie at the ends of their bounds: every exact log-weight (the floats
    exponential_mechanism uses) inside the bounds screened_log_weights gives, and the bounds not vacuous."""
    from dpbench.privacy.samplers import exponential_log_weights, screened_log_weights

    rng = np.random.default_rng(3)
    for _ in range(500):
        exact = 1e9 + rng.normal(0.0, 50.0, size=30)
        error = rng.uniform(0.0, 1e-3, size=30)
        approx = exact + error * rng.choice([-1.0, 1.0], size=30)
        error += 2.0**-50 * np.abs(exact)  # the rounding of the line above
        bounds = screened_log_weights(ScreenedValues(approx, error, lambda exact=exact: exact), 0.25, 2.0, False)
        truth = exponential_log_weights(exact, 0.25, 2.0, False)
        assert np.all(np.abs(truth - bounds.approx) <= bounds.error)
        assert np.all(bounds.error <= 4.0 * (2.0 * 1e-3) + 1e-6 * np.abs(bounds.approx) + 1e-3)


def test_a_near_tie_is_left_to_the_exact_values():
    exact = np.array([1.0, 1.0 + 1e-9, -5.0])
    computed = []
    screened = ScreenedValues(exact + 1e-10, np.full(3, 1e-6), lambda: computed.append(1) or exact)
    noise = np.array([0.5, 0.5, 0.0])
    assert screened.decide(noise) is None
    assert ScreenedValues(exact, np.full(3, 1e-12), screened.exact).decide(noise) == 1
    assert not computed


def test_finer_levels_are_computed_in_turn_and_only_when_needed():
    """argmax asks each finer level only when the coarser one cannot decide, and the exact values last; each
    finer level is told which entries the coarser one left able to win."""
    exact, asked, told = np.array([1.0, 1.0 + 1e-9, -5.0]), [], []

    def level(name: str, error: float, finer=None) -> ScreenedValues:
        asked.append(name)
        return ScreenedValues(exact + error / 2, np.full(3, error), lambda: asked.append("exact") or exact, finer)

    def then(name: str, error: float, finer=None):
        return lambda contenders: told.append(contenders.tolist()) or level(name, error, finer)

    noise = np.array([0.5, 0.5, 0.0])
    chain = level("coarse", 1.0, then("finer", 1e-6, then("finest", 1e-12)))
    assert chain.argmax(noise) == 1 and asked == ["coarse", "finer", "finest"]
    assert told == [[True, True, False], [True, True, False]]  # −5 + 0 cannot reach 1 + 0.5 within these bounds
    asked.clear()
    assert level("coarse", 1.0, then("finer", 1e-6)).argmax(noise) == 1
    assert asked == ["coarse", "finer", "exact"]
    asked.clear()
    assert level("coarse", 1e-3, then("finer", 1e-6)).argmax(np.array([0.5, 0.0, 0.0])) == 0
    assert asked == ["coarse"]


def test_non_finite_approximations_are_checked_exactly_before_anything_is_charged():
    ledger = _ledger()
    screened = ScreenedValues(np.array([np.nan, 1.0]), np.zeros(2), lambda: np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="finite"):
        report_noisy_max_screened(screened, sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.eps_spent == 0.0


@pytest.mark.parametrize("sampler", ["numpy", "secure"])
def test_screened_above_threshold_releases_the_exact_index_with_the_same_draws(sampler):
    """2,000 runs of AboveThreshold over 12 queries at noise scales 2 and 4, whose approximations are off by
    up to 10⁻⁶ … 3: index and generator state as with the exact values, every time."""
    from dpbench.privacy.mechanisms import above_threshold
    from dpbench.privacy.screening import ScreenedValue

    rng = np.random.default_rng(1)
    decided = computed = 0
    with use_sampler(sampler):
        for case in range(2000):
            exact = rng.normal(-2.0, 2.0, size=12)
            scale = 10.0 ** rng.uniform(-6, 0.5)
            errors = scale * rng.uniform(0.0, 1.0, size=12)
            approx = exact + errors * rng.uniform(-1.0, 1.0, size=12)
            calls = []

            def screened(i, approx=approx, errors=errors, exact=exact, calls=calls):
                value = float(exact[i])
                return ScreenedValue(float(approx[i]), float(errors[i]), lambda: calls.append(i) or value)

            ours, theirs = np.random.default_rng(case), np.random.default_rng(case)
            kwargs = {"max_queries": 12, "sensitivity": 1.0, "epsilon": 1.0}
            index = above_threshold(screened, 0.0, rng=ours, ledger=_ledger(), **kwargs)
            assert index == above_threshold(
                lambda i, exact=exact: float(exact[i]), 0.0, rng=theirs, ledger=_ledger(), **kwargs
            )
            assert ours.bit_generator.state == theirs.bit_generator.state
            asked = 12 if index is None else index + 1
            decided += asked - len(calls)
            computed += len(calls)
    if sampler == "numpy":
        assert decided > 5 * computed > 0  # both paths taken, mostly the approximate one
    else:
        assert decided == 0  # the grid needs the exact values


def test_a_query_at_the_threshold_is_left_to_its_exact_value():
    from dpbench.privacy.screening import ScreenedValue

    def never():
        raise AssertionError("not needed")

    assert ScreenedValue(1.0, 1e-9, never).decide_above(0.5, 1.5) is None  # fl(q + ν) may round onto T̂
    assert ScreenedValue(1.0, 1e-9, never).decide_above(0.5, 1.5 - 1e-6) is True
    assert ScreenedValue(1.0, 1e-9, never).decide_above(0.5, 1.5 + 1e-6) is False
    assert ScreenedValue(1.0, float("inf"), never).decide_above(0.5, 0.0) is None
    assert ScreenedValue(float("nan"), 0.0, never).decide_above(0.5, 0.0) is None
