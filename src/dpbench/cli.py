"""The ``dpbench`` command: a Hydra app over ``conf/``.

``dpbench`` runs the default job (DP-BLSGD on the embedded synthetic dataset, offline);
``dpbench dataset=adult algorithm=dp_sgd privacy.eps=1.0 cv.folds=2 reps=2`` a chosen one;
``dpbench -m algorithm=dp_sgd,nonprivate privacy.eps=0.1,1.0 hydra/launcher=joblib`` a sweep.
Errors the user can fix (bad values, unknown names, missing or corrupt data, an output location
that cannot be written) end the run with one line on stderr and exit status 2; Ctrl-C with one line
and status 130 (:func:`report_and_exit`). A bug prints its traceback (status 1).

A job that raises leaves ``error.json`` in its directory (:func:`dpbench.results.write_error_marker`).
In a sweep (``-m``) a job refused for a bad value returns after recording it, so every other job
runs; the command then ends with one line naming the failed jobs and exit status 1
(:func:`failed_jobs_line`). ``manifest.json`` is written in the sweep directory either way
(:mod:`dpbench.sweep`); ``dpbench-status SWEEP_DIR`` names every failed job.
"""

from __future__ import annotations

import logging
import os
import re
import sys

# One BLAS thread per job: set before numpy loads; sweeps parallelise across jobs (docs/architecture.md).
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# Ctrl-C in a joblib sweep leaves loky's resource tracker (a process started with this environment)
# to report the semaphores of the workers it lost: harmless, and noise under the one-line message.
os.environ["PYTHONWARNINGS"] = ",".join(
    filter(None, (os.environ.get("PYTHONWARNINGS"), "ignore:resource_tracker:UserWarning"))
)

from typing import TYPE_CHECKING

from dpbench.conf_files import config_dir, group_choices, option_file, use_command_line_config_dirs
from dpbench.errors import ConfigError, DataError, DpbenchError, PrivacyViolation, caused_by_ctrl_c
from dpbench.resolvers import register_resolvers

if TYPE_CHECKING:
    from omegaconf import DictConfig

GROUPS = ("dataset", "algorithm", "model", "privacy", "tuning", "experiment")
# ``group=a`` or ``group=a,b`` with plain option names: checked before omegaconf and Hydra load.
PLAIN_GROUP_OVERRIDE = re.compile(rf"^(?P<group>{'|'.join(GROUPS)})=(?P<values>[\w-]+(?:,[\w-]+)*)$")


def check_plain_group_choices(args: list[str]) -> None:
    """Refuse an unknown option of a config group spelt plainly (``algorithm=nope``,
    ``dataset=adult,bnak``) with the standard library alone, so that the commonest typo is
    answered before omegaconf and Hydra are imported; :func:`check_group_choices` covers every
    other spelling (``+group=``, ``glob(...)``, quoted values) with Hydra's own parser."""
    for arg in args:
        match = PLAIN_GROUP_OVERRIDE.match(arg)
        if match is None:
            continue
        group = match["group"]
        valid = group_choices(group)
        for value in match["values"].split(","):
            if value not in valid and not (group == "experiment" and value == "null"):
                _refuse_unknown(group, value, valid)


# ``privacy.eps=0``, ``++reps=0``: one plain number, typed alike by Hydra and by ``int`` / ``float``.
PLAIN_VALUE_OVERRIDE = re.compile(
    r"^(?:\+\+)?(?P<key>privacy\.eps|privacy\.delta|reps|cv\.folds|seed)="
    r"(?P<value>[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf|nan)))$"
)
HYDRA_INSPECTIONS = ("-c", "--cfg", "--info", "-p", "--package", "--resolve", "--shell-completion", "-sc")


def check_plain_values(args: list[str]) -> None:
    """Refuse a plain out-of-range ``privacy.eps``, ``privacy.delta``, ``reps``, ``cv.folds`` or ``seed``
    (a command-line value wins over every preset) with the checks the composed configuration applies
    (:mod:`dpbench.settings`, read as :mod:`dpbench.resolve` reads them), before omegaconf and Hydra load,
    so that a bad value is answered at once. A request to print the configuration (``--cfg job``) is
    left to Hydra."""
    from dpbench import settings
    from dpbench.config_values import integer, number

    checks = {
        "privacy.eps": (number, settings.check_eps),
        "privacy.delta": (number, settings.check_delta),
        "reps": (integer, settings.check_reps),
        "cv.folds": (integer, settings.check_folds),
        "seed": (integer, settings.check_seed),
    }
    if any(arg in HYDRA_INSPECTIONS for arg in args):
        return
    for arg in args:
        match = PLAIN_VALUE_OVERRIDE.match(arg)
        if match is None:
            continue
        key, raw = match["key"], match["value"]
        read, check = checks[key]
        value = int(raw) if raw.lstrip("+-").isdigit() else float(raw)  # Hydra's int, else its float
        check(read(value, key))


def check_group_choices(args: list[str]) -> None:
    """Refuse unknown group options on the command line before Hydra composes anything, so
    that ``algorithm=nope`` gets one line naming the valid choices instead of a stack of text."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    candidates = [a for a in args if "=" in a and not a.startswith("-")]
    try:
        overrides = OverridesParser.create().parse_overrides(candidates)
    except Exception:  # noqa: BLE001 — malformed overrides: let Hydra report them in its own words
        return
    for override in overrides:
        group = override.key_or_group
        if group not in GROUPS or override.is_delete():
            continue
        values = (
            list(override.sweep_string_iterator())
            if override.is_sweep_override()
            else [override.get_value_element_as_str()]
        )
        valid = group_choices(group)
        for value in values:
            if value not in valid and not (group == "experiment" and value == "null"):
                _refuse_unknown(group, value, valid)


def _refuse_unknown(group: str, value: str, valid: list[str]) -> None:
    """Refuse an unknown option in one line. An unknown method may be a plugin's whose entry point the
    source index cannot read (a typo in it): loading the registry then says which plugin fails, and why."""
    from dpbench.method_names import unreadable_plugin_methods

    if group == "algorithm" and unreadable_plugin_methods():
        import dpbench.algorithms.registry  # noqa: F401 — its import refuses the plugin, naming it
    raise ConfigError(f"unknown {group} {value!r}; valid choices: {', '.join(valid) or '(none)'}")


def check_preset_mode(args: list[str]) -> None:
    """Refuse a sweep preset run without ``-m``: Hydra would ignore its sweep and run the defaults once."""
    from omegaconf import OmegaConf

    if any(arg in ("-m", "--multirun", "-c", "--cfg", "--info") for arg in args):
        return  # a sweep, or a request to print the preset's configuration
    for arg in args:
        if arg.startswith("experiment=") and "," not in arg:
            name = arg.split("=", 1)[1]
            path = option_file("experiment", name)
            if path is not None and OmegaConf.select(OmegaConf.load(path), "hydra.sweeper.params"):
                raise ConfigError(f"experiment={name} is a sweep preset; run it with -m: dpbench -m experiment={name}")


HYDRA_LEFTOVERS = {
    ".hydra",
    "dpbench.log",
    "error.json",
    ".lock",
    "noise.key",
}  # .lock: dpbench.locking; noise.key: a key no result used


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
        if first.get("guarantee_kind") == "conditional":
            parts.append(f"a CONDITIONAL privacy guarantee ({first['guarantee_note']})")
        elif not bool(first.get("guarantee_valid", True)):
            parts.append(f"NOT a privacy guarantee ({first['guarantee_note']})")
    return ", ".join(parts) + f"; results in {out_dir}"


def _fail(message: str, status: int = 2) -> None:
    print(f"dpbench: error: {message}", file=sys.stderr)
    sys.exit(status)


def failed_jobs_line(reports: list) -> str | None:
    """One line for the sweeps that ended with failed jobs (their error.json): how many, the first
    one's overrides and message, and the ``dpbench-status`` command that lists them all; None when
    every job of every sweep finished."""
    for report in reports:
        failed = [job for job in report.jobs if job.status == "failed"]
        if failed:
            first = failed[0]
            return (
                f"{len(failed)} of {len(report.jobs)} jobs failed, e.g. {' '.join(first.overrides)}: {first.error}; "
                f"dpbench-status {report.sweep_dir} lists them"
            )
    return None


def hydra_message(exc: BaseException, args: tuple[str, ...] = ()) -> str:
    """Hydra's complaint about the command line in one line. Its hint for a misspelt key
    (``privacy.epss=1`` → "To append to your config use +privacy.epss=1") would add the typo as a
    new key, so an unknown key gets dpbench's own message instead; the config search path is dropped.
    In a sweep (``multirun``) Hydra first composes the *default* choice of each group, so a key of a
    swept or preset-chosen algorithm is unknown there: the message says to write it ``key=choice(value)``,
    a sweep of one value, which Hydra applies only to each job (and which replaces a preset's sweep of
    the same key, where ``++key=value`` would run each of its values with the same setting)."""
    text = str(exc)
    unknown = re.match(r"Could not override '([^']+)'", text)
    if unknown:
        key = unknown.group(1)
        group = key.split(".")[0]
        multirun = any(arg in ("-m", "--multirun") for arg in args)
        if multirun and any(arg.startswith(f"{key}=choice(") for arg in args):  # refused by a job's own compose
            return f"{key} is not a key of the {group} of a job of this sweep: a typo, or a key that {group} lacks; `dpbench {group}=<name> --cfg job` prints its keys"
        in_sweep = (
            (
                f"; in a sweep (-m) Hydra first composes the default {group}, so a key of the {group} the sweep "
                f"chooses is written {key}=choice(…) (each job's {group} still checks it)"
            )
            if multirun
            else ""
        )
        if key == "algorithm.fidelity":
            return f"this algorithm has no fidelity modes; {_methods_with_modes()} have them (docs/deviations.md){in_sweep}"
        return (
            f"{key} is not a key of this configuration: a typo, or a key of {'an' if group[0] in 'aeiou' else 'a'} "
            f"{group} choice not "
            f"selected; `dpbench --cfg job` prints every key{in_sweep}"
        )
    text = text.split("Config search path", maxsplit=1)[0]
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _methods_with_modes() -> str:
    """The algorithms that take ``algorithm.fidelity`` other than correct, with their modes."""
    from dpbench.algorithms.registry import ALGORITHMS

    return ", ".join(
        f"{name} ({'|'.join(cls.fidelity_modes)})" for name, cls in ALGORITHMS.items() if cls.fidelity_modes
    )


def os_error_line(exc: OSError) -> str:
    """A file-system error in one line, naming the file (or, when the OS does not say, the output directory)."""
    where = exc.filename if exc.filename is not None else f"the output directory (under {os.getcwd()})"
    return f"{where}: {exc.strerror or exc}"


def report_and_exit(exc: BaseException, reports: list) -> None:
    """End the command with one line for what the user can act on: a bad value or data file
    (status 2), a file that cannot be written (2), Hydra's own complaints about the command line
    (2), Ctrl-C (130), a failed job of a sweep (1, naming ``dpbench-status`` of the sweep). Anything
    else is a bug in dpbench: its traceback is printed and the status is 1."""
    import traceback

    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    status_hint = "".join(f"; dpbench-status {report.sweep_dir} lists every job" for report in reports)
    if caused_by_ctrl_c(exc):
        _fail("interrupted; finished runs are kept and the same command resumes the rest" + status_hint, 130)
    if isinstance(exc, DpbenchError):
        _fail(str(exc))
    if isinstance(exc, OSError) and exc.errno is not None:  # a full, read-only or missing output location
        _fail(os_error_line(exc) + status_hint)
    if isinstance(exc, (HydraException, OmegaConfBaseException)):
        _fail(hydra_message(exc, tuple(sys.argv[1:])))
    traceback.print_exception(exc)
    print(
        f"dpbench: internal error {type(exc).__name__} (a bug: please report it with the traceback above)",
        file=sys.stderr,
    )
    sys.exit(1)


def _task(cfg: DictConfig) -> None:
    """The Hydra task of every job: validate ``cfg``, then run it. The engine is imported once ``cfg``
    is valid, so that a refused configuration is answered without loading it."""
    from dpbench.ctrl_c import interrupts_in_jobs_only

    with interrupts_in_jobs_only():
        try:
            _run_task(cfg)
        except Exception as exc:
            if caused_by_ctrl_c(exc):  # e.g. a module whose import Ctrl-C cut short: an interrupt, not a failure
                raise KeyboardInterrupt from exc
            raise


def _run_task(cfg: DictConfig) -> None:
    from pathlib import Path

    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from dpbench.resolve import apply_variant, run_plan
    from dpbench.results import record_failure

    hydra_cfg = HydraConfig.get()
    out_dir = Path(hydra_cfg.runtime.output_dir)
    try:
        try:
            plan = run_plan(cfg)
            resolved = OmegaConf.to_container(apply_variant(cfg), resolve=True)
        except Exception as exc:  # run_job records its own failures; these happen before it starts
            if hydra_cfg.mode == RunMode.RUN and isinstance(exc, DpbenchError):
                discard_run_dir(out_dir)  # a refused single run leaves nothing behind
            else:
                record_failure(out_dir, exc)  # a sweep's status lists the failed job
            raise
        from dpbench.engine import run_job
        from dpbench.privacy.ledger import BudgetExceeded

        try:
            results = run_job(plan, out_dir, resolved_config=resolved, key_dir=_key_dir(hydra_cfg, out_dir))
        except (PrivacyViolation, BudgetExceeded) as exc:
            _blame_a_plugin(plan.run.algorithm, exc)
            raise
        except Exception as exc:
            if not isinstance(exc, (DpbenchError, OSError)):
                _blame_a_plugins_crash(plan.run.algorithm, exc)
            raise
        if hydra_cfg.mode == RunMode.RUN:
            print(headline(results, out_dir))
    except (DpbenchError, OSError) as exc:
        if caused_by_ctrl_c(exc):
            raise KeyboardInterrupt from exc
        if isinstance(exc, OSError) and exc.errno is None:
            raise  # not a file the user can fix: a bug
        message = str(exc) if isinstance(exc, DpbenchError) else os_error_line(exc)
        if hydra_cfg.mode == RunMode.MULTIRUN:  # error.json records it; the sweep's last line names it
            logging.getLogger("dpbench").error("job failed: %s", message)
            return
        if isinstance(exc, (ConfigError, DataError)):  # a bad value or file found while loading: nothing ran
            discard_run_dir(out_dir)
        _fail(message)


def _blame_a_plugin(algorithm: str, exc: Exception) -> None:
    """An overspend by a plugin's method (a spend above the budget, or a release the ledger refused:
    ``BudgetExceeded`` escaping ``fit``) is the plugin's bug, not dpbench's: raise it as a one-line
    error naming the plugin. A built-in method's overspend stays an internal error."""
    from dpbench.algorithms.registry import PLUGIN_SOURCES

    if algorithm in PLUGIN_SOURCES:
        raise DpbenchError(
            f"plugin {PLUGIN_SOURCES[algorithm]}: method {algorithm} overspent its privacy budget "
            f"({type(exc).__name__}: {exc}); a bug in the plugin, not in dpbench"
        ) from None


def _blame_a_plugins_crash(algorithm: str, exc: Exception) -> None:
    """An exception raised in a plugin's own code (a frame of its traceback is in the plugin's package) is
    the plugin's bug: print the traceback for its author and raise a one-line error naming the plugin,
    instead of asking for a dpbench bug report."""
    import inspect
    import traceback
    from pathlib import Path

    from dpbench.algorithms.registry import ALGORITHMS, PLUGIN_SOURCES

    if algorithm not in PLUGIN_SOURCES:
        return
    package = Path(inspect.getfile(ALGORITHMS[algorithm])).resolve().parent
    frames = traceback.extract_tb(exc.__traceback__)
    if not any(Path(frame.filename).resolve().is_relative_to(package) for frame in frames):
        return
    traceback.print_exception(exc)
    raise DpbenchError(
        f"plugin {PLUGIN_SOURCES[algorithm]}: method {algorithm} raised {type(exc).__name__}: {exc} "
        "(traceback above); a bug in the plugin, not in dpbench"
    ) from None


def _key_dir(hydra_cfg, out_dir):
    """Where a job's secret noise key lives (:mod:`dpbench.privacy.noise_key`): the sweep's directory in
    a sweep (one key for all its jobs), the run's own directory for a single run."""
    from pathlib import Path

    from hydra.types import RunMode

    if hydra_cfg.mode != RunMode.MULTIRUN:
        return out_dir
    sweep_dir = Path(hydra_cfg.sweep.dir)
    return sweep_dir if sweep_dir.is_absolute() else Path(hydra_cfg.runtime.cwd) / sweep_dir


def main() -> None:
    """Entry point of the ``dpbench`` console script. Hydra is asked to re-raise what a job raises
    (``HYDRA_FULL_ERROR``) so that :func:`report_and_exit` can say it in one line; a user who sets
    ``HYDRA_FULL_ERROR=1`` themselves gets Hydra's full traceback as usual. ``--help`` is answered
    from ``conf/`` without importing Hydra (:mod:`dpbench.cli_help`); ``dpbench check-method NAME`` runs a
    method's self-test (:mod:`dpbench.check_method`)."""
    if sys.argv[1:2] == ["check-method"]:
        from dpbench.check_method import main as check_method

        sys.exit(check_method(sys.argv[2:]))
    if any(arg in ("--help", "-h") for arg in sys.argv[1:]):
        from dpbench.cli_help import help_text

        try:
            print(help_text())
        except ConfigError as exc:  # an installed plugin that fails to load, named in one line
            _fail(str(exc))
        return
    try:
        use_command_line_config_dirs(sys.argv[1:])
        check_plain_group_choices(sys.argv[1:])
        check_plain_values(sys.argv[1:])
    except ConfigError as exc:
        _fail(str(exc))
    import hydra

    from dpbench.sweep import finish_open_sweeps

    register_resolvers()
    wants_traceback = os.environ.get("HYDRA_FULL_ERROR", "") not in ("", "0")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    reports: list = []
    try:
        try:
            check_group_choices(sys.argv[1:])
            check_preset_mode(sys.argv[1:])
            hydra.main(version_base="1.3", config_path=str(config_dir()), config_name="config")(_task)()
        finally:  # a sweep that raised (a bug in a job, Ctrl-C) still gets its manifest
            reports = finish_open_sweeps()
    except (Exception, KeyboardInterrupt) as exc:
        if wants_traceback and not caused_by_ctrl_c(exc):
            raise
        report_and_exit(exc, reports)
    failed = failed_jobs_line(reports)
    if failed is not None:
        _fail(failed, 1)


if __name__ == "__main__":
    main()
