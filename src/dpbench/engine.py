"""Run one job: the runs (folds × reps) of one algorithm on one dataset under one privacy budget.

The engine knows no kind of job. It looks up the job kind of the algorithm's ``problem_kind``
(:mod:`dpbench.jobs`), runs it under the job's lock, checks that the output carries the core
results columns and the trace identity (:mod:`dpbench.jobs.columns`) and that every column has a
privacy class (:mod:`dpbench.schema`), and writes ``trace.parquet``, ``run.json`` and last
``results.parquet`` (its presence marks the job finished), each atomically. A finished job is skipped
unless forced, or computed by other code than this (:mod:`dpbench.code_identity`) under
``resume=strict``; a failed one leaves ``error.json``. How runs are seeded, accounted and checked is the
job kind's (e.g. :mod:`dpbench.jobs.glm`); docs/architecture.md draws the whole path.

The job kinds, pandas, scipy and scikit-learn are imported when a job runs: importing the engine
loads numpy and little else (tests/test_import_cost.py).
"""

from __future__ import annotations

import functools
import logging
import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpbench import __version__, code_identity
from dpbench.errors import ConfigError, DpbenchError
from dpbench.jobs import job_kind
from dpbench.locking import job_lock
from dpbench.privacy.noise_key import (
    KEY_FILE,
    fingerprint,
    load_or_create,
    use_noise_key,
)
from dpbench.privacy.samplers import use_sampler
from dpbench.results import (
    RESULTS_FILE,
    RUN_FILE,
    clear_error_marker,
    read_finished,
    record_failure,
    write_json,
    write_parquet,
)
from dpbench.resume import RunStore
from dpbench.schema import column_classes

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.jobs.plan import RunPlan
    from dpbench.settings import RunConfig

log = logging.getLogger("dpbench")


def marks_failures(func):
    """Decorate ``func(plan, out_dir, ...)`` so that an exception it raises is recorded in
    ``out_dir/error.json`` (:func:`dpbench.results.record_failure`) before it propagates."""

    @functools.wraps(func)
    def wrapper(plan, out_dir, *args, **kwargs):
        try:
            return func(plan, out_dir, *args, **kwargs)
        except Exception as exc:
            record_failure(Path(out_dir), exc)
            raise

    return wrapper


@marks_failures
def run_job(
    plan: RunPlan, out_dir: Path, resolved_config: dict[str, Any] | None = None, key_dir: Path | None = None
) -> pd.DataFrame:
    """Run (or skip, when already finished) the job ``plan`` describes (:func:`dpbench.resolve.run_plan`)
    into ``out_dir``.

    The plan's job kind computes the runs (:mod:`dpbench.jobs`); every kind writes the same files
    and core columns. An exception leaves ``error.json`` in ``out_dir``; skipping or starting the job again removes it.
    The job holds ``out_dir``'s lock (:mod:`dpbench.locking`) while it runs, and a GLM job resumes
    from the runs an interrupted attempt finished (:mod:`dpbench.resume`). Under
    ``privacy.noise_key=secret`` the noise derives from the key in ``key_dir`` (the sweep's directory;
    ``out_dir`` when None), made there when there is none (:mod:`dpbench.privacy.noise_key`)."""
    with job_lock(out_dir):  # a second process running the same job waits, then skips it
        return _run_locked(
            plan, Path(out_dir), resolved_config, Path(key_dir) if key_dir is not None else Path(out_dir)
        )


def _run_locked(plan: RunPlan, out_dir: Path, resolved_config: dict[str, Any] | None, key_dir: Path) -> pd.DataFrame:
    """:func:`run_job`'s work, under the job's lock."""
    cfg = plan.run
    identity = code_identity.identity_of(type(plan.method))
    results_path = out_dir / RESULTS_FILE
    finished = None if cfg.force else read_finished(results_path)
    if finished is not None:
        stored = set(finished["config_hash"])
        if stored != {cfg.config_hash}:
            raise ConfigError(
                f"{results_path} holds results of another configuration (config_hash {', '.join(sorted(stored))}, "
                f"this one is {cfg.config_hash}); pass force=true to replace them or use another output dir"
            )
        stale = code_identity.stale_identities(finished.get("code_identity"), identity)
        if not stale or cfg.resume == "keep":
            if stale:
                log.warning(
                    "keeping %s's results in %s, computed by other code (%s; this is %s): they are stale "
                    "(resume=strict recomputes them)",
                    cfg.algorithm,
                    results_path,
                    ", ".join(stale),
                    identity,
                )
            else:
                log.info("skipping %s: finished results already in %s (force=true reruns)", cfg.algorithm, results_path)
            clear_error_marker(out_dir)
            return finished
        log.info(
            "recomputing %s: the results in %s were computed by other code (%s; this is %s; resume=keep keeps them)",
            cfg.algorithm,
            results_path,
            ", ".join(stale),
            identity,
        )
    if finished is None and results_path.exists() and not cfg.force:
        log.warning("%s is unreadable or incomplete; rerunning the job", results_path)
    clear_error_marker(out_dir)  # this attempt supersedes an earlier failure
    store = RunStore(out_dir, cfg.config_hash, identity, keep_other_code=cfg.resume == "keep")
    if cfg.force:
        store.clear()

    key = load_or_create(key_dir) if plan.method.private and cfg.privacy.noise_key == "secret" else None
    with use_sampler(cfg.privacy.sampler), use_noise_key(key):
        output = job_kind(plan.kind).run(plan, store)
    missing = output.missing_columns()
    if missing:  # a bug in the job kind: every kind writes the core columns (dpbench.jobs.columns)
        raise DpbenchError(f"the {plan.kind} job kind wrote no {', '.join(missing)}")
    results = output.results
    column_classes("results", results.columns)  # an unclassified column stops the job before any file is written
    write_parquet(output.trace, out_dir / "trace.parquet", table="trace")
    metadata = _run_metadata(cfg, output.dataset_info, resolved_config, output.ledgers, identity)
    write_json({**metadata, "noise": _noise_record(cfg, key, key_dir, out_dir)}, out_dir / RUN_FILE)
    write_parquet(results, results_path, table="results")  # last: its presence marks the job finished
    store.clear()
    return results


# -------------------------------------------------------------------------------- metadata
def _run_metadata(
    cfg: RunConfig, dataset_info: dict[str, Any], resolved: dict[str, Any] | None, ledgers: list, identity: str
) -> dict[str, Any]:
    packages = ("numpy", "scipy", "scikit-learn", "pandas", "pyarrow", "hydra-core", "omegaconf", "matplotlib")
    return {
        "dpbench_version": __version__,
        "code": {**code_identity.current().record(), "identity": identity},
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in packages},
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count()},
        "config_hash": cfg.config_hash,
        "config": resolved if resolved is not None else cfg.semantic_dict(),
        "dataset": dataset_info,
        "ledgers": ledgers,
    }


def _noise_record(cfg: RunConfig, key: bytes | None, key_dir: Path, out_dir: Path) -> dict[str, Any]:
    """run.json's ``noise``: where the job's noise came from — ``seed``, or the secret key's file
    (relative to the job's directory, so a moved sweep still finds it) and its public fingerprint."""
    if key is None:
        return {"key": "seed" if cfg.privacy.noise_key == "seed" else "none"}
    return {"key": "secret", "key_file": os.path.relpath(key_dir / KEY_FILE, out_dir), "fingerprint": fingerprint(key)}


def _version(package: str) -> str | None:
    from importlib import metadata  # ~0.1 s of imports (email, zipfile, …), needed only when a job writes run.json

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
