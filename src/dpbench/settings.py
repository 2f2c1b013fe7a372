"""The run's settings as frozen value types, and the hash that says which job they describe.

A :class:`RunConfig` is what one dpbench job computes from: the dataset, the method and its
hyper-parameters, the model, the privacy budget and the run's protocol. Its value types check the
ranges of their numbers (ε finite and in [10⁻⁶, 10⁴], δ in (0, 1), reps ≥ 1, …) and raise a
:class:`~dpbench.errors.ConfigError` naming the key and the value; which names are valid (datasets,
algorithms, samplers, relations, bo targets) is asked of the registries by :mod:`dpbench.resolve`,
the only place a RunConfig is built. This module imports no registry: every layer may read a
RunConfig (docs/architecture.md).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dpbench.conf_files import default_cache_dir
from dpbench.errors import ConfigError

CONVERSIONS = ("tight", "prop1")
DEFAULT_COUNT_SHARE = 0.05  # privacy.count_share: ε_n = 0.05·ε pays for ñ under add/remove (dpbench.privacy.counts)
MIN_EPS = 1e-6  # privacy.eps = 1e-300 ended in a ZeroDivisionError
MAX_EPS = 1e4  # privacy.eps = 1e300 ended in an OverflowError; 1e4 is far beyond any meaningful guarantee
MAX_SEED = 2**63 - 1  # seeds are stored as int64 in the results
TRACE_MAX_SHARE = 0.05  # trace records ≥ n/0.05 rows of work apart: tracing ≤ 10 % of a fit (docs/performance.md)
TUNING_MODES = ("fixed", "private", "oracle")
RESUME_MODES = ("strict", "keep")
"""What a rerun does with a finished job computed by other code (:mod:`dpbench.code_identity`):
strict = compute it again, keep = keep its results (shown as stale)."""


def check_eps(eps: float) -> None:
    """Refuse a target ε outside what the accountants can price (also asked of a plain command-line
    ``privacy.eps=…`` before Hydra loads, :func:`dpbench.cli.check_plain_values`)."""
    if not (math.isfinite(eps) and eps > 0):
        raise ConfigError(f"privacy.eps must be finite and > 0, got {eps}")
    if not MIN_EPS <= eps <= MAX_EPS:
        raise ConfigError(
            f"privacy.eps must be in [{MIN_EPS:g}, {MAX_EPS:g}] (outside it the accountants' arithmetic under- or "
            f"overflows), got {eps:g}"
        )


def check_delta(delta: float) -> None:
    """Refuse a target δ outside (0, 1)."""
    if not (0.0 < delta < 1.0):
        raise ConfigError(f"privacy.delta must be in (0, 1), got {delta}")


@dataclass(frozen=True)
class PrivacyConfig:
    """Target (ε, δ), the RDP → (ε, δ) conversion (``tight`` default, or chen_lee ``prop1``) and the
    noise sampler (``numpy`` floating point, or ``secure`` discrete noise on a grid,
    :mod:`dpbench.privacy.samplers`), the neighbouring relation, and where the noise's randomness comes
    from (``secret``: the sweep's secret key, or ``seed``: the public seed, replayable;
    :mod:`dpbench.privacy.noise_key`), and the share of ε that pays for a noisy training-set size
    under add/remove (``count_share``; 0 uses the realised size, outside the guarantee:
    :mod:`dpbench.privacy.counts`)."""

    eps: float
    delta: float
    conversion: str = "tight"
    sampler: str = "numpy"
    neighbouring: str = "add_remove"
    noise_key: str = "secret"
    count_share: float = DEFAULT_COUNT_SHARE

    def __post_init__(self) -> None:
        check_eps(self.eps)
        check_delta(self.delta)
        if self.conversion not in CONVERSIONS:
            raise ConfigError(f"privacy.conversion must be one of {', '.join(CONVERSIONS)}, got {self.conversion!r}")
        if not (math.isfinite(self.count_share) and 0.0 <= self.count_share < 1.0):
            raise ConfigError(f"privacy.count_share must be in [0, 1), got {self.count_share}")
        if self.eps * (1.0 - self.count_share) < MIN_EPS:
            raise ConfigError(
                f"privacy.eps · (1 − privacy.count_share) = {self.eps * (1.0 - self.count_share):g} is below {MIN_EPS:g}: "
                f"under add/remove the method would run on less than the smallest ε the accountants support"
            )


@dataclass(frozen=True)
class ModelConfig:
    """A linear model: its loss, loss parameters, L2 coefficient μ and ℓ1 coefficient φ (liu_dda's ℓ1-SVM)."""

    name: str
    loss: str
    reg: float
    loss_params: dict[str, float] = field(default_factory=dict)
    l1_reg: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.reg) and self.reg >= 0):
            raise ConfigError(f"model.reg must be finite and ≥ 0, got {self.reg}")
        if not (math.isfinite(self.l1_reg) and self.l1_reg >= 0):
            raise ConfigError(f"model.l1_reg must be finite and ≥ 0, got {self.l1_reg}")


@dataclass(frozen=True)
class BOConfig:
    """What a kusner_bo job tunes and on which rows (the ``bo`` section; see conf/config.yaml).

    The dataset's rows (train and test files together) are split once, by ``split_seed``, into a
    training set of ``train_size`` (the models), a test set of ``test_size`` (the reported test
    accuracy of the released hyper-parameters) and a pool of ``pool_size`` (all the rest when
    null) from which each repetition draws its sensitive validation set V of ``validation_size``.
    Λ is the first ``n_candidates`` points of a Sobol sequence scrambled by ``candidate_seed``.
    """

    target: str
    target_options: dict[str, Any] = field(default_factory=dict)
    n_candidates: int = 100
    candidate_seed: int = 0
    train_size: int = 2000
    test_size: int = 5000
    pool_size: int | None = 20000
    validation_size: int = 1000
    split_seed: int = 0

    def __post_init__(self) -> None:
        for key in ("n_candidates", "train_size", "validation_size"):
            if getattr(self, key) < 1:
                raise ConfigError(f"bo.{key} must be ≥ 1, got {getattr(self, key)}")
        for key in ("test_size", "candidate_seed", "split_seed"):
            if getattr(self, key) < 0:
                raise ConfigError(f"bo.{key} must be ≥ 0, got {getattr(self, key)}")
        if self.pool_size is not None and self.pool_size <= self.validation_size:
            raise ConfigError(
                f"bo.pool_size ({self.pool_size}) must exceed bo.validation_size ({self.validation_size}): "
                "validation sets and their add-one neighbours are drawn from the pool"
            )


@dataclass(frozen=True)
class TuningConfig:
    """How the method's hyper-parameters are chosen (the ``tuning`` group, :mod:`dpbench.tuning`):
    ``fixed`` (the YAML's values), ``private`` (Papernot & Steinke's repeat-and-select over ``grid``:
    K trials with E[K] = ``trials_mean`` and law shape ``trials_shape`` — 1 geometric, 0 logarithmic,
    inf Poisson — each trained on the training fold minus a ``validation_fraction`` held out for its
    noisy score, which gets ``score_share`` of the trial's budget) or ``oracle`` (every grid point with
    the whole budget, the best on the test fold: not private). ``grid`` is the method's ``tuning_grid``."""

    mode: str = "fixed"
    trials_mean: float = 4.0
    trials_shape: float = 1.0
    validation_fraction: float = 0.2
    score_share: float = 0.2
    grid: dict[str, list[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in TUNING_MODES:
            raise ConfigError(f"tuning.mode must be one of {', '.join(TUNING_MODES)}, got {self.mode!r}")
        if not (math.isfinite(self.trials_mean) and self.trials_mean >= 1.0):
            raise ConfigError(f"tuning.trials_mean must be finite and ≥ 1, got {self.trials_mean}")
        if not self.trials_shape >= 0.0:
            raise ConfigError(
                f"tuning.trials_shape must be ≥ 0 (1 geometric, 0 logarithmic, inf Poisson), got {self.trials_shape}"
            )
        if not 0.0 < self.validation_fraction < 1.0:
            raise ConfigError(f"tuning.validation_fraction must be in (0, 1), got {self.validation_fraction}")
        if not 0.0 < self.score_share < 1.0:
            raise ConfigError(f"tuning.score_share must be in (0, 1), got {self.score_share}")

    def semantic(self) -> dict[str, Any]:
        """What determines the numbers: nothing but the mode under ``fixed``; the grid always."""
        if self.mode == "fixed":
            return {"mode": "fixed"}
        if self.mode == "oracle":
            return {"mode": "oracle", "grid": self.grid}
        return asdict(self)


@dataclass(frozen=True)
class RunConfig:
    """Everything one dpbench job needs, validated (built by :func:`dpbench.resolve.run_config`).

    ``kind`` is the problem kind the dataset, model and method agree on (``glm``, ``pwa`` or ``bo``,
    :mod:`dpbench.jobs`), ``scales_features`` whether the dataset has numeric attributes that
    ``scaling`` changes; neither is a setting of its own, so neither enters :attr:`config_hash`."""

    dataset: str
    dataset_options: dict[str, Any]
    algorithm: str
    algorithm_params: dict[str, Any]
    model: ModelConfig
    privacy: PrivacyConfig
    kind: str
    scales_features: bool
    seed: int = 0
    reps: int = 1
    folds: int = 1
    test_fraction: float = 0.2
    data_dir: Path = field(default_factory=default_cache_dir)
    allow_download: bool = False
    row_norm: float | None = None
    scaling: str = "public"
    dtype: str = "float64"
    force: bool = False
    resume: str = "strict"
    progress: bool = True
    trace_every: int = 0
    trace_nonprivate: bool = False
    trace_max_share: float | None = TRACE_MAX_SHARE
    experiment: str | None = None
    variant: str | None = None
    bo: BOConfig | None = None
    tuning: TuningConfig = field(default_factory=TuningConfig)

    def __post_init__(self) -> None:
        check_settings(vars(self))

    def semantic_dict(self) -> dict[str, Any]:
        """The settings that determine the numbers (not where files live or whether to rerun)."""
        d = asdict(self)
        for key in ("data_dir", "allow_download", "force", "resume", "progress", "kind", "scales_features"):
            d.pop(key)
        if not self.trace_nonprivate:  # keeps the hashes of jobs from before the key existed
            d.pop("trace_nonprivate")
        # the trace is as before the key existed (or there is none: han_pwa, kusner_bo): same hash
        if self.trace_max_share is None or self.trace_every or self.kind != "glm":
            d.pop("trace_max_share")
        if d["bo"] is None:  # keeps the hashes of jobs from before the bo section existed
            d.pop("bo")
        if self.privacy.sampler == "numpy":  # likewise for the default sampler
            d["privacy"].pop("sampler")
        if self.privacy.neighbouring == "native":  # each paper's own relation: what every job did before the key
            d["privacy"].pop("neighbouring")
        if self.privacy.noise_key == "secret":  # the default: keeps the hashes of the presets' jobs
            d["privacy"].pop("noise_key")
        if self.privacy.count_share == DEFAULT_COUNT_SHARE:  # likewise
            d["privacy"].pop("count_share")
        d["tuning"] = self.tuning.semantic()
        if self.tuning.mode == "fixed":  # keeps the hashes of jobs from before the tuning group existed
            d.pop("tuning")
        if not self.scales_features:  # nothing to scale: those hashes stay as they were
            d.pop("scaling")
        if self.dtype == "float64":  # keeps the hashes of jobs from before data.dtype existed
            d.pop("dtype")
        if d["algorithm_params"].get("fidelity") == "correct":  # likewise for the default algorithm.fidelity
            d["algorithm_params"].pop("fidelity")
        return d

    @property
    def config_hash(self) -> str:
        """sha256 of :meth:`semantic_dict`: equal hashes ⇒ the same job."""
        blob = json.dumps(self.semantic_dict(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def check_seed(seed: int) -> None:
    """Refuse a seed outside [0, 2^63 − 1] (stored as int64)."""
    if not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be in [0, 2^63 − 1], got {seed}")


def check_reps(reps: int) -> None:
    if reps < 1:
        raise ConfigError(f"reps must be ≥ 1, got {reps}")


def check_folds(folds: int) -> None:
    if folds < 1:
        raise ConfigError(f"cv.folds must be ≥ 1, got {folds}")


def check_settings(settings: Mapping[str, Any]) -> None:
    """The ranges of RunConfig's scalar settings (``settings``: field name → value); which names are
    valid (``scaling``, ``dtype``) the resolver asks of the data layer."""
    seed, reps, folds, test_fraction, row_norm, trace_every, trace_max_share, resume = (
        settings[key]
        for key in (
            "seed",
            "reps",
            "folds",
            "test_fraction",
            "row_norm",
            "trace_every",
            "trace_max_share",
            "resume",
        )
    )
    check_seed(seed)
    check_reps(reps)
    check_folds(folds)
    if not 0.0 <= test_fraction < 1.0:
        raise ConfigError(f"cv.test_fraction must be in [0, 1), got {test_fraction}")
    if test_fraction == 0.0 and folds > 1:
        raise ConfigError(f"cv.test_fraction=0 (train on every row) needs cv.folds=1, got cv.folds={folds}")
    if row_norm is not None and not (math.isfinite(row_norm) and row_norm > 0):
        raise ConfigError(f"data.row_norm must be null or finite and > 0, got {row_norm}")
    if trace_every < 0:
        raise ConfigError(f"trace.every must be ≥ 0 (0 = automatic), got {trace_every}")
    if trace_max_share is not None and not (math.isfinite(trace_max_share) and trace_max_share > 0):
        raise ConfigError(f"trace.max_share must be null or finite and > 0, got {trace_max_share}")
    if resume not in RESUME_MODES:
        raise ConfigError(f"resume must be one of {', '.join(RESUME_MODES)}, got {resume!r}")
