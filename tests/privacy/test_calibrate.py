"""Noise calibration returns the smallest noise that fits the target, and never one that overshoots."""

from __future__ import annotations

import functools
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbench.privacy.accountants import PureDPAccountant, RDPAccountant, ZCDPAccountant
from dpbench.privacy.calibrate import calibrate_noise, gaussian_noise_for_budget
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.zcdp import zcdp_epsilon

TIGHT = 1.0 - 1e-4


def _gaussian_epsilon(accountant, sigma, steps, q, delta):
    event = GaussianEvent(sigma) if q == 1.0 else PoissonSampledEvent(q, GaussianEvent(sigma))
    return accountant.epsilon(accountant.zero() + steps * accountant.cost(event), delta)


@pytest.mark.parametrize(
    ("epsilon", "delta", "steps", "q", "accountant"),
    [
        (1.0, 1e-5, 1, 1.0, None),
        (0.5, 1e-6, 1000, 0.01, None),
        (3.0, 1e-8, 200, 0.1, RDPAccountant(conversion="prop1")),
        (1.0, 1e-5, 50, 1.0, ZCDPAccountant()),
    ],
)
def test_gaussian_noise_fits_and_is_tight(epsilon, delta, steps, q, accountant):
    sigma = gaussian_noise_for_budget(epsilon, delta, steps=steps, sampling_rate=q, accountant=accountant)
    acc = accountant or RDPAccountant()
    assert _gaussian_epsilon(acc, sigma, steps, q, delta) <= epsilon
    assert _gaussian_epsilon(acc, sigma * TIGHT, steps, q, delta) > epsilon
    event = GaussianEvent(sigma) if q == 1.0 else PoissonSampledEvent(q, GaussianEvent(sigma))
    Ledger(epsilon, delta, acc).charge(event, count=steps)  # a ledger with that budget accepts the run


def test_gaussian_noise_zcdp_closed_form():
    # 50 Gaussian steps are 50/(2σ²)-zCDP; solve ρ + 2√(ρ ln 1/δ) = 1 for ρ, then σ.
    sigma = gaussian_noise_for_budget(1.0, 1e-5, steps=50, accountant=ZCDPAccountant())
    log_inv = math.log(1e5)
    rho = (math.sqrt(log_inv + 1.0) - math.sqrt(log_inv)) ** 2
    assert sigma == pytest.approx(math.sqrt(50 / (2 * rho)), rel=2e-6)
    assert zcdp_epsilon(50 / (2 * sigma**2), 1e-5) <= 1.0


def test_a_repeated_gaussian_calibration_is_remembered_per_rdp_accountant_configuration(monkeypatch):
    """A second call with the same budget and an RDP accountant of the same orders, conversion and amplification is
    answered without evaluating ε again, with the σ a fresh bisection finds; another conversion is calibrated anew."""
    from dpbench.privacy import calibrate
    from dpbench.recent_answers import RecentAnswers

    monkeypatch.setattr(calibrate, "_GAUSSIAN_NOISE", RecentAnswers(8))
    evaluations = []
    real = RDPAccountant.epsilon
    monkeypatch.setattr(RDPAccountant, "epsilon", lambda self, *a: evaluations.append(1) or real(self, *a))
    first = gaussian_noise_for_budget(0.7, 1e-6, steps=30, sampling_rate=0.05, accountant=RDPAccountant())
    fresh = len(evaluations)
    again = gaussian_noise_for_budget(0.7, 1e-6, steps=30, sampling_rate=0.05, accountant=RDPAccountant())
    assert again == first and len(evaluations) == fresh > 10
    filtered = gaussian_noise_for_budget(
        0.7, 1e-6, steps=30, sampling_rate=0.05, accountant=RDPAccountant(conversion="filter")
    )
    assert len(evaluations) > fresh and filtered > first  # the filter's conversion costs more noise
    monkeypatch.setattr(calibrate, "_GAUSSIAN_NOISE", RecentAnswers(8))
    assert gaussian_noise_for_budget(0.7, 1e-6, steps=30, sampling_rate=0.05) == first
    remembered = len(calibrate._GAUSSIAN_NOISE)
    gaussian_noise_for_budget(1.0, 1e-5, steps=50, accountant=ZCDPAccountant())
    assert len(calibrate._GAUSSIAN_NOISE) == remembered  # other accountants are not remembered


def test_gaussian_noise_needs_an_accountant_that_prices_it():
    with pytest.raises(ValueError, match="accountant=rdp"):
        gaussian_noise_for_budget(1.0, 1e-5, accountant=PureDPAccountant())


@settings(max_examples=40, deadline=None, derandomize=True)
@given(target=st.floats(1e-3, 50.0), scale=st.floats(1e-2, 1e2), lower=st.floats(1e-4, 1.0), upper=st.floats(2.0, 1e4))
def test_calibrate_never_overshoots(target, scale, lower, upper):
    """ε(noise) = scale/noise (Laplace-like): the answer is scale/target, wherever it lies relative to the bracket."""
    calls = []

    def epsilon_of(noise):
        calls.append(noise)
        return scale / noise

    noise = calibrate_noise(epsilon_of, target, lower=lower, upper=upper)
    assert epsilon_of(noise) <= target
    assert epsilon_of(noise * TIGHT) > target
    assert noise == pytest.approx(scale / target, rel=1.1e-6)
    assert len(calls) < 100


@settings(max_examples=15, deadline=None, derandomize=True)
@given(target=st.floats(0.05, 10.0), steps=st.integers(1, 500), q=st.sampled_from([0.001, 0.02, 0.3, 1.0]))
def test_gaussian_calibration_never_overshoots(target, steps, q):
    accountant = RDPAccountant()
    sigma = gaussian_noise_for_budget(target, 1e-6, steps=steps, sampling_rate=q, accountant=accountant)
    assert _gaussian_epsilon(accountant, sigma, steps, q, 1e-6) <= target
    assert _gaussian_epsilon(accountant, sigma * TIGHT, steps, q, 1e-6) > target


def test_calibrate_step_function_returns_feasible_end():
    # ε jumps from 2 to 0.5 at noise 3: any noise ≥ 3 fits 1.0, the answer is just above 3, never below.
    noise = calibrate_noise(lambda s: 2.0 if s < 3.0 else 0.5, 1.0)
    assert 3.0 <= noise <= 3.0 * (1 + 1e-6)


def test_calibrate_unreachable_target_names_it():
    with pytest.raises(ValueError, match=re.escape("target_epsilon=0.25")):
        calibrate_noise(lambda s: 1.0, 0.25)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(target_epsilon=0.0),
        dict(target_epsilon=math.nan),
        dict(target_epsilon=1.0, lower=2.0, upper=1.0),
        dict(target_epsilon=1.0, rtol=0.0),
    ],
)
def test_calibrate_validates(kwargs):
    with pytest.raises(ValueError):
        calibrate_noise(lambda s: 1.0 / s, **kwargs)


def test_calibrate_rejects_nan_epsilon():
    with pytest.raises(ValueError, match="NaN"):
        calibrate_noise(lambda s: math.nan, 1.0)


def _plain_bisection(epsilon_of, target, lower=1e-3, upper=1e3, rtol=1e-6):
    """calibrate_noise as it was before it narrowed its bracket first: every decision evaluated."""
    calls = [0]

    def fits(noise):
        calls[0] += 1
        return float(epsilon_of(noise)) <= target

    lo, hi = lower, upper
    while not fits(hi):
        if hi >= 1e12:
            raise ValueError("unreachable")
        lo, hi = hi, hi * 10.0
    while fits(lo):
        if lo <= 1e-12:
            return lo, calls[0]
        lo, hi = lo / 10.0, lo
    while hi > lo * (1.0 + rtol):
        mid = math.sqrt(lo * hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi, calls[0]


def _counted(epsilon_of):
    calls = [0]

    def counted(noise):
        calls[0] += 1
        return epsilon_of(noise)

    return counted, calls


_SHAPES = {
    "power": lambda s, a: a / s,
    "steep": lambda s, a: (a / s) ** 6,
    "step": lambda s, a: 2.0 if s < a else 0.5,
    "kinked": lambda s, a: max(a / s, 3 * a / s - 2.0),
    "infinite_below": lambda s, a: math.inf if s < a / 2 else a / s,
    "zero_above": lambda s, a: 0.0 if s > 2 * a else a / s,
}


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    shape=st.sampled_from(sorted(_SHAPES)),
    scale=st.floats(1e-6, 1e6),
    target=st.floats(0.05, 5.0),
    rtol=st.sampled_from([1e-6, 1e-3, 1e-9]),
)
def test_narrowed_calibration_returns_exactly_the_plain_bisection(shape, scale, target, rtol):
    """The same noise to the last bit as the bisection it replays, whatever the (monotone) curve."""
    epsilon_of = functools.partial(_SHAPES[shape], a=scale)
    try:
        expected, _ = _plain_bisection(epsilon_of, target, rtol=rtol)
    except ValueError:  # no noise up to 1e12 fits
        with pytest.raises(ValueError, match="unreachable"):
            calibrate_noise(epsilon_of, target, rtol=rtol)
        return
    assert calibrate_noise(epsilon_of, target, rtol=rtol) == expected


@pytest.mark.parametrize(("q", "steps", "eps"), [(0.01, 100, 1.0), (0.0027, 3221, 0.4), (0.1, 10, 0.05), (1.0, 1, 2.0)])
def test_subsampled_gaussian_calibration_is_the_bisections_in_half_the_evaluations(q, steps, eps):
    accountant = RDPAccountant()

    def epsilon_of(sigma):
        return _gaussian_epsilon(accountant, sigma, steps, q, 1e-8)

    expected, plain_calls = _plain_bisection(epsilon_of, eps)
    counted, calls = _counted(epsilon_of)
    assert calibrate_noise(counted, eps) == expected
    assert calls[0] <= plain_calls / 2 + 2, (calls[0], plain_calls)
