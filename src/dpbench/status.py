"""``dpbench-status SWEEP_DIR``: which jobs of a sweep finished, failed, are incomplete or missing.

The expected jobs come from the sweep's ``multirun.yaml`` (Hydra writes it when the sweep starts):
the sweeper's ``params`` (experiment presets put their grids there, ``variant`` included) and the
command line's task overrides are parsed by Hydra's own ``OverridesParser`` and expanded by
``BasicSweeper.split_arguments``, the cartesian product Hydra's basic sweeper launches (in the order dpbench's
sweeper launches it, when it ran the sweep). A job's
directory is ``hydra.sweep.subdir`` resolved with that job's ``hydra.job.override_dirname`` (Hydra's
``get_overrides_dirname`` with the sweep's ``exclude_keys``) and ``hydra.job.num``; a job directory
that exists is matched by the overrides Hydra saved in its ``.hydra/overrides.yaml`` instead, so a
subdir naming scheme that needs a job's own config only misplaces jobs that never started. Sweeper
params that call resolvers (chen_lee's ``dpbench_datasets_present``) are resolved again, now.

Fallback, said so in the report: without a usable ``multirun.yaml`` (absent, unreadable, another
sweeper than Hydra's basic one, a sweep it cannot expand) the expected jobs are those listed in
``manifest.json`` plus the job directories present, so jobs that never started are unknown unless
the manifest lists them.

A job is *finished* when its ``results.parquet`` is readable (:func:`dpbench.results.read_finished_columns`)
and not older than an ``error.json``, and *stale* when such results were computed by other code than
the dpbench running now (their ``code_identity``, :mod:`dpbench.code_identity`; kept by
``resume=keep``, recomputed by the default ``resume=strict``); *failed* when ``error.json`` says why;
*incomplete* when its directory exists without either (running, killed, or an unreadable results
file); *missing* when it has no directory. Exit status: 0 when every expected job finished (stale
ones included: their results are there, the summary counts them), 1 otherwise, 2 when SWEEP_DIR is
not a sweep directory. The same report is the sweep's ``manifest.json`` (:mod:`dpbench.sweep`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dpbench import code_identity
from dpbench.console import console_command
from dpbench.errors import DpbenchError
from dpbench.results import (
    ERROR_FILE,
    RESULTS_FILE,
    read_error_marker,
    read_finished_columns,
    write_json,
)

SWEEP_CONFIG_FILE = "multirun.yaml"
MANIFEST_FILE = "manifest.json"
STATUSES = ("finished", "stale", "failed", "incomplete", "missing")
DONE = ("finished", "stale")
"""The statuses of a job whose results are on disk."""
BASIC_SWEEPERS = (
    "hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
    "hydra_plugins.dpbench_sweeper.DpbenchSweeper",  # dpbench's default: the basic sweeper's jobs, reordered
)


class SweepDirError(DpbenchError):
    """The directory given is not a sweep directory (missing, not a directory, no sweep files)."""


class _CannotExpand(Exception):
    """multirun.yaml does not determine the expected jobs; the message says why."""


@dataclass
class Job:
    """One job of a sweep and what its directory holds (paths are relative to the sweep directory)."""

    overrides: list[str]
    job_dir: str
    status: str = "missing"
    results: str | None = None
    config_hash: str | None = None
    code_identity: str | None = None
    rows: int | None = None
    error: str | None = None
    note: str | None = None


@dataclass
class SweepReport:
    """Every expected job of the sweep in ``sweep_dir`` with its status; ``exact`` when the jobs were
    expanded from ``multirun.yaml``, ``source`` says how they were found."""

    sweep_dir: Path
    jobs: list[Job]
    exact: bool
    source: str
    other_dirs: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Number of jobs per status, every status present."""
        return {status: sum(job.status == status for job in self.jobs) for status in STATUSES}

    @property
    def complete(self) -> bool:
        """True when there is at least one job and every job finished (stale or not)."""
        return bool(self.jobs) and all(job.status in DONE for job in self.jobs)

    def summary(self) -> str:
        """One line: ``16 jobs: 13 finished, 1 stale, 1 failed, 1 incomplete, 0 missing``."""
        counts = ", ".join(f"{n} {status}" for status, n in self.counts().items())
        return f"{len(self.jobs)} job{'s' if len(self.jobs) != 1 else ''}: {counts}"

    def to_dict(self) -> dict[str, Any]:
        """The manifest: sweep directory, time, how the jobs were found, counts and every job."""
        return {
            "sweep_dir": str(self.sweep_dir.resolve()),
            "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "exact": self.exact,
            "source": self.source,
            "complete": self.complete,
            "counts": self.counts(),
            "jobs": [asdict(job) for job in self.jobs],
            "other_dirs": self.other_dirs,
        }


# -------------------------------------------------------------------------------- expected jobs
def _config_loader():
    """A Hydra config loader over dpbench's ``conf/`` (glob sweeps list group options through it)."""
    try:
        from hydra._internal.config_loader_impl import ConfigLoaderImpl
        from hydra._internal.utils import create_config_search_path

        from dpbench.conf_files import config_dir

        return ConfigLoaderImpl(config_search_path=create_config_search_path(str(config_dir())))
    except Exception:  # noqa: BLE001 — private Hydra API moved: plain choice sweeps still expand without it
        return None


def expand_sweep(sweep_cfg) -> list[tuple[list[str], str]]:
    """(overrides, subdir) of every job Hydra's basic sweeper launches for ``sweep_cfg`` (the content
    of ``multirun.yaml``), in the order its sweeper launches them (dpbench's launches the jobs that train the
    most models first). Raises :class:`_CannotExpand` when that is not determined."""
    from hydra._internal.config_loader_impl import get_overrides_dirname
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from omegaconf import OmegaConf

    from dpbench.resolvers import register_resolvers
    from hydra_plugins.dpbench_sweeper import DpbenchSweeper

    register_resolvers()
    target = OmegaConf.select(sweep_cfg, "hydra.sweeper._target_")
    if target not in BASIC_SWEEPERS:
        raise _CannotExpand(f"the sweeper is {target}, not Hydra's basic sweeper")
    try:
        params = OmegaConf.select(sweep_cfg, "hydra.sweeper.params") or {}
        arguments = [f"{key}={value}" for key, value in params.items()]
        arguments += list(OmegaConf.select(sweep_cfg, "hydra.overrides.task") or [])
        parser = OverridesParser.create(config_loader=_config_loader())
        sweeper = DpbenchSweeper if target == BASIC_SWEEPERS[1] else BasicSweeper  # the same jobs, in its order
        batch = sweeper.split_arguments(parser.parse_overrides(arguments), None)[0]

        naming = OmegaConf.select(sweep_cfg, "hydra.job.config.override_dirname")
        work = OmegaConf.create(OmegaConf.to_container(sweep_cfg, resolve=False))
        parsed: dict[str, Any] = {}  # each distinct override parsed once (a sweep repeats each in many jobs)
        jobs = []
        for num, overrides in enumerate(batch):
            for override in overrides:
                if override not in parsed:
                    (parsed[override],) = parser.parse_overrides([override])
            app = [parsed[o] for o in overrides if not parsed[o].is_hydra_override()]
            work.hydra.job.override_dirname = get_overrides_dirname(
                overrides=app, exclude_keys=list(naming.exclude_keys), item_sep=naming.item_sep, kv_sep=naming.kv_sep
            )
            work.hydra.job.num = num
            work.hydra.job.id = f"{work.hydra.job.name}_{num}"
            subdir = OmegaConf.select(work, "hydra.sweep.subdir", throw_on_resolution_failure=True)
            jobs.append((list(overrides), str(subdir)))
    except Exception as exc:  # Hydra's parser and OmegaConf raise many types; the reason is reported
        raise _CannotExpand(f"{type(exc).__name__}: {exc}".splitlines()[0]) from exc
    return jobs


def _job_dirs_present(sweep_dir: Path) -> dict[str, list[str] | None]:
    """Job directories under ``sweep_dir`` (relative, POSIX) → the overrides saved in their
    ``.hydra/overrides.yaml`` (None when absent). A job directory has ``.hydra/``, results or a marker."""
    import yaml

    found: dict[str, list[str] | None] = {}
    for pattern in (".hydra", RESULTS_FILE, ERROR_FILE):
        for path in sweep_dir.rglob(pattern):
            job_dir = path.parent
            if job_dir == sweep_dir or ".submitit" in job_dir.relative_to(sweep_dir).parts:
                continue
            found.setdefault(job_dir.relative_to(sweep_dir).as_posix(), None)
    for rel in found:
        try:
            overrides = yaml.safe_load((sweep_dir / rel / ".hydra" / "overrides.yaml").read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(overrides, list):
            found[rel] = [str(o) for o in overrides]
    return found


# -------------------------------------------------------------------------------- job status
def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _identity_now(algorithms: list | None) -> str:
    """The identity this dpbench gives a job of the method in ``algorithms`` (its results' column; None when
    absent) (:func:`dpbench.code_identity.identity_of`: a plugin's method adds its package's digest)."""
    names = set(algorithms or ())
    if len(names) != 1:
        return code_identity.current().identity
    from dpbench.algorithms.registry import ALGORITHMS

    return code_identity.identity_of(ALGORITHMS.get(str(names.pop())))


def inspect_job(sweep_dir: Path, overrides: list[str], job_dir: str) -> Job:
    """The status of one job from what its directory holds (see the module docstring)."""
    job = Job(overrides=list(overrides), job_dir=job_dir)
    path = sweep_dir / job_dir
    if not path.is_dir():
        return job
    results_path = path / RESULTS_FILE
    finished = read_finished_columns(results_path, ("config_hash", "code_identity", "algorithm"))
    marker = read_error_marker(path)
    if finished is not None and (marker is None or _mtime(path / ERROR_FILE) < _mtime(results_path)):
        rows, columns = finished
        hashes = sorted({str(h) for h in columns["config_hash"]})
        recorded = columns["code_identity"]
        now = _identity_now(columns["algorithm"])
        stale = code_identity.stale_identities(recorded, now)
        job.status, job.rows = ("stale" if stale else "finished"), rows
        job.results = results_path.relative_to(sweep_dir).as_posix()
        job.config_hash = ",".join(hashes)
        job.code_identity = ",".join(sorted({str(c) for c in recorded})) if recorded is not None else None
        notes = [f"results.parquet mixes {len(hashes)} configurations"] if len(hashes) != 1 else []
        if stale:
            notes.append(code_identity.stale_note(stale, now))
        job.note = "; ".join(notes) or None
    elif marker is not None:
        job.status = "failed"
        job.error = f"{marker.get('type', 'Exception')}: {marker.get('message', '')}".rstrip(": ")
        if marker.get("time"):
            job.note = f"failed at {marker['time']}"
    else:
        job.status = "incomplete"
        unreadable = results_path.exists()
        job.note = "results.parquet is unreadable or incomplete" if unreadable else "no results: running or interrupted"
    return job


def _load_sweep_config(sweep_dir: Path):
    from omegaconf import OmegaConf

    path = sweep_dir / SWEEP_CONFIG_FILE
    if not path.is_file():
        raise _CannotExpand(f"no {SWEEP_CONFIG_FILE}")
    try:
        return OmegaConf.load(path)
    except Exception as exc:
        raise _CannotExpand(f"{SWEEP_CONFIG_FILE} is unreadable: {exc}".splitlines()[0]) from exc


def _manifest_jobs(sweep_dir: Path) -> list[tuple[list[str], str]]:
    try:
        manifest = json.loads((sweep_dir / MANIFEST_FILE).read_text())
        return [(list(job["overrides"]), str(job["job_dir"])) for job in manifest["jobs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def sweep_status(sweep_dir: Path) -> SweepReport:
    """The status of every job of the sweep in ``sweep_dir``; raises :class:`SweepDirError` when
    ``sweep_dir`` is not a sweep directory."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise SweepDirError(f"{sweep_dir} is not a directory")
    present = _job_dirs_present(sweep_dir)
    by_overrides = {tuple(sorted(o)): rel for rel, o in present.items() if o is not None}
    try:
        expected = expand_sweep(_load_sweep_config(sweep_dir))
        exact, source = True, f"expanded from {SWEEP_CONFIG_FILE}"
    except _CannotExpand as reason:
        expected = _manifest_jobs(sweep_dir)
        exact = False
        source = f"{reason}; jobs listed in {MANIFEST_FILE} plus job directories present"
        if not expected and not present:
            raise SweepDirError(
                f"{sweep_dir} is not a sweep directory: no usable {SWEEP_CONFIG_FILE} ({reason}), "
                f"no {MANIFEST_FILE} and no job directories"
            ) from None
        listed = {rel for _, rel in expected}
        expected += [(o or [], rel) for rel, o in sorted(present.items()) if rel not in listed]

    jobs = []
    for overrides, predicted in expected:
        actual = by_overrides.get(tuple(sorted(overrides)), predicted) if overrides else predicted
        jobs.append(inspect_job(sweep_dir, overrides, actual))
    claimed = {job.job_dir for job in jobs}
    others = sorted(rel for rel in present if rel not in claimed)
    return SweepReport(sweep_dir=sweep_dir, jobs=jobs, exact=exact, source=source, other_dirs=others)


def write_manifest(report: SweepReport, path: Path | None = None) -> Path:
    """Write ``report`` as JSON (atomically) to ``path``, by default ``SWEEP_DIR/manifest.json``."""
    path = Path(path) if path is not None else report.sweep_dir / MANIFEST_FILE
    write_json(report.to_dict(), path)
    return path


# -------------------------------------------------------------------------------- command line
def format_report(report: SweepReport, *, only_unfinished: bool = False) -> str:
    """A table of the jobs (status, rows, directory, error or note) and the summary line."""
    lines = [f"{report.sweep_dir}: {report.source}"]
    shown = [job for job in report.jobs if not (only_unfinished and job.status == "finished")]
    if shown:
        lines.append(f"{'STATUS':<11} {'ROWS':>5}  JOB")
    for job in shown:
        rows = str(job.rows) if job.rows is not None else "-"
        detail = job.error or job.note
        lines.append(f"{job.status:<11} {rows:>5}  {job.job_dir}" + (f"  {detail}" if detail else ""))
    if report.other_dirs:
        lines.append(f"not part of this sweep: {', '.join(report.other_dirs)}")
    lines.append(report.summary())
    return "\n".join(lines)


@console_command("dpbench-status")
def main(argv: list[str] | None = None) -> int:
    """Entry point of ``dpbench-status`` and ``python -m dpbench.status``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="dpbench-status",
        description="Report which jobs of a dpbench sweep finished, failed, are incomplete or missing. "
        "A finished job computed by other dpbench code is shown as stale. "
        "Exit status 0 when all finished (stale or not), 1 otherwise, 2 for a bad directory.",
    )
    parser.add_argument("sweep_dir", type=Path, help="the sweep directory (hydra.sweep.dir), e.g. outputs/sweeps/adhoc")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="list only the jobs that did not finish, and stale ones"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON (the manifest.json format)")
    args = parser.parse_args(argv)
    try:
        report = sweep_status(args.sweep_dir)
    except SweepDirError as exc:
        print(f"dpbench-status: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(format_report(report, only_unfinished=args.quiet))
    return 0 if report.complete else 1


if __name__ == "__main__":
    sys.exit(main())
