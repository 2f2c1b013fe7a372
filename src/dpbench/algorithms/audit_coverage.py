"""Which ``dpbench-audit`` targets test each private algorithm's releases, and what no target tests yet.

Every private algorithm of the registry has an entry (tests/test_audit_coverage.py fails otherwise):
the targets (names of :data:`dpbench.audit.suite.TARGETS`) that audit the mechanisms its releases go
through, and ``gaps``, the releases no target audits yet. An entry without targets must say why in
``gaps``. ``dpbench-report`` shows a method's audit verdicts from these targets, and its gaps beside
them. Data only: importing this module imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AuditCoverage:
    """``targets``: the audit targets of this method's releases; ``gaps``: what they leave unaudited ("" = nothing)."""

    targets: tuple[str, ...]
    gaps: str = ""


_KURU = AuditCoverage(("dp_nag_step",))  # every kuru method releases its gradients through the same noisy step
_LINE_SEARCH = (
    "dp_blsgd_noisy_btls_laplace",
    "dp_blsgd_noisy_btls_gaussian",
    "above_threshold_laplace",
    "above_threshold_gaussian",
    "gaussian",
)
_POISSON_LINE_SEARCH = AuditCoverage(
    _LINE_SEARCH + ("dp_blsgd_poisson_btls_laplace", "dp_blsgd_poisson_btls_gaussian"),
    gaps="the noisy gradient and NoisyBTLS together on one Poisson subsample (PoissonBatch prices them jointly; the "
    "targets audit each release alone)",
)
_DDA = AuditCoverage(("dda_release", "dda_rdp_release"))  # both classes share _DDAMethod's calibration and release

AUDIT_COVERAGE: dict[str, AuditCoverage] = {
    "dp_sgd": AuditCoverage(("dp_sgd_step",)),
    "dp_blsgd": _POISSON_LINE_SEARCH,
    "dp_blsgd_ac": _POISSON_LINE_SEARCH,
    "dp_blgd": AuditCoverage(_LINE_SEARCH),
    "dp_agd": AuditCoverage(("report_noisy_max_dp_agd", "gaussian")),
    "outpert_gd": AuditCoverage(("output_perturbation_gd",)),
    "outpert_rsgd": AuditCoverage(("outpert_rsgd",)),
    "objpert": AuditCoverage(("objective_perturbation",)),
    "privgene": AuditCoverage(
        ("privgene", "exponential"),
        gaps="rounds after the first and n_parents ≥ 2 (crossover, "
        "selection without replacement): the target runs one "
        "round with one parent",
    ),
    "dp_gd": _KURU,
    "dp_hb": _KURU,
    "dp_nag": _KURU,
    "dp_nag_opt": _KURU,
    "dp_masg": _KURU,
    "dp_masg_opt": _KURU,
    "dp_dda": _DDA,
    "dp_dda_all_nodes": _DDA,
    "pwa_laplace_data": AuditCoverage(("pwa_laplace_data",)),
    "pwa_laplace_solution": AuditCoverage(("pwa_vector_laplace",)),
    "pwa_exponential": AuditCoverage(("pwa_exponential_mcmc",)),
    "pwa_subgradient": AuditCoverage(("pwa_subgradient_printed", "pwa_subgradient_active")),
    "kusner_alg1": AuditCoverage(("bo_lambda_tilde", "bo_v_tilde")),
    "kusner_alg2": AuditCoverage(("bo_lambda_tilde", "bo_f_tilde")),
    "kusner_alg3": AuditCoverage(("bo_f_tilde_l",)),
}
"""Private algorithm name → its audit coverage."""
