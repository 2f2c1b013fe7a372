"""Job kinds: what one dpbench job computes, behind one small protocol (docs/architecture.md).

A job is one algorithm on one dataset under one privacy budget, for its runs (folds × reps). How
the runs are computed depends on the kind of problem the algorithm solves: a linear model trained
run by run (``glm``, :mod:`dpbench.jobs.glm`), han_pwa's piecewise-affine instance with all
repetitions as arrays (``pwa``, :mod:`dpbench.pwa.job`), kusner_bo's private tuning on cached
validation scores (``bo``, :mod:`dpbench.bo.job`). Each kind is an object with one method,
:meth:`~dpbench.jobs.kind.JobKind.run`, named in :data:`KINDS` by the ``problem_kind`` of the
algorithms it runs.

The engine (:mod:`dpbench.engine`) knows no kind: it looks one up here, runs it, checks that its
rows carry the core columns and its trace the trace identity (:mod:`dpbench.jobs.columns`), and
writes the files. This module is the table of kinds (the built-in ones and those of installed plugins,
:mod:`dpbench.plugins`) and imports no job, so that the configuration and the algorithms can name the
kinds without importing one. Adding a kind is a
module and a :class:`Kind` in :data:`KINDS` (and, when its models are not linear models, a line in
:data:`MODEL_FAMILIES`); the engine is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Kind:
    """What the configuration knows of a kind of job without importing it.

    ``job``: ``module:object`` of its :class:`~dpbench.jobs.kind.JobKind`, imported when a job of the
    kind runs. ``data``: the datasets it runs on (``rows``: the datasets of labelled rows;
    ``pwa``: han_pwa's instances, :data:`dpbench.pwa.dataset.PWA_DATASETS`). ``model``: the family of
    the models it takes (:func:`model_family` of the model's loss). ``needs``: what a refusal says it
    needs, with ``{dataset}`` and ``{models}`` filled in. ``tunes``: whether ``tuning=oracle|private``
    wrap its fit. ``dtypes``: the ``data.dtype`` values it keeps its data in. ``tiny``: the overrides
    of a job of the kind that runs in seconds (``dpbench check-method`` runs a method's on them).
    ``entry``: the method of its algorithms its job calls (``fit`` for a linear model, ``release`` for
    han_pwa's and kusner_bo's), which ``dpbench check-method`` requires a method to define.

    What the configuration asks of a kind with datasets, models or settings of its own, each a
    ``module:object`` reference imported only when a job of the kind is resolved (:func:`load`):
    ``datasets``, the names of its datasets (those of ``data`` other than ``rows``); ``check_dataset``,
    ``(name, options) → None``, refusing a bad dataset option before any job runs; ``read_model``,
    ``(model section, option name) → ModelConfig`` for the models of its family; ``section``, the config
    section of its own beside the groups (a field of ``RunConfig`` of that name), ``section_fields`` the
    dataclass whose fields are that section's keys, and ``read_section``, ``(section) → an instance of it``."""

    job: str
    data: str
    model: str
    needs: str
    tunes: bool = False
    dtypes: tuple[str, ...] = ("float64",)
    tiny: tuple[str, ...] = ()
    entry: str = "fit"
    datasets: str = ""
    check_dataset: str = ""
    read_model: str = ""
    section: str = ""
    section_fields: str = ""
    read_section: str = ""


PWA_LOSS = "max_affine"  # model=pwa: han_pwa's f(x) = max_i (a_iᵀx + b_i)
BO_LOSS = "bo_target"  # model=bo: kusner_bo tunes the hyper-parameters of the model named by bo.target
#: model.loss → model family, for the losses that are not a linear model's (every other loss is ``linear``).
MODEL_FAMILIES: dict[str, str] = {PWA_LOSS: "pwa", BO_LOSS: "bo"}

#: problem_kind → its :class:`Kind`.
KINDS: dict[str, Kind] = {
    "glm": Kind(
        "dpbench.jobs.glm:GLM_JOB",
        data="rows",
        model="linear",
        needs="a linear-model dataset and model: e.g. dataset={dataset} with {models}",
        tunes=True,
        dtypes=("float64", "float32"),
        tiny=("dataset=synthetic_logreg", "dataset.n=400", "dataset.d=5", "reps=2"),
    ),
    "pwa": Kind(
        "dpbench.pwa.job:PWA_JOB",
        data="pwa",
        model="pwa",
        needs="han_pwa's dataset={dataset} {models}",
        tiny=("dataset=synthetic_pwa", "model=pwa", "dataset.m=8", "dataset.d=3", "reps=3"),
        entry="release",
        datasets="dpbench.pwa.dataset:PWA_DATASETS",
        check_dataset="dpbench.pwa.config:check_dataset",
        read_model="dpbench.pwa.config:read_model",
    ),
    "bo": Kind(
        "dpbench.bo.job:BO_JOB",
        data="rows",
        model="bo",
        needs="kusner_bo's {models} on a classification dataset, e.g. dataset={dataset} (bo.target picks the tuned model)",
        tiny=(
            "model=bo",
            "bo.target=logreg",
            "dataset=synthetic_logreg",
            "dataset.n=1500",
            "dataset.d=5",
            "bo.n_candidates=12",
            "bo.train_size=300",
            "bo.test_size=300",
            "bo.pool_size=800",
            "bo.validation_size=200",
            "reps=2",
        ),
        entry="release",
        read_model="dpbench.bo.config:read_model",
        section="bo",
        section_fields="dpbench.settings:BOConfig",
        read_section="dpbench.bo.config:read_section",
    ),
}


def _plugin_kinds() -> dict[str, Kind]:
    """The kinds installed plugins register (``dpbench.kinds`` entry points, :mod:`dpbench.plugins`), by
    entry-point name; one that names no :class:`Kind`, or a taken name, is refused naming the plugin."""
    from dpbench.errors import ConfigError
    from dpbench.plugins import KINDS_GROUP, load_entry_point, plugin_entry_points, source_of

    kinds: dict[str, Kind] = {}
    for entry_point in plugin_entry_points(KINDS_GROUP):
        kind = load_entry_point(entry_point)
        if not isinstance(kind, Kind):
            raise ConfigError(f"plugin {source_of(entry_point)} names no dpbench.jobs.Kind, got {type(kind).__name__}")
        if entry_point.name in KINDS or entry_point.name in kinds:
            raise ConfigError(f"plugin {source_of(entry_point)}: kind name {entry_point.name!r} is taken")
        kinds[entry_point.name] = kind
    return kinds


KINDS.update(_plugin_kinds())


def model_family(loss) -> str:
    """The family of a model with loss ``loss``: ``pwa``, ``bo`` or (every other loss) ``linear``."""
    return MODEL_FAMILIES.get(loss, "linear")


def load(reference: str):
    """The object a ``module:object`` reference of a :class:`Kind` names, imported now."""
    module, name = reference.split(":")
    return getattr(import_module(module), name)


def job_kind(problem_kind: str):
    """The job kind (a :class:`~dpbench.jobs.kind.JobKind`) registered for ``problem_kind``; a bug
    when there is none: config validation accepts only algorithms whose kind is registered."""
    try:
        reference = KINDS[problem_kind].job
    except KeyError:
        raise KeyError(f"no job kind for problem_kind {problem_kind!r}; known: {', '.join(KINDS)}") from None
    return load(reference)


def kind_datasets() -> dict[str, tuple[str, ...]]:
    """Each kind's own datasets (those of a ``data`` other than ``rows``), by ``data``: e.g. {"pwa": ("synthetic_pwa",)}."""
    return {kind.data: tuple(load(kind.datasets)) for kind in KINDS.values() if kind.datasets}


def kind_of_family(family: str) -> Kind | None:
    """The kind whose models are of ``family`` and who reads them itself (None: a linear model, read by the
    configuration)."""
    return next((kind for kind in KINDS.values() if kind.model == family and kind.read_model), None)
