"""The registry of audit targets and positive controls, and a run over a selection of them.

False alarms: each real target is tested at confidence 1 − 1%/|registry| (Bonferroni), so the chance
that a run over the whole registry flags any correct mechanism is ≤ 1%. Controls are tested at the
same level (a stricter one than they need) and must all be caught.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

import pandas as pd

from dpbench.audit import algorithm_targets as alg
from dpbench.audit import amp_targets as amp
from dpbench.audit import controls as ctl
from dpbench.audit import fit_targets as fit
from dpbench.audit import secure_targets as sec
from dpbench.audit import targets as prim
from dpbench.audit import tuning_target as tun
from dpbench.audit.core import (
    DEFAULT_N,
    FAMILY_ALPHA,
    AuditResult,
    Target,
    audit,
    bonferroni_confidence,
)
from dpbench.errors import ConfigError
from dpbench.plugins import AUDIT_GROUP, load_entry_point, plugin_entry_points, source_of

__all__ = ["CONTROLS", "TARGETS", "SuiteRow", "build", "confidence", "run_suite", "to_frame"]

TARGETS: dict[str, Callable[[], Target]] = {
    "laplace": prim.laplace_target,
    "training_count": prim.training_count_target,
    "gaussian": prim.gaussian_target,
    "pwa_vector_laplace": prim.pwa_vector_laplace_target,
    "pwa_laplace_data": fit.pwa_laplace_data_target,
    "exponential": prim.exponential_target,
    "pwa_exponential_mcmc": prim.pwa_exponential_mcmc_target,
    "pwa_subgradient_printed": partial(fit.pwa_subgradient_target, "printed"),
    "pwa_subgradient_active": partial(fit.pwa_subgradient_target, "active"),
    "above_threshold_laplace": partial(prim.above_threshold_target, "laplace"),
    "above_threshold_gaussian": partial(prim.above_threshold_target, "gaussian"),
    "report_noisy_max": partial(prim.report_noisy_max_target, monotonic=False),
    "report_noisy_max_dp_agd": partial(prim.report_noisy_max_target, monotonic=True),
    "dp_sgd_step": alg.dp_sgd_step_target,
    "dp_blsgd_noisy_btls_laplace": partial(alg.dp_blsgd_line_search_target, "laplace"),
    "dp_blsgd_noisy_btls_gaussian": partial(alg.dp_blsgd_line_search_target, "gaussian"),
    "dp_blsgd_poisson_btls_laplace": partial(alg.dp_blsgd_poisson_line_search_target, "laplace"),
    "dp_blsgd_poisson_btls_gaussian": partial(alg.dp_blsgd_poisson_line_search_target, "gaussian", sampling_rate=0.5),
    "dp_nag_step": alg.dp_nag_step_target,
    "dda_release": alg.dda_release_target,
    "dda_rdp_release": fit.dda_rdp_release_target,
    "output_perturbation_gd": alg.output_perturbation_target,
    "outpert_rsgd": fit.outpert_rsgd_target,
    "objective_perturbation": alg.objective_perturbation_target,
    "amp_objective": amp.amp_objective_target,
    "tail_bound_gaussian": amp.tail_bound_gaussian_target,
    "privgene": fit.privgene_target,
    "bo_v_tilde": alg.bo_value_target,
    "bo_lambda_tilde": alg.bo_lambda_target,
    "bo_f_tilde": alg.bo_alg2_value_target,
    "bo_f_tilde_l": alg.bo_alg3_value_target,
    "tuning_repeat_and_select": tun.repeat_and_select_target,
    "secure_laplace": sec.secure_laplace_target,
    "secure_gaussian": sec.secure_gaussian_target,
    "secure_report_noisy_max": sec.secure_report_noisy_max_target,
    "secure_exponential": sec.secure_exponential_target,
    "secure_above_threshold_laplace": partial(prim.above_threshold_target, "laplace", sampler="secure"),
    "secure_above_threshold_gaussian": partial(prim.above_threshold_target, "gaussian", sampler="secure"),
}
"""Real mechanisms: each must NOT be a violation."""

CONTROLS: dict[str, Callable[[], Target]] = {
    "control_laplace_halved_noise": ctl.laplace_halved_noise,
    "control_gaussian_step_unclipped": ctl.gaussian_step_unclipped,
    "control_svt_lyu_alg5": ctl.svt_lyu_alg5,
    "control_svt_lyu_alg6": ctl.svt_lyu_alg6,
    "control_laplace_l2_calibrated": ctl.laplace_l2_calibrated,
    "control_laplace_noise_reused": ctl.laplace_noise_reused,
    "control_numpy_laplace_float_hole": ctl.numpy_laplace_float_hole,
    "control_tuning_score_unnoised": tun.repeat_and_select_unnoised_score,
    "control_privgene_wide_mutation": ctl.privgene_wide_mutation,
    "control_pwa_laplace_data_b_max_understated": ctl.pwa_laplace_data_b_max_understated,
    "control_dda_sample_not_drawn": ctl.dda_sample_not_drawn,
    "control_dda_paper_sigma": ctl.dda_paper_sigma,
    "control_dp_agd_authors_noisy_min": ctl.dp_agd_authors_noisy_min,
    "control_kuru_authors_laprnd": ctl.kuru_authors_laprnd,
    "control_dp_sgd_authors_fixed_batch": ctl.dp_sgd_authors_fixed_batch,
    "control_publish_batch_size": ctl.publish_batch_size,
    "control_publish_trials": ctl.publish_trials,
    "control_publish_realised_n": ctl.publish_realised_n,
    "control_amp_one_byte_seed": amp.amp_one_byte_seed,
}
"""Deliberately broken mechanisms: each MUST be a violation."""


def _plugin_targets() -> dict[str, Callable[[], Target]]:
    """The targets and controls of installed plugins (``dpbench.audit_targets`` entry points, :mod:`dpbench.plugins`):
    name → the function that builds it; a name taken by a built-in target is refused in one line."""
    found = {}
    for entry_point in plugin_entry_points(AUDIT_GROUP):
        if entry_point.name in TARGETS or entry_point.name in CONTROLS:
            raise ConfigError(f"plugin {source_of(entry_point)}: audit target {entry_point.name!r} is taken")
        found[entry_point.name] = load_entry_point(entry_point)
    return found


for _name, _build in _plugin_targets().items():
    (CONTROLS if _name.startswith("control_") else TARGETS)[_name] = _build


def confidence() -> float:
    """The per-target confidence: Bonferroni over the whole registry of real targets."""
    return bonferroni_confidence(len(TARGETS), FAMILY_ALPHA)


def build(name: str) -> Target:
    """The target or control called ``name``."""
    if name in TARGETS:
        return TARGETS[name]()
    if name in CONTROLS:
        return CONTROLS[name]()
    raise KeyError(name)


@dataclass(frozen=True)
class SuiteRow:
    """An audit result with its role: a control passes when caught, a target when not a violation."""

    result: AuditResult
    control: bool

    @property
    def status(self) -> str:
        if self.control:
            return "caught" if self.result.violation else "MISSED"
        return self.result.verdict

    @property
    def failed(self) -> bool:
        return self.result.violation != self.control


def run_suite(
    names: Iterable[str], *, n: int = DEFAULT_N, seed: int = 0, progress: Callable[[SuiteRow], None] | None = None
) -> list[SuiteRow]:
    """Audit ``names`` (targets or controls) in order at the registry's Bonferroni confidence."""
    rows = []
    level = confidence()
    for name in names:
        started = time.perf_counter()
        target = build(name)
        built = time.perf_counter() - started
        result = audit(target, n, seed, confidence=level)
        row = SuiteRow(dataclasses.replace(result, seconds=result.seconds + built), control=name in CONTROLS)
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows


def to_frame(rows: list[SuiteRow]) -> pd.DataFrame:
    """One row per audit, with the table's columns first."""
    return pd.DataFrame(
        [
            {
                "mechanism": r.result.name,
                "eps_claimed": r.result.eps_claimed,
                "delta": r.result.delta,
                "eps_lower_bound": r.result.eps_lower_bound,
                "n": r.result.n,
                "event": r.result.event,
                "verdict": r.status,
                "control": r.control,
                "confidence": r.result.confidence,
                "n_calibration": r.result.n_calibration,
                "hits_favoured": r.result.hits[0],
                "hits_other": r.result.hits[1],
                "seconds": r.result.seconds,
            }
            for r in rows
        ]
    )
