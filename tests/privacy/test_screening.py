"""Report-noisy-max screened by approximate values (dpbench.privacy.screening): the same index and draws as
the exact mechanism, whichever path decides."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.privacy.accountants import PureDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import report_noisy_max, report_noisy_max_screened
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


@pytest.mark.parametrize("sampler", ["numpy", "secure"])
def test_the_screened_index_and_draws_are_the_exact_mechanisms(sampler):
    """2,000 cases of 21 values at noise scale 1, with errors from 10⁻⁶ (decided from the approximations)
    to 3 (often undecided): index and generator state as report_noisy_max's, every time."""
    rng = np.random.default_rng(0)
    decided = 0
    with use_sampler(sampler):
        for case in range(2000):
            exact, screened, computed = _case(rng, 21, 10.0 ** rng.uniform(-6, 0.5))
            ours, theirs = np.random.default_rng(case), np.random.default_rng(case)
            kwargs = {"sensitivity": 1.0, "epsilon": 1.0, "monotonic": True}
            index = report_noisy_max_screened(screened, rng=ours, ledger=_ledger(), **kwargs)
            assert index == report_noisy_max(exact, rng=theirs, ledger=_ledger(), **kwargs)
            assert ours.bit_generator.state == theirs.bit_generator.state
            decided += not computed
    if sampler == "numpy":
        assert 1000 < decided < 2000  # both paths taken
    else:
        assert decided == 0  # the grid needs the exact values


def test_a_near_tie_is_left_to_the_exact_values():
    exact = np.array([1.0, 1.0 + 1e-9, -5.0])
    computed = []
    screened = ScreenedValues(exact + 1e-10, np.full(3, 1e-6), lambda: computed.append(1) or exact)
    noise = np.array([0.5, 0.5, 0.0])
    assert screened.decide(noise) is None
    assert ScreenedValues(exact, np.full(3, 1e-12), screened.exact).decide(noise) == 1
    assert not computed


def test_non_finite_approximations_are_checked_exactly_before_anything_is_charged():
    ledger = _ledger()
    screened = ScreenedValues(np.array([np.nan, 1.0]), np.zeros(2), lambda: np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="finite"):
        report_noisy_max_screened(screened, sensitivity=1.0, epsilon=1.0, rng=np.random.default_rng(0), ledger=ledger)
    assert ledger.eps_spent == 0.0
