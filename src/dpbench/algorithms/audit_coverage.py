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
_LINE_SEARCH = ("dp_blsgd_noisy_btls_laplace", "dp_blsgd_noisy_btls_gaussian", "above_threshold_laplace",
                "above_threshold_gaussian", "gaussian")

AUDIT_COVERAGE: dict[str, AuditCoverage] = {
    "dp_sgd": AuditCoverage(("dp_sgd_step",)),
    "dp_blsgd": AuditCoverage(_LINE_SEARCH, gaps="NoisyBTLS on a Poisson subsample (the targets run it on a full batch)"),
    "dp_blsgd_ac": AuditCoverage(_LINE_SEARCH, gaps="NoisyBTLS on a Poisson subsample (the targets run it on a full batch)"),
    "dp_blgd": AuditCoverage(_LINE_SEARCH),
    "dp_agd": AuditCoverage(("report_noisy_max_dp_agd", "gaussian")),
    "outpert_gd": AuditCoverage(("output_perturbation_gd",)),
    "outpert_rsgd": AuditCoverage(("gaussian",), gaps="its output noise on the permuted-minibatch sensitivity (the "
                                                       "gaussian target audits the mechanism, not this Δ)"),
    "objpert": AuditCoverage(("objective_perturbation",)),
    "privgene": AuditCoverage(("exponential",), gaps="PrivGene's own selection and sensitivity (the target is the generic "
                                                     "exponential mechanism, not fit() on a worst-case pair)"),
    "dp_gd": _KURU,
    "dp_hb": _KURU,
    "dp_nag": _KURU,
    "dp_nag_opt": _KURU,
    "dp_masg": _KURU,
    "dp_masg_opt": _KURU,
    "dp_dda": AuditCoverage(("dda_release",), gaps="the default noise=rdp calibration (the target uses Theorem 1's σ)"),
    "dp_dda_all_nodes": AuditCoverage(("dda_release",), gaps="the default noise=rdp calibration (the target uses Theorem 1's σ)"),
    "pwa_laplace_data": AuditCoverage((), gaps="the vector Laplace noise on the offsets b (no target yet)"),
    "pwa_laplace_solution": AuditCoverage(("pwa_vector_laplace",)),
    "pwa_exponential": AuditCoverage(("pwa_exponential_mcmc",)),
    "pwa_subgradient": AuditCoverage(("exponential",), gaps="the subgradient index selection as the algorithm draws it "
                                                            "(the target is the generic exponential mechanism)"),
    "kusner_alg1": AuditCoverage(("bo_lambda_tilde", "bo_v_tilde")),
    "kusner_alg2": AuditCoverage(("bo_lambda_tilde", "laplace"), gaps="the sensitivity of Algorithm 2's value release (the "
                                                                   "laplace target audits the mechanism, not this Δ)"),
    "kusner_alg3": AuditCoverage(("laplace",), gaps="the sensitivity of Algorithm 3's value release f̃_L (the laplace "
                                                   "target audits the mechanism, not this Δ)"),
}
"""Private algorithm name → its audit coverage."""
