"""The ``dpbench`` command: a Hydra app over ``conf/``.

``dpbench`` runs the default job (DP-BLSGD on the embedded synthetic dataset, offline);
``dpbench dataset=adult algorithm=dp_sgd privacy.eps=1.0 cv.folds=2 reps=2`` a chosen one;
``dpbench -m algorithm=dp_sgd,nonprivate privacy.eps=0.1,1.0 hydra/launcher=joblib`` a sweep.
Errors the user can fix (bad values, unknown names, missing or corrupt data) end the run with
one line on stderr and exit status 2.

A job that raises leaves ``error.json`` in its directory (:func:`dpbench.results.write_error_marker`).
In a sweep (``-m``) the failure still propagates to Hydra: with the basic sweeper every other job of
the batch still runs (each launcher catches a job's exception), then Hydra prints the first failed
job's traceback and the command exits with status 1. ``manifest.json`` is written in the sweep
directory either way (:mod:`dpbench.sweep`); ``dpbench-status SWEEP_DIR`` names every failed job.
"""

from __future__ import annotations

import os
import sys

# One BLAS thread per job: set before numpy loads; sweeps parallelise across jobs (DESIGN.md).
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from dpbench.config import config_dir, default_cache_dir, group_choices
from dpbench.errors import ConfigError, DataError, DpbenchError

GROUPS = ("dataset", "algorithm", "model", "privacy", "tuning", "experiment")


def _job_dir_name(override_dirname: str) -> str:
    return override_dirname or "default"


def datasets_present(data_dir: str, *names: str) -> str:
    """Comma-join ``names`` for a preset's sweep, keeping a name marked optional (``?ipums_us``)
    only when its files are under ``data_dir`` and verify: IPUMS-US joins chen_lee's comparison
    when its file is there. Required names are always kept (a missing file then fails its job
    with the usual message)."""
    from pathlib import Path

    from dpbench.data import load_dataset
    from dpbench.errors import DataError

    kept = []
    for name in names:
        if not name.startswith("?"):
            kept.append(name)
            continue
        try:
            load_dataset(name[1:], {}, data_dir=Path(data_dir), allow_download=False)
        except DataError:
            continue
        kept.append(name[1:])
    return ",".join(kept)


def register_resolvers() -> None:
    """Resolvers used by ``conf/`` (idempotent)."""
    if not OmegaConf.has_resolver("dpbench_cache_dir"):
        OmegaConf.register_new_resolver("dpbench_cache_dir", lambda sub="": str(default_cache_dir() / sub))
    if not OmegaConf.has_resolver("dpbench_job_dir"):
        OmegaConf.register_new_resolver("dpbench_job_dir", _job_dir_name)
    if not OmegaConf.has_resolver("dpbench_datasets_present"):
        OmegaConf.register_new_resolver("dpbench_datasets_present", datasets_present)


def check_group_choices(args: list[str]) -> None:
    """Refuse unknown group options on the command line before Hydra composes anything, so
    that ``algorithm=nope`` gets one line naming the valid choices instead of a stack of text."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    candidates = [a for a in args if "=" in a and not a.startswith("-")]
    try:
        overrides = OverridesParser.create().parse_overrides(candidates)
    except Exception:  # malformed overrides: let Hydra report them in its own words
        return
    for override in overrides:
        group = override.key_or_group
        if group not in GROUPS or override.is_delete():
            continue
        values = (
            list(override.sweep_string_iterator()) if override.is_sweep_override() else [override.get_value_element_as_str()]
        )
        valid = group_choices(group)
        for value in values:
            if value not in valid and not (group == "experiment" and value == "null"):
                raise ConfigError(f"unknown {group} {value!r}; valid choices: {', '.join(valid) or '(none)'}")


def check_preset_mode(args: list[str]) -> None:
    """Refuse a sweep preset run without ``-m``: Hydra would ignore its sweep and run the defaults once."""
    if "-m" in args or "--multirun" in args:
        return
    for arg in args:
        if arg.startswith("experiment=") and "," not in arg:
            name = arg.split("=", 1)[1]
            path = config_dir() / "experiment" / f"{name}.yaml"
            if path.is_file() and OmegaConf.select(OmegaConf.load(path), "hydra.sweeper.params"):
                raise ConfigError(f"experiment={name} is a sweep preset; run it with -m: dpbench -m experiment={name}")


HYDRA_LEFTOVERS = {".hydra", "dpbench.log", "error.json"}


def discard_run_dir(out_dir) -> None:
    """Remove the directory Hydra made for a single run refused for a bad value or data file (its
    ``error.json`` included: the message went to stderr), and the empty parents Hydra made with it, up
    to the working directory. A directory holding anything else (an earlier run's results) is left alone."""
    import shutil
    from pathlib import Path

    out_dir, cwd = Path(out_dir).resolve(), Path.cwd().resolve()
    if not out_dir.is_dir() or not set(os.listdir(out_dir)) <= HYDRA_LEFTOVERS:
        return
    shutil.rmtree(out_dir, ignore_errors=True)
    for parent in out_dir.parents:
        if parent == cwd or cwd not in parent.parents or any(parent.iterdir()):
            break
        parent.rmdir()


def headline(results, out_dir) -> str:
    """The line a single run ends with: what ran, its headline numbers, and where the results are."""
    first = results.iloc[0]
    parts = [f"dpbench: {first['algorithm']} on {first['dataset']}, {len(results)} run(s)"]
    for column, label in (("test_accuracy", "test accuracy"), ("suboptimality", "suboptimality")):
        if column in results and results[column].notna().any():
            values = results[column].dropna()
            spread = f" ± {values.std():.3f}" if len(values) > 1 else ""
            parts.append(f"{label} {values.mean():.3f}{spread}")
            break
    if bool(first.get("private", False)):
        parts.append(f"ε spent ≤ {results['eps_spent'].max():.3g} of {first['eps']:g}")
    return ", ".join(parts) + f"; results in {out_dir}"


def _fail(message: str) -> None:
    print(f"dpbench: error: {message}", file=sys.stderr)
    sys.exit(2)


@hydra.main(version_base="1.3", config_path=str(config_dir()), config_name="config")
def _hydra_main(cfg: DictConfig) -> None:
    from pathlib import Path

    from dpbench.config import RunConfig, apply_variant
    from dpbench.engine import run_job
    from dpbench.results import record_failure

    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    try:
        try:
            run_cfg = RunConfig.from_dictconfig(cfg)
            resolved = OmegaConf.to_container(apply_variant(cfg), resolve=True)
        except Exception as exc:  # run_job records its own failures; these happen before it starts
            if hydra_cfg.mode == RunMode.RUN and isinstance(exc, DpbenchError):
                discard_run_dir(out_dir)  # a refused single run leaves nothing behind
            else:
                record_failure(out_dir, exc)  # a sweep's status lists the failed job
            raise
        results = run_job(run_cfg, out_dir, resolved_config=resolved)
        if hydra_cfg.mode == RunMode.RUN:
            print(headline(results, out_dir))
    except DpbenchError as exc:
        if hydra_cfg.mode == RunMode.MULTIRUN:
            raise
        if isinstance(exc, (ConfigError, DataError)):  # a bad value or file found while loading: nothing ran
            discard_run_dir(out_dir)
        _fail(str(exc))


def main() -> None:
    """Entry point of the ``dpbench`` console script."""
    register_resolvers()
    try:
        check_group_choices(sys.argv[1:])
        check_preset_mode(sys.argv[1:])
    except ConfigError as exc:
        _fail(str(exc))
    try:
        _hydra_main()
    finally:  # a sweep that raised (a failed job, Ctrl-C) still gets its manifest
        from dpbench.sweep import finish_open_sweeps

        finish_open_sweeps()


if __name__ == "__main__":
    main()
