"""The two controls that publish a count beside a release, against their twins that do not.

``control_publish_batch_size`` and ``control_publish_trials`` are caught with a margin of 0.5 by
tests/audit/test_targets.py (N = 2·10⁵ per side, seed 0, the suite's Bonferroni confidence: ε̂ = 2.91 against
1.606 claimed, and 4.99 against 4). Here each control's twin — the same sampler, pair and settings, with the
count left out, i.e. what a results row publishes — passes at the same N, seed and confidence, so what the
auditor catches is the count alone. The exact profiles are in tests/privacy/test_published_counts.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from dpbench.audit.core import audit
from dpbench.audit.suite import CONTROLS, build, confidence

pytestmark = pytest.mark.statistical

N_CI = 200_000


def _twin(control: str):
    """The control's target with the published count's column left out, and the control itself."""
    target = build(control)
    sample = target.sample
    return dataclasses.replace(
        target, name=f"{control}_twin", statistic=None, sample=lambda side, n, rng: sample(side, n, rng)[:, :-1]
    ), target


@pytest.mark.parametrize(("control", "floor"), [("control_publish_batch_size", 0.4), ("control_publish_trials", 1.25)])
def test_the_twin_without_the_count_passes(control, floor):
    """Twin ε̂ at seed 0: 0.50 ≤ 1.606 (the DP-SGD step, |D| = 4, exactly 1.355) and 1.40 ≤ 4 (tuning, K hidden);
    the floors, ~0.1 below, keep the twins' audits informative."""
    twin, target = _twin(control)
    assert control in CONTROLS
    result = audit(twin, N_CI, seed=0, confidence=confidence())
    assert result.verdict == "ok", result
    assert floor <= result.eps_lower_bound <= target.epsilon, result
