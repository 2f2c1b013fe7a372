"""The typed, validated run configuration.

Hydra composes ``conf/`` into a DictConfig; :meth:`RunConfig.from_dictconfig` turns it into
frozen dataclasses and rejects every bad value before any data is read, with a
:class:`~dpbench.errors.ConfigError` that names the key and the value (ε must be finite and
> 0, δ in (0, 1), reps ≥ 1, folds ≥ 1, known dataset/algorithm/model names, compatible
model/algorithm pairs, valid hyper-parameters).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from dpbench.conf_files import config_dir, default_cache_dir, group_choices
from dpbench.errors import ConfigError
from dpbench.jobs import BO_LOSS, MODEL_KINDS, PWA_LOSS

CONVERSIONS = ("tight", "prop1")
DEFAULT_COUNT_SHARE = 0.05  # privacy.count_share: ε_n = 0.05·ε pays for ñ under add/remove (dpbench.privacy.counts)
MIN_EPS = 1e-6  # privacy.eps = 1e-300 ended in a ZeroDivisionError
MAX_EPS = 1e4  # privacy.eps = 1e300 ended in an OverflowError; 1e4 is far beyond any meaningful guarantee
MAX_SEED = 2**63 - 1  # seeds are stored as int64 in the results
TRACE_MAX_SHARE = 0.05  # trace records ≥ n/0.05 rows of work apart: tracing ≤ 10 % of a fit (docs/performance.md)


def apply_variant(cfg: DictConfig) -> DictConfig:
    """Apply ``variants[<variant>]`` (dotted key → value) to a composed config.

    Hydra's sweeper takes cartesian products; an experiment preset that varies one
    hyper-parameter at a time (chen_lee Fig. 1) lists its points under ``variants`` and sweeps
    ``variant``. Returns a copy; without a variant the config is returned unchanged.
    """
    name = cfg.get("variant")
    if name is None:
        return cfg
    variants = cfg.get("variants") or {}
    if name not in variants:
        raise ConfigError(f"unknown variant {name!r}; valid choices: {', '.join(sorted(variants)) or '(none defined)'}")
    updated = cfg.copy()
    with open_dict(updated):
        for key, value in variants[name].items():
            OmegaConf.update(updated, key, value, merge=True)
    return updated


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
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise ConfigError(f"privacy.eps must be finite and > 0, got {self.eps}")
        if not MIN_EPS <= self.eps <= MAX_EPS:
            raise ConfigError(
                f"privacy.eps must be in [{MIN_EPS:g}, {MAX_EPS:g}] (outside it the accountants' arithmetic under- or "
                f"overflows), got {self.eps:g}"
            )
        if not (0.0 < self.delta < 1.0):
            raise ConfigError(f"privacy.delta must be in (0, 1), got {self.delta}")
        if self.conversion not in CONVERSIONS:
            raise ConfigError(f"privacy.conversion must be one of {', '.join(CONVERSIONS)}, got {self.conversion!r}")
        from dpbench.privacy.samplers import SAMPLERS

        if self.sampler not in SAMPLERS:
            raise ConfigError(f"privacy.sampler must be one of {', '.join(SAMPLERS)}, got {self.sampler!r}")
        from dpbench.privacy.neighbouring import CHOICES

        if self.neighbouring not in CHOICES:
            raise ConfigError(f"privacy.neighbouring must be one of {', '.join(CHOICES)}, got {self.neighbouring!r}")
        from dpbench.privacy.noise_key import NOISE_KEYS

        if self.noise_key not in NOISE_KEYS:
            raise ConfigError(f"privacy.noise_key must be one of {', '.join(NOISE_KEYS)}, got {self.noise_key!r}")
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
        from dpbench.bo.targets import TARGETS

        if self.target not in TARGETS:
            raise ConfigError(f"bo.target must be one of {', '.join(TARGETS)}, got {self.target!r}")
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


TUNING_MODES = ("fixed", "private", "oracle")


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
    """Everything one dpbench job needs, validated."""

    dataset: str
    dataset_options: dict[str, Any]
    algorithm: str
    algorithm_params: dict[str, Any]
    model: ModelConfig
    privacy: PrivacyConfig
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
        _check_settings(vars(self))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dictconfig(cls, cfg: DictConfig) -> RunConfig:
        """Validate a composed Hydra config (the ``hydra`` node is ignored; a variant is applied first).
        The settings outside the dataset, model and algorithm groups are checked first, so that a bad
        one is refused before the registries of datasets and algorithms load (numpy, scipy, scikit-learn)."""
        cfg = apply_variant(cfg)
        _check_known_keys(cfg)
        settings = _settings(cfg)
        _check_settings(settings)
        return cls._with_groups(cfg, settings)

    @classmethod
    def _with_groups(cls, cfg: DictConfig, settings: dict[str, Any]) -> RunConfig:
        """:meth:`from_dictconfig` once ``settings`` are valid: the dataset, model and algorithm groups."""
        from dpbench.algorithms.registry import (
            ALGORITHMS,
            check_compatible,
            make_algorithm,
        )
        from dpbench.data import DATASET_NAMES
        from dpbench.pwa.dataset import PWA_DATASETS, load_pwa_problem

        dataset = _section(cfg, "dataset")
        algorithm = _section(cfg, "algorithm")
        model = _section(cfg, "model")
        dataset_name = _name(dataset, "dataset", DATASET_NAMES + PWA_DATASETS)
        algorithm_name = _name(algorithm, "algorithm", ALGORITHMS)
        model_name = _name(model, "model", group_choices("model"))
        _check_problem_kind(dataset_name, model_name, model.get("loss"), algorithm_name)
        try:
            model_config = _model_config(model, model_name, algorithm_name)
        except _ModelMismatch as exc:
            raise ConfigError(
                f"{exc}; or keep algorithm={algorithm_name} with {_models_phrase(algorithm_name)}"
            ) from None

        run = cls(
            dataset=dataset_name,
            dataset_options={k: v for k, v in dataset.items() if k != "name"},
            algorithm=algorithm_name,
            algorithm_params={k: v for k, v in algorithm.items() if k not in ("name", "tuning_grid")},
            model=model_config,
            bo=_bo_config(cfg) if model.get("loss") == BO_LOSS else None,
            **settings,
        )
        algorithm_instance = make_algorithm(run.algorithm, run.algorithm_params)  # validates the hyper-parameters
        if run.bo is not None and run.bo.target not in algorithm_instance.targets:
            raise ConfigError(
                f"algorithm {run.algorithm} cannot tune bo.target={run.bo.target}; it supports "
                f"bo.target={', '.join(algorithm_instance.targets)}"
            )
        try:
            check_compatible(run.algorithm, run.model.loss)
        except ConfigError as exc:  # name the models that work
            raise ConfigError(f"{exc}; use {_models_phrase(run.algorithm)} instead of model={model_name}") from None
        method = ALGORITHMS[run.algorithm]
        if run.privacy.sampler == "secure" and method.private and not method.secure_sampler:
            raise ConfigError(
                f"privacy.sampler=secure is not available for algorithm {run.algorithm}: some of its noise is drawn "
                "outside dpbench.privacy.mechanisms; use privacy.sampler=numpy"
            )
        if run.dtype != "float64" and MODEL_KINDS.get(run.model.loss, "glm") != "glm":
            raise ConfigError(
                f"data.dtype={run.dtype} is for linear-model jobs; model={model_name} keeps its data in float64 "
                "(drop data.dtype)"
            )
        _check_relation(run, algorithm_instance)
        _check_tuning(run, algorithm_instance)
        _check_fidelity_rows(run, algorithm_instance)
        if run.dataset in PWA_DATASETS:
            load_pwa_problem(run.dataset, run.dataset_options)  # validates the instance's options
        return run

    # ------------------------------------------------------------------ identity
    def semantic_dict(self) -> dict[str, Any]:
        """The settings that determine the numbers (not where files live or whether to rerun)."""
        d = asdict(self)
        for key in ("data_dir", "allow_download", "force", "resume", "progress"):
            d.pop(key)
        if not self.trace_nonprivate:  # keeps the hashes of jobs from before the key existed
            d.pop("trace_nonprivate")
        # the trace is as before the key existed (or there is none: han_pwa, kusner_bo): same hash
        if self.trace_max_share is None or self.trace_every or MODEL_KINDS.get(self.model.loss, "glm") != "glm":
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
        from dpbench.data.registry import scales_features

        d["tuning"] = self.tuning.semantic()
        if self.tuning.mode == "fixed":  # keeps the hashes of jobs from before the tuning group existed
            d.pop("tuning")
        if not scales_features(self.dataset, self.dataset_options):  # nothing to scale: those hashes stay as they were
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


def _settings(cfg: DictConfig) -> dict[str, Any]:
    """RunConfig's fields outside the dataset, model, algorithm and bo sections, read and typed;
    ``privacy`` and ``tuning`` validate themselves, :func:`_check_settings` the others."""
    privacy = _section(cfg, "privacy")
    return {
        "privacy": PrivacyConfig(
            eps=_number(privacy.get("eps"), "privacy.eps"),
            delta=_number(privacy.get("delta"), "privacy.delta"),
            conversion=str(privacy.get("conversion", "tight")),
            sampler=str(privacy.get("sampler", "numpy")),
            neighbouring=str(privacy.get("neighbouring", "add_remove")),
            noise_key=str(privacy.get("noise_key", "secret")),
            count_share=_number(privacy.get("count_share", DEFAULT_COUNT_SHARE), "privacy.count_share"),
        ),
        "seed": _integer(cfg.get("seed", 0), "seed"),
        "reps": _integer(cfg.get("reps", 1), "reps"),
        "folds": _integer(_select(cfg, "cv.folds", 1), "cv.folds"),
        "test_fraction": _number(_select(cfg, "cv.test_fraction", 0.2), "cv.test_fraction"),
        "data_dir": Path(str(cfg.get("data_dir") or default_cache_dir())).expanduser(),
        "allow_download": _boolean(_select(cfg, "data.allow_download", False), "data.allow_download"),
        "row_norm": _optional_number(_select(cfg, "data.row_norm", None), "data.row_norm"),
        "scaling": str(_select(cfg, "data.scaling", "public")),
        "dtype": str(_select(cfg, "data.dtype", "float64")),
        "force": _boolean(cfg.get("force", False), "force"),
        "resume": str(cfg.get("resume", "strict")),
        "progress": _boolean(cfg.get("progress", True), "progress"),
        "trace_every": _integer(_select(cfg, "trace.every", 0), "trace.every"),
        "trace_nonprivate": _boolean(_select(cfg, "trace.nonprivate", False), "trace.nonprivate"),
        "trace_max_share": _optional_number(_select(cfg, "trace.max_share", TRACE_MAX_SHARE), "trace.max_share"),
        "experiment": cfg.get("experiment_name"),
        "variant": cfg.get("variant"),
        "tuning": _tuning_config(cfg, _section(cfg, "algorithm")),
    }


def _check_settings(settings: Mapping[str, Any]) -> None:
    """The ranges of RunConfig's scalar settings (``settings``: field name → value)."""
    seed, reps, folds, test_fraction, row_norm, scaling, dtype, trace_every, trace_max_share, resume = (
        settings[key]
        for key in (
            "seed",
            "reps",
            "folds",
            "test_fraction",
            "row_norm",
            "scaling",
            "dtype",
            "trace_every",
            "trace_max_share",
            "resume",
        )
    )
    if not 0 <= seed <= MAX_SEED:
        raise ConfigError(f"seed must be in [0, 2^63 − 1], got {seed}")
    if reps < 1:
        raise ConfigError(f"reps must be ≥ 1, got {reps}")
    if folds < 1:
        raise ConfigError(f"cv.folds must be ≥ 1, got {folds}")
    if not 0.0 <= test_fraction < 1.0:
        raise ConfigError(f"cv.test_fraction must be in [0, 1), got {test_fraction}")
    if test_fraction == 0.0 and folds > 1:
        raise ConfigError(f"cv.test_fraction=0 (train on every row) needs cv.folds=1, got cv.folds={folds}")
    if row_norm is not None and not (math.isfinite(row_norm) and row_norm > 0):
        raise ConfigError(f"data.row_norm must be null or finite and > 0, got {row_norm}")
    from dpbench.data.scaling import SCALINGS

    if scaling not in SCALINGS:
        raise ConfigError(f"data.scaling must be one of {', '.join(SCALINGS)}, got {scaling!r}")
    from dpbench.data.dataset import DATA_DTYPES

    if dtype not in DATA_DTYPES:
        raise ConfigError(f"data.dtype must be one of {', '.join(DATA_DTYPES)}, got {dtype!r}")
    if trace_every < 0:
        raise ConfigError(f"trace.every must be ≥ 0 (0 = automatic), got {trace_every}")
    if trace_max_share is not None and not (math.isfinite(trace_max_share) and trace_max_share > 0):
        raise ConfigError(f"trace.max_share must be null or finite and > 0, got {trace_max_share}")
    if resume not in RESUME_MODES:
        raise ConfigError(f"resume must be one of {', '.join(RESUME_MODES)}, got {resume!r}")


RESUME_MODES = ("strict", "keep")
"""What a rerun does with a finished job computed by other code (:mod:`dpbench.code_identity`):
strict = compute it again, keep = keep its results (shown as stale)."""

TOP_LEVEL_KEYS = (
    "dataset",
    "algorithm",
    "model",
    "privacy",
    "tuning",
    "seed",
    "reps",
    "cv",
    "data_dir",
    "data",
    "force",
    "resume",
    "progress",
    "trace",
    "experiment_name",
    "variant",
    "variants",
    "bo",
    "hydra",
)
SECTION_KEYS = {
    "privacy": ("eps", "delta", "conversion", "sampler", "neighbouring", "noise_key", "count_share"),
    "cv": ("folds", "test_fraction"),
    "data": ("allow_download", "row_norm", "scaling", "dtype"),
    "trace": ("every", "nonprivate", "max_share"),
}


def _check_known_keys(cfg: DictConfig) -> None:
    """Refuse a key no part of dpbench reads (e.g. the typo ``+privacy.epss=1``), naming the valid ones:
    a misspelt key would otherwise be ignored and the run would use the default. The config groups
    (dataset, algorithm, model, tuning, bo) check their own keys."""
    unknown = sorted(set(cfg.keys()) - set(TOP_LEVEL_KEYS))
    if unknown:
        raise ConfigError(f"{unknown[0]} is not a dpbench setting; top-level keys: {', '.join(sorted(TOP_LEVEL_KEYS))}")
    sections = {**SECTION_KEYS, "bo": tuple(f.name for f in dataclasses.fields(BOConfig))}
    for section, valid in sections.items():
        node = cfg.get(section)
        if node is not None and not isinstance(node, DictConfig):  # `cv=3` replaced the section by a value
            raise ConfigError(
                f"{section} is a section, not a value: set one of its keys ({', '.join(sorted(valid))}), "
                f"e.g. {section}.{valid[0]}=…, got {section}={node!r}"
            )
        extra = sorted(set(node.keys()) - set(valid)) if isinstance(node, DictConfig) else []
        if extra:
            raise ConfigError(f"{section}.{extra[0]} is not a {section} setting; valid: {', '.join(sorted(valid))}")


def _check_relation(run: RunConfig, algorithm) -> None:
    """Refuse, in one line, a method that cannot meet ``privacy.neighbouring`` (naming what it supports)."""
    from dpbench.privacy.neighbouring import resolve, supported

    if resolve(algorithm, run.privacy.neighbouring)[1] is None:
        choices = " or ".join(f"privacy.neighbouring={r}" for r in (*supported(algorithm), "native"))
        raise ConfigError(
            f"algorithm {run.algorithm} does not support privacy.neighbouring={run.privacy.neighbouring}: "
            f"{algorithm.relation_reason}; use {choices}"
        )


def _tuning_config(cfg: DictConfig, algorithm: dict[str, Any]) -> TuningConfig:
    """The ``tuning`` section (absent: ``fixed``) with the method's ``tuning_grid``; unknown keys are named."""
    section = _section(cfg, "tuning") if cfg.get("tuning") is not None else {}
    valid = {f.name for f in dataclasses.fields(TuningConfig)} - {"grid"}
    unknown = sorted(set(section) - valid)
    if unknown:
        raise ConfigError(f"tuning.{unknown[0]} is not a tuning setting; valid: {', '.join(sorted(valid))}")
    grid = algorithm.get("tuning_grid") or {}
    if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
        raise ConfigError(f"algorithm.tuning_grid must map hyper-parameters to non-empty lists, got {grid!r}")
    values: dict[str, Any] = {"grid": grid}
    if "mode" in section:
        values["mode"] = _str(section, "mode", "tuning")
    for key in valid - {"mode"}:
        if key in section:
            values[key] = _number(section[key], f"tuning.{key}")
    return TuningConfig(**values)


def _check_fidelity_rows(run: RunConfig, algorithm) -> None:
    """Refuse ``data.row_norm`` for a fidelity mode that trains on the rows as its authors' loader
    makes them (:attr:`~dpbench.algorithms.base.FidelityMode.rows_as_loaded`): clipped rows would
    not be theirs."""
    mode = algorithm.fidelity_mode
    if mode is not None and mode.rows_as_loaded and run.row_norm is not None:
        raise ConfigError(
            f"algorithm.fidelity={run.algorithm_params['fidelity']} trains {run.algorithm} on the rows as the authors' code "
            f"loads them, never clipped: set data.row_norm=null (got {run.row_norm:g}; conf/algorithm/{run.algorithm}.yaml sets 1)"
        )


def _check_tuning(run: RunConfig, algorithm) -> None:
    """Refuse tuning the method cannot do, in one line: a grid value it rejects, private tuning of a
    family other than GLM, of a method without a Rényi curve or one meeting the relation by group privacy."""
    from dpbench.algorithms.registry import make_algorithm
    from dpbench.privacy.neighbouring import RELATIONS, resolve
    from dpbench.privacy.trial_budget import TUNABLE_ACCOUNTANTS

    for key, values in run.tuning.grid.items():
        if key not in run.algorithm_params:
            raise ConfigError(f"algorithm.tuning_grid.{key} is not a hyper-parameter of {run.algorithm}")
        for value in values:
            try:
                make_algorithm(run.algorithm, {**run.algorithm_params, key: value})
            except ConfigError as exc:
                raise ConfigError(f"algorithm.tuning_grid.{key}: {exc}") from None
    mode = run.tuning.mode
    if mode == "fixed":
        return
    if algorithm.problem_kind != "glm":
        raise ConfigError(f"tuning={mode} is for the linear-model methods; {run.algorithm} tunes within its own job")
    if mode == "private" and run.tuning.grid and algorithm.private:
        if algorithm.accountant not in TUNABLE_ACCOUNTANTS:
            raise ConfigError(
                f"tuning=private cannot tune {run.algorithm}: its ledger composes {algorithm.accountant} (ε, δ) pairs, "
                "which have no Rényi curve for repeat-and-select; use tuning=fixed or tuning=oracle"
            )
        if resolve(algorithm, run.privacy.neighbouring)[1] != "native":
            native = " or ".join(f"privacy.neighbouring={r}" for r in RELATIONS if resolve(algorithm, r)[1] == "native")
            raise ConfigError(
                f"tuning=private needs {run.algorithm} to meet privacy.neighbouring={run.privacy.neighbouring} natively "
                f"(group privacy has no Rényi curve here); use {native} or tuning=fixed"
            )


_KIND_NEEDS = {
    "glm": "a linear-model dataset and model: e.g. dataset={dataset} with {models}",
    "pwa": "han_pwa's dataset={dataset} {models}",
    "bo": "kusner_bo's {models} on a classification dataset, e.g. dataset={dataset} (bo.target picks the tuned model)",
}


def _check_problem_kind(dataset: str, model: str, loss: Any, algorithm: str) -> None:
    """The dataset, the model and the algorithm must pose the same kind of problem: a GLM on rows,
    han_pwa's piecewise-affine program, or kusner_bo's hyper-parameter tuning (which runs on the
    classification datasets the GLM methods use). The refusal names a dataset and the models that fit."""
    from dpbench.algorithms.registry import algorithm_class
    from dpbench.pwa.dataset import PWA_DATASETS

    kinds = {
        f"dataset={dataset}": {"pwa"} if dataset in PWA_DATASETS else {"glm", "bo"},
        f"model={model}": {MODEL_KINDS.get(loss, "glm")},
        f"algorithm={algorithm}": {algorithm_class(algorithm).problem_kind},
    }
    if set.intersection(*kinds.values()):
        return
    wanted = algorithm_class(algorithm).problem_kind
    mismatched = [key for key, kind in kinds.items() if wanted not in kind]
    needs = _KIND_NEEDS[wanted].format(dataset=_dataset_example(algorithm), models=_models_phrase(algorithm))
    raise ConfigError(
        f"{' and '.join(mismatched)} do{'es' if len(mismatched) == 1 else ''} not fit algorithm={algorithm}, which "
        f"needs {needs}"
    )


# ---------------------------------------------------------------------- what an algorithm selects, what fits it
def _primary_defaults() -> dict[str, str]:
    """The config group options conf/config.yaml's defaults list selects, e.g. {"model": "logreg", ...}."""
    defaults = OmegaConf.load(config_dir() / "config.yaml").get("defaults") or []
    return {str(k): str(v) for entry in defaults if not isinstance(entry, str) for k, v in entry.items()}


def _algorithm_selects(algorithm: str) -> dict[str, str]:
    """The config group options conf/algorithm/<algorithm>.yaml selects with ``override /<group>...``
    in its defaults list (with those of the configs it extends; its own win, as in Hydra), e.g.
    {"model": "bo"}. The command line and experiment presets override them (Hydra registers their
    overrides first)."""
    path = config_dir() / "algorithm" / f"{algorithm}.yaml"
    if not path.is_file():
        return {}
    inherited: dict[str, str] = {}
    own: dict[str, str] = {}
    for entry in OmegaConf.load(path).get("defaults") or []:
        if isinstance(entry, str):
            if entry != "_self_":
                inherited.update(_algorithm_selects(entry))
            continue
        for key, value in entry.items():
            if str(key).startswith("override /"):
                own[str(key).removeprefix("override /").split("@")[0]] = str(value)
    return {**inherited, **own}


def _default_option(algorithm: str, group: str) -> str | None:
    """The option of ``group`` that ``algorithm=<algorithm>`` alone composes with."""
    return _algorithm_selects(algorithm).get(group) or _primary_defaults().get(group)


def _models_for(algorithm: str) -> list[str]:
    """The options of conf/model/ that ``algorithm`` accepts, the one it selects first."""
    from dpbench.algorithms.registry import algorithm_class

    cls = algorithm_class(algorithm)
    fits = []
    for name in group_choices("model"):
        section = OmegaConf.to_container(OmegaConf.load(config_dir() / "model" / f"{name}.yaml"), resolve=True)
        if not isinstance(section, dict) or MODEL_KINDS.get(section.get("loss"), "glm") != cls.problem_kind:
            continue
        section.pop("defaults", None)
        try:
            loss = _model_config(section, name, algorithm).loss
        except ConfigError:
            continue
        if cls.supported_losses is None or loss in cls.supported_losses:
            fits.append(name)
    default = _default_option(algorithm, "model")
    return sorted(fits, key=lambda name: name != default)


def _models_phrase(algorithm: str) -> str:
    """``model=liu_l2_svm (its default) or chen_lee_svm, liu_l1_svm, svm``: what ``algorithm`` takes."""
    models = _models_for(algorithm)
    if not models:
        return "a model it supports"
    first, rest = models[0], models[1:]
    if not rest:
        return f"model={first}"
    default = " (its default)" if first == _default_option(algorithm, "model") else ""
    return f"model={first}{default} or {', '.join(rest)}"


def _dataset_example(algorithm: str) -> str:
    """A dataset ``algorithm`` runs on: the one it selects, else synthetic_pwa (han_pwa) or adult."""
    from dpbench.algorithms.registry import algorithm_class
    from dpbench.pwa.dataset import PWA_DATASETS

    selected = _algorithm_selects(algorithm).get("dataset")
    if selected:
        return selected
    return PWA_DATASETS[0] if algorithm_class(algorithm).problem_kind == "pwa" else "adult"


class _ModelMismatch(ConfigError):
    """A model the algorithm cannot run (from_dictconfig adds the models it can)."""


def _model_config(model: dict[str, Any], name: str, algorithm_name: str) -> ModelConfig:
    """The model section as a ModelConfig. An optional ``smooth_loss`` is used instead of ``loss``
    for methods that cannot optimise ``loss`` (chen_lee Sec 5.3 runs the hinge-loss SVM, and the
    Huberized hinge for the baselines that need smoothness); loss parameters not taken by the
    chosen loss are dropped, ones no loss takes are an error."""
    from dpbench.algorithms.registry import ALGORITHMS, algorithm_class
    from dpbench.problems.losses import LOSSES

    loss = _str(model, "loss", "model")
    if loss == BO_LOSS:  # the tuned model is described by the bo section
        extra = sorted(set(model) - {"name", "loss"})
        if extra:
            raise ConfigError(
                f"model {name} takes no parameters (the tuned model is bo.target), got {', '.join(extra)}"
            )
        return ModelConfig(name=name, loss=loss, reg=0.0)
    if loss == PWA_LOSS:  # han_pwa's f has no parameters and no regulariser
        extra = sorted(set(model) - {"name", "loss", "reg"})
        if extra or model.get("reg", 0.0) != 0.0:
            raise ConfigError(f"model {name} (the piecewise-affine f) takes no parameters and reg = 0, got {model}")
        return ModelConfig(name=name, loss=loss, reg=0.0)
    supported = algorithm_class(algorithm_name).supported_losses
    if model.get("smooth_loss") is not None and supported is not None and loss not in supported:
        loss = _str(model, "smooth_loss", "model")
    if loss not in LOSSES:
        raise ConfigError(f"model.loss must be one of {', '.join(sorted(LOSSES))}, got {loss!r}")
    params = {k: v for k, v in model.items() if k not in ("name", "loss", "reg", "l1_reg", "smooth_loss")}
    known = {f.name for cls in LOSSES.values() for f in dataclasses.fields(cls)}
    for key in params:
        if key not in known:
            raise ConfigError(f"model.{key} is not a parameter of any loss; valid: {', '.join(sorted(known))}")
    taken = {f.name for f in dataclasses.fields(LOSSES[loss])}
    l1_reg = _number(model.get("l1_reg", 0.0), "model.l1_reg")
    if l1_reg and not algorithm_class(algorithm_name).supports_l1:
        able = sorted(n for n, cls in ALGORITHMS.items() if cls.supports_l1)
        raise _ModelMismatch(
            f"model {name} has an ℓ1 regulariser (model.l1_reg = {l1_reg:g}) that algorithm {algorithm_name} does not "
            f"handle; algorithms with an ℓ1 (proximal) step: {', '.join(able)}"
        )
    reg = _number(model.get("reg", 0.0), "model.reg")
    algorithm_class(algorithm_name).check_model(reg, l1_reg)
    return ModelConfig(
        name=name,
        loss=loss,
        reg=reg,
        loss_params={k: _number(v, f"model.{k}") for k, v in params.items() if k in taken},
        l1_reg=l1_reg,
    )


def _bo_config(cfg: DictConfig) -> BOConfig:
    """The ``bo`` section as a BOConfig (absent keys take BOConfig's defaults); unknown keys are named."""
    section = _section(cfg, "bo")
    valid = {f.name for f in dataclasses.fields(BOConfig)}
    unknown = sorted(set(section) - valid)
    if unknown:
        raise ConfigError(f"bo.{unknown[0]} is not a bo setting; valid: {', '.join(sorted(valid))}")
    values: dict[str, Any] = {"target": _str(section, "target", "bo")}
    options = section.get("target_options") or {}
    if not isinstance(options, dict):
        raise ConfigError(f"bo.target_options must be a mapping, got {options!r}")
    values["target_options"] = options
    for key in valid - {"target", "target_options"}:
        if key in section:
            nullable = key == "pool_size" and section[key] is None
            values[key] = None if nullable else _integer(section[key], f"bo.{key}")
    return BOConfig(**values)


# ---------------------------------------------------------------------- field readers
def _section(cfg: DictConfig, key: str) -> dict[str, Any]:
    node = cfg.get(key)
    if node is None:
        raise ConfigError(f"the config has no {key!r} section; choose one with {key}=<name>")
    container = OmegaConf.to_container(node, resolve=True)
    if not isinstance(container, dict):
        raise ConfigError(f"{key} must be a config group, got {container!r}")
    return container


def _name(section: dict[str, Any], group: str, valid) -> str:
    name = section.get("name")
    if name not in valid:
        raise ConfigError(f"unknown {group} {name!r}; valid choices: {', '.join(sorted(valid))}")
    return name


def _select(cfg: DictConfig, dotted: str, default: Any) -> Any:
    return OmegaConf.select(cfg, dotted, default=default)


def _str(section: dict[str, Any], key: str, prefix: str) -> str:
    value = section.get(key)
    if not isinstance(value, str):
        raise ConfigError(f"{prefix}.{key} must be a string, got {value!r}")
    return value


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or value is None:
        raise ConfigError(f"{key} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a number, got {value!r}") from None
    if math.isnan(number):
        raise ConfigError(f"{key} must be a number, got NaN")
    return number


def _optional_number(value: Any, key: str) -> float | None:
    return None if value is None else _number(value, key)


def _integer(value: Any, key: str) -> int:
    number = _number(value, key)
    if not number.is_integer():
        raise ConfigError(f"{key} must be an integer, got {value!r}")
    return int(number)


def _boolean(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {value!r}")
    return value
