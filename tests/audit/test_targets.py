"""Every registered mechanism passes its audit at the CI size, informatively; every control is caught.

N = 2·10⁵ per side (the pwa MCMC target caps itself at 4000, the targets that call ``fit()`` once per
draw at 2·10⁴, the broken PrivGene and pwa_laplace_data controls at 5000 and 5·10⁴), fixed seed 0, the
suite's Bonferroni confidence: a correct mechanism is flagged with probability < 1%/|TARGETS| per target
(40 targets with the practical methods' plugin targets, the ``secure_*`` ones under ``privacy.sampler=secure``). The floors are
~0.1 below the bounds this seed gives, so a change that made an audit vacuous fails here.
"""

from __future__ import annotations

import pytest

from dpbench.audit.core import audit
from dpbench.audit.suite import CONTROLS, TARGETS, build, confidence

pytestmark = pytest.mark.statistical

N_CI = 200_000

FLOORS = {
    "laplace": 0.9,
    "training_count": 0.02,
    "gaussian": 0.4,
    "pwa_vector_laplace": 0.7,
    "pwa_laplace_data": 0.7,
    "exponential": 0.75,
    "pwa_exponential_mcmc": 0.25,
    "pwa_subgradient_printed": 0.75,
    "pwa_subgradient_active": 0.75,
    "above_threshold_laplace": 0.7,
    "above_threshold_gaussian": 0.3,
    "report_noisy_max": 0.85,
    "report_noisy_max_dp_agd": 0.85,
    "dp_sgd_step": 0.45,
    "dp_blsgd_noisy_btls_laplace": 0.4,
    "dp_blsgd_noisy_btls_gaussian": 0.12,
    "dp_blsgd_poisson_btls_laplace": 0.22,
    "dp_blsgd_poisson_btls_gaussian": 0.18,
    "dp_nag_step": 0.6,
    "dda_release": 0.05,
    "dda_rdp_release": 0.2,
    "output_perturbation_gd": 0.35,
    "outpert_rsgd": 0.12,
    "objective_perturbation": 0.08,
    "amp_objective": 0.08,
    "tail_bound_gaussian": 0.16,
    "private_fw_step": 0.48,
    "dp_newton_direction": 0.38,
    "privgene": 0.16,
    "bo_v_tilde": 0.85,
    "bo_lambda_tilde": 0.75,
    "bo_f_tilde": 0.87,
    "bo_f_tilde_l": 0.87,
    "tuning_repeat_and_select": 0.05,
    "secure_laplace": 0.85,
    "secure_gaussian": 0.4,
    "secure_report_noisy_max": 0.85,
    "secure_exponential": 0.83,
    "secure_above_threshold_laplace": 0.6,
    "secure_above_threshold_gaussian": 0.3,
}


def test_every_target_has_a_floor_and_a_documented_pair():
    assert set(FLOORS) == set(TARGETS)
    for name in list(TARGETS) + list(CONTROLS):
        target = build(name)
        assert target.name == name and target.pair and target.proof


@pytest.mark.parametrize("name", list(TARGETS))
def test_target_is_not_a_violation(name):
    result = audit(build(name), N_CI, seed=0, confidence=confidence())
    assert result.verdict == "ok", result
    assert FLOORS[name] <= result.eps_lower_bound <= result.eps_claimed, result


@pytest.mark.parametrize("name", list(CONTROLS))
def test_control_is_caught_with_margin(name):
    result = audit(build(name), N_CI, seed=0, confidence=confidence())
    assert result.violation and result.eps_lower_bound > result.eps_claimed + 0.5, result
