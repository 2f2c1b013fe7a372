"""From a composed Hydra config to a validated :class:`~dpbench.settings.RunConfig`.

Hydra composes ``conf/`` into a DictConfig; :func:`run_plan` applies the variant, refuses every
bad value before any data is read — with a :class:`~dpbench.errors.ConfigError` that names the key and
the value (unknown keys, ε, δ, reps and folds out of range, unknown dataset, algorithm or model names,
a dataset, model and method that pose different kinds of problem, a method that cannot meet the
neighbouring relation, tune the grid or use the sampler asked for, invalid hyper-parameters) — and
builds the frozen settings (:class:`~dpbench.settings.RunConfig`) and, from them, the
:class:`~dpbench.jobs.plan.RunPlan` every later layer reads: the method is built once, here. The settings outside the dataset, model and
algorithm groups are checked first, so that a bad one is refused before the registries of datasets and
algorithms load (numpy, scipy, scikit-learn).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import DictConfig, OmegaConf, open_dict

from dpbench.conf_files import config_dir, default_cache_dir, group_choices, option_file
from dpbench.config_values import boolean as _boolean
from dpbench.config_values import integer as _integer
from dpbench.config_values import number as _number
from dpbench.config_values import optional_number as _optional_number
from dpbench.config_values import string as _str
from dpbench.errors import ConfigError
from dpbench.jobs import KINDS, kind_datasets, kind_of_family, load, model_family
from dpbench.settings import (
    DEFAULT_COUNT_SHARE,
    TRACE_MAX_SHARE,
    ModelConfig,
    PrivacyConfig,
    RunConfig,
    TuningConfig,
    check_settings,
)

if TYPE_CHECKING:
    from dpbench.algorithms.base import Algorithm, Refusal, Request
    from dpbench.jobs.plan import RunPlan


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


def run_plan(cfg: DictConfig) -> RunPlan:
    """Validate a composed Hydra config (the ``hydra`` node is ignored; a variant is applied first)
    and resolve it into the :class:`~dpbench.jobs.plan.RunPlan` the engine runs, its method built once."""
    from dpbench.jobs.plan import make_plan

    run, method = _resolve(cfg)
    return make_plan(run, method)


def run_config(cfg: DictConfig) -> RunConfig:
    """Validate a composed Hydra config, as :func:`run_plan`, and return its settings alone."""
    return _resolve(cfg)[0]


def _resolve(cfg: DictConfig) -> tuple[RunConfig, Algorithm]:
    """The validated settings of ``cfg`` and the method built from its hyper-parameters."""
    cfg = apply_variant(cfg)
    _check_known_keys(cfg)
    settings = _settings(cfg)
    check_settings(settings)
    _check_setting_names(settings)
    return _with_groups(cfg, settings)


def _check_setting_names(settings: dict[str, Any]) -> None:
    """The settings that name something a lower layer owns: the noise sampler, the neighbouring
    relation, the noise key, the feature scaling and the data's dtype."""
    from dpbench.data.dataset import DATA_DTYPES
    from dpbench.data.scaling import SCALINGS
    from dpbench.privacy.neighbouring import CHOICES
    from dpbench.privacy.noise_key import NOISE_KEYS
    from dpbench.privacy.samplers import SAMPLERS

    privacy = settings["privacy"]
    for key, value, valid in (
        ("privacy.sampler", privacy.sampler, SAMPLERS),
        ("privacy.neighbouring", privacy.neighbouring, CHOICES),
        ("privacy.noise_key", privacy.noise_key, NOISE_KEYS),
        ("data.scaling", settings["scaling"], SCALINGS),
        ("data.dtype", settings["dtype"], DATA_DTYPES),
    ):
        if value not in valid:
            raise ConfigError(f"{key} must be one of {', '.join(valid)}, got {value!r}")


def _with_groups(cfg: DictConfig, settings: dict[str, Any]) -> tuple[RunConfig, Algorithm]:
    """:func:`_resolve` once ``settings`` are valid: the dataset, model and algorithm groups."""
    from dpbench.algorithms.registry import ALGORITHMS, algorithm_class, class_defaults, make_algorithm
    from dpbench.data import DATASET_NAMES
    from dpbench.data.registry import scales_features

    dataset = _section(cfg, "dataset")
    algorithm = _section(cfg, "algorithm")
    model = _section(cfg, "model")
    dataset_name = _name(
        dataset, "dataset", [*DATASET_NAMES, *(n for names in kind_datasets().values() for n in names)]
    )
    algorithm_name = _name(algorithm, "algorithm", ALGORITHMS)
    model_name = _name(model, "model", group_choices("model"))
    dataset_options = {k: v for k, v in dataset.items() if k != "name"}
    _check_problem_kind(dataset_name, model_name, model.get("loss"), algorithm_name)
    model_config = _model_config(model, model_name, algorithm_name)
    method = algorithm_class(algorithm_name)
    if "tuning_grid" not in algorithm:  # the preset leaves the grid to the class
        settings = {**settings, "tuning": dataclasses.replace(settings["tuning"], grid=_class_grid(method))}
    run = RunConfig(
        dataset=dataset_name,
        dataset_options=dataset_options,
        algorithm=algorithm_name,
        # every hyper-parameter, the preset's values over the class defaults: a preset that lists only what
        # differs from the class runs (and hashes as) the same job as one that lists every default
        algorithm_params={
            **class_defaults(method),
            **{k: v for k, v in algorithm.items() if k not in ("name", "tuning_grid")},
        },
        model=model_config,
        kind=method.problem_kind,
        scales_features=scales_features(dataset_name, dataset_options),
        **_kind_section(cfg, KINDS[method.problem_kind]),
        **settings,
    )
    algorithm_instance = make_algorithm(run.algorithm, run.algorithm_params)  # validates the hyper-parameters
    _check_tuning(run, algorithm_instance)
    refused = algorithm_instance.refusal(_request(run))
    if refused is not None:
        raise ConfigError(_refusal_message(refused, run))
    if run.dtype not in KINDS[run.kind].dtypes:
        raise ConfigError(
            f"data.dtype={run.dtype} is for linear-model jobs; model={model_name} keeps its data in float64 "
            "(drop data.dtype)"
        )
    _check_fidelity_rows(run, algorithm_instance)
    if KINDS[run.kind].check_dataset:  # the kind's own datasets check their options before any job runs
        load(KINDS[run.kind].check_dataset)(run.dataset, run.dataset_options)
    return run, algorithm_instance


def _settings(cfg: DictConfig) -> dict[str, Any]:
    """RunConfig's fields outside the dataset, model, algorithm and bo sections, read and typed;
    ``privacy`` and ``tuning`` validate themselves, :func:`~dpbench.settings.check_settings` the others."""
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
    (dataset, algorithm, model, tuning) check their own keys; a kind's section (``bo``) has its settings' fields."""
    kind_sections = {
        kind.section: tuple(f.name for f in dataclasses.fields(load(kind.section_fields)))
        for kind in KINDS.values()
        if kind.section
    }
    valid_keys = set(TOP_LEVEL_KEYS) | set(kind_sections)
    unknown = sorted(set(cfg.keys()) - valid_keys)
    if unknown:
        raise ConfigError(f"{unknown[0]} is not a dpbench setting; top-level keys: {', '.join(sorted(valid_keys))}")
    sections = {**SECTION_KEYS, **kind_sections}
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


def _request(run: RunConfig) -> Request:
    """What ``run`` asks of its method (:meth:`~dpbench.algorithms.base.Algorithm.refusal`)."""
    from dpbench.algorithms.base import Request

    return Request(
        model=run.model.name,
        loss=run.model.loss,
        reg=run.model.reg,
        l1_reg=run.model.l1_reg,
        sampler=run.privacy.sampler,
        neighbouring=run.privacy.neighbouring,
        tuning=run.tuning.mode,
        searches_grid=bool(run.tuning.grid),
        bo_target=run.bo.target if run.bo is not None else None,
    )


def _refusal_message(refused: Refusal, run: RunConfig) -> str:
    """The method's refusal, with what the shipped configuration offers instead: the models it takes, and
    the methods with an ℓ1 step."""
    from dpbench.algorithms.registry import ALGORITHMS

    if refused.setting == "model":
        return f"{refused.reason}; use {_models_phrase(run.algorithm)} instead of model={run.model.name}"
    if refused.setting == "model.l1_reg":
        able = sorted(name for name, cls in ALGORITHMS.items() if cls.supports_l1)
        return (
            f"{refused.reason}; algorithms with an ℓ1 (proximal) step: {', '.join(able)}; "
            f"or keep algorithm={run.algorithm} with {_models_phrase(run.algorithm)}"
        )
    return refused.reason


def _class_grid(method) -> dict[str, list[Any]]:
    """The tuning grid a method's class declares, as the ``algorithm.tuning_grid`` of a preset would give it."""
    return {key: list(values) for key, values in method.tuning_grid.items()}


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
    """Refuse tuning the method cannot do, in one line: a grid value it rejects, or tuning of a kind of job that
    tunes within its own job (what private tuning asks of the method is its :meth:`refusal`'s)."""
    from dpbench.algorithms.registry import make_algorithm

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
    if not KINDS[algorithm.problem_kind].tunes:
        raise ConfigError(f"tuning={mode} is for the linear-model methods; {run.algorithm} tunes within its own job")


def _check_problem_kind(dataset: str, model: str, loss: Any, algorithm: str) -> None:
    """The dataset and the model must be what the algorithm's kind of job runs on (:class:`dpbench.jobs.Kind`):
    a GLM on rows, han_pwa's piecewise-affine program, or kusner_bo's hyper-parameter tuning (which runs
    on the classification datasets the GLM methods use). The refusal names a dataset and the models that fit."""
    from dpbench.algorithms.registry import algorithm_class

    problem_kind = algorithm_class(algorithm).problem_kind
    if problem_kind not in KINDS:
        raise ConfigError(
            f"algorithm={algorithm} runs problem_kind={problem_kind!r}, which no job kind runs; known: {', '.join(KINDS)}"
        )
    kind = KINDS[problem_kind]
    mismatched = [
        key
        for key, fits in (
            (f"dataset={dataset}", _data_of(dataset) == kind.data),
            (f"model={model}", model_family(loss) == kind.model),
        )
        if not fits
    ]
    if not mismatched:
        return
    needs = kind.needs.format(dataset=_dataset_example(algorithm), models=_models_phrase(algorithm))
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
    """The config group options algorithm/<algorithm>.yaml (in any config directory) selects with ``override /<group>...``
    in its defaults list (with those of the configs it extends; its own win, as in Hydra), e.g.
    {"model": "bo"}. The command line and experiment presets override them (Hydra registers their
    overrides first)."""
    path = option_file("algorithm", algorithm)
    if path is None:
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


def models_for(algorithm: str) -> list[str]:
    """The options of conf/model/ that ``algorithm`` accepts (its default instance's :meth:`refusal` refuses
    none of the model's settings under its paper's relation), the one it selects first."""
    from dpbench.algorithms.base import Request
    from dpbench.algorithms.registry import algorithm_class

    cls = algorithm_class(algorithm)
    method = cls()
    fits = []
    for name in group_choices("model"):
        section = OmegaConf.to_container(OmegaConf.load(option_file("model", name)), resolve=True)
        if not isinstance(section, dict) or model_family(section.get("loss")) != KINDS[cls.problem_kind].model:
            continue
        section.pop("defaults", None)
        try:
            model = _model_config(section, name, algorithm)
        except ConfigError:
            continue
        refused = method.refusal(
            Request(model=name, loss=model.loss, reg=model.reg, l1_reg=model.l1_reg, neighbouring="native")
        )
        if refused is None or not refused.setting.startswith("model"):
            fits.append(name)
    default = _default_option(algorithm, "model")
    return sorted(fits, key=lambda name: name != default)


def _models_phrase(algorithm: str) -> str:
    """``model=liu_l2_svm (its default) or chen_lee_svm, liu_l1_svm, svm``: what ``algorithm`` takes."""
    models = models_for(algorithm)
    if not models:
        return "a model it supports"
    first, rest = models[0], models[1:]
    if not rest:
        return f"model={first}"
    default = " (its default)" if first == _default_option(algorithm, "model") else ""
    return f"model={first}{default} or {', '.join(rest)}"


def _dataset_example(algorithm: str) -> str:
    """A dataset ``algorithm`` runs on: the one it selects, else its kind's first own dataset
    (synthetic_pwa for han_pwa) or adult."""
    from dpbench.algorithms.registry import algorithm_class

    selected = _algorithm_selects(algorithm).get("dataset")
    if selected:
        return selected
    own = kind_datasets().get(KINDS[algorithm_class(algorithm).problem_kind].data)
    return own[0] if own else "adult"


def _data_of(dataset: str) -> str:
    """The ``data`` of the kinds that run ``dataset``: a kind's own (``pwa``), else ``rows``."""
    return next((data for data, names in kind_datasets().items() if dataset in names), "rows")


def _kind_section(cfg: DictConfig, kind) -> dict[str, Any]:
    """The kind's own section read by the kind (``{"bo": BOConfig(...)}``), or nothing."""
    if not kind.section:
        return {}
    return {kind.section: load(kind.read_section)(_section(cfg, kind.section))}


def _model_config(model: dict[str, Any], name: str, algorithm_name: str) -> ModelConfig:
    """The model section as a ModelConfig. An optional ``smooth_loss`` is used instead of ``loss``
    for methods that cannot optimise ``loss`` (chen_lee Sec 5.3 runs the hinge-loss SVM, and the
    Huberized hinge for the baselines that need smoothness); loss parameters not taken by the
    chosen loss are dropped, ones no loss takes are an error."""
    from dpbench.algorithms.registry import algorithm_class
    from dpbench.problems.losses import LOSSES

    loss = _str(model, "loss", "model")
    own = kind_of_family(model_family(loss))
    if own is not None:  # a kind with models of its own reads them (model=pwa, model=bo)
        return load(own.read_model)(model, name)
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
    return ModelConfig(
        name=name,
        loss=loss,
        reg=_number(model.get("reg", 0.0), "model.reg"),
        loss_params={k: _number(v, f"model.{k}") for k, v in params.items() if k in taken},
        l1_reg=_number(model.get("l1_reg", 0.0), "model.l1_reg"),
    )


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
